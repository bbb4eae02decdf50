"""`kb-qa mcp` at its edges, driven as a client would: oversized sections, path filters an
assistant gets wrong, a call made while the first index run updates the index, and a client
that goes away while a call is still waiting."""

from __future__ import annotations

import json
import shutil
import threading
import time
from pathlib import Path

import anyio
from index_gate import Gate
from mcp import Client
from mcp_client import mcp_session, raw_server

from kb_qa.kb.knowledge_base import KnowledgeBase
from kb_qa.serve import first_index
from kb_qa.serve.first_index import FirstIndex
from kb_qa.serve.mcp_server import PROGRESS_SECONDS, build_server

SAMPLE = Path(__file__).resolve().parents[1] / "sample_site"


async def _calls(
    vault: Path, index_dir: Path, calls: list[tuple[str, dict[str, object]]]
) -> tuple[list[tuple[bool, str]], dict[str, dict[str, object]]]:
    async with mcp_session(vault, index_dir) as session:
        tools = await session.list_tools()
        results = [await session.call_tool(name, arguments) for name, arguments in calls]
    described = {t.name: t.model_dump(mode="json", by_alias=True) for t in tools.tools}
    return [(r.is_error, r.content[0].text) for r in results], described


def test_a_huge_section_does_not_flood_the_assistant(tmp_path: Path) -> None:
    """A note holding a pasted 5 MB log in one code block came back whole: one search_docs
    call of k=5 answered 4.8 MB, which clients refuse (or which fills the model's whole
    context). Each passage is cut, the whole result kept within a budget, and a cut
    passage says so and where the section is, so the assistant can read the rest."""
    vault = tmp_path / "notes"
    vault.mkdir()
    dump = "\n".join(f"frame_{i} = decode({i}, 'payload {i}')" for i in range(20_000))
    (vault / "dump.md").write_text(
        f"# Frobnicator dump\n\nThe frobnicator crash dump.\n\n```text\n{dump}\n```\n",
        encoding="utf-8",
    )
    for n in range(60):  # many ordinary sections: k=100 of them is still one bounded reply
        body = "\n\n".join(
            f"Frame {n}.{j} of the decoder notes, payload and frame." for j in range(25)
        )
        (vault / f"note{n}.md").write_text(f"# Decoder note {n}\n\n{body}\n", encoding="utf-8")
    calls: list[tuple[str, dict[str, object]]] = [
        ("search_docs", {"query": "frame_4000 decode payload", "k": 1}),
        ("search_docs", {"query": "decoder frame payload", "k": 100}),
    ]
    (one, many), described = anyio.run(_calls, vault, tmp_path / "idx", calls)
    assert not one[0] and not many[0]
    assert len(one[1]) < 10_000, len(one[1])
    [hit] = json.loads(one[1])
    assert hit["path"] == "dump.md" and hit["truncated"] is True
    assert hit["passage"].startswith("```text\nframe_0 = decode(0")
    assert hit["line_end"] > 20_000  # where the rest is: the file, to its last line
    hits = json.loads(many[1])
    assert len(hits) > 50 and len(many[1]) <= 60_000, (len(hits), len(many[1]))
    assert all(h["link"] and h["file"] for h in hits)  # every hit can still be cited
    assert "truncated" in str(described["search_docs"]["description"])


def test_a_path_filter_that_matches_no_page_says_so(tmp_path: Path) -> None:
    """An assistant that left out docs_dir (include ["guides/*"]) got [] and told the user
    the docs say nothing about it. Now the call fails with how paths are written."""
    vault = tmp_path / "site"
    shutil.copytree(SAMPLE, vault)
    calls: list[tuple[str, dict[str, object]]] = [
        ("search_docs", {"query": "retries", "include": ["guides/*"]}),
        ("search_docs", {"query": "retries", "exclude": ["docs"]}),
        ("search_docs", {"query": "retries", "include": ["../../etc/*"]}),
        ("search_docs", {"query": "retries", "include": ["docs/guides"], "k": 2}),
    ]
    results, described = anyio.run(_calls, vault, tmp_path / "idx", calls)
    (wrong, wrong_text), (everything, everything_text), (outside, _), (right, right_text) = results
    assert wrong and "include" in wrong_text and "docs/guides/" in wrong_text, wrong_text
    assert everything and "exclude" in everything_text, everything_text
    assert outside  # a path out of the vault matches nothing in it either
    assert not right and len(json.loads(right_text)) == 2
    # The schema states k's range and that the tools only read.
    search = described["search_docs"]
    k = search["inputSchema"]["properties"]["k"]  # type: ignore[index]
    assert (k["minimum"], k["maximum"]) == (1, 100)
    for tool in described.values():
        assert tool["annotations"]["readOnlyHint"] is True  # type: ignore[index]


