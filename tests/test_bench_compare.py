"""bench/compare.py's statistics: the exact McNemar test and the paired bootstrap."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "bench"))

from compare import bootstrap, mcnemar_p


@pytest.mark.parametrize(
    ("only_a", "only_b", "p"),
    [
        (0, 0, 1.0),  # no question in dispute
        (1, 2, 1.0),
        (4, 1, 0.375),  # 2 * (1 + 5) / 32
        (0, 6, 0.03125),  # 2 / 64: six of six one way
        (7, 1, 0.0703125),  # 2 * (1 + 8) / 256
    ],
)
def test_mcnemar_exact_p(only_a: int, only_b: int, p: float) -> None:
    assert mcnemar_p(only_a, only_b) == pytest.approx(p)
    assert mcnemar_p(only_b, only_a) == pytest.approx(p)  # two-sided


def test_bootstrap_interval_of_the_paired_difference() -> None:
    same = [True, False] * 40
    assert bootstrap(same, same) == (0.0, 0.0)
    better = [True] * 80
    low, high = bootstrap(same, better)
    assert 0.35 < low <= 0.5 <= high < 0.65  # B finds 40 more of 80: +0.5, give or take
