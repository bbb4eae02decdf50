"""Per-site tuning (``training/tune_site.py``) scored on the real questions of that site.

    python bench/site_tune.py [--set dev|test|real] [--projects P ...] [TUNE OPTIONS ...]

For each project of the set: tune the retriever on that project's docs alone (its links
and headings: no question is read), export it to int8, index the project with it and score
its real questions, beside the default model in the same run. Prints, per project and per
split, R@5 / R@20 / MRR@20 before and after, the pairs of each kind and the minutes the
tuning took (pairs, training, export) on this machine. Options after the known ones go to
tune_site.py unchanged (e.g. ``--lr 1e-5 --passes 1``); a recipe is chosen on ``dev``,
then ``test`` is run once with it. Needs the ``train`` extra (torch). Tuned models are kept
under $KBQA_BENCH_DIR/tune/<tag>/<project> (``--tag`` names a recipe) and reused when
``tune.json`` is there.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from corpora import WORK, eval_sets, index_dir, split_of

from kb_qa import KnowledgeBase
from kb_qa.answer import evaluate

ROOT = Path(__file__).resolve().parent.parent


def scored(name: str, vault: Path, questions: Path, model: str | None) -> list[evaluate.Outcome]:
    """The outcomes of one project's questions with one model (its index built or reused)."""
    kb = KnowledgeBase(vault, embed_model=model, index_dir=index_dir("real", name, model))
    try:
        kb.index()
        return evaluate.run(kb, evaluate.load_questions(questions, kb.store.chunks()), kb.settings)
    finally:
        kb.close()


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--set", default="dev", choices=("dev", "test", "real"))
    parser.add_argument("--projects", nargs="*", default=None)
    parser.add_argument("--tag", default="default", help="a name for the tuning recipe")
    args, tune_options = parser.parse_known_args()
    base: dict[str, list[evaluate.Outcome]] = {}
    tuned: dict[str, list[evaluate.Outcome]] = {}
    head = f"{'split':<6} {'project':<22} {'n':>3}  R@5 base  tuned   R@20 base  tuned   MRR base  tuned  pairs (link/question/heading)  minutes"
    print(head, flush=True)
    for _kind, name, vault, questions in eval_sets(args.set):
        if args.projects and name not in args.projects:
            continue
        out = WORK / "tune" / args.tag / name
        if not (out / "tune.json").exists():
            command = [sys.executable, ROOT / "training" / "tune_site.py", vault, "--out", out]
            subprocess.run(
                [*command, *tune_options],
                check=False,
                stdout=sys.stderr,
            )
        before = scored(name, vault, questions, None)
        if (out / "tune.json").exists():
            record = json.loads((out / "tune.json").read_text(encoding="utf-8"))
            after = scored(name, vault, questions, f"onnx:{out / 'onnx'}")
        else:  # too few pairs to tune on (tune_site.py said why): the site keeps the default
            record = {"pairs": {}, "minutes": {"all": 0.0}}
            after = before
        split = split_of(name)
        for group in (split, "all"):
            base.setdefault(group, []).extend(before)
            tuned.setdefault(group, []).extend(after)
        b, a = evaluate.summarize(before), evaluate.summarize(after)
        p = record["pairs"]
        kinds = "/".join(str(p.get(k, 0)) for k in ("link", "question", "heading"))
        minutes = f"{record['minutes']['all']:>7.1f}" if p else "untuned (too few pairs)"
        print(f"{_cells(split, name, b, a)}  {kinds:>29}  {minutes}", flush=True)
    for group in sorted(base):
        b, a = evaluate.summarize(base[group]), evaluate.summarize(tuned[group])
        print(_cells(group, "ALL", b, a))
        print(json.dumps({"group": group, "base": b, "tuned": a, "tag": args.tag}))


def _cells(split: str, name: str, b: dict[str, float], a: dict[str, float]) -> str:
    """One row's figures: R@5, R@20 and MRR@20 before (``b``) and after (``a``) tuning."""
    return (
        f"{split:<6} {name:<22} {int(b['n']):>3}  {b['R@5']:>8.3f} {a['R@5']:>6.3f}"
        f"  {b['R@20']:>9.3f} {a['R@20']:>6.3f}  {b['MRR@20']:>8.3f} {a['MRR@20']:>6.3f}"
    )


if __name__ == "__main__":
    main()
