"""The answering stage end to end: a real index of sample_site, litellm against the test LLM server.

Nothing of ours is mocked: the prompt is checked as the LLM server received it over HTTP.
"""

from __future__ import annotations

import asyncio
import json
import re
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from api_helpers import indexed_sample
from llm_server import LLMServer, Reply

from kb_qa.answer.answering import (
    NO_ANSWER,
    Citations,
    Delta,
    Done,
    Error,
    Event,
    Status,
    answer,
)
from kb_qa.answer.blocks import passages
from kb_qa.answer.extractive import LABEL, NOT_COVERED
from kb_qa.answer.llm import MODEL_CUT
from kb_qa.answer.prompt import SYSTEM_PROMPT, Turn
from kb_qa.errors import redacted
from kb_qa.kb.knowledge_base import KnowledgeBase
from kb_qa.settings import Settings

QUESTION = "How many times is a failing job attempted by default?"
EXCERPT = re.compile(r'<excerpt number="(\d+)"')
PAGE = re.compile(r'<page path="([^"]+)"')


@pytest.fixture(scope="module")
def kb(tmp_path_factory: pytest.TempPathFactory) -> Iterator[KnowledgeBase]:
    kb = indexed_sample(tmp_path_factory.mktemp("answer"))
    yield kb
    kb.close()


@pytest.fixture(scope="module")
def loop() -> Iterator[asyncio.AbstractEventLoop]:
    loop = asyncio.new_event_loop()
    yield loop
    loop.close()


def llm_settings(kb: KnowledgeBase, llm: LLMServer, **overrides: Any) -> Settings:
    return kb.settings.replace(model="openai/test", api_base=llm.url, **overrides)


def ask(
    loop: asyncio.AbstractEventLoop, kb: KnowledgeBase, question: str = QUESTION, **kwargs: Any
) -> list[Event]:
    async def run() -> list[Event]:
        return [event async for event in answer(kb, question, **kwargs)]

    return loop.run_until_complete(run())


def text_of(events: list[Event]) -> str:
    return "".join(e.text for e in events if isinstance(e, Delta))


def user_message(request: dict[str, Any]) -> str:
    return request["messages"][-1]["content"]


def test_event_order_and_prompt_layout_as_the_llm_received_it(
    loop: asyncio.AbstractEventLoop, kb: KnowledgeBase, llm: LLMServer
) -> None:
    events = ask(loop, kb, settings=llm_settings(kb, llm))  # default reply: echo the numbers
    names = [e.name for e in events]
    assert names[:2] == ["status", "status"]
    assert names[-2:] == ["citations", "done"]
    assert set(names[2:-2]) == {"delta"}
    searching, reading = events[0], events[1]
    assert isinstance(searching, Status) and searching.stage == "searching"
    assert isinstance(reading, Status) and reading.stage == "reading"

    (request,) = llm.requests
    assert request["stream"] is True
    assert request["messages"][0] == {"role": "system", "content": SYSTEM_PROMPT}
    user = user_message(request)
    # The question before and after the excerpts.
    assert user.count(QUESTION) == 2
    assert user.index(QUESTION) < user.index("<excerpt") < user.rindex(QUESTION)
    # Global numbering 1..n in prompt order, each page one contiguous group.
    numbers = [int(n) for n in EXCERPT.findall(user)]
    assert numbers == list(range(1, len(numbers) + 1))
    assert reading.excerpts == len(numbers) and len(numbers) > 20
    pages = PAGE.findall(user)
    assert len(pages) == len(set(pages)) == reading.pages
    # The best match for this question comes first.
    assert pages[0] == "docs/guides/retries.md"
    assert "Pages in this workspace (18):" in user

    done = events[-1]
    assert isinstance(done, Done)
    assert done.mode == "llm" and done.model == "openai/test"
    assert done.text == text_of(events)
    assert done.text == "Excerpts seen: " + " ".join(f"[{n}]" for n in numbers) + "."
    assert done.counts["excerpts"] == len(numbers)
    assert done.counts["citations"] == len(numbers)
    assert done.counts["dropped_citations"] == 0
    timings = done.timings
    assert 0 < timings["retrieval_ms"] <= timings["first_token_ms"] <= timings["total_ms"]


