"""A site's config that is a symlink out of the vault is refused, as ``INHERIT:`` out of it is.

``v3/site.yml -> /tmp/outside/site.yml`` indexed with ``--config-file site.yml`` (rendering
off) put the outside file's site_url and site_name in the index, so every citation linked to
a site the vault's owner had not named; a ``mkdocs.yml`` linked out of the vault was read
the same way.
"""

from __future__ import annotations

import os
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest
from conftest import write_files

CLI = Callable[..., subprocess.CompletedProcess[str]]
OUTSIDE = "site_name: Outside\nsite_url: https://evil.example/\n"


def _vault(tmp_path: Path, link: str, target: Path) -> Path:
    write_files(tmp_path / "outside", {"site.yml": OUTSIDE})
    vault = write_files(tmp_path / "vault", {"docs/index.md": "# Home\n\nOtters.\n"})
    os.symlink(target, vault / link)
    return vault


@pytest.mark.parametrize(
    ("link", "args"), [("site.yml", ["--config-file", "site.yml"]), ("mkdocs.yml", [])]
)
def test_a_config_linked_out_of_the_vault_is_refused(
    tmp_path: Path, run_cli: CLI, link: str, args: list[str]
) -> None:
    vault = _vault(tmp_path, link, tmp_path / "outside" / "site.yml")
    index = tmp_path / "idx"
    result = run_cli(
        "index", str(vault), *args, "--index-dir", str(index), env={"KBQA_RENDER": "0"}
    )
    assert result.returncode != 0 and "Traceback" not in result.stderr
    assert "outside the vault" in result.stderr and "Copy the file into the vault" in result.stderr
    written = [p.read_bytes() for p in index.rglob("*") if p.is_file()]
    assert not any(b"evil.example" in data for data in written)


def test_a_config_linked_inside_the_vault_is_read(tmp_path: Path, run_cli: CLI) -> None:
    vault = _vault(tmp_path, "mkdocs.yml", Path("conf/site.yml"))
    write_files(vault, {"conf/site.yml": "site_name: Inside\nsite_url: https://docs.example/\n"})
    index = tmp_path / "idx"
    result = run_cli("index", str(vault), "--index-dir", str(index), env={"KBQA_RENDER": "0"})
    assert result.returncode == 0, result.stderr
    found = run_cli("search", "otters", "--vault", str(vault), "--index-dir", str(index), "--json")
    assert "https://docs.example/" in found.stdout, found.stdout + found.stderr
