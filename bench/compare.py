"""Do two retrieval runs differ by more than chance? Paired, question by question.

    python bench/quality.py --set dev --ranks /tmp/a.jsonl
    python bench/quality.py --set dev --embed-model onnx:FOLDER --ranks /tmp/b.jsonl
    python bench/compare.py /tmp/a.jsonl /tmp/b.jsonl [--cut 5]

On 79 dev questions one question is 0.013 of R@5, and a training run's random seed alone
moves R@5 by three of them (training/README.md, the fourteenth run). Per set, prints both
runs' R@cut, the questions only A and only B find within the cut, the exact McNemar test's
two-sided p (only the questions the runs disagree on count: under "no difference" each
falls either way with probability 1/2) and a 95% paired bootstrap interval of B - A.
A difference whose p is above 0.05 is not evidence that B is better or worse.
"""

from __future__ import annotations

import argparse
import json
import math
import random
from pathlib import Path

RESAMPLES = 10_000


def load(path: Path) -> dict[tuple[str, str], dict]:
    """(corpus, question) -> its row of ``quality.py --ranks``."""
    rows = [json.loads(line) for line in path.open(encoding="utf-8")]
    return {(r["corpus"], r["question"]): r for r in rows}


def mcnemar_p(only_a: int, only_b: int) -> float:
    """Exact two-sided McNemar p: the chance of a split at least this uneven of the
    questions the two runs disagree on, were each as likely to fall either way."""
    n = only_a + only_b
    if n == 0:
        return 1.0
    k = min(only_a, only_b)
    tail = math.fsum(math.comb(n, i) for i in range(k + 1)) / 2**n
    return min(1.0, 2 * tail)


def bootstrap(a: list[bool], b: list[bool], seed: int = 0) -> tuple[float, float]:
    """95% interval of mean(b) - mean(a) over questions resampled with replacement."""
    rng = random.Random(seed)
    n = len(a)
    diffs = []
    for _ in range(RESAMPLES):
        pick = [rng.randrange(n) for _ in range(n)]
        diffs.append(sum(b[i] - a[i] for i in pick) / n)
    diffs.sort()
    return diffs[int(0.025 * RESAMPLES)], diffs[int(0.975 * RESAMPLES) - 1]


def _within(rank: int | None, cut: int) -> bool:
    return rank is not None and rank <= cut


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("a", type=Path)
    parser.add_argument("b", type=Path)
    parser.add_argument("--cut", type=int, default=5)
    args = parser.parse_args()
    a, b = load(args.a), load(args.b)
    shared = sorted(a.keys() & b.keys())
    if len(shared) < max(len(a), len(b)):
        print(f"(comparing the {len(shared)} questions both files hold)")
    cut = args.cut
    print(
        f"{'set':<10} {'n':>4} {f'A R@{cut}':>8} {f'B R@{cut}':>8} {'only A':>7} {'only B':>7} "
        f"{'p':>6}  95% interval of B - A"
    )
    for name in sorted({a[k]["set"] for k in shared}):
        keys = [k for k in shared if a[k]["set"] == name]
        hit_a = [_within(a[k]["rank"], cut) for k in keys]
        hit_b = [_within(b[k]["rank"], cut) for k in keys]
        only_a = sum(x and not y for x, y in zip(hit_a, hit_b, strict=True))
        only_b = sum(y and not x for x, y in zip(hit_a, hit_b, strict=True))
        low, high = bootstrap(hit_a, hit_b)
        n = len(keys)
        print(
            f"{name:<10} {n:>4} {sum(hit_a) / n:>8.3f} {sum(hit_b) / n:>8.3f} {only_a:>7} "
            f"{only_b:>7} {mcnemar_p(only_a, only_b):>6.3f}  {low:+.3f} .. {high:+.3f}"
        )


if __name__ == "__main__":
    main()
