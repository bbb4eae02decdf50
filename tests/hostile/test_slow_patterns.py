"""Text a page or a question can hold cannot make the patterns that read it slow.

A question that asks for an amount ("how many", "size", "limit") has each retrieved passage
read for a number with its unit (``kb_qa.answer.amounts``). Its number pattern could end at
any digit of a run and was tried from every digit, so a paragraph of 6,000 digits (a long
ID, a list of numbers written "1,2,3,…") made each such question take 19 s of a search
thread, and 8,000 digits 35 s: a handful of readers asking "how many" held every thread.
Now a number is read once from the start of its run of digits and separators.
"""

from __future__ import annotations

import subprocess
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import httpx
import pytest
from conftest import write_files
from uvicorn_thread import serve_kb

from kb_qa.answer.amounts import states_amount
from kb_qa.kb.knowledge_base import KnowledgeBase

DIGITS = "1" * 6_000


@pytest.mark.parametrize(
    "text",
    [
        "1" * 10_000,
        "1," * 5_000,
        "1.," * 3_000,
        "1,," * 3_000,
        ",." * 5_000,
        "1-" * 5_000,
        "1x" * 5_000,
        "1" * 5_000 + " - " + "1" * 5_000,
    ],
    ids=lambda text: repr(text[:4]),
)
def test_reading_a_run_of_digits_for_an_amount_is_linear(text: str) -> None:
    started = time.perf_counter()
    assert not states_amount(text)
    assert states_amount(text + "1 ms")
    assert time.perf_counter() - started < 1.0


@pytest.mark.parametrize(
    ("passage", "states"),
    [
        ("Retries wait .5 s between attempts.", True),
        ("A job may run 1,5 hours.", True),
        ("Limits: 1,000,000 requests per day.", True),
        ("Version 2.4.1 was released.", False),
        ("Ports 8000,8001 and 8002.", False),
    ],
)
def test_amounts_read_as_before(passage: str, states: bool) -> None:
    assert states_amount(passage) is states


@pytest.fixture(scope="module")
def kb(tmp_path_factory: pytest.TempPathFactory) -> Iterator[KnowledgeBase]:
    root = tmp_path_factory.mktemp("digits")
    note = f"# Widgets\n\n## Widgets per crate\n\nThe widgets per crate are {DIGITS}\n"
    vault = write_files(root / "vault", {"widgets.md": note})
    kb = KnowledgeBase(vault, index_dir=root / "idx", embed_model="hash", rate_limit=0)
    kb.index()
    yield kb
    kb.close()


def test_a_page_of_digits_does_not_hold_a_question_for_an_amount(kb: KnowledgeBase) -> None:
    body = {"question": "How many widgets per crate?", "stream": False}
    with serve_kb(kb) as server:
        started = time.perf_counter()
        response = httpx.post(server.url + "/api/ask", json=body, timeout=60)
        took = time.perf_counter() - started
    assert response.status_code == 200, response.text
    assert response.json()["citations"][0]["path"] == "widgets.md"
    assert took < 5.0, f"the answer took {took:.1f} s"


def test_a_line_of_blanks_does_not_hold_kb_qa_search(
    make_vault: Callable[..., Path], run_cli: Callable[..., subprocess.CompletedProcess[str]]
) -> None:
    # kb-qa search prints each hit's opening words; its table-rule pattern paired two runs
    # of blanks, so one line of 30,000 blanks in a section took 19 s to print.
    blanks = " " * 30_000 + "x"
    vault = make_vault(
        {
            "crates.md": f"# Widgets\n\n## Crates\n\nwidgets crates\n{blanks}\n",
            "rules.md": f"# Rules\n\n## Widget rules\n\nwidgets rules\n|---{blanks}\n",
        }
    )
    assert run_cli("index", str(vault)).returncode == 0
    started = time.perf_counter()
    searched = run_cli("search", "widgets", "--vault", str(vault))
    took = time.perf_counter() - started
    assert searched.returncode == 0, searched.stderr
    assert "crates.md" in searched.stdout and "rules.md" in searched.stdout
    assert took < 10.0, f"kb-qa search took {took:.1f} s"
