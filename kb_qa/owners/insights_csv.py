"""The insights report's CSV exports: every logged question with its outcome and rating,
and the top questions with their counts.
"""

from __future__ import annotations

import csv
import datetime
import re
from collections.abc import Iterable, Sequence
from typing import Any, TextIO

from kb_qa.owners.feedback import Feedback
from kb_qa.owners.questionlog import Entry
from kb_qa.text import BIDI_CONTROLS


def utc(at: float, fmt: str) -> str:
    return datetime.datetime.fromtimestamp(at, datetime.timezone.utc).strftime(fmt)


CSV_FIELDS = (
    "at",
    "time_utc",
    "question",
    "turn",
    "mode",
    "model",
    "covered",
    "cited",
    "retrieval_ms",
    "first_token_ms",
    "total_ms",
    "error",
    "error_message",
    "feedback",
    "feedback_reason",
)


def write_csv(entries: Iterable[Entry], ratings: Sequence[Feedback], out: TextIO) -> int:
    """The raw log as CSV, one row per question with the feedback linked to it; rows written."""
    linked = {r.question_id: r for r in reversed(ratings) if r.question_id}  # latest wins
    writer = csv.writer(out)
    writer.writerow(CSV_FIELDS)
    n = 0
    for e in entries:
        rating = linked.get(e.ref)
        cited = " ".join(f"{c.path}#{c.anchor}" if c.anchor else c.path for c in e.citations)
        covered = "" if e.covered is None else str(e.covered).lower()
        row = [
            f"{e.at:.3f}",
            utc(e.at, "%Y-%m-%dT%H:%M:%SZ"),
            e.question,
            e.turn,
            e.mode,
            e.model,
            covered,
            cited,
            _num(e.retrieval_ms),
            _num(e.first_token_ms),
            _num(e.total_ms),
            e.error,
            e.error_message,
            rating.rating if rating else "",
            rating.reason if rating else "",
        ]
        writer.writerow([_cell(v) for v in row])
        n += 1
    return n


QUESTION_CSV_FIELDS = (
    "rank",
    "question",
    "asked",
    "wordings",
    "also_asked_as",
    "outcome",
    "answered",
    "not_covered",
    "errors",
    "left",
    "thumbs_up",
    "thumbs_down",
    "reasons",
    "sections",
    "section_urls",
    "last_asked_utc",
)


def write_questions_csv(questions: dict[str, Any], out: TextIO) -> int:
    """The top-questions list (``top_questions``) as CSV, one row per merged question."""
    writer = csv.writer(out)
    writer.writerow(QUESTION_CSV_FIELDS)
    for rank, q in enumerate(questions["top"], 1):
        sections = q["sections"]
        row = [
            rank,
            q["question"],
            q["asked"],
            q["wordings"],
            " | ".join(q["also_asked_as"]),
            q["outcome"],
            *q["outcomes"].values(),
            q["thumbs_up"],
            q["thumbs_down"],
            " | ".join(f"{r['reason']} ({r['count']})" for r in q["reasons"]),
            " ".join(f"{s['path']}#{s['anchor']}" if s["anchor"] else s["path"] for s in sections),
            " ".join(s["url"] for s in sections),
            utc(q["last_asked"], "%Y-%m-%dT%H:%M:%SZ"),
        ]
        writer.writerow([_cell(v) for v in row])
    return len(questions["top"])


def _num(value: float | None) -> str:
    return "" if value is None else f"{value:g}"


# Control characters but tab, newline and carriage return (which CSV quotes): a reader's
# ESC would drive the terminal the export is read in; and bidi embeddings, overrides and
# isolates, which would show a cell reversed (the HTML page drops them too).
_CONTROLS = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f]|" + BIDI_CONTROLS.pattern)


def _cell(value: object) -> str:
    """A cell a spreadsheet will not run: text starting like a formula gets a quote."""
    text = _CONTROLS.sub("", str(value))
    return "'" + text if text[:1] in ("=", "+", "-", "@", "\t", "\r") else text
