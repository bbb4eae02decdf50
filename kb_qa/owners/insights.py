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

import csv
import datetime
import itertools
import re
import sqlite3
import time
from collections import Counter, defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any, TextIO

import numpy as np

from kb_qa.errors import ConfigError, KbQaError
from kb_qa.owners import topics
from kb_qa.owners.feedback import Feedback, FeedbackStore
from kb_qa.owners.questionlog import Entry, QuestionLog
from kb_qa.settings import Settings

# Distinct gap questions grouped, most frequent first: embedding them is most of a report's
# time (~8 ms each on 2 idle cores); their vectors are kept for the next report.
MAX_GAP_TEXTS = 1000
MAX_TOPICS = 30
REPRESENTATIVE = 3  # questions shown per topic
NEAREST_SECTIONS = 3  # sections shown per gap topic
# Distinct questions merged by meaning in the top-questions list, most asked first (the rest
# are listed as asked); and rows of that list in the report (the CSV has them all).
# Embedding them is most of a first report's extra time (~7 s for 500 on 2 busy cores).
MAX_QUESTION_TEXTS = 200
TOP_QUESTIONS = 50
CITED_PER_QUESTION = 5
OTHER_WORDINGS = 3  # other wordings shown per top question
TOP = 15  # rows of the most/least cited tables
RECENT = 20  # rows of the recent errors, slowest answers and thumbs-down lists
MAX_NEVER_CITED = 200
SLOW_MS = 2000.0  # first text later than this counts as a slow answer
LATENCY_BINS = (0, 50, 100, 200, 500, 1000, 2000, 5000, 10_000)
EMBED_BATCH = 64
MAX_BUCKETS = 1000  # of the volume chart; older questions fall in the first one

_DURATION = re.compile(r"([0-9]{1,6})([mhdw])")
_UNITS = {"m": 60, "h": 3600, "d": 86_400, "w": 604_800}
_SPACE = re.compile(r"\s+")


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
    kb: Any,
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
    asked = _asked(entries, ratings)
    vectors = _Vectors(kb, log)
    chunks = _chunks(kb)
    return {
        "vault": settings.vault.name,
        "generated_at": now,
        "since": since,
        "question_log": settings.question_log,
        "totals": _totals(entries, ratings, len(asked)),
        "volume": _volume(entries, ratings, since, now),
        "feedback": _feedback(ratings),
        "questions": _questions(kb, asked, vectors, chunks, TOP_QUESTIONS),
        "gaps": _gaps(kb, entries, ratings, vectors, asked, chunks),
        "citations": _citations(kb, entries, chunks),
        "latency": _latency(entries),
        "errors": _errors(entries),
    }


def top_questions(
    kb: Any, settings: Settings, since: float | None = None, log: QuestionLog | None = None
) -> dict[str, Any]:
    """Every question asked since ``since``, near-duplicates merged, most asked first."""
    log = log or QuestionLog(settings.index_path, settings.question_log_days)
    entries = list(log.entries(since))
    ratings = FeedbackStore(settings.index_path).all(since=since)
    return _questions(kb, _asked(entries, ratings), _Vectors(kb, log), _chunks(kb), None)


def _ok(e: Entry) -> bool:
    return not e.error


def _outcome(e: Entry) -> str:
    """answered, not_covered, errors, or left (the reader went before the answer ended)."""
    if e.error:
        return "left" if e.error == "disconnected" else "errors"
    return "answered" if e.covered else "not_covered"


