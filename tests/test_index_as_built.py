"""An index shipped from a docs build, and the warnings of a run, whatever the cache holds.

A docs CI indexed its site on build, with the site's plugins and Markdown extensions
installed, and served the index from a job with kb-qa alone: the server re-indexed at start
without them (568 sections became 460) and said healthy. The extension and plugin here are
real ones, importable only when their folder is on PYTHONPATH (the build's environment).
Real ``kb-qa index`` processes, real Chroma in tmp dirs, real uvicorn, real ``mkdocs build``.
"""

from __future__ import annotations

import os
import subprocess
from collections.abc import Callable
from pathlib import Path

import httpx
from conftest import write_files
from uvicorn_thread import serve_kb
from widget_stack import mkdocs_build

from kb_qa import __version__
from kb_qa.kb.knowledge_base import KnowledgeBase
from kb_qa.kb.staleness import KEPT_AS_BUILT

RunCli = Callable[..., subprocess.CompletedProcess[str]]

# A Markdown extension that writes an API page's sections, as mkdocstrings' ``::: name`` does.
EXTENSION = """
from markdown.extensions import Extension
from markdown.preprocessors import Preprocessor

API = ["## connect", "", "Opens a connection to the broker.", "",
       "## close", "", "Closes the connection and flushes the queue.", ""]


class Api(Preprocessor):
    def run(self, lines):
        return [out for line in lines for out in (API if line == "::: client" else [line])]


class ApiExtension(Extension):
    def extendMarkdown(self, md):
        md.preprocessors.register(Api(md), "kbqa_test_api", 30)


def makeExtension(**kwargs):
    return ApiExtension(**kwargs)
"""

# An MkDocs plugin (installed: its dist-info names its entry point) that adds a section.
PLUGIN = """
from mkdocs.plugins import BasePlugin


class Plugin(BasePlugin):
    def on_page_markdown(self, markdown, page, config, files):
        return markdown + "\\n\\n## Changelog\\n\\nWhat changed in each release of the client.\\n"
"""

SITE = {
    "docs/index.md": "# Home\n\nThe client library talks to the broker.\n",
    "docs/api.md": "# API reference\n\n::: client\n",
}


def _requirements(folder: Path) -> dict[str, str]:
    """The docs build's requirements, installed: the environment of a process that has them."""
    write_files(
        folder,
        {
            "kbqa_test_api.py": EXTENSION,
            "kbqa_test_plugin.py": PLUGIN,
            "kbqa_test_plugin-1.0.dist-info/METADATA": "Metadata-Version: 2.1\n"
            "Name: kbqa-test-plugin\nVersion: 1.0\n",
            "kbqa_test_plugin-1.0.dist-info/entry_points.txt": "[mkdocs.plugins]\n"
            "kbqa-test = kbqa_test_plugin:Plugin\n",
        },
    )
    return {
        "PYTHONPATH": os.pathsep.join(filter(None, [str(folder), os.environ.get("PYTHONPATH")]))
    }


def _site(vault: Path, extensions: str = "[toc, kbqa_test_api]") -> Path:
    return write_files(
        vault,
        {
            **SITE,
            "mkdocs.yml": f"site_name: Client\nmarkdown_extensions: {extensions}\n"
            "plugins: [search, kbqa-test]\n",
        },
    )


def _chunks(vault: Path, index: Path) -> dict[str, int]:
    with KnowledgeBase(vault, embed_model="hash", index_dir=index) as kb:
        counts: dict[str, int] = {}
        for chunk in kb.store.chunks():
            counts[chunk.path] = counts.get(chunk.path, 0) + 1
        return counts


