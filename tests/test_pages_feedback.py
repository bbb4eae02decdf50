"""The vault pages of `kb-qa serve` (/ and /view) and reader feedback, over real HTTP."""

from __future__ import annotations

import contextlib
import html
import json
import re
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from urllib.parse import quote, urljoin

import httpx
import pytest
from api_helpers import answered
from conftest import cli_env
from kb_qa_widget import version
from uvicorn_thread import UvicornThread

from kb_qa.ingest.vault import source_text
from kb_qa.kb.knowledge_base import KnowledgeBase
from kb_qa.owners import feedback
from kb_qa.serve.app import create_app

NOTES = {
    "garden.md": (
        "---\ntitle: My garden\n---\n# Garden\n\nIntro.\n\n## Tomatoes\n\n"
        "Tomatoes need full sun.\n\n## Tomatoes\n\nA second tomato section.\n\n"
        '<img src="x" onerror="window.__pwned=1">\n\n<script>window.__pwned=2</script>\n'
    ),
    "sub/deep.md": "# Deep\n\nSecrets of the deep.\n",
}


@pytest.fixture
def server(
    make_vault: Callable[..., Path], kb: Callable[..., KnowledgeBase]
) -> Iterator[tuple[str, KnowledgeBase, Path]]:
    vault = make_vault(NOTES)
    (vault.parent / "outside.md").write_text("# Outside\n\nNot in the vault.\n")
    base = kb(vault, rate_limit=0)
    base.index()
    with UvicornThread(create_app(base)) as running:
        yield running.url, base, vault


@contextlib.contextmanager
def _serving(
    make_vault: Callable[..., Path],
    kb: Callable[..., KnowledgeBase],
    files: dict[str, str],
    name: str,
) -> Iterator[tuple[str, KnowledgeBase]]:
    """A vault of ``files`` indexed and served: (its URL, its knowledge base)."""
    base = kb(make_vault(files, name=name), rate_limit=0)
    base.index()
    with UvicornThread(create_app(base)) as running:
        yield running.url, base


def test_home_lists_pages_with_the_widget(server: tuple[str, KnowledgeBase, Path]) -> None:
    url, _, _ = server
    response = httpx.get(url + "/")
    assert response.status_code == 200
    assert "script-src 'self'" in response.headers["content-security-policy"]
    # One line per note: a big vault's list (3.7 MB for 20,000 notes) goes gzipped.
    assert response.headers["content-encoding"] == "gzip"
    sources = httpx.get(url + "/api/sources", headers={"Accept-Encoding": "identity"})
    assert "content-encoding" not in sources.headers and sources.json()["pages"]
    assert '/view/garden.md"' in response.text and "My garden" in response.text
    assert f'<script src="/kb-qa/kb-qa.js?v={version()}"' in response.text
    js = httpx.get(url + "/kb-qa/kb-qa.js")
    assert js.status_code == 200 and js.headers["content-type"].startswith("text/javascript")
    # Unversioned, revalidated; at this version (as the pages ask), kept for good
    assert js.headers["cache-control"] == "no-cache"
    pinned = httpx.get(url + f"/kb-qa/kb-qa.css?v={version()}")
    assert "immutable" in pinned.headers["cache-control"]
    assert httpx.get(url + "/kb-qa/kb-qa.js?v=0ld").headers["cache-control"] == "no-cache"
    assert httpx.get(url + "/kb-qa/secret.txt").status_code == 404


def test_view_renders_anchors_and_escapes_html(server: tuple[str, KnowledgeBase, Path]) -> None:
    url, kb, _ = server
    page = httpx.get(url + "/view/garden.md").text
    anchors = [c.anchor for c in kb.store.chunks() if c.path == "garden.md" and c.level > 1]
    assert anchors == ["tomatoes", "tomatoes_1"]
    assert '<h2 id="tomatoes">Tomatoes</h2>' in page
    # ... answering to GitHub's id too (a README's own links are written for GitHub)
    assert '<h2 id="tomatoes_1"><a id="tomatoes-1" aria-hidden="true"></a>Tomatoes</h2>' in page
    assert "<script>window.__pwned" not in page and "&lt;script&gt;" in page
    assert "<img" not in page and "&lt;img" in page
    assert "title: My garden" not in page  # front matter is not shown


