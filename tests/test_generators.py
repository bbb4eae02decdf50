"""Sites of generators kb-qa does not read are read as notes, and said to be."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from kb_qa.ingest.site import load_site

CLI = Callable[..., "object"]

SPHINX_CONF = 'project = "Relay"\nextensions = ["myst_parser"]\n'
PAGE = "# Retries\n\n## Backoff policy\n\nRelay waits 2 s, then 4 s, then 8 s.\n"


@pytest.mark.parametrize(
    ("name", "files", "folder"),
    [
        ("Sphinx", {"docs/conf.py": SPHINX_CONF, "docs/retries.md": PAGE}, "docs"),
        ("Sphinx", {"docs/source/conf.py": SPHINX_CONF, "docs/source/retries.md": PAGE}, "docs"),
        ("Jekyll", {"_config.yml": "title: Relay\n", "retries.md": PAGE}, ""),
        ("Starlight", {"astro.config.mjs": "starlight({title: 'R'})", "src/r.md": PAGE}, ""),
        (
            "Starlight",
            {"astro.config.mjs": "starlight({})", "src/content/docs/r.md": PAGE},
            "src/content/docs",
        ),
    ],
)
def test_a_site_of_a_generator_kb_qa_does_not_read_is_said_to_be_read_as_notes(
    tmp_path: Path,
    write_files: Callable[..., Path],
    run_cli: CLI,
    name: str,
    files: dict[str, str],
    folder: str,
) -> None:
    """A Sphinx team's `kb-qa index docs/` said nothing, and every citation opened
    `source/retries.md`, a page Sphinx never publishes (it writes `retries.html`)."""
    root = write_files(tmp_path / "site", files) / folder
    result = run_cli("index", str(root), env={"KBQA_INDEX_DIR": str(tmp_path / "i")})
    assert result.returncode == 0, result.stderr
    said = f"looks like a {name} site"
    assert said in result.stdout + result.stderr
    assert "citations link to the Markdown files" in result.stdout + result.stderr


def test_a_notes_vault_with_a_python_script_named_conf_py_is_no_sphinx_site(
    tmp_path: Path, write_files: Callable[..., Path]
) -> None:
    vault = write_files(tmp_path / "v", {"conf.py": "PORT = 8080\n", "Home.md": PAGE})
    assert load_site(vault).warnings == []
    vault = write_files(tmp_path / "w", {"conf.py": SPHINX_CONF, "Home.md": PAGE})
    assert [w for w in load_site(vault).warnings if "Sphinx" in w]
