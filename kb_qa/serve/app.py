"""The HTTP API: Starlette routes over one KnowledgeBase, served by uvicorn.

    POST /api/ask      {question, history?, include?, exclude?, stream?}
                       -> Server-Sent Events (status, delta, citations, done | error),
                          or one JSON object with "stream": false / Accept: application/json
    GET  /api/search   ?q=&k=&include=&exclude=    ranked hits
    GET  /api/health   index status
    GET  /api/ready    200 when health is ok and the index is loaded, else 503 (readiness)
    GET  /api/sources  the indexed pages
    POST /api/feedback {question, answer, citations, rating: up|down, reason?, question_id?}
    GET  /insights     the insights report, only to "Authorization: Bearer <admin_token>"
                       or a browser signed in with it (kb_qa.serve.admin); ?format=json|csv
    GET  /insights/sign-in, POST /insights/sign-in, POST /insights/sign-out
    GET  /             the vault's pages with the chat widget (for vaults that are not sites)
    GET  /view/<path>  one indexed note rendered with its anchors (raw HTML shown as text)
    GET  /kb-qa/kb-qa.js, /kb-qa/kb-qa.css   the widget

Every API error is JSON, ``{"error": "..."}``. Paths in a request are only matched against
the index, so nothing outside the vault can be read. Document and model text leave the API
as JSON strings; the /view pages escape raw HTML and forbid any script but the widget.
"""

from __future__ import annotations

import dataclasses
import io
import json
import logging
import math
import re
import sqlite3
import threading
import time
from collections.abc import AsyncIterator, Callable, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass
from functools import partial
from typing import Any
from urllib.parse import quote

import anyio
import anyio.to_thread
from starlette.applications import Starlette
from starlette.convertors import PathConvertor, register_url_convertor
from starlette.exceptions import HTTPException
from starlette.middleware import Middleware
from starlette.middleware.cors import CORSMiddleware
from starlette.requests import ClientDisconnect, Request
from starlette.responses import (
    HTMLResponse,
    JSONResponse,
    PlainTextResponse,
    RedirectResponse,
    Response,
    StreamingResponse,
)
from starlette.routing import Route

from kb_qa.answer.answering import (
    Citations,
    Done,
    Error,
    Event,
    Status,
    answer,
    citation_json,
    warm_up,
)
from kb_qa.answer.prompt import Turn
from kb_qa.errors import ConfigError, KbQaError, VaultError
from kb_qa.ingest import vault
from kb_qa.ingest.anchors import match_text
from kb_qa.owners import feedback, insights, insights_render, questionlog
from kb_qa.serve import admin, inputs, pages
from kb_qa.serve.guard import Guard, RateLimiter, RequestCheck, bearer_matches
from kb_qa.settings import Settings
from kb_qa.types import Hit

__all__ = ["create_app", "hit_json"]

log = logging.getLogger(__name__)

SEARCH_THREADS = 4  # blocking searches at once; more only queue up on two cores
PAGE_THREADS = 2  # / and /view renders at once; more wait their turn
ERROR_STATUS = {"llm_timeout": 504, "llm_error": 502, "retrieval_error": 503, "internal": 500}


def hit_json(kb: Any, rank: int, hit: Hit) -> dict[str, Any]:
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


MAX_JSON_DEPTH = 32
_SURROGATE = re.compile("[\ud800-\udfff]")
_WHOLE_NUMBER = re.compile(r"[0-9]{1,6}")


def _reject(status: int, message: str) -> HTTPException:
    return HTTPException(status, message)


def _patterns(body: dict[str, Any], key: str) -> tuple[str, ...]:
    try:
        return inputs.patterns(body.get(key), key)
    except inputs.InputError as exc:
        raise _reject(exc.status, str(exc)) from None


