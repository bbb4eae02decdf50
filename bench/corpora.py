"""Shared helpers for the benchmarks: copies of the four public corpora in a work folder."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

CORPORA = ("mkdocs", "mkdocs-material", "pydantic", "uv")
SOURCE = Path(
    os.environ.get("KBQA_CORPORA", Path(__file__).resolve().parents[2] / "shared" / "corpora")
)
WORK = Path(os.environ.get("KBQA_BENCH_DIR", "/tmp/kbqa-bench"))
QUESTIONS = Path(__file__).resolve().parent / "questions"


def corpus_copy(name: str, fresh: bool = False) -> Path:
    """A writable copy of one corpus (Markdown + mkdocs.yml), made once and reused."""
    target = WORK / name
    if fresh and target.exists():
        shutil.rmtree(target)
    if not target.exists():
        if not (SOURCE / name).is_dir():
            raise SystemExit(f"corpus {name} not found under {SOURCE}; set KBQA_CORPORA")
        shutil.copytree(SOURCE / name, target)
        for p in target.rglob("*"):
            if p.is_file():
                p.chmod(0o644)
            elif p.is_dir():
                p.chmod(0o755)
    return target


REAL_QUESTIONS = QUESTIONS / "real"


def _real_corpora() -> Path:
    """Where the real-question projects' docs are laid out (not in git: see the README there).

    $KBQA_REAL_CORPORA, else bench/corpora/ in this checkout, else ../shared/real-corpora.
    """
    if os.environ.get("KBQA_REAL_CORPORA"):
        return Path(os.environ["KBQA_REAL_CORPORA"])
    here = Path(__file__).resolve().parent / "corpora"
    shared = SOURCE.parent / "real-corpora"
    return here if here.is_dir() or not shared.is_dir() else shared


REAL_CORPORA = _real_corpora()


def real_projects() -> list[str]:
    """Projects of the real-question set (bench/questions/real/<project>.jsonl), sorted."""
    return sorted(
        p.stem for p in REAL_QUESTIONS.glob("*.jsonl") if p.read_text(encoding="utf-8").strip()
    )


def eval_sets(which: str) -> list[tuple[str, str, Path, Path]]:
    """(set, name, vault, questions file) for the "real" set, the "synthetic" one or "both"."""
    sets: list[tuple[str, str, Path, Path]] = []
    if which in ("real", "both"):
        missing = [p for p in real_projects() if not (REAL_CORPORA / p).is_dir()]
        if missing:
            raise SystemExit(
                f"the docs of {', '.join(missing)} are not under {REAL_CORPORA}: set "
                "KBQA_REAL_CORPORA, or lay them out as bench/questions/real/sources/*.md say"
            )
        sets += [
            ("real", p, REAL_CORPORA / p, REAL_QUESTIONS / f"{p}.jsonl") for p in real_projects()
        ]
    if which in ("synthetic", "both"):
        sets += [("synthetic", c, corpus_copy(c), QUESTIONS / f"{c}.jsonl") for c in CORPORA]
    return sets
