"""Answering: question -> one retrieval pass -> prompt -> one streamed LLM call -> events.

    async for event in answer(kb, "How do retries work?"):
        print(event.name, event.data())

Events, in order::

    Status("searching")  Status("reading", excerpts, pages)  Delta*  Citations  Done

or an ``Error`` at any point after the first ``Status``, after which nothing follows. Delta text
is already renumbered, so a client never sees the model's raw excerpt numbers. With no model
configured (``settings.model`` empty) the answer is extractive and flows through the same events.
"""

from __future__ import annotations

import dataclasses
import json
import logging
import os
import re
import time
from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass, field
from functools import partial
from typing import Any, ClassVar

import anyio
import anyio.to_thread

from kb_qa.answer import extractive
from kb_qa.answer.citations import Citation, CitationRenumberer, narrowed, resolve
from kb_qa.answer.coverage import covered
from kb_qa.answer.prompt import Prompt, Turn, build_messages
from kb_qa.answer.rewrite import rewrite
from kb_qa.errors import KbQaError, LLMError, LLMTimeoutError
from kb_qa.index.retrieval import fuse_rankings, path_matches
from kb_qa.settings import Settings
from kb_qa.text import STOPWORDS, normalize
from kb_qa.types import Hit

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

RETRY_DELAY = 0.5  # seconds before the one retry of a transient LLM failure
TEMPERATURE = 0.1  # grounded answers: little creativity wanted
TRUNCATED = "\n\n*(The reply was cut here: it reached {:,} characters, max_reply_chars.)*"


@dataclass(frozen=True)
class Status:
    """Progress: ``searching``, then ``reading`` with the number of excerpts and pages."""

    name: ClassVar[str] = "status"
    stage: str
    message: str
    excerpts: int | None = None
    pages: int | None = None

    def data(self) -> dict[str, Any]:
        """The SSE ``data`` payload."""
        return {k: v for k, v in dataclasses.asdict(self).items() if v is not None}


@dataclass(frozen=True)
class Delta:
    """The next piece of answer text, citations already renumbered."""

    name: ClassVar[str] = "delta"
    text: str

    def data(self) -> dict[str, Any]:
        """The SSE ``data`` payload."""
        return {"text": self.text}


@dataclass(frozen=True)
class Citations:
    """Every citation of the answer, resolved; ``citations[i].number == i + 1``."""

    name: ClassVar[str] = "citations"
    citations: tuple[Citation, ...]

    def data(self) -> dict[str, Any]:
        """The SSE ``data`` payload."""
        return {"citations": [citation_json(c) for c in self.citations]}


@dataclass(frozen=True)
class Done:
    """The end of a successful answer: its whole text, timings (ms), model and counts."""

    name: ClassVar[str] = "done"
    text: str
    model: str  # the litellm model string, or "" for an extractive answer
    mode: str  # "llm" or "extractive"
    timings: dict[str, float] = field(default_factory=dict)
    counts: dict[str, int] = field(default_factory=dict)
    # Retrieval's evidence says the sources cover the question (both modes; in LLM mode
    # the model also says so in words)
    covered: bool = True
    # The question log's id of this question ("" when not logged): feedback sends it back
    question_id: str = ""

    def data(self) -> dict[str, Any]:
        """The SSE ``data`` payload."""
        return dataclasses.asdict(self)


@dataclass(frozen=True)
class Error:
    """The answer failed; ``message`` is meant for a person, ``code`` for a program."""

    name: ClassVar[str] = "error"
    message: str
    code: str  # "llm_timeout", "llm_error", "retrieval_error" or "internal"
    detail: str = ""  # for the operator only (CLI, server log): never sent to clients

    def data(self) -> dict[str, Any]:
        """The SSE ``data`` payload."""
        return {"message": self.message, "code": self.code}


Event = Status | Delta | Citations | Done | Error


def citation_json(c: Citation) -> dict[str, Any]:
    """A citation as JSON."""
    data = dataclasses.asdict(c)
    data["heading_path"] = list(c.heading_path)
    return data


@dataclass(frozen=True)
class _Prepared:
    queries: list[str]
    prompt: Prompt
    ranked: list[tuple[int, Hit]]  # (excerpt number, hit) for the excerpts, best first
    candidates: int  # hits retrieved before the token budget
    retrieval_ms: float
    covered: bool  # retrieval's evidence says the sources cover the question


