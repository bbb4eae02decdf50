"""No-key answers on real questions: do they cite the section a maintainer pointed to, and do
they say so when the docs don't cover a question?

    python bench/answers.py [--set real|dev|test|synthetic|both] [--embed-model M]
    python bench/answers.py --followups

Per corpus: how often the extractive answer cites a gold section at all and as its first
citation; the share of on-topic questions marked ``covered: false`` (should be <= 5%) and
of the 40 off-topic questions in bench/questions/offtopic.jsonl marked ``covered: false``
on that corpus (should be >= 90%); p50 time to the first text. Uses the indexes
bench/quality.py builds (default settings, or those of --embed-model).

--followups: bench/questions/followups.jsonl holds 20 follow-ups (5 per synthetic corpus)
that lean on the previous question ("How do I shrink it?"), each with the same question
written out in full. Prints R@5 of the gold section among the answer's excerpts for the
follow-up with the conversation (as the API searches it: kb_qa.answer.prepare.follow_up_queries),
the follow-up alone, and the full question, and how often the no-key answer's first passage comes
from a gold section.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from corpora import QUESTIONS, WORK, eval_sets, index_dir

from kb_qa import KnowledgeBase
from kb_qa.answer import evaluate, extractive
from kb_qa.answer.answering import Citations, Done, answer, prepare
from kb_qa.answer.prompt import Turn

OFFTOPIC = [json.loads(line)["question"] for line in (QUESTIONS / "offtopic.jsonl").open()]


async def _run(kb: KnowledgeBase, question: str) -> tuple[Done, Citations]:
    events = [e async for e in answer(kb, question)]
    done, citations = events[-1], events[-2]
    assert isinstance(done, Done) and isinstance(citations, Citations), events[-1]
    return done, citations


def _section_rank(
    kb: KnowledgeBase, question: str, history: list[Turn], gold: list
) -> tuple[int, bool]:
    """Rank of the first gold section among the answer's excerpts (999 when absent), and
    whether the no-key answer's first passage is from a gold section."""
    prepared = prepare(kb, kb.settings, question, history)
    seen: list[tuple[str, str]] = []
    for _, hit in prepared.ranked:
        key = (hit.chunk.path, hit.chunk.anchor)
        if key not in seen:
            seen.append(key)
    quoted = extractive.quote_prepared(prepared).quoted
    hits = dict(prepared.ranked)
    first = next(((hits[n].chunk.path, hits[n].chunk.anchor) for n in quoted), None)
    return next((n for n, key in enumerate(seen, 1) if key in gold), 999), first in gold


def followups() -> None:
    rows = [json.loads(line) for line in (QUESTIONS / "followups.jsonl").open()]
    found: dict[str, list[tuple[int, bool]]] = {
        "with the conversation": [],
        "follow-up alone": [],
        "full": [],
    }
    for kind, name, vault, _ in eval_sets("synthetic"):
        kb = KnowledgeBase(vault, index_dir=WORK / "index" / f"{kind}-{name}-default-d")
        kb.index()
        mine = [r for r in rows if r["corpus"] == name]
        path = WORK / f"followups-{name}.jsonl"
        path.write_text(
            "\n".join(json.dumps({"question": r["full"], "gold": r["gold"]}) for r in mine)
        )
        golds = evaluate.load_questions(path, kb.store.chunks())
        for row, q in zip(mine, golds):
            gold = list(q.gold)
            history = [Turn("user", row["previous"]), Turn("assistant", "(an answer)")]
            found["with the conversation"].append(_section_rank(kb, row["followup"], history, gold))
            found["follow-up alone"].append(_section_rank(kb, row["followup"], [], gold))
            found["full"].append(_section_rank(kb, row["full"], [], gold))
        kb.close()
    for label, ranks in found.items():
        n = len(ranks)
        print(
            f"{label:<24} R@5 {sum(r <= 5 for r, _ in ranks) / n:.3f}  first passage from a "
            f"gold section {sum(first for _, first in ranks) / n:.3f}  (n={n})"
        )


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument(
        "--set", default="real", choices=("real", "dev", "test", "synthetic", "both")
    )
    parser.add_argument("--followups", action="store_true")
    parser.add_argument("--embed-model", default=None, help="the indexes quality.py built with it")
    args = parser.parse_args()
    if args.followups:
        followups()
        return
    header = f"{'set':<10} {'corpus':<20} {'n':>3} {'cites gold':>10} {'first=gold':>10} "
    print(header + f"{'on: not covered':>15} {'off: not covered':>16} {'first text p50':>14}")
    totals: dict[str, list[list[float]]] = {}
    for kind, name, vault, questions_file in eval_sets(args.set):
        kb = KnowledgeBase(
            vault, embed_model=args.embed_model, index_dir=index_dir(kind, name, args.embed_model)
        )
        kb.index()
        questions = evaluate.load_questions(questions_file, kb.store.chunks())
        cites, first, missed, firsts = [], [], [], []
        for q in questions:
            done, citations = asyncio.run(_run(kb, q.question))
            cited = [(c.path, c.anchor) for c in citations.citations]
            cites.append(any(c in q.gold for c in cited))
            first.append(bool(cited) and cited[0] in q.gold)
            missed.append(not getattr(done, "covered", True))
            firsts.append(done.timings["first_token_ms"])
        off = [not getattr(asyncio.run(_run(kb, q))[0], "covered", True) for q in OFFTOPIC]
        row = [
            sum(cites) / len(cites),
            sum(first) / len(first),
            sum(missed) / len(missed),
            sum(off) / len(off),
        ]
        for total, values in zip(
            totals.setdefault(kind, [[], [], [], [], []]), [cites, first, missed, off, firsts]
        ):
            total.extend(values)
        _row(kind, name, len(questions), row, statistics.median(firsts))
        kb.close()
    for kind, (cites, first, missed, off, firsts) in totals.items():
        row = [sum(v) / len(v) for v in (cites, first, missed, off)]
        _row(kind, "ALL", len(cites), row, statistics.median(firsts))


def _row(kind: str, name: str, n: int, row: list[float], p50: float) -> None:
    a, b, c, d = row
    print(
        f"{kind:<10} {name:<20} {n:>3} {a:>10.3f} {b:>10.3f} {c:>15.3f} {d:>16.3f} {p50:>11.1f} ms",
        flush=True,
    )


if __name__ == "__main__":
    main()
