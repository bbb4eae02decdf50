"""Retrieval evaluation: how often the right heading section is found, and how high.

Each line of a questions file is ``{"question": ..., "gold": [{"path": ..., "anchor": ...}]}``;
a gold entry may give ``"heading"`` (its text) instead of ``"anchor"``, neither (the page:
any of its sections counts), or be a string: ``"docs/setup.md#install"``, a page URL with
its ``#anchor``, or a page alone. A hit counts when a result's path and anchor equal a gold
pair.
"""

from __future__ import annotations

import difflib
import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING
from urllib.parse import unquote

from markdown.extensions.toc import slugify

from kb_qa.errors import ConfigError
from kb_qa.ingest.anchors import match_text
from kb_qa.settings import Settings
from kb_qa.types import Chunk, Hit

if TYPE_CHECKING:
    from kb_qa.kb.knowledge_base import KnowledgeBase

CUTOFFS = (1, 5, 10, 20, 50)
PAGE = "*"  # the anchor of a gold page given without a section: any of its sections counts
FORMAT = (
    'one JSON object per line, {"question": "...", "gold": [{"path": "docs/setup.md", '
    '"anchor": "install"}]}; a gold entry may name a "heading" instead of an "anchor", '
    'only a "path" (any section of that page counts), or be a string: "docs/setup.md#install"'
)


@dataclass(frozen=True)
class Question:
    """One evaluation question and the sections that answer it."""

    question: str
    gold: tuple[tuple[str, str], ...]  # (path, anchor); "?<heading>" for a heading not found
    line: int = 0  # of the questions file, 1-based (0: not read from a file)


def load_questions(path: Path, chunks: Sequence[Chunk]) -> list[Question]:
    """Read a JSONL questions file, resolving gold headings to anchors."""
    by_heading: dict[tuple[str, str], str] = {}
    for c in chunks:
        by_heading.setdefault((c.path, match_text(c.heading)), c.anchor)
        by_heading.setdefault((c.path, c.anchor), c.anchor)
    resolve_path = _path_resolver(chunks)
    questions = []
    try:
        lines = path.read_text(encoding="utf-8-sig").splitlines()  # Notepad's BOM too
    except OSError as exc:
        raise ConfigError(f"Cannot read questions file {path}: {exc.strerror or exc}.") from exc
    except UnicodeDecodeError as exc:
        line_of = path.read_bytes()[: exc.start].count(b"\n") + 1
        raise ConfigError(
            f"{path}:{line_of}: not UTF-8 text (byte {exc.object[exc.start]:#x}); save the file "
            "as UTF-8."
        ) from None
    for n, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            item = json.loads(line)
        except ValueError as exc:
            raise ConfigError(
                f"{path}:{n}: not valid JSON ({getattr(exc, 'msg', exc)}, at column "
                f"{getattr(exc, 'colno', '?')}); write {FORMAT}."
            ) from exc
        if not isinstance(item, dict) or not str(item.get("question") or "").strip():
            raise ConfigError(f'{path}:{n}: no "question" text; write {FORMAT}.')
        given = item.get("gold")
        given = [given] if isinstance(given, (str, dict)) else given
        if not isinstance(given, list) or not given:
            raise ConfigError(f'{path}:{n}: "gold" must be a list of sections; write {FORMAT}.')
        gold = []
        for g in given:
            if isinstance(g, str):  # "docs/setup.md#install", a URL, or a page
                page, _, anchor = g.partition("#")
                g = {"path": page, "anchor": anchor} if anchor else {"path": page}
            if not isinstance(g, dict) or not isinstance(g.get("path"), str):
                raise ConfigError(f'{path}:{n}: a gold entry has no "path"; write {FORMAT}.')
            page = resolve_path(g["path"])
            if g.get("anchor"):
                gold.append((page, str(g["anchor"]).lstrip("#")))
            elif g.get("heading"):
                # A heading renamed with its id kept ("Stopping a job from retrying { #non-
                # retryable-failures }") is still found by the id the old words made.
                heading = str(g["heading"])
                found = by_heading.get((page, match_text(heading)))
                if found is None:  # (a page's title chunk has the anchor "")
                    found = by_heading.get((page, slugify(heading, "-")), "?" + heading)
                gold.append((page, found))
            else:
                gold.append((page, PAGE))
        questions.append(Question(item["question"], tuple(gold), n))
    if not questions:
        raise ConfigError(f"{path} holds no questions: write {FORMAT}.")
    return questions


def _path_resolver(chunks: Sequence[Chunk]) -> Callable[[str], str]:
    """Map a gold page given as vault path, docs-relative path or page URL to the vault path."""
    paths = {c.path for c in chunks}
    by_url = {unquote(c.url).strip("/"): c.path for c in chunks}

    def resolve(given: str) -> str:
        given = given.strip().lstrip("./")
        if given in paths:
            return given
        # A URL (or URL path): drop the scheme, host and any site prefix, segment by segment.
        segments = given.split("#", 1)[0].split("://", 1)[-1].strip("/").split("/")
        for start in range(len(segments)):
            candidate = unquote("/".join(segments[start:]))
            if candidate in by_url:
                return by_url[candidate]
        tails = [p for p in paths if p.endswith("/" + given)]
        return tails[0] if len(tails) == 1 else given

    return resolve