def prepare(
    kb: Any,
    settings: Settings,
    question: str,
    history: Sequence[Turn] = (),
    include: Sequence[str] = (),
    exclude: Sequence[str] = (),
    for_model: bool | None = None,
) -> _Prepared:
    """Retrieval and prompt assembly: blocking work, run in a worker thread.

    Every query is ranked for a reader (what the no-key answer shows and what coverage is
    judged on); ``for_model`` (default: a model is configured) also ranks each query
    plainly, with both fusions, and fuses all of it into the prompt (in-prompt recall on
    real questions 0.943 -> 0.954 for the plain ranking, -> 0.965 with both fusions).
    """
    started = time.perf_counter()
    for_model = bool(settings.model) if for_model is None else for_model
    queries = [question]
    if settings.rewrite_queries and settings.model:
        queries += rewrite(question, history, settings, _call_options(settings))
    else:
        # A follow-up that leans on the conversation is searched only with the previous
        # question's key terms: alone, "and how do I change it?" finds unrelated sections.
        queries = follow_up_queries(question, history) or queries

    def ranked_for(q: str, reader: bool, fusion: str | None = None) -> list[Hit]:
        n = settings.answer_candidates
        return kb.search(
            q, n, include=include, exclude=exclude, sections=False, reader=reader, fusion=fusion
        )

    with kb.pinned():  # every query of this answer searches one index generation
        rankings = [ranked_for(q, reader=True) for q in queries]
        reader_hits = fuse_rankings(rankings, settings.rrf_k)[: settings.answer_candidates]
        hits = reader_hits
        if for_model:
            plain = [ranked_for(q, reader=False) for q in queries]
            # Both fusions: each finds gold sections the other ranks low (in-prompt recall
            # on real questions 0.948 -> 0.965).
            other = "rrf" if settings.fusion != "rrf" else "zscore"
            plain += [ranked_for(q, reader=False, fusion=other) for q in queries]
            hits = fuse_rankings(rankings + plain, settings.rrf_k)[: settings.answer_candidates]
    paths = [p["path"] for p in kb.pages()]
    excluded = [
        p for p in paths if (include and not path_matches(p, include)) or path_matches(p, exclude)
    ]
    prompt = build_messages(
        question,
        hits,
        history=history,
        all_pages=paths,
        excluded=excluded,
        token_budget=settings.token_budget,
    )
    numbers = {h.chunk.id: n for n, h in enumerate(prompt.excerpts, 1)}
    ranked = [(numbers[h.chunk.id], h) for h in reader_hits if h.chunk.id in numbers]
    elapsed = (time.perf_counter() - started) * 1000
    is_covered = covered(queries[0], rankings[0][:10], kb.embedder.name)
    return _Prepared(queries, prompt, ranked, len(hits), elapsed, is_covered)


_DEPENDENT = re.compile(
    r"\b(it|its|this|that|these|those|they|them|there|one|same|instead)\b|它|这个|那个|这些|那些",
    re.IGNORECASE,
)


# Words of a question that say what is asked, not what it is about: a follow-up brings its
# own ("how do I change it?"), and the previous question's would pull its answer back.
_GENERIC = frozenset(
    """default defaults use uses using used get gets want need way ways possible should could
    please know tell work works happen happens thing things also just any all some much many
    more most other here now like make see did done able one ones""".split()
)
_WORD = re.compile(r"[^\W_]+(?:[_./-][^\W_]+)*")


def key_terms(question: str) -> str:
    """What a question is about: its words without stopwords and generic question words, in
    order ("What time zone do cron schedules use by default?" -> "time zone cron
    schedules"); names such as ``uv.lock`` or ``max_attempts`` stay whole."""
    terms: list[str] = []
    for word in _WORD.findall(normalize(question)):
        folded = word.casefold()
        if folded not in STOPWORDS and folded not in _GENERIC and word not in terms:
            terms.append(word)
    return " ".join(terms)


def follow_up_queries(question: str, history: Sequence[Turn]) -> list[str]:
    """Without a model to rewrite it, a question that leans on the conversation (short, or
    with "it", "this", "它"...) is searched with the previous user turn's key terms, in both
    orders (the first line leads the reader's ranking through its title vector), and not
    alone. bench/answers.py --followups, 20 follow-ups over the synthetic corpora: the gold
    section in the answer's first five 0.450 alone, 0.750 with the whole previous question
    added in both orders (the version before), 0.900 so; 0.800 for the question written out
    in full. [] when the question stands on its own."""
    previous = next((t.content for t in reversed(history) if t.role == "user"), "")
    if not previous:
        return []
    if len(question.split()) > 8 and not _DEPENDENT.search(question):
        return []
    terms = key_terms(previous) or previous
    return [f"{question}\n{terms}", f"{terms}\n{question}"]


