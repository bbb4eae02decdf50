"""POST /api/ask: an answer as Server-Sent Events, or as one JSON object.

The answer's events are logged in the question log (when it is on), its ``done`` event
carries the signed id a rating of it sends back (``kb_qa.owners.answer_ids``), errors are
told to clients without internal addresses, and the stream is cancelled when the reader
leaves.
"""

from __future__ import annotations

import dataclasses
import logging
import re
import time
from collections.abc import AsyncGenerator
from typing import TYPE_CHECKING, Any

import anyio
import anyio.to_thread
from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse

from kb_qa.answer.answering import Citations, Done, Error, Event, Status, answer, citation_json
from kb_qa.answer.events import Delta
from kb_qa.answer.wording import say
from kb_qa.owners import feedback, questionlog
from kb_qa.serve import inputs
from kb_qa.serve.protocol import (
    ERROR_STATUS,
    AskRequest,
    cancel_on_disconnect,
    parse_ask,
    prefixed,
    read_json,
    reject,
    sse_frame,
    wants_json,
)
from kb_qa.serve.stopping import pinged

if TYPE_CHECKING:
    from kb_qa.kb.knowledge_base import KnowledgeBase
    from kb_qa.owners.answer_ids import AnswerIds
    from kb_qa.serve.stopping import Stopping
    from kb_qa.settings import Settings

log = logging.getLogger(__name__)
# What the question log says of an answer that quoted the sources because the model failed
FELL_BACK = "(It failed before it wrote anything: the reader was answered with quotes.)"