def test_view_renders_wikilinks_as_links_and_callouts_as_callouts(
    make_vault: Callable[..., Path], kb: Callable[..., KnowledgeBase]
) -> None:
    vault = make_vault(
        {
            "home.md": "# Home\n\nSee [[Deep note#Far Down|the deep note]], [[nowhere]] and "
            "![[Deep note]].\n\n> [!warning] Mind the gap\n> Step carefully.\n\n"
            "Also [[sub/Deep note]], [[Deep note#Far down]] and [[中文笔记#学习计划]].\n",
            "sub/Deep note.md": "# Deep note\n\n## Far down\n\nDeep text.\n",
            "中文笔记.md": "# 中文笔记\n\n## 饺子做法\n\n加水。\n\n## 学习计划\n\n每天背单词。\n",
        },
        name="obsidian",
    )
    base = kb(vault, rate_limit=0)
    base.index()
    with UvicornThread(create_app(base)) as running:
        page = httpx.get(running.url + "/view/home.md").text
    assert '<a href="/view/sub/Deep%20note.md#far-down">the deep note</a>' in page
    assert "[[" not in page and " nowhere and Deep note." in page  # unknown and embeds: text
    # Labelled as Obsidian shows them; a heading's link opens the id the index gave it
    # (MkDocs' slugify empties an all-CJK heading, so it is numbered).
    assert '<a href="/view/sub/Deep%20note.md">sub/Deep note</a>' in page
    assert '<a href="/view/sub/Deep%20note.md#far-down">Deep note &gt; Far down</a>' in page
    cjk = next(c for c in base.store.chunks("中文笔记.md") if c.heading == "学习计划")
    assert cjk.anchor and f'#{cjk.anchor}">中文笔记 &gt; 学习计划</a>' in page
    assert '<div class="callout callout-warning">' in page
    assert "<strong>Mind the gap</strong><br />\nStep carefully." in page
    assert "[!warning]" not in page


def test_markdown_links_between_notes_open_the_note_and_heading_they_name(
    make_vault: Callable[..., Path], kb: Callable[..., KnowledgeBase]
) -> None:
    """Left to the browser, "<../50% done?.md>" read "?.md" as a query string (a 404) and
    "#Setup" or "#🚀-launch" named no id on the page (they are "setup" and "launch")."""
    vault = make_vault(
        {
            "Sub dir/linker.md": "# Linker\n\n[p](<../50% done?.md>), "
            "[m](<../Meeting notes.md#Setup>), [r](../Meeting%20notes.md#🚀-launch), "
            "[here](#Own%20part), [n](Meeting%20notes.md), [img](pic.png) and "
            "[web](https://example.com/a.md).\n\n## Own part\n\nText.\n",
            "50% done?.md": "# Progress\n\nHalf way.\n",
            "C# tips.md": "# C sharp\n\nUse async.\n",
            "wiki.md": "# Wiki\n\nSee [[C# tips]] and [[C# tips|the tips]].\n",
            "Meeting notes.md": "# Meeting\n\n## Setup\n\nChairs.\n\n## 🚀 Launch\n\nGo.\n",
        },
        name="obsidian",
    )
    base = kb(vault, rate_limit=0)
    base.index()
    with UvicornThread(create_app(base)) as running:
        page = httpx.get(running.url + "/view/" + quote("Sub dir/linker.md")).text
        progress = httpx.get(running.url + "/view/50%25%20done%3F.md")
        wiki = httpx.get(running.url + "/view/wiki.md").text
    assert '<a href="/view/50%25%20done%3F.md">p</a>' in page, page
    assert progress.status_code == 200 and "Half way" in progress.text
    assert '<a href="/view/Meeting%20notes.md#setup">m</a>' in page
    assert '<a href="/view/Meeting%20notes.md#launch">r</a>' in page
    assert '<a href="/view/Sub%20dir/linker.md#own-part">here</a>' in page
    # A note named as Obsidian's shortest links name it, from another folder.
    assert '<a href="/view/Meeting%20notes.md">n</a>' in page
    assert '<a href="pic.png">img</a>' in page  # not a note: as written
    assert '<a href="https://example.com/a.md">web</a>' in page
    # A wikilink to a note with "#" in its name, when no note is named as the part before it.
    assert '<a href="/view/C%23%20tips.md">C# tips</a>' in wiki, wiki
    assert '<a href="/view/C%23%20tips.md">the tips</a>' in wiki


