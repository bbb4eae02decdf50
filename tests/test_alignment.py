"""A model's citations point at the passage each sentence was drawn from: a real index of
sample_site, litellm against the test LLM server, the citations as the API streams them."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path

import pytest
from api_helpers import indexed_sample
from llm_server import Reply, ScriptedLLM

from kb_qa.answer.alignment import claims
from kb_qa.answer.answering import Citations, Done, answer
from kb_qa.answer.citations import Citation
from kb_qa.kb.knowledge_base import KnowledgeBase


@pytest.fixture(scope="module")
def kb(tmp_path_factory: pytest.TempPathFactory) -> Iterator[KnowledgeBase]:
    kb = indexed_sample(tmp_path_factory.mktemp("alignment"))
    yield kb
    kb.close()


@pytest.fixture(scope="module")
def scripted() -> Iterator[ScriptedLLM]:
    server = ScriptedLLM(Reply())
    server.missing = []
    with server:
        yield server


def ask(kb: KnowledgeBase, llm: ScriptedLLM, question: str, template: str) -> list[Citation]:
    """The citations of the model's reply ``template`` to ``question``: its ``{{Heading}}``
    becomes the number the prompt gave that section (``ScriptedLLM``)."""
    llm.template = template
    settings = kb.settings.replace(model="openai/test", api_base=llm.url)

    async def run() -> list[Citation]:
        events = [e async for e in answer(kb, question, settings=settings)]
        (citations,) = [e for e in events if isinstance(e, Citations)]
        return list(citations.citations)

    citations = asyncio.run(run())
    assert not llm.missing, f"the prompt had no excerpt for {llm.missing}"
    return citations


def answered(kb: KnowledgeBase, llm: ScriptedLLM, question: str) -> tuple[list[Citation], Done]:
    """The citations and the finished answer of the model's reply (``llm.template``)."""
    settings = kb.settings.replace(model="openai/test", api_base=llm.url)

    async def run() -> list:
        return [e async for e in answer(kb, question, settings=settings)]

    events = asyncio.run(run())
    (citations,) = [e.citations for e in events if isinstance(e, Citations)]
    (done,) = [e for e in events if isinstance(e, Done)]
    return list(citations), done


def source_of(kb: KnowledgeBase, citation: Citation) -> str:
    return (Path(kb.settings.vault) / citation.path).read_text(encoding="utf-8")


def test_sentences_and_their_citation_groups_code_aside() -> None:
    reply = (
        "Lumen retries five times [1]. The delay doubles.[2][3] Use `x[5]` [4]\n- a list item [1]"
    )
    assert claims(reply) == [
        ("Lumen retries five times", [1]),
        ("The delay doubles", [2, 3]),
        ("Use `x[5]`", [4]),
        ("- a list item", [1]),
    ]
    # A colon, semicolon or ". " inside code ends no sentence.
    assert claims(
        'To disable retries, set `"max_attempts": 1` in it [2]. Run `a; b. c` now [3].'
    ) == [
        ('To disable retries, set `"max_attempts": 1` in it', [2]),
        ("Run `a; b. c` now", [3]),
    ]
    assert claims("Run this:\n```\nx = 1\n```\nThen it retries [1].") == [("Then it retries", [1])]


def test_a_cited_sentence_highlights_the_passage_it_was_drawn_from(
    kb: KnowledgeBase, scripted: ScriptedLLM
) -> None:
    (citation,) = ask(
        kb,
        scripted,
        "How many times is a failing job attempted by default?",
        "A job that always fails is attempted five times, with nominal delays of 10 s, 20 s, "
        "40 s and 80 s {{Default retry policy}}.",
    )
    source = source_of(kb, citation)
    assert source[citation.start : citation.end] == citation.text
    assert citation.text.startswith("With these defaults a job that always fails is attempted")
    assert "| `retry.max_attempts`" not in citation.text  # the table above is not highlighted
    assert citation.line_start == source.count("\n", 0, citation.start) + 1