async def answer(
    kb: Any,
    question: str,
    *,
    history: Sequence[Turn] = (),
    include: Sequence[str] = (),
    exclude: Sequence[str] = (),
    settings: Settings | None = None,
    limiter: anyio.CapacityLimiter | None = None,
) -> AsyncIterator[Event]:
    """Answer ``question`` from ``kb`` (a KnowledgeBase) as a stream of events.

    Blocking retrieval runs in a worker thread (``limiter`` bounds how many at once), so the
    event loop stays free. Closing the iterator early stops the LLM call.
    """
    settings = settings or kb.settings
    started = time.perf_counter()
    yield Status("searching", "Searching your sources…")
    try:
        prepared = await anyio.to_thread.run_sync(
            partial(prepare, kb, settings, question, history, include, exclude), limiter=limiter
        )
    except KbQaError as exc:
        yield Error(str(exc), "retrieval_error")
        return
    prompt = prepared.prompt
    n, pages = len(prompt.excerpts), len(prompt.pages)
    yield Status(
        "reading",
        f"Reading {n} excerpt{'s' * (n != 1)} from {pages} page{'s' * (pages != 1)}…",
        excerpts=n,
        pages=pages,
    )

    usage: dict[str, int] = {}
    quoted: dict[int, tuple[int, int]] = {}  # excerpt number -> the range the answer quotes
    if settings.model:
        pieces = _llm_pieces(prompt, settings, usage)
    else:
        extract = extractive.quote(prepared.queries[0], prepared.ranked, prepared.covered)
        quoted = extract.quoted
        pieces = _extractive_pieces(extract.pieces)
    renumberer = CitationRenumberer(n)
    text: list[str] = []
    first_token: float | None = None
    left = settings.max_reply_chars or -1  # characters of the reply still to stream
    cut = False
    try:
        async for piece in pieces:
            if 0 <= left < len(piece):
                piece, cut = piece[:left], True
            left -= len(piece)
            shown = renumberer.feed(piece)
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
        yield Error(str(exc), code, exc.detail)
        return
    finally:
        await pieces.aclose()
    tail = renumberer.finish()
    if cut:
        tail += TRUNCATED.format(settings.max_reply_chars)
    if tail:
        first_token = first_token or time.perf_counter()
        text.append(tail)
        yield Delta(tail)

    citations = tuple(
        narrowed(
            dataclasses.replace(c, url=kb.url(prompt.excerpts[c.excerpt - 1].chunk)),
            quoted.get(c.excerpt),
        )
        for c in resolve(renumberer.order, prompt.excerpts)
    )
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
        mode="llm" if settings.model else "extractive",
        timings=timings,
        counts=counts,
        covered=prepared.covered,
    )


async def _extractive_pieces(pieces: list[str]) -> AsyncIterator[str]:
    for piece in pieces:
        yield piece


# -- the language model -----------------------------------------------------------------------


def _litellm() -> Any:
    """litellm, imported on first use: importing it takes seconds."""
    import litellm

    litellm.suppress_debug_info = True  # no "Give Feedback" banner on every expected error
    return litellm


async def warm_up(settings: Settings) -> None:
    """Load the LLM client ahead of the first question, when a model is configured."""
    if not settings.model:
        return
    litellm = await anyio.to_thread.run_sync(_litellm)
    # A mock call (no network) loads the lazily imported parts of litellm's streaming path,
    # which would otherwise add ~0.5 s to the first answer.
    try:
        response = await litellm.acompletion(
            model=settings.model,
            messages=[{"role": "user", "content": "warm up"}],
            mock_response="ok",
            stream=True,
        )
        async for _ in response:
            pass
    except Exception as exc:  # noqa: BLE001 - warming up is best effort
        log.debug("LLM warm-up failed: %s", exc)


def _call_options(settings: Settings) -> dict[str, Any]:
    options: dict[str, Any] = {
        "model": settings.model,
        "timeout": settings.llm_timeout,
        "num_retries": 0,  # we retry once ourselves, and only before any text was shown
        "temperature": TEMPERATURE,
        "drop_params": True,  # models that reject a temperature get none
    }
    if settings.api_base:
        options["api_base"] = settings.api_base
        # Local OpenAI-compatible servers (llama.cpp, vLLM, LM Studio) need no key, but the
        # OpenAI client refuses to start without one.
        if settings.model.startswith("openai/") and not os.environ.get("OPENAI_API_KEY"):
            options["api_key"] = "not-needed"
    return options


async def _llm_pieces(
    prompt: Prompt, settings: Settings, usage: dict[str, int]
) -> AsyncIterator[str]:
    """The model's answer text as it streams, raw citation numbers and all."""
    litellm = await anyio.to_thread.run_sync(_litellm)
    options = _call_options(settings)
    for attempt in (1, 2):
        sent = False
        response = None
        try:
            response = await litellm.acompletion(messages=prompt.messages, stream=True, **options)
            async for chunk in response:
                if getattr(chunk, "usage", None):
                    usage["prompt_tokens"] = chunk.usage.prompt_tokens or 0
                    usage["completion_tokens"] = chunk.usage.completion_tokens or 0
                if not chunk.choices:  # the final usage-only chunk has none
                    continue
                piece = chunk.choices[0].delta.content
                if piece:
                    sent = True
                    yield piece
            return
        except Exception as exc:  # litellm raises many provider-specific types
            if attempt == 1 and not sent and _transient(exc):
                log.warning("language model failed (%s); retrying once", _reason(exc))
                await anyio.sleep(RETRY_DELAY)
                continue
            raise _user_error(exc, settings, sent) from exc
        finally:
            if response is not None:
                await response.aclose()


