"""No-key answers on the sample site and the notes vault: is the first passage the one that
answers, and is a second passage on topic?

    python bench/passages.py [--embed-model M] [--show] [--second-share 0.6]

bench/questions/answers.jsonl holds questions over ``sample_site`` and ``bench/notes_vault``,
each with ``must``: exact strings of the Markdown that answers (``five``, ``600``, ``<id>``,
``4.2 bar``), and the ``path`` and ``heading`` of that section. Prints, per vault and in
all: the share of answers whose first quoted passage holds every ``must`` string (goal >=
0.90), the share that show a second passage, and the share whose second passage is off
topic (neither in the answering section nor holding a ``must`` string; goal <= 0.10), and
the share called not covered. The quoted passages are read from the citations' ranges (the
docs' bytes the page highlights), so the check is of what a reader sees.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from corpora import QUESTIONS, WORK

from kb_qa import KnowledgeBase, extractive
from kb_qa.answer import prepare

ROOT = Path(__file__).resolve().parent.parent
VAULTS = {"sample_site": ROOT / "sample_site", "notes": ROOT / "bench" / "notes_vault"}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--embed-model", default=None)
    parser.add_argument("--show", action="store_true", help="print every miss")
    parser.add_argument(
        "--second-share",
        type=float,
        default=None,
        help="try another bar for the second passage (extractive.SECOND_SHARE)",
    )
    args = parser.parse_args()
    if args.second_share is not None:
        extractive.SECOND_SHARE = args.second_share
    rows = [json.loads(line) for line in (QUESTIONS / "answers.jsonl").open(encoding="utf-8")]
    print(
        f"{'vault':<12} {'n':>3} {'first holds':>11} {'second shown':>12} {'second off':>10} "
        f"{'not covered':>11}"
    )
    totals = [0, 0, 0, 0, 0]
    for name, vault in VAULTS.items():
        mine = [r for r in rows if r["vault"] == name]
        model = args.embed_model or "default"
        kb = KnowledgeBase(
            vault,
            embed_model=args.embed_model,
            index_dir=WORK / "index" / f"passages-{name}-{model}",
        )
        kb.index()
        holds = second = off = uncovered = 0
        for row in mine:
            prepared = prepare(kb, kb.settings, row["question"])
            result = extractive.quote(row["question"], prepared.ranked, prepared.covered)
            by_number = dict(prepared.ranked)
            shown = [
                (by_number[n].chunk, by_number[n].chunk.text[a:b])
                for n, (a, b) in result.quoted.items()
            ]
            uncovered += not prepared.covered
            ok = bool(shown) and all(m in shown[0][1] for m in row["must"])
            holds += ok
            if len(shown) > 1:
                second += 1
                chunk, text = shown[1]
                on_topic = (
                    chunk.path == row["path"] and row["heading"] in chunk.heading_path
                ) or any(m in text for m in row["must"])
                off += not on_topic
            if args.show and not ok:
                got = f"{shown[0][0].path} › {shown[0][0].heading_path[-1]}" if shown else "-"
                print(
                    f"  miss: {row['question']!r} wants {row['must']} in {row['path']} › "
                    f"{row['heading']}; first passage from {got}"
                )
        n = len(mine)
        for i, v in enumerate((n, holds, second, off, uncovered)):
            totals[i] += v
        _row(name, n, holds, second, off, uncovered)
        kb.close()
    _row("ALL", *totals)


def _row(name: str, n: int, holds: int, second: int, off: int, uncovered: int) -> None:
    print(
        f"{name:<12} {n:>3} {holds / n:>11.3f} {second / n:>12.3f} {off / n:>10.3f} "
        f"{uncovered / n:>11.3f}",
        flush=True,
    )


if __name__ == "__main__":
    main()
