"""The insights report: what readers asked, what the docs did not cover, what got cited.

Built from the question log and reader feedback of one index folder, as plain JSON-ready
data; ``kb-qa insights`` prints it as text, JSON, HTML (kb_qa.owners.insights_render) or CSV, and
``kb-qa serve`` serves it at ``/insights`` to the admin (kb_qa.serve.admin).

The top questions are the questions asked, most asked first, with the ones that say the
same thing in other words merged (kb_qa.owners.topics with a tight threshold), each with its
outcomes, ratings and the sections its answers cited. Coverage gaps are the not-covered and
thumbs-down questions, grouped into topics with the index's own embedding model, largest
first, each labelled with its most representative questions and the sections the readers
who asked them were shown (from the log, not searched again).
"""

from __future__ import annotations

import datetime
import itertools
import re
import time
from collections import Counter, defaultdict
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from kb_qa.errors import ConfigError, KbQaError
from kb_qa.ingest.site import any_site_name
from kb_qa.owners.asked import (
    Vectors,
    asked_questions,
    chunks_by_section,
    gap_topics,
    is_ok,
    merged_questions,
    outcome_of,
    question_key,
    section_json,
)
from kb_qa.owners.feedback import Feedback, FeedbackStore
from kb_qa.owners.insights_csv import utc
from kb_qa.owners.questionlog import Entry, QuestionLog
from kb_qa.settings import Settings
from kb_qa.text import BIDI_CONTROLS

if TYPE_CHECKING:
    from kb_qa.kb.knowledge_base import KnowledgeBase

TOP_QUESTIONS = 50  # rows of the top-questions list in the report (the CSV has them all)
TOP = 15  # rows of the most/least cited tables
RECENT = 20  # rows of the recent errors, slowest answers and thumbs-down lists
MAX_NEVER_CITED = 200
SLOW_MS = 2000.0  # first text later than this counts as a slow answer
LATENCY_BINS = (0, 50, 100, 200, 500, 1000, 2000, 5000, 10_000)
MAX_BUCKETS = 1000  # of the volume chart; older questions fall in the first one
# The JSON's shape (docs/pages/http-api.md, "The report as JSON"): raised when a key is
# renamed, removed or changes meaning; new keys may come without it.
REPORT_VERSION = 1

_DURATION = re.compile(r"([0-9]{1,6})([mhdw])")
_UNITS = {"m": 60, "h": 3600, "d": 86_400, "w": 604_800}


def parse_since(text: str, now: float) -> float:
    """``7d``, ``24h``, ``30m``, ``2w`` (before ``now``) or a date ``2026-11-30`` (UTC)."""
    given = text.strip().lower()
    match = _DURATION.fullmatch(given)
    if match:
        return now - int(match[1]) * _UNITS[match[2]]
    try:
        day = datetime.date.fromisoformat(given)
    except ValueError:
        raise ConfigError(
            f"--since {text!r} is neither a duration like 7d, 24h, 30m or 2w nor a date like "
            "2026-11-30."
        ) from None
    return datetime.datetime.combine(day, datetime.time(), datetime.timezone.utc).timestamp()


def build(
    kb: KnowledgeBase,
    settings: Settings,
    since: float | None = None,
    log: QuestionLog | None = None,
    now: float | None = None,
) -> dict[str, Any]:
    """The whole report over questions asked since ``since`` (all kept when None)."""
    now = time.time() if now is None else now
    log = log or QuestionLog(settings.index_path, settings.question_log_days)
    entries = list(log.entries(since))
    ratings = FeedbackStore(settings.index_path).all(since=since)
    asked = asked_questions(entries, ratings)
    vectors = Vectors(kb, log)
    chunks = chunks_by_section(kb)
    report = {
        "report_version": REPORT_VERSION,
        "vault": settings.vault.name,
        "site_name": any_site_name(settings.vault),
        "generated_at": now,
        "since": since,
        "question_log": settings.question_log,
        "totals": _totals(entries, ratings, len(asked)),
        "volume": _volume(entries, ratings, since, now),
        "feedback": _feedback(ratings),
        "questions": merged_questions(kb, asked, vectors, chunks, TOP_QUESTIONS),
        "gaps": gap_topics(kb, entries, ratings, vectors, asked, chunks),
        "citations": _citations(kb, entries, chunks),
        "latency": _latency(entries),
        "errors": _errors(entries),
    }
    return _without_bidi(report)


