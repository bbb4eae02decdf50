"""No-key answers in Chromium: clicking a citation highlights exactly the passage the answer
quoted (a table's quoted rows, a list, a tab, an admonition), not the whole section, and
brings it into view below Material's sticky header.

The widget of the built sample site (``widget_stack``) is pointed at a second, real kb-qa API
with no model configured and the default MiniLM model, so its answers are extractive.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

import pytest
from api_helpers import indexed_sample, parse_sse
from browser import sync_playwright_or_skip
from passage_words import reader_words, words
from uvicorn_thread import UvicornThread
from widget_stack import (
    HEADING_IN_VIEW,
    MARK_IN_VIEW,
    MARKS,
    MARKS_TEXT,
    Stack,
    ask,
    open_page,
    shot,
)

from kb_qa.serve.app import create_app

sync_playwright_or_skip()

# Questions (most from the dev split of bench/questions/answers.jsonl), with the kind of
# block the answer quotes first.
QUESTIONS = [
    ("lumen exited with status 4 — what does that mean?", "table row"),
    ("Got LUM-2003 back from the API. What does it mean?", "table row"),
    ("How long does Lumen keep finished jobs before it deletes them?", "prose"),
    ("The curl install script grabs the latest release. How do I get exactly 2.4.1?", "tab"),
    ("How do I install Lumen with Homebrew on my Mac?", "later tab"),
    ("Running Lumen in Docker, where do I find the bootstrap token?", "admonition"),
    ("Which LUM error codes are safe to retry?", "admonition"),
    ("Once the bug is fixed, how do I re-run all the dead sync-crm jobs?", "code"),
    ("What happens on the night the clocks spring forward?", "list item"),
    ("How many API calls per minute can a single token make?", "prose"),
    ("How many job completions per second can a SQLite-backed server handle?", "prose"),
    ("How many times is a failing job retried?", "prose under a table"),
    # Grown over the paragraphs and code around it (extractive._widened): one highlight
    ("How long is a new API token valid if I don't pass --ttl?", "grown passage"),
]


@pytest.fixture(scope="module")
def extractive_api(tmp_path_factory: pytest.TempPathFactory, stack: Stack) -> Iterator[str]:
    kb = indexed_sample(
        tmp_path_factory.mktemp("passages"),
        embed_model="minilm",
        cors_origins=(stack.site,),
        rate_limit=0,
    )
    try:
        with UvicornThread(create_app(kb)) as api:
            yield api.url
    finally:
        kb.close()


@pytest.fixture
def page(new_page: Any, stack: Stack, extractive_api: str) -> Any:
    page = new_page()
    # The built site's widget asks the scripted-LLM API; send its questions to the no-key one.
    page.route(
        re.compile(re.escape(stack.api) + r"/api/"),
        lambda route: route.continue_(url=route.request.url.replace(stack.api, extractive_api)),
    )
    return page


@pytest.mark.parametrize(("question", "kind"), QUESTIONS, ids=[k for _, k in QUESTIONS])
def test_the_highlight_is_the_quoted_passage(
    page: Any, stack: Stack, question: str, kind: str
) -> None:
    open_page(page, stack.site + "/")
    page.keyboard.press("Control+k")
    with page.expect_response(re.compile(r"/api/ask")) as response:
        ask(page, question)
    assert response.value.ok
    answer = page.locator(".kbq-answer").last.inner_text()
    assert answer.startswith("No language model is configured"), answer
    # Citation 1 is the passage the answer quotes first; the stream's citations say what.
    (citations,) = [
        data for name, data in parse_sse(response.value.text().splitlines()) if name == "citations"
    ]
    quoted = citations["citations"][0]["text"]
    page.locator("a.kbq-cite").first.click()
    page.wait_for_function(f"{MARKS}.length > 0")
    page.wait_for_function(MARK_IN_VIEW)
    marked = page.evaluate(MARKS_TEXT)
    shot(page, f"passage-{kind.replace(' ', '-')}-{abs(hash(question)) % 1000}")
    assert words(marked) == reader_words(quoted), f"marked {marked!r}\nquoted {quoted!r}"
    if kind.endswith("tab"):
        # The tab opened for the passage is the one Material underlines: its indicator
        # stayed under the first tab when the widget checked another tab's radio silently.
        later = kind == "later tab"
        page.wait_for_function(
            f"""() => {{
                const set = {MARKS}[0].closest('.tabbed-set');
                const inputs = [...set.querySelectorAll(':scope > input')];
                const shown = inputs.findIndex(i => i.checked);
                const label = set.querySelectorAll('.tabbed-labels > label')[shown];
                const x = parseFloat(set.style.getPropertyValue('--md-indicator-x'));
                return (shown > 0) === {str(later).lower()} && x === label.offsetLeft;
            }}""",
            timeout=5000,
        )
    # The section's heading is not hidden under the sticky header: the first mark is below it.
    below = page.evaluate(
        f"""() => {{
            const header = document.querySelector('.md-header');
            const top = {MARKS}[0].getBoundingClientRect().top;
            return !header || top >= header.getBoundingClientRect().bottom - 1;
        }}"""
    )
    assert below
    # And the heading itself shows above the passage whenever both fit in the window.
    anchor = citations["citations"][0]["anchor"]
    fits = page.evaluate(
        f"""(id) => {{
            const header = document.querySelector('.md-header');
            const room = window.innerHeight - (header ? header.getBoundingClientRect().bottom : 0);
            const marks = {MARKS};
            const bottom = Math.max(...marks.map(m => m.getBoundingClientRect().bottom));
            return bottom - document.getElementById(id).getBoundingClientRect().top <= room - 16;
        }}""",
        anchor,
    )
    assert not fits or page.evaluate(HEADING_IN_VIEW, anchor), anchor