def parse_ask(body: Any, settings: Settings) -> AskRequest:
    """Validate an ask body: 422 for a malformed one, 413 for one over the length limits."""
    if not isinstance(body, dict):
        raise _reject(422, 'The request body must be a JSON object like {"question": "..."}.')
    try:
        question = inputs.question(body.get("question"), settings)
    except inputs.InputError as exc:
        raise _reject(exc.status, str(exc)) from None
    history = body.get("history") or []
    if not isinstance(history, list):
        raise _reject(422, "history must be a list of {role, content} messages.")
    if len(history) > settings.max_history_messages:
        raise _reject(
            413,
            f"history has {len(history)} messages; the limit is "
            f"{settings.max_history_messages} (max_history_messages).",
        )
    turns = []
    for i, message in enumerate(history):
        ok = isinstance(message, dict) and isinstance(message.get("content"), str)
        if not ok or message.get("role") not in ("user", "assistant"):
            raise _reject(
                422,
                f"history[{i}] must be an object with role 'user' or 'assistant' and a string "
                "content.",
            )
        turns.append(Turn(message["role"], message["content"]))
    chars = sum(len(t.content) for t in turns)
    if chars > settings.max_history_chars:
        raise _reject(
            413,
            f"history holds {chars:,} characters; the limit is {settings.max_history_chars:,} "
            "(max_history_chars).",
        )
    stream = body.get("stream")
    if stream is not None and not isinstance(stream, bool):
        raise _reject(422, "stream must be true or false.")
    return AskRequest(
        question,
        tuple(turns),
        _patterns(body, "include"),
        _patterns(body, "exclude"),
        stream,
    )


async def read_json(request: Request, limit: int) -> Any:
    """The JSON body, refusing more than ``limit`` bytes without reading them all."""
    media = request.headers.get("content-type", "").split(";")[0].strip().lower()
    if media != "application/json":
        raise _reject(415, "Send the request as JSON, with Content-Type: application/json.")
    too_big = f"The request body is larger than {limit:,} bytes (max_body_bytes)."
    length = request.headers.get("content-length", "")
    if length.isdigit() and int(length) > limit:
        raise _reject(413, too_big)
    body = bytearray()
    try:
        async for chunk in request.stream():
            body += chunk
            if len(body) > limit:
                raise _reject(413, too_big)
    except ClientDisconnect:  # gone, or closed for sending its body too slowly (body_timeout)
        raise _reject(408, "The request body did not arrive in time.") from None
    try:
        value = json.loads(body)
    except RecursionError:
        raise _reject(400, f"The JSON is nested more than {MAX_JSON_DEPTH} levels deep.") from None
    except ValueError as exc:
        raise _reject(400, f"The request body is not valid JSON: {exc}.") from exc
    _check_json(value)
    return value