def _without_bidi(value: Any) -> Any:
    """``value`` with bidi embeddings, overrides and isolates dropped from every string in it:
    a reader's question or a file name that reads reversed ("txt.exe") in the JSON, the CLI's
    ``--json`` and the page's embedded data as well as in the page itself."""
    if isinstance(value, str):
        return BIDI_CONTROLS.sub("", value)
    if isinstance(value, dict):
        return {k: _without_bidi(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_without_bidi(v) for v in value]
    return value


def top_questions(
    kb: KnowledgeBase,
    settings: Settings,
    since: float | None = None,
    log: QuestionLog | None = None,
) -> dict[str, Any]:
    """Every question asked since ``since``, near-duplicates merged, most asked first."""
    log = log or QuestionLog(settings.index_path, settings.question_log_days)
    entries = list(log.entries(since))
    ratings = FeedbackStore(settings.index_path).all(since=since)
    return merged_questions(
        kb, asked_questions(entries, ratings), Vectors(kb, log), chunks_by_section(kb), None
    )


def _totals(entries: Sequence[Entry], ratings: Sequence[Feedback], distinct: int) -> dict[str, int]:
    outcomes = Counter(outcome_of(e) for e in entries)
    return {
        "questions": len(entries),
        "distinct": distinct,
        "answered": outcomes["answered"],
        "not_covered": outcomes["not_covered"],
        "errors": outcomes["errors"],
        "disconnected": outcomes["left"],
        "follow_ups": sum(1 for e in entries if e.turn > 1),
        "llm": sum(1 for e in entries if e.mode == "llm"),
        "extractive": sum(1 for e in entries if e.mode == "extractive"),
        "thumbs_up": sum(1 for r in ratings if r.rating == "up"),
        "thumbs_down": sum(1 for r in ratings if r.rating == "down"),
    }


def _volume(
    entries: Sequence[Entry], ratings: Sequence[Feedback], since: float | None, now: float
) -> dict[str, Any]:
    """Questions per hour, day or week (by the window's length), with outcomes."""
    first = min([e.at for e in entries] + [r.at for r in ratings], default=now)
    start = since if since is not None else first
    span = max(now - start, 0.0)
    step, unit, fmt = (
        (3600, "hour", "%Y-%m-%d %H:00")
        if span <= 2 * 86_400
        else (86_400, "day", "%Y-%m-%d")
        if span <= 400 * 86_400
        else (604_800, "week", "%Y-%m-%d")
    )
    last = int(now // step)
    origin = max(int(min(start, first) // step), last - MAX_BUCKETS + 1)
    count = last - origin + 1
    rows: list[dict[str, Any]] = [
        {"start": utc((origin + i) * step, fmt), "questions": 0, "answered": 0}
        | {"not_covered": 0, "errors": 0, "left": 0, "up": 0, "down": 0}
        for i in range(count)
    ]
    for e in entries:
        row = rows[min(max(int(e.at // step) - origin, 0), count - 1)]
        row["questions"] += 1
        row[outcome_of(e)] += 1
    for r in ratings:
        rows[min(max(int(r.at // step) - origin, 0), count - 1)][r.rating] += 1
    return {"unit": unit, "buckets": rows}


def _feedback(ratings: Sequence[Feedback]) -> dict[str, Any]:
    reasons: Counter[tuple[str, str]] = Counter()
    shown: dict[tuple[str, str], str] = {}
    for r in ratings:
        if r.reason:
            key = (r.rating, question_key(r.reason))
            reasons[key] += 1
            shown.setdefault(key, r.reason)
    down = [r for r in ratings if r.rating == "down"]
    return {
        "up": sum(1 for r in ratings if r.rating == "up"),
        "down": len(down),
        "linked": sum(1 for r in ratings if r.question_id),
        "distinct_reasons": len(reasons),
        "reasons": [
            {"rating": rating, "reason": shown[(rating, key)], "count": n}
            for (rating, key), n in reasons.most_common(TOP)
        ],
        "recent_down": [
            {"at": r.at, "question": r.question, "reason": r.reason, "answer": r.answer[:300]}
            for r in down[:RECENT]
        ],
    }


def _page_url(kb: KnowledgeBase, url: str) -> str:
    """Where a page of the index opens: under the site's URL when the index has one. The
    home page's URL is empty on a site; it opens the site's root."""
    try:
        style = kb.settings.link_style or kb.store.meta("link_style") or "file"
        site = kb.store.meta("site_url") if style == "site" else ""
    except (KbQaError, AttributeError):
        return url
    if style != "site":
        return url
    base = site.rstrip("/") + "/" if site else ""
    return base + url or "./"


def _citations(
    kb: KnowledgeBase, entries: Sequence[Entry], chunks: dict[tuple[str, str], Any]
) -> dict[str, Any]:
    """Pages and sections by how many answers cited them; indexed pages never cited.

    Only covered answers count: a not-covered one cites the nearest sections to say what
    the docs have instead, which says nothing about those sections being useful.
    """
    by_page: Counter[str] = Counter()
    by_section: Counter[tuple[str, str]] = Counter()
    headings: dict[tuple[str, str], tuple[str, ...]] = {}
    covered = [e for e in entries if is_ok(e) and e.covered]
    for e in covered:
        by_page.update({c.path for c in e.citations})
        sections = {(c.path, c.anchor) for c in e.citations}
        by_section.update(sections)
        for c in e.citations:
            headings.setdefault((c.path, c.anchor), c.heading_path)
    try:
        pages = {p["path"]: p | {"url": _page_url(kb, p["url"])} for p in kb.pages()}
    except KbQaError:
        pages = {}

    def page(path: str, n: int) -> dict[str, Any]:
        known = pages.get(path, {})
        return {
            "path": path,
            "title": known.get("title", ""),
            "url": known.get("url", ""),
            "citations": n,
        }

    def section(key: tuple[str, str], n: int) -> dict[str, Any]:
        return section_json(kb, chunks, key, headings.get(key, ()), n)

    ranked_pages = by_page.most_common()
    ranked_sections = by_section.most_common()
    never = [p for path, p in sorted(pages.items()) if path not in by_page]
    return {
        "answers_citing": sum(1 for e in covered if e.citations),
        "pages_indexed": len(pages),
        "pages_cited": len(by_page),
        "most_pages": [page(p, n) for p, n in ranked_pages[:TOP]],
        # Beyond the most cited only: with fewer, a page would head one list and end the other.
        "least_pages": [page(p, n) for p, n in reversed(ranked_pages[TOP:][-TOP:])],
        "most_sections": [section(k, n) for k, n in ranked_sections[:TOP]],
        "least_sections": [section(k, n) for k, n in reversed(ranked_sections[TOP:][-TOP:])],
        "never_cited": [
            {"path": p["path"], "title": p["title"], "url": p["url"]}
            for p in never[:MAX_NEVER_CITED]
        ],
        "never_cited_count": len(never),
    }


def _percentiles(values: Iterable[float | None]) -> dict[str, float | None]:
    array = np.array([v for v in values if v is not None], dtype=np.float64)
    if not len(array):
        return {"p50": None, "p95": None, "max": None}
    p50, p95 = np.percentile(array, [50, 95])
    return {"p50": round(float(p50), 1), "p95": round(float(p95), 1), "max": float(array.max())}


def _latency(entries: Sequence[Entry]) -> dict[str, Any]:
    done = [e for e in entries if is_ok(e)]
    first = np.array([e.first_token_ms or 0.0 for e in done], dtype=np.float64)
    edges = [*LATENCY_BINS, float("inf")]
    counts = np.histogram(first, bins=edges)[0] if len(first) else np.zeros(len(edges) - 1)
    labels = [f"{a:g}-{b:g} ms" for a, b in itertools.pairwise(LATENCY_BINS)]
    labels.append(f"> {LATENCY_BINS[-1]:g} ms")
    slowest = sorted(done, key=lambda e: -(e.first_token_ms or 0.0))[:RECENT]
    return {
        "retrieval_ms": _percentiles(e.retrieval_ms for e in done),
        "first_token_ms": _percentiles(e.first_token_ms for e in done),
        "total_ms": _percentiles(e.total_ms for e in done),
        "slow_over_ms": SLOW_MS,
        "slow": int((first > SLOW_MS).sum()),
        "histogram": [{"bin": b, "count": int(n)} for b, n in zip(labels, counts)],
        "slowest": [
            {
                "at": e.at,
                "question": e.question,
                "mode": e.mode,
                "first_token_ms": e.first_token_ms,
                "total_ms": e.total_ms,
            }
            for e in slowest
        ],
    }


def _errors(entries: Sequence[Entry]) -> dict[str, Any]:
    failed = [e for e in entries if e.error]
    codes = Counter(e.error for e in failed)
    messages: dict[str, str] = defaultdict(str)
    for e in failed:
        messages[e.error] = e.error_message
    return {
        "by_code": [
            {"code": code, "count": n, "message": messages[code]} for code, n in codes.most_common()
        ],
        "recent": [
            {"at": e.at, "question": e.question, "code": e.error, "message": e.error_message}
            for e in reversed(failed[-RECENT:])
        ],
    }


# -- export ---------------------------------------------------------------------------------
