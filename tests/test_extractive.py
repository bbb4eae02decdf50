"""No-key answers on the sample site with the real default model: the passage that answers,
whole; honest coverage; follow-ups that use the conversation.
"""

from __future__ import annotations

import dataclasses
import os
import re
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from api_helpers import asked as ask
from api_helpers import indexed_sample

from kb_qa.answer.alignment import narrowed
from kb_qa.answer.amounts import asks_amount, states_amount
from kb_qa.answer.answering import Citations
from kb_qa.answer.blocks import passages
from kb_qa.answer.citations import Citation
from kb_qa.answer.extractive import LABEL, NOT_COVERED, extract, quote
from kb_qa.answer.prepare import (
    follow_up_queries,
    key_terms,
    leans_on_conversation,
    may_stand_alone,
    without_markup,
)
from kb_qa.answer.prompt import Turn
from kb_qa.index.keyword import KeywordIndex
from kb_qa.kb.knowledge_base import KnowledgeBase
from kb_qa.types import Chunk, Hit


@pytest.fixture(scope="module")
def kb(tmp_path_factory: pytest.TempPathFactory) -> Iterator[KnowledgeBase]:
    kb = indexed_sample(tmp_path_factory.mktemp("extractive"), embed_model="minilm")
    yield kb
    kb.close()


