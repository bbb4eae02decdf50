"""training/tune_site.py: one site's own pairs, sampled by kind, and a clear refusal when a
site has too little structure to tune on (before any training library is loaded)."""

from __future__ import annotations

import importlib.util
import sys
from collections import Counter
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
_SPEC = importlib.util.spec_from_file_location("training_tune_site", ROOT / "training/tune_site.py")
assert _SPEC and _SPEC.loader
tune_site = importlib.util.module_from_spec(_SPEC)
sys.modules["training_tune_site"] = tune_site
_SPEC.loader.exec_module(tune_site)

PAGE = """# {title}

## Installing {title}

Install {title} with the package manager of your platform, then run the setup command once
to write its configuration file into the data folder of the current user account.

## Configuring {title}

Every setting of {title} lives in one configuration file; the [installation
steps](page{other}.md#installing-{other_title}) describe where that file is written first.

## Why does {title} refuse to start?

It refuses to start when the data folder is not writable by the service user or when its
port is already taken by another process running on the same machine at the same time.
"""


def _site(tmp_path: Path, pages: int) -> Path:
    (tmp_path / "docs").mkdir(parents=True)
    (tmp_path / "mkdocs.yml").write_text("site_name: Tools\n", encoding="utf-8")
    for i in range(pages):
        j = (i + 1) % pages
        text = PAGE.format(title=f"tool{i}", other=j, other_title=f"tool{j}")
        (tmp_path / "docs" / f"page{i}.md").write_text(text, encoding="utf-8")
    return tmp_path


def test_a_site_gives_pairs_of_each_kind_and_its_section_count(tmp_path: Path) -> None:
    sections, rows = tune_site.site_rows(_site(tmp_path, 4), seed=13)
    kinds = Counter(r["kind"] for r in rows)
    assert sections == 16  # four pages of a title and three sections
    assert kinds["link"] == 4 and kinds["question"] == 4
    link = next(r for r in rows if r["kind"] == "link")
    assert "installation" in link["query"] and link["positive"].startswith("tool")
    assert "Installing" in link["positive"]


def test_the_mix_keeps_twice_half_or_none_of_a_kind() -> None:
    rows = [
        {"kind": k, "query": f"{k} {i}"}
        for k in ("link", "heading", "question")
        for i in range(400)
    ]
    sampled = tune_site.train.sample(rows, {"link": 2, "heading": 0.5}, seed=1)
    kept = Counter(r["kind"] for r in sampled)
    assert kept["link"] == 800
    assert 150 < kept["heading"] < 250
    assert kept["question"] == 0


def test_too_few_pairs_is_refused_in_words_before_training(tmp_path: Path) -> None:
    site = _site(tmp_path / "site", 2)
    with pytest.raises(SystemExit) as stopped:
        tune_site.main([str(site), "--out", str(tmp_path / "out")])
    assert "fewer than one batch of 32" in str(stopped.value)
    assert "too little of this site's own structure" in str(stopped.value)
    assert not (tmp_path / "out" / "run").exists()


def test_site_batches_draw_each_batch_from_one_site_and_lose_no_row() -> None:
    rows = [
        {"site": site, "query": f"q{site}{i}", "positive": f"p{site}{i % n}"}
        for site, n in (("a", 70), ("b", 40), ("c", 10))
        for i in range(n)
    ]
    batches = tune_site.train.site_batches(rows, 16, seed=3)
    whole = [b for b in batches if len({r["site"] for r in b}) == 1]
    # a: four batches of its own, b: two; c's ten rows and the leftovers are mixed.
    assert sorted(b[0]["site"] for b in whole) == ["a"] * 4 + ["b"] * 2
    assert all(len(b) == 16 for b in batches)
    assert all(len({r["positive"] for r in b}) == 16 for b in batches)
    used = [r["query"] for b in batches for r in b]
    assert len(used) == len(set(used))
    assert len(used) == 16 * (len(rows) // 16)  # only the last, incomplete batch is dropped