def test_obsidian_comments_are_not_indexed_quoted_or_shown(
    make_vault: Callable[..., Path], kb: Callable[..., KnowledgeBase]
) -> None:
    """Obsidian hides ``%% comments %%``; kb-qa indexed them, quoted them in answers (a
    password in a TODO) and made a heading inside one a section of its own."""
    note = (
        "# Lab\n\n## Fencing\n\nQuorum needs three votes. %% the iDRAC password is hunter2 %%"
        " Fencing uses IPMI.\n\n%%\n## Draft\n\nThe launch is on 12 June.\n%%\n\n"
        "## Launch\n\nThe launch is postponed.\n\nCode keeps `100%%` as it is.\n"
    )
    with _serving(make_vault, kb, {"Lab.md": note}, "comments") as (url, base):
        page = httpx.get(url + "/view/Lab.md").text
        asked = httpx.post(
            url + "/api/ask", json={"question": "What is the iDRAC password?", "stream": False}
        ).json()
    chunks = base.store.chunks("Lab.md")
    assert [c.heading for c in chunks] == ["Lab", "Fencing", "Launch"]
    indexed = " ".join(c.text + c.index_text for c in chunks)
    assert "hunter2" not in indexed and "12 June" not in indexed
    assert "`100%%`" in indexed  # code is code
    launch = chunks[-1]  # offsets are still the file's: no comment in this one
    assert note[launch.start : launch.end] == launch.text
    assert "hunter2" not in page and "Draft" not in page and "12 June" not in page
    assert '<h2 id="launch">Launch</h2>' in page
    assert "hunter2" not in json.dumps(asked)


@pytest.mark.parametrize(
    ("note", "hidden", "kept"),
    [
        # A fence opened inside a comment ends with the comment: a later one is hidden too.
        ("%%\nOld example:\n```\nhalf\n%%\n\nPublic text.\n\n%% ask Bob %%\n", "Bob", "Public"),
        # Code keeps its %%: an indented block, a tab-indented fence in a list, a span.
        ('Text:\n\n    printf("50%%");\n\nMore public text.\n', "", "More public text."),
        ("- Run:\n\t~~~bat\n\tfor %%i in (*) do echo %%i\n\t~~~\n\nEnd.\n", "", "echo %%i"),
        ("Use `100%%` here %%not this%%.\n", "not this", "`100%%`"),
        # A fence closes only on a line of its own character: "```python" inside it is code.
        ("```\ncode\n```python\nstill %% code\n```\nEnd %%gone%%.\n", "gone", "still %% code"),
        # Inside a comment a code span means nothing: its "%%" closes the comment.
        ("a %% b `x%%y` c\nNext line.\n", "b `x", "Next line."),
        # Front matter's "%%" is a value, not the start of a comment.
        ("---\ntitle: Growth 100%%\n---\n# Growth\n\nVisible %%hidden%% text.\n", "hidden", "text"),
    ],
)
def test_comments_are_found_as_obsidian_finds_them(note: str, hidden: str, kept: str) -> None:
    shown = source_text(note, notes=True)
    assert len(shown) == len(note)  # every offset is still the file's
    assert kept in shown and (not hidden or hidden not in shown)
    assert source_text(note, notes=False) == note  # a site's %% is its text


