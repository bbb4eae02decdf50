"""Time a no-key answer's passage reading on hostile Markdown: one paragraph of unclosed
link, image, attribute or tag openers (``[``, ``[[a``, ``{#``, ``<a``, blanks ...).

    python bench/slow_markup.py [--kb 20 80]

Reading a section's passages (``kb_qa.answer.blocks.passages``: links shown as their words,
attributes and tags removed) runs at answer time, on every question that retrieves the page,
with no time limit, so its cost must grow with the text, not with its square. Prints, per
opener and size, the seconds one reading takes. Before the patterns were bounded, 20 KB of
``[`` took 0.9 s and an answer over an 80 KB page of them 19 s.
"""

from __future__ import annotations

import argparse
import time

from kb_qa.answer.blocks import passages

OPENERS = ["[", "[[a", "[^", "[1", "![", "![[", "> [!", "[[a|", "{#", "{ #", "<a", " ", "\t"]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--kb", type=int, nargs="+", default=[20, 80], help="sizes in KB")
    args = parser.parse_args()
    print(f"{'opener':<8} " + " ".join(f"{f'{k} KB':>9}" for k in args.kb))
    worst = 0.0
    for unit in OPENERS:
        cells = []
        for kb in args.kb:
            text = "Quagga refunds policy. " + unit * (kb * 1000 // len(unit)) + "\n"
            start = time.perf_counter()
            passages(text)
            took = time.perf_counter() - start
            worst = max(worst, took)
            cells.append(f"{took:>8.3f}s")
        print(f"{unit!r:<8} " + " ".join(cells), flush=True)
    print(f"slowest: {worst:.3f} s")


if __name__ == "__main__":
    main()
