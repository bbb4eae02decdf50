"""Files that must never be indexed (issue 24, item 6).

The hidden-file rule was checked on a symlink's name, not its target: ``docs/leak.md ->
../.git/config`` or ``../.env`` was indexed and served. A folder link to ``/`` was skipped
by kb-qa but followed by MkDocs' own file walk when rendering. ``site_url: !ENV
[OPENAI_API_KEY, ...]`` put the environment into every citation URL and /api/health.

Real indexes (embedded Chroma in tmp_path), the real CLI and a real ``kb-qa serve``.
"""

from __future__ import annotations

import contextlib
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import httpx
import pytest
from api_helpers import serve_process
from conftest import cli_env

from kb_qa.index.workspace import workspace_name
from kb_qa.ingest.site import site_name
from kb_qa.kb.knowledge_base import KnowledgeBase

KB = Callable[..., KnowledgeBase]
RunCli = Callable[..., subprocess.CompletedProcess[str]]
GOOD = "# Good\n\n## Otters\n\nOtters hold hands while they sleep.\n"
MARK = "zebracorn-hidden-secret"  # text only hidden files hold


def _links_to_hidden(vault: Path) -> None:
    (vault / ".git").mkdir()
    (vault / ".git" / "config").write_text(f"[remote]\n  token = {MARK}-git\n")
    (vault / ".git" / "notes.md").write_text(f"# Notes\n\n{MARK}-git-notes\n")
    (vault / ".env").write_text(f"OPENAI_API_KEY={MARK}-env\n")
    (vault / "docs" / ".draft.md").write_text(f"# Draft\n\n{MARK}-draft\n")
    (vault / "node_modules").mkdir()
    (vault / "node_modules" / "readme.md").write_text(f"# Pkg\n\n{MARK}-pkg\n")
    docs = vault / "docs"
    (docs / "gitconfig.md").symlink_to("../.git/config")
    (docs / "env.md").symlink_to("../.env")
    (docs / "draft-link.md").symlink_to(".draft.md")
    (docs / "pkg.md").symlink_to("../node_modules/readme.md")
    (docs / "repo").symlink_to("../.git", target_is_directory=True)


@pytest.mark.parametrize("render", [False, True])
def test_symlinks_to_hidden_files_are_skipped_with_the_reason(
    make_vault: Callable[..., Path], kb: KB, render: bool
) -> None:
    vault = make_vault({"mkdocs.yml": "site_name: T\n", "docs/good.md": GOOD})
    _links_to_hidden(vault)
    instance = kb(vault, render=render)
    report = instance.index()
    skipped = dict(report.skipped)
    for rel in ("docs/gitconfig.md", "docs/env.md", "docs/draft-link.md", "docs/pkg.md"):
        assert "hidden file or folder" in skipped[rel], skipped
    assert "hidden file or folder (.git)" in skipped["docs/repo"]
    assert {c.path for c in instance.store.chunks()} == {"docs/good.md"}
    assert all(MARK not in c.text for c in instance.store.chunks())
    assert instance.search(MARK) == [] or all(
        MARK not in h.chunk.text for h in instance.search(MARK)
    )


def test_a_hidden_docs_dir_named_in_the_config_is_still_read(
    make_vault: Callable[..., Path], kb: KB
) -> None:
    # The hidden part is in the name the site gives, not only in a link's target.
    vault = make_vault({"mkdocs.yml": "site_name: T\ndocs_dir: .docs\n", ".docs/good.md": GOOD})
    (vault / ".docs" / "alias.md").symlink_to("good.md")
    instance = kb(vault, render=False)
    report = instance.index()
    assert report.skipped == []
    assert {c.path for c in instance.store.chunks()} == {".docs/good.md", ".docs/alias.md"}


def test_rendering_does_not_walk_a_folder_link_to_the_root(
    make_vault: Callable[..., Path], run_cli: RunCli, tmp_path: Path
) -> None:
    vault = make_vault({"mkdocs.yml": "site_name: T\n", "docs/good.md": GOOD})
    (vault / "docs" / "everything").symlink_to("/", target_is_directory=True)
    (vault / "docs" / "loop").symlink_to(".", target_is_directory=True)
    env = {"KBQA_INDEX_DIR": str(tmp_path / "idx"), "KBQA_RENDER": "1"}
    # MkDocs' own walk followed the link (killed at 150 s and 3.5 GB): the timeout only
    # guards against that.
    result = run_cli("index", str(vault), env=env, timeout=120)
    assert result.returncode == 0, result.stderr
    out = result.stdout + result.stderr
    assert "Indexed 1 files" in out or "Indexed 1 file" in out
    assert "docs/everything: folder is a symlink that leads outside the vault" in out
    assert "rendering" in out  # the site was rendered, not skipped


@pytest.mark.parametrize("render", ["0", "1"])
def test_site_url_or_name_from_a_secret_is_not_published(
    make_vault: Callable[..., Path], tmp_path: Path, render: str
) -> None:
    # The name is the index's (its Chroma collection's), and /api/health shows it.
    config = (
        "site_name: !ENV OPENAI_API_KEY\n"
        'site_url: !ENV [OPENAI_API_KEY, "https://docs.example.org/"]\n'
    )
    vault = make_vault({"mkdocs.yml": config, "docs/good.md": GOOD})
    secret = f"sk-{MARK}-key"
    env = cli_env(
        OPENAI_API_KEY=secret,
        KBQA_INDEX_DIR=str(tmp_path / "idx"),
        KBQA_RENDER=render,
        KBQA_RATE_LIMIT="0",
    )
    index = subprocess.run(
        [sys.executable, "-m", "kb_qa.cli", "index", str(vault)],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert index.returncode == 0, index.stderr
    assert secret not in index.stdout + index.stderr
    assert "site_url is not a plain http(s) address" in index.stdout + index.stderr
    assert "could not load it" not in index.stdout + index.stderr  # the site still renders
    with contextlib.closing(serve_process(vault, env)) as served:
        url, _proc = next(served)
        health = httpx.get(url + "/api/health", timeout=30)
        found = httpx.get(url + "/api/search", params={"q": "otters"}, timeout=30)
    assert health.status_code == 200 and found.status_code == 200
    assert secret not in health.text and MARK not in health.text
    assert secret not in found.text
    assert "otters" in found.text.lower()
    assert health.json()["workspace"] == workspace_name("", "", vault)  # the folder's name


def test_a_site_name_from_the_environment_counts_only_by_its_default(
    make_vault: Callable[..., Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("KBQA_TEST_SECRET", "sk-very-secret")
    vault = make_vault({"mkdocs.yml": "site_name: !ENV [KBQA_TEST_SECRET, Zoo Docs]\n"})
    assert site_name(vault) == "Zoo Docs"
    (vault / "mkdocs.yml").write_text("site_name: !ENV KBQA_TEST_SECRET\n", encoding="utf-8")
    assert site_name(vault) == ""


def test_a_plain_site_url_from_the_environment_still_works(
    make_vault: Callable[..., Path], kb: KB, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("KBQA_TEST_SITE_URL", "https://docs.example.org/zoo/")
    config = "site_name: T\nsite_url: !ENV [KBQA_TEST_SITE_URL, 'https://x.example/']\n"
    vault = make_vault({"mkdocs.yml": config, "docs/good.md": GOOD})
    instance = kb(vault)
    report = instance.index()
    assert report.warnings == []
    [hit, *_] = instance.search("otters")
    assert instance.url(hit.chunk).startswith("https://docs.example.org/zoo/")
