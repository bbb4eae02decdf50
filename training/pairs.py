"""Training pairs from documentation sites' own structure: no question is read.

    python training/pairs.py [--sites training/data/sites] [--out training/data/pairs.jsonl]
                             [--manifest training/manifest.json] [--context paragraph]

Every laid-out site (``training/layout.py``) is chunked exactly as kb-qa indexes it
(rendering off: Markdown as written), then gives pairs of three kinds, each query -> the
section's text as kb-qa embeds it (``Chunk.index_text``):

- ``link``: the line around an internal link ``[text](page.md#anchor)`` (or with
  ``--context paragraph`` the paragraph that holds it) -> the linked section (the link's
  own text is dropped from half of them, so that the model learns the sentence's meaning
  and not only the heading's words; ``[text]`` -> ``text`` otherwise);
- ``question``: a question-shaped heading (FAQ entries, "How do I…", "Why…", "Can I…",
  "… doesn't work", or ending in "?") -> its section's text without its heading path;
- ``heading``: a heading path (page title > … > heading) -> the section's text without
  its heading path (weaker: sampled, and weighted by the mix at training time).

Each pair carries one hard negative: the best BM25 neighbour (on the query) that is
neither the target, nor a section the target's own page nests it under, nor the section a
link's sentence was taken from, nor any section holding the query word for word; else
another such section of the same page. It is written as the positive is (with its heading
path for a link pair, without for a heading or question pair). Sites that repeat the
evaluation corpora (the 16 real-question projects and the four synthetic ones) are
dropped: more than 2% of their section hashes in those corpora. The manifest (committed)
lists each site's repository, commit, licence, sections and pairs of each kind; the pairs
themselves stay in the git-ignored ``training/data/``.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import multiprocessing
import random
import re
import sys
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from kb_qa.index import retrieval
from kb_qa.index.keyword import KeywordIndex
from kb_qa.ingest import chunking, linkgraph, vault
from kb_qa.ingest.linkgraph import Section
from kb_qa.ingest.site import load_site
from kb_qa.settings import Settings
from kb_qa.text import normalize
from kb_qa.types import Chunk

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
OVERLAP_LIMIT = 0.02
MIN_QUERY_WORDS = 4
MAX_QUERY_CHARS = 400
HEADING_SHARE = 0.5  # of the sections with no other pair, how many give a heading pair
QUESTION = re.compile(
    r"^(how|why|what|when|where|which|who|can|could|should|is|are|do|does|did|will|"
    r"must|may|am)\b|\?\s*$|\b(doesn'?t|does not|don'?t|cannot|can'?t|won'?t|isn'?t|not)\s+"
    r"(work|working|start|load|show|find|run|found)|\btroubleshoot",
    re.IGNORECASE,
)
_LINK = re.compile(r"!?\[((?:[^\[\]]|\[[^\[\]]*\]){0,300})\]\([^()\s]{1,500}(?:\s+\"[^\"]*\")?\)")
_REF = re.compile(r"\[((?:[^\[\]]){1,300})\]\[[^\]]{0,100}\]")
_SETEXT = re.compile(r"^ {0,3}(=+|-+)[ \t]*(\n|$)")
_DEFINITION_LINE = re.compile(r"^\s*\[[^\]]+\]:")
GENERIC = re.compile(
    r"(what'?s next|next steps?|where are we now|summary|overview|introduction|"
    r"what is (this|it)|faq|questions?)\??",
    re.IGNORECASE,
)
_MARKUP = re.compile(r"[*_`>#|]+|^\s*[-+] |^\s*\d+\. |!!!|\?\?\?\+?", re.MULTILINE)


@dataclass(frozen=True)
class Pair:
    kind: str
    site: str
    query: str
    positive: str
    negative: str


def site_chunks(root: Path, *, trusted: bool = False) -> list[Chunk]:
    """The sections kb-qa indexes for ``root``, its Markdown files as written.

    Another project's site is never trusted: its config is read without running any of
    its code. ``trusted`` (the evaluation corpora, which the benchmarks render) reads the
    config as MkDocs does, so that a config with Python tags still gives its sections."""
    settings = Settings.from_env(root, render=False, index_dir=root / ".kb-qa-unused")
    site = load_site(settings.vault, "", render=trusted)
    files, _ = vault.scan(site, settings)
    boundary = vault.Boundary.of(settings)
    md = site.markdown()
    chunks: list[Chunk] = []
    for info in files:
        result = vault.read_document(site, info, boundary)
        if result.document is None:
            continue
        try:
            chunks += chunking.chunk_document(result.document, md, settings.chunk_chars)
        except Exception as exc:  # noqa: BLE001 - another project's page; skip it, say so
            print(f"  {root.name}/{info.path}: not chunked ({type(exc).__name__})", file=sys.stderr)
    return chunks


def folded(chunk: Chunk) -> str:
    """A section's words as compared: normalised and case-folded."""
    return normalize(chunk.text).casefold()