def gold_label(path: str, anchor: str) -> str:
    """A gold section as people write it: ``path#anchor`` (or the heading that was not found)."""
    if anchor.startswith("?"):
        return f"{path} (heading {anchor[1:]!r})"
    if anchor == PAGE:
        return f"{path} (any section)"
    return f"{path}#{anchor}" if anchor else path


def unknown_gold(questions: Sequence[Question], chunks: Sequence[Chunk]) -> list[str]:
    """One warning per gold section that is not in the index, with the nearest one that is.

    Such a section can never be found, so its question always counts as a miss: usually a
    typo in the questions file or a heading that was renamed since it was written.
    """
    anchors: dict[str, list[str]] = {}
    headings: dict[str, dict[str, str]] = {}
    for c in chunks:
        anchors.setdefault(c.path, [])
        if c.anchor not in anchors[c.path]:
            anchors[c.path].append(c.anchor)
        headings.setdefault(c.path, {}).setdefault(c.heading, c.anchor)
    warnings = []
    for q in questions:
        where = f"line {q.line}: " if q.line else ""
        for path, anchor in q.gold:
            if path not in anchors:
                near = difflib.get_close_matches(path, list(anchors), n=1, cutoff=0.5)
                hint = f"; nearest indexed page: {near[0]}" if near else ""
                warnings.append(f"{where}gold page {path} is not in the index{hint}")
                continue
            if anchor in anchors[path] or anchor == PAGE:
                continue
            if anchor.startswith("?"):
                heading = anchor[1:]
                near = difflib.get_close_matches(heading, list(headings[path]), n=1, cutoff=0.0)
                hint = f"; nearest: {near[0]!r} (#{headings[path][near[0]]})" if near else ""
                warnings.append(f"{where}gold heading {heading!r} is not on {path}{hint}")
            else:
                near = difflib.get_close_matches(anchor, anchors[path], n=1, cutoff=0.0)
                hint = f"; nearest anchor: {path}#{near[0]}" if near else ""
                warnings.append(f"{where}gold {path}#{anchor} is not in the index{hint}")
    return warnings


def rank_of(hits: Sequence[Hit], gold: Sequence[tuple[str, str]]) -> int | None:
    """1-based rank of the first hit whose (path, anchor) is gold."""
    for rank, hit in enumerate(hits, 1):
        if is_gold(hit, gold):
            return rank
    return None


def is_gold(hit: Hit, gold: Sequence[tuple[str, str]]) -> bool:
    """Whether ``hit`` is a gold section (or on a gold page given without one)."""
    return (hit.chunk.path, hit.chunk.anchor) in gold or (hit.chunk.path, PAGE) in gold


def page_rank_of(hits: Sequence[Hit], gold: Sequence[tuple[str, str]]) -> int | None:
    """1-based rank of the first hit on a gold page."""
    pages = {p for p, _ in gold}
    for rank, hit in enumerate(hits, 1):
        if hit.chunk.path in pages:
            return rank
    return None


def metrics(
    ranks: Sequence[int | None],
    page_ranks: Sequence[int | None],
    in_prompt: Sequence[bool] | None = None,
) -> dict[str, float]:
    """R@1/5/10/20/50, MRR@20, page-level R@5 and (when given) in-prompt recall."""
    n = len(ranks)
    if n == 0:
        return {"n": 0}
    result: dict[str, float] = {"n": n}
    for cut in CUTOFFS:
        result[f"R@{cut}"] = sum(1 for r in ranks if r is not None and r <= cut) / n
    result["MRR@20"] = sum(1 / r for r in ranks if r is not None and r <= 20) / n
    result["page@5"] = sum(1 for r in page_ranks if r is not None and r <= 5) / n
    if in_prompt is not None:
        result["in-prompt"] = sum(in_prompt) / n
    return result


@dataclass(frozen=True)
class Outcome:
    """How retrieval did on one question."""

    question: Question
    rank: int | None  # of the first gold section among the search results (up to 50)
    page_rank: int | None
    in_prompt: bool  # a gold section is among the excerpts the answering model receives
    top: tuple[Hit, ...]  # the first few results, to show misses


def run(kb: KnowledgeBase, questions: Sequence[Question], settings: Settings) -> list[Outcome]:
    """Search each question as `kb-qa search` does, and assemble its prompt as answering
    does (without the optional query rewrite: no model is asked)."""
    from kb_qa.answer.answering import prepare

    outcomes = []
    for q in questions:
        hits = kb.search(q.question, max(CUTOFFS))
        # What an answering model would receive, model or not.
        excerpts = prepare(kb, settings, q.question, for_model=True).prompt.excerpts
        outcomes.append(
            Outcome(
                q,
                rank_of(hits, q.gold),
                page_rank_of(hits, q.gold),
                any(is_gold(h, q.gold) for h in excerpts),
                tuple(hits[:3]),
            )
        )
    return outcomes


def summarize(outcomes: Sequence[Outcome]) -> dict[str, float]:
    """:func:`metrics` of a list of outcomes."""
    return metrics(
        [o.rank for o in outcomes], [o.page_rank for o in outcomes], [o.in_prompt for o in outcomes]
    )
