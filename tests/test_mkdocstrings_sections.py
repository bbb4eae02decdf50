"""Sections mkdocstrings generates, on a Material site built with a real ``mkdocs build``.

A QA pass over a package's API reference (mkdocstrings-python, seven ``::: pkg.module``
pages) found two things wrong. The object labels Material shows beside a heading
(``dataclass``, ``property``, ``module-attribute``) leaked into the heading's text, with the
template's line breaks: "Settings\\n\\n\\n  \\n      dataclass" split an answer's "See also:"
line over four lines. And a passage quoted from a generated section was cited at lines of
the converted page ("docs/api/client.md:15-23" of a file of 3 lines): such a section has no
place in the file, so its citation keeps the section's own lines, 0 (``rendered_chunks``).
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from subprocess import Popen

import pytest
from api_helpers import answered, serve_process

from kb_qa.ingest.anchors import html_headings
from kb_qa.kb.knowledge_base import KnowledgeBase
from tests.test_render import chunks_of, html_ids, mkdocs_build

Env = Callable[..., dict[str, str]]

CONFIG = '''\
"""Settings of a connection."""
from dataclasses import dataclass

DEFAULT_PORT = 5671
"""The broker's TCP port when none is given."""


@dataclass
class Settings:
    """Settings of a ferry connection.

    Attributes:
        host: Broker host name.
        heartbeat: Seconds between heartbeats.
    """

    host: str = "localhost"
    heartbeat: int = 60

    @property
    def address(self) -> str:
        """The host and port the ferry dials."""
        return f"{self.host}:{DEFAULT_PORT}"
'''

CLIENT = '''\
"""Connecting to a broker."""


def connect(host: str = "localhost", port: int = 5671, timeout: float = 30.0) -> None:
    """Open a connection to the broker.

    The connection is retried while the broker refuses it.

    Args:
        host: Broker host name.
        port: Broker TCP port.
        timeout: Seconds to wait for each connection attempt.

    Raises:
        ConnectionError: If the broker cannot be reached.
    """
'''

SITE = {
    "mkdocs.yml": (
        "site_name: Ferry\n"
        "theme:\n  name: material\n"
        "plugins:\n"
        "  - search\n"
        "  - mkdocstrings:\n"
        "      handlers:\n"
        "        python:\n"
        "          paths: [src]\n"
        "          options:\n"
        "            show_source: false\n"
        "            docstring_section_style: table\n"
        "            separate_signature: true\n"
        "            show_root_heading: true\n"
    ),
    "docs/index.md": "# Ferry\n\nA tiny broker client.\n",
    "docs/api/config.md": "# `ferry.config`\n\n::: ferry.config\n",
    "docs/api/client.md": "# `ferry.client`\n\n::: ferry.client\n",
    "src/ferry/__init__.py": '"""Ferry."""\n',
    "src/ferry/config.py": CONFIG,
    "src/ferry/client.py": CLIENT,
}


@pytest.fixture(scope="module")
def site(
    tmp_path_factory: pytest.TempPathFactory, write_files: Callable[..., Path], cli_env: Env
) -> tuple[Path, Path]:
    """(vault, built site): built once, and indexed by the real ``kb-qa index``."""
    root = tmp_path_factory.mktemp("ferry")
    vault = write_files(root / "vault", SITE)
    built = mkdocs_build(vault, root / "site")
    index = subprocess.run(
        [sys.executable, "-m", "kb_qa.cli", "index", str(vault)],
        env=cli_env(),
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert index.returncode == 0, index.stderr
    return vault, built


def test_a_headings_labels_are_no_words_of_its_title(
    site: tuple[Path, Path], kb: Callable[..., KnowledgeBase]
) -> None:
    vault, built = site
    page = (built / "api" / "config" / "index.html").read_text(encoding="utf-8")
    assert "<code>dataclass</code>" in page and "<code>property</code>" in page  # Material's
    titles = {h.anchor: h.text for h in html_headings(page)}
    assert titles["ferry.config.Settings"] == "Settings"
    assert titles["ferry.config.Settings.address"] == "address"
    assert titles["ferry.config.DEFAULT_PORT"] == "DEFAULT_PORT"

    instance = kb(vault, index_dir=vault / ".kb-qa")
    chunks = chunks_of(instance, "docs/api/config.md")
    ids = html_ids(built / "api" / "config" / "index.html")
    assert {c.anchor for c in chunks} >= {"ferry.config.Settings", "ferry.config.DEFAULT_PORT"}
    for c in chunks:
        assert c.anchor in ids, c.anchor  # the ids stay the built page's
        for part in c.heading_path:
            assert part == part.strip() and "\n" not in part and "  " not in part, c
            assert not part.endswith(("dataclass", "property", "module-attribute")), c
    [settings] = [c for c in chunks if c.anchor == "ferry.config.Settings"]
    assert settings.heading == "Settings" and settings.heading_path[-1] == "Settings"
    [address] = [c for c in chunks if c.anchor == "ferry.config.Settings.address"]
    assert address.heading_path[-2:] == ("Settings", "address")
    assert "`dataclass`" in settings.text  # the page shows the label: its text keeps it


QUESTION = "What does timeout default to in connect()?"


def _connect_citation(citations: list[dict[str, object]]) -> dict[str, object]:
    [cited] = [c for c in citations if c["anchor"] == "ferry.client.connect"]
    return cited


def test_a_generated_sections_citation_keeps_its_own_lines(
    site: tuple[Path, Path], cli_env: Env
) -> None:
    vault, _ = site
    lines = len(SITE["docs/api/client.md"].splitlines())
    result = subprocess.run(
        [sys.executable, "-m", "kb_qa.cli", "ask", QUESTION, "--vault", str(vault), "--json"],
        env=cli_env(KBQA_LINK_STYLE="vscode"),
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    reply = json.loads(result.stdout)
    cited = _connect_citation(reply["citations"])
    assert "30.0" in str(cited["text"]) and "timeout" in str(cited["text"])  # a passage
    assert str(cited["text"]).strip() in reply["text"]
    # Generated by "::: ferry.client": no line of the file holds it, as its chunk says
    assert (cited["line_start"], cited["line_end"]) == (0, 0), cited
    assert cited["url"] == f"vscode://file{vault / 'docs/api/client.md'}"  # the file, no line
    for c in reply["citations"]:
        if c["path"] == "docs/api/client.md":
            assert int(c["line_end"]) <= lines, c


@pytest.fixture
def served(site: tuple[Path, Path], cli_env: Env) -> Iterator[tuple[str, Popen[str]]]:
    """The real ``kb-qa serve`` (uvicorn) on the indexed site, for one test."""
    yield from serve_process(site[0], cli_env())


def test_the_apis_citation_of_a_generated_section_has_no_lines_past_the_file(
    served: tuple[str, Popen[str]],
) -> None:
    reply = answered(served[0], QUESTION)
    cited = _connect_citation(reply["citations"])
    assert "30.0" in str(cited["text"])
    assert (cited["line_start"], cited["line_end"]) == (0, 0), cited
