"""A hostile docusaurus.config.js or versions.json cannot stall a run or read outside it.

Each ``key:`` of a Docusaurus config found its object by scanning the file around it, so
3,000 lines of ``versions: {`` stalled ``kb-qa index`` for 38 s (8,000 settings: 74 s), and
20,000 unclosed ``/*`` were each read to the end. Now the config's nesting is read once. These
tests count the Python lines the reading runs (no timed assertion: a shared machine is slow
by turns): four times the config is about four times the lines, where it was sixteen.

versions.json (Docusaurus' list of versions, and the list mike publishes) was opened as it
was named: a pipe of that name hung ``kb-qa index`` and ``kb-qa init`` for good, and one
linked out of the vault was read and quoted. It is read as the vault's pages are now.
"""

from __future__ import annotations

import json
import os
import sys
import threading
from collections.abc import Callable
from pathlib import Path
from types import FrameType
from typing import Any

import pytest

from kb_qa.cli import main
from kb_qa.errors import ConfigError
from kb_qa.ingest import versioning
from kb_qa.ingest.docusaurus_config import Versions, route_base, without_comments

OUTSIDE_MARK = "outside-secret-v9"


def _lines_run(read: Callable[[], object]) -> int:
    """How many Python lines ``read`` runs."""
    count = 0

    def trace(frame: FrameType, event: str, arg: Any) -> Any:
        nonlocal count
        count += event == "line"
        return trace

    sys.settrace(trace)
    try:
        read()
    finally:
        sys.settrace(None)
    return count


CONFIGS: dict[str, Callable[[int], str]] = {
    "nested versions": lambda n: "module.exports = {\n" + "versions: {\n" * n,
    "many settings": lambda n: "x = {versions: {},\n" + "lastVersion: 'a',\n" * n + "}",
    "many routes": lambda n: "module.exports = {\n" + "routeBasePath: 'a',\n" * n + "}",
    "many version paths": lambda n: "x = {versions: {" + "a: {path: 'x'}," * n + "}}",
}


@pytest.mark.parametrize("name", CONFIGS)
def test_reading_a_config_takes_lines_in_proportion_to_its_size(name: str, tmp_path: Path) -> None:
    def read(n: int) -> Callable[[], object]:
        config = CONFIGS[name](n)
        return lambda: (route_base(config, "c", []), Versions.of(tmp_path, config, "c", []))

    small, large = _lines_run(read(100)), _lines_run(read(400))
    assert large < 6 * small, (small, large)


def test_an_unclosed_comment_blanks_the_rest_of_the_config() -> None:
    # read to its end once, not from each "/*" again
    assert without_comments("/* " * 20_000).strip() == ""
    kept = "x = {lastVersion: '1.0'} "
    assert without_comments(kept + "/* y") == kept + " " * 4


def test_a_config_reads_as_before() -> None:
    config = (
        "module.exports = {presets: [['classic', {docs: {routeBasePath: '/guides', "
        "lastVersion: 'current', versions: {current: {label: 'Next', path: 'dev'}}}}]], "
        "themeConfig: {navbar: {items: [{type: 'docsVersionDropdown', versions: ['1.0']}]}}, "
        "plugins: [['@docusaurus/plugin-content-docs', {id: 'rules', path: 'rules', "
        "routeBasePath: '/rules'}]]}"
    )
    warnings: list[str] = []
    assert route_base(config, "c", warnings) == "guides"
    assert Versions.of(Path("/nonexistent"), config, "c", warnings).paths == (("current", "dev"),)
    assert warnings == []


def _site(tmp_path: Path) -> Path:
    site = tmp_path / "site"
    (site / "docs").mkdir(parents=True)
    (site / "docs" / "intro.md").write_text("# Hi\n\nx\n")
    (site / "docusaurus.config.js").write_text("module.exports = {};\n")
    return site