def _check_json(value: Any) -> None:
    """Refuse what parses but cannot be stored or searched: deep nesting, lone surrogates."""
    stack = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        if depth > MAX_JSON_DEPTH:
            raise _reject(400, f"The JSON is nested more than {MAX_JSON_DEPTH} levels deep.")
        if isinstance(item, str):
            if _SURROGATE.search(item):
                raise _reject(
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


def _wants_json(request: Request, ask: AskRequest) -> bool:
    if ask.stream is not None:
        return not ask.stream
    accept = request.headers.get("accept", "")
    return "application/json" in accept and "text/event-stream" not in accept


class Api:
    """The routes, bound to one knowledge base and its settings."""

    def __init__(self, kb: Any, settings: Settings, watcher: Any = None) -> None:
        self.kb = kb
        self.settings = settings
        self.watcher = watcher  # kb_qa.ingest.watch.Watcher under `kb-qa serve --watch`
        self.feedback_store = feedback.FeedbackStore(
            settings.index_path, settings.feedback_days, settings.feedback_max
        )
        self.question_log = (
            questionlog.QuestionLog(
                settings.index_path, settings.question_log_days, self._embed_questions
            )
            if settings.question_log
            else None
        )
        self.limiter: anyio.CapacityLimiter | None = None  # made in lifespan: needs a loop
        self.page_limiter: anyio.CapacityLimiter | None = None
        self.answering = 0  # answers in progress (health shows it; tests watch it)
        self.replica = bool(getattr(kb, "replica", False))  # kb_qa.serve.replica.Replica
        # Browsers signed in to /insights, and the sign-in attempts per client address.
        self.sessions = admin.Sessions(settings.admin_session_hours * 3600)
        self.sign_ins = RateLimiter(admin.SIGN_IN_PER_MINUTE, admin.SIGN_IN_BURST)

    @asynccontextmanager
    async def lifespan(self, app: Starlette) -> AsyncIterator[None]:
        """Thread limiter, and a warm start: the first question should not pay for loading."""
        self.limiter = anyio.CapacityLimiter(SEARCH_THREADS)
        self.page_limiter = anyio.CapacityLimiter(PAGE_THREADS)
        # Loads the embedding model and the keyword index.
        try:
            await anyio.to_thread.run_sync(self.kb.search, "warm up", 1)
        except KbQaError as exc:  # serve anyway: health says what is wrong, search says 503
            log.warning("starting without a working index: %s", exc)
        await warm_up(self.settings)
        mode = f"model {self.settings.model}" if self.settings.model else "extractive answers"
        what = (
            f"workspace {self.kb.workspace} from {self.settings.chroma_url} (read-only replica)"
            if self.replica
            else str(self.settings.vault)
        )
        log.info("serving %s (%s)", what, mode)
        try:
            await anyio.to_thread.run_sync(self.feedback_store.prune)
        except (OSError, sqlite3.Error) as exc:
            log.error("the feedback store cannot be opened: %s", exc)
        if self.question_log is not None:
            try:
                await anyio.to_thread.run_sync(self.question_log.prune)
            except (OSError, sqlite3.Error) as exc:
                log.error("the question log cannot be opened: %s", exc)
            self.question_log.start()  # prunes every hour from now on, questions or not
        try:
            yield
        finally:
            if self.question_log is not None:
                await anyio.to_thread.run_sync(self.question_log.close)

    def _embed_questions(self, texts: list[str]) -> tuple[str, Any]:
        # The index's model, already loaded for answering, at the time of the call.
        embedder = self.kb.embedder
        return embedder.name, embedder.embed_passages(texts)

    async def _thread(self, func: Any, *args: Any) -> Any:
        return await anyio.to_thread.run_sync(partial(func, *args), limiter=self.limiter)

    async def ask(self, request: Request) -> Response:
        """POST /api/ask"""
        ask = parse_ask(await read_json(request, self.settings.max_body_bytes), self.settings)
        events = answer(
            self.kb,
            ask.question,
            history=ask.history,
            include=ask.include,
            exclude=ask.exclude,
            settings=self.settings,
            limiter=self.limiter,
        )
        if self.question_log is not None:
            events = self._logged(events, ask, self.question_log)
        events = self._public_errors(events)
        if self._updating():
            events = _prefixed(
                Status("updating", "The index is updating; answering from what is indexed so far…"),
                events,
            )
        if _wants_json(request, ask):
            return await self._ask_json(request, events)
        headers = {"Cache-Control": "no-cache", "X-Accel-Buffering": "no"}
        return StreamingResponse(self._sse(events), media_type="text/event-stream", headers=headers)

    def public(self, message: str) -> str:
        """``message`` as anonymous clients may read it: without the internal address of the
        Chroma server or the index folder's path (the server log keeps them)."""
        s = self.settings
        places = []
        if s.chroma_url:
            url = s.chroma_url.rstrip("/")
            places += [(url, "the Chroma server"), (url.split("://", 1)[-1], "the Chroma server")]
        for folder in (s.index_path / "chroma", s.index_path):
            places.append((str(folder), "the index folder"))
        for secret, shown in places:
            for said in ("Chroma server at ", "index folder "):
                message = message.replace(said + secret, said.strip().removesuffix(" at"))
            message = message.replace(f" at {secret}", "").replace(f" ({secret})", "")
            message = message.replace(secret, shown)
        return message

    async def _public_errors(self, events: AsyncIterator[Event]) -> AsyncIterator[Event]:
        try:
            async for event in events:
                if isinstance(event, Error):
                    event = dataclasses.replace(event, message=self.public(event.message))
                yield event
        finally:
            await events.aclose()  # type: ignore[attr-defined]

    async def _logged(
        self, events: AsyncIterator[Event], ask: AskRequest, qlog: questionlog.QuestionLog
    ) -> AsyncIterator[Event]:
        """``events``, recording the question and its outcome in the question log."""
        started = time.perf_counter()
        ref = questionlog.new_ref()
        entry = questionlog.Entry(
            ref=ref,
            at=time.time(),
            question=ask.question,
            turn=1 + sum(1 for t in ask.history if t.role == "user"),
            mode="llm" if self.settings.model else "extractive",
            model=self.settings.model,
            error="disconnected",  # until the answer ends one way or the other
        )
        cited: tuple[questionlog.Cited, ...] = ()
        try:
            async for event in events:
                if isinstance(event, Citations):
                    cited = tuple(
                        questionlog.Cited(c.path, c.anchor, c.heading_path) for c in event.citations
                    )
                elif isinstance(event, Done):
                    event = dataclasses.replace(event, question_id=ref)
                    entry = dataclasses.replace(
                        entry,
                        covered=event.covered,
                        citations=cited,
                        retrieval_ms=event.timings.get("retrieval_ms"),
                        first_token_ms=event.timings.get("first_token_ms"),
                        total_ms=event.timings.get("total_ms"),
                        error="",
                    )
                elif isinstance(event, Error):
                    entry = dataclasses.replace(
                        entry, error=event.code, error_message=event.message
                    )
                yield event
        except Exception:
            entry = dataclasses.replace(entry, error="internal", error_message="unexpected error")
            raise
        finally:
            if entry.error:
                entry = dataclasses.replace(
                    entry, total_ms=round((time.perf_counter() - started) * 1000, 1)
                )
            qlog.record(entry)
            await events.aclose()  # type: ignore[attr-defined]

    async def _sse(self, events: AsyncIterator[Event]) -> AsyncIterator[str]:
        # Starlette cancels this generator when the client disconnects; closing ``events``
        # then closes the LLM stream, so no work continues for a reader who left.
        self.answering += 1
        try:
            async for event in events:
                yield sse_frame(event)
        except Exception:  # the edge of the stream: log it, tell the client
            log.exception("answering failed")
            yield sse_frame(
                Error("Answering failed unexpectedly; the server log has details.", "internal")
            )
        finally:
            await events.aclose()  # type: ignore[attr-defined]
            self.answering -= 1

    async def _ask_json(self, request: Request, events: AsyncIterator[Event]) -> Response:
        collected: list[Event] = []
        self.answering += 1
        try:
            async with anyio.create_task_group() as group:
                group.start_soon(_cancel_on_disconnect, request, group.cancel_scope)
                async for event in events:
                    collected.append(event)
                group.cancel_scope.cancel()
        finally:
            await events.aclose()  # type: ignore[attr-defined]
            self.answering -= 1
        text = "".join(e.text for e in collected if e.name == "delta")  # type: ignore[union-attr]
        last = collected[-1] if collected else Error("The client went away.", "internal")
        if isinstance(last, Error):
            return JSONResponse(
                # "answer": the same text under its old name, kept for a release.
                {"error": last.message, "code": last.code, "text": text, "answer": text},
                status_code=ERROR_STATUS.get(last.code, 500),
            )
        assert isinstance(last, Done)
        citations = next(e for e in collected if e.name == "citations")
        return JSONResponse(
            {
                "text": last.text,  # as the streamed `done` event names it
                "answer": last.text,  # its old name, kept as an alias for a release
                "citations": [citation_json(c) for c in citations.citations],  # type: ignore[union-attr]
                "model": last.model,
                "mode": last.mode,
                "covered": last.covered,
                "timings": last.timings,
                "counts": last.counts,
                "question_id": last.question_id,
            }
        )

    async def search(self, request: Request) -> Response:
        """GET /api/search?q=&k="""
        params = request.query_params
        if not params.get("q", "").strip():
            raise _reject(422, "q is required: the text to search for.")
        try:
            q = inputs.question(params["q"], self.settings, "q")
        except inputs.InputError as exc:
            raise _reject(exc.status, str(exc)) from None
        given = params.get("k", str(self.settings.top_k))
        if not _WHOLE_NUMBER.fullmatch(given):  # int() would take " 5 ", "1_0" and "٣"
            raise _reject(422, "k must be a whole number written with the digits 0-9.")
        try:
            k = inputs.count(int(given))
        except inputs.InputError as exc:
            raise _reject(exc.status, str(exc)) from None
        include = _patterns({"include": params.getlist("include")}, "include")
        exclude = _patterns({"exclude": params.getlist("exclude")}, "exclude")
        try:
            hits = await self._thread(self._search, q, k, include, exclude)
        except KbQaError as exc:
            return JSONResponse({"error": self.public(str(exc)), "code": "retrieval_error"}, 503)
        return JSONResponse({"query": q, "hits": hits})

    def _search(self, q: str, k: int, include: Sequence[str], exclude: Sequence[str]) -> list:
        hits = self.kb.search(q, k, include=include, exclude=exclude)
        return [hit_json(self.kb, n, h) for n, h in enumerate(hits, 1)]

    async def _status(self) -> dict[str, Any]:
        stats = await self._thread(self.kb.stats)
        problem = await self._thread(self.kb.problem)
        freshness = self.watcher.freshness() if self.watcher else None
        if freshness is not None and freshness.error and not problem:
            # The index serves what it had, but edits are not reaching it.
            problem = f"the last index run failed (retrying): {freshness.error}"
        status = "degraded" if problem else "ok" if stats["chunks"] else "empty"
        return {
            "status": status,
            "problem": self.public(problem) or None,
            "files": stats["files"],
            "chunks": stats["chunks"],
            "embed_model": stats["embed_model"],
            "last_indexed": stats["last_indexed"],
            "workspace": stats["workspace"],
            "generation": stats["generation"],
            "loaded": stats["loaded"],
            "load_seconds": stats.get("load_seconds"),  # a replica's last load from Chroma
            "replica": self.replica,
            "model": self.settings.model,
            "mode": "llm" if self.settings.model else "extractive",
            "answering": self.answering,
            "freshness": freshness.as_dict() if freshness is not None else None,
        }

    async def health(self, request: Request) -> Response:
        """GET /api/health"""
        return JSONResponse(await self._status())

    async def ready(self, request: Request) -> Response:
        """GET /api/ready: for a load balancer's readiness check (health ok, index loaded)."""
        status = await self._status()
        ready = status["status"] == "ok" and status["loaded"]
        body = {"ready": ready, **{k: status[k] for k in ("status", "problem", "generation")}}
        return JSONResponse(body, status_code=200 if ready else 503)

    def _updating(self) -> bool:
        if self.watcher is None:
            return False
        fresh = self.watcher.freshness()
        return fresh.indexing or fresh.queue > 0

    async def feedback(self, request: Request) -> Response:
        """POST /api/feedback: a reader's thumbs up/down, stored for `kb-qa feedback`."""
        body = await read_json(request, self.settings.max_body_bytes)
        try:
            item = feedback.parse(body, self.settings.max_question_chars)
        except feedback.TooLarge as exc:
            raise _reject(413, str(exc)) from None
        except ValueError as exc:
            raise _reject(422, str(exc)) from None
        try:
            await self._thread(self._store_feedback, item)
        except (OSError, sqlite3.Error) as exc:  # a full disk, a read-only folder
            log.error("could not store feedback: %s", exc)
            return JSONResponse(
                {"error": "Feedback cannot be stored right now; the server log says why."}, 503
            )
        return JSONResponse({"ok": True}, status_code=201)

    def _store_feedback(self, item: feedback.Feedback) -> None:
        # Linked to the logged question it rates, so the report can join the two.
        qlog = self.question_log
        ref = qlog.match(item.question, item.question_id, item.at) if qlog is not None else ""
        self.feedback_store.add(dataclasses.replace(item, question_id=ref))

    def _admin_token(self) -> str:
        token = self.settings.admin_token
        if not token:  # the same 404 as any unknown path: nothing says a report exists
            raise _reject(404, "Not Found")
        return token

    def _session(self, request: Request) -> str:
        """The request's live session id, or ""."""
        session = request.cookies.get(admin.COOKIE, "")
        return session if self.sessions.valid(session) else ""

    async def insights(self, request: Request) -> Response:
        """GET /insights?since=7d: the insights report, for the admin token only."""
        token = self._admin_token()
        bearer = bearer_matches(request.scope["headers"], token.encode())
        session = "" if bearer else self._session(request)
        given = request.query_params.get("since", "")
        if not (bearer or session):
            browser = "text/html" in request.headers.get("accept", "")
            if browser and "authorization" not in request.headers:
                where = "insights/sign-in" + (f"?since={quote(given)}" if given else "")
                return RedirectResponse(where, 303, headers=_ADMIN_HEADERS)
            raise HTTPException(
                401,
                "The insights report needs the admin token: send 'Authorization: Bearer "
                "<admin_token>', or sign in at /insights/sign-in.",
                headers={"WWW-Authenticate": "Bearer"},
            )
        try:
            since = insights.parse_since(given, time.time()) if given else None
        except ConfigError as exc:
            raise _reject(422, str(exc).replace("--since", "since")) from None
        wanted = request.query_params.get("format", "")
        if wanted == "csv":
            rows = await anyio.to_thread.run_sync(
                partial(self._top_questions, since), limiter=self.page_limiter
            )
            buffer = io.StringIO()
            insights.write_questions_csv(rows, buffer)
            disposition = 'attachment; filename="kb-qa-top-questions.csv"'
            return Response(
                buffer.getvalue(),
                media_type="text/csv; charset=utf-8",
                headers={**_ADMIN_HEADERS, "Content-Disposition": disposition},
            )
        report = await anyio.to_thread.run_sync(
            partial(self._report, since), limiter=self.page_limiter
        )
        headers = dict(_ADMIN_HEADERS)
        accept = request.headers.get("accept", "")
        if wanted == "json" or accept.startswith("application/json"):
            return JSONResponse(report, headers=headers)
        sign_out = "insights/sign-out" if session else ""
        csv_href = "insights?" + "&".join(
            [*([f"since={quote(given)}"] if given else []), "format=csv"]
        )
        headers["Content-Security-Policy"] = (
            insights_render.csp(forms=bool(sign_out)) + "; frame-ancestors 'none'"
        )
        return HTMLResponse(insights_render.page(report, sign_out, csv_href), headers=headers)

    def _report(self, since: float | None) -> dict[str, Any]:
        if self.question_log is not None:
            self.question_log.flush()
        return insights.build(self.kb, self.settings, since, self.question_log)

    def _top_questions(self, since: float | None) -> dict[str, Any]:
        if self.question_log is not None:
            self.question_log.flush()
        return insights.top_questions(self.kb, self.settings, since, self.question_log)

    def _sign_in_form(self, status: int, problem: str = "", since: str = "") -> HTMLResponse:
        text = admin.sign_in_page(self.settings.vault.name, problem, since)
        headers = {**_ADMIN_HEADERS, "Content-Security-Policy": admin.page_csp()}
        return HTMLResponse(text, status, headers=headers)

    async def sign_in_form(self, request: Request) -> Response:
        """GET /insights/sign-in: the form (the report, when already signed in)."""
        self._admin_token()
        since = request.query_params.get("since", "")
        if self._session(request):
            return RedirectResponse("../insights", 303, headers=_ADMIN_HEADERS)
        return self._sign_in_form(200, since=since)

    async def sign_in(self, request: Request) -> Response:
        """POST /insights/sign-in: the admin token from the form; a session cookie."""
        token = self._admin_token()
        if not admin.same_origin(request):
            return _cross_site()
        client = (request.scope.get("client") or ("unknown", 0))[0]
        wait = self.sign_ins.take(client)
        if wait > 0:
            seconds = max(1, math.ceil(wait))
            response = self._sign_in_form(
                429, f"Too many sign-in attempts; try again in {seconds} s."
            )
            response.headers["Retry-After"] = str(seconds)
            return response
        form = await admin.read_form(request)
        if form is None:
            return self._sign_in_form(400, "The form could not be read; try again.")
        since = form.get("since", "")
        if not admin.token_matches(form.get("token", ""), token):
            log.warning("insights: a sign-in with a wrong admin token from %s", client)
            return self._sign_in_form(401, "That is not the admin token.", since)
        try:
            keep = bool(since) and insights.parse_since(since, time.time()) is not None
        except ConfigError:
            keep = False
        where = "../insights" + (f"?since={quote(since)}" if keep else "")
        response = RedirectResponse(where, 303, headers=_ADMIN_HEADERS)
        response.set_cookie(
            admin.COOKIE,
            self.sessions.new(),
            max_age=max(1, int(self.settings.admin_session_hours * 3600)),
            **_cookie_scope(request),
        )
        return response

    async def sign_out(self, request: Request) -> Response:
        """POST /insights/sign-out: ends the session here, so its cookie opens nothing."""
        self._admin_token()
        if not admin.same_origin(request):
            return _cross_site()
        self.sessions.end(request.cookies.get(admin.COOKIE, ""))
        response = RedirectResponse("sign-in", 303, headers=_ADMIN_HEADERS)
        response.delete_cookie(admin.COOKIE, **_cookie_scope(request))
        return response

    async def home(self, request: Request) -> Response:
        """GET /: the vault's pages, with the chat widget."""
        self._pages_allowed()
        pages_ = await self._thread(self.kb.pages)
        text = pages.index_page(self.settings.vault.name, pages_)
        return HTMLResponse(text, headers={"Content-Security-Policy": pages.CSP})

    async def view(self, request: Request) -> Response:
        """GET /view/<path or page URL>: one indexed note, rendered with its anchors."""
        self._pages_allowed()
        wanted = request.path_params["path"]
        gone = threading.Event()
        # Pages get threads of their own, so a huge note cannot starve the API; a render
        # whose reader has left is dropped while it waits and stopped between its stages.
        rendered = await _unless_disconnected(
            request, gone, partial(self._render, wanted, gone.is_set), self.page_limiter
        )
        if gone.is_set():
            return Response(status_code=499)  # nobody reads it
        if rendered is None:
            raise _reject(404, f"{wanted!r} is not an indexed page of this vault.")
        return HTMLResponse(rendered, headers={"Content-Security-Policy": pages.CSP})

    def _pages_allowed(self) -> None:
        # A browser cannot send the bearer token with a page load, so a private
        # deployment does not show notes as pages at all.
        if self.settings.api_token:
            raise _reject(404, "Pages are off when api_token is set; use the API.")
        if self.replica:
            raise _reject(404, "A read-only replica has no vault to show pages from; use the API.")

    def _render(self, wanted: str, gone: Callable[[], bool] = lambda: False) -> str | None:
        # Only paths the index knows are served; the file is then read from inside the vault.
        if gone():
            return None
        indexed = self.kb.pages()
        known = {p["path"]: p["path"] for p in indexed}
        known.update({p["url"]: p["path"] for p in indexed if p["url"]})
        path = known.get(wanted) or known.get(wanted.rstrip("/") + "/")
        if path is None:
            return None
        try:
            data = vault.Boundary.of(self.settings).read_bytes(self.settings.vault / path)
        except VaultError:
            return None
        source = data.decode("utf-8", errors="replace")
        if gone():
            return None
        chunks = self.kb.store.chunks(path)
        # Wikilinks name a note by file name, or by its path without ".md".
        notes = {}
        for p in indexed:
            notes.setdefault(p["path"].rsplit("/", 1)[-1].removesuffix(".md").lower(), p["path"])
            notes[p["path"].removesuffix(".md").lower()] = p["path"]
        # A wikilink's #heading opens the anchor the index gave that heading (``_3`` for a
        # heading MkDocs' slugify empties), not a slug made here.
        headings = {
            (c.path, match_text(c.heading)): c.anchor
            for c in reversed(self.kb.store.chunks())
            if c.piece == 0 and c.level > 0
        }
        return pages.view_page(
            path, source, chunks, notes, headings, gone, self.settings.parse_timeout
        )

    async def asset(self, request: Request) -> Response:
        """GET /kb-qa/kb-qa.js and kb-qa.css: the widget."""
        from kb_qa_widget import ASSETS, FILES

        name = request.path_params["name"]
        if name not in FILES:
            raise _reject(404, "No such file.")
        media = "text/javascript" if name.endswith(".js") else "text/css"
        return Response((ASSETS / name).read_bytes(), media_type=media)

    async def sources(self, request: Request) -> Response:
        """GET /api/sources"""
        pages = await self._thread(self.kb.pages)
        return JSONResponse({"pages": pages})


# same-origin, not no-referrer: with no-referrer a browser sends "Origin: null" with the
# sign-out form, which the CSRF check refuses; other sites still get no referrer at all.
_ADMIN_HEADERS = {"Cache-Control": "no-store", "Referrer-Policy": "same-origin"}


def _cookie_scope(request: Request) -> dict[str, Any]:
    """The admin cookie's attributes, the same when it is set and when it is cleared:
    /insights only, HttpOnly, SameSite=Strict, Secure over HTTPS."""
    return {
        "path": str(request.scope.get("root_path", "")).rstrip("/") + "/insights",
        "secure": request.url.scheme == "https",
        "httponly": True,
        "samesite": "strict",
    }


def _cross_site() -> Response:
    """The answer to a sign-in or sign-out POST that did not come from this server's page."""
    return PlainTextResponse(
        "Refused: this form only accepts posts from this server's own sign-in page.",
        403,
        headers=_ADMIN_HEADERS,
    )


async def _prefixed(first: Event, rest: AsyncIterator[Event]) -> AsyncIterator[Event]:
    """``first``, then everything ``rest`` yields (closing ``rest`` when closed)."""
    try:
        yield first
        async for event in rest:
            yield event
    finally:
        await rest.aclose()  # type: ignore[attr-defined]


async def _unless_disconnected(
    request: Request, gone: threading.Event, work: Callable[[], Any], limiter: Any
) -> Any:
    """``work()`` in a worker thread, unless the client disconnects first: then ``gone`` is
    set (``work`` checks it between its stages) and a wait for a thread is cancelled."""
    result = None
    async with anyio.create_task_group() as group:

        async def watch() -> None:
            await _disconnected(request)
            gone.set()
            group.cancel_scope.cancel()

        group.start_soon(watch)
        result = await anyio.to_thread.run_sync(work, limiter=limiter)
        group.cancel_scope.cancel()
    return result


async def _disconnected(request: Request) -> None:
    while (await request.receive())["type"] != "http.disconnect":
        pass


async def _cancel_on_disconnect(request: Request, scope: anyio.CancelScope) -> None:
    while True:
        message = await request.receive()
        if message["type"] == "http.disconnect":
            scope.cancel()
            return


async def _http_error(request: Request, exc: Exception) -> Response:
    assert isinstance(exc, HTTPException)
    return JSONResponse({"error": exc.detail}, status_code=exc.status_code, headers=exc.headers)


async def _server_error(request: Request, exc: Exception) -> Response:
    log.error("request failed: %s %s", request.method, request.url.path, exc_info=exc)
    return JSONResponse({"error": "Internal server error; the server log has details."}, 500)


# Never offered to other origins
PRIVATE_PATHS = frozenset({"/insights", "/insights/sign-in", "/insights/sign-out"})


class CorsExcept:
    """Starlette's CORS for every path but ``private`` ones, which get no CORS headers at
    all: a browser on another origin can neither preflight them nor read their answers."""

    def __init__(self, app: Any, private: frozenset[str], **options: Any) -> None:
        self.app = app
        self.cors = CORSMiddleware(app, **options)
        self.private = private

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] == "http" and scope.get("path") in self.private:
            await self.app(scope, receive, send)
        else:
            await self.cors(scope, receive, send)


