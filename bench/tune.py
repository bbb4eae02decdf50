"""Sweep retrieval settings over indexes bench/quality.py built (run it first, same options).

    python bench/tune.py [--set dev|synthetic|both] [--held-out] rrf_k=30,60 keyword_weight=1,1.5

Prints R@1/5/20, MRR@20 and page@5 per combination and set: the real questions' dev split
decides (the locked test split, corpora.test_projects, is never read here; score a choice
on it once with bench/quality.py), the synthetic set must not fall apart. --held-out then checks that the choice generalises:
for each dev project in turn, the combination with the most gold sections in
the top 5 and top 20 of the *other* projects is picked and scored on that project alone;
the held-out figures are those scores pooled (leave-one-project-out).
"""

from __future__ import annotations

import argparse
import itertools
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from corpora import built_index, eval_sets
from quality import _value

from kb_qa.answer import evaluate


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--set", default="dev", choices=("dev", "synthetic", "both"))
    parser.add_argument("--held-out", action="store_true", help="leave-one-project-out check")
    parser.add_argument("--embed-model", default=None, help="the indexes quality.py built with it")
    parser.add_argument("grid", nargs="*", help="KEY=V1,V2,...")
    args = parser.parse_args()
    grid = {k: [_value(v) for v in vs.split(",")] for k, vs in (a.split("=") for a in args.grid)}
    loaded = []
    wanted = ["dev", "synthetic"] if args.set == "both" else [args.set]
    sets = [s for w in wanted for s in eval_sets(w)]
    for kind, name, vault, questions_file in sets:
        kb = built_index(kind, name, vault, args.embed_model)
        questions = evaluate.load_questions(questions_file, kb.store.chunks())
        loaded.append((kind, name, kb, kb.settings, questions))
    keys = list(grid)
    combos = [dict(zip(keys, c)) for c in itertools.product(*(grid[k] for k in keys))] or [{}]
    per_project: list[dict[str, tuple[list, list]]] = []
    for changes in combos:
        by_kind: dict[str, tuple[list, list]] = {}
        projects: dict[str, tuple[list, list]] = {}
        for kind, name, kb, base, questions in loaded:
            kb.settings = base.replace(**changes)
            ranks, pages = by_kind.setdefault(kind, ([], []))
            mine = projects.setdefault(name, ([], [])) if kind == "real" else ([], [])
            for q in questions:
                hits = kb.search(q.question, 50)
                rank, page = evaluate.rank_of(hits, q.gold), evaluate.page_rank_of(hits, q.gold)
                ranks.append(rank)
                pages.append(page)
                mine[0].append(rank)
                mine[1].append(page)
        per_project.append(projects)
        cells = []
        for kind, (ranks, pages) in by_kind.items():
            m = evaluate.metrics(ranks, pages)
            cells.append(
                f"{kind}: R@1 {m['R@1']:.3f} R@5 {m['R@5']:.3f} R@20 {m['R@20']:.3f} "
                f"MRR {m['MRR@20']:.3f} page@5 {m['page@5']:.3f}"
            )
        print(f"{changes}  " + "  |  ".join(cells), flush=True)
    if args.held_out and per_project and per_project[0]:
        _held_out(combos, per_project)


def _held_out(combos: list[dict], per_project: list[dict[str, tuple[list, list]]]) -> None:
    """Leave-one-project-out: pick on the other projects, score on the one left out."""

    def found(ranks: list) -> int:
        return sum(1 for r in ranks if r is not None and r <= 5) + sum(
            1 for r in ranks if r is not None and r <= 20
        )

    ranks: list = []
    pages: list = []
    picked: dict[str, str] = {}
    for project in per_project[0]:
        best = max(
            range(len(combos)),
            key=lambda c: sum(found(r) for p, (r, _) in per_project[c].items() if p != project),
        )
        picked[project] = str(combos[best])
        ranks += per_project[best][project][0]
        pages += per_project[best][project][1]
    m = evaluate.metrics(ranks, pages)
    print(
        f"held out (leave one project out, n={len(ranks)}): R@1 {m['R@1']:.3f} "
        f"R@5 {m['R@5']:.3f} R@20 {m['R@20']:.3f} MRR {m['MRR@20']:.3f} page@5 {m['page@5']:.3f}"
    )
    for choice in sorted(set(picked.values())):
        chosen = sorted(p for p, c in picked.items() if c == choice)
        print(f"  picked {choice} when leaving out {', '.join(chosen)}")


if __name__ == "__main__":
    main()
