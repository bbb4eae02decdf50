"""training/gen_questions.py: which generated questions are kept, what the generator reads, and
which sections it is asked about; training/filter_questions.py's round trip (no model is
loaded: these are the scripts' plain parts)."""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path
from types import ModuleType

ROOT = Path(__file__).resolve().parent.parent


def _script(name: str) -> ModuleType:
    """training/<name>.py, loaded by path: training/ is not a package, and its module names
    must not shadow others."""
    path = ROOT / "training" / f"{name}.py"
    spec = importlib.util.spec_from_file_location(f"training_{name}", path)
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    sys.modules[f"training_{name}"] = module
    spec.loader.exec_module(module)
    return module


gen = _script("gen_questions")
consistency = _script("filter_questions")

WORKER = (
    "Running workers > The built-in worker\n### The built-in worker\n\n"
    "The built-in worker claims jobs from its queues and runs the handler command that the "
    "job's kind names, with the payload on standard input."
)


def test_a_question_on_its_sections_words_is_kept_up_to_its_question_mark() -> None:
    reply = ' "What does the built-in worker run for a job?" It runs the handler.\nMore.'
    assert gen.cleaned(reply, WORKER) == "What does the built-in worker run for a job?"


def test_questions_about_the_page_or_off_its_words_or_not_questions_are_dropped() -> None:
    assert gen.cleaned(" What is the documentation about?", WORKER) is None
    assert gen.cleaned(" How do I rotate signing keys in the vault?", WORKER) is None
    assert gen.cleaned(" The worker runs the handler command.", WORKER) is None
    assert gen.cleaned(" Worker?", WORKER) is None  # fewer than four words


def test_the_generator_reads_the_heading_and_text_without_the_path() -> None:
    assert gen.shown(WORKER).startswith("### The built-in worker\n\nThe built-in worker")
    plain = "A section without a heading, long enough to be asked about."
    assert gen.shown(plain) == plain


def test_sections_are_distinct_long_enough_capped_per_site_and_only_from_allowed_sites(
    tmp_path: Path,
) -> None:
    def row(site: str, text: str) -> str:
        return json.dumps(
            {"kind": "link", "site": site, "query": "q", "positive": text, "negative": "n"}
        )

    long = [f"Section {i} " + "words " * 40 for i in range(5)]
    lines = [row("a/a", t) for t in long] + [row("a/a", long[0]), row("a/a", "short")]
    lines += [row("b/b", "Other " + long[1]), row("c/c", "Third " + long[2])]
    pairs = tmp_path / "pairs.jsonl"
    pairs.write_text("\n".join(lines) + "\n", encoding="utf-8")
    chosen = gen.sections(pairs, {"a/a", "b/b"}, per_site=3, seed=1)
    assert sorted(r["site"] for r in chosen) == ["a/a", "a/a", "a/a", "b/b"]
    assert len({r["positive"] for r in chosen if r["site"] == "a/a"}) == 3
    assert all(len(r["positive"]) >= 200 for r in chosen)


def test_the_round_trip_rank_counts_the_sections_closer_than_the_target() -> None:
    import numpy as np

    sections = np.array([[1.0, 0.0], [0.0, 1.0], [0.6, 0.8]])
    asked = np.array([[0.0, 1.0], [1.0, 0.0]])  # the first asks about section 1, the second 0
    # Aimed at section 2, each question finds one section closer (1, then 0) first.
    assert consistency.ranks([2, 2], sections, asked) == [1, 1]
    assert consistency.ranks([1, 0], sections, asked) == [0, 0]


def test_each_sites_pool_is_its_distinct_positives(tmp_path: Path) -> None:
    rows = [
        {"site": "a/x", "positive": "one"},
        {"site": "a/x", "positive": "two"},
        {"site": "a/x", "positive": "one"},
        {"site": "b/y", "positive": "three"},
    ]
    pairs = tmp_path / "pairs.jsonl"
    pairs.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    assert consistency.pools(pairs, {"a/x"}) == {"a/x": ["one", "two"]}
