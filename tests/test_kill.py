"""Killing ``kb-qa index`` mid-run (SIGKILL, Ctrl-C) leaves an index that opens, serves what
was committed, and finishes on the next run exactly as a clean run would have."""

from __future__ import annotations

import random
import signal
import sqlite3
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from kb_qa.kb.knowledge_base import KnowledgeBase

CLI = Callable[..., subprocess.CompletedProcess[str]]
FILES, SECTIONS = 400, 6
WORDS = (
    "alpha beta gamma delta index vector search chunk heading anchor table code block install "
    "setup configure deploy server client token otter heron badger falcon lynx"
).split()


@pytest.fixture(scope="module")
def big_vault(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """400 pages of 7 chunks: big enough that indexing with the hash embedder takes seconds."""
    rng = random.Random(7)
    root = tmp_path_factory.mktemp("big") / "vault"
    root.mkdir()
    for i in range(FILES):
        parts = [f"# Page {i}\n"]
        for s in range(SECTIONS):
            words = " ".join(rng.choice(WORDS) for _ in range(120))
            parts.append(f"## Section {i}-{s}\n\n{words}\n")
        (root / f"p{i:03d}.md").write_text("\n".join(parts), encoding="utf-8")
    return root


def count_rows(index_dir: Path, table: str) -> int:
    """Rows committed to a manifest table, read the way another process would see them."""
    path = index_dir / "manifest.sqlite3"
    if not path.exists():
        return 0
    try:
        db = sqlite3.connect(f"file:{path}?mode=ro", uri=True, timeout=0.2)
        try:
            return int(db.execute(f"SELECT COUNT(*) FROM {table}").fetchone()[0])  # noqa: S608
        finally:
            db.close()
    except sqlite3.Error:  # not created yet, or busy for a moment
        return 0


@pytest.fixture
def start_index(
    tmp_path: Path, cli_env: Callable[..., dict[str, str]]
) -> Iterator[Callable[..., subprocess.Popen[str]]]:
    """Start ``kb-qa index`` in the background; whatever is still running at teardown is killed."""
    started: list[subprocess.Popen[str]] = []

    def start(vault: Path, index_dir: Path, **env: str) -> subprocess.Popen[str]:
        log = open(tmp_path / f"index-{len(started)}.log", "w+")
        proc = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "kb_qa.cli",
                "index",
                str(vault),
                "--index-dir",
                str(index_dir),
                "--quiet",
            ],
            env=cli_env(**env),
            stdout=log,
            stderr=subprocess.STDOUT,
            text=True,
            # A shell that starts pytest in the background (`&`) makes it ignore SIGINT, and
            # children inherit that; the index must see Ctrl-C as a terminal sends it.
            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
        )
        proc.log = log  # type: ignore[attr-defined]
        started.append(proc)
        return proc

    yield start
    for proc in started:
        if proc.poll() is None:
            proc.kill()
            proc.wait(10)
        proc.log.close()  # type: ignore[attr-defined]