def _in_thread(read: Callable[[], object], fifo: Path) -> object:
    """``read()``'s result, failing (and freeing the reader) if it waits on ``fifo``."""
    result: list[object] = []

    def run() -> None:
        try:
            result.append(read())
        except ConfigError as exc:  # the refusal is the result
            result.append(exc)

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    thread.join(20)
    if thread.is_alive():
        os.close(os.open(fifo, os.O_WRONLY | os.O_NONBLOCK))  # ends the reader's wait
        thread.join(5)
        pytest.fail(f"reading the vault waited on the pipe {fifo}")
    return result[0]


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no named pipes on this system")
def test_a_pipe_named_versions_json_is_refused_not_waited_on(tmp_path: Path) -> None:
    site = _site(tmp_path)
    os.mkfifo(site / "versions.json")
    warnings: list[str] = []
    versions = _in_thread(
        lambda: Versions.of(site, "versions", "c", warnings), site / "versions.json"
    )
    assert versions == Versions()
    assert any("versions.json is not read: not a regular file" in w for w in warnings)


def test_a_versions_json_linked_out_of_the_vault_is_not_read(tmp_path: Path) -> None:
    site = _site(tmp_path)
    (tmp_path / "outside.json").write_text(json.dumps({"x": OUTSIDE_MARK}))
    (site / "versions.json").symlink_to(tmp_path / "outside.json")
    warnings: list[str] = []
    assert Versions.of(site, "", "c", warnings) == Versions()
    assert OUTSIDE_MARK not in "".join(warnings)
    assert any("leads outside the vault" in w for w in warnings)


def test_an_oversized_versions_json_is_refused(tmp_path: Path) -> None:
    site = _site(tmp_path)
    (site / "versions.json").write_text(json.dumps(["1.0"] * 300_000))
    warnings: list[str] = []
    assert Versions.of(site, "", "c", warnings) == Versions()
    assert any("bigger than" in w for w in warnings)


def _mike_tree(tmp_path: Path, aliases: list[str]) -> Path:
    tree = tmp_path / "gh-pages"
    for folder in ("1.0", "latest"):
        (tree / folder).mkdir(parents=True)
        (tree / folder / "index.html").write_text("<html><head></head><body>1.0</body></html>")
    (tree / "index.html").write_text('<meta http-equiv="refresh" content="0; url=latest/">')
    listing = [{"version": "1.0", "title": "1.0", "aliases": aliases}]
    (tree / "versions.json").write_text(json.dumps(listing))
    return tree


def test_mike_aliases_are_checked_as_versions_are(tmp_path: Path) -> None:
    tree = _mike_tree(tmp_path, ["latest", "../outside2", ".", "..", "a/b", ""])
    (tmp_path / "outside2").mkdir()
    (tmp_path / "outside2" / "index.html").write_text("<html><head></head></html>")
    assert versioning.published_versions(tree) == [versioning.Published("1.0", ("latest",))]


def test_kb_qa_init_refuses_a_mike_listing_linked_out_of_the_tree(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    tree = _mike_tree(tmp_path, ["latest"])
    (tmp_path / "outside.json").write_text(json.dumps([{"version": OUTSIDE_MARK}]))
    (tree / "versions.json").unlink()
    (tree / "versions.json").symlink_to(tmp_path / "outside.json")
    before = (tree / "1.0" / "index.html").read_text()
    code = main(["init", str(tree)])
    out = capsys.readouterr()
    assert code != 0
    assert "versions.json is not read: symlink that leads outside the vault" in out.err
    assert OUTSIDE_MARK not in out.out + out.err
    assert (tree / "1.0" / "index.html").read_text() == before


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no named pipes on this system")
def test_a_pipe_named_versions_json_stops_kb_qa_init_with_why(tmp_path: Path) -> None:
    tree = _mike_tree(tmp_path, ["latest"])
    (tree / "versions.json").unlink()
    os.mkfifo(tree / "versions.json")
    refused = _in_thread(lambda: versioning.published_versions(tree), tree / "versions.json")
    assert isinstance(refused, ConfigError)
    assert "not a regular file (a folder, pipe, device or socket)" in str(refused)