def test_citations_resolve_to_urls_anchors_and_source_positions(
    loop: asyncio.AbstractEventLoop, kb: KnowledgeBase, llm: LLMServer
) -> None:
    llm.script("Five attempts [2]. Delays grow [1].")
    events = ask(loop, kb, settings=llm_settings(kb, llm))
    (citations,) = [e for e in events if isinstance(e, Citations)]
    assert [c.number for c in citations.citations] == [1, 2]
    assert [c.excerpt for c in citations.citations] == [2, 1]
    vault = Path(kb.settings.vault)
    for c in citations.citations:
        assert c.url == f"https://lumen.example.com/{c.url.split('.com/')[1]}"
        if c.anchor:
            assert c.url.endswith("#" + c.anchor)
        source = (vault / c.path).read_text(encoding="utf-8")
        assert source[c.start : c.end] == c.text
        assert source.count("\n", 0, c.start) + 1 == c.line_start
        assert c.line_end == c.line_start + c.text.count("\n")
        assert c.heading_path and c.text.strip()


@pytest.mark.parametrize("chunk_size", [1, 2, 3, 6])
def test_citations_renumbered_while_streaming_across_chunk_boundaries(
    loop: asyncio.AbstractEventLoop, kb: KnowledgeBase, llm: LLMServer, chunk_size: int
) -> None:
    # chunk_size 6 sends "See [1" then "2] her": the marker is split across stream chunks.
    llm.script(Reply(text="See [12] here. Also [3, 12]. And [12][7]!", chunk_size=chunk_size))
    events = ask(loop, kb, settings=llm_settings(kb, llm))
    deltas = [e.text for e in events if isinstance(e, Delta)]
    assert "".join(deltas) == "See [1] here. Also [1][2]. And [1][3]!"
    assert not any("12" in d or "7" in d for d in deltas)  # raw numbers never reach the client
    (citations,) = [e for e in events if isinstance(e, Citations)]
    assert [(c.number, c.excerpt) for c in citations.citations] == [(1, 12), (2, 3), (3, 7)]


def test_invalid_citations_are_dropped_and_counted(
    loop: asyncio.AbstractEventLoop, kb: KnowledgeBase, llm: LLMServer
) -> None:
    llm.script(Reply(text="A [1]. B [999]. C [0] [2]. Code `x[5]` stays.", chunk_size=2))
    events = ask(loop, kb, settings=llm_settings(kb, llm))
    done = events[-1]
    assert isinstance(done, Done)
    assert done.text == "A [1]. B. C [2]. Code `x[5]` stays."
    assert done.counts["dropped_citations"] == 2
    assert done.counts["citations"] == 2


@pytest.mark.parametrize(
    "reply",
    [
        "A failing job is attempted five times by default.",
        "I don't know: the excerpts do not say how often a failing job is attempted.",
    ],
    ids=["facts-without-citations", "i-dont-know"],
)
def test_a_reply_citing_nothing_is_followed_by_the_best_sections(
    loop: asyncio.AbstractEventLoop, kb: KnowledgeBase, llm: LLMServer, reply: str
) -> None:
    """A reply with no [n] (a model that forgot them, or said it does not know although
    the excerpts cover it) left the reader an answer with no source to check or open: it
    is followed by the sections that match the question best, each cited."""
    llm.script(Reply(text=reply))
    events = ask(loop, kb, settings=llm_settings(kb, llm))
    done = events[-1]
    assert isinstance(done, Done)
    assert done.text.startswith(reply + "\n\n*(This answer cites none of your sources")
    assert done.text == text_of(events)
    (citations,) = [e for e in events if isinstance(e, Citations)]
    listed = citations.citations
    assert [c.number for c in listed] == [1, 2, 3]
    assert "retries.md" in listed[0].path
    for c in listed:  # each line names its section and cites it; each opens all of it
        assert f"- **{' › '.join(c.heading_path)}** [{c.number}]" in done.text
        chunk = kb.search(" ".join(c.heading_path), k=50)
        assert c.text == next(h.chunk.text for h in chunk if h.chunk.anchor == c.anchor)
    assert done.counts["citations"] == 3
    # In the reader's language, as the rest of what kb-qa itself says
    llm.script(Reply(text=reply))
    german = ask(loop, kb, settings=llm_settings(kb, llm), lang="de")[-1]
    assert isinstance(german, Done)
    assert german.text.startswith(reply + "\n\n*(Diese Antwort nennt keine Ihrer Quellen")