def section_hash(chunk: Chunk) -> str:
    """A hash of a section's words, the same for a fork, mirror or copy of it."""
    return hashlib.sha1(folded(chunk).encode()).hexdigest()


def body(chunk: Chunk) -> str:
    """The section as embedded, without its heading path and its own heading line."""
    text = chunk.text
    first, _, rest = text.partition("\n")
    if first.lstrip().startswith("#") or _SETEXT.match(rest):
        text = _SETEXT.sub("", rest, count=1) if not first.lstrip().startswith("#") else rest
    return "\n".join(p for p in (chunk.context, text.strip()) if p)


def paragraph(text: str, line: str) -> str:
    """The paragraph of ``text`` (lines between blank lines) that holds ``line``; the line
    itself when it is not found (a link inside a fence, a list's item)."""
    for block in re.split(r"\n[ \t]*\n", text):
        if line in block.splitlines():
            return " ".join(s.strip() for s in block.splitlines())
    return line


def link_query(line: str, keep_text: bool) -> str:
    """A link's line as a reader would say it: markup dropped, link text kept or removed."""
    line = _LINK.sub(lambda m: m.group(1) if keep_text else " ", line)
    line = _REF.sub(lambda m: m.group(1) if keep_text else " ", line)
    line = _MARKUP.sub(" ", line)
    return normalize(line)[:MAX_QUERY_CHARS].strip(" .:,;-")


def _negative(
    index: KeywordIndex,
    chunks: list[Chunk],
    words: list[str],
    query: str,
    target: int,
    rng: random.Random,
    origin: Section | None = None,
) -> int | None:
    """The best BM25 neighbour other than ``target``, its own heading parents, a copy of
    it, the section the query was taken from (``origin``: a link's own section) and any
    section that holds the query word for word: such a "negative" would teach the model
    that a passage holding the reader's words is not the answer. ``words`` holds each
    chunk's ``folded`` text."""
    goal = chunks[target]
    said = normalize(query).casefold()

    def allowed(i: int) -> bool:
        c = chunks[i]
        if i == target or (c.path, c.anchor) in ((goal.path, goal.anchor), origin):
            return False
        if c.path == goal.path and tuple(goal.heading_path[: len(c.heading_path)]) == tuple(
            c.heading_path
        ):
            return False  # a parent section holds the target's words: not a negative
        return words[i] != words[target] and said not in words[i]

    for i in index.top(query, 8):
        if allowed(i):
            return i
    same_page = [i for i, c in enumerate(chunks) if c.path == goal.path and allowed(i)]
    return rng.choice(same_page) if same_page else None


def site_pairs(
    name: str, chunks: list[Chunk], rng: random.Random, context: str = "line"
) -> Iterator[Pair]:
    """The three kinds of pairs of one site; a link's query is its line, or with
    ``context="paragraph"`` the paragraph that holds it."""
    if len(chunks) < 2:
        return
    index = KeywordIndex(chunks)
    words = [folded(c) for c in chunks]  # once per site, not once per candidate negative
    at: dict[tuple[str, str], int] = {}
    for i, c in enumerate(chunks):
        at.setdefault((c.path, c.anchor), i)  # a long section's first part
    history = retrieval.history_pages(chunks)
    texts: dict[Section, list[str]] = {}
    for c in chunks:
        texts.setdefault((c.path, c.anchor), []).append(c.text)
    used: set[int] = set()
    seen: set[tuple[str, int]] = set()

    def pair(
        kind: str, query: str, target: int, positive: str, origin: Section | None = None
    ) -> Pair | None:
        if (
            len(query.split()) < (2 if kind != "link" else MIN_QUERY_WORDS)
            or (query, target) in seen
        ):
            return None
        seen.add((query, target))
        neg = _negative(index, chunks, words, query, target, rng, origin)
        if neg is None:
            return None
        # The negative is written as the positive is: with its heading path for a link
        # pair, without it for a heading or question pair, so that a heading can never
        # tell the two apart (a negative that alone kept its heading taught the model
        # that a passage whose heading says the reader's words is not the answer).
        negative = chunks[neg].index_text if kind == "link" else body(chunks[neg])
        return Pair(kind, name, query, positive, negative)

    for origin, target, link in linkgraph.resolved(chunks):
        if link.wiki or target not in at or _DEFINITION_LINE.match(link.line):
            continue  # a reference definition's line says nothing but the target
        keep = rng.random() < 0.5
        said = link.line
        if context == "paragraph":
            holder = next((t for t in texts.get(origin, []) if link.line in t), link.line)
            said = paragraph(holder, link.line)
        query = link_query(said, keep)
        if len(query.split()) < MIN_QUERY_WORDS:
            query = link_query(said, True)
        made = pair("link", query, at[target], chunks[at[target]].index_text, origin)
        if made:
            used.add(at[target])
            yield made
    for i, c in enumerate(chunks):
        if len(c.heading_path) < 2 or len(body(c).split()) < 8 or c.path in history:
            continue  # a page's title alone, a heading with nothing under it, a changelog
        heading = c.heading_path[-1]
        if (
            QUESTION.search(heading)
            and len(heading.split()) >= 3
            and not GENERIC.fullmatch(heading.strip())
        ):
            made = pair("question", normalize(heading), i, body(c))
            if made:
                used.add(i)
                yield made
    for i, c in enumerate(chunks):
        if i in used or c.path in history or len(body(c).split()) < 12:
            continue
        if GENERIC.fullmatch(c.heading_path[-1].strip()) or rng.random() > HEADING_SHARE:
            continue
        made = pair("heading", normalize(" > ".join(c.heading_path)), i, body(c))
        if made:
            yield made


