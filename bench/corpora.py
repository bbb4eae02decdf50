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