class AskRoutes:
    """The answer route of ``kb_qa.serve.app.Api`` (its knowledge base, settings, limiter)."""

    # Set by Api.__init__
    kb: KnowledgeBase
    settings: Settings
    answer_ids: AnswerIds
    question_log: questionlog.QuestionLog | None
    stopping: Stopping
    limiter: anyio.CapacityLimiter | None
    answering: int

    if TYPE_CHECKING:  # Api's and IndexRoutes'

        async def _thread(self, func: Any, *args: Any) -> Any: ...
        def still_indexing(self) -> Response | None: ...
        def _updating(self) -> bool: ...

    async def ask(self, request: Request) -> Response:
        """POST /api/ask"""
        ask = parse_ask(await read_json(request, self.settings.max_body_bytes), self.settings)
        if (waiting := self.still_indexing()) is not None:
            return waiting
        if ask.include or ask.exclude:  # a filter that leaves no page: not "not covered"
            try:
                await self._thread(inputs.check_filters, self.kb, ask.include, ask.exclude)
            except inputs.InputError as exc:
                raise reject(exc.status, str(exc)) from None
        events = answer(
            self.kb,
            ask.question,
            history=ask.history,
            include=ask.include,
            exclude=ask.exclude,
            settings=self.settings,
            limiter=self.limiter,
            lang=ask.lang,
            quote_on_failure=True,  # a reader gets the sources' words when the model fails
        )
        events = self.stopping.cut(events)  # a server stopping ends it in time, with a word
        if self.question_log is not None:
            events = self._logged(events, ask, self.question_log)
        events = self._public_errors(self._signed(events, ask.question))
        if self._updating():
            events = prefixed(
                Status("updating", say(ask.lang, "updating")),
                events,
            )
        if wants_json(request, ask):
            return await self._ask_json(request, events)
        headers = {"Cache-Control": "no-cache", "X-Accel-Buffering": "no"}
        return StreamingResponse(self._sse(events), media_type="text/event-stream", headers=headers)

    def public(self, message: str) -> str:
        """``message`` as anonymous clients may read it: without the internal address of the
        Chroma server, the index folder's or the vault's path (the server log keeps them)."""
        s = self.settings
        places = []
        if s.chroma_url:
            url = s.chroma_url.rstrip("/")
            places += [(url, "the Chroma server"), (url.split("://", 1)[-1], "the Chroma server")]
        for folder in (s.index_path / "chroma", s.index_path):
            places.append((str(folder), "the index folder"))
        places.append((str(s.vault), "the vault folder"))  # after the index folder inside it
        for secret, shown in places:
            # The whole path only: "/srv/docs" is not the start of "/srv/docs-index".
            path = re.escape(secret) + r"(?![\w-]|\.\w)"
            # A command to run keeps its shape: "--chroma-url URL", not "--chroma-url the …".
            message = re.sub(f"--chroma-url {path}", "--chroma-url URL", message)
            named = f"(?i:(Chroma server) at {path}|(index folder|vault folder) {path})"
            message = re.sub(named, lambda m: m.group(1) or m.group(2), message)
            message = re.sub(f" at {path}| \\({path}\\)", "", message)
            message = re.sub(path, shown, message)
        return message

    async def _public_errors(
        self, events: AsyncGenerator[Event, None]
    ) -> AsyncGenerator[Event, None]:
        try:
            async for event in events:
                if isinstance(event, Error):
                    event = dataclasses.replace(event, message=self.public(event.message))
                yield event
        finally:
            await events.aclose()

    async def _signed(
        self, events: AsyncGenerator[Event, None], question: str
    ) -> AsyncGenerator[Event, None]:
        """``events``, the ``done`` one with the answer id that rates it: of this question,
        this answer's text and these citations (``feedback.answer_digest``)."""
        cited: list[dict[str, Any]] = []
        deltas: list[str] = []
        try:
            async for event in events:
                if isinstance(event, Citations):
                    cited = [citation_json(c) for c in event.citations]
                elif isinstance(event, Delta):
                    deltas.append(event.text)
                elif isinstance(event, Done) and self.settings.ratings:
                    ids = self.answer_ids
                    await anyio.to_thread.run_sync(ids.key)  # read or made once, off the loop
                    ref = event.question_id or questionlog.new_ref()
                    said = feedback.answer_digest(event.text or "".join(deltas), cited)
                    event = dataclasses.replace(event, answer_id=ids.issue(ref, question, said))
                yield event
        finally:
            await events.aclose()

    async def _logged(
        self, events: AsyncGenerator[Event, None], ask: AskRequest, qlog: questionlog.QuestionLog
    ) -> AsyncGenerator[Event, None]:
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
                        # A model that failed shows in the owner's report even when the
                        # reader was answered with quotes
                        error=event.fallback,
                        error_message=f"{event.fallback_message} {FELL_BACK}"
                        if event.fallback
                        else "",
                        mode=event.mode,  # quotes, when the model failed
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
            await events.aclose()

    async def _sse(self, events: AsyncGenerator[Event, None]) -> AsyncGenerator[str, None]:
        # Starlette cancels this generator when the client disconnects; closing ``events``
        # then closes the LLM stream, so no work continues for a reader who left.
        self.answering += 1
        try:
            async for event in pinged(events):  # a comment while a model thinks
                yield ": ping\n\n" if event is None else sse_frame(event)
        except Exception:  # the edge of the stream: log it, tell the client
            log.exception("answering failed")
            yield sse_frame(
                Error("Answering failed unexpectedly; the server log has details.", "internal")
            )
        finally:
            await events.aclose()
            self.answering -= 1

    async def _ask_json(self, request: Request, events: AsyncGenerator[Event, None]) -> Response:
        collected: list[Event] = []
        self.answering += 1
        try:
            async with anyio.create_task_group() as group:
                group.start_soon(cancel_on_disconnect, request, group.cancel_scope)
                async for event in events:
                    collected.append(event)
                group.cancel_scope.cancel()
        finally:
            await events.aclose()
            self.answering -= 1
        text = "".join(e.text for e in collected if e.name == "delta")  # type: ignore[union-attr]
        last = collected[-1] if collected else Error("The client went away.", "internal")
        # What the [n] markers of the text (a partial one too) point at, as streamed.
        cited = [
            citation_json(c)
            for e in collected
            if e.name == "citations"
            for c in e.citations  # type: ignore[union-attr]
        ]
        if isinstance(last, Error):
            return JSONResponse(
                # "answer": the same text under its old name, kept for a release.
                {
                    "error": last.message,
                    "code": last.code,
                    "text": text,
                    "answer": text,
                    "citations": cited,
                },
                status_code=ERROR_STATUS.get(last.code, 500),
            )
        assert isinstance(last, Done)
        return JSONResponse(
            {
                "text": last.text,  # as the streamed `done` event names it
                "answer": last.text,  # its old name, kept as an alias for a release
                "citations": cited,
                "model": last.model,
                "mode": last.mode,
                "covered": last.covered,
                "timings": last.timings,
                "counts": last.counts,
                "question_id": last.question_id,
                "answer_id": last.answer_id,
                "fallback": last.fallback,
                "fallback_message": last.fallback_message,
            }
        )