def test_an_index_built_with_the_sites_requirements_is_kept_where_they_are_missing(
    tmp_path: Path, run_cli: RunCli
) -> None:
    vault, index = _site(tmp_path / "vault"), tmp_path / "index"
    requirements = _requirements(tmp_path / "requirements")
    built = run_cli("index", str(vault), "--index-dir", str(index), env=requirements)
    assert built.returncode == 0, built.stderr
    as_built = _chunks(vault, index)
    # connect, close, Changelog: the sections the extension and the plugin make
    assert as_built["docs/api.md"] >= 3, as_built

    # The server's environment: kb-qa alone
    served = run_cli("index", str(vault), "--index-dir", str(index))
    assert served.returncode == 0, served.stderr
    said = served.stdout + served.stderr
    assert "Rebuilt" not in said
    assert KEPT_AS_BUILT in said
    assert "Markdown extension 'kbqa_test_api'" in said and "plugin 'kbqa-test'" in said
    assert "install the docs build's requirements" in said
    assert _chunks(vault, index) == as_built

    # A CI job that checks the index with --strict fails on it
    strict = run_cli("index", str(vault), "--index-dir", str(index), "--strict")
    assert strict.returncode == 3, strict.stderr
    assert "--strict" in strict.stderr

    # Health says why, and the server stays ready: it serves the index as it was built
    with KnowledgeBase(vault, embed_model="hash", index_dir=index) as kb:
        report = kb.index()
        assert any(KEPT_AS_BUILT in message for _, message in report.warnings)
        assert report.chunks == sum(as_built.values())
        with serve_kb(kb) as server:
            health = httpx.get(server.url + "/api/health", timeout=30).json()
            ready = httpx.get(server.url + "/api/ready", timeout=30)
    assert health["status"] == "degraded"
    assert KEPT_AS_BUILT in health["problem"] and "kbqa_test_api" in health["problem"]
    assert health["chunks"] == sum(as_built.values())
    assert health["index_version"] == health["version"] == __version__
    assert ready.status_code == 200, ready.text

    # Installed here, the index is current again: nothing is rebuilt, health is ok
    again = run_cli("index", str(vault), "--index-dir", str(index), env=requirements)
    assert again.returncode == 0, again.stderr
    assert KEPT_AS_BUILT not in again.stdout + again.stderr
    assert "Rebuilt" not in again.stdout + again.stderr
    with KnowledgeBase(vault, embed_model="hash", index_dir=index) as kb:
        assert kb.store.meta("kept_as_built") == ""


def test_an_extension_taken_out_of_the_config_is_indexed_without_it(
    tmp_path: Path, run_cli: RunCli
) -> None:
    vault, index = _site(tmp_path / "vault"), tmp_path / "index"
    requirements = _requirements(tmp_path / "requirements")
    assert run_cli("index", str(vault), "--index-dir", str(index), env=requirements).returncode == 0
    _site(vault, extensions="[toc]")  # removed from the site: a change to index, here too
    result = run_cli("index", str(vault), "--index-dir", str(index))
    assert result.returncode == 0, result.stderr
    assert KEPT_AS_BUILT not in result.stdout + result.stderr
    assert "Rebuilt" in result.stdout
    assert _chunks(vault, index)["docs/api.md"] == 1


def _settled(folder: Path, when: int = 1_600_000_000) -> Path:
    """Every file of ``folder`` last written long ago: a file written within seconds of an
    index run is read again by the next (``manifest.UNSETTLED``), which hid the cache."""
    for path in folder.rglob("*"):
        if path.is_file():
            os.utime(path, (when, when))
    return folder


BROKEN = {
    "index.md": "# Home\n\nWelcome.\n",
    "broken.md": "---\ntitle: [unclosed\n---\n# Broken\n\nIts front matter is not YAML.\n",
}


def test_index_strict_fails_on_warnings_at_every_run_not_only_the_first(
    tmp_path: Path, run_cli: RunCli
) -> None:
    vault, index = _settled(write_files(tmp_path / "notes", BROKEN)), tmp_path / "index"
    args = ("index", str(vault), "--index-dir", str(index))
    assert run_cli(*args).returncode == 0  # without --strict, warnings do not fail a run
    for _ in range(2):  # the second run reads no file: the warning is said again
        result = run_cli(*args, "--strict")
        assert result.returncode == 3, result.stdout + result.stderr
        assert result.stdout.count("broken.md: front matter is not valid YAML") == 1
    # A fresh checkout: every file's time changes, its text does not; said once still
    _settled(vault, when=1_700_000_000)
    result = run_cli(*args, "--strict")
    assert result.returncode == 3
    assert result.stdout.count("broken.md: front matter is not valid YAML") == 1

    (vault / "broken.md").write_text("---\ntitle: Fixed\n---\n# Broken\n\nFixed.\n")
    fixed = run_cli(*args, "--strict")
    assert fixed.returncode == 0, fixed.stdout + fixed.stderr
    assert run_cli(*args, "--strict").returncode == 0


def test_mkdocs_build_strict_fails_on_every_build_of_the_same_tree(
    tmp_path: Path, cli_env: Callable[..., dict[str, str]]
) -> None:
    site = write_files(
        tmp_path / "site",
        {
            "mkdocs.yml": "site_name: Notes\nplugins:\n  - kb-qa:\n      index_on_build: true\n",
            **{f"docs/{name}": text for name, text in BROKEN.items()},
        },
    )
    _settled(site)
    for _ in range(2):
        built = mkdocs_build(site, tmp_path / "out", cli_env(), "--strict")
        assert built.returncode == 1, built.stderr
        assert "front matter is not valid YAML" in built.stderr
