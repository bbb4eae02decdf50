"""What the HTTP API reads and writes: the ask request, JSON bodies, hits, SSE frames.

A request body is read with a size limit and checked (depth, lone surrogates) before any
field is looked at; ``parse_ask`` applies the rules every entry point shares
(``kb_qa.serve.inputs``). The helpers at the end tie work to the connection: a reader who
leaves cancels what was being done for them.
"""

from __future__ import annotations

import gzip
import json
import re
import threading
from collections.abc import AsyncGenerator, Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import anyio
import anyio.to_thread
from starlette.exceptions import HTTPException
from starlette.requests import ClientDisconnect, Request
from starlette.responses import Response

from kb_qa.answer.answering import Event
from kb_qa.answer.prompt import Turn
from kb_qa.serve import inputs
from kb_qa.settings import Settings
from kb_qa.text import SURROGATE
from kb_qa.types import Hit

if TYPE_CHECKING:
    from kb_qa.kb.knowledge_base import KnowledgeBase

ERROR_STATUS = {"llm_timeout": 504, "llm_error": 502, "retrieval_error": 503, "internal": 500}


def hit_json(kb: KnowledgeBase, rank: int, hit: Hit) -> dict[str, Any]:
    """A search hit as JSON (the API and ``kb-qa search --json`` share this shape)."""
    c = hit.chunk
    return {
        "rank": rank,
        "score": round(hit.score, 6),
        "path": c.path,
        "anchor": c.anchor,
        "url": kb.url(c),
        "heading": c.heading,
        "heading_path": list(c.heading_path),
        "line_start": c.line_start,
        "line_end": c.line_end,
        "start": c.start,
        "end": c.end,
        "text": c.text,
        "vector_rank": hit.vector_rank,
        "keyword_rank": hit.keyword_rank,
    }


@dataclass(frozen=True)
class AskRequest:
    """A validated ``POST /api/ask`` body."""

    question: str
    history: tuple[Turn, ...] = ()
    include: tuple[str, ...] = ()
    exclude: tuple[str, ...] = ()
    stream: bool | None = None
    lang: str = ""  # the reader's language (their page's <html lang>)


MAX_JSON_DEPTH = 32
MAX_LANG_CHARS = 35  # the longest language tag a page names ("zh-Hant-TW", with room)
WHOLE_NUMBER = re.compile(r"[0-9]+")


def reject(status: int, message: str) -> HTTPException:
    return HTTPException(status, message)


def patterns(body: dict[str, Any], key: str) -> tuple[str, ...]:
    try:
        return inputs.patterns(body.get(key), key)
    except inputs.InputError as exc:
        raise reject(exc.status, str(exc)) from None


def parse_ask(body: Any, settings: Settings) -> AskRequest:
    """Validate an ask body: 422 for a malformed one, 413 for one over the length limits."""
    if not isinstance(body, dict):
        raise reject(422, 'The request body must be a JSON object like {"question": "..."}.')
    try:
        question = inputs.question(body.get("question"), settings)
    except inputs.InputError as exc:
        raise reject(exc.status, str(exc)) from None
    history = body.get("history") or []
    if not isinstance(history, list):
        raise reject(422, "history must be a list of {role, content} messages.")
    if len(history) > settings.max_history_messages:
        raise reject(
            413,
            f"history has {len(history)} messages; the limit is "
            f"{settings.max_history_messages} (max_history_messages).",
        )
    turns = []
    for i, message in enumerate(history):
        ok = isinstance(message, dict) and isinstance(message.get("content"), str)
        if not ok or message.get("role") not in ("user", "assistant"):
            raise reject(
                422,
                f"history[{i}] must be an object with role 'user' or 'assistant' and a string "
                "content.",
            )
        turns.append(Turn(message["role"], message["content"]))
    chars = sum(len(t.content) for t in turns)
    if chars > settings.max_history_chars:
        raise reject(
            413,
            f"history holds {chars:,} characters; the limit is {settings.max_history_chars:,} "
            "(max_history_chars).",
        )
    stream = body.get("stream")
    if stream is not None and not isinstance(stream, bool):
        raise reject(422, "stream must be true or false.")
    return AskRequest(
        question,
        tuple(turns),
        patterns(body, "include"),
        patterns(body, "exclude"),
        stream,
        language(body.get("lang")),
    )