def test_history_reaches_the_llm_before_the_new_question(
    loop: asyncio.AbstractEventLoop, kb: KnowledgeBase, llm: LLMServer
) -> None:
    history = [
        Turn("user", "What is Lumen?"),
        Turn("assistant", "A self-hosted job scheduler [4]."),
    ]
    events = ask(
        loop, kb, "And how does it retry jobs?", history=history, settings=llm_settings(kb, llm)
    )
    assert isinstance(events[-1], Done) and events[-1].counts["history_turns"] == 2
    messages = llm.requests[0]["messages"]
    assert [m["role"] for m in messages] == ["system", "user", "assistant", "user"]
    assert messages[1]["content"] == "What is Lumen?"
    assert messages[2]["content"] == "A self-hosted job scheduler."  # old numbers stripped
    assert "And how does it retry jobs?" in messages[3]["content"]


def test_exclude_and_include_shape_the_prompt(
    loop: asyncio.AbstractEventLoop, kb: KnowledgeBase, llm: LLMServer
) -> None:
    llm.script("OK [1].", "OK [1].")
    ask(loop, kb, exclude=["docs/guides/retries.md"], settings=llm_settings(kb, llm))
    user = user_message(llm.requests[-1])
    assert "Excluded by the user (not shown, do not use): docs/guides/retries.md" in user
    assert 'path="docs/guides/retries.md"' not in user

    ask(loop, kb, include=["docs/guides/*"], settings=llm_settings(kb, llm))
    user = user_message(llm.requests[-1])
    pages = set(PAGE.findall(user))
    assert pages and all(p.startswith("docs/guides/") for p in pages)
    excluded = user.split("Excluded by the user (not shown, do not use): ")[1].split("\n")[0]
    assert "docs/faq.md" in excluded and "docs/guides/retries.md" not in excluded


def test_extractive_answer_without_a_model(
    loop: asyncio.AbstractEventLoop, kb: KnowledgeBase, llm: LLMServer
) -> None:
    events = ask(loop, kb)  # kb.settings.model is "" by default
    assert not llm.requests
    deltas = [e for e in events if isinstance(e, Delta)]
    assert deltas[0].text.startswith(LABEL)
    done = events[-1]
    assert isinstance(done, Done) and done.mode == "extractive" and done.model == ""
    (citations,) = [e for e in events if isinstance(e, Citations)]
    cited = {int(n) for n in re.findall(r"\[(\d+)\]", done.text)}
    assert cited == set(range(1, len(citations.citations) + 1))
    assert "five times" in done.text  # the sentence that answers it
    # Each passage is introduced by its heading path and citation, the other top sections
    # are listed after "See also:"; markers sit nowhere else.
    for line in done.text.splitlines():
        if re.search(r"\[\d+\]", line):
            assert re.fullmatch(r"\*\*.+\*\* \[\d+\]|See also: .+ \[\d+\]\.", line), line
    for c in citations.citations:
        assert c.url.startswith("https://lumen.example.com/")


