"""Answering: question -> one retrieval pass -> prompt -> one streamed LLM call -> events.

    async for event in answer(kb, "How do retries work?"):
        print(event.name, event.data())

Events, in order::

    Status("searching")  Status("reading", excerpts, pages)  Delta*  Citations  Done

or an ``Error`` at any point after the first ``Status``, after which nothing follows. Delta text
is already renumbered, so a client never sees the model's raw excerpt numbers. With no model
configured (``settings.model`` empty) the answer is extractive and flows through the same events.

The events are defined in ``events``, the retrieval and prompt before the model in
``prepare``, the model's call and its errors in ``llm``.
"""

from __future__ import annotations

import dataclasses
import logging
import time
from collections.abc import AsyncGenerator, Sequence
from functools import partial
from typing import TYPE_CHECKING

import anyio
import anyio.to_thread

from kb_qa.answer import extractive
from kb_qa.answer.alignment import aligned, narrowed
from kb_qa.answer.citations import (
    Citation,
    CitationRenumberer,
    resolve,
    strip_citations,
)
from kb_qa.answer.events import Citations, Delta, Done, Error, Event, Status, citation_json
from kb_qa.answer.llm import call_options, llm_pieces, warm_up, without_thinking
from kb_qa.answer.prepare import prepare
from kb_qa.answer.prompt import Prompt, Turn
from kb_qa.answer.rewrite import rewrite
from kb_qa.answer.uncited import cite_uncited
from kb_qa.answer.wording import say
from kb_qa.errors import KbQaError, LLMError, LLMTimeoutError
from kb_qa.settings import Settings
from kb_qa.types import Hit

if TYPE_CHECKING:
    from kb_qa.kb.knowledge_base import KnowledgeBase

__all__ = [
    "Citations",
    "Delta",
    "Done",
    "Error",
    "Event",
    "Status",
    "answer",
    "citation_json",
    "warm_up",
]

log = logging.getLogger(__name__)

EMPTY_REPLY = "The language model returned no answer."
NO_ANSWER = f"{EMPTY_REPLY} Ask again, or rephrase the question."
TRUNCATED = "\n\n*(The reply was cut here: it reached {:,} characters, max_reply_chars.)*"
NEAREST = 3  # sections listed under an answer that cites none