def test_ask_docs_answers_from_the_pages_a_filter_leaves(tmp_path: Path) -> None:
    """`ask_docs` took no path filter, so an assistant asked to answer "from the CLI
    reference" got an answer from any page; search_docs had the filters all along."""
    vault = tmp_path / "site"
    shutil.copytree(SAMPLE, vault)
    with KnowledgeBase(vault, embed_model="hash", index_dir=tmp_path / "idx") as kb:
        kb.index()

        async def asks() -> list[tuple[bool, str]]:
            async with Client(build_server(kb)) as client:
                results = [
                    await client.call_tool("ask_docs", {"question": q, **filters})
                    for q, filters in (
                        ("How do I cancel a job?", {"include": ["docs/reference/*"]}),
                        ("How do I cancel a job?", {"exclude": ["docs/reference/*"]}),
                        ("How do I cancel a job?", {"include": ["reference/*"]}),
                    )
                ]
            return [(r.is_error, r.content[0].text) for r in results]

        (only, only_text), (without, without_text), (wrong, wrong_text) = anyio.run(asks)
    sources = [line for line in only_text.splitlines() if line.startswith("[")]
    assert not only and sources, only_text
    assert all("docs/reference/" in line for line in sources), sources
    cited = [line for line in without_text.splitlines() if line.startswith("[")]
    assert not without and cited and not any("docs/reference/" in ln for ln in cited), cited
    assert wrong and "docs/reference/" in wrong_text, wrong_text