def evaluation_hashes() -> set[str]:
    """Section hashes of every corpus kb-qa is evaluated on (real and synthetic)."""
    sys.path.insert(0, str(ROOT / "bench"))
    from corpora import CORPORA, REAL_CORPORA, SOURCE, real_projects

    roots = [REAL_CORPORA / p for p in real_projects()] + [SOURCE / c for c in CORPORA]
    hashes: set[str] = set()
    for root in roots:
        if not root.is_dir():
            raise SystemExit(f"evaluation corpus {root} is missing: the overlap check needs it")
        hashes |= {section_hash(c) for c in site_chunks(root, trusted=True) if len(c.text) > 80}
    return hashes


def _site(job: tuple[Path, list[str], set[str], int, str]) -> dict[str, object]:
    """One site's pairs, or why it was dropped (run in a worker process)."""
    root, row, banned, seed, context = job
    try:
        chunks = site_chunks(root)
    except Exception as exc:  # noqa: BLE001 - one broken site must not stop the rest
        return {"repository": row[0], "reason": f"{type(exc).__name__}: {exc}"}
    hashes = [section_hash(c) for c in chunks if len(c.text) > 80]
    overlap = sum(h in banned for h in hashes) / max(1, len(hashes))
    if overlap > OVERLAP_LIMIT or len(chunks) < 10:
        why = f"{overlap:.1%} of its sections are in the evaluation corpora"
        return {"repository": row[0], "reason": why if overlap else "fewer than 10 sections"}
    rng = random.Random(f"{seed}:{row[0]}")
    pairs = list(site_pairs(row[0], chunks, rng, context))
    return {
        "repository": row[0],
        "commit": row[1],
        "licence": row[2],
        "config": row[3],
        "sections": len(chunks),
        "overlap": round(overlap, 4),
        "pairs": dict(sorted(Counter(p.kind for p in pairs).items())),
        "rows": [p.__dict__ for p in pairs],
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sites", type=Path, default=HERE / "data" / "sites")
    parser.add_argument("--out", type=Path, default=HERE / "data" / "pairs.jsonl")
    parser.add_argument("--manifest", type=Path, default=HERE / "manifest.json")
    parser.add_argument("--seed", type=int, default=13)
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument(
        "--context",
        choices=("line", "paragraph"),
        default="line",
        help="a link pair's query: the link's line, or the paragraph that holds it",
    )
    args = parser.parse_args()
    sources = {
        row.split("\t")[0].replace("/", "+"): row.split("\t")
        for row in (args.sites / "sources.tsv").read_text(encoding="utf-8").splitlines()[1:]
    }
    banned = evaluation_hashes()
    print(f"{len(banned)} evaluation sections to keep out", file=sys.stderr)
    jobs = [
        (args.sites / f, row, banned, args.seed, args.context) for f, row in sorted(sources.items())
    ]
    kept: list[dict[str, object]] = []
    dropped: list[dict[str, object]] = []
    totals: Counter[str] = Counter()
    args.out.parent.mkdir(parents=True, exist_ok=True)
    with multiprocessing.Pool(args.jobs) as pool, args.out.open("w", encoding="utf-8") as out:
        for site in pool.imap(_site, jobs):
            if "reason" in site:
                dropped.append(site)
                print(f"{site['repository']}: dropped, {site['reason']}", file=sys.stderr)
                continue
            for row in site.pop("rows"):  # type: ignore[union-attr]
                out.write(json.dumps(row, ensure_ascii=False) + "\n")
            totals.update(site["pairs"])  # type: ignore[arg-type]
            kept.append(site)
            print(
                f"{site['repository']}: {site['sections']} sections, {site['pairs']}",
                file=sys.stderr,
            )
    manifest = {
        "sites": len(kept),
        "pairs": dict(sorted(totals.items())),
        "overlap_limit": OVERLAP_LIMIT,
        "kept": kept,
        "dropped": dropped,
    }
    args.manifest.write_text(json.dumps(manifest, indent=1) + "\n", encoding="utf-8")
    print(f"{len(kept)} sites, {sum(totals.values())} pairs {dict(totals)}; {len(dropped)} dropped")


if __name__ == "__main__":
    main()