async def answer(
    kb: KnowledgeBase,
    question: str,
    *,
    history: Sequence[Turn] = (),
    include: Sequence[str] = (),
    exclude: Sequence[str] = (),
    settings: Settings | None = None,
    limiter: anyio.CapacityLimiter | None = None,
    lang: str = "",
    quote_on_failure: bool = False,
) -> AsyncGenerator[Event, None]:
    """Answer ``question`` from ``kb`` (a KnowledgeBase) as a stream of events; ``lang``
    is the reader's language (their page's), which a translated site answers in first and
    the status lines and an extractive answer's own sentences are said in.

    ``quote_on_failure`` (the API's readers): a model that fails before it wrote anything
    (no key, unreachable, an error, a timeout, a reply with no words) is answered as without
    a model, saying so, its error logged and the ``done`` event's ``fallback`` its code,
    where the CLI and MCP (the operator) get the error itself.

    Blocking retrieval runs in a worker thread (``limiter`` bounds how many at once), so the
    event loop stays free. Closing the iterator early stops the LLM call.
    """
    settings = settings or kb.settings
    started = time.perf_counter()
    yield Status("searching", say(lang, "searching"))
    rewritten: list[str] = []
    if settings.rewrite_queries and settings.model:
        # On a thread outside the search limiter: waiting for the model holds no search.
        rewritten = await anyio.to_thread.run_sync(
            partial(rewrite, question, history, settings, call_options(settings))
        )
    try:
        prepared = await anyio.to_thread.run_sync(
            partial(
                prepare,
                kb,
                settings,
                question,
                history,
                include,
                exclude,
                rewritten=rewritten,
                lang=lang,
            ),
            limiter=limiter,
        )
    except KbQaError as exc:
        yield Error(str(exc), "retrieval_error")
        return
    prompt = prepared.prompt
    n, pages = len(prompt.excerpts), len(prompt.pages)
    message = say(lang, "reading", excerpts=n, pages=pages)
    if not settings.model:  # an extractive answer reads retrieval's best few sections only
        best = len({(h.chunk.path, h.chunk.anchor) for _, h in prepared.ranked})
        best = min(best, extractive.CANDIDATES)
        message = say(lang, "reading_best", best=best, excerpts=n)
    yield Status("reading", message, excerpts=n, pages=pages)

    usage: dict[str, int] = {}
    quoted: dict[int, tuple[int, int]] = {}  # excerpt number -> the range the answer quotes
    if settings.model:
        pieces = without_thinking(llm_pieces(prompt, settings, usage))
    else:
        extract = extractive.quote_prepared(prepared, lang)
        quoted = extract.quoted
        pieces = _extractive_pieces(extract.pieces)
    renumberer = CitationRenumberer(n)
    text: list[str] = []
    first_token: float | None = None
    left = settings.max_reply_chars or -1  # characters of the reply still to stream
    cut = False
    fallback = failure = ""  # the model's error code and words, when quotes answer instead
    held = ""  # a model's first text while it holds no words (blanks, citation markers)
    try:
        async for piece in pieces:
            if 0 <= left < len(piece):
                piece, cut = piece[:left], True
            left -= len(piece)
            shown, held = held + renumberer.feed(piece), ""
            if settings.model and not text and not strip_citations(shown).strip():
                held, shown = shown, ""  # shown with the first word, or never: an empty reply
            if shown:
                if first_token is None:
                    first_token = time.perf_counter()
                text.append(shown)
                yield Delta(shown)
            if cut:
                log.warning("the reply was cut at %d characters", settings.max_reply_chars)
                break  # the rest of the reply is not read: closing the stream ends it
    except LLMError as exc:
        log.warning(
            "answer failed after %d characters: %s (%s)", sum(map(len, text)), exc, exc.detail
        )
        code = "llm_timeout" if isinstance(exc, LLMTimeoutError) else "llm_error"
        if not (quote_on_failure and not text and prepared.ranked):
            if renumberer.order:  # the part already shown keeps working citations
                yield Citations(
                    _citations(kb, "".join(text), renumberer.order, prompt, quoted, True)
                )
            yield Error(str(exc), code, exc.detail)
            return
        fallback, failure = code, str(exc)
    finally:
        await pieces.aclose()
    tail = held + renumberer.finish()
    # Off the event loop: on a flood of markers this pass takes a second, and every other
    # request waited behind it.
    words = await anyio.to_thread.run_sync(strip_citations, "".join(text) + tail)
    if settings.model and not fallback and not words.strip():
        # An empty reply (a content filter's stop, or nothing but citation markers) is no
        # answer: like any other failure of the model, it leaves the API's readers the
        # sources' words, the CLI and MCP the error.
        log.warning("the model %s returned no text", settings.model)
        if not (quote_on_failure and not text and prepared.ranked):
            yield Error(NO_ANSWER, "llm_error")
            return
        fallback, failure, cut = "llm_error", EMPTY_REPLY, False
    if fallback:  # nothing was shown: the reader gets the sources' own words, not an error
        extract = extractive.quote_prepared(prepared, lang, failed=True)
        quoted, renumberer = extract.quoted, CitationRenumberer(n)
        for piece in extract.pieces:
            if shown := renumberer.feed(piece):
                first_token = first_token or time.perf_counter()
                text.append(shown)
                yield Delta(shown)
        tail = renumberer.finish()
    if cut:
        tail += TRUNCATED.format(settings.max_reply_chars)
    if tail:
        first_token = first_token or time.perf_counter()
        text.append(tail)
        yield Delta(tail)
    by_model = bool(settings.model) and not fallback
    drawn = by_model  # the citations are what the model drew from: aligned to passages
    order = renumberer.order
    if by_model and not order and prepared.ranked and not cut:
        # A reply citing nothing ("I don't know", or facts with no [n]) would leave the
        # reader nothing to check it against: the best sections follow it, each cited
        # (not after a reply cut at max_reply_chars: the widget shows little more).
        order, note = _nearest(prepared.ranked, prepared.covered, lang)
        text.append(note)
        yield Delta(note)
        drawn = False  # the sections are listed, not drawn from: each keeps all of it
    elif by_model and order and not cut:
        # Sentences after the reply's last citation on their line, or on a line with none,
        # cited where they were drawn from (the widget shows the reply as Done has it).
        cited, order = cite_uncited("".join(text), order, prompt.excerpts, renumberer.emptied)
        text = [cited]

    citations = _citations(kb, "".join(text), order, prompt, quoted, drawn)
    yield Citations(citations)
    ended = time.perf_counter()
    timings = {
        "retrieval_ms": round(prepared.retrieval_ms, 1),
        "first_token_ms": round(((first_token or ended) - started) * 1000, 1),
        "total_ms": round((ended - started) * 1000, 1),
    }
    counts = {
        "candidates": prepared.candidates,
        "queries": len(prepared.queries),
        "excerpts": n,
        "pages": pages,
        "omitted_excerpts": prompt.omitted,
        "history_turns": prompt.history,
        "citations": len(citations),
        "dropped_citations": renumberer.dropped,
        **usage,
    }
    log.info(
        "answered in %.0f ms (retrieval %.0f ms, first text %.0f ms): %d excerpts from %d "
        "pages, %d citations, %d dropped, model %s",
        timings["total_ms"],
        timings["retrieval_ms"],
        timings["first_token_ms"],
        n,
        pages,
        len(citations),
        renumberer.dropped,
        settings.model or "(extractive)",
    )
    yield Done(
        text="".join(text),
        model=settings.model,
        mode="llm" if by_model else "extractive",
        timings=timings,
        counts=counts,
        covered=prepared.covered,
        fallback=fallback,
        fallback_message=failure,
    )


