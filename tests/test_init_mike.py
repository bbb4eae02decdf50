"""A site versioned with mike: ``kb-qa init`` on the tree mike publishes (its gh-pages
branch: ``versions.json``, a folder per version and alias, a root that redirects).

The tree is made by the real ``mike deploy`` (in the test extra; skipped, saying so,
without it or without git) in a git repository in tmp_path, and checked out as a worktree.
"""

from __future__ import annotations

import html
import json
import os
import re
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from urllib.parse import urljoin, urlsplit

import pytest

from kb_qa.cli import main

MIKE = Path(sys.executable).with_name("mike")
SITE = "https://docs.example.com/"
CONFIG = (
    "site_name: Lumen\n"
    f"site_url: {SITE}\n"
    "theme:\n  name: material\n"  # ProperDocs, which mike runs when installed, has no `mkdocs`
    "plugins:\n  - mike\n  - search\n"
    "extra:\n  version:\n    provider: mike\n    default: latest\n"
    "markdown_extensions:\n  - toc:\n      permalink: true\n"
)
HOME = "# Lumen\n\n## Where to start\n\nRead the retries guide.\n"


def retries(times: str) -> str:
    return f"# Retries\n\n## Default policy\n\nEvery job is attempted {times} times.\n"


def git(repo: Path, *args: str) -> None:
    subprocess.run(["git", *args], cwd=repo, check=True, capture_output=True, timeout=60)


def mike(repo: Path, env: dict[str, str], *args: str) -> None:
    result = subprocess.run(
        [str(MIKE), *args], cwd=repo, env=env, capture_output=True, text=True, timeout=300
    )
    assert result.returncode == 0, result.stdout + result.stderr


def mike_tree(tmp_path: Path, cli_env: Callable[..., dict[str, str]], alias_type: str) -> Path:
    """``mike deploy 1.0``, ``mike deploy 2.0 latest``, ``mike set-default latest``, as the QA
    pass published sample_site; the gh-pages branch checked out."""
    pytest.importorskip("mike", reason="mike is not installed: pip install -e '.[test]'")
    if shutil.which("git") is None:
        pytest.skip("git is not installed: mike publishes its tree on a git branch")
    identity = {
        f"GIT_{who}_{what}": value
        for who in ("AUTHOR", "COMMITTER")
        for what, value in (("NAME", "QA"), ("EMAIL", "qa@example.com"))
    }
    # mike runs `properdocs build` (or `mkdocs build`) by name: the venv's
    env = cli_env(PATH=f"{MIKE.parent}{os.pathsep}{os.environ.get('PATH', '')}", **identity)
    repo = tmp_path / "repo"
    (repo / "docs" / "guides").mkdir(parents=True)
    (repo / "mkdocs.yml").write_text(CONFIG, encoding="utf-8")
    (repo / "docs" / "index.md").write_text(HOME, encoding="utf-8")
    (repo / "docs" / "guides" / "retries.md").write_text(retries("three"), encoding="utf-8")
    git(repo, "init", "-q", "-b", "main")
    git(repo, "add", ".")
    git(repo, "-c", "user.name=QA", "-c", "user.email=qa@example.com", "commit", "-qm", "1.0")
    mike(repo, env, "deploy", "1.0")
    (repo / "docs" / "guides" / "retries.md").write_text(retries("five"), encoding="utf-8")
    mike(repo, env, "deploy", "--alias-type", alias_type, "2.0", "latest")
    mike(repo, env, "set-default", "latest")
    tree = tmp_path / "gh-pages"
    git(repo, "worktree", "add", "-q", str(tree), "gh-pages")
    return tree


def init(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str]:
    code = main(["init", *args])
    out = capsys.readouterr()
    return code, out.out + out.err


def options_of(page: Path) -> dict[str, object]:
    [raw] = re.findall(r'data-kb-qa-options="([^"]*)"', page.read_text(encoding="utf-8"))
    return dict(json.loads(html.unescape(raw)))


