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
import re
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import unquote

from markdown.extensions.toc import slugify

from kb_qa.errors import ConfigError
from kb_qa.ingest.anchors import match_text, source_key
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


GOLD_KEYS = ("path", "anchor", "heading")
# What a heading path's parts are joined with as kb-qa prints one: `kb-qa search` and
# `kb-qa feedback` write " > ", insights and answers " › ".
_PATH_JOINS = (" › ", " > ")


def load_questions(path: Path, chunks: Sequence[Chunk]) -> list[Question]:
    """Read a JSONL questions file, resolving gold headings to anchors."""
    return read_questions(path, chunks)[0]


def read_questions(path: Path, chunks: Sequence[Chunk]) -> tuple[list[Question], list[str]]:
    """:func:`load_questions`, and warnings about the file itself: a gold heading that
    names two sections, an anchor and a heading that disagree, a question asked twice."""
    by_heading: dict[tuple[str, str], str] = {}
    twice: dict[tuple[str, str], list[str]] = {}
    for c in chunks:
        for key in ((c.path, match_text(c.heading)), (c.path, _path_key(c.heading_path))):
            if by_heading.setdefault(key, c.anchor) != c.anchor:
                twice.setdefault(key, [by_heading[key]]).append(c.anchor)
        by_heading.setdefault((c.path, c.anchor), c.anchor)
    ids = {(c.path, c.anchor) for c in chunks}
    resolve_path = _path_resolver(chunks)
    questions: list[Question] = []
    warnings: list[str] = []
    asked: dict[str, int] = {}
    for n, item in _lines(path):
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
            _known_keys(g, f"{path}:{n}")
            page = resolve_path(g["path"])
            heading = str(g.get("heading") or "")
            found = _heading_anchor(by_heading, page, heading) if heading else None
            if heading and (page, _heading_key(heading)) in twice:
                named = ", ".join("#" + a for a in twice[(page, _heading_key(heading))])
                warnings.append(
                    f"line {n}: gold heading {heading!r} names {named} on {page}: the first is "
                    'scored; give its "anchor" (or its heading path, "Page › Section") to pick'
                )
            if g.get("anchor"):
                anchor = str(g["anchor"]).lstrip("#")
                if (page, anchor) not in ids:  # as an address bar shows it: "#%E5%88%9B"
                    anchor = unquote(anchor)
                if (page, anchor) not in ids:  # the heading's words for its id: "#创建任务"
                    anchor = by_heading.get((page, match_text(anchor)), anchor)
                if heading and found is not None and found != anchor:
                    warnings.append(
                        f"line {n}: gold anchor #{anchor} and heading {heading!r} (#{found}) are "
                        f"two sections of {page}: the anchor is scored"
                    )
                gold.append((page, anchor))
            elif heading:
                gold.append((page, "?" + heading if found is None else found))
            else:
                gold.append((page, PAGE))
        text = str(item["question"])
        if text.strip() in asked:
            warnings.append(
                f"line {n}: the question of line {asked[text.strip()]} again: it counts twice"
            )
        asked.setdefault(text.strip(), n)
        questions.append(Question(text, tuple(gold), n))
    if not questions:
        raise ConfigError(f"{path} holds no questions: write {FORMAT}.")
    return questions, warnings


def _lines(path: Path) -> Iterator[tuple[int, dict[str, Any]]]:
    """(line number, object) for each question line of the JSONL file ``path``."""
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
        if line.lstrip().startswith("["):
            raise ConfigError(
                f"{path}:{n}: a JSON list: eval reads JSON Lines, one question per line with no "
                '[ ] around them: {"question": "...", "gold": [{"path": "docs/setup.md", '
                '"anchor": "install"}]}'
            )
        try:
            item = json.loads(line)
        except ValueError as exc:
            raise ConfigError(
                f"{path}:{n}: not valid JSON ({getattr(exc, 'msg', exc)}, at column "
                f"{getattr(exc, 'colno', '?')}); write {FORMAT}."
            ) from exc
        if not isinstance(item, dict) or not str(item.get("question") or "").strip():
            raise ConfigError(f'{path}:{n}: no "question" text; write {FORMAT}.')
        yield n, item


