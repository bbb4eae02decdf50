"""A README written for GitHub links its own headings by GitHub's ids (``#naming-rules-1``,
``#contributing-``): its /view page answers to them as well as to the index's. Over real
HTTP (uvicorn)."""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path

import httpx
from uvicorn_thread import UvicornThread

from kb_qa.kb.knowledge_base import KnowledgeBase
from kb_qa.serve.app import create_app

README = (
    "# Frob\n\nSee [the second rules](#naming-rules-1) and [how to help](#contributing-).\n\n"
    "## Naming rules\n\nLower case.\n\n## Examples\n\nfoo_bar.\n\n"
    "## Naming rules\n\nNo digits first.\n\n## Contributing :heart:\n\nSend patches.\n"
)


def test_a_readme_s_github_heading_links_land_on_its_view(
    make_vault: Callable[..., Path], kb: Callable[..., KnowledgeBase]
) -> None:
    """The view named them ``naming-rules_1`` and ``contributing-heart``: a GitHub README's
    own table of contents went nowhere."""
    base = kb(make_vault({"README.md": README}), rate_limit=0)
    base.index()
    with UvicornThread(create_app(base)) as server:
        page = httpx.get(server.url + "/view/README.md").text
    headings = re.findall(r"<h2[^>]*>(.*?)</h2>", page, re.S)
    assert len(headings) == 4, headings
    assert '<a id="naming-rules-1" aria-hidden="true"></a>' in headings[2]
    assert '<a id="contributing-" aria-hidden="true"></a>' in headings[3]
    assert 'id="naming-rules"' not in headings[0]  # the index's own id is GitHub's already
    ids = re.findall(r'\bid="([^"]+)"', page)
    assert len(ids) == len(set(ids)), ids  # no id given twice
    for target in ("naming-rules-1", "contributing-"):
        assert f'href="/view/README.md#{target}"' in page and target in ids