def test_no_matching_excerpts(
    loop: asyncio.AbstractEventLoop, kb: KnowledgeBase, llm: LLMServer
) -> None:
    events = ask(loop, kb, include=["no/such/folder/"])
    assert events[1].excerpts == 0  # type: ignore[union-attr]
    done = events[-1]
    assert isinstance(done, Done)
    assert done.text == f"{LABEL}\n\nNo passage in your sources matches this question."
    llm.script("Your sources do not cover this.")
    events = ask(loop, kb, include=["no/such/folder/"], settings=llm_settings(kb, llm))
    assert "No excerpts were found for this question." in user_message(llm.requests[0])
    assert isinstance(events[-1], Done) and events[-1].counts["citations"] == 0


def test_extractive_answer_for_a_chinese_question(
    loop: asyncio.AbstractEventLoop, kb: KnowledgeBase
) -> None:
    events = ask(loop, kb, "如何安装 Lumen？")
    done = events[-1]
    assert isinstance(done, Done)
    assert "安装" in done.text and "[1]" in done.text
    assert events[-2].citations[0].path == "docs/zh/quickstart.md"  # type: ignore[union-attr]


def test_passages_are_shown_as_readers_see_them() -> None:
    markdown = (
        "## Heading {#custom}\n\n"
        "Some **bold** text with a [link](https://x.example), [[Other note|a wikilink]] "
        "and `co*de*`. Second sentence [3] here.{ .lead }\n\n"
        "| Key | Value |\n|---|---|\n| `a` | **1** |\n\n"
        '!!! note "Title"\n    Inside a note.\n\n'
        '=== "pip"\n\n    ```bash\n    pip install lumen\n    ```\n\n'
        "<div>raw html</div>\n\n"
        "- item one\n- item two\n"
    )
    assert [(b.kind, b.text) for b in passages(markdown)] == [
        # A bracket of the docs' own is theirs: quoted, escaped from the answer's citations
        (
            "prose",
            "Some **bold** text with a link, a wikilink and `co*de*`. Second sentence [3] here.",
        ),
        ("table", "| Key | Value |\n|---|---|\n| `a` | **1** |"),
        ("prose", "**Title:**"),
        ("prose", "Inside a note."),
        ("prose", "**pip:**"),
        ("code", "```bash\npip install lumen\n```"),
        ("list", "- item one\n- item two"),
    ]


def error_of(events: list[Event]) -> Error:
    assert isinstance(events[-1], Error), [e.name for e in events]
    assert not any(isinstance(e, Done) for e in events)
    # Citations only for text already shown (before the error), so its chips work.
    assert all(not isinstance(e, Citations) or text_of(events) for e in events)
    return events[-1]


def test_transient_failure_is_retried_once_before_any_text(
    loop: asyncio.AbstractEventLoop, kb: KnowledgeBase, llm: LLMServer
) -> None:
    llm.script(Reply(status=503, text="overloaded"), "Recovered [1].")
    events = ask(loop, kb, settings=llm_settings(kb, llm))
    assert isinstance(events[-1], Done) and events[-1].text == "Recovered [1]."
    assert len(llm.requests) == 2


def test_persistent_500_is_a_readable_error(
    loop: asyncio.AbstractEventLoop, kb: KnowledgeBase, llm: LLMServer
) -> None:
    llm.script(Reply(status=500, text="model exploded"), Reply(status=500, text="model exploded"))
    error = error_of(ask(loop, kb, settings=llm_settings(kb, llm)))
    assert error.code == "llm_error"
    assert error.message == "The language model service failed (HTTP 500). Try again shortly."
    assert "model exploded" in error.detail  # the provider's words: for the operator only
    assert "litellm" not in error.message and "Traceback" not in error.message
    assert len(llm.requests) == 2


@pytest.mark.parametrize(
    "reply",
    [Reply(text=""), Reply(text="", finish_reason="content_filter"), Reply(text=" [0] [1]")],
    ids=["empty", "filtered", "only-bogus-citations"],
)
def test_a_reply_with_no_words_is_an_error_not_an_empty_answer(
    loop: asyncio.AbstractEventLoop, kb: KnowledgeBase, llm: LLMServer, reply: Reply
) -> None:
    llm.script(reply)
    error = error_of(ask(loop, kb, settings=llm_settings(kb, llm)))
    assert (error.code, error.message) == ("llm_error", NO_ANSWER)


