"""`kb-qa mcp` driven by a real MCP client session from the `mcp` package, over stdio."""

from __future__ import annotations

import contextlib
import json
import shutil
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import anyio
from conftest import cli_env
from llm_server import LLMServer, Reply
from mcp import ClientSession, stdio_client
from mcp_client import mcp_session, raw_server, server_params

from kb_qa import __version__
from kb_qa.kb.knowledge_base import KnowledgeBase

SAMPLE = Path(__file__).resolve().parents[1] / "sample_site"


async def _session_calls(vault: Path, index_dir: Path) -> dict[str, object]:
    async with mcp_session(vault, index_dir) as session:
        tools = await session.list_tools()
        search = await session.call_tool(
            "search_docs", {"query": "How do I rotate an API token?", "k": 3}
        )
        ask = await session.call_tool(
            "ask_docs", {"question": "What is the default retry backoff?"}
        )
        only = await session.call_tool(
            "search_docs",
            {"query": "How do I rotate an API token?", "include": ["docs/guides/*"], "k": 5},
        )
        # Bad input is a failed call (isError), with the rule the HTTP API states.
        failed = [
            await session.call_tool("search_docs", {"query": "  "}),
            await session.call_tool("search_docs", {"query": "retries", "k": 0}),
            await session.call_tool("search_docs", {"query": "retries", "k": 1000}),
            await session.call_tool("ask_docs", {"question": ""}),
            # pydantic's own words, not the API's, before: "1 validation error for
            # search_docsArguments … type=int_from_float … https://errors.pydantic.dev/…"
            await session.call_tool("search_docs", {"query": "retries", "k": 2.5}),
            await session.call_tool("search_docs", {"query": "retries", "k": None}),
            await session.call_tool("search_docs", {"query": "retries", "include": "docs/*"}),
            await session.call_tool("ask_docs", {"question": "retries?", "exclude": [3]}),
            await session.call_tool("search_docs", {"query": 5}),
            await session.call_tool("ask_docs", {"question": ["retries?"]}),
        ]
    return {
        "failed": [(r.is_error, r.content[0].text) for r in failed],
        "tools": sorted(t.name for t in tools.tools),
        "schemas": {t.name: t.input_schema for t in tools.tools},
        "only": only.content[0].text,
        "structured": search.structured_content,
        "search": search.content[0].text,
        "ask": ask.content[0].text,
    }


def test_mcp_tools_over_stdio(tmp_path: Path) -> None:
    vault = tmp_path / "site"
    shutil.copytree(SAMPLE, vault)
    result = anyio.run(_session_calls, vault, tmp_path / "idx")
    assert result["tools"] == ["ask_docs", "search_docs"]
    # Every argument says what it is for (a model reads these), and path filters work.
    schemas = result["schemas"]
    assert isinstance(schemas, dict)
    arguments = {**schemas["search_docs"]["properties"], **schemas["ask_docs"]["properties"]}
    assert set(arguments) == {"query", "k", "include", "exclude", "question"}
    assert all(a.get("description") for a in arguments.values()), arguments
    assert "1 to 100" in arguments["k"]["description"]
    assert arguments["k"]["default"] == 10  # top_k, as every other search (it was 8)
    only = json.loads(str(result["only"]))
    assert only and all(h["path"].startswith("docs/guides/") for h in only)
    assert result["structured"] is None  # the hits once, as text, not again as a JSON string
    hits = json.loads(str(result["search"]))
    assert len(hits) == 3
    assert any("token" in " ".join(h["heading_path"]).lower() for h in hits)
    assert all(h["link"].startswith("https://lumen.example.com/") for h in hits)
    # ... and where an editor opens each: the file on this machine, at the section's line.
    assert all(h["file"] == f"{vault / h['path']}:{h['line_start']}" for h in hits)
    assert all(h["passage"] for h in hits)
    answer = str(result["ask"])
    # No LLM is configured: the answer is extractive, cites [1] and lists that source.
    assert "[1]" in answer
    assert "\n[1] " in answer and "https://lumen.example.com/" in answer
    assert f"({vault / 'docs'}" in answer  # each source's file and line too
    failed = result["failed"]
    assert all(is_error for is_error, _ in failed), failed
    assert all(text.endswith("k must be between 1 and 100.") for _, text in failed[1:3])
    assert "query" in failed[0][1] and "question" in failed[3][1]
    assert [text.rsplit(": ", 1)[-1] for _, text in failed[4:]] == [
        "k must be a whole number written with the digits 0-9.",
        "k must be a whole number written with the digits 0-9.",
        "include must be a list of vault paths or globs.",
        "exclude must be a list of vault paths or globs.",
        "query is required and must be a non-empty string.",
        "question is required and must be a non-empty string.",
    ], failed[4:]
    assert arguments["k"]["type"] == "integer" and arguments["k"]["maximum"] == 100
    assert arguments["query"]["type"] == arguments["question"]["type"] == "string"
    assert {"query"} <= set(schemas["search_docs"]["required"])
    assert {"question"} <= set(schemas["ask_docs"]["required"])
    assert arguments["include"]["anyOf"][0] == {"type": "array", "items": {"type": "string"}}