def test_headings_inside_an_html_block_do_not_shift_the_views_anchors(
    make_vault: Callable[..., Path], kb: Callable[..., KnowledgeBase]
) -> None:
    """A note template's instructions in an HTML comment: the index sees one HTML block, the
    view (raw HTML shown as text) sees its "## ..." lines as headings. Paired by position,
    every later anchor moved one heading up, and citations opened the wrong section."""
    note = (
        "# Weekly review\n\n<!--\n## Template instructions\nFill in.\n-->\n\n"
        "<details>\n\n## Hidden heading\n\n</details>\n\n"
        "## Wins\n\nShipped search.\n\n  Setext\n  ------\n\nUnderlined.\n"
    )
    with _serving(make_vault, kb, {"Template.md": note}, "template") as (url, _):
        page = httpx.get(url + "/view/Template.md").text
    ids = dict(re.findall(r'<h\d id="([^"]+)">([^<]*)</h\d>', page))
    # (After "<details>" and a blank line the heading is Markdown again, for both parsers.)
    assert ids == {
        "weekly-review": "Weekly review",
        "hidden-heading": "Hidden heading",
        "wins": "Wins",
        "setext": "Setext",
    }


def test_a_block_reference_opens_the_section_holding_the_block(
    make_vault: Callable[..., Path], kb: Callable[..., KnowledgeBase]
) -> None:
    """``[[Note#^id]]`` links to a block marked ``^id``; Obsidian hides the marker. The view
    linked to a made-up anchor (the top of the note), and answers quoted the marker."""
    files = {
        "Cluster.md": "# Cluster\n\n## Hardware\n\nThree nodes.\n\n## Quorum\n\n"
        "Two of three nodes must vote. ^quorum-rule\n\n## Power\n\nOne UPS. ^zebrafrog\n",
        "Backups.md": "# Backups\n\nMind the [[Cluster#^quorum-rule|quorum rule]] "
        "([[Cluster#^quorum-rule]]).\n",
    }
    with _serving(make_vault, kb, files, "blocks") as (url, base):
        backups = httpx.get(url + "/view/Backups.md").text
        cluster = httpx.get(url + "/view/Cluster.md").text
        asked = httpx.post(
            url + "/api/ask",
            json={"question": "How many nodes must vote for quorum?", "stream": False},
        ).json()
    assert '<a href="/view/Cluster.md#quorum">quorum rule</a>' in backups
    # Without an alias it reads as the note's name ("Cluster > " before).
    assert '(<a href="/view/Cluster.md#quorum">Cluster</a>)' in backups
    assert "^quorum-rule" not in cluster and "Two of three nodes must vote." in cluster
    assert "Two of three nodes must vote." in asked["text"]
    assert "^quorum-rule" not in asked["text"]
    # ... nor a word to search for: the block id is an address.
    assert all(h.keyword_rank is None for h in base.search("zebrafrog", 5))


def test_a_note_reads_as_obsidian_shows_it_in_citations_answers_and_the_view(
    make_vault: Callable[..., Path], kb: Callable[..., KnowledgeBase]
) -> None:
    """Headings holding wikilinks or ``==highlights==`` were cited with their brackets and
    marks ("Call with [[People/Sam|Sam]] about [[Budget]]"), a quoted ``[[Garden#Garlic]]``
    read "Garlic" where the view said "Garden > Garlic", and tasks showed as "[ ] Book"."""
    files = {
        "Weekly.md": "# Weekly\n\n## Call with [[People/Sam|Sam]] about [[Budget]]\n\n"
        "We agreed the offsite budget is 900 euros per person, see [[Garden#Garlic]].\n\n"
        "## ==Open== tasks\n\n- [ ] Book the venue for the offsite\n- [x] Send the invites\n",
        "Budget.md": "# Budget\n\nThe budget is capped.\n",
        "Garden.md": "# Garden\n\n## Garlic\n\nPlant in October.\n",
    }
    with _serving(make_vault, kb, files, "shown") as (url, base):
        asked = httpx.post(
            url + "/api/ask",
            json={"question": "What offsite budget per person did we agree?", "stream": False},
        ).json()
        view = httpx.get(url + "/view/Weekly.md").text
    first = asked["citations"][0]
    assert first["heading_path"] == ["Weekly", "Call with Sam about Budget"]
    assert "**Weekly › Call with Sam about Budget** [1]" in asked["text"]
    assert "900 euros per person, see Garden > Garlic." in asked["text"]
    # The anchor is the one the index always gave this heading; the view carries it.
    assert f'<h2 id="{first["anchor"]}">Call with Sam about <a href="/view/Budget.md">' in view
    paths = {c.heading_path for c in base.store.chunks("Weekly.md")}
    assert ("Weekly", "Open tasks") in paths
    assert "<mark>Open</mark> tasks</h2>" in view and "==" not in view
    # The note's own marks are underlined: a citation's highlight must stand out on them.
    assert "mark:not(.kb-qa-highlight){background:none" in view
    assert '<link rel="icon" href="data:,">' in view  # no favicon request to fail
    assert '<p dir="auto">We agreed' in view  # a right-to-left note reads right to left
    assert 'disabled="disabled" type="checkbox"> Book the venue' in view
    assert 'checked="checked" disabled="disabled" type="checkbox"> Send the invites' in view
    assert "[ ]" not in view and "[x]" not in view