def test_a_reply_opening_on_a_citation_shows_it_with_its_first_words(
    loop: asyncio.AbstractEventLoop, kb: KnowledgeBase, llm: LLMServer
) -> None:
    """Markers and blanks before any word are held back (an empty reply must never show
    them), then streamed with the first word: nothing of the reply is lost."""
    llm.script(Reply(text=" [1]\n\nFive attempts [1].", chunk_size=2))
    events = ask(loop, kb, settings=llm_settings(kb, llm))
    done = events[-1]
    assert isinstance(done, Done) and done.text == " [1]\n\nFive attempts [1]."
    assert text_of(events) == done.text and done.mode == "llm"


def test_a_model_declining_a_question_the_sources_do_not_cover_is_not_told_to_cite(
    loop: asyncio.AbstractEventLoop, llm: LLMServer, tmp_path: Path
) -> None:
    """Asked what the docs do not cover, a model rightly declines, citing nothing: the
    answer went on "(This answer cites none of your sources: check it against ...)" over
    three unrelated sections. It lists them as the nearest, as a no-key answer does."""
    reply = "The documentation does not cover this."
    llm.script(Reply(text=reply))
    kb = indexed_sample(tmp_path, embed_model="minilm")  # coverage is calibrated for MiniLM
    events = ask(loop, kb, "What is the capital of France?", settings=llm_settings(kb, llm))
    kb.close()
    done = events[-1]
    assert isinstance(done, Done) and not done.covered and done.mode == "llm"
    assert done.text.startswith(f"{reply}\n\n{NOT_COVERED}\n\n- **")
    assert "cites none" not in done.text and done.text == text_of(events)


def test_a_reply_the_provider_cut_says_so(
    loop: asyncio.AbstractEventLoop, kb: KnowledgeBase, llm: LLMServer
) -> None:
    llm.script(Reply(text="Five attempts [1], then", finish_reason="length"))
    done = ask(loop, kb, settings=llm_settings(kb, llm))[-1]
    assert isinstance(done, Done) and done.text == "Five attempts [1], then" + MODEL_CUT


def test_client_errors_are_not_retried(
    loop: asyncio.AbstractEventLoop, kb: KnowledgeBase, llm: LLMServer
) -> None:
    llm.script(Reply(status=404, text="no such model"))
    error = error_of(ask(loop, kb, settings=llm_settings(kb, llm)))
    assert error.message == "The language model was not found."
    assert "'openai/test'" in error.detail and "KBQA_MODEL" in error.detail
    assert len(llm.requests) == 1


def test_provider_error_text_never_reaches_the_client(
    loop: asyncio.AbstractEventLoop, kb: KnowledgeBase, llm: LLMServer
) -> None:
    llm.script(Reply(status=401, text="Incorrect API key provided: sk-live-abc123"))
    error = error_of(ask(loop, kb, settings=llm_settings(kb, llm)))
    assert error.message == "The language model provider refused the request."
    assert "sk-live" not in json.dumps(error.data())
    assert "sk-live-abc123" in error.detail and "OPENAI_API_KEY" in error.detail


def test_unreadable_reply_is_not_called_unreachable(
    loop: asyncio.AbstractEventLoop, kb: KnowledgeBase, llm: LLMServer
) -> None:
    llm.script(*[Reply(text="abc", malformed_after=0)] * 2)
    error = error_of(ask(loop, kb, settings=llm_settings(kb, llm)))
    assert error.message == "The language model sent a reply that could not be read."


def test_a_key_the_provider_echoes_is_not_logged_or_shown(
    loop: asyncio.AbstractEventLoop,
    kb: KnowledgeBase,
    llm: LLMServer,
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
) -> None:
    """The provider's words go to the log and the terminal; when they echo the key kb-qa
    sent, the key went with them."""
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-SECRET-4f9a")
    llm.script(Reply(status=401, text="Incorrect API key provided: sk-test-SECRET-4f9a."))
    error = error_of(ask(loop, kb, settings=llm_settings(kb, llm)))
    assert error.message == "The language model provider refused the request."
    assert "sk-test-SECRET" not in error.detail and "[redacted]" in error.detail
    assert "sk-test-SECRET" not in caplog.text