class _AnyPath(PathConvertor):
    """Starlette's ``path`` with newlines too (``.*`` stops at one): file names may hold them."""

    regex = "[\\s\\S]*"


register_url_convertor("anypath", _AnyPath())


def create_app(kb: Any, settings: Settings | None = None, watcher: Any = None) -> Starlette:
    """The API over ``kb`` (a KnowledgeBase); ``settings`` default to the knowledge base's.

    With a ``watcher`` (kb_qa.ingest.watch.Watcher), health reports index freshness and answers
    asked during a re-index say so first.
    """
    settings = settings or kb.settings
    api = Api(kb, settings, watcher)
    origins = list(settings.cors_origins)
    rate = RateLimiter(settings.rate_limit, settings.rate_burst) if settings.rate_limit else None
    app = Starlette(
        routes=[
            Route("/api/ask", api.ask, methods=["POST"]),
            Route("/api/search", api.search, methods=["GET"]),
            Route("/api/health", api.health, methods=["GET"]),
            Route("/api/ready", api.ready, methods=["GET"]),
            Route("/api/sources", api.sources, methods=["GET"]),
            Route("/api/feedback", api.feedback, methods=["POST"]),
            Route("/insights", api.insights, methods=["GET"]),
            Route("/insights/sign-in", api.sign_in_form, methods=["GET"]),
            Route("/insights/sign-in", api.sign_in, methods=["POST"]),
            Route("/insights/sign-out", api.sign_out, methods=["POST"]),
            Route("/", api.home, methods=["GET"]),
            Route("/view/{path:anypath}", api.view, methods=["GET"]),
            Route("/kb-qa/{name}", api.asset, methods=["GET"]),
        ],
        middleware=[
            # First of all: a request with a foreign Host (DNS rebinding) or too many
            # header lines gets no further, not even to a CORS preflight.
            Middleware(
                RequestCheck,
                allowed_hosts=settings.allowed_hosts,
                max_headers=settings.max_headers,
            ),
            # Then, so preflights are answered before the token check and 401/429
            # responses still carry CORS headers a browser needs to read them.
            Middleware(
                CorsExcept,
                private=PRIVATE_PATHS,
                allow_origins=["*"] if "*" in origins else origins,
                allow_methods=["GET", "POST"],
                allow_headers=["Authorization", "Content-Type"],
                max_age=600,
            ),
            Middleware(Guard, token=settings.api_token, rate=rate),
        ],
        exception_handlers={HTTPException: _http_error, Exception: _server_error},
        lifespan=api.lifespan,
    )
    app.state.api = api
    return app
