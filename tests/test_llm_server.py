"""The test LLM server, driven through litellm's real HTTP path and, for the wire format, httpx."""

from __future__ import annotations

import asyncio
import json
import os
import time
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

os.environ["LITELLM_LOCAL_MODEL_COST_MAP"] = "True"  # before litellm loads: no network fetch

import litellm
import openai
from llm_server import LLMServer, Reply  # tests/ is on sys.path under pytest

from kb_qa.answer.citations import CitationRenumberer
from kb_qa.answer.prompt import build_messages
from kb_qa.types import Chunk, Hit

litellm.suppress_debug_info = True  # no "Give Feedback" banner on every expected error

MESSAGES = [{"role": "user", "content": "Say hello."}]

# litellm imports pydantic models lazily on the first call, and pydantic warns about one of them;
# pytest turns warnings into errors, which would surface as a failed completion.
pytestmark = pytest.mark.filterwarnings("ignore:Item.* `ReadOnly` qualifier:UserWarning")


@pytest.fixture(scope="module")
def loop() -> Iterator[asyncio.AbstractEventLoop]:
    # One loop for the module: litellm caches its async HTTP clients, bound to a loop.
    loop = asyncio.new_event_loop()
    yield loop
    loop.close()


@pytest.fixture
def server() -> Iterator[LLMServer]:
    with LLMServer() as s:
        yield s


async def _stream(server: LLMServer, deltas: list[str], **kwargs: Any) -> None:
    options: dict[str, Any] = {"num_retries": 0, "messages": MESSAGES} | kwargs
    response = await litellm.acompletion(
        model="openai/test", api_base=server.url, api_key="x", stream=True, **options
    )
    async for chunk in response:
        if chunk.choices:  # the usage-only chunk has none
            deltas.append(chunk.choices[0].delta.content or "")


def collect(
    loop: asyncio.AbstractEventLoop, server: LLMServer, **kwargs: Any
) -> tuple[list[str], BaseException | None]:
    """Stream one completion; return the content deltas and the exception, if one was raised."""
    deltas: list[str] = []
    try:
        loop.run_until_complete(_stream(server, deltas, **kwargs))
    except Exception as exc:  # noqa: BLE001 - the tests inspect it
        return deltas, exc
    return deltas, None


def sse_events(server: LLMServer, body: dict[str, Any]) -> list[Any]:
    """POST with plain httpx and return the decoded ``data:`` payloads ("[DONE]" kept as text)."""
    events = []
    url = server.url + "/chat/completions"
    with httpx.stream("POST", url, json=body, timeout=5) as response:
        assert response.status_code == 200
        assert response.headers["content-type"].startswith("text/event-stream")
        for line in response.iter_lines():
            if line.startswith("data: "):
                data = line.removeprefix("data: ")
                events.append(data if data == "[DONE]" else json.loads(data))
            else:
                assert line == ""
    return events


def test_stream_events_look_like_a_provider(server: LLMServer) -> None:
    server.script(Reply(text="Paris [12].", chunk_size=3))
    events = sse_events(server, {"model": "m", "messages": MESSAGES, "stream": True})
    assert events[0]["object"] == "chat.completion.chunk"
    assert events[0]["choices"][0]["delta"] == {"role": "assistant", "content": ""}
    pieces = [e["choices"][0]["delta"]["content"] for e in events[1:5]]
    assert pieces == ["Par", "is ", "[12", "]."]  # the citation arrives split
    final, usage, done = events[5:]
    assert final["choices"][0] == {
        "index": 0,
        "delta": {},
        "logprobs": None,
        "finish_reason": "stop",
    }
    assert usage["choices"] == [] and usage["usage"]["total_tokens"] > 0
    assert done == "[DONE]"


def test_litellm_streams_scripted_text_and_requests_are_recorded(
    loop: asyncio.AbstractEventLoop, server: LLMServer
) -> None:
    server.script(Reply(text="Hello there, [1] and [12]!", chunk_size=2))
    deltas, error = collect(loop, server, temperature=0.1)
    assert error is None
    assert "".join(deltas) == "Hello there, [1] and [12]!"
    assert len([d for d in deltas if d]) == 13
    (request,) = server.requests
    assert request["model"] == "test"
    assert request["stream"] is True
    assert request["messages"] == MESSAGES
    assert request["temperature"] == 0.1


def test_script_queue_then_default(loop: asyncio.AbstractEventLoop, server: LLMServer) -> None:
    server.script("one", "two")
    assert "".join(collect(loop, server)[0]) == "one"
    assert "".join(collect(loop, server)[0]) == "two"
    assert "".join(collect(loop, server)[0]) == "No excerpts seen."  # default: echo
    assert len(server.requests) == 3