def test_a_models_thinking_is_not_shown_or_cited(
    loop: asyncio.AbstractEventLoop, kb: KnowledgeBase, llm: LLMServer
) -> None:
    """A reasoning model served without a reasoning parser writes <think>…</think> into its
    answer: the reader saw it, and the excerpt it mused about became source [1]."""
    llm.script(
        Reply(text="<think>Excerpt [5] maybe? No.</think>\n\nRetries back off [2].", chunk_size=3)
    )
    events = ask(loop, kb, settings=llm_settings(kb, llm))
    assert text_of(events) == "Retries back off [1]."
    (citations,) = [e for e in events if isinstance(e, Citations)]
    assert len(citations.citations) == 1
    llm.script(Reply(text="<think>Nothing to say.</think>", chunk_size=5))
    assert error_of(ask(loop, kb, settings=llm_settings(kb, llm))).code == "llm_error"
    llm.script(Reply(text="<b>Bold</b> claim [1].", chunk_size=2))  # not a think block
    assert text_of(ask(loop, kb, settings=llm_settings(kb, llm))) == "<b>Bold</b> claim [1]."


@pytest.mark.parametrize(
    ("body", "kind"),
    [
        ("<!doctype html><html><body>Welcome to the proxy</body></html>", "text/html"),
        ('{"error": {"message": "quota exceeded"}}', "application/json"),
    ],
    ids=["web page", "json"],
)
def test_a_reply_that_is_not_a_stream_is_said_to_be_unreadable(
    loop: asyncio.AbstractEventLoop, kb: KnowledgeBase, llm: LLMServer, body: str, kind: str
) -> None:
    """A 200 reply that is no stream (a proxy's page, an error sent with 200) was "returned
    no answer … rephrase the question", which sends the reader after the wrong cause."""
    llm.script(Reply(raw=body, raw_type=kind))
    error = error_of(ask(loop, kb, settings=llm_settings(kb, llm)))
    assert error.message == "The language model sent a reply that could not be read."
    assert kind in error.detail and "OpenAI-compatible streaming format" in error.detail
    assert len(llm.requests) == 1


def test_redaction_blanks_every_secret_variable_longest_first(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "wJalrXUtnFEMI-K7MDENG")
    monkeypatch.setenv("SHORT_TOKEN", "wJalrXUtnF")  # the longer key's head
    monkeypatch.setenv("DEBUG_TOKEN", "true")  # too short to be a secret: words stay
    said = redacted("bad key wJalrXUtnFEMI-K7MDENG (wJalrXUtnF); verbose is true")
    assert said == "bad key [redacted] ([redacted]); verbose is true"


def test_timeout_before_the_first_token(
    loop: asyncio.AbstractEventLoop, kb: KnowledgeBase, llm: LLMServer
) -> None:
    llm.script(Reply(delay=5))
    error = error_of(ask(loop, kb, settings=llm_settings(kb, llm, llm_timeout=0.4)))
    assert error.code == "llm_timeout"
    assert error.message.startswith("The language model did not answer within 0.4 s.")
    assert len(llm.requests) == 1  # the user already waited once: no retry


def test_keep_alives_do_not_stretch_the_wait_for_the_first_token(
    loop: asyncio.AbstractEventLoop, kb: KnowledgeBase, llm: LLMServer
) -> None:
    """A provider that sends a keep-alive comment every 0.2 s for 5 s resets every network
    read's timeout: the reader waited the whole 5 s for the first word, however low
    llm_timeout was set."""
    llm.script(Reply(text="Late [1].", keep_alive=5))
    error = error_of(ask(loop, kb, settings=llm_settings(kb, llm, llm_timeout=0.8)))
    assert error.code == "llm_timeout"
    assert error.message.startswith("The language model did not answer within 0.8 s.")
    assert len(llm.requests) == 1