def test_a_table_row_cited_highlights_that_row_only(
    kb: KnowledgeBase, scripted: ScriptedLLM
) -> None:
    (citation,) = ask(
        kb,
        scripted,
        "What does the error code LUM-3001 mean?",
        "`LUM-3001` (HTTP 429, `rate_limited`) means too many requests; wait for the "
        "`Retry-After` header {{Error codes}}.",
    )
    assert citation.text.startswith("| `LUM-3001` | 429 | `rate_limited`")
    assert citation.text.count("\n") == 0
    assert source_of(kb, citation)[citation.start : citation.end] == citation.text


def test_a_decimal_is_one_word_not_the_digits_of_another(
    kb: KnowledgeBase, scripted: ScriptedLLM
) -> None:
    """Read as the digits "2" and "0", "2.0" also matched the ``0.2`` of the jitter row, and
    the highlight ran from the rows on delays to the bottom of the table."""
    (citation,) = ask(
        kb,
        scripted,
        "How fast do retry delays grow?",
        "Delays grow by a factor of 2.0 {{Default retry policy}}.",
    )
    assert "| `retry.multiplier` | `2.0` |" in citation.text
    assert "retry.jitter" not in citation.text and "retry.max_backoff" not in citation.text


def test_a_list_item_cited_highlights_that_item_only(
    kb: KnowledgeBase, scripted: ScriptedLLM
) -> None:
    question = "When does an attempt count as failed?"
    (citation,) = ask(
        kb,
        scripted,
        question,
        "An attempt also fails when the worker stops sending heartbeats for longer than "
        "`workers.lease_timeout`, for example after a crash {{What counts as a failure}}.",
    )
    assert citation.text.startswith("- The worker stops sending heartbeats")
    assert "non-zero status" not in citation.text  # the list's other items are not marked
    assert source_of(kb, citation)[citation.start : citation.end] == citation.text
    # Two sentences of two items: the run of both; a sentence of the whole list: all of it.
    (both,) = ask(
        kb,
        scripted,
        question,
        "It fails when the handler exits with a non-zero status {{What counts as a failure}}. "
        "It also fails when the attempt exceeds the job's timeout {{What counts as a failure}}.",
    )
    assert both.text.startswith("- The handler exits") and "`timeout`" in both.text
    assert "heartbeats" not in both.text
    (whole,) = ask(
        kb,
        scripted,
        question,
        "A handler's non-zero exit, a timeout and missed heartbeats all fail an attempt "
        "{{What counts as a failure}}.",
    )
    assert "non-zero status" in whole.text and "heartbeats" in whole.text


def test_a_sentence_of_no_single_passage_keeps_the_whole_section(
    kb: KnowledgeBase, scripted: ScriptedLLM
) -> None:
    question = "How many times is a failing job attempted by default?"
    (citation,) = ask(kb, scripted, question, "That section explains it {{Default retry policy}}.")
    assert citation.text.startswith("## Default retry policy")
    (whole,) = [c for c in kb.store.chunks() if c.heading_path[-1:] == ("Default retry policy",)]
    assert citation.text == whole.text


def test_two_sentences_from_passages_apart_highlight_both(
    kb: KnowledgeBase, scripted: ScriptedLLM
) -> None:
    (citation,) = ask(
        kb,
        scripted,
        "How is the backoff delay computed?",
        "With the exponential strategy the delay before jitter is initial_backoff × "
        "multiplier^(n−1) {{How the backoff delay is computed}}. The cap is applied before "
        "jitter, so a delay can exceed max_backoff by up to the jitter fraction "
        "{{How the backoff delay is computed}}.",
    )
    assert source_of(kb, citation)[citation.start : citation.end] == citation.text
    assert "| `exponential` |" in citation.text  # the first sentence's row ...
    assert "The cap is applied **before** jitter" in citation.text  # ... and the second's note