def language(given: Any) -> str:
    """The reader's language tag as sent ("" when none): a string of at most
    :data:`MAX_LANG_CHARS` (one the site has no pages in is used for nothing)."""
    if given is None:
        return ""
    if not isinstance(given, str) or len(given) > MAX_LANG_CHARS:
        raise reject(
            422,
            f'lang must be a language tag such as "fr" or "pt-BR" (at most '
            f"{MAX_LANG_CHARS} characters).",
        )
    return given.strip()


async def read_json(request: Request, limit: int) -> Any:
    """The JSON body, refusing more than ``limit`` bytes without reading them all."""
    media = request.headers.get("content-type", "").split(";")[0].strip().lower()
    if media != "application/json":
        raise reject(415, "Send the request as JSON, with Content-Type: application/json.")
    too_big = f"The request body is larger than {limit:,} bytes (max_body_bytes)."
    length = request.headers.get("content-length", "")
    if length.isdigit() and int(length) > limit:
        raise reject(413, too_big)
    body = bytearray()
    try:
        async for chunk in request.stream():
            body += chunk
            if len(body) > limit:
                raise reject(413, too_big)
    except ClientDisconnect:  # gone, or closed for sending its body too slowly (body_timeout)
        raise reject(408, "The request body did not arrive in time.") from None
    try:
        value = json.loads(body)
    except RecursionError:
        raise reject(400, f"The JSON is nested more than {MAX_JSON_DEPTH} levels deep.") from None
    except ValueError as exc:
        raise reject(400, f"The request body is not valid JSON: {exc}.") from exc
    _check_json(value)
    return value


def _check_json(value: Any) -> None:
    """Refuse what parses but cannot be stored or searched: deep nesting, lone surrogates."""
    stack = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        if depth > MAX_JSON_DEPTH:
            raise reject(400, f"The JSON is nested more than {MAX_JSON_DEPTH} levels deep.")
        if isinstance(item, str):
            if SURROGATE.search(item):
                raise reject(
                    400, "The request contains an invalid Unicode character (a lone surrogate)."
                )
        elif isinstance(item, dict):
            stack += [(k, depth + 1) for k in item] + [(v, depth + 1) for v in item.values()]
        elif isinstance(item, list):
            stack += [(v, depth + 1) for v in item]


def sse_frame(event: Event) -> str:
    """One Server-Sent Event: ``event:`` name and one-line JSON ``data:``."""
    data = json.dumps(event.data(), ensure_ascii=False)
    # JSON leaves these unescaped, and some line splitters treat them as line breaks.
    data = data.replace("\u2028", "\\u2028").replace("\u2029", "\\u2029").replace("\x85", "\\u0085")
    return f"event: {event.name}\ndata: {data}\n\n"


def wants_json(request: Request, ask: AskRequest) -> bool:
    if ask.stream is not None:
        return not ask.stream
    accept = request.headers.get("accept", "")
    return "application/json" in accept and "text/event-stream" not in accept


async def prefixed(first: Event, rest: AsyncGenerator[Event, None]) -> AsyncGenerator[Event, None]:
    """``first``, then everything ``rest`` yields (closing ``rest`` when closed)."""
    try:
        yield first
        async for event in rest:
            yield event
    finally:
        await rest.aclose()


async def unless_disconnected(
    request: Request, gone: threading.Event, work: Callable[[], Any], limiter: Any
) -> Any:
    """``work()`` in a worker thread, unless the client disconnects first: then ``gone`` is
    set (``work`` checks it between its stages) and a wait for a thread is cancelled."""
    result = None
    async with anyio.create_task_group() as group:

        async def watch() -> None:
            await disconnected(request)
            gone.set()
            group.cancel_scope.cancel()

        group.start_soon(watch)
        result = await anyio.to_thread.run_sync(work, limiter=limiter)
        group.cancel_scope.cancel()
    return result


async def disconnected(request: Request) -> None:
    while (await request.receive())["type"] != "http.disconnect":
        pass


async def cancel_on_disconnect(request: Request, scope: anyio.CancelScope) -> None:
    while True:
        message = await request.receive()
        if message["type"] == "http.disconnect":
            scope.cancel()
            return


def compressed(request: Request, body: bytes, media_type: str, headers: dict[str, str]) -> Response:
    """``body`` gzipped when the client takes gzip and it is worth it: the list of a 20,000-note
    vault's pages is 3.7 MB of HTML, about a tenth of that gzipped."""
    headers = {**headers, "Vary": "Accept-Encoding"}
    if len(body) >= 1024 and "gzip" in request.headers.get("accept-encoding", ""):
        body = gzip.compress(body, compresslevel=5)
        headers["Content-Encoding"] = "gzip"
    return Response(body, media_type=media_type, headers=headers)