def test_stall_mid_answer_keeps_the_partial_text_and_says_so(
    loop: asyncio.AbstractEventLoop, kb: KnowledgeBase, llm: LLMServer
) -> None:
    llm.script(Reply(text="First part [1]. Second part.", chunk_size=8, stall_after=2, stall=5))
    events = ask(loop, kb, settings=llm_settings(kb, llm, llm_timeout=0.4))
    error = error_of(events)
    assert error.code == "llm_timeout"
    assert "stopped answering for 0.4 s" in error.message
    assert text_of(events) == "First part [1]."
    # The part shown keeps a working citation: the chip opens its section.
    (citations,) = [e for e in events if isinstance(e, Citations)]
    assert [c.number for c in citations.citations] == [1] and citations.citations[0].url


@pytest.mark.parametrize(
    "reply",
    [
        Reply(text="Broken answer here.", chunk_size=4, malformed_after=2),
        Reply(text="Broken answer here.", chunk_size=4, close_after=2),
    ],
    ids=["malformed", "closed"],
)
def test_stream_broken_mid_answer(
    loop: asyncio.AbstractEventLoop, kb: KnowledgeBase, llm: LLMServer, reply: Reply
) -> None:
    llm.script(reply)
    events = ask(loop, kb, settings=llm_settings(kb, llm))
    error = error_of(events)
    assert error.code == "llm_error"
    assert error.message.startswith("The language model's answer broke off")
    assert text_of(events) == "Broken a"
    assert len(llm.requests) == 1  # text was already shown: a retry would repeat it


def test_connection_closed_before_any_text_is_retried(
    loop: asyncio.AbstractEventLoop, kb: KnowledgeBase, llm: LLMServer
) -> None:
    llm.script(Reply(close_after=0), "Second try [1].")
    events = ask(loop, kb, settings=llm_settings(kb, llm))
    assert isinstance(events[-1], Done) and events[-1].text == "Second try [1]."


def test_unreachable_llm(loop: asyncio.AbstractEventLoop, kb: KnowledgeBase) -> None:
    settings = kb.settings.replace(model="openai/test", api_base="http://127.0.0.1:9/v1")
    error = error_of(ask(loop, kb, settings=settings))
    assert error.message == "Could not reach the language model. Try again shortly."
    assert "at http://127.0.0.1:9/v1" in error.detail and "KBQA_API_BASE" in error.detail
    assert ".." not in error.detail, error.detail  # "Connection error.. Check that it is…"


def test_closing_the_stream_early_stops_the_llm_call(
    loop: asyncio.AbstractEventLoop, kb: KnowledgeBase, llm: LLMServer
) -> None:
    llm.script(Reply(text="x" * 400, chunk_size=2, chunk_delay=0.02))  # 4 s if read to the end

    async def first_delta() -> str:
        events = answer(kb, QUESTION, settings=llm_settings(kb, llm))
        try:
            async for event in events:
                if isinstance(event, Delta):
                    return event.text
        finally:
            await events.aclose()
        raise AssertionError("no delta")

    started = loop.time()
    assert loop.run_until_complete(first_delta()) == "xx"
    assert loop.time() - started < 2


