"""What ``kb-qa index`` prints of a site's config cannot drive the terminal or flood it.

Its warnings quote the config: a Docusaurus config whose version key was ``"\\x1bc\\x07"``
and 3,000 characters more had ``kb-qa index`` print the key raw (a terminal reset, a bell,
the whole key), where the file name beside it was already cleaned.
"""

from __future__ import annotations

import re
import subprocess
from collections.abc import Callable
from pathlib import Path

from conftest import write_files

CLI = Callable[..., subprocess.CompletedProcess[str]]
KEY = "\x1bc\x07EVIL" + "A" * 3_000
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")


def test_a_config_key_in_a_warning_is_printed_clean_and_cut_short(
    tmp_path: Path, run_cli: CLI
) -> None:
    site = tmp_path / "site"
    write_files(
        site,
        {
            "docusaurus.config.js": 'module.exports = {presets: [["classic", {docs: '
            f'{{versions: {{"{KEY}": {{path: dev}}}}}}}}]]}};\n',
            "versions.json": '["1.0"]\n',
            "docs/intro.md": "# Intro\n\nThe current docs.\n",
            "versioned_docs/version-1.0/intro.md": "# Intro\n\nThe 1.0 docs.\n",
        },
    )
    result = run_cli("index", str(site), "--index-dir", str(tmp_path / "idx"))
    assert result.returncode == 0, result.stderr
    out = result.stdout + result.stderr
    [line] = [line for line in out.splitlines() if "EVIL" in line]
    assert not _CONTROL.search(out.replace("\n", ""))
    assert len(line) < 1_100 and line.endswith("…")
