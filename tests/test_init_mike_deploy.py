"""``kb-qa init`` on the tree mike publishes, after a new ``mike deploy``: a version whose
new pages carry no widget, and pages the kb-qa MkDocs plugin built.

The tree is made by the real ``mike deploy`` (skipped, saying so, without mike or git), as
in ``test_init_mike``.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.test_init_mike import CONFIG, HOME, MIKE, git, init, mike, options_of, retries

IDENTITY = {
    f"GIT_{who}_{what}": value
    for who in ("AUTHOR", "COMMITTER")
    for what, value in (("NAME", "QA"), ("EMAIL", "qa@example.com"))
}
# The plugin's options a site owner sets that `kb-qa init` has no flag for.
PLUGIN = (
    "  - kb-qa:\n"
    "      endpoint: !ENV [DOCS_CHAT_ENDPOINT, '']\n"
    "      shortcut: alt+j\n"
    "      placeholder: Ask Lumen anything\n"
)


def published(
    tmp_path: Path, cli_env: Callable[..., dict[str, str]], config: str = CONFIG
) -> tuple[Path, Callable[..., None]]:
    """The docs' repository and ``deploy(version, *aliases, endpoint=...)``: the real
    ``mike deploy`` (copied aliases), with DOCS_CHAT_ENDPOINT set to ``endpoint``."""
    pytest.importorskip("mike", reason="mike is not installed: pip install -e '.[test]'")
    if shutil.which("git") is None:
        pytest.skip("git is not installed: mike publishes its tree on a git branch")
    path = f"{MIKE.parent}{os.pathsep}{os.environ.get('PATH', '')}"
    repo = tmp_path / "repo"
    (repo / "docs" / "guides").mkdir(parents=True)
    (repo / "mkdocs.yml").write_text(config, encoding="utf-8")
    (repo / "docs" / "index.md").write_text(HOME, encoding="utf-8")
    git(repo, "init", "-q", "-b", "main")

    def deploy(version: str, *aliases: str, endpoint: str = "") -> None:
        times = {"1.0": "three"}.get(version, "five")
        (repo / "docs" / "guides" / "retries.md").write_text(retries(times), encoding="utf-8")
        git(repo, "add", "mkdocs.yml", "docs")
        who = ("-c", "user.name=QA", "-c", "user.email=qa@example.com")
        git(repo, *who, "commit", "-q", "--allow-empty", "-m", version)
        env = cli_env(PATH=path, DOCS_CHAT_ENDPOINT=endpoint, **IDENTITY)
        mike(repo, env, "deploy", "--alias-type", "copy", version, *aliases)

    return repo, deploy


def checkout(repo: Path, where: Path) -> Path:
    """The gh-pages branch as it is now, checked out at ``where``."""
    git(repo, "worktree", "add", "-q", "--detach", str(where), "gh-pages")
    return where


def snapshot(tree: Path) -> dict[str, bytes]:
    return {
        p.relative_to(tree).as_posix(): p.read_bytes()
        for p in sorted(tree.rglob("*"))
        if p.is_file() and ".git" not in p.relative_to(tree).parts
    }


def test_a_version_a_new_deploy_left_without_endpoint_is_not_wired_blind(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], cli_env: Callable[..., dict[str, str]]
) -> None:
    """The docs say to run `kb-qa init gh-pages` after every `mike deploy`; a new deploy of
    2.0 replaced its folder (and latest's) with pages that carry no widget, and init wired
    them with endpoint "" unsaid: their readers asked the static host's /api/ask."""
    repo, deploy = published(tmp_path, cli_env)
    deploy("1.0")
    deploy("2.0", "latest")
    tree = checkout(repo, tmp_path / "gh-pages")
    # No version names its endpoint yet: each is named, with what to run, none is wired.
    before = snapshot(tree)
    code, out = init(capsys, str(tree))
    assert code == 1, out
    assert "no page of 2.0, 1.0 names its endpoint" in out, out
    for version in ("1.0", "2.0"):
        assert f"`kb-qa init {tree / version} --endpoint URL`" in out, out
    assert "Nothing was written" in out and "Deployment, Versioned sites" in out
    assert snapshot(tree) == before
    # Wired as the docs say, committed to gh-pages as a deploy job would.
    for version, port in (("1.0", 8844), ("2.0", 8845)):
        assert init(capsys, str(tree / version), "--endpoint", f"http://127.0.0.1:{port}")[0] == 0
    code, out = init(capsys, str(tree))
    assert code == 0, out
    assert "KBQA_SITE_VERSION" in out and "KBQA_CORS_ORIGINS" in out, out
    git(tree, "add", "--all", ".")
    git(tree, "commit", "-qm", "wired")
    git(tree, "branch", "-f", "gh-pages", "HEAD")
    # The next release of 2.0: mike replaces 2.0/ and latest/ with pages without the widget.
    deploy("2.0", "latest")
    tree = checkout(repo, tmp_path / "gh-pages-next")
    assert "data-kb-qa" not in (tree / "2.0" / "index.html").read_text(encoding="utf-8")
    assert options_of(tree / "1.0" / "index.html")["endpoint"] == "http://127.0.0.1:8844"
    before = snapshot(tree)
    code, out = init(capsys, str(tree))
    assert code == 1, out
    assert "no page of 2.0 names its endpoint" in out, out
    assert f"`kb-qa init {tree / '2.0'} --endpoint URL`" in out, out
    assert "1.0" not in out.split("names its endpoint")[0].split("mike")[-1]
    assert snapshot(tree) == before  # 1.0 (and its kb-qa/ files) not half-wired either
    # Doing as it says wires the tree: 2.0 and its alias take 2.0's endpoint, 1.0 keeps its.
    assert init(capsys, str(tree / "2.0"), "--endpoint", "http://127.0.0.1:8845")[0] == 0
    code, out = init(capsys, str(tree))
    assert code == 0, out
    for folder, port in (("1.0", 8844), ("2.0", 8845), ("latest", 8845)):
        for page in (tree / folder).rglob("*.html"):
            if "kb-qa" not in page.relative_to(tree).parts:
                assert options_of(page)["endpoint"] == f"http://127.0.0.1:{port}", page


def test_one_version_without_endpoint_is_wired_as_any_built_site(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], cli_env: Callable[..., dict[str, str]]
) -> None:
    """One version is one server's text: its pages may ask their own origin, as any built
    site's may (the tree is not refused for want of an endpoint)."""
    repo, deploy = published(tmp_path, cli_env)
    deploy("1.0", "stable")
    tree = checkout(repo, tmp_path / "gh-pages")
    code, out = init(capsys, str(tree))
    assert code == 0, out
    assert options_of(tree / "stable" / "index.html")["endpoint"] == ""