def test_query_rewriting_fuses_results_of_rewritten_queries(
    loop: asyncio.AbstractEventLoop, kb: KnowledgeBase, llm: LLMServer
) -> None:
    history = [Turn("user", "Which port serves the API?"), Turn("assistant", "7420 [1].")]
    question = "and what about the other one?"
    monitoring = "docs/operations/monitoring.md"

    # The question as it is: without rewriting, the conversation's key terms are searched too
    # (follow_up_queries), which would also lift the monitoring page.
    llm.script("Port 7420 [1].")
    ask(loop, kb, question, settings=llm_settings(kb, llm))
    plain_pages = PAGE.findall(user_message(llm.requests[-1]))

    llm.reset()
    llm.script(
        Reply(
            text="1. Prometheus metrics port\n2. and what about the other one?\n- scrape metrics"
        ),
        "Metrics are on port 9464 [1].",
    )
    settings = llm_settings(kb, llm, rewrite_queries=True)
    events = ask(loop, kb, question, history=history, settings=settings)
    done = events[-1]
    assert isinstance(done, Done) and done.counts["queries"] == 3  # the echo line is dropped
    rewrite_request, answer_request = llm.requests
    assert "search queries" in rewrite_request["messages"][0]["content"]
    assert "Which port serves the API?" in rewrite_request["messages"][1]["content"]
    assert not rewrite_request.get("stream")
    rewritten_pages = PAGE.findall(user_message(answer_request))
    # The rewritten queries bring the metrics page up among the first excerpts the model reads.
    assert rewritten_pages.index(monitoring) <= 2 < plain_pages.index(monitoring)


def test_failed_rewrite_falls_back_to_the_question(
    loop: asyncio.AbstractEventLoop, kb: KnowledgeBase, llm: LLMServer
) -> None:
    llm.script(Reply(text="", status=500), "Five attempts [1].")
    settings = llm_settings(kb, llm, rewrite_queries=True)
    events = ask(loop, kb, settings=settings)
    done = events[-1]
    assert isinstance(done, Done) and done.counts["queries"] == 1
    assert done.text == "Five attempts [1]."


def test_a_failed_rewrite_of_a_follow_up_searches_it_with_the_conversation(
    loop: asyncio.AbstractEventLoop, kb: KnowledgeBase, llm: LLMServer
) -> None:
    """With rewriting on, a failed rewrite searched "and how do I change it?" alone: worse
    than with rewriting off, and logged as a question the docs do not cover."""
    history = [Turn("user", "How many times is a failing job retried?"), Turn("assistant", "5")]
    llm.script(Reply(text="", status=500), "Set max_attempts [1].")
    settings = llm_settings(kb, llm, rewrite_queries=True)
    events = ask(loop, kb, "and how do I change it?", history=history, settings=settings)
    done = events[-1]
    assert isinstance(done, Done) and done.counts["queries"] == 2  # with the key terms
    assert "retr" in user_message(llm.requests[-1]).split("Excerpts, grouped by page")[1][:3000]


def test_a_slow_rewrite_holds_no_search_thread(kb: KnowledgeBase) -> None:
    """Rewriting waits for the model on the event loop: readers whose rewrites stall do not
    hold the threads other readers' searches and the health checks run on."""
    from uvicorn_thread import UvicornThread

    from kb_qa.serve.app import SEARCH_THREADS, create_app

    stalled = SEARCH_THREADS + 1
    with LLMServer() as slow:  # its own server: stopping it wakes the stalled replies
        slow.script(*[Reply(text="retries", delay=20.0)] * stalled)
        settings = llm_settings(kb, slow, rewrite_queries=True, rewrite_timeout=30.0, rate_limit=0)
        with UvicornThread(create_app(kb, settings)) as api:
            asks = [
                threading.Thread(
                    target=httpx.post,
                    args=(api.url + "/api/ask",),
                    kwargs={"json": {"question": f"retries {n}", "stream": False}, "timeout": 60},
                    daemon=True,
                )
                for n in range(stalled)
            ]
            for t in asks:
                t.start()
            deadline = time.monotonic() + 30
            # As many rewrites with the model as there are search threads (were they held,
            # none would be left for the search below).
            while len(slow.requests) < SEARCH_THREADS and time.monotonic() < deadline:
                time.sleep(0.05)
            found = httpx.get(api.url + "/api/search", params={"q": "retries"}, timeout=5)
            assert found.status_code == 200 and found.json()["hits"]
            assert httpx.get(api.url + "/api/health", timeout=10).status_code == 200
            slow.stop()  # the stalled rewrites fail: their readers get answers or errors
            for t in asks:
                t.join(60)
