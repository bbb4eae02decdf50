"""No-key answers on the sample site and the notes vault: is the first passage the one that
answers, and is a second passage on topic?

    python bench/passages.py [--embed-model M] [--show] [--second-share 0.6]
    python bench/passages.py --labels bench/questions/answers-heldout.jsonl --docs DIR

bench/questions/answers.jsonl holds questions over ``sample_site`` and ``bench/notes_vault``,
each with ``must``: exact strings of the Markdown that answers (``five``, ``600``, ``<id>``,
``4.2 bar``), and the ``path`` and ``heading`` of that section; and 96 more over four real
projects' docs (httpx, pdm, hatch, starlette, from ``$KBQA_REAL_CORPORA``), labelled from
their docs alone by sessions that neither ran nor read kb-qa. Prints, per vault, for the
sample site and the vault ("dev", "test", "ALL") and for the real docs ("docs …"): the
share of answers whose first quoted passage holds every ``must`` string (goal >=
0.90), the share that show a second passage, and the share whose second passage is off
topic (neither in the answering section nor holding a ``must`` string; goal <= 0.10), the
share called not covered, and the share whose first passage still holds the words when the
question is asked right after an unrelated one (the labelled question before it in the
same vault about another page): a new question must not be read as a follow-up; and the
first passage's mean length in characters (``chars``: a longer passage holds the words
more often, so a rule that gains by quoting more shows what it costs). The
quoted passages are read from the citations' ranges (the docs' bytes the page
highlights), so the check is of what a reader sees.

A third of each vault's questions is a locked test split (``split_of``: the third whose
sha256 of the question sorts lowest), fixed before the passage choice was tuned: tuning
reads the ``dev`` rows and ``--show``'s dev misses only; ``test`` is reported, never read.
``--labels`` scores another set instead (``answers-heldout.jsonl``: Typer's and Django REST
framework's docs, labelled by a session that never ran kb-qa and used for no tuning; see
bench/questions/README.md for where the docs come from).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from corpora import QUESTIONS, REAL_CORPORA, WORK

from kb_qa import KnowledgeBase
from kb_qa.answer import extractive
from kb_qa.answer.answering import prepare
from kb_qa.answer.prompt import Turn

ROOT = Path(__file__).resolve().parent.parent
OWN = {"sample_site": ROOT / "sample_site", "notes": ROOT / "bench" / "notes_vault"}
# Real projects' docs (read-only: their indexes are kept under the bench folder)
DOCS = {name: REAL_CORPORA / name for name in ("httpx", "pdm", "hatch", "starlette")}
VAULTS = {**OWN, **DOCS}


TEST_SHARE = 1 / 3


def labelled(path: Path = QUESTIONS / "answers.jsonl") -> list[dict]:
    """The labelled questions of bench/questions/answers.jsonl (or of ``path``)."""
    return [json.loads(line) for line in path.open(encoding="utf-8")]


def vault_index(name: str, embed_model: str | None = None) -> KnowledgeBase:
    """The index of one of ``VAULTS``, brought up to date (kept under the bench folder)."""
    kb = KnowledgeBase(
        VAULTS[name],
        embed_model=embed_model,
        index_dir=WORK / "index" / f"passages-{name}-{embed_model or 'default'}",
    )
    kb.index()
    return kb


def split_of(rows: list[dict]) -> dict[str, str]:
    """Question -> ``test`` or ``dev``: per vault, the third whose sha256 sorts lowest."""
    split: dict[str, str] = {}
    for vault in VAULTS:
        mine = sorted(
            (r["question"] for r in rows if r["vault"] == vault),
            key=lambda q: hashlib.sha256(q.encode()).hexdigest(),
        )
        cut = round(len(mine) * TEST_SHARE)
        split.update({q: "test" if i < cut else "dev" for i, q in enumerate(mine)})
    return split


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--embed-model", default=None)
    parser.add_argument("--show", action="store_true", help="print every miss of the dev split")
    parser.add_argument(
        "--second-share",
        type=float,
        default=None,
        help="try another bar for the second passage (extractive.SECOND_SHARE)",
    )
    parser.add_argument(
        "--labels",
        type=Path,
        default=None,
        help="score another labelled set (answers.jsonl's form), e.g. "
        "bench/questions/answers-heldout.jsonl, its vaults' docs in --docs",
    )
    parser.add_argument(
        "--docs", type=Path, default=None, help="the folder holding one folder per vault"
    )
    args = parser.parse_args()
    if args.second_share is not None:
        extractive.SECOND_SHARE = args.second_share
    rows = labelled()
    if args.labels:  # a held-out set: its own vaults, all scored as real docs
        rows = labelled(args.labels)
        DOCS.clear()
        DOCS.update({r["vault"]: (args.docs or args.labels.parent) / r["vault"] for r in rows})
        VAULTS.clear()
        VAULTS.update(DOCS)
    split = split_of(rows)
    print(
        f"{'vault':<18} {'n':>3} {'first holds':>11} {'second shown':>12} {'second off':>10} "
        f"{'not covered':>11} {'after another':>13} {'chars':>6}"
    )
    tally: dict[str, list[int]] = {}
    for name in VAULTS:
        if not VAULTS[name].is_dir():
            print(f"  (no {VAULTS[name]}: set KBQA_REAL_CORPORA to score {name}'s docs)")
            continue
        kb = vault_index(name, args.embed_model)
        mine = [r for r in rows if r["vault"] == name]
        for at, row in enumerate(mine):
            outcome = _answer(kb, row)
            earlier = [*reversed(mine[:at]), *reversed(mine)]
            before = next(r for r in earlier if r["path"] != row["path"])
            asked = [Turn("user", before["question"]), Turn("assistant", "(an answer)")]
            after = _answer(kb, row, asked)[0]
            which = split[row["question"]]
            group = "docs " if name in DOCS else ""
            for key in (f"{name} {which}", name, group + which, group + "ALL"):
                counts = tally.setdefault(key, [0, 0, 0, 0, 0, 0, 0])
                for i, v in enumerate((1, *outcome[:4], after, outcome[4])):
                    counts[i] += v
            if args.show and which == "dev" and not outcome[0]:
                print(
                    f"  miss: {row['question']!r} wants {row['must']} in {row['path']} › "
                    f"{row['heading']}; first passage from {outcome[-1]}"
                )
        kb.close()
    for key in [f"{v} {w}" for v in VAULTS for w in ("dev", "test")] + [
        *VAULTS,
        "dev",
        "test",
        "ALL",
        "docs dev",
        "docs test",
        "docs ALL",
    ]:
        if key in tally:
            _row(key, *tally[key])


def _answer(
    kb: KnowledgeBase, row: dict, history: list[Turn] | None = None
) -> tuple[bool, bool, bool, bool, int, str]:
    """(first passage holds the words, second shown, second off topic, not covered, the
    first passage's length in characters, where it comes from) for one labelled question,
    asked after ``history``."""
    prepared = prepare(kb, kb.settings, row["question"], history or ())
    # As the API quotes: for the question, a follow-up's carried terms counting half.
    result = extractive.quote_prepared(prepared)
    by_number = dict(prepared.ranked)
    shown = [
        (by_number[n].chunk, by_number[n].chunk.text[a:b]) for n, (a, b) in result.quoted.items()
    ]
    ok = bool(shown) and all(m in shown[0][1] for m in row["must"])
    off = False
    if len(shown) > 1:
        chunk, text = shown[1]
        off = not (
            (chunk.path == row["path"] and row["heading"] in chunk.heading_path)
            or any(m in text for m in row["must"])
        )
    got = f"{shown[0][0].path} › {shown[0][0].heading_path[-1]}" if shown else "-"
    return ok, len(shown) > 1, off, not prepared.covered, len(shown[0][1]) if shown else 0, got


def _row(
    name: str, n: int, holds: int, second: int, off: int, uncovered: int, after: int, chars: int
) -> None:
    print(
        f"{name:<18} {n:>3} {holds / n:>11.3f} {second / n:>12.3f} {off / n:>10.3f} "
        f"{uncovered / n:>11.3f} {after / n:>13.3f} {chars / n:>6.0f}",
        flush=True,
    )


if __name__ == "__main__":
    main()