WAITING = "another kb-qa process is updating this index; waiting for it to finish"


async def _while_another_process_writes(
    vault: Path, index_dir: Path, log: Path, reported: threading.Event | None = None
) -> tuple[str, bool, str]:
    params = server_params(vault, index_dir)

    async def progress(done: float, total: float | None, message: str | None) -> None:
        if reported is not None and message:
            reported.set()

    with log.open("w") as errlog:
        async with (
            stdio_client(params, errlog=errlog) as (read, write),
            ClientSession(read, write) as session,
        ):
            started = await session.initialize()
            search = await session.call_tool(
                "search_docs", {"query": "retries"}, progress_callback=progress
            )
    return (
        f"{started.server_info.name} {started.server_info.version}",
        search.is_error,
        search.content[0].text,
    )


def _release_when_logged(
    log: Path, lock: contextlib.AbstractContextManager[None], reported: threading.Event
) -> None:
    """Let the other process's run end once the MCP server has said it waits for it and
    the waiting call has had a progress report."""
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and WAITING not in (log.read_text() if log.exists() else ""):
        time.sleep(0.05)
    reported.wait(60)
    lock.__exit__(None, None, None)


def test_the_handshake_does_not_wait_for_the_first_index_run(tmp_path: Path) -> None:
    """The first index run goes on while the client connects (a cold index of a big site
    takes minutes; MCP clients give up on a handshake sooner). Here another process holds
    the index when the server starts: the first call waits for that run, then answers.
    Every call of the session failed with "another process is updating" before, even
    after the other process had finished."""
    vault = tmp_path / "site"
    shutil.copytree(SAMPLE, vault)
    log = tmp_path / "mcp.log"
    with KnowledgeBase(vault, embed_model="hash", index_dir=tmp_path / "idx") as other:
        lock = other.store.writer_lock()
        lock.__enter__()
        reported = threading.Event()
        release = threading.Thread(target=_release_when_logged, args=(log, lock, reported))
        release.start()
        name, is_error, text = anyio.run(
            _while_another_process_writes, vault, tmp_path / "idx", log, reported
        )
        release.join()
    assert name == f"kb-qa {__version__}"  # a client and an issue report can tell the build
    assert WAITING in log.read_text()
    # While it waited, the call reported progress (clients time out a silent call).
    assert reported.is_set()
    assert not is_error and json.loads(text), text


def test_an_index_being_updated_by_another_process_is_searched_meanwhile(tmp_path: Path) -> None:
    """Two editor windows on one vault: the second server answers from the index there is
    while the first one's run holds it."""
    vault = tmp_path / "site"
    shutil.copytree(SAMPLE, vault)
    log = tmp_path / "mcp.log"
    with KnowledgeBase(vault, embed_model="hash", index_dir=tmp_path / "idx") as other:
        other.index()
        with other.store.writer_lock():
            _, is_error, text = anyio.run(
                _while_another_process_writes, vault, tmp_path / "idx", log
            )
    # Answered while the other process held the index: the server's run could not end.
    assert not is_error and any("retr" in json.dumps(h).lower() for h in json.loads(text))