def test_citations_at_a_paragraphs_end_cover_its_uncited_sentences(
    kb: KnowledgeBase, scripted: ScriptedLLM
) -> None:
    """A model that cites once, at the end of its paragraph, drew every sentence of it from
    there: the highlight holds the first sentence's passage too, not only the last's."""
    assert claims("A is one. B is two. C is three. [1][2]\nD is four [3].") == [
        ("A is one.", [1, 2]),
        ("B is two.", [1, 2]),
        ("C is three", [1, 2]),
        ("D is four", [3]),
    ]
    # After a marker inside a sentence, the rest of that sentence is not the next one's.
    assert claims("Jobs retry [1], up to five times. Then they die [2].") == [
        ("Jobs retry", [1]),
        ("Then they die", [2]),
    ]
    assert claims("Jobs retry.[1] They back off. Then they die [2].") == [
        ("Jobs retry", [1]),
        ("They back off.", [2]),
        ("Then they die", [2]),
    ]
    (citation,) = ask(
        kb,
        scripted,
        "How is the backoff delay computed?",
        "The result is capped at `max_backoff`, then jitter is applied. Jitter prevents a "
        "burst of failed jobs from retrying in lockstep. The cap is applied before jitter, "
        "so a delay can exceed `max_backoff` by up to the jitter fraction. "
        "{{How the backoff delay is computed}}",
    )
    assert source_of(kb, citation)[citation.start : citation.end] == citation.text
    assert citation.text.startswith("The result is capped at `max_backoff`")  # the first ...
    assert "The cap is applied **before** jitter" in citation.text  # ... to the last
    assert "| Strategy |" not in citation.text  # the table above them is not highlighted


def test_a_sentence_citing_nothing_is_cited_where_it_was_drawn_from(
    kb: KnowledgeBase, scripted: ScriptedLLM
) -> None:
    """A model cited its first sentence and not the next, drawn word for word from an
    excerpt it never cited: the reader had nothing to check it against. A sentence in the
    model's own words stays as it is."""
    scripted.template = (
        "A job that always fails is attempted five times, with nominal delays of 10 s, 20 s, "
        "40 s and 80 s {{Default retry policy}}. Jitter prevents a burst of failed jobs from "
        "retrying in lockstep. Tell me if you would like to know more!"
    )
    citations, done = answered(kb, scripted, "How do retries back off?")
    assert done.text.startswith("A job that always fails is attempted five times")
    assert "Jitter prevents a burst of failed jobs from retrying in lockstep [2]. Tell" in done.text
    assert done.text.endswith("Tell me if you would like to know more!")
    first, second = citations
    assert first.heading_path[-1] == "Default retry policy"
    assert second.number == 2 and second.heading_path[-1] == "How the backoff delay is computed"
    assert "retrying in lockstep" in second.text  # the passage it was drawn from
    assert source_of(kb, second)[second.start : second.end] == second.text


def test_a_sentence_whose_citation_names_no_excerpt_is_cited_where_it_was_drawn_from(
    kb: KnowledgeBase, scripted: ScriptedLLM
) -> None:
    """A citation of a number no excerpt has ("[420]") was dropped, and its sentence was
    then read as covered by the line's last citation: the reader got no chip for it,
    where the same sentence with no marker at all was cited."""
    scripted.template = (
        "A job that always fails is attempted five times, with nominal delays of 10 s, 20 s, "
        "40 s and 80 s {{Default retry policy}}. Jitter prevents a burst of failed jobs from "
        "retrying in lockstep [420]. That is the default {{Default retry policy}}."
    )
    citations, done = answered(kb, scripted, "How do retries back off?")
    assert "retrying in lockstep [2]. That is the default [1]." in done.text, done.text
    assert citations[1].heading_path[-1] == "How the backoff delay is computed"


def test_a_table_row_and_the_paragraph_after_it_highlight_from_that_row(
    kb: KnowledgeBase, scripted: ScriptedLLM
) -> None:
    """Two sentences of one section, one from the `retry.max_backoff` row and one from the
    paragraph under the table, highlighted the table's header and every row from the first."""
    (citation,) = ask(
        kb,
        scripted,
        "How long can a retry delay get?",
        "The upper bound for any single delay, `retry.max_backoff`, is `10m` by default "
        "{{Default retry policy}}. A job that always fails is attempted five times, with "
        "nominal delays of 10 s, 20 s, 40 s and 80 s between attempts {{Default retry policy}}.",
    )
    assert citation.text.startswith("| `retry.max_backoff` | `10m` |"), citation.text
    assert citation.text.endswith("the job being declared dead.")
    assert source_of(kb, citation)[citation.start : citation.end] == citation.text
