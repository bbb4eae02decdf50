"""Whole answers for Python code: ``ask`` and ``ask_async``.

``answering.answer`` streams an answer as events, for a server or a terminal; code that
wants the answer (a chat bot, a script) gets it whole here: its text, its citations (each
resolved to the passage of its page it quotes or was drawn from), whether retrieval found
the question covered, and the model that wrote it ("" for an extractive answer). A failed
answer raises, as a library call should::

    from kb_qa import KnowledgeBase, ask

    with KnowledgeBase("sample_site") as kb:
        kb.index()
        reply = ask(kb, "How many times is a failing job attempted?")
        print(reply.text)
        for c in reply.citations:
            print(c.number, " › ".join(c.heading_path), c.url)
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from functools import partial
from typing import TYPE_CHECKING

import anyio

from kb_qa.answer.answering import answer
from kb_qa.answer.citations import Citation
from kb_qa.answer.events import Citations, Done, Error
from kb_qa.answer.prompt import Turn
from kb_qa.errors import IndexStateError, KbQaError, LLMError, LLMTimeoutError
from kb_qa.kb.arguments import checked_search

if TYPE_CHECKING:
    from kb_qa.kb.knowledge_base import KnowledgeBase

__all__ = ["Answer", "ask", "ask_async"]


@dataclass(frozen=True)
class Answer:
    """A whole answer: its text (Markdown, citations as ``[n]``), its citations in number
    order, whether retrieval found the question covered by the sources, and the model that
    wrote it ("" for an extractive answer, quoted from the sources)."""

    text: str
    citations: tuple[Citation, ...]
    covered: bool
    model: str


async def ask_async(
    kb: KnowledgeBase,
    question: str,
    *,
    history: Sequence[Turn] = (),
    include: Sequence[str] = (),
    exclude: Sequence[str] = (),
    lang: str = "",
) -> Answer:
    """The answer to ``question`` from ``kb``, whole. ``history``: the conversation before
    it (``Turn("user", ...)``, ``Turn("assistant", ...)``); ``include`` / ``exclude``: vault
    paths or globs the sources are limited to / kept from; ``lang``: the reader's language
    tag, which the answer's own sentences are said in. Raises ``LLMTimeoutError`` or
    ``LLMError`` when the configured model fails (its ``detail`` says what to check),
    ``IndexStateError`` when the index holds nothing (never indexed), and ``KbQaError``
    when retrieval fails."""
    question = checked_search(question, 1, include, exclude, call="ask")
    if not isinstance(lang, str):  # it failed with "'int' object has no attribute 'strip'"
        raise TypeError(f"ask: lang must be a language tag such as 'en' or 'fr', not {lang!r}")
    if isinstance(history, str) or not all(isinstance(t, Turn) for t in history):
        raise TypeError(
            "ask: history must be a list of kb_qa.Turn, e.g. [Turn('user', 'How do I "
            f"install it?'), Turn('assistant', '...')], not {history!r}"
        )
    if not (await anyio.to_thread.run_sync(kb.view_chunks))[1]:
        # Never indexed: it answered "No passage in your sources matches this question".
        raise IndexStateError(
            "The index holds no section: index the vault first (kb.index(), or kb-qa index "
            "VAULT); a folder without Markdown files has none."
        )
    citations: tuple[Citation, ...] = ()
    events = answer(kb, question, history=history, include=include, exclude=exclude, lang=lang)
    async for event in events:
        if isinstance(event, Citations):
            citations = event.citations
        elif isinstance(event, Error):
            await events.aclose()
            raise _raised(event)
        elif isinstance(event, Done):
            return Answer(event.text, citations, event.covered, event.model)
    raise KbQaError("The answer ended before it was done: ask again.")


def ask(
    kb: KnowledgeBase,
    question: str,
    *,
    history: Sequence[Turn] = (),
    include: Sequence[str] = (),
    exclude: Sequence[str] = (),
    lang: str = "",
) -> Answer:
    """``ask_async`` for code without an event loop of its own (a script, a thread)."""
    call = partial(
        ask_async, kb, question, history=history, include=include, exclude=exclude, lang=lang
    )
    return anyio.run(call)


def _raised(event: Error) -> KbQaError:
    """The exception a failed answer's ``Error`` event stands for."""
    kind = {"llm_timeout": LLMTimeoutError, "llm_error": LLMError}.get(event.code)
    if kind is not None:
        return kind(event.message, detail=event.detail)
    return KbQaError(f"{event.message} {event.detail}".strip())