def wait_for(proc: subprocess.Popen[str], index_dir: Path, table: str, timeout: float = 90) -> int:
    """Poll until ``table`` has rows; fail if the run ends (or stalls) first."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        rows = count_rows(index_dir, table)
        if rows:
            return rows
        if proc.poll() is not None:
            proc.log.seek(0)  # type: ignore[attr-defined]
            pytest.fail(f"index finished before it could be interrupted: {proc.log.read()}")  # type: ignore[attr-defined]
        time.sleep(0.01)
    pytest.fail(f"no rows in {table} after {timeout} s")


def output(proc: subprocess.Popen[str]) -> str:
    proc.log.seek(0)  # type: ignore[attr-defined]
    return proc.log.read()  # type: ignore[attr-defined]


def all_ids(index: KnowledgeBase) -> tuple[set[str], set[str]]:
    manifest = {r[0] for r in index.store.db.execute("SELECT id FROM chunks")}
    return manifest, set(index.store.collection.get(include=[])["ids"])


def test_kill_9_mid_write_then_resume(
    big_vault: Path,
    start_index: Callable[..., subprocess.Popen[str]],
    run_cli: CLI,
    tmp_path: Path,
) -> None:
    index_dir = tmp_path / "idx"
    total = FILES * (SECTIONS + 1)
    proc = start_index(big_vault, index_dir)
    wait_for(proc, index_dir, "chunks")  # the first group of files is committed
    proc.send_signal(signal.SIGKILL)
    assert proc.wait(30) == -signal.SIGKILL

    with KnowledgeBase(big_vault, embed_model="hash", index_dir=index_dir) as index:
        stats = index.stats()
        assert 0 < stats["chunks"] < total, "the kill should land mid-run"
        pages = {p["path"] for p in index.pages()}
        hits = index.search("otter heron badger", 10)
        assert hits
        for hit in hits:  # only committed chunks come back, with correct addresses
            assert hit.chunk.path in pages
            source = (big_vault / hit.chunk.path).read_text(encoding="utf-8")
            assert source[hit.chunk.start : hit.chunk.end] == hit.chunk.text

    resumed = run_cli("index", str(big_vault), "--index-dir", str(index_dir), "--quiet")
    assert resumed.returncode == 0, resumed.stderr
    assert f"Indexed {FILES} files, {total} chunks" in resumed.stdout
    assert "0 chunks embedded" in resumed.stdout  # every vector was cached before the kill

    with KnowledgeBase(big_vault, embed_model="hash", index_dir=tmp_path / "clean") as clean:
        clean.index()
        clean_ids, _ = all_ids(clean)
    with KnowledgeBase(big_vault, embed_model="hash", index_dir=index_dir) as index:
        manifest, vectors = all_ids(index)
        assert manifest == clean_ids
        assert vectors == manifest  # vectors left by the killed run were cleaned up
        assert index.index().embedded == 0


def test_ctrl_c_while_writing_exits_130_and_resumes(
    big_vault: Path,
    start_index: Callable[..., subprocess.Popen[str]],
    run_cli: CLI,
    tmp_path: Path,
) -> None:
    index_dir = tmp_path / "idx"
    proc = start_index(big_vault, index_dir)
    wait_for(proc, index_dir, "chunks")
    proc.send_signal(signal.SIGINT)
    assert proc.wait(60) == 130
    text = output(proc)
    assert "interrupted" in text and "run the same command again" in text
    assert "Traceback" not in text

    with KnowledgeBase(big_vault, embed_model="hash", index_dir=index_dir) as index:
        assert 0 < index.stats()["chunks"] < FILES * (SECTIONS + 1)
        assert index.search("falcon lynx", 5)
    resumed = run_cli("index", str(big_vault), "--index-dir", str(index_dir), "--quiet")
    assert resumed.returncode == 0, resumed.stderr
    assert f"Indexed {FILES} files" in resumed.stdout


def test_ctrl_c_while_embedding_with_minilm_keeps_vectors(
    big_vault: Path, start_index: Callable[..., subprocess.Popen[str]], tmp_path: Path
) -> None:
    index_dir = tmp_path / "idx"
    proc = start_index(big_vault, index_dir, KBQA_EMBED_MODEL="minilm")
    wait_for(proc, index_dir, "vectors")  # the first batch went through the real model
    proc.send_signal(signal.SIGINT)
    assert proc.wait(60) == 130
    text = output(proc)
    assert "run the same command again" in text and "Traceback" not in text

    with KnowledgeBase(big_vault, embed_model="minilm", index_dir=index_dir) as index:
        # Nothing was written to the index yet, but the finished batches are cached.
        assert index.stats()["chunks"] == 0
        assert count_rows(index_dir, "vectors") >= 1
        assert index.stats()["embed_model"] == "minilm"


def test_ctrl_c_during_a_rebuild_says_the_index_holds_only_what_it_wrote(
    big_vault: Path,
    start_index: Callable[..., subprocess.Popen[str]],
    run_cli: CLI,
    tmp_path: Path,
) -> None:
    """Stopping a rebuild for another model said "The index keeps everything written so
    far", and the next search found the index empty: a rebuild begins by emptying it."""
    index_dir = tmp_path / "idx"
    built = run_cli("index", str(big_vault), "--index-dir", str(index_dir), "--quiet")
    assert built.returncode == 0, built.stderr
    proc = start_index(big_vault, index_dir, KBQA_EMBED_MODEL="minilm")
    deadline = time.monotonic() + 90
    while "Rebuilding the index" not in output(proc) and time.monotonic() < deadline:
        assert proc.poll() is None, output(proc)
        time.sleep(0.01)
    proc.send_signal(signal.SIGINT)
    # 130, or (a signal landing early in the rebuild, seen 1 time in 20) the message and then an
    # exit by SIGINT itself: a shell shows 130 either way.
    assert proc.wait(60) in (130, -signal.SIGINT), output(proc)
    text = output(proc)
    assert "interrupted during a rebuild" in text and "run the same command again" in text
    assert "keeps everything written so far" not in text
