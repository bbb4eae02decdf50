"""``site_version``: the version of a mike site that a server's checkout publishes, which the
links it makes outside the site (ask, search, MCP, insights, the API's url) open under.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

from kb_qa.cli import main
from kb_qa.errors import ConfigError
from kb_qa.kb.knowledge_base import KnowledgeBase
from kb_qa.settings import Settings

SITE = "https://docs.example.com/"
CONFIG = (
    "site_name: Lumen\n"
    f"site_url: {SITE}\n"
    "extra:\n  version:\n    provider: mike\n    default: latest\n"
)
RETRIES = "# Retries\n\n## Default policy\n\nEvery job is attempted three times.\n"


def test_site_version_names_the_version_links_open_under(
    make_vault: Callable[..., Path],
    kb: Callable[..., KnowledgeBase],
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A server run on the 1.0 checkout printed links (ask, search, MCP, insights, the
    API's url) to /latest/, the version the site names, whose page says something else."""
    vault = make_vault(
        {
            "mkdocs.yml": CONFIG,
            "docs/index.md": "# Lumen\n\n## Where to start\n\nRead the retries guide.\n",
            "docs/guides/retries.md": RETRIES,
        }
    )
    with kb(vault) as named:  # without the setting: the version the site names
        named.index()
        [hit] = named.search("default policy attempted", k=1)
        assert named.url(hit.chunk) == f"{SITE}latest/guides/retries/#default-policy"
    monkeypatch.setenv("KBQA_SITE_VERSION", "1.0")
    monkeypatch.setenv("KBQA_EMBED_MODEL", "hash")
    assert main(["index", str(vault)]) == 0
    capsys.readouterr()
    code = main(["search", "default policy attempted", "--vault", str(vault), "--json"])
    assert code == 0
    [first, *_] = json.loads(capsys.readouterr().out)
    assert first["url"] == f"{SITE}1.0/guides/retries/#default-policy", first
    with pytest.raises(ConfigError, match=r"KBQA_SITE_VERSION.*folder alone, such as 1.0"):
        Settings.from_env(site_version="docs/1.0")