def _totals(entries: Sequence[Entry], ratings: Sequence[Feedback], distinct: int) -> dict[str, int]:
    outcomes = Counter(_outcome(e) for e in entries)
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
    rows = [
        {"start": _utc((origin + i) * step, fmt), "questions": 0, "answered": 0}
        | {"not_covered": 0, "errors": 0, "left": 0, "up": 0, "down": 0}
        for i in range(count)
    ]
    for e in entries:
        row = rows[min(max(int(e.at // step) - origin, 0), count - 1)]
        row["questions"] += 1
        row[_outcome(e)] += 1
    for r in ratings:
        rows[min(max(int(r.at // step) - origin, 0), count - 1)][r.rating] += 1
    return {"unit": unit, "buckets": rows}


def _utc(at: float, fmt: str) -> str:
    return datetime.datetime.fromtimestamp(at, datetime.timezone.utc).strftime(fmt)


def _feedback(ratings: Sequence[Feedback]) -> dict[str, Any]:
    reasons: Counter[tuple[str, str]] = Counter()
    shown: dict[tuple[str, str], str] = {}
    for r in ratings:
        if r.reason:
            key = (r.rating, _key(r.reason))
            reasons[key] += 1
            shown.setdefault(key, r.reason)
    down = [r for r in ratings if r.rating == "down"]
    return {
        "up": sum(1 for r in ratings if r.rating == "up"),
        "down": len(down),
        "linked": sum(1 for r in ratings if r.question_id),
        "reasons": [
            {"rating": rating, "reason": shown[(rating, key)], "count": n}
            for (rating, key), n in reasons.most_common(TOP)
        ],
        "recent_down": [
            {"at": r.at, "question": r.question, "reason": r.reason, "answer": r.answer[:300]}
            for r in down[:RECENT]
        ],
    }


def _key(text: str) -> str:
    """Questions that differ only in case and spacing are the same question."""
    return _SPACE.sub(" ", text).strip().casefold()


@dataclass
class _Asked:
    """Every time one question (the same text but for case and spacing) was asked."""

    wordings: Counter[str] = field(default_factory=Counter)
    asked: int = 0
    last: float = 0.0
    outcomes: Counter[str] = field(default_factory=Counter)
    cited: Counter[tuple[str, str]] = field(default_factory=Counter)  # what readers were shown
    headings: dict[tuple[str, str], tuple[str, ...]] = field(default_factory=dict)
    up: int = 0
    down: int = 0
    reasons: Counter[str] = field(default_factory=Counter)

    @property
    def label(self) -> str:
        return self.wordings.most_common(1)[0][0]


def _asked(entries: Sequence[Entry], ratings: Sequence[Feedback]) -> dict[str, _Asked]:
    """The logged questions by their text, with the feedback that rated their answers."""
    asked: dict[str, _Asked] = {}
    keys: dict[str, str] = {}  # question id -> key
    texts: dict[str, str] = {}  # question -> key: the same few thousand texts over and over
    for e in entries:
        key = texts.get(e.question)
        if key is None:
            key = texts[e.question] = _key(e.question)
        item = asked.get(key)
        if item is None:
            item = asked[key] = _Asked()
        keys[e.ref] = key
        item.wordings[e.question] += 1
        item.asked += 1
        item.last = max(item.last, e.at)
        item.outcomes[_outcome(e)] += 1
        for c in e.citations:
            section = (c.path, c.anchor)
            item.cited[section] += 1
            if section not in item.headings:
                item.headings[section] = c.heading_path
    for r in ratings:
        key = keys.get(r.question_id) or _key(r.question)
        rated = asked.get(key)
        if rated is None:  # about a question the log does not have (off, or pruned)
            continue
        if r.rating == "up":
            rated.up += 1
        else:
            rated.down += 1
        if r.reason:
            rated.reasons[r.reason] += 1
    return asked


class _Vectors:
    """Unit vectors of question texts for one report: each embedded (or read) once."""

    def __init__(self, kb: Any, log: QuestionLog) -> None:
        self.kb = kb
        self.log = log
        self.known: dict[str, np.ndarray] = {}

    def __call__(self, texts: list[str]) -> np.ndarray:
        missing = [t for t in dict.fromkeys(texts) if t not in self.known]
        if missing:
            self.known.update(_embed(self.kb, missing, self.log))
        return np.stack([self.known[t] for t in texts])


def _chunks(kb: Any) -> dict[tuple[str, str], Any]:
    """The index's chunks by (path, anchor), a section's first piece for its key."""
    try:
        return {(c.path, c.anchor): c for c in reversed(kb.store.chunks())}
    except KbQaError:
        return {}


def _section(
    kb: Any,
    chunks: dict[tuple[str, str], Any],
    key: tuple[str, str],
    heading_path: Sequence[str] = (),
    citations: int | None = None,
) -> dict[str, Any]:
    """One section for the report, linked when the index still has it."""
    chunk = chunks.get(key)
    found: dict[str, Any] = {
        "path": key[0],
        "anchor": key[1],
        "heading_path": list(chunk.heading_path if chunk else heading_path),
        "url": kb.url(chunk) if chunk else "",
    }
    if citations is not None:
        found["citations"] = citations
    return found


def _questions(
    kb: Any,
    asked: dict[str, _Asked],
    vectors: _Vectors,
    chunks: dict[tuple[str, str], Any],
    limit: int | None,
) -> dict[str, Any]:
    """What readers asked, most asked first: questions that say the same thing merged."""
    items = sorted(asked.values(), key=lambda a: (-a.asked, -a.last))
    kept = items[:MAX_QUESTION_TEXTS]
    similarity = topics.duplicate_threshold(kb.embedder.name)
    result: dict[str, Any] = {"distinct": len(items), "merged": len(kept)}
    result["similarity"] = similarity
    groups: list[list[_Asked]] = []
    if kept:
        try:
            found = topics.cluster(
                vectors([a.label for a in kept]), [a.asked for a in kept], similarity
            )
            groups = [[kept[i] for i in t.members] for t in found]
        except KbQaError as exc:  # listed as asked, unmerged
            result["problem"] = f"questions asked in other words were not merged: {exc}"
            groups = [[a] for a in kept]
    groups += [[a] for a in items[MAX_QUESTION_TEXTS:]]
    rows = [_question_row(kb, chunks, group) for group in groups]
    rows.sort(key=lambda r: (-r["asked"], -r["last_asked"]))
    result["groups"] = len(rows)
    result["top"] = rows if limit is None else rows[:limit]
    return result


def _question_row(
    kb: Any, chunks: dict[tuple[str, str], Any], group: list[_Asked]
) -> dict[str, Any]:
    wordings: Counter[str] = Counter()
    outcomes: Counter[str] = Counter()
    cited: Counter[tuple[str, str]] = Counter()
    reasons: Counter[str] = Counter()
    headings: dict[tuple[str, str], tuple[str, ...]] = {}
    for a in group:
        wordings.update(a.wordings)
        outcomes.update(a.outcomes)
        cited.update(a.cited)
        reasons.update(a.reasons)
        for key, heading in a.headings.items():
            headings.setdefault(key, heading)
    label = max(group, key=lambda a: a.asked).label
    others = [w for w, _ in wordings.most_common() if w != label]
    return {
        "question": label,
        "asked": sum(a.asked for a in group),
        "last_asked": max(a.last for a in group),
        "wordings": len(wordings),
        "also_asked_as": others[:OTHER_WORDINGS],
        "outcome": outcomes.most_common(1)[0][0],
        "outcomes": {k: outcomes[k] for k in ("answered", "not_covered", "errors", "left")},
        "thumbs_up": sum(a.up for a in group),
        "thumbs_down": sum(a.down for a in group),
        "reasons": [{"reason": r, "count": n} for r, n in reasons.most_common(3)],
        "sections": [
            _section(kb, chunks, key, headings.get(key, ()), n)
            for key, n in cited.most_common(CITED_PER_QUESTION)
        ],
    }


def _gaps(
    kb: Any,
    entries: Sequence[Entry],
    ratings: Sequence[Feedback],
    vectors: _Vectors,
    logged: dict[str, _Asked],
    chunks: dict[tuple[str, str], Any],
) -> dict[str, Any]:
    """Not-covered and thumbs-down questions grouped into topics, largest first."""
    asked: dict[str, dict[str, Any]] = {}

    def add(text: str, field: str) -> None:
        key = _key(text)
        item = asked.setdefault(key, {"question": text, "key": key, "not_covered": 0, "down": 0})
        item["question"] = text  # the latest wording (entries come oldest first)
        item[field] += 1

    for e in entries:
        if _ok(e) and e.covered is False:
            add(e.question, "not_covered")
    for r in reversed(ratings):  # oldest first, like the entries
        if r.rating == "down":
            add(r.question, "down")
    items = sorted(asked.values(), key=lambda i: -(i["not_covered"] + i["down"]))
    kept = items[:MAX_GAP_TEXTS]
    result: dict[str, Any] = {"questions": len(items), "clustered": len(kept), "topics": []}
    if not kept:
        return result
    try:
        found_vectors = vectors([i["question"] for i in kept])
    except KbQaError as exc:  # the report still says everything else
        result["problem"] = f"questions were not grouped: {exc}"
        return result
    weights = [i["not_covered"] + i["down"] for i in kept]
    found = topics.cluster(found_vectors, weights, topics.threshold(kb.embedder.name))
    for topic in found[:MAX_TOPICS]:
        members = [kept[i] for i in topic.members]
        # What the readers who asked were shown (the log's citations), most often first.
        shown: Counter[tuple[str, str]] = Counter()
        headings: dict[tuple[str, str], tuple[str, ...]] = {}
        for m in members:
            if m["key"] in logged:
                shown.update(logged[m["key"]].cited)
                for key, heading in logged[m["key"]].headings.items():
                    headings.setdefault(key, heading)
        result["topics"].append(
            {
                "size": int(topic.weight),
                "distinct": len(members),
                "not_covered": sum(m["not_covered"] for m in members),
                "thumbs_down": sum(m["down"] for m in members),
                "questions": [m["question"] for m in members[:REPRESENTATIVE]],
                "sections": [
                    _section(kb, chunks, key, headings.get(key, ()))
                    for key, _ in shown.most_common(NEAREST_SECTIONS)
                ],
            }
        )
    result["more_topics"] = max(len(found) - MAX_TOPICS, 0)
    return result


def _embed(kb: Any, texts: list[str], log: QuestionLog) -> dict[str, np.ndarray]:
    """Unit vectors of ``texts`` by text: kept ones reused, the rest embedded shortest
    first in batches (and kept)."""
    model = kb.embedder.name
    try:
        known = log.vectors(model, texts)
    except sqlite3.Error:
        known = {}
    missing = sorted({t for t in texts if t not in known}, key=len)
    made: dict[str, np.ndarray] = {}
    for start in range(0, len(missing), EMBED_BATCH):
        batch = missing[start : start + EMBED_BATCH]
        made.update(zip(batch, np.asarray(kb.embedder.embed_passages(batch), np.float32)))
    if made:
        try:
            log.keep_vectors(model, made)
        except (OSError, sqlite3.Error):  # a read-only index folder: embed again next time
            pass
    return {t: known[t] if t in known else made[t] for t in texts}


def _page_url(kb: Any, url: str) -> str:
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
    kb: Any, entries: Sequence[Entry], chunks: dict[tuple[str, str], Any]
) -> dict[str, Any]:
    """Pages and sections by how many answers cited them; indexed pages never cited.

    Only covered answers count: a not-covered one cites the nearest sections to say what
    the docs have instead, which says nothing about those sections being useful.
    """
    by_page: Counter[str] = Counter()
    by_section: Counter[tuple[str, str]] = Counter()
    headings: dict[tuple[str, str], tuple[str, ...]] = {}
    covered = [e for e in entries if _ok(e) and e.covered]
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
        return _section(kb, chunks, key, headings.get(key, ()), n)

    ranked_pages = by_page.most_common()
    ranked_sections = by_section.most_common()
    never = [p for path, p in sorted(pages.items()) if path not in by_page]
    return {
        "answers_citing": sum(1 for e in covered if e.citations),
        "pages_indexed": len(pages),
        "pages_cited": len(by_page),
        "most_pages": [page(p, n) for p, n in ranked_pages[:TOP]],
        "least_pages": [page(p, n) for p, n in reversed(ranked_pages[-TOP:])],
        "most_sections": [section(k, n) for k, n in ranked_sections[:TOP]],
        "least_sections": [section(k, n) for k, n in reversed(ranked_sections[-TOP:])],
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
    done = [e for e in entries if _ok(e)]
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
            _utc(e.at, "%Y-%m-%dT%H:%M:%SZ"),
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
            _utc(q["last_asked"], "%Y-%m-%dT%H:%M:%SZ"),
        ]
        writer.writerow([_cell(v) for v in row])
    return len(questions["top"])


def _num(value: float | None) -> str:
    return "" if value is None else f"{value:g}"


def _cell(value: object) -> str:
    """A cell a spreadsheet will not run: text starting like a formula gets a quote."""
    text = str(value)
    return "'" + text if text[:1] in ("=", "+", "-", "@", "\t", "\r") else text
