"""Retrieval quality on the real-question set (the one to tune on) and the synthetic one.

    python bench/quality.py [--set real|dev|test|synthetic|both] [--baseline] [--misses]
                            [--embed-model minilm|previous-minilm] [--chunk-chars 1500]
                            [--ranks FILE] [KEY=VALUE ...]

Real questions: bench/questions/real/<project>.jsonl over bench/corpora/<project>/ (users'
GitHub questions, gold = the section a maintainer linked), scored on its two splits too:
real-dev (the ten projects tuning may look at) and real-test (the six locked by
corpora.test_projects; tune nothing on them), then all 16. Synthetic: bench/questions/*.jsonl
over the four corpora in ../shared/corpora. Prints R@1/5/10/20/50, MRR@20, page@5 and
in-prompt recall (a gold section among the excerpts the answering model receives) per
corpus and per set; --baseline adds the naive hybrid baseline (bench/baseline.py) measured
on the same questions. KEY=VALUE pairs change settings for the run (e.g. rrf_k=30).
Indexes are kept under $KBQA_BENCH_DIR (default /tmp/kbqa-bench) and reused when current.
--ranks FILE writes each question's gold rank as JSON lines, for bench/compare.py to tell
whether two runs differ by more than chance.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from baseline import Baseline
from corpora import WORK, eval_sets, index_dir, model_name, split_of, test_projects

from kb_qa import KnowledgeBase
from kb_qa.answer import evaluate

KEYS = ("R@1", "R@5", "R@10", "R@20", "R@50", "MRR@20", "page@5", "in-prompt")


def _value(text: str) -> object:
    for kind in (int, float):
        try:
            return kind(text)
        except ValueError:
            pass
    return {"true": True, "false": False}.get(text.lower(), text)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument(
        "--set", default="both", choices=("real", "dev", "test", "synthetic", "both")
    )
    parser.add_argument("--embed-model", default=None)
    parser.add_argument("--chunk-chars", type=int, default=None)
    parser.add_argument("--corpora", nargs="*", default=None, help="only these corpora")
    parser.add_argument("--baseline", action="store_true", help="also score the naive baseline")
    parser.add_argument("--misses", action="store_true")
    parser.add_argument("--ranks", type=Path, help="write every question's gold rank here")
    parser.add_argument("changes", nargs="*", help="settings as KEY=VALUE")
    args = parser.parse_args()
    changes = {k: _value(v) for k, v in (c.split("=", 1) for c in args.changes)}
    totals: dict[str, list[evaluate.Outcome]] = {}
    base_totals: dict[str, list[evaluate.Outcome]] = {}
    ranks = args.ranks.open("w", encoding="utf-8") if args.ranks else None
    chosen = [s for s in eval_sets(args.set) if not args.corpora or s[1] in args.corpora]
    if args.corpora and (unknown := set(args.corpora) - {s[1] for s in chosen}):
        names = ", ".join(f"{s[1]} ({s[0]})" for s in eval_sets("both"))
        raise SystemExit(
            f"no {args.set} corpus named {', '.join(sorted(unknown))}; the corpora are "
            f"{names}, the real ones split into dev and the locked test projects "
            f"({', '.join(sorted(test_projects()))})"
        )
    print(f"{'set':<10} {'corpus':<20} {'n':>3} " + " ".join(f"{k:>9}" for k in KEYS))
    for kind, name, vault, questions_file in chosen:
        kb = KnowledgeBase(
            vault,
            embed_model=args.embed_model and model_name(args.embed_model),
            chunk_chars=args.chunk_chars,
            index_dir=index_dir(kind, name, args.embed_model, args.chunk_chars),
        )
        t = time.perf_counter()
        report = kb.index()
        if report.embedded:
            print(
                f"  (indexed {name}: {report.chunks} chunks, {report.embedded} embedded, "
                f"{time.perf_counter() - t:.1f} s)",
                file=sys.stderr,
            )
        kb.settings = kb.settings.replace(**changes)
        chunks = kb.store.chunks()
        questions = evaluate.load_questions(questions_file, chunks)
        outcomes = evaluate.run(kb, questions, kb.settings)
        label = f"real-{split_of(name)}" if kind == "real" else kind  # real: its split
        if kind == "real":
            totals.setdefault(label, []).extend(outcomes)
        totals.setdefault(kind, []).extend(outcomes)
        _row(label, name, evaluate.summarize(outcomes))
        if ranks:
            for o in outcomes:
                row = {
                    "set": label,
                    "corpus": name,
                    "question": o.question.question,
                    "rank": o.rank,
                    "page_rank": o.page_rank,
                    "in_prompt": o.in_prompt,
                }
                ranks.write(json.dumps(row, ensure_ascii=False) + "\n")
        if args.misses:
            for o in outcomes:
                if o.rank is None or o.rank > 5:
                    got = [f"{h.chunk.path}#{h.chunk.anchor}" for h in o.top]
                    print(f"   miss r={o.rank} {o.question.question[:100]!r}")
                    print(f"        gold={list(o.question.gold)} got={got}")
        if args.baseline:
            base = Baseline(chunks, kb.embedder, WORK / "baseline")
            scored = [
                evaluate.Outcome(
                    q,
                    evaluate.rank_of(hits := base.search(q.question, 50), q.gold),
                    evaluate.page_rank_of(hits, q.gold),
                    False,
                    tuple(hits[:3]),
                )
                for q in questions
            ]
            if kind == "real":
                base_totals.setdefault(label, []).extend(scored)
            base_totals.setdefault(kind, []).extend(scored)
            _row(kind, f"  baseline:{name}", evaluate.summarize(scored), in_prompt=False)
        kb.close()
    if ranks:
        ranks.close()
    for kind, outcomes in sorted(totals.items(), key=lambda kv: _ORDER.index(kv[0])):
        summary = evaluate.summarize(outcomes)
        _row(kind, "ALL", summary)
        if kind in base_totals:
            _row(kind, "  baseline:ALL", evaluate.summarize(base_totals[kind]), in_prompt=False)
        print(json.dumps({"set": kind, **{k: round(v, 4) for k, v in summary.items()}}))


_ORDER = ["real-dev", "real-test", "real", "synthetic"]


def _row(kind: str, name: str, m: dict[str, float], in_prompt: bool = True) -> None:
    cells = [f"{m[k]:>9.3f}" if (k != "in-prompt" or in_prompt) else f"{'':>9}" for k in KEYS]
    print(f"{kind:<10} {name:<20} {int(m['n']):>3} " + " ".join(cells), flush=True)


if __name__ == "__main__":
    main()