def test_a_note_saved_with_a_byte_order_mark_views_with_its_anchors(
    make_vault: Callable[..., Path], kb: Callable[..., KnowledgeBase]
) -> None:
    vault = make_vault({}, name="bom")
    (vault / "Bom.md").write_bytes(
        "\ufeff---\ntitle: Bom\n---\n\n# Bom\n\n## Alpha\n\nA.\n\n## Beta\n\nB.\n".encode()
    )
    base = kb(vault, rate_limit=0)
    base.index()
    with UvicornThread(create_app(base)) as running:
        page = httpx.get(running.url + "/view/Bom.md").text
    assert '<h2 id="alpha">Alpha</h2>' in page and '<h2 id="beta">Beta</h2>' in page
    assert "title: Bom" not in page  # the front matter is no heading


def test_a_viewed_note_shows_its_edit(server: tuple[str, KnowledgeBase, Path]) -> None:
    """Rendered notes are kept for the next reader: an edit (the file's bytes, the index's
    generation) must still show at once."""
    url, kb, vault = server
    assert "Secrets of the deep." in httpx.get(url + "/view/sub/deep.md").text
    (vault / "sub" / "deep.md").write_text("# Deep\n\nThe deep is quiet now.\n")
    assert "The deep is quiet now." in httpx.get(url + "/view/sub/deep.md").text
    kb.index()
    page = httpx.get(url + "/view/sub/deep.md").text
    assert "The deep is quiet now." in page and "Secrets" not in page


def test_view_serves_only_indexed_files(server: tuple[str, KnowledgeBase, Path]) -> None:
    url, _, _ = server
    assert httpx.get(url + "/view/sub/deep.md").status_code == 200
    for bad in (
        "../outside.md",
        "..%2Foutside.md",
        "%2e%2e/outside.md",
        "/etc/passwd",
        ".kb-qa/manifest.sqlite3",
        "missing.md",
    ):
        response = httpx.get(url + "/view/" + bad)
        assert response.status_code == 404, bad
        assert "Not in the vault" not in response.text


def test_feedback_is_stored_and_listed(server: tuple[str, KnowledgeBase, Path]) -> None:
    url, kb, vault = server
    question = "Do tomatoes need sun?"
    first, second = (answered(url, question) for _ in range(2))
    assert first["citations"][0]["text"]  # the passage: not stored with a rating
    body = {
        "answer_id": first["answer_id"],
        "question": question,
        "answer": first["text"],
        "citations": first["citations"],
        "rating": "down",
        "reason": "too short",
    }
    assert httpx.post(url + "/api/feedback", json=body).status_code == 201
    again = {**body, "answer_id": second["answer_id"], "rating": "up", "reason": ""}  # asked again
    assert httpx.post(url + "/api/feedback", json=again).status_code == 201
    for bad in (
        {**body, "rating": "meh"},
        {**body, "question": ""},
        [],
    ):
        response = httpx.post(url + "/api/feedback", json=bad)
        assert response.status_code == 422 and response.json()["error"]
    too_long = httpx.post(url + "/api/feedback", json={**body, "reason": "x" * 2000})
    assert too_long.status_code == 413 and "limit is 1,000" in too_long.json()["error"]
    env = cli_env()
    args = [
        sys.executable,
        "-m",
        "kb_qa.cli",
        "feedback",
        str(vault),
        "--index-dir",
        str(kb.settings.index_path),
    ]
    text = subprocess.run(args, env=env, capture_output=True, text=True, check=True).stdout
    assert "2 ratings: 1 up, 1 down" in text
    # The same folder named twice, in two spellings, counted every rating twice.
    twice = [*args, "--index-dir", str(kb.settings.index_path) + "/"]
    again_text = subprocess.run(twice, env=env, capture_output=True, text=True, check=True)
    assert "2 ratings: 1 up, 1 down" in again_text.stdout
    assert "reason: too short" in text and "cited: My garden > Tomatoes" in text
    lines = subprocess.run(
        [*args, "--json", "--rating", "down"], env=env, capture_output=True, text=True, check=True
    ).stdout.splitlines()
    assert len(lines) == 1
    item = json.loads(lines[0])
    assert item["rating"] == "down" and "text" not in item["citations"][0]


