"""``kb-qa init`` writes all or nothing and keeps what it does not own (issue 24, item 7).

It half-wrote or corrupted: ``docs/kb-qa`` existing as a file left ``mkdocs.yml`` edited and
then a traceback; ``extra_javascript: # none yet`` got the entry written inside the comment
(reported as wired, added again on every run); a Latin-1 page came back as UTF-8 with
U+FFFD; symlinked pages and configs outside the site were edited; CRLF became LF; UTF-16
and Latin-1 configs and TOML inline tables gave raw tracebacks.

Every case runs the real ``kb-qa init`` command.
"""

from __future__ import annotations

import codecs
import subprocess
from collections.abc import Callable
from pathlib import Path

import tomlkit
import yaml

RunCli = Callable[..., subprocess.CompletedProcess[str]]
PAGE = "# Home\n\nWelcome.\n"
LOADER = "kb-qa/kb-qa-options.js"


def _init(run_cli: RunCli, site: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return run_cli("init", str(site), *args, timeout=120)


def _no_traceback(result: subprocess.CompletedProcess[str]) -> None:
    assert "Traceback" not in result.stdout + result.stderr, result.stderr


def test_a_file_where_the_widget_folder_goes_stops_before_any_write(
    make_vault: Callable[..., Path], run_cli: RunCli
) -> None:
    config = "site_name: T\n"
    site = make_vault({"mkdocs.yml": config, "docs/index.md": PAGE, "docs/kb-qa": "not a dir"})
    result = _init(run_cli, site)
    _no_traceback(result)
    assert result.returncode == 1
    assert "docs/kb-qa is a file" in result.stderr and "move it away" in result.stderr
    assert (site / "mkdocs.yml").read_text() == config  # nothing was written
    assert (site / "docs" / "kb-qa").read_text() == "not a dir"
    dry = _init(run_cli, site, "--dry-run")
    assert dry.returncode == 1 and "docs/kb-qa is a file" in dry.stderr


def test_an_empty_list_with_a_comment_is_wired_once(
    make_vault: Callable[..., Path], run_cli: RunCli
) -> None:
    config = "site_name: T\nextra_javascript: # none yet\nextra_css:   # later\n"
    site = make_vault({"mkdocs.yml": config, "docs/index.md": PAGE})
    result = _init(run_cli, site)
    assert result.returncode == 0, result.stderr
    text = (site / "mkdocs.yml").read_text()
    data = yaml.safe_load(text)
    assert data["extra_javascript"] == [LOADER]
    assert data["extra_css"] == ["kb-qa/kb-qa.css"]
    assert "# none yet" in text and "# later" in text  # the comments stay
    again = _init(run_cli, site)
    assert again.returncode == 0 and "wired up already" in again.stdout
    assert (site / "mkdocs.yml").read_text() == text


def test_crlf_and_utf16_configs_keep_their_bytes_style(
    make_vault: Callable[..., Path], run_cli: RunCli, tmp_path: Path
) -> None:
    crlf = make_vault(
        {"mkdocs.yml": "site_name: T\r\nnav:\r\n  - index.md\r\n", "docs/index.md": PAGE},
        name="crlf",
    )
    assert _init(run_cli, crlf).returncode == 0
    data = (crlf / "mkdocs.yml").read_bytes()
    assert data.count(b"\r\n") == data.count(b"\n")  # every line still ends in CRLF
    assert LOADER.encode() in data

    utf16 = make_vault({"docs/index.md": PAGE}, name="utf16")
    text = "site_name: Café\nextra_css:\n  - extra.css\n"
    (utf16 / "mkdocs.yml").write_bytes(codecs.BOM_UTF16_LE + text.encode("utf-16-le"))
    result = _init(run_cli, utf16)
    _no_traceback(result)
    assert result.returncode == 0, result.stderr
    raw = (utf16 / "mkdocs.yml").read_bytes()
    assert raw.startswith(codecs.BOM_UTF16_LE)
    wired = yaml.safe_load(raw.decode("utf-16"))
    assert wired["site_name"] == "Café"
    assert wired["extra_css"] == ["kb-qa/kb-qa.css", "extra.css"]


def test_a_latin1_config_is_a_clear_error(make_vault: Callable[..., Path], run_cli: RunCli) -> None:
    site = make_vault({"docs/index.md": PAGE})
    original = "site_name: Café\n".encode("latin-1")
    (site / "mkdocs.yml").write_bytes(original)
    result = _init(run_cli, site)
    _no_traceback(result)
    assert result.returncode == 1
    assert "is not UTF-8" in result.stderr and "Save it as UTF-8" in result.stderr
    assert (site / "mkdocs.yml").read_bytes() == original
    assert not (site / "docs" / "kb-qa").exists()


def test_a_symlinked_config_outside_the_site_is_not_edited(
    make_vault: Callable[..., Path], run_cli: RunCli, tmp_path: Path
) -> None:
    outside = tmp_path / "elsewhere" / "mkdocs.yml"
    outside.parent.mkdir()
    outside.write_text("site_name: Shared\n")
    site = make_vault({"docs/index.md": PAGE})
    (site / "mkdocs.yml").symlink_to(outside)
    result = _init(run_cli, site)
    _no_traceback(result)
    assert result.returncode == 1 and "outside the site folder" in result.stderr
    assert outside.read_text() == "site_name: Shared\n"
    assert not (site / "docs" / "kb-qa").exists()


def test_built_pages_keep_their_encoding_and_links_out_are_left_alone(
    make_vault: Callable[..., Path], run_cli: RunCli, tmp_path: Path
) -> None:
    outside = tmp_path / "elsewhere" / "other.html"
    outside.parent.mkdir()
    outside.write_text("<html><head></head><body>other site</body></html>")
    site = make_vault({"index.html": "<html><head></head><body>home</body></html>"})
    latin = "<html><head><meta charset=iso-8859-1></head><body>Crème brûlée</body></html>"
    (site / "latin.html").write_bytes(latin.encode("latin-1"))
    (site / "linked.html").symlink_to(outside)
    result = _init(run_cli, site, "--title", "Ask Ünïcode")
    assert result.returncode == 0, result.stderr
    raw = (site / "latin.html").read_bytes()
    assert "Crème brûlée".encode("latin-1") in raw
    assert "\ufffd".encode() not in raw and b"data-kb-qa" in raw
    assert b"\xc3" not in raw  # nothing was re-encoded as UTF-8
    assert outside.read_text() == "<html><head></head><body>other site</body></html>"
    assert b"data-kb-qa" in (site / "index.html").read_bytes()


def test_toml_inline_tables_are_wired(make_vault: Callable[..., Path], run_cli: RunCli) -> None:
    toml = (
        '[project]\nsite_name = "Z"\nextra_css = ["extra.css"]\n'
        'extra = { analytics = { provider = "none" } }\n'
    )
    site = make_vault({"zensical.toml": toml, "docs/index.md": PAGE})
    result = _init(run_cli, site, "--title", "Ask Z")
    _no_traceback(result)
    assert result.returncode == 0, result.stderr
    data = tomlkit.parse((site / "zensical.toml").read_text()).unwrap()
    project = data["project"]
    assert project["extra"]["analytics"] == {"provider": "none"}
    assert project["extra"]["kb_qa"]["title"] == "Ask Z"
    assert project["extra_javascript"] == [LOADER]
    assert "kb-qa/kb-qa.css" in project["extra_css"]
    again = _init(run_cli, site, "--title", "Ask Z")
    assert again.returncode == 0 and "wired up already" in again.stdout