def test_pages_the_plugin_built_keep_its_options(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], cli_env: Callable[..., dict[str, str]]
) -> None:
    """Re-wired by `kb-qa init gh-pages`, the pages the kb-qa plugin built lost its
    site_url, shortcut and placeholder (Alt+J became Ctrl+K, the placeholder the widget's
    own) and gained a preview endpoint no one asked for."""
    config = CONFIG.replace("  - search\n", "  - search\n" + PLUGIN)
    repo, deploy = published(tmp_path, cli_env, config)
    deploy("1.0", endpoint="https://api.example.com/1.0")
    deploy("2.0", "latest", endpoint="https://api.example.com/2.0")
    tree = checkout(repo, tmp_path / "gh-pages")
    pages = [p for p in sorted(tree.rglob("*.html")) if p.parent != tree and "kb-qa" not in p.parts]
    built = {page: options_of(page) for page in pages}
    assert built[tree / "2.0" / "index.html"]["shortcut"] == "alt+j"
    code, out = init(capsys, str(tree), "--title", "Ask Lumen")
    assert code == 0, out
    for page, options in built.items():
        wired = options_of(page)
        for name in ("endpoint", "site_url", "shortcut", "placeholder"):
            assert wired.get(name) == options[name], (page, name)
        assert wired["title"] == "Ask Lumen", page
        assert "preview_endpoint" not in wired, page
    assert init(capsys, str(tree))[1].endswith("nothing to change.\n")
