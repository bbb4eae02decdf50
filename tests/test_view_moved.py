"""A citation to a note moved, renamed or deleted since the answer (the widget keeps old
answers in sessionStorage) opens in a browser as a page saying so, not as raw JSON; API
clients keep the JSON error. Over real HTTP (uvicorn)."""

from __future__ import annotations

import html
import re
from collections.abc import Callable
from pathlib import Path

import httpx
from uvicorn_thread import UvicornThread

from kb_qa.kb.knowledge_base import KnowledgeBase
from kb_qa.serve.app import create_app

KB = Callable[..., KnowledgeBase]
# What Chromium sends when a link is followed
BROWSER = {"Accept": "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8"}


def _links(page: str) -> list[str]:
    return [html.unescape(h) for h in re.findall(r'<a href="([^"]*)"', page)]


def test_a_citation_to_a_moved_note_opens_a_page_linking_to_where_it_is_now(
    make_vault: Callable[..., Path], kb: KB
) -> None:
    """/view/Recipes/Sourdough.md of a note moved to Cooking/ showed the browser
    {"error":"'Recipes/Sourdough.md' is not an indexed page of this vault."}."""
    vault = make_vault(
        {
            "Recipes/Sourdough.md": "# Sourdough\n\nFeed the starter with rye flour.\n",
            "Recipes/Bagels.md": "# Bagels\n\nBoil them first.\n",
            "Garden/Notes.md": "# Garden\n\nWater at dawn.\n",
            "Work/Notes.md": "# Work\n\nStand-up at ten.\n",
        },
        name="Kitchen",
    )
    base = kb(vault, rate_limit=0)
    base.index()
    (vault / "Cooking").mkdir()
    (vault / "Recipes/Sourdough.md").rename(vault / "Cooking/Sourdough.md")
    (vault / "Recipes/Bagels.md").unlink()
    base.index()
    with UvicornThread(create_app(base)) as server:
        moved = httpx.get(server.url + "/view/Recipes/Sourdough.md", headers=BROWSER)
        deleted = httpx.get(server.url + "/view/Recipes/Bagels.md", headers=BROWSER)
        two = httpx.get(server.url + "/view/Old/Notes.md", headers=BROWSER)
        api = httpx.get(server.url + "/view/Recipes/Sourdough.md")
        json_asked = httpx.get(
            server.url + "/view/Recipes/Sourdough.md", headers={"Accept": "application/json"}
        )
        here = httpx.get(server.url + "/view/Cooking/Sourdough.md", headers=BROWSER)
    assert moved.status_code == 404 and moved.headers["content-type"].startswith("text/html")
    assert "Content-Security-Policy" in moved.headers
    assert "no longer in the vault" in moved.text
    assert "moved, renamed or deleted" in moved.text and "Recipes/Sourdough.md" in moved.text
    assert "/view/Cooking/Sourdough.md" in _links(moved.text)
    # No note of that name, or two: the vault's pages.
    assert deleted.status_code == 404 and _links(deleted.text) == ["/", "/"]
    assert "Kitchen" in deleted.text
    assert two.status_code == 404 and _links(two.text) == ["/", "/"]
    for response in (api, json_asked):
        assert response.status_code == 404
        assert response.json() == {
            "error": "'Recipes/Sourdough.md' is not an indexed page of this vault."
        }
    assert here.status_code == 200 and "Feed the starter" in here.text


def test_the_moved_page_escapes_a_hostile_name(make_vault: Callable[..., Path], kb: KB) -> None:
    """The path is whatever the URL said, and a note's title whatever its heading says:
    neither can add markup to the page."""
    vault = make_vault(
        {
            'new/<img src=x onerror=alert(1)>".md': (
                '---\ntitle: "<script>alert(2)</script>"\n---\n\nText.\n'
            )
        }
    )
    base = kb(vault, rate_limit=0)
    base.index()
    with UvicornThread(create_app(base)) as server:
        wanted = "/view/old/%3Cimg%20src%3Dx%20onerror%3Dalert(1)%3E%22.md"
        page = httpx.get(server.url + wanted, headers=BROWSER)
        other = httpx.get(server.url + "/view/%3Cscript%3Ealert(3)%3C%2Fscript%3E", headers=BROWSER)
    assert page.status_code == 404
    assert "<img" not in page.text and "<script" not in page.text
    assert "&lt;img src=x onerror=alert(1)&gt;" in page.text
    assert "&lt;script&gt;alert(2)&lt;/script&gt;" in page.text  # the note's title, linked
    assert _links(page.text)[1] == "/view/new/%3Cimg%20src%3Dx%20onerror%3Dalert%281%29%3E%22.md"
    assert "<script" not in other.text and "&lt;script&gt;alert(3)" in other.text