def test_non_streaming_completion(loop: asyncio.AbstractEventLoop, server: LLMServer) -> None:
    server.script("A whole answer [2].")
    response = loop.run_until_complete(
        litellm.acompletion(
            model="openai/test", api_base=server.url, api_key="x", messages=MESSAGES
        )
    )
    assert response.choices[0].message.content == "A whole answer [2]."
    assert response.usage.total_tokens > 0
    assert server.requests[0].get("stream") in (None, False)


def _hit(path: str, start: int, rank: int) -> Hit:
    chunk = Chunk(
        id=f"{path}:{start}",
        path=path,
        url=path.removesuffix(".md") + "/",
        anchor="",
        heading="",
        heading_path=(path,),
        level=1,
        text=f"text of {path} at {start}",
        start=start,
        end=start + 20,
        line_start=1,
        line_end=1,
        hash="h",
    )
    return Hit(chunk=chunk, score=1 / rank)


def test_echo_reports_the_excerpts_in_the_prompt_and_citations_renumber(
    loop: asyncio.AbstractEventLoop, server: LLMServer
) -> None:
    hits = [_hit("b.md", 0, 1), _hit("a.md", 0, 2), _hit("b.md", 50, 3)]
    prompt = build_messages("Q?", hits)
    server.script(Reply(echo=True, chunk_size=1))
    deltas, error = collect(loop, server, messages=prompt.messages)
    assert error is None
    assert "".join(deltas) == "Excerpts seen: [1] [2] [3]."
    assert server.requests[0]["messages"] == prompt.messages

    renumberer = CitationRenumberer(len(prompt.excerpts))
    shown = "".join(renumberer.feed(d) for d in deltas) + renumberer.finish()
    assert shown == "Excerpts seen: [1] [2] [3]."
    assert renumberer.order == {1: 1, 2: 2, 3: 3}


def test_http_500_raises(loop: asyncio.AbstractEventLoop, server: LLMServer) -> None:
    server.script(Reply(status=500, text="model exploded"))
    deltas, error = collect(loop, server)
    assert isinstance(error, litellm.InternalServerError)
    assert isinstance(error, openai.APIError)  # the one base class that covers every failure
    assert "model exploded" in str(error)
    assert deltas == []
    assert len(server.requests) == 1  # num_retries=0: no retry behind our back


def test_delay_before_first_byte_times_out(
    loop: asyncio.AbstractEventLoop, server: LLMServer
) -> None:
    server.script(Reply(delay=5))
    started = time.monotonic()
    deltas, error = collect(loop, server, timeout=0.3)
    assert isinstance(error, litellm.Timeout)
    assert isinstance(error, openai.APIError)
    assert time.monotonic() - started < 3
    assert deltas == []


def test_stall_mid_stream_times_out_after_partial_text(
    loop: asyncio.AbstractEventLoop, server: LLMServer
) -> None:
    server.script(Reply(text="First part. Second part.", chunk_size=6, stall_after=2, stall=5))
    started = time.monotonic()
    deltas, error = collect(loop, server, timeout=0.3)
    assert isinstance(error, litellm.Timeout)
    assert "".join(deltas) == "First part. "
    assert time.monotonic() - started < 3


def test_malformed_line_raises(loop: asyncio.AbstractEventLoop, server: LLMServer) -> None:
    server.script(Reply(text="abcdefgh", chunk_size=2, malformed_after=2))
    deltas, error = collect(loop, server)
    assert isinstance(error, openai.APIError)
    assert "".join(deltas) == "abcd"


def test_connection_closed_mid_answer_raises(
    loop: asyncio.AbstractEventLoop, server: LLMServer
) -> None:
    server.script(Reply(text="abcdefgh", chunk_size=2, close_after=3))
    deltas, error = collect(loop, server)
    assert isinstance(error, openai.APIError)
    assert "".join(deltas) == "abcdef"


def test_server_keeps_working_after_failures(
    loop: asyncio.AbstractEventLoop, server: LLMServer
) -> None:
    server.script(Reply(close_after=0), Reply(status=503), "fine")
    assert collect(loop, server)[1] is not None
    assert collect(loop, server)[1] is not None
    deltas, error = collect(loop, server)
    assert error is None and "".join(deltas) == "fine"


def test_stop_is_prompt_even_with_a_stalled_reply() -> None:
    server = LLMServer().start()
    server.script(Reply(stall_after=0, stall=30))
    with httpx.stream(
        "POST", server.url + "/chat/completions", json={"stream": True}, timeout=5
    ) as response:
        assert response.status_code == 200
        started = time.monotonic()
        server.stop()
        assert time.monotonic() - started < 2