@pytest.mark.parametrize(
    ("question", "must"),
    [
        ("How many times is a failing job attempted by default?", "five times"),
        ("Which exit code makes a job fail permanently without retries?", "**78**"),
        # The docs say it with a class name: `lumen.PermanentError`.
        pytest.param(
            "Which exit code makes a job fail permanently?",
            "**78**",
            # A known miss of the lead rule: the CLI reference's "Exit codes" heading
            # restates the question and leads. Counting heading words 1.5x (what leads it
            # here) gained two dev questions in bench/passages.py; without it, this passes.
            marks=pytest.mark.xfail(strict=True, reason="the heading 'Exit codes' leads"),
        ),
        # Short, in plain words: its best similarity is under the threshold, but one of the
        # best passages holds every word of it.
        ("what port does the server listen on", "port 7420 by default"),
        ("Is there a dashboard?", "The dashboard at `/ui`"),
        ("重试策略的默认值是什么？", "| `retry.max_attempts` | `5` |"),
        ("如何轮换令牌？", "lumen token rotate"),
        ("How do I install Lumen with Docker?", "docker run -d --name lumen"),
        # The "s" of "What's" is no word of the question: with it, "the server's version"
        # outscored the table that holds the package.
        (
            "What's the pip package for the Python client, and which Python version does it need?",
            "| Python | `lumen-client` | `pip install lumen-client` | Python 3.9 |",
        ),
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


@pytest.mark.parametrize(
    "question",
    [
        "How much does Lumen cost?",
        "Who founded Lumen?",  # not a passage's "not found": words as written
        "Where is Lumen's headquarters?",
        "Who is the CEO of Lumen?",
        # a name made on the product's that the docs never write ("ConvergenceWarning"
        # alone was not covered; with "Lumen" in front it quoted job handlers)
        "What does LumenConvergenceWarning mean?",
        "How do I configure LumenTurboMode?",
        "What is LUMEN_TURBO_MODE for?",
    ],
)
def test_a_question_naming_the_product_is_covered_only_by_what_else_it_asks(
    kb: KnowledgeBase, question: str
) -> None:
    """Close to every section by the product's name alone (0.49-0.62 against the 0.36
    threshold), these were answered with a quote of installation or configuration text."""
    done, _ = ask(kb, question)
    assert not done.covered and done.text.startswith(NOT_COVERED)


@pytest.mark.parametrize(
    "question",
    [
        "Does Lumen support Windows?",  # 0.26 without the name: its words, side by side
        "How do I cancel a job in Lumen?",
        "How much RAM does a Lumen server need?",  # 0.32 without the name
        "What is Lumen?",  # nothing asked besides the name
        "Lumen windows?",  # 0.18 without the name: the word, in the best passage
        "How much memory does Lumen need?",  # the "Memory" row of a table
        "Which job does LUMEN_JOB_ID name?",  # a name made on the product's, that it writes
        "How do I create a LumenClient?",  # ... with its parts apart: `lumen.Client()`
    ],
)
def test_a_question_naming_the_product_and_what_the_docs_say_is_covered(
    kb: KnowledgeBase, question: str
) -> None:
    done, _ = ask(kb, question)
    assert done.covered, done.text


def test_the_product_is_named_by_its_site_names_words_that_its_pages_repeat() -> None:
    from kb_qa.answer.product import product_words, without_product

    pages = ["paperless-ngx stores documents", "run paperless-ngx", "the ngx-docs", "other"]
    found = product_words("Paperless-ngx Documentation", pages)
    assert found == {"paperless-ngx", "paperless", "ngx"}  # "documentation" is filler
    assert without_product("Does paperless have a mobile app?", found) == "Does have a mobile app?"
    assert without_product("What is Paperless-ngx's licence?", found) == "What is licence?"
    assert without_product("How do I tag documents?", found) is None  # it does not name it


def test_a_french_reader_is_told_in_french_that_the_docs_do_not_cover_it(
    kb: KnowledgeBase,
) -> None:
    """The reader's language (their page's ``<html lang>``) is the answer's: its own
    sentences are French, the nearest sections' headings as the docs have them."""
    done, citations = ask(kb, "How do I bake sourdough bread?", lang="fr-FR")
    assert not done.covered
    assert done.text.startswith(
        "Cette documentation ne semble pas traiter ce point. Les sections les plus proches\u00a0:"
    )
    assert len(citations.citations) >= 1


def test_a_follow_up_is_searched_with_the_previous_question(kb: KnowledgeBase) -> None:
    history = [
        Turn("user", "What is the default retry backoff?"),
        Turn("assistant", "It starts at 10 s and doubles [1]."),
    ]
    _done, citations = ask(kb, "How do I change it for just one job?", history=history)
    # With the conversation the first passage is the per-job retry override.
    assert citations.citations[0].anchor == "per-job"
    assert citations.citations[0].path == "docs/guides/retries.md"


def test_a_follow_up_of_a_follow_up_and_a_correction_keep_the_topic(kb: KnowledgeBase) -> None:
    """ "and for just one job?" after "and how do I change it?" after a question on the retry
    backoff carried "change" alone and was not covered; "no, I meant from the CLI" after
    "How do I cancel a job?" was read as a question of its own, and not covered."""

    def turns(*asked: str) -> list[Turn]:
        return [t for q in asked for t in (Turn("user", q), Turn("assistant", "[1]"))]

    chain = turns("What is the default retry backoff?", "and how do I change it?")
    done, citations = ask(kb, "and for just one job?", history=chain)
    assert done.covered and citations.citations[0].anchor == "per-job", done.text
    done, citations = ask(kb, "no, I meant from the CLI", history=turns("How do I cancel a job?"))
    assert done.covered and "`cancel`" in done.text.split("See also")[0], done.text  # lumen jobs
    # A new question opening with "No" is not a correction.
    assert follow_up_queries("No module named pip, what now?", chain) == []


def test_a_short_follow_up_searches_with_the_previous_questions_key_terms(
    kb: KnowledgeBase,
) -> None:
    previous = "What time zone do cron schedules use by default?"
    assert key_terms(previous) == "time zone cron schedules"
    history = [Turn("user", previous), Turn("assistant", "UTC [1].")]
    assert follow_up_queries("and how do I change it?", history) == [
        "and how do I change it?\ntime zone cron schedules",
        "time zone cron schedules\nand how do I change it?",
    ]
    # A question that stands on its own is searched as it is.
    long = "Which exit code makes a job fail permanently without any retry attempts being made?"
    assert follow_up_queries(long, history) == []
    done, citations = ask(kb, "and how do I change it?", history=history)
    cited = [(c.path, c.anchor) for c in citations.citations]
    assert ("docs/guides/scheduling.md", "time-zones") in cited[:3], cited
    assert done.covered
    # Alone, it has nothing to go on: none of the time zone sections.
    _, alone = ask(kb, "and how do I change it?")
    assert ("docs/guides/scheduling.md", "time-zones") not in [
        (c.path, c.anchor) for c in alone.citations
    ]


# Code as the docs write it: placeholders, HTML-looking text, entities, backslashes,
# citation-looking brackets, attribute-list-looking braces, links inside code.
CODE_SAMPLES = [
    "`lumen jobs cancel <id>`",
    "`<data_dir>/bootstrap-token`",
    "`lumen <command> --help`",
    "`a &amp; b &lt;tag&gt;`",
    "`C:\\\\Users\\\\me\\\\*.md`",
    "`items[1]` and `matrix[2][3]`",
    "`{ #custom-id }`",
    "`[text](url.md)` and `[[Note#Heading]]`",
    "``code with a ` backtick <b>``",
    "`<img src=x onerror=alert(1)>`",
]


@pytest.mark.parametrize("code", CODE_SAMPLES)
def test_inline_code_in_an_answer_is_the_docs_bytes(code: str) -> None:
    text = f"## Cancel\n\nTo stop it, run {code} in a <b>shell</b> [1].\n"
    chunk = Chunk(
        "c",
        "jobs.md",
        "jobs/",
        "cancel",
        "Cancel",
        ("Jobs", "Cancel"),
        2,
        text,
        0,
        len(text),
        1,
        3,
        "h",
    )
    answer = "".join(extract("How do I stop it in a shell?", [(1, Hit(chunk, 1.0))]))
    assert code in answer
    assert "<b>" not in answer.replace(code, "")  # HTML outside code is still dropped


def test_a_fenced_block_inside_a_list_is_the_docs_bytes() -> None:
    fence = "   ```bash\n   lumen <command> --help > out.txt 2>&1 # [1] {.x}\n   ```"
    text = f"## Help\n\n1. Print the help of any command:\n\n{fence}\n"
    chunk = Chunk(
        "c", "cli.md", "cli/", "help", "Help", ("CLI", "Help"), 2, text, 0, len(text), 1, 6, "h"
    )
    answer = "".join(extract("How do I print the help of a command?", [(1, Hit(chunk, 1.0))]))
    assert "lumen <command> --help > out.txt 2>&1 # [1] {.x}" in answer


def test_cancelling_a_job_quotes_the_command_with_its_placeholder(kb: KnowledgeBase) -> None:
    # Scoped to the guides (as a reader's page filter does): what is tested is that the
    # quoted command keeps its <id>; which section ranks first over the whole site is
    # bench/passages.py's question (on one fresh machine the CLI reference outranked it).
    done, _ = ask(
        kb, "How do I cancel a job with the lumen command line?", include=["docs/guides/*"]
    )
    assert "lumen jobs cancel <id>" in done.text


def _section(text: str) -> Chunk:
    return Chunk(
        "c",
        "errors.md",
        "errors/",
        "codes",
        "Codes",
        ("Errors", "Codes"),
        2,
        text,
        100,
        100 + len(text),
        10,
        10 + text.count("\n"),
        "h",
    )


def test_a_citation_quotes_the_rows_the_answer_shows_not_the_whole_table() -> None:
    rows = [f"| `LUM-30{n:02d}` | Unrelated failure number {n} |" for n in range(14)]
    rows[1] = "| `LUM-3001` | The queue is full: raise `queue.max_depth` |"
    text = (
        "## Codes\n\nEvery error code:\n\n| Code | Meaning |\n|---|---|\n" + "\n".join(rows) + "\n"
    )
    result = quote("What does LUM-3001 mean?", [(1, Hit(_section(text), 1.0))])
    a, b = result.quoted[1]
    assert text[a:b] == rows[1]  # one row, exactly the docs' bytes
    assert rows[1] in "".join(result.pieces)


def test_the_rows_an_answer_shows_are_the_rows_the_page_highlights() -> None:
    rows = [
        "| `retry.max_attempts` | `5` | Total attempts |",
        "| `retry.strategy` | `exponential` | How the delay grows |",
        "| `retry.initial_backoff` | `10s` | Delay before the second attempt |",
        "| `retry.multiplier` | `2.0` | Growth factor |",
        "| `retry.max_backoff` | `10m` | Upper bound for any single delay |",
        "| `retry.jitter` | `0.2` | Random spread |",
    ]
    text = "## Codes\n\n| Setting | Default | Meaning |\n|---|---|---|\n" + "\n".join(rows) + "\n"
    result = quote("What is the default retry backoff?", [(1, Hit(_section(text), 1.0))])
    a, b = result.quoted[1]
    shown = "".join(result.pieces)
    # One run: the two backoff rows and the row between them, shown as they are highlighted.
    assert text[a:b] == "\n".join(rows[2:5])
    assert text[a:b] in shown and rows[1] not in shown


def test_a_table_continued_from_the_previous_piece_is_shown_under_its_header() -> None:
    header = "| Key | Type | Default |\n|---|---|---|"
    rows = [f"| `scheduler.opt{n}` | string | `x{n}` |" for n in range(3)]
    rows.append("| `retry.jitter` | float | `0.2` |")
    text = "\n".join(rows) + "\n"  # the second piece of a long section: rows only
    chunk = dataclasses.replace(_section(text), piece=1, context=f"Also called: Keys\n{header}")
    result = quote("What type is retry.jitter?", [(1, Hit(chunk, 1.0))])
    shown = "".join(result.pieces)
    assert f"{header}\n{rows[0]}" in shown  # a table a reader sees, not lines of pipes
    a, b = result.quoted[1]
    assert text[a:b] == "\n".join(rows)  # the header is context: this piece's rows are quoted


def test_a_narrowed_citation_is_the_files_bytes_at_its_offsets() -> None:
    text = "## Retries\n\nIntro sentence.\n\nA job is retried five times, then it fails.\n"
    chunk = _section(text)
    result = quote("How many times is a job retried?", [(1, Hit(chunk, 1.0))])
    whole = Citation(
        1,
        1,
        "u",
        chunk.path,
        chunk.anchor,
        chunk.heading_path,
        chunk.text,
        chunk.start,
        chunk.end,
        chunk.line_start,
        chunk.line_end,
    )
    cited = narrowed(whole, result.quoted[1])
    source = " " * 100 + text  # the file: the section starts at offset 100, line 10
    assert cited.text == "A job is retried five times, then it fails."
    assert source[cited.start : cited.end] == cited.text
    assert cited.line_start == cited.line_end == 14


# Two passages that hold equally rare question words tie; summed in a set's order (which
# PYTHONHASHSEED changes from run to run) the tie fell either way by one rounding error,
# and bench/passages.py printed 0.793 or 0.780 depending on the process.
_TIE = """
from kb_qa.answer.extractive import quote
from kb_qa.types import Chunk, Hit

def section(n, text):
    return Chunk(f"c{n}", f"p{n}.md", f"p{n}/", f"s{n}", f"S{n}", (f"S{n}",), 2, text, 0,
                 len(text), 1, 3, "h")

one = ("## S1\\n\\nThe apple, the pear and the plum sit in the crate.\\n\\nOr not.\\n\\n"
       "The lemon, the melon and the grape sit in the crate.\\n\\n" + "Then nothing. " * 40)
rest = ["A crate.", "Another crate.", "Nothing.", "Nothing."]
ranked = [(1, Hit(section(1, one), 0.5))]
ranked += [(n, Hit(section(n, f"## S{n}\\n\\n{t}\\n"), 0.5)) for n, t in enumerate(rest, 2)]
print(quote("apple pear plum lemon melon grape crate", ranked).quoted)
"""


def test_a_tie_between_passages_falls_the_same_way_in_every_process() -> None:
    quoted = set()
    for seed in range(16):  # before the fix, seeds 8 and 12 quoted the second passage
        run = subprocess.run(
            [sys.executable, "-c", _TIE],
            env={**os.environ, "PYTHONHASHSEED": str(seed)},
            capture_output=True,
            text=True,
            check=True,
        )
        quoted.add(run.stdout.strip())
    assert quoted == {"{1: (7, 57)}"}  # the first of the tied passages, every time


def _note(n: int, heading: str, body: str) -> Chunk:
    text = f"## {heading}\n\n{body}\n"
    return Chunk(
        f"c{n}", "Pancakes.md", "Pancakes/", heading.lower(), heading, ("Pancakes", heading),
        2, text, 0, len(text), 1, 3, "h",
    )  # fmt: skip


def test_a_heading_is_shown_as_its_text_not_read_as_markup() -> None:
    # Real headings: cibuildwheel's "manylinux-*-image, musllinux-*-image" showed half in
    # italics, "Step [2]" made a chip of source 2, and "__init__" a bold "init".
    heading = "manylinux-*-image, step [2] of __init__"
    chunk = dataclasses.replace(
        _note(1, "Images", "Pick the manylinux image with the image option."),
        heading_path=("Options", heading),
    )
    shown = "".join(quote("Which manylinux image?", [(1, Hit(chunk, 0.6))]).pieces)
    assert r"**Options › manylinux-\*-image, step \[2\] of \_\_init\_\_** [1]" in shown


def test_a_question_for_an_amount_leads_with_the_passage_that_states_one() -> None:
    intro = _note(1, "About", "Saturday buttermilk pancakes, makes about 12.")
    ingredients = _note(2, "Ingredients", "250 g flour, 2 eggs, 450 ml buttermilk.")
    ranked = [(1, Hit(intro, 0.64)), (2, Hit(ingredients, 0.61))]
    result = quote("How much buttermilk goes into the pancakes?", ranked)
    assert list(result.quoted) == [2]
    # Not asked for an amount, the closer section leads as before.
    assert next(iter(quote("Which pancakes use buttermilk?", ranked).quoted)) == 1


def test_a_short_form_in_a_question_finds_the_word_the_docs_spell_out() -> None:
    """ "How much RAM …?" of a requirements table whose row says "Memory": neither search
    nor the passage choice knew the two for one thing, and a quickstart led."""
    quick = _note(1, "First steps", "Write a config file, then start the server.")
    needs = _note(2, "System requirements", "| Resource | Minimum | Production |\n|---|---|---|\n"
                  "| Memory | 512 MiB | 2 GiB per server node |")  # fmt: skip
    question = "How much RAM does a server need?"
    index = KeywordIndex([dataclasses.replace(c, hash=c.id) for c in (quick, needs)])
    scores = index.scores(question)
    assert scores[1] > scores[0]
    ranked = [(1, Hit(quick, 0.6)), (2, Hit(needs, 0.55))]
    assert list(quote(question, ranked).quoted) == [2]


@pytest.mark.parametrize(
    ("question", "asks"),
    [
        ("How much RAM does a server need?", True),
        ("How long is a new token valid?", True),
        ("What's the limit?", True),
        ("饺子和面要加多少水？", True),
        ("How do I cancel a job?", False),
        ("Which environment variable holds the attempt?", False),
    ],
)
def test_questions_that_ask_for_an_amount(question: str, asks: bool) -> None:
    assert asks_amount(question) is asks


@pytest.mark.parametrize(
    ("passage", "states"),
    [
        ("The payload limit of **256 KiB** is configurable.", True),
        ("New tokens expire after **90 days** by default.", True),
        ("Each token may make 600 requests per minute.", True),
        ("Run 4.2 bar in the front, 4.5 in the rear.", True),
        ("Every 3–4 weeks in winter.", True),
        ("加 260 毫升凉水，揉成面团。", True),
        ("Saturday pancakes, makes about 12.", False),
        ("Step 2 in the guide: returns HTTP status `201 Created`.", False),
        ('Send it as JSON:\n\n```json\n{"timeout": "5m"}\n```', False),  # an example's value
    ],
)
def test_passages_that_state_an_amount(passage: str, states: bool) -> None:
    assert states_amount(passage) is states


def test_markup_in_a_question_does_not_hide_what_it_asks(kb: KnowledgeBase) -> None:
    plain_done, plain = ask(kb, "how do retries work?")
    done, cited = ask(kb, "<b>how</b> do retries work?")
    assert done.covered and plain_done.covered
    assert cited.citations[0] == plain.citations[0]
    # A tag with attributes leaves its name, which may be what is asked about.
    hostile = "<img src=x onerror=alert(1)> how do retries work?"
    assert without_markup(hostile) == "img how do retries work?"
    # A placeholder or a type parameter is what the question is about: it stays.
    assert without_markup("What does lumen jobs cancel <id> do?") == (
        "What does lumen jobs cancel <id> do?"
    )
    for kept in ("Is Optional<T> allowed?", "Can main return Box<dyn Error>?", "Is `<a b=c>` ok?"):
        assert without_markup(kept) == kept
    assert without_markup("a<br/>b <a href='x'>c</a>") == "a b c"
    # A question without markup is left exactly as it is: its first line is its title.
    issue = "Build fails on Windows\n\nRunning  `pdm build`  fails:\n\n    error: <x>"
    assert without_markup(issue) == issue
    assert without_markup("Title\nbody <b>bold</b>") == "Title\nbody bold"
    assert (
        without_markup("How do I embed an <iframe src=x> here?") == "How do I embed an iframe here?"
    )


def quoted(citations: Citations) -> tuple[str, str, str]:
    """The section and passage the first citation quotes (its excerpt number depends on how
    many excerpts a prompt with the conversation holds, not on what is quoted)."""
    first = citations.citations[0]
    return first.path, first.anchor, first.text


def test_a_new_short_question_after_another_is_not_read_as_a_follow_up(
    kb: KnowledgeBase,
) -> None:
    history = [Turn("user", "What is the default retry backoff?"), Turn("assistant", "10s [1].")]
    for question in ("How do I install Lumen?", "What port does the server listen on?"):
        assert follow_up_queries(question, history) == []
        _, after = ask(kb, question, history=history)
        _, alone = ask(kb, question)
        assert quoted(after) == quoted(alone)
        assert "retries.md" not in after.citations[0].path
    # A question that points back to what it names itself is a new question too, when the
    # docs cover it alone.
    history = [Turn("user", "How do I install Lumen with Docker?"), Turn("assistant", "[1]")]
    for question in (
        "The dashboard shows a job stuck in the running state. How do I find out why it hangs?",
        "We rotate the API token every month. Do old clients keep working while they switch?",
    ):
        assert leans_on_conversation(question) and may_stand_alone(question), question
        _, after = ask(kb, question, history=history)
        _, alone = ask(kb, question)
        assert quoted(after) == quoted(alone), question
        assert after.citations[0].path == "docs/faq.md"
    # One that names nothing before its pronoun, opens as a continuation or names too
    # little is searched with the conversation.
    for question in (
        "Can they show in the local preview but not in the real build?",
        "And if I want only torch to come from the pytorch index?",
        "How do I keep the .py scripts out of it?",
    ):
        assert not may_stand_alone(question), question
    # Pointing back, opening as a continuation or a bare fragment: a follow-up.
    for question in ("Should I cache it?", "And for pip?", "What about Windows?", "Per job?"):
        assert leans_on_conversation(question), question
    # A few words naming something ("spare key"; how people search their notes) are a
    # search of their own; a fragment relating to something ("On Windows?") is not.
    assert may_stand_alone("spare key") and may_stand_alone("dead-letter queue")
    for question in ("On Windows?", "for Docker?", "Per job?", "the default?", "that one"):
        assert not may_stand_alone(question), question
    # "there", "one" as a number and Chinese questions (no spaces: one "word") that point
    # nowhere.
    for question in (
        "Is there a dashboard?",
        "Can I run more than one worker?",
        "How many workers can one server run?",
        "When does the new one-week on-call rota start?",
        "饺子怎么做？",
        "饺子和面要加多少水？",
    ):
        assert not leans_on_conversation(question), question
    pointing = ("那个怎么改？", "怎么改？", "包子呢？", "还有别的方法吗？", "それを変更するには？")
    for question in pointing:
        assert leans_on_conversation(question), question


def test_a_few_words_after_another_question_are_a_search_of_their_own(
    tmp_path: Path,
) -> None:
    """A notes vault asked "spare key" after a question about a Chinese lesson quoted the
    lesson: three words or fewer were always read as a follow-up and searched with the
    previous question's terms, so whatever was asked before answered every keyword search."""
    vault = tmp_path / "vault"
    vault.mkdir()
    (vault / "House.md").write_text("# House\n\nThe spare house key is under the blue pot.\n")
    (vault / "Chinese.md").write_text("# 学习中文\n\n我的中文老师叫王老师，每周四晚上七点上课。\n")
    (vault / "Bike.md").write_text("# Bike\n\n## Tyres\n\nRun 4.2 bar in the front.\n")
    with KnowledgeBase(vault, embed_model="hash", index_dir=tmp_path / "idx") as notes:
        notes.index()
        for before, question, answered in (
            ("中文老师什么时候上课", "spare key", "House.md"),
            ("What tyre pressure for the bike?", "spare key", "House.md"),
            ("中文老师什么时候上课", "tyre pressure", "Bike.md"),
        ):
            history = [Turn("user", before), Turn("assistant", "[1]")]
            _, citations = ask(notes, question, history=history)
            assert citations.citations[0].path == answered, (before, question)


@pytest.mark.parametrize(
    ("markdown", "shown"),
    [
        (
            "Hooks use a language such as [Lisp](https://en.wikipedia.org/wiki/Lisp_(language)).",
            "Hooks use a language such as Lisp.",
        ),
        ('Hooks: see [the guide](guide.md#setup "Set up").', "Hooks: see the guide."),
        (
            "![A diagram](img/flow_(v2).png)Hooks run [in order](<hook order.md>).",
            "Hooks run in order.",
        ),
        # Words that are code, and reference links (mkdocstrings' autorefs need no
        # definition; a section has none): Textual's docs showed "[Static][textual.widgets.
        # Static]" and "[`httpx2`][httpx2]", brackets and all.
        (
            "Hooks subclass [`Hook`](api.md#hook) or [the `Base` class](<a b.md>).",
            "Hooks subclass `Hook` or the `Base` class.",
        ),
        (
            "Hooks are [Static][textual.widgets.Static] or [`Lisp`][lisp] ![logo][l] [Foo][].",
            "Hooks are Static or `Lisp`  Foo.",
        ),
    ],
)
def test_a_link_is_shown_as_its_words_whatever_its_address_holds(markdown: str, shown: str) -> None:
    section = _section(f"## Hooks\n\n{markdown} Keep `[a](b)`, `x[1][2]`.\n")
    result = quote("Which language do hooks use?", [(1, Hit(section, 1.0))])
    passage = "".join(result.pieces).split("[1]", 1)[1]
    assert shown in passage
    assert "Keep `[a](b)`, `x[1][2]`." in passage  # code as written
    assert ")" not in passage.replace("`[a](b)`", "")
    assert "][" not in passage.replace("`x[1][2]`", "")


def test_a_title_asking_gets_no_colon_and_one_over_images_alone_heads_nothing() -> None:
    """Textual's docs: a tab "Output" holding only a screenshot led the paragraph after the
    tab ("**Output:** In this method we call set_interval()"), and an admonition titled
    "What are return codes?" read "What are return codes?:"."""
    text = (
        '## Timers\n\n=== "Output"\n\n    ![A spinner](spin.png){ width="300" }\n\n'
        "In this method we call `set_interval()` to tick every second.\n\n"
        '!!! note "What are return codes?"\n\n    A return code is the number an app exits with.\n'
    )
    ticking = quote(
        "How do I tick every second with set_interval?", [(1, Hit(_section(text), 1.0))]
    )
    shown = "".join(ticking.pieces)
    assert "In this method we call `set_interval()`" in shown and "Output" not in shown, shown
    coded = quote("What is a return code?", [(1, Hit(_section(text), 1.0))])
    shown = "".join(coded.pieces)
    assert "**What are return codes?**\n\nA return code is the number" in shown, shown
    a, b = coded.quoted[1]
    assert text[a:b].startswith('!!! note "What are return codes?"')  # the page's title too


def test_a_code_block_of_snippet_includes_alone_is_not_quoted() -> None:
    """Textual's docs read from their source (their config needs Textual's own module): "how
    do I make a container scrollable?" quoted "Let's make that change:" and a code block
    holding only `--8<-- "docs/examples/…"`, where the page shows the file it names."""
    text = (
        "## Scrolling\n\nWe want the containers to scroll.\n\nLet's make that change:\n\n"
        '```python\n--8<-- "docs/examples/scroll.py"\n```\n\n'
        "A `VerticalScroll` container scrolls when its content is taller than it.\n"
    )
    result = quote("How do I make a container scrollable?", [(1, Hit(_section(text), 1.0))])
    shown = "".join(result.pieces)
    assert "`VerticalScroll` container scrolls" in shown and "8<" not in shown, shown


def test_fastapi_includes_are_not_quoted_and_a_tab_s_fence_is_fenced_once() -> None:
    """FastAPI's docs read from their source: "How do I declare an optional query
    parameter?" quoted `{* ../../docs_src/query_params/tutorial002_py310.py hl[7] *}`. And a
    piece of Ruff's configuration page opening inside a tab quoted its indented fence inside
    a second fence ("```toml" shown as code), the fence left open swallowing "See also"."""
    text = (
        "## Optional\n\nDeclare an optional query parameter with a default of `None`:\n\n"
        "{* ../../docs_src/query_params/tutorial002_py310.py hl[7] *}\n\n"
        "```Python\n{!> ../../docs_src/query_params/tutorial002.py!}\n```\n"
    )
    result = quote("How do I declare an optional query parameter?", [(1, Hit(_section(text), 1.0))])
    shown = "".join(result.pieces)
    assert "default of `None`" in shown and "docs_src" not in shown, shown
    tab = '    ```toml\n    [lint]\n    select = ["E4", "E7"]\n    ```\n\nThen run `ruff check`.\n'
    assert next((b.kind, b.text) for b in passages(tab)) == (
        "code",
        '```toml\n[lint]\nselect = ["E4", "E7"]\n```',
    )


def test_a_one_character_word_of_a_chinese_question_finds_its_passage() -> None:
    note = (
        "## 饺子做法\n\n妈妈的方法，大概能包 60 个。\n\n"
        "> [!tip]\n> 冻饺子不用解冻，直接下锅。\n\n"
        "- 面团：500 克中筋面粉，加 260 毫升凉水，盖上湿布醒 30 分钟。\n"
        "- 煮：水开后下饺子，点三次凉水，饺子全部浮起来就好了。\n"
    )
    for question, words in (("饺子怎么煮？", "水开后下饺子"), ("面团要醒多久？", "醒 30 分钟")):
        result = quote(question, [(1, Hit(_section(note), 1.0))])
        a, b = result.quoted[1]
        assert words in note[a:b], question


# Material for MkDocs' setup/setting-up-navigation.md: the list after the code block is its
# annotation, which the theme shows only as a tooltip inside the code.
_ANNOTATED = """#### Navigation integration

When navigation integration for the table of contents is enabled, it is always
rendered as part of the navigation sidebar on the left. Add the following lines
to `mkdocs.yml`:

``` yaml
theme:
  features:
    - toc.integrate # (1)!
```

1.  This feature flag is not compatible with `navigation.indexes`, as sections
    cannot host the table of contents due to missing space.
"""


def test_a_code_annotation_is_quoted_with_its_code_never_alone() -> None:
    question = "toc.integrate and navigation.indexes together: table of contents missing"
    result = quote(question, [(1, Hit(_section(_ANNOTATED), 1.0))])
    a, b = result.quoted[1]
    code = "``` yaml\ntheme:\n  features:\n    - toc.integrate # (1)!\n```"
    # What the page shows and can highlight: the sentence and the code, not the hidden list.
    quoted = _ANNOTATED[a:b]
    assert quoted.startswith("When navigation integration") and quoted.endswith(code)
    # The answer shows the annotation under the code it explains.
    shown = "".join(result.pieces)
    assert f"{code}\n\n1.  This feature flag is not compatible" in shown


# pydantic's concepts/validators.md: a list item that ends in annotated code.
_ITEM_ANNOTATED = """## Model validators

* ***Before* validators**: are run before the model is instantiated.

    ```python
    class UserModel(BaseModel):
        @model_validator(mode='before')
        def check_card_number_not_present(cls, data: Any) -> Any:  # (1)!
            return data
    ```

    1. Notice the use of `Any` as a type hint for `data`: the raw input can be anything.
"""


def test_a_list_ending_in_annotated_code_is_quoted_up_to_the_code() -> None:
    question = "Why is Any the type hint of data in a before model validator?"
    result = quote(question, [(1, Hit(_section(_ITEM_ANNOTATED), 1.0))])
    a, b = result.quoted[1]
    assert _ITEM_ANNOTATED[a:b].startswith("* ***Before* validators**")
    assert _ITEM_ANNOTATED[a:b].endswith("        return data\n    ```")
    assert "1. Notice the use of `Any`" in "".join(result.pieces)


@pytest.mark.parametrize(
    "markdown",
    [
        # No marker in the code: Material leaves the list as it is.
        "```yaml\ntheme: material\n```\n\n1.  The list names navigation.indexes.\n",
        # A marker of an item the list does not have.
        "```yaml\nx: 1 # (2)!\n```\n\n1.  The list names navigation.indexes.\n",
        # A paragraph between: the list does not follow the code.
        "```yaml\nx: 1 # (1)!\n```\n\nThen:\n\n1.  The list names navigation.indexes.\n",
        # A bulleted list: annotations are numbered.
        "```yaml\nx: 1 # (1)!\n```\n\n- The list names navigation.indexes.\n",
        # The list is in the next tab, not after the code in its own.
        '=== "A"\n\n    ```yaml\n    x: 1 # (1)!\n    ```\n\n'
        "1.  The list names navigation.indexes.\n",
        # A call after a statement's ";" (no comment, no marker) before the list.
        "```c\na = 1; f(1);\n```\n\n1.  The list names navigation.indexes.\n",
    ],
)
def test_a_list_material_shows_as_it_is_can_be_quoted_alone(markdown: str) -> None:
    result = quote("Which list names navigation.indexes?", [(1, Hit(_section(markdown), 1.0))])
    a, b = result.quoted[1]
    assert "The list names navigation.indexes." in markdown[a:b]


def _page(heading_path: tuple[str, ...], text: str) -> Chunk:
    page, anchor = heading_path[0].lower(), heading_path[-1].lower().replace(" ", "-")
    return Chunk(
        anchor, f"docs/{page}.md", f"{page}/", anchor, heading_path[-1], heading_path, 2, text,
        0, len(text), 1, 1 + text.count("\n"), "h",
    )  # fmt: skip


def _quoted(question: str, chunk: Chunk) -> str:
    """What the answer to ``question`` quotes of ``chunk``, retrieval's only section."""
    a, b = quote(question, [(1, Hit(chunk, 0.6))]).quoted[1]
    return chunk.text[a:b]


def test_a_how_to_question_quotes_how_not_the_default_behaviour() -> None:
    """httpx's "Redirection and History" opens with what happens by default; asked "How do
    I follow redirects?", the answer quoted that and left out `follow_redirects=True`."""
    text = (
        "By default, HTTPX will **not** follow redirects for all HTTP methods, although\n"
        "this can be explicitly enabled.\n\n"
        "For example, GitHub redirects all HTTP requests to HTTPS.\n\n"
        "```pycon\n>>> r = httpx.get('http://github.com/')\n>>> r.status_code\n301\n```\n\n"
        "You can modify the default redirection handling with the `follow_redirects` "
        "parameter:\n\n"
        "```pycon\n>>> r = httpx.get('http://github.com/', follow_redirects=True)\n```\n\n"
        "The `history` property of the response can be used to inspect any followed redirects.\n"
    )
    chunk = _page(("QuickStart", "Redirection and History"), text)
    quoted = _quoted("How do I follow redirects?", chunk)
    assert "follow_redirects=True" in quoted
    assert quoted.startswith("You can modify the default redirection handling")
    # Asked what happens, not how: the section's opening says it.
    quoted = _quoted("Does httpx follow redirects?", chunk)
    assert quoted.startswith("By default, HTTPX will **not** follow redirects")


def test_an_faq_entry_is_quoted_with_its_solution() -> None:
    """Pi-hole's FAQ states each problem, then a "**Solution:**" paragraph: "weird random
    domains like yfjmdpisrvyrnq in query log" quoted the problem and its example queries and
    stopped before "This happens when using Chrome-based browsers"."""
    text = (
        "You see three queries containing only random strings, like\n\n"
        "```bash\nyfjmdpisrvyrnq\nattxnwheeeuiad\n```\n\n"
        "**Solution:**\n\n"
        "This happens when using Chrome-based browsers. Chrome checks whether the DNS "
        "server answers every name.\n\n"
        "Link to [Chromium's source code](https://example.org/) explaining the function.\n\n"
        + "Unrelated text about blocklists and caches. " * 12
        + "\n"
    )
    chunk = _page(("FAQ", "Odd random character queries in the query log"), text)
    quoted = _quoted("weird random domains like yfjmdpisrvyrnq in query log", chunk)
    assert quoted.startswith("You see three queries")
    assert "This happens when using Chrome-based browsers" in quoted


def test_a_sentence_ending_in_an_ellipsis_keeps_the_code_it_introduces() -> None:
    """httpx: "You can disable SSL verification completely..." and then the code that
    does it; the error example before it must not lead for holding "certificate"."""
    text = (
        "By default httpx will verify HTTPS connections, and raise an error for invalid SSL "
        "cases...\n\n"
        '```pycon\n>>> httpx.get("https://expired.badssl.com/")\nhttpx.ConnectError: '
        "[SSL: CERTIFICATE_VERIFY_FAILED] certificate verify failed\n```\n\n"
        "You can disable SSL verification completely and allow insecure requests...\n\n"
        '```pycon\n>>> httpx.get("https://expired.badssl.com/", verify=False)\n'
        "<Response [200 OK]>\n```\n"
    )
    chunk = _page(("SSL", "Enabling and disabling verification"), text)
    # Retrieval's other sections speak of certificates too, as httpx's do.
    others = [
        _page(("SSL", "Client side certificates"), "Use a client certificate with `cert=`.\n"),
        _page(("Environment Variables", "SSL_CERT_FILE"), "A CA certificate bundle file.\n"),
    ]
    ranked = [(1, Hit(chunk, 0.6))] + [(n, Hit(c, 0.5)) for n, c in enumerate(others, 2)]
    result = quote("How do I disable SSL certificate verification?", ranked)
    a, b = result.quoted[1]
    assert text[a:b].startswith("You can disable SSL verification completely")
    assert text[a:b].endswith("<Response [200 OK]>\n```")


def test_a_version_note_is_never_the_answer() -> None:
    """pdm's sections open with an admonition "Added in 1.5.0."; "How do I add a
    development-only dependency?" was answered with that note alone."""
    text = (
        "**Tip:**\n\nAdded in 1.5.0.\n\n"
        "PDM also supports defining groups of dependencies that are useful for development.\n"
        "We can define them as development dependencies:\n\n"
        "```bash\npdm add -dG test pytest\n```\n\n"
        "You can have several groups of development only dependencies.\n"
    )
    chunk = _page(("Manage Dependencies", "Add development only dependencies"), text)
    quoted = _quoted("How do I add a development-only dependency?", chunk)
    assert "pdm add -dG test pytest" in quoted and "Added in" not in quoted
    # Whatever is asked, the section's opening is its text, not the note before it.
    assert _quoted("Development only dependencies?", chunk).startswith("PDM also supports")


def test_how_long_asks_for_an_amount_it_is_not_a_word_to_find() -> None:
    """ "How long …", "how many …": the second word asks for an amount (which the passage
    choice weighs on its own, ``amounts.py``), it is not what the question is about. Counted
    as a word, "as long as 64 characters" tied the passage giving the lifetime."""
    text = (
        "Long names are fine: a token's name may be as long as 64 characters.\n\n"
        "A token is valid for 90 days.\n"
    )
    chunk = _page(("Authentication", "Tokens"), text)
    assert _quoted("How long is a token valid?", chunk) == "A token is valid for 90 days."
    assert _quoted("Can a token's name be long?", chunk).startswith("Long names are fine")


def test_a_passage_is_chosen_by_all_it_quotes_a_list_with_its_lead_in() -> None:
    """pdm's workspace docs: "The following commands must be run from the workspace root:"
    and the list under it are quoted together, but were scored apart, and the paragraph
    before them, holding as many of the question's words as the list alone, was quoted."""
    text = (
        "Members share the root's lock file; running a command in a member updates the root.\n\n"
        "The following commands must be run from the workspace root:\n\n"
        "- `tool install`\n- `tool lock`\n"
    )
    chunk = _page(("Workspace", "Locking and installing"), text)
    question = "Can I run tool install or tool lock from a member directory?"
    # The paragraph before holds "member", a question word the list lacks: the passage
    # grows over it (``_widened``), the list with its lead-in always in it.
    assert _quoted(question, chunk).endswith(text[text.index("The following") :].rstrip("\n"))


def test_a_passage_grows_over_the_neighbour_that_answers_the_rest_of_the_question() -> None:
    """httpx's "SOCKS": "Does httpx work with a socks5 proxy? What do I need to install?"
    quoted the proxy example alone; the install command is the unit just before it."""
    text = (
        "In addition to HTTP proxies, `httpcore` also supports proxies using the SOCKS "
        "protocol.\n\n"
        "You can install SOCKS support using `pip`:\n\n"
        "```shell\n$ pip install httpx[socks]\n```\n\n"
        "You can now configure a client to make requests via a proxy using the SOCKS "
        "protocol:\n\n"
        "```python\nhttpx.Client(proxy='socks5://user:pass@host:port')\n```\n\n"
        + "The end of the section says nothing asked. " * 10  # longer than units.TAIL_CHARS
        + "\n"
    )
    chunk = _page(("Proxies", "SOCKS"), text)
    quoted = _quoted("Does httpx work with a socks5 proxy? What do I need to install?", chunk)
    assert quoted.startswith("You can install SOCKS support")
    assert quoted.endswith("host:port')\n```")  # the last paragraph adds no question word
    # A neighbour holding no question word the passage lacks is left out.
    quoted = _quoted("Which client proxy URL do I give for socks5?", chunk)
    assert quoted.startswith("You can now configure a client")


def test_a_passage_runs_on_to_a_short_ending_that_states_its_condition() -> None:
    """hatch's "Complex syntax": "Does whitespace matter there?" quoted the example and left
    out the section's last line, "Note that the space before the semicolon is required.",
    which shares no word with the question. What follows a passage is quoted with it when it
    is short; a long ending is not."""
    text = (
        "The following is an example that uses features and environment markers:\n\n"
        '```\npkg[feature1,feature2] @ <REFERENCE> ; python_version < "3.7"\n```\n\n'
        "Note that the space before the semicolon is required.\n"
    )
    chunk = _page(("Dependencies", "Complex syntax"), text)
    question = '`pkg[extra] @ https://...; python_version < "3.7"` doesn\'t parse. Whitespace?'
    assert _quoted(question, chunk).endswith("the space before the semicolon is required.")
    long_ending = text + "\n" + "A paragraph about something else entirely. " * 12 + "\n"
    chunk = _page(("Dependencies", "Complex syntax"), long_ending)
    assert _quoted(question, chunk).endswith('python_version < "3.7"\n```')


def test_a_passage_grows_neither_past_annotations_nor_over_a_footnote() -> None:
    """Material shows a code block's annotations as tooltips and a footnote's text at the
    page's end: a highlight cannot run through either, so a passage never grows over them."""
    annotated = (
        "Add the following lines to `mkdocs.yml`:\n\n"
        "``` yaml\ntheme:\n  palette:\n    scheme: slate # (1)!\n```\n\n"
        "1.  Separate colors for light and dark mode.\n\n"
        "The palette now follows the operating system without a reload.\n"
    )
    chunk = _page(("Colors", "Automatic mode"), annotated)
    assert "without a reload" not in _quoted("How do I set the palette in mkdocs.yml?", chunk)
    footnoted = (
        "Tabs stay pinned below the header.[^1]\n\n"
        "[^1]: Before 6.2, tabs scrolled away with the page.\n"
    )
    chunk = _page(("Navigation", "Sticky tabs"), footnoted)
    quoted = _quoted("Do tabs stay pinned or scroll away?", chunk)
    assert quoted == "Tabs stay pinned below the header.[^1]"


@pytest.mark.parametrize(
    ("markdown", "shown"),
    [
        (
            "Set the hooks URL. Do not include a trailing slash. E.g. <https://hooks.example.com>",
            "E.g. <https://hooks.example.com>",
        ),
        ("Hooks questions go to <hooks@example.com>.", "go to hooks@example.com."),
        ("Hooks use <b>Lisp</b>.", "Hooks use Lisp."),
    ],
)
def test_an_autolink_is_kept_where_html_tags_are_left_out(markdown: str, shown: str) -> None:
    """Paperless-ngx: "Do not include a trailing slash. E.g." and nothing more: the
    address, written as an autolink, was removed as if it were an HTML tag."""
    section = _section(f"## Hooks\n\n{markdown}\n")
    result = quote("Which URL do hooks use?", [(1, Hit(section, 1.0))])
    assert shown in "".join(result.pieces)


def test_a_fence_the_page_never_closes_is_closed_in_the_answer() -> None:
    """A page ending in an open fence: quoted as it is, it took in all that followed ("See
    also" rendered as code, its citation numbers never renumbered)."""
    text = (
        "## Unclosed\n\nThe helper returns a string:\n\n```python\ndef unclosed():\n"
        "    return 'x'\n"
    )
    open_fence = _page(("Helpers", "Unclosed"), text)
    other = _page(("Helpers", "Other"), "## Other\n\nAnother helper returns nothing.\n")
    result = quote("What does unclosed return?", [(1, Hit(open_fence, 0.6)), (2, Hit(other, 0.5))])
    shown = "".join(result.pieces)
    assert "    return 'x'\n```\n" in shown
    assert shown.count("```") == 2 and shown.rstrip().endswith("Other [2].")
    a, b = result.quoted[1]
    assert text[a:b] == text[text.index("The helper") :].rstrip("\n")  # the page's bytes


def test_a_definition_list_is_quoted_as_the_prose_it_is() -> None:
    """Paperless-ngx writes every setting as a definition (def_list): ": text" and
    paragraphs indented under it, which were quoted as a code block (a stray ": ", then
    monospace text with raw links) though the page shows them as prose."""
    text = (
        "#### `OCR_LANGUAGE=<lang>`\n\n"
        ": Customize the language paperless uses when\nparsing documents.\n\n"
        "    It should be a 3-letter code, see [the languages](https://example.com/langs).\n\n"
        '    Defaults to "eng".\n'
    )
    chunk = _page(("Configuration", "OCR_LANGUAGE=<lang>"), text)
    shown = "".join(quote("What does the OCR language default to?", [(1, Hit(chunk, 0.6))]).pieces)
    assert 'Defaults to "eng".' in shown and "```" not in shown and "\n: " not in shown
    blocks = passages(text)
    assert [b.kind for b in blocks] == ["prose"] * 3
    assert blocks[1].text == "It should be a 3-letter code, see the languages."


def test_admonition_syntax_inside_code_is_the_code_as_written() -> None:
    """Docs that teach admonitions show their syntax in a code block: it was turned into
    a bold title and dedented, inside the quoted code."""
    code = '```markdown\n!!! note "Phasellus posuere"\n\n    Lorem ipsum dolor sit amet.\n```'
    blocks = passages(f"## Usage\n\nWrite:\n\n{code}\n")
    assert [(b.kind, b.text) for b in blocks] == [("prose", "Write:"), ("code", code)]


def test_tab_indented_code_and_containers_are_read_as_four_columns() -> None:
    """A tab is four columns to Python-Markdown (MkDocs) and to CommonMark: a tab-indented
    command lost its first three characters ("o systemctl restart …") and a tab-indented
    admonition or content tab closed at once, its text quoted as code without its title."""
    text = (
        "## Deploy\n\nRun this command:\n\n\tsudo systemctl restart lumen.service\n"
        "\t\t--now\n\n!!! warning\n\tBackups are kept for fourteen days.\n\n"
        '=== "Linux"\n  \tRun `apt install lumen`.\n'
    )
    assert [(b.kind, b.text) for b in passages(text)] == [
        ("prose", "Run this command:"),
        ("code", "```\nsudo systemctl restart lumen.service\n\t--now\n```"),
        ("prose", "**Warning:**"),
        ("prose", "Backups are kept for fourteen days."),
        ("prose", "**Linux:**"),
        ("prose", "Run `apt install lumen`."),
    ]


def test_an_admonition_with_more_classes_than_one_is_read_as_one() -> None:
    """Material's "inline", "inline end" and "annotate" modifiers: `!!! info inline end
    "Retention"` was quoted as its raw markup; without a title, it is titled by its kind."""
    text = (
        '## Logs\n\n!!! info inline end "Retention"\n    Logs are kept for thirty days.\n\n'
        "??? tip annotate\n    Rotate them daily.\n"
    )
    assert [b.text for b in passages(text)] == [
        "**Retention:**",
        "Logs are kept for thirty days.",
        "**Tip:**",
        "Rotate them daily.",
    ]


def test_a_footnote_is_never_quoted_as_what_a_sentence_introduces() -> None:
    """Material's "Navigation tabs": "Add the following lines to `mkdocs.yml`:" was quoted
    with the footnote defined under it, whose text the page shows at its end: the
    highlight ran from the sentence over the rest of the page."""
    text = (
        "## Navigation tabs\n\nWhen tabs are enabled, top-level sections are rendered below "
        "the header.[^1] Add\nthe following lines to `mkdocs.yml`:\n\n  [^1]:\n    Prior to "
        "6.2, navigation tabs grouped top-level pages under the first tab.\n\n"
        "``` yaml\ntheme:\n  features:\n    - navigation.tabs\n```\n"
    )
    chunk = _page(("Setup", "Navigation tabs"), text)
    quoted = _quoted("Can the navigation tabs stay pinned when scrolling?", chunk)
    assert "[^1]:" not in quoted and quoted.startswith("When tabs are enabled")


def test_a_tabs_title_counts_as_the_heading_of_what_it_holds() -> None:
    """Zensical's starter page: "How do I print hello from Rust?" quoted the Python tab,
    tied with the Rust one (each holds two of the question's words, "print" and "hello" or
    "hello" and "rust"): a tab's title says what the tab is for, as a heading does."""
    text = (
        '=== "Python"\n\n    ``` python\n    print("Hello from Python!")\n    ```\n\n'
        '=== "Rust"\n\n    ``` rs\n    println!("Hello from Rust!");\n    ```\n'
    )
    chunk = _page(("Get started", "Content tabs"), text)
    assert _quoted("How do I print hello from Rust?", chunk).startswith('=== "Rust"')
    assert _quoted("How do I print hello from Python?", chunk).startswith('=== "Python"')


def test_a_tense_auxiliary_does_not_pick_the_passage() -> None:
    """ "what did slugs eat?" quoted the garden note's "Softneck did best last year": "did"
    was the one question word it held, and it outweighed the journal's "Slugs ate …"."""
    garlic = _page(("Garden", "Garlic"), "Plant cloves in October. Softneck did best last year.\n")
    monday = _page(("Journal", "Monday"), "Slugs ate every lettuce seedling overnight.\n")
    for question in ("what did slugs eat?", "what were the slugs eating?"):
        result = quote(question, [(1, Hit(garlic, 0.62)), (2, Hit(monday, 0.6))])
        assert 1 not in result.quoted, (question, result.quoted)


def test_a_tracebacks_frame_lines_do_not_pick_the_passage() -> None:
    """httpx's 404 example answered "Can I call raise_for_status() and .json() in one
    line?": its traceback's "most recent call last" and "line 837" were two of the
    question's words, the inline example below it held one."""
    text = (
        "We can raise an exception for any responses which are not a 2xx success code:\n\n"
        "```pycon\n>>> r.raise_for_status()\nTraceback (most recent call last):\n"
        '  File "/src/httpx/models.py", line 837, in raise_for_status\n'
        "    raise HTTPStatusError(message, response=self)\n```\n\n"
        "The method returns the response instance, allowing you to use it inline.\n\n"
        "```pycon\n>>> data = httpx.get('...').raise_for_status().json()\n```\n"
    )
    shown = quote(
        "Can I call raise_for_status() and .json() in one line?",
        [(1, Hit(_page(("Quickstart", "Response Status Codes"), text), 0.6))],
    )
    assert "allowing you to use it inline" in "".join(shown.pieces)
    assert "Traceback" not in "".join(shown.pieces)
    # The frame lines are still quoted as written when the passage is chosen.
    code = passages(text)[1]
    assert code.text.count('File "/src/httpx/models.py", line 837') == 1
    assert not {"call", "line", "file", "recent"} & code.tokens


def test_a_notes_alias_names_it_as_its_title_does() -> None:
    """ "who is 田中さん?" of a note whose front matter aliases it so (retrieval's first
    hit, by the alias) quoted another note, closer to the question by a hair."""
    yuki = dataclasses.replace(
        _page(("Yuki Tanaka",), "Friend from the language exchange. Lives in Osaka.\n"),
        context="Also called: Yuki, 田中さん\nTags: people",
    )
    sam = _page(("Sam Okafor", "1:1 notes"), "See [[Work/Meetings/2024-06-03 1-1 with Sam]].\n")
    assert yuki.also_called == "Yuki, 田中さん" and sam.also_called == ""
    hits = [Hit(yuki, 0.033, similarity=0.235), Hit(sam, 0.016, similarity=0.25)]
    result = quote("who is 田中さん?", list(enumerate(hits, 1)))
    assert list(result.quoted) == [1]


def test_a_follow_up_quotes_what_it_asks_of_the_topic_it_continues(tmp_path: Path) -> None:
    """ "and when is the MOT due?" after a question on the loaded car's tyre pressures quoted
    the tyre pressures (bench/notes_vault): the previous question's four terms outweighed
    the two of the question itself."""
    vault = shutil.copytree(Path(__file__).parents[1] / "bench" / "notes_vault", tmp_path / "v")
    instance = KnowledgeBase(vault, index_dir=tmp_path / "idx", embed_model="minilm")
    instance.index()
    history = [
        Turn("user", "what tyre pressure for the car when loaded?"),
        Turn("assistant", "2.6 bar front, 2.8 bar rear [1]"),
    ]
    try:
        for question in ("and when is the MOT due?", "what about the cambelt?"):
            _done, citations = ask(instance, question, history=history)
            assert citations.citations[0].anchor == "next-due", (question, citations.citations)
    finally:
        instance.close()


def test_turning_something_off_finds_where_the_docs_disable_it(kb: KnowledgeBase) -> None:
    """ "and how do I turn that off?" after "What is the dead letter queue?" quoted the
    queue's description again: the docs say `dead_letter.enabled: false`, not "turn off"."""
    first, _ = ask(kb, "What is the dead letter queue?")
    history = [Turn("user", "What is the dead letter queue?"), Turn("assistant", first.text)]
    done, _ = ask(kb, "and how do I turn that off?", history=history)
    assert "`dead_letter.enabled: false`" in done.text.split("See also")[0], done.text


def test_a_flag_the_docs_call_an_option_is_covered(tmp_path: Path) -> None:
    """ "What does the --frozen flag do?" of uv's docs, which say "use the `--frozen`
    option", was "not covered"; "… option do?" quoted the sentence."""
    vault = tmp_path / "docs"
    vault.mkdir()
    (vault / "sync.md").write_text(
        "# Locking and syncing\n\n## Automatic lock and sync\n\nLocking and syncing are "
        "automatic in uv. To use the lockfile without checking if it is up-to-date, use the "
        "`--frozen` option.\n\n## Checking the lockfile\n\nWhen considering if the lockfile "
        "is up-to-date, uv will check if it matches the project metadata.\n",
        encoding="utf-8",
    )
    (vault / "cache.md").write_text("# Caching\n\n## Clearing\n\nRun uv cache clean.\n")
    instance = KnowledgeBase(vault, index_dir=tmp_path / "idx", embed_model="minilm")
    instance.index()
    try:
        for kind in ("flag", "option", "parameter"):
            done, _ = ask(instance, f"What does the --frozen {kind} do?")
            assert done.covered, (kind, done.text)
            assert "use the `--frozen`" in done.text, (kind, done.text)
        assert not ask(instance, "What does the --frozen flag do to my sourdough?")[0].covered
    finally:
        instance.close()


def test_an_example_is_quoted_with_the_statement_it_illustrates() -> None:
    """Starlette's "Route priority": "For example:" and the code under it were quoted
    without the sentence before them, the rule the example shows."""
    text = (
        "Incoming paths are matched against each `Route` in order.\n\n"
        "In cases where more that one route could match an incoming path, you should take "
        "care to ensure that more specific routes are listed before general cases.\n\n"
        "For example:\n\n"
        "```python\n# Don't do this: `/users/me` will never match incoming requests.\n"
        "routes = [\n    Route('/users/{username}', user),\n"
        "    Route('/users/me', current_user),\n]\n```\n"
    )
    chunk = _page(("Routing", "Route priority"), text)
    question = "My /users/me route never gets hit; requests go to the /users/{username} handler."
    quoted = _quoted(question, chunk)
    assert quoted.startswith("In cases where more that one route")
    assert quoted.endswith("current_user),\n]\n```")
    # A lead-in that says more than "For example:" stands on its own.
    told = text.replace("For example:", "Routes are tried in the order listed here:")
    assert _quoted(question, _page(("Routing", "Route priority"), told)).startswith("Routes are")


def test_should_and_must_do_not_decide_coverage(tmp_path: Path) -> None:
    """ "Why should I open the firewall?" of a warning titled "Open the firewall" was "not
    covered": "should" is in no passage. How a question asks is not what it asks about."""
    vault = tmp_path / "docs"
    vault.mkdir()
    (vault / "index.md").write_text(
        "# Setup\n\n## First start\n\n"
        '!!! warning "Open the firewall"\n'
        "    Orbit nodes gossip on UDP port 7946. If that port is blocked, nodes never see\n"
        "    each other and the cluster stays in the forming state forever.\n\n"
        "## Glossary\n\nRetention horizon\n:   The age after which Orbit deletes raw points.\n",
        encoding="utf-8",
    )
    instance = KnowledgeBase(vault, index_dir=tmp_path / "idx", embed_model="minilm")
    instance.index()
    try:
        for asked in ("Why should I open the firewall?", "Why must I open the firewall?"):
            done, _ = ask(instance, asked)
            assert done.covered and "UDP port 7946" in done.text, (asked, done.text)
        off = "Should I open the firewall of my castle to dragons?"
        assert not ask(instance, off)[0].covered
    finally:
        instance.close()


def test_how_much_and_wie_lange_ask_how_not_what(tmp_path: Path) -> None:
    """ "how much was the MOT?" of a note whose table has the MOT's cost was "not covered"
    ("much" is in no passage), as was "Wie lange soll der Pfannkuchenteig ruhen?" of a
    German recipe saying how long ("lange" was one of its three words to find)."""
    vault = tmp_path / "notes"
    (vault / "Car").mkdir(parents=True)
    (vault / "Car" / "Car Maintenance.md").write_text(
        "# Car Maintenance\n\n## Service schedule\n\n"
        "| Item | Interval | Last done | Cost |\n|---|---|---|---|\n"
        "| MOT | 1 year | 2024-03-02 | £54.85 |\n"
        "| Cambelt | 5 years / 100,000 km | 2022-06-02 | £420 |\n"
        "| Brake fluid | 2 years | 2023-05-14 | £60 |\n",
        encoding="utf-8",
    )
    (vault / "Pfannkuchen.md").write_text(
        "# Pfannkuchen\n\n## Zutaten\n\n- 250 g Mehl\n- 3 Eier\n- 500 ml Milch\n\n"
        "## Zubereitung\n\nAlles verrühren. Den Pfannkuchenteig mindestens 30 Minuten ruhen "
        "lassen, dann in heißer Butter ausbacken.\n",
        encoding="utf-8",
    )
    (vault / "Garden.md").write_text(
        "# Garden\n\n## Garlic\n\nPlant cloves in October, two inches deep.\n", encoding="utf-8"
    )
    instance = KnowledgeBase(vault, index_dir=tmp_path / "idx", embed_model="minilm")
    instance.index()
    try:
        for asked, said in (
            ("how much was the MOT?", "£54.85"),
            ("how much does the cambelt cost?", "£420"),
            ("Wie lange soll der Pfannkuchenteig ruhen?", "30 Minuten"),
        ):
            done, _ = ask(instance, asked)
            assert done.covered and said in done.text, (asked, done.text)
        for off in ("how much does a flight to Tokyo cost?", "Wie lange dauert ein Marathon?"):
            assert not ask(instance, off)[0].covered, off
    finally:
        instance.close()


def test_the_keyword_searchs_first_section_with_every_word_covers_it(tmp_path: Path) -> None:
    """A site whose sections MiniLM scores low (0.11 to 0.30 for questions they answer):
    "Which UID does the Debian package create?" was "not covered" though the section
    saying "The package creates the orbit user with UID 781" was the keyword search's first."""
    vault = tmp_path / "docs"
    vault.mkdir()
    (vault / "install.md").write_text(
        "# Installation\n\nThis page installs Orbit 4.8.0 on a fresh Linux host.\n\n"
        "## Installing the package\n\n"
        '=== "Debian and Ubuntu"\n\n    Add the Orbit apt repository, then run `apt install '
        "orbit-server`. The\n    package creates the `orbit` system user with UID 781.\n\n"
        '=== "RHEL and Fedora"\n\n    Enable the Orbit dnf repository, then run `dnf install '
        "orbit-server`. SELinux\n    needs the `orbit_port_t` label on port 7447.\n\n"
        '=== "Docker"\n\n    Run `docker run -p 7447:7447 orbit/orbit:4.8.0`. Mount a volume '
        "at\n    `/var/lib/orbit`, or every restart loses the WAL.\n",
        encoding="utf-8",
    )
    (vault / "upgrade.md").write_text(
        "# Upgrading\n\n## Agent banner\n\nThe agent banner reports its own build version.\n",
        encoding="utf-8",
    )
    instance = KnowledgeBase(vault, index_dir=tmp_path / "idx", embed_model="minilm")
    instance.index()
    try:
        done, _ = ask(instance, "Which UID does the Debian package create?")
        assert done.covered and "UID 781" in done.text, done.text
        # Its words spread over the docs, or not in them: still not covered.
        for off in ("Which Debian release ships the newest kernel?", "How do I bake sourdough?"):
            assert not ask(instance, off)[0].covered, off
    finally:
        instance.close()


def test_an_error_code_only_its_table_holds_leads(kb: KnowledgeBase) -> None:
    """ "What does LUM-2003 mean?" quoted the Home page: "lum" is in every error code's
    section and "mean" in many, "2003" in the error table's alone, which came 9th behind
    the pages those words boosted. A code held by one section makes it lead."""
    for code, meaning in (("LUM-2003", "Token is past its expiry time"), ("LUM-5003", "retry")):
        hits = kb.search(f"What does {code} mean?", 5)
        assert hits[0].chunk.heading_path[-1] == "Error codes", [h.chunk.heading for h in hits]
        done, _ = ask(kb, f"What does {code} mean?")
        first = done.text.split("See also")[0]
        assert f"| `{code}` |" in first and meaning in first, done.text


def test_a_table_cell_shows_its_links_as_their_words_and_code_as_written() -> None:
    """ "Does Lumen have a web UI?" quoted a row with "[Quickstart](getting-started/
    quickstart.md)": a paragraph's link is shown as its words, a table's was not (and the
    relative ".md" link opened nothing from the chat)."""
    row = (
        "| Web dashboard | Browse queues at `/ui` ![icon](i.png) | [Quickstart](start.md) "
        "| `[x](y)` |"
    )
    text = "## Codes\n\n| Feature | Summary | Where | Code |\n|---|---|---|---|\n" + row + "\n"
    result = quote("Is there a web dashboard?", [(1, Hit(_section(text), 1.0))])
    shown = "".join(result.pieces)
    assert "| Web dashboard | Browse queues at `/ui`  | Quickstart | `[x](y)` |" in shown, shown
    a, b = result.quoted[1]
    assert text[a:b] == text[len("## Codes\n\n") :].rstrip("\n")  # the page highlights the table


def test_what_the_product_is_is_answered_from_the_home_page(kb: KnowledgeBase) -> None:
    """ "What is Lumen?", a new reader's first question, quoted "Where Lumen looks for the
    file" (the home page ranked 48th); "Tell me about Lumen" was "not covered"."""
    for asked in ("What is Lumen?", "What does Lumen do?", "Tell me about Lumen"):
        done, citations = ask(kb, asked)
        assert done.covered, (asked, done.text)
        first = citations.citations[0]
        assert first.path == "docs/index.md" and first.heading_path == ("Home",), asked
        assert "Lumen is a self-hosted job scheduler" in done.text.split("See also")[0]
    # A question of something of Lumen's is answered from where that is.
    _, citations = ask(kb, "What is Lumen's default retry policy?")
    assert citations.citations[0].path == "docs/guides/retries.md"


def test_brackets_of_the_docs_are_quoted_as_written_not_as_citations(tmp_path: Path) -> None:
    """ "result[0] and the second is result[1]; … section [12]" was quoted as "result[2]"
    (renumbered, with a made-up citation) and "section" (dropped as a citation to no
    excerpt); FastAPI's "hl[16]" as "hl[2]". Code was never touched."""
    vault = tmp_path / "docs"
    vault.mkdir()
    (vault / "lists.md").write_text(
        "# Lists\n\nTo read the first element use result[0] and the second is result[1]; "
        "the spec says so in section [12] and [Source 2].\n\n```python\nx = result[1]\n```\n",
        encoding="utf-8",
    )
    (vault / "other.md").write_text("# Other\n\nNothing about lists.\n", encoding="utf-8")
    instance = KnowledgeBase(vault, index_dir=tmp_path / "idx", embed_model="hash")
    instance.index()
    try:
        done, citations = ask(instance, "How do I read the first element of the result list?")
    finally:
        instance.close()
    assert (
        "result\\[0] and the second is result\\[1]; the spec says so in section \\[12] and "
        "\\[Source 2]." in done.text
    ), done.text
    assert "x = result[1]" in done.text  # code as written
    assert [c.path for c in citations.citations][:1] == ["lists.md"]
    assert all(c.path in ("lists.md", "other.md") for c in citations.citations)


@pytest.mark.parametrize(
    "formula",
    [
        "$r = k[A][B]$",
        "$[x, p][p, x] = \\hbar^2$",
        "$\\mathbb{E}[X](t)$",
        "$a<b>c$",
        "$0<x<1$ and $i<n$, $j>0$",
        "$\\{ .5, 1 \\}$",
        "$x^{.5}$",
        "$\\text{[[x]]}$",
        "\\(a<b>c\\)",
        "$$\nx_{n+1} = [x_n](y)\n$$",
        "\\[\n|x_n - x^*| \\le \\frac{b-a}{2^{n+1}}\n\\]",
        "\\begin{align}\na &= [b](c) \\\\\nd &= <e>\n\\end{align}",
    ],
)
def test_a_formula_is_quoted_as_written(formula: str) -> None:
    """A QA pass on math-heavy notes: "$r = k[A][B]$" was quoted "$r = kA$" (its brackets
    read as a link), "$a<b>c$" as "$ac$" (an HTML tag), "$\\{ .5, 1 \\}$" as "$\\$" (an
    attribute list). Math is held out of the prose's cleaning as code is."""
    text = f"## Rate law\n\nThe rate law, with [a link](kinetics.md), is\n{formula}\nalways.\n"
    result = quote("What is the rate law?", [(1, Hit(_section(text), 1.0))])
    shown = "".join(result.pieces)
    assert f"with a link, is\n{formula}\nalways." in shown


def test_dollars_that_are_prices_are_prose() -> None:
    """An inline formula opens before a non-space and closes after one, not before a digit
    (arithmatex, pandoc): "$5 and [the plan](p.md) for $10" is prose, its link read."""
    text = "## Prices\n\nA seat costs $5 a month, see [the plan](p.md), or $10 with support.\n"
    result = quote("How much is a seat?", [(1, Hit(_section(text), 1.0))])
    assert "$5 a month, see the plan, or $10 with support." in "".join(result.pieces)


def test_a_display_formula_is_quoted_with_the_sentence_it_ends() -> None:
    """ "What is the error bound of bisection?" quoted "...after $n$ steps the error is at
    most" and stopped: the formula under it ends the sentence, with no colon to say so."""
    text = (
        "The bisection method halves the bracket $[a, b]$ each step, so after $n$ steps "
        "the error is at most\n\n$$\n|x_n - x^*| \\le \\frac{b - a}{2^{n+1}}\n$$\n\n"
        + "An unrelated closing remark about plotting the iterates. " * 10
        + "\n"
    )
    chunk = _page(("Solvers", "Bisection"), text)
    quoted = _quoted("What is the error bound of bisection?", chunk)
    assert quoted.startswith("The bisection method") and quoted.endswith("{2^{n+1}}\n$$")


def test_a_model_that_failed_on_a_question_the_docs_do_not_cover_is_said_first() -> None:
    """An API client saw "These docs don't seem to cover that" as if the model had judged
    so, while the model had failed (done.fallback "llm_error")."""
    text = "## Retries\n\nA job is retried five times.\n"
    ranked = [(1, Hit(_section(text), 0.1))]
    result = quote("How do I bake sourdough bread?", ranked, covered=False, failed=True)
    assert "".join(result.pieces).startswith(
        "The language model did not answer. These docs don't seem to cover that."
    )
    result = quote("How do I bake sourdough bread?", ranked, covered=False, lang="de", failed=True)
    assert "".join(result.pieces).startswith("Das Sprachmodell hat nicht geantwortet. Dazu")
    assert "".join(quote("x", ranked, covered=False).pieces).startswith(NOT_COVERED)


def test_a_short_admonition_is_quoted_whole() -> None:
    """Uvicorn's "Running with Gunicorn": asked "Is the uvicorn.workers module
    deprecated?", the answer quoted the warning's first line and left out what to use
    instead, the rest of the same warning."""
    text = (
        "!!! warning\n"
        "    The `uvicorn.workers` module is deprecated and will be removed in a future"
        " release.\n\n"
        "    You should use the `uvicorn-worker` package instead.\n\n"
        "    ```bash\n    python -m pip install uvicorn-worker\n    ```\n\n"
        + "Gunicorn is a mature, fully featured server and process manager. " * 8
        + "\n"
    )
    chunk = _page(("Welcome", "Running with Gunicorn"), text)
    quoted = _quoted("Is the uvicorn.workers module deprecated?", chunk)
    assert quoted.startswith("!!! warning") and quoted.endswith(
        "pip install uvicorn-worker\n    ```"
    )
    longer = text.replace("instead.", "instead. " + "More words on the matter. " * 30)
    quoted = _quoted("Is the uvicorn.workers module deprecated?", _page(("W", "G"), longer))
    assert "You should use" not in quoted


def test_a_display_formula_is_one_block_whatever_its_lines_start_with() -> None:
    """ "$$\\n\\sigma^2 = E[X^2]\\n- E[X]^2\\n$$": its "- E[X]^2" line was read as a list, so
    the answer showed the formula broken by a blank line (and the chat a bullet where the
    minus was); a line of HTML in a formula left a lone "$$" quoted."""
    formula = "$$\n\\sigma^2 = E[X^2]\n- E[X]^2\n$$"
    text = f"The variance expands into its two raw moments as\n\n{formula}\n\nwhich is neat.\n"
    chunk = _page(("Statistics", "Variance"), text)
    assert formula in _quoted("How does the variance expand into raw moments?", chunk)
    hostile = "$$\n</div><img src=x>\n$$"
    chunk = _page(("Zebra", "Display"), f"The zebra display formula:\n\n{hostile}\n")
    assert hostile in _quoted("What is the zebra display formula?", chunk)


def test_a_passage_does_not_run_on_into_content_tabs() -> None:
    """Material's "Navigation expansion" ends with two tabs of screenshots ("With
    expansion", "Without"): run on to the section's end, the quote took them in, and the
    page cannot mark a hidden tab nor an image's words."""
    text = (
        "When expansion is enabled, the left sidebar will expand all collapsible subsections"
        " by default. Add the following lines to `mkdocs.yml`:\n\n"
        "``` yaml\ntheme:\n  features:\n    - navigation.expand\n```\n\n"
        '=== "With expansion"\n\n    [![Expansion enabled]][Expansion enabled]\n\n'
        '=== "Without"\n\n    [![Expansion disabled]][Expansion disabled]\n'
    )
    chunk = _page(("Setting up navigation", "Navigation expansion"), text)
    quoted = _quoted("How do I make the sidebar expand all subsections?", chunk)
    assert quoted.endswith("- navigation.expand\n```"), quoted