def test_hostile_feedback_is_printed_harmlessly(
    make_vault: Callable[..., Path], kb: Callable[..., KnowledgeBase]
) -> None:
    vault = make_vault(NOTES, name="fb")
    base = kb(vault)
    base.index()
    body = {"question": "q \u001b[31mred", "rating": "down"}
    with UvicornThread(create_app(base, base.settings.replace(rate_limit=0))) as running:
        body["answer_id"] = answered(running.url, body["question"])["answer_id"]
        assert httpx.post(running.url + "/api/feedback", json=body).status_code == 201
    # Citations the API no longer takes from a client (they must be the answer's own), as
    # an older kb-qa stored them from a rating's body.
    cited = (
        {"url": "\u001b]0;PWNED\u0007\u001b[2J", "heading_path": "Garden"},
        {"url": "ok.md", "heading_path": ["A", 7, "B"], "number": True},
    )
    hostile = feedback.parse({**body, "answer": "a", "citations": list(cited)}, 500)
    feedback.FeedbackStore(base.settings.index_path).add(hostile)
    args = [sys.executable, "-m", "kb_qa.cli", "feedback", str(vault)]
    args += ["--index-dir", str(base.settings.index_path)]
    text = subprocess.run(args, env=cli_env(), capture_output=True, text=True, check=True).stdout
    assert "\x1b" not in text and "\x07" not in text
    assert "]0;PWNED" in text  # shown as harmless text
    assert "G > a > r" not in text  # a string heading_path is not joined letter by letter
    assert "cited: A > B  ok.md" in text
    lines = subprocess.run([*args, "--json"], env=cli_env(), capture_output=True, text=True)
    stored = json.loads(lines.stdout.splitlines()[0])  # newest first
    assert stored["citations"][1] == {"url": "ok.md", "heading_path": ["A", "B"]}


def test_pages_are_off_with_a_token(
    make_vault: Callable[..., Path], kb: Callable[..., KnowledgeBase]
) -> None:
    vault = make_vault(NOTES, name="private")
    base = kb(vault, api_token="s3cret-token-123")  # noqa: S106 - a test token
    base.index()
    with UvicornThread(create_app(base)) as running:
        assert httpx.get(running.url + "/").status_code == 404
        assert httpx.get(running.url + "/view/garden.md").status_code == 404


def test_notes_named_with_url_characters_open_from_the_list_and_from_citations(
    make_vault: Callable[..., Path], kb: Callable[..., KnowledgeBase]
) -> None:
    names = {
        "what?.md": "the questioning quagga",
        "C# notes 100%.md": "the hashy axolotl",
        "50%25 off.md": "the percent pika",
    }
    vault = make_vault({n: f"# {n[:-3]}\n\n## Facts\n\nAbout {t}.\n" for n, t in names.items()})
    base = kb(vault, rate_limit=0)
    base.index()
    with UvicornThread(create_app(base)) as running:
        home = httpx.get(running.url + "/").text
        hrefs = re.findall(r'<a href="(/view/[^"]*)"', home)
        assert len(hrefs) == 3
        for href in hrefs:  # what a browser requests when the link is clicked
            assert httpx.get(urljoin(running.url, html.unescape(href))).status_code == 200
        for name, text in names.items():
            reply = httpx.post(
                running.url + "/api/ask", json={"question": text, "stream": False}
            ).json()
            link = reply["citations"][0]["link"]
            page = httpx.get(urljoin(running.url + "/view/", link.split("#")[0]))
            assert page.status_code == 200, (name, link)
            assert text in page.text