def _citations(
    kb: KnowledgeBase,
    text: str,
    order: dict[int, int],
    prompt: Prompt,
    quoted: dict[int, tuple[int, int]],
    by_model: bool,
) -> tuple[Citation, ...]:
    """The citations of ``text``: each a link to its section and the range it highlights
    (a model's: the passage its sentences were drawn from; an extractive answer's: what it
    quotes)."""
    if by_model:
        quoted = aligned(text, order, prompt.excerpts)
    return tuple(
        narrowed(
            dataclasses.replace(c, url=kb.url(prompt.excerpts[c.excerpt - 1].chunk)),
            quoted.get(c.excerpt),
        )
        for c in resolve(order, prompt.excerpts)
    )


def _nearest(
    ranked: Sequence[tuple[int, Hit]], covered: bool, lang: str
) -> tuple[dict[int, int], str]:
    """The best sections of ``ranked`` ((excerpt number, hit), best first) as citations
    1..NEAREST (display number -> excerpt number), and the note that lists them: as the
    sections to check the reply against or, when retrieval found that the sources do not
    cover the question (a model rightly saying so), as the nearest there are, the way a
    no-key answer lists them."""
    sections = list(enumerate(extractive.sections_of(ranked, NEAREST), 1))
    lines = "".join(f"- **{extractive.where(hit)}** [{shown}]\n" for shown, (_, hit) in sections)
    lead = f"\n\n*{say(lang, 'uncited')}*" if covered else f"\n\n{say(lang, 'not_covered')}"
    lead += "\n\n"
    return {shown: number for shown, (number, _) in sections}, lead + lines


async def _extractive_pieces(pieces: list[str]) -> AsyncGenerator[str, None]:
    for piece in pieces:
        yield piece