def _original(exc: BaseException) -> BaseException:
    """The error behind litellm's wrapping, where it can be found.

    litellm wraps errors raised while streaming in MidStreamFallbackError, and reports a refused
    connection as an InternalServerError raised while handling openai's APIConnectionError.
    """
    import openai

    exc = getattr(exc, "original_exception", None) or exc
    seen: BaseException | None = exc
    for _ in range(5):
        seen = seen.__cause__ or seen.__context__ if seen is not None else None
        if isinstance(seen, openai.APIConnectionError):
            return seen
    return exc


def _transient(exc: BaseException) -> bool:
    import openai

    exc = _original(exc)
    if isinstance(exc, openai.APITimeoutError):
        return False  # the user already waited the whole timeout once
    if isinstance(exc, openai.APIConnectionError):
        return True
    status = getattr(exc, "status_code", None)
    return isinstance(status, int) and (status == 429 or status >= 500)


_PREFIX = re.compile(r"^\s*(?:litellm\.)?\w*(?:Error|Exception)\w*\s*[:-]\s*")


def _reason(exc: BaseException) -> str:
    """The provider's own words, without litellm's stacked class-name prefixes."""
    original = _original(exc)
    text = str(getattr(original, "message", None) or original)
    for _ in range(5):
        stripped = _PREFIX.sub("", text, count=1)
        if stripped == text:
            break
        text = stripped
    text = " ".join(text.split())
    return (text[:300] + "…") if len(text) > 300 else (text or type(original).__name__)


def _user_error(exc: BaseException, settings: Settings, sent: bool) -> LLMError:
    """A message anyone may see for a failed LLM call, and the provider's words as detail."""
    import openai

    original = _original(exc)
    timeout = f"{settings.llm_timeout:g} s"
    raise_it = "Or raise llm_timeout (KBQA_LLM_TIMEOUT)."
    if isinstance(original, openai.APITimeoutError):
        if sent:
            return LLMTimeoutError(
                f"The language model stopped answering for {timeout}; the answer is incomplete. "
                "Try again.",
                raise_it,
            )
        return LLMTimeoutError(
            f"The language model did not answer within {timeout}. Try again.", raise_it
        )
    reason = _reason(exc)
    status = getattr(original, "status_code", None)
    where = f" at {settings.api_base}" if settings.api_base else ""
    if sent:
        message, fix = "The language model's answer broke off. Try again.", ""
    elif _unreadable(exc):
        message, fix = (
            "The language model sent a reply that could not be read.",
            f"Check that the model{where} speaks the OpenAI-compatible streaming format.",
        )
    elif isinstance(original, openai.APIConnectionError):
        message, fix = (
            "Could not reach the language model. Try again shortly.",
            f"Check that it is running{where} and that api_base (KBQA_API_BASE) is right.",
        )
    elif status in (401, 403):
        message, fix = (
            "The language model provider refused the request.",
            "Check the provider's API key variable, e.g. OPENAI_API_KEY or ANTHROPIC_API_KEY.",
        )
    elif status == 404:
        message, fix = (
            "The language model was not found.",
            f"Check model (KBQA_MODEL): {settings.model!r}{where}.",
        )
    elif status == 429:
        message, fix = "The language model provider is limiting requests. Try again shortly.", ""
    elif isinstance(status, int) and status >= 500:
        message, fix = f"The language model service failed (HTTP {status}). Try again shortly.", ""
    elif status == 400:
        message, fix = (
            "The language model rejected the request.",
            "If the prompt is too long for it, lower token_budget (KBQA_TOKEN_BUDGET).",
        )
    else:
        log.error("language model call failed", exc_info=exc)
        message, fix = "The language model call failed.", "Check model (KBQA_MODEL)."
    return LLMError(message, f"{reason}. {fix}" if fix else reason)


def _unreadable(exc: BaseException) -> bool:
    """Whether the provider's reply (or its stream) was not valid JSON."""
    seen: BaseException | None = exc
    for _ in range(8):
        if seen is None:
            return False
        if isinstance(seen, json.JSONDecodeError):
            return True
        seen = seen.__cause__ or seen.__context__ or getattr(seen, "original_exception", None)
    return False
