"""No-key answers on the sample site with the real default model: the passage that answers,
whole; honest coverage; follow-ups that use the conversation.
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import Iterator
from typing import Any

import pytest
from api_helpers import indexed_sample

from kb_qa.answer import Citations, Done, Event, answer
from kb_qa.extractive import LABEL, NOT_COVERED, extract
from kb_qa.kb import KnowledgeBase
from kb_qa.prompt import Turn
from kb_qa.types import Chunk, Hit


@pytest.fixture(scope="module")
def kb(tmp_path_factory: pytest.TempPathFactory) -> Iterator[KnowledgeBase]:
    kb = indexed_sample(tmp_path_factory.mktemp("extractive"), embed_model="minilm")
    yield kb
    kb.close()


def ask(kb: KnowledgeBase, question: str, **kwargs: Any) -> tuple[Done, Citations]:
    async def run() -> list[Event]:
        return [e async for e in answer(kb, question, **kwargs)]

    events = asyncio.run(run())
    done, citations = events[-1], events[-2]
    assert isinstance(done, Done) and isinstance(citations, Citations)
    return done, citations


@pytest.mark.parametrize(
    ("question", "must"),
    [
        ("How many times is a failing job attempted by default?", "five times"),
        ("Which exit code makes a job fail permanently without retries?", "**78**"),
        # The docs say it with a class name: `lumen.PermanentError`.
        ("Which exit code makes a job fail permanently?", "**78**"),
        # Short, in plain words: its best similarity is under the threshold, but one of the
        # best passages holds every word of it.
        ("what port does the server listen on", "port 7420 by default"),
        ("Is there a dashboard?", "The dashboard at `/ui`"),
        ("重试策略的默认值是什么？", "| `retry.max_attempts` | `5` |"),
        ("如何轮换令牌？", "lumen token rotate"),
        ("How do I install Lumen with Docker?", "docker run -d --name lumen"),
    ],
)
def test_the_answer_carries_the_passage_that_answers(
    kb: KnowledgeBase, question: str, must: str
) -> None:
    done, citations = ask(kb, question)
    assert done.covered and done.text.startswith(LABEL)
    assert must in done.text
    # Never a raw tab marker, never a dangling colon at the end, never a marker in code.
    assert '=== "' not in done.text
    assert not done.text.rstrip().endswith(":")
    for fence in re.findall(r"```.*?```", done.text, re.S):
        assert not re.search(r"\s\[\d+\]", fence)
    assert citations.citations[0].number == 1


def test_a_long_table_shows_its_header_and_the_rows_that_answer() -> None:
    rows = [("--queue NAME", "default", "Target queue"), ("--priority N", "5", "Job priority")]
    rows += [(f"--flag-{n}", "off", f"Unrelated switch {n}") for n in range(8)]
    table = "| Option | Default | Description |\n|---|---|---|\n" + "\n".join(
        f"| `{a}` | `{b}` | {c} |" for a, b, c in rows
    )
    text = "## Options\n\nOptions of enqueue:\n\n" + table + "\n"
    chunk = Chunk(
        "c",
        "cli.md",
        "cli/",
        "options",
        "Options",
        ("CLI", "Options"),
        2,
        text,
        0,
        len(text),
        1,
        14,
        "h",
    )
    answer = "".join(extract("Which option sets the job priority?", [(1, Hit(chunk, 1.0))]))
    assert "Options of enqueue:\n\n| Option | Default | Description |\n|---|---|---|" in answer
    assert "| `--priority N` | `5` | Job priority |" in answer
    assert "--flag-3" not in answer  # rows that say nothing about the question


def test_code_under_a_tab_keeps_its_label_and_stays_whole(kb: KnowledgeBase) -> None:
    done, _ = ask(kb, "How do I install Lumen with Docker?")
    assert "**Docker:**\n\n```bash\ndocker run -d --name lumen \\" in done.text
    assert done.text.count("```") % 2 == 0


@pytest.mark.parametrize(
    "question",
    ["What is the capital of France?", "How do I bake sourdough bread?", "如何用微信付款？"],
)
def test_questions_the_docs_do_not_cover_say_so_first(kb: KnowledgeBase, question: str) -> None:
    done, citations = ask(kb, question)
    assert not done.covered
    assert done.text.startswith(NOT_COVERED)
    assert len(citations.citations) >= 1  # and it names what is nearby, cited


def test_a_follow_up_is_searched_with_the_previous_question(kb: KnowledgeBase) -> None:
    history = [
        Turn("user", "What is the default retry backoff?"),
        Turn("assistant", "It starts at 10 s and doubles [1]."),
    ]
    _done, citations = ask(kb, "How do I change it for just one job?", history=history)
    # With the conversation the first passage is the per-job retry override.
    assert citations.citations[0].anchor == "per-job"
    assert citations.citations[0].path == "docs/guides/retries.md"
