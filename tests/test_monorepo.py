"""A site built with mkdocs-monorepo-plugin: the plugin moves the site's docs into a
temporary folder, so a render that ran it found no page of the vault published, and a QA
pass's site was indexed with no page at all. kb-qa does not run it: the site's own pages are
indexed, and the run says that the sub-projects' are not."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from kb_qa.kb.knowledge_base import KnowledgeBase

pytest.importorskip("mkdocs_monorepo_plugin", reason="mkdocs-monorepo-plugin (the test extra)")

SITE = {
    "mkdocs.yml": (
        "site_name: Platform\nsite_url: https://docs.example.com/\nnav:\n  - Home: index.md\n"
        "  - Service A: '!include ./services/a/mkdocs.yml'\nplugins:\n  - search\n  - monorepo\n"
    ),
    "docs/index.md": "# Platform\n\n## On-call\n\nPage the platform team on the bridge line.\n",
    "services/a/mkdocs.yml": "site_name: service-a\nnav:\n  - Intro: index.md\n",
    "services/a/docs/index.md": "# Service A\n\n## Timeouts\n\nThe default timeout is 5 s.\n",
}


def test_a_monorepo_sites_own_pages_are_indexed_and_the_run_says_what_is_not(
    make_vault: Callable[..., Path], kb: Callable[..., KnowledgeBase]
) -> None:
    base = kb(make_vault(SITE))
    report = base.index()
    assert report.files == 1 and not report.skipped, report
    hit = base.search("bridge line", 1)[0]
    assert hit.chunk.path == "docs/index.md" and hit.chunk.anchor == "on-call"
    said = " ".join(text for _, text in report.warnings)
    assert "monorepo plugin is not run" in said and "not indexed" in said