@pytest.mark.parametrize("alias_type", ["copy", "symlink"])
def test_init_wires_each_version_of_a_mike_tree_as_a_site_of_its_own(
    alias_type: str,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    cli_env: Callable[..., dict[str, str]],
) -> None:
    """Wired as one site, the tree gave every page the endpoint of its first page
    (1.0/404.html: readers of 2.0 and /latest/ were answered by 1.0's server, unsaid), and a
    root at the tree's root: on /1.0/guides/scheduling/ a citation opened /guides/retries/,
    a 404 with no highlight."""
    tree = mike_tree(tmp_path, cli_env, alias_type)
    redirect = (tree / "index.html").read_text(encoding="utf-8")
    # One --endpoint for two versions: every version's chat would answer from one server's
    # text. Refused, saying what to run instead, before anything is written.
    code, out = init(capsys, str(tree), "--endpoint", "https://api.example.com")
    assert code == 1, out
    assert "versioned with mike (versions.json lists 2.0, 1.0)" in out, out
    assert f"kb-qa init {tree / '1.0'} --endpoint URL" in out, out
    assert "the aliases, latest (of 2.0), like their versions" in out
    assert "Deployment, Versioned sites" in out
    assert not list(tree.rglob("kb-qa"))
    for version in ("1.0", "2.0"):
        endpoint = f"https://api.example.com/{version}"
        assert init(capsys, str(tree / version), "--endpoint", endpoint)[0] == 0
    # After every `mike deploy`: each version keeps its endpoint, the alias is wired like
    # its version, the root's redirect is left alone.
    code, out = init(capsys, str(tree))
    assert code == 0, out
    assert (tree / "index.html").read_text(encoding="utf-8") == redirect
    for folder, version in (("1.0", "1.0"), ("2.0", "2.0"), ("latest", "2.0")):
        site = tree / folder
        pages = sorted(p for p in site.rglob("*.html") if "kb-qa" not in p.parts)
        assert len(pages) == 3, pages  # home, retries, 404
        for page in pages:
            options = options_of(page)
            assert options["endpoint"] == f"https://api.example.com/{version}", page
            src = re.search(r'<script src="([^"?]+)', page.read_text(encoding="utf-8"))
            assert src is not None
            served = f"{SITE}{page.parent.relative_to(tree).as_posix()}/"
            script = urlsplit(urljoin(served, src.group(1))).path
            assert (tree / script.lstrip("/")).is_file(), (page, script)
            # The widget opens a citation's link (relative to the site's root) from `root`.
            url = urljoin(served, str(options["root"]))
            if page.name == "404.html":  # served at any path: its own links name the folder
                assert options["root"] == f"/{version}/", page
            else:
                assert url == f"{SITE}{folder}/", (page, options["root"])
                assert script == f"/{folder}/kb-qa/kb-qa.js"
            cited = urlsplit(urljoin(url, "guides/retries/#default-policy")).path
            opened = (tree / cited.lstrip("/") / "index.html").read_text(encoding="utf-8")
            assert 'id="default-policy"' in opened
            assert ("five" if version == "2.0" else "three") in opened
    assert init(capsys, str(tree))[1].endswith("nothing to change.\n")


def test_a_tree_of_one_version_takes_one_endpoint(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """One version (and its aliases) is one server's text: --endpoint is taken for all."""
    for folder in ("3.0", "stable"):
        (tmp_path / folder).mkdir()
        (tmp_path / folder / "index.html").write_text("<html><head></head><body>3</body></html>")
    (tmp_path / "versions.json").write_text(
        json.dumps([{"version": "3.0", "title": "3.0", "aliases": ["stable"]}])
    )
    assert init(capsys, str(tmp_path), "--endpoint", "https://api.example.com")[0] == 0
    for folder in ("3.0", "stable"):
        options = options_of(tmp_path / folder / "index.html")
        assert options["endpoint"] == "https://api.example.com" and options["root"] == "./"
        assert (tmp_path / folder / "kb-qa" / "kb-qa.js").is_file()