def _known_keys(entry: dict[str, Any], where: str) -> None:
    """Refuse a gold entry's key that reads as a misspelt one of eval's ("anchr",
    "Heading"), or any other key of an entry without an anchor or heading ("section"):
    either would silently make any section of the page count. Other keys (a "url" kept
    for people) are left alone."""
    bare = not (entry.get("anchor") or entry.get("heading"))
    for key in entry:
        if key in GOLD_KEYS:
            continue
        near = difflib.get_close_matches(str(key).lower(), GOLD_KEYS, n=1, cutoff=0.6)
        if near or bare:
            hint = f' (did you mean "{near[0]}"?)' if near else ""
            raise ConfigError(
                f'{where}: a gold entry has the key "{key}"{hint}: eval reads "path" with '
                '"anchor" or "heading"; with "path" alone any section of the page counts.'
            )


def _path_key(heading_path: Sequence[str]) -> str:
    return " › ".join(match_text(h) for h in heading_path)


def _heading_key(heading: str) -> str:
    """What a gold heading is looked up by: its text, or its heading path's parts."""
    for join in _PATH_JOINS:
        if join in heading:
            return _path_key(heading.split(join))
    return source_key(heading)  # "Rotating tokens { #token-rotation }" as the page shows it


def _heading_anchor(by_heading: dict[tuple[str, str], str], page: str, heading: str) -> str | None:
    """The anchor of ``heading`` (its text or its path) on ``page``: a heading renamed with
    its id kept ("Stopping a job from retrying { #non-retryable-failures }") is still found
    by the id the old words made."""
    found = by_heading.get((page, _heading_key(heading)))
    if found is None:  # (a page's title chunk has the anchor "")
        found = by_heading.get((page, slugify(heading, "-")))
    return found


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
                last = re.split("|".join(_PATH_JOINS), heading)[-1]  # a path's own heading
                near = difflib.get_close_matches(last, list(headings[path]), n=1, cutoff=0.0)
                hint = f"; nearest: {near[0]!r} (#{headings[path][near[0]]})" if near else ""
                warnings.append(f"{where}gold heading {heading!r} is not on {path}{hint}")
            else:
                near = difflib.get_close_matches(anchor, anchors[path], n=1, cutoff=0.0)
                hint = f"; nearest anchor: {path}#{near[0]}" if near else ""
                warnings.append(f"{where}gold {path}#{anchor} is not in the index{hint}")
    return warnings


def other_vault(questions: Sequence[Question], chunks: Sequence[Chunk]) -> str:
    """What to say when no gold page of ``questions`` is in the index (a question set for
    another vault), else ""."""
    pages = {c.path for c in chunks}
    gold = {p for q in questions for p, _ in q.gold}
    if gold & pages or any(difflib.get_close_matches(p, pages, n=1, cutoff=0.8) for p in gold):
        return ""  # a typo ("retrys.md") is warned about with the page it is near
    return (
        "none of its gold pages is in this index: is it the question set of another vault? "
        "Give that vault with --vault (or KBQA_VAULT)."
    )


def settings_used(kb: KnowledgeBase) -> dict[str, object]:
    """The settings that decide a ranking, as ``eval --json`` records them beside its figures."""
    s = kb.settings
    from kb_qa.kb.staleness import built_parts

    try:  # as the index was cut: "--chunk-chars 700" over an index built at 1500 ranks 1500's
        built = int(built_parts(kb.store)["chunk_chars"])
    except (ValueError, KeyError, TypeError):
        built = s.chunk_chars
    return {
        "vault": str(s.vault),
        "embed_model": kb.store.meta("embed_model") or s.embed_model,  # "auto" as it chose
        "chunk_chars": built,
        "fusion": s.fusion,
        "vector_weight": s.vector_weight,
        "page_weight": s.page_weight,
        "top_k": s.top_k,
    }


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