def test_a_client_that_dies_while_a_call_waits_ends_the_server_cleanly(tmp_path: Path) -> None:
    """An editor that crashed (both pipes closed) while a call waited for the first index
    run: the next progress report hit a broken pipe and the server died with a 60-line
    traceback and exit 1 (with the real model, SIGABRT in ONNX Runtime's teardown: a crash
    report on the user's desktop). Now it ends as when the client closes stdin."""
    vault = tmp_path / "site"
    shutil.copytree(SAMPLE, vault)
    hello = {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t"}}
    call = {"name": "search_docs", "arguments": {"query": "retries"}, "_meta": {"progressToken": 1}}
    messages = [
        {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": hello},
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": call},
    ]
    log = tmp_path / "mcp.log"
    with KnowledgeBase(vault, embed_model="hash", index_dir=tmp_path / "idx") as other:
        with other.store.writer_lock(), log.open("w") as errlog:  # the first run waits
            server = raw_server(vault, tmp_path / "idx", errlog, messages)
            assert server.stdin is not None and server.stdout is not None
            assert b'"id":1' in server.stdout.readline().replace(b" ", b"")
            assert b"notifications/progress" in server.stdout.readline()  # the call waits
            server.stdout.close()  # the client is gone: nobody reads the next report,
            time.sleep(PROGRESS_SECONDS + 1)  # which is written into a broken pipe
            server.stdin.close()
            try:
                code = server.wait(timeout=30)
            finally:
                server.kill()
    text = log.read_text()
    assert code == 0 and "Traceback" not in text, text


def test_an_index_with_pages_is_searched_while_the_first_run_updates_it(tmp_path: Path) -> None:
    """After a branch switch the first run re-embeds minutes of pages, and every tool call
    waited for all of it although the index held the vault's pages. Now they answer from
    those meanwhile (as the HTTP API does); only an empty index makes them wait. The run is
    held part-way through its embedding; the server is the one `kb-qa mcp` builds, called
    in-process by the `mcp` package's client."""
    vault = tmp_path / "notes"
    vault.mkdir()
    (vault / "retries.md").write_text("# Retries\n\nA failing job is attempted five times.\n")
    with KnowledgeBase(vault, embed_model="hash", embed_batch=4, index_dir=tmp_path / "idx") as kb:
        kb.index()
        for i in range(12):  # the branch switch: pages the run has to embed
            (vault / f"garden{i}.md").write_text(f"# Garden {i}\n\nBed {i} grows garlic.\n")
        first = FirstIndex(had_pages=bool(kb.store.files()))
        gate = Gate()
        run = threading.Thread(target=first_index.run, args=(kb, first), kwargs={"progress": gate})
        run.start()
        try:
            assert gate.holding.wait(30), "the run never reached its embedding"

            async def search() -> tuple[bool, str]:
                async with Client(build_server(kb, first)) as client:
                    with anyio.fail_after(20):  # it used to wait for the whole run
                        result = await client.call_tool("search_docs", {"query": "attempts"})
                return result.is_error, result.content[0].text

            is_error, text = anyio.run(search)
            assert not first.done.is_set()  # answered while the run was still going
        finally:
            gate.opened.set()
            run.join(60)
    assert not is_error, text
    assert json.loads(text)[0]["path"] == "retries.md"


def test_ask_docs_takes_a_file_path_as_search_docs_gives_it(tmp_path: Path) -> None:
    """search_docs gives each hit's file as an absolute path on this machine, and the
    search takes such a path as a filter; ask_docs checked its filters on their own first
    and failed the call ("matches no page") for a path inside the vault."""
    vault = tmp_path / "site"
    shutil.copytree(SAMPLE, vault)
    with KnowledgeBase(vault, embed_model="hash", index_dir=tmp_path / "idx") as kb:
        kb.index()
        folder = str(vault / "docs" / "reference")

        async def ask() -> tuple[bool, str]:
            async with Client(build_server(kb)) as client:
                result = await client.call_tool(
                    "ask_docs", {"question": "How do I cancel a job?", "include": [folder]}
                )
            return result.is_error, result.content[0].text

        is_error, text = anyio.run(ask)
    assert not is_error, text
    sources = [line for line in text.splitlines() if line.startswith("[")]
    assert sources and all("docs/reference/" in line for line in sources), text


def test_an_index_the_first_run_rebuilds_is_not_searched_half_empty(tmp_path: Path) -> None:
    """A rebuild (an upgrade's new chunker, another embedding model) empties the index
    before the run fills it again: `kb-qa mcp` searched it meanwhile, as an index that
    held pages, and search_docs answered [] (the assistant said the docs were silent).
    The tools wait for such a run, as for an empty index."""
    vault = tmp_path / "notes"
    vault.mkdir()
    (vault / "retries.md").write_text("# Retries\n\nA failing job is attempted five times.\n")
    for i in range(12):
        (vault / f"garden{i}.md").write_text(f"# Garden {i}\n\nBed {i} grows garlic.\n")
    with KnowledgeBase(vault, embed_model="hash", index_dir=tmp_path / "idx") as kb:
        kb.index()
    with KnowledgeBase(
        vault, embed_model="minilm", embed_batch=4, index_dir=tmp_path / "idx"
    ) as kb:
        first = FirstIndex(had_pages=first_index.serves_meanwhile(kb))  # as `kb-qa mcp` does
        gate = Gate()
        run = threading.Thread(target=first_index.run, args=(kb, first), kwargs={"progress": gate})
        run.start()
        try:
            assert gate.holding.wait(60), "the run never reached its embedding"
            threading.Timer(2.0, gate.opened.set).start()  # the run goes on a little later

            async def search() -> tuple[bool, str]:
                async with Client(build_server(kb, first)) as client:
                    with anyio.fail_after(60):
                        result = await client.call_tool("search_docs", {"query": "attempts"})
                return result.is_error, result.content[0].text

            is_error, text = anyio.run(search)
        finally:
            gate.opened.set()
            run.join(60)
    assert not is_error, text
    assert json.loads(text)[0]["path"] == "retries.md", text


def test_ask_docs_names_a_notes_file_once_at_the_passages_line(tmp_path: Path) -> None:
    """In a notes vault (no site, its links are files) a source read "[1] Note: …/note.md:3
    (…/note.md:5)": the same file twice, the section's line and the passage's."""
    vault = tmp_path / "notes"
    vault.mkdir()
    (vault / "Yuki.md").write_text(
        "# Yuki\n\nFriend from the language exchange.\n\nLives in Osaka, near the castle.\n",
        encoding="utf-8",
    )
    with KnowledgeBase(vault, embed_model="hash", index_dir=tmp_path / "idx") as kb:
        kb.index()

        async def ask() -> str:
            async with Client(build_server(kb)) as client:
                result = await client.call_tool("ask_docs", {"question": "Where does Yuki live?"})
            return str(result.content[0].text)

        text = anyio.run(ask)
    (source,) = [line for line in text.splitlines() if line.startswith("[1] ")]
    assert source.count("Yuki.md") == 1, source
    assert source.endswith(f"{vault / 'Yuki.md'}:5"), source
