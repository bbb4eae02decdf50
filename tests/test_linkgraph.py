"""The docs' links to their own sections: resolved, counted, and used in ranking."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from pathlib import Path
from urllib.parse import unquote

import numpy as np

from kb_qa.index import retrieval
from kb_qa.ingest import linkgraph
from kb_qa.ingest.chunking import with_hash
from kb_qa.kb.knowledge_base import KnowledgeBase
from kb_qa.types import Chunk


def section(path: str, url: str, anchor: str, text: str, heading: str = "") -> Chunk:
    heading = heading or anchor.replace("-", " ").capitalize()
    return Chunk(
        id=f"{path}#{anchor}",
        path=path,
        url=url,
        anchor=anchor,
        heading=heading,
        heading_path=("Page", heading),
        level=2,
        text=text,
        start=0,
        end=len(text),
        line_start=1,
        line_end=1,
        hash=f"{path}#{anchor}",
    )


def test_links_of_every_form_reach_their_section() -> None:
    chunks = [
        section("docs/config.md", "config/", "config", "# Config"),
        section("docs/config.md", "config/", "timeouts", "## Timeouts\n\nSeconds."),
        section("docs/config.md", "config/", "proxies", "## Proxies\n\nSee [above](#timeouts)."),
        section(
            "docs/guide/ws.md",
            "guide/ws/",
            "sockets",
            "If a socket drops after a minute, raise the [limit](../config.md#timeouts).\n\n"
            "Rendered pages link by URL: [proxies](../../config/#proxies).\n\n"
            "```\n[not a link](../config.md#proxies)\n```\n"
            "External: [elsewhere](https://example.org/config.md#timeouts).",
        ),
        section(
            "docs/notes.md",
            "notes/",
            "notes",
            "Read [the config page][cfg], [[config#Timeouts]] and [[config]].\n\n"
            "[cfg]: config.md#proxies\n",
        ),
        section(
            "docs/bad.md",
            "bad/",
            "bad",
            "[gone](missing.md#x) [nowhere](config.md#nope) [a page](config.md)",
        ),
    ]
    inbound = linkgraph.inbound(chunks)
    counts = dict(zip((c.anchor for c in chunks), inbound.counts.tolist()))
    # timeouts: from proxies (same page), the guide and the notes' wikilink; proxies: from the
    # guide's URL link and the notes' reference (the fenced one is code). Links to a whole
    # page ([a page](config.md), [[config]]) count for no section.
    assert counts == {
        "config": 0,
        "timeouts": 3,
        "proxies": 2,
        "sockets": 0,
        "notes": 0,
        "bad": 0,
    }
    context = dict(zip((c.anchor for c in chunks), inbound.context))
    assert "drops after a minute" in context["timeouts"]
    assert "Rendered pages link by URL" in context["proxies"]


def test_a_section_links_to_itself_and_page_urls_without_directories() -> None:
    chunks = [
        section("a.md", "a.html", "one", "[here](#one) and [two](b.html#two)"),
        section("b.md", "b.html", "two", "Two."),
    ]
    inbound = linkgraph.inbound(chunks)
    assert inbound.counts.tolist() == [0, 1]  # a self-link says nothing


def test_url_links_between_pages_in_folders_whose_names_need_encoding() -> None:
    # Page URLs are percent-encoded as MkDocs writes them ("user%20guide/a/").
    chunks = [
        section("docs/user guide/a.md", "user%20guide/a/", "one", "See [b](../b/#two)."),
        section("docs/user guide/b.md", "user%20guide/b/", "two", "Two."),
        section("docs/指南/c.md", "%E6%8C%87%E5%8D%97/c/", "three", "See [d](../d/#four)."),
        section("docs/指南/d.md", "%E6%8C%87%E5%8D%97/d/", "four", "Four."),
    ]
    assert linkgraph.inbound(chunks).counts.tolist() == [0, 1, 0, 1]


def test_fusion_standardises_keyword_candidates_with_their_real_similarity() -> None:
    chunks = [section("p.md", "p/", name, name) for name in ("a", "b", "c", "d")]
    by_id = {c.id: i for i, c in enumerate(chunks)}
    vector = [("p.md#a", 0.90), ("p.md#b", 0.60), ("p.md#d", 0.58)]  # the nearest three
    keyword = [(2, 3.0), (1, 2.9), (0, 0.5)]  # "c" matched by words, not among the nearest

    def fused(cosines: dict[int, float] | None) -> dict[str, float]:
        hits = retrieval.fuse(chunks, vector, keyword, by_id=by_id, cosines=cosines)
        return {h.chunk.anchor: h.fused or 0.0 for h in hits}

    # Without its similarity "c" counts as the least similar candidate and ties with "a"
    # and "b"; with it (0.85, nearly the best), its keyword match puts it far ahead.
    plain, known = fused(None), fused({2: 0.85})
    assert abs(plain["c"] - plain["a"]) < 0.05
    assert known["c"] > max(known["a"], known["b"]) + 0.5


def test_links_lift_the_section_the_docs_point_to(
    make_vault: Callable[..., Path], kb: Callable[..., KnowledgeBase]
) -> None:
    vault = make_vault(
        {
            "server.md": "# Server\n\n## Idle limit\n\nQuiet connections close after "
            "`idle_limit` seconds.\n",
            "client.md": "# Client\n\n## Idle connections\n\nThe client keeps idle "
            "connections open to reuse them.\n",
            "ws.md": "# Websockets\n\n## Dropped sockets\n\nA socket that drops after a "
            "minute hit the server's [idle limit](server.md#idle-limit).\n",
            "deploy.md": "# Deploy\n\n## Behind a proxy\n\nProxies close quiet sockets "
            "too: see [idle limit](server.md#idle-limit).\n",
        }
    )
    index = kb(vault, link_weight=0.0, link_text_weight=0.0)
    index.index()
    # "early", in no section: the idle limit's, the only one holding the other words, would
    # lead on its words alone (retrieval.fuse), links or not.
    question = "why are idle connections closed early?"
    first = [f"{h.chunk.path}#{h.chunk.anchor}" for h in index.search(question, 4)]
    assert first.index("client.md#idle-connections") < first.index("server.md#idle-limit")
    index.settings = index.settings.replace(link_weight=0.2, link_text_weight=0.1)
    linked = [f"{h.chunk.path}#{h.chunk.anchor}" for h in index.search(question, 4)]
    assert linked.index("server.md#idle-limit") < linked.index("client.md#idle-connections")
    assert np.count_nonzero(index._view().linked) == 1


def test_hostile_text_is_read_in_linear_time() -> None:
    # Unbounded patterns backtracked quadratically on runs like these: 150 kB of "[[a"
    # took minutes to normalise, and "[x](" repeated hung the link reader.
    from kb_qa.text import normalize

    text = "[x](" * 50_000 + "[[a" * 50_000 + "\n```\n" * 1_000 + "See [two](b.md#two)."
    chunks = [section("a.md", "a/", "one", text), section("b.md", "b/", "two", "Two.")]
    assert linkgraph.inbound(chunks).counts.tolist() == [0, 1]
    assert normalize(text).endswith("See [two](b.md#two).")


def test_a_reload_reads_again_only_the_links_of_edited_chunks() -> None:
    """The view reloads after every edit: links read from unchanged chunks are reused (by
    content hash), an edited chunk's are read again, and the counts equal a fresh read's."""
    target = with_hash(section("docs/a.md", "a/", "timeouts", "## Timeouts\n\nSeconds."))
    linking = with_hash(section("docs/b.md", "b/", "b", "See [timeouts](a.md#timeouts)."))
    other = with_hash(section("docs/c.md", "c/", "c", "Nothing to see."))
    first = linkgraph.inbound([target, linking, other])
    assert first.counts.tolist() == [1, 0, 0]

    edited = with_hash(dataclasses.replace(other, text="Also [the timeouts](a.md#timeouts)."))
    again = linkgraph.inbound([target, linking, edited], first.written)
    assert again.written[linking.hash] is first.written[linking.hash]
    assert again.counts.tolist() == [2, 0, 0]
    assert again.context == linkgraph.inbound([target, linking, edited]).context
    assert "Also [the timeouts]" in again.context[0]


def test_pages_a_passage_links_to_among_the_candidates() -> None:
    home = section("docs/index.md", "", "next", "## Next\n\n")
    install = section("docs/setup/install.md", "setup/install/", "docker", "## Docker")
    faq = section("notes/FAQ.md", "notes/FAQ/", "why", "## Why")
    among = [home, install, faq]
    passage = (
        "1. [Install it](setup/install.md#docker) on Docker.\n"
        "2. See [the FAQ](https://example.com/faq.md), `[code](setup/install.md)`,\n"
        "   [elsewhere](missing.md) and [this page](#next).\n"
    )
    # Only the links to another candidate's page count (not code, URLs or the page itself).
    assert linkgraph.pages_linked(home, passage, among) == {"docs/setup/install.md"}
    assert linkgraph.pages_linked(home, "Read [[FAQ#Why]].", among) == {"notes/FAQ.md"}
    assert linkgraph.pages_linked(home, "Rendered [link](setup/install/#docker).", among) == {
        "docs/setup/install.md"
    }
    assert linkgraph.pages_linked(home, "No links here.", among) == set()


def test_a_name_several_notes_have_is_the_one_in_the_linking_note_s_folder(
    make_vault: Callable[..., Path], kb: Callable[..., KnowledgeBase]
) -> None:
    """Two "Meeting.md" notes: ``[[Meeting#Decisions]]`` counted for neither in ranking,
    while /view opened whichever came first; Obsidian opens the one beside the link, and
    from elsewhere one of them (here the one nearest the top, then first by path)."""
    import httpx
    from uvicorn_thread import UvicornThread

    from kb_qa.serve.app import create_app

    chunks = [
        section("work/Meeting.md", "work/Meeting.md", "decisions", "## Decisions\n\nShip it."),
        section("home/Meeting.md", "home/Meeting.md", "decisions", "## Decisions\n\nPaint."),
        section("home/Plan.md", "home/Plan.md", "plan", "As agreed in [[Meeting#Decisions]]."),
        section("Log.md", "Log.md", "log", "[[work/Meeting#Decisions]] [[x/Meeting#Decisions]]"),
        section("Other.md", "Other.md", "other", "Which? [[Meeting#Decisions]]"),
    ]
    counts = dict(zip((c.path for c in chunks), linkgraph.inbound(chunks).counts.tolist()))
    # home/Plan.md's link is to its neighbour; Log.md's names the folder (x/ is no folder);
    # Other.md's has no note of that name beside it: the first by path
    assert counts["home/Meeting.md"] == 2 and counts["work/Meeting.md"] == 1
    vault = make_vault(
        {
            "work/Meeting.md": "# Meeting\n\n## Decisions\n\nShip it.\n",
            "home/Meeting.md": "# Meeting\n\n## Decisions\n\nPaint the fence.\n",
            "home/Plan.md": "# Plan\n\nAs agreed in [[Meeting#Decisions]].\n",
            "work/Plan.md": "# Plan\n\nAs agreed in [[Meeting#Decisions]].\n",
        }
    )
    base = kb(vault, rate_limit=0)
    base.index()
    with UvicornThread(create_app(base)) as server:
        for folder in ("home", "work"):
            page = httpx.get(f"{server.url}/view/{folder}/Plan.md").text
            assert f'href="/view/{folder}/Meeting.md#decisions"' in page, page


def test_the_view_follows_a_wikilink_to_the_section_the_ranking_counted_it_for(
    make_vault: Callable[..., Path], kb: Callable[..., KnowledgeBase]
) -> None:
    """Ranking and /view resolved wikilinks apart: ``[[b/Note]]`` of ``a/b/Note.md`` was a
    link for one and text for the other, a name two notes have was counted for neither
    while the view opened the first by path, and a block's link counted for nothing."""
    import re

    import httpx
    from uvicorn_thread import UvicornThread

    from kb_qa.serve.app import create_app

    links = "[[b/Note#Setup]] [[Twin#Steps]] [[Deep#^key-fact]] [[notes/Long#Part]]"
    files = {
        "Index.md": f"# Index\n\nSee {links}.\n",
        "a/b/Note.md": "# Note\n\n## Setup\n\nInstall it.\n",
        "c/Twin.md": "# Twin\n\n## Steps\n\nNear the top.\n",
        "notes/Long.markdown": "# Long\n\n## Part\n\nA .markdown note.\n",
        "b/deep/Twin.md": "# Twin\n\n## Steps\n\nFirst by path.\n",
        "Deep.md": "# Deep\n\n## Intro\n\nHello.\n\n## Facts\n\nThe key fact. ^key-fact\n",
    }
    base = kb(make_vault(files, name="obsidian"), rate_limit=0)
    base.index()
    chunks = base.store.chunks()
    counted = {
        target for origin, target, _ in linkgraph.resolved(chunks) if origin[0] == "Index.md"
    }
    assert counted == {
        ("a/b/Note.md", "setup"),
        ("c/Twin.md", "steps"),
        ("Deep.md", "facts"),
        ("notes/Long.markdown", "part"),  # a folder/Name link to a .markdown note
    }
    with UvicornThread(create_app(base)) as server:
        page = httpx.get(f"{server.url}/view/Index.md").text
    opened = {
        (unquote(path), anchor)
        for path, anchor in re.findall(r'href="/view/([^"#]+)#([^"]+)"', page)
    }
    assert opened == counted, page


def test_a_wikilink_through_parent_headings_opens_the_heading_under_them(
    make_vault: Callable[..., Path], kb: Callable[..., KnowledgeBase]
) -> None:
    """Obsidian's ``[[Note#Parent#Heading]]`` opened ``#car-service-lognext-due``, an id no
    heading has, and was labelled "Car Service Log > Car Service Log#Next due"; of two
    "Problems" headings, the one under "Week 2" is meant."""
    import re

    import httpx
    from uvicorn_thread import UvicornThread

    from kb_qa.serve.app import create_app

    files = {
        "Links.md": "# Links\n\n[[Car Service Log#Car Service Log#Next due]] and "
        "[[Weekly Review#Week 2#Problems]] and [[Weekly Review#Week 9#Problems]].\n",
        "Car Service Log.md": "# Car Service Log\n\n## Tyres\n\n2.3 bar.\n\n## Next due\n\nMOT.\n",
        "Weekly Review.md": "# Weekly Review\n\n## Week 1\n\n### Problems\n\nRain.\n\n"
        "## Week 2\n\n### Problems\n\nSlugs.\n",
    }
    base = kb(make_vault(files, name="obsidian"), rate_limit=0)
    base.index()
    counted = {
        target
        for origin, target, _ in linkgraph.resolved(base.store.chunks())
        if origin[0] == "Links.md"
    }
    # Week 9 is no heading: its "Problems" is the first one, as a plain [[#Problems]] opens.
    assert counted == {
        ("Car Service Log.md", "next-due"),
        ("Weekly Review.md", "problems_1"),
        ("Weekly Review.md", "problems"),
    }
    with UvicornThread(create_app(base)) as server:
        page = httpx.get(f"{server.url}/view/Links.md").text
    assert re.findall(r'#([^"]+)">([^<]+)</a>', page) == [
        ("next-due", "Car Service Log &gt; Car Service Log &gt; Next due"),
        ("problems_1", "Weekly Review &gt; Week 2 &gt; Problems"),
        ("problems", "Weekly Review &gt; Week 9 &gt; Problems"),
    ], page