def test_a_client_that_leaves_while_a_call_waits_for_the_first_index_ends_the_server(
    tmp_path: Path,
) -> None:
    """The server kept running until the whole first index run was done (minutes on a big
    site; here, never: another process holds the index), and an exit under the running
    index thread aborted in ONNX Runtime's teardown."""
    vault = tmp_path / "site"
    shutil.copytree(SAMPLE, vault)
    hello = {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t"}}
    messages = [
        {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": hello},
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {
            "jsonrpc": "2.0",
            "id": 2,
            "method": "tools/call",
            "params": {"name": "search_docs", "arguments": {"query": "retries"}},
        },
    ]
    log = tmp_path / "mcp.log"
    with KnowledgeBase(vault, embed_model="hash", index_dir=tmp_path / "idx") as other:
        with other.store.writer_lock(), log.open("w") as errlog:
            server = raw_server(vault, tmp_path / "idx", errlog, messages)
            assert server.stdin is not None and server.stdout is not None
            assert b'"id":1' in server.stdout.readline().replace(b" ", b"")  # initialized
            deadline = time.monotonic() + 60
            while WAITING not in log.read_text():  # the call now waits for the index
                assert time.monotonic() < deadline and server.poll() is None
                time.sleep(0.05)
            server.stdin.close()
            try:
                code = server.wait(timeout=30)
            finally:
                server.kill()
    assert code == 0, log.read_text()


def test_ctrl_c_in_a_terminal_stops_the_server(tmp_path: Path) -> None:
    """It did nothing the first time, and the second left the process waiting for Ctrl-D
    (the protocol's reader blocks on stdin in a thread)."""
    vault = tmp_path / "notes"
    vault.mkdir()
    (vault / "a.md").write_text("# A\n\nAlpha.\n", encoding="utf-8")
    log = tmp_path / "mcp.log"
    with log.open("w") as errlog:
        server = subprocess.Popen(
            [sys.executable, "-m", "kb_qa.cli", "mcp", str(vault), "--embed-model", "hash"],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=errlog, env=cli_env(),
        )  # fmt: skip
        try:
            deadline = time.monotonic() + 60
            while "Indexed 1 files" not in log.read_text():  # serving, the stream left open
                assert time.monotonic() < deadline and server.poll() is None, log.read_text()
                time.sleep(0.05)
            server.send_signal(signal.SIGINT)
            code = server.wait(timeout=15)
        finally:
            server.kill()
    assert code == 130 and "kb-qa: stopped." in log.read_text()


async def _ask_with(vault: Path, index_dir: Path, env: dict[str, str]) -> tuple[bool, str]:
    async with mcp_session(vault, index_dir, env) as session:
        ask = await session.call_tool("ask_docs", {"question": "What is the retry backoff?"})
    return ask.is_error, ask.content[0].text


def test_a_failed_answer_tells_the_editor_what_to_fix(tmp_path: Path, llm: LLMServer) -> None:
    """Over stdio the client is the operator's own editor: "refused the request" alone left
    what to set (the key's variable) in a log file nobody reads."""
    vault = tmp_path / "site"
    shutil.copytree(SAMPLE, vault)
    llm.script(Reply(status=401, text="Incorrect API key provided: sk-echoed-4f9a1234"))
    env = cli_env(
        KBQA_MODEL="openai/test", KBQA_API_BASE=llm.url, OPENAI_API_KEY="sk-echoed-4f9a1234"
    )
    is_error, text = anyio.run(_ask_with, vault, tmp_path / "idx", env)
    assert is_error
    assert "The language model provider refused the request." in text
    assert "OPENAI_API_KEY" in text and "sk-echoed" not in text
