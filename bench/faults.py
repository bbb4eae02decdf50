"""Faults an index must survive: for each, does the index end equal to a clean one, and how
long did recovery take?

    python bench/faults.py [--embed-model minilm] [--vault sample_site]

Scenarios (real processes, real Chroma, a copy of the vault under $KBQA_BENCH_DIR):
  kill-9        `kb-qa index` killed with SIGKILL mid-run, then run again
  edits         200 editor-style saves in ~10 s under a watcher (`kb-qa serve --watch`'s)
  rm-index      the whole index folder deleted under a running watcher
  rm-chroma     the embedded chroma/ folder deleted, then `kb-qa index`
  chroma-empty  the Chroma server restarted on an empty folder, then `kb-qa index`
  stalled-parse a 300 KB page of `[` (quadratic for Python-Markdown) added, then `kb-qa index`:
                the run's time, the page recorded as failed, the rest equal to a clean index
  watch-chroma  the embedded chroma/ folder deleted under a running watcher, then an edit:
                time until the edit is searchable with its vector
  slow-clients  1,000 connections sending their headers a byte at a time to `kb-qa serve`
  big-headers   four 200 MB headers sent to `kb-qa serve`
For the two server cases the verdict gives connections left open and the server's memory.
"Equal" means the same chunks (id and indexed text) in the manifest and exactly those ids
in Chroma, compared with a fresh index of the final files.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import random
import shutil
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

from corpora import WORK

from kb_qa.index.manifest import embed_key
from kb_qa.ingest.watch import Watcher
from kb_qa.kb.knowledge_base import KnowledgeBase
from kb_qa.serve.serving import free_port

ROOT = Path(__file__).resolve().parents[1]


def state(kb: KnowledgeBase) -> tuple[frozenset[tuple[str, str]], frozenset[str]]:
    """(manifest chunk ids with their embed keys, Chroma ids)."""
    chunks = frozenset((c.id, embed_key(c)) for c in kb.store.chunks())
    ids = frozenset(kb.store.chroma(lambda col: col.get(include=[]))["ids"])
    return chunks, ids


def equals_clean(kb: KnowledgeBase, embed_model: str) -> str:
    """ "yes", or what differs from a fresh index of the same vault."""
    clean_dir = WORK / "faults" / "clean"
    shutil.rmtree(clean_dir, ignore_errors=True)
    with KnowledgeBase(kb.settings.vault, embed_model=embed_model, index_dir=clean_dir) as clean:
        clean.index()
        want_chunks, _ = state(clean)
    got_chunks, got_ids = state(kb)
    problems = []
    if got_chunks != want_chunks:
        problems.append(f"manifest differs by {len(got_chunks ^ want_chunks)} chunks")
    if got_ids != {c for c, _ in got_chunks}:
        problems.append(f"{len(got_ids ^ {c for c, _ in got_chunks})} Chroma ids off")
    return "yes" if not problems else "NO: " + "; ".join(problems)


def fresh_vault(source: Path) -> Path:
    vault = WORK / "faults" / "vault"
    shutil.rmtree(vault.parent, ignore_errors=True)
    shutil.copytree(source, vault, ignore=shutil.ignore_patterns(".kb-qa", "site"))
    return vault


def cli(*args: str, embed_model: str) -> subprocess.Popen[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("KBQA_")}
    env["KBQA_EMBED_MODEL"] = embed_model
    return subprocess.Popen(
        [sys.executable, "-m", "kb_qa.cli", *args],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        text=True,
    )


def timed(run: Callable[[], object]) -> float:
    started = time.perf_counter()
    run()
    return time.perf_counter() - started


def kill_9(source: Path, model: str) -> tuple[str, float]:
    vault = fresh_vault(source)
    proc = cli("index", str(vault), embed_model=model)
    time.sleep(4.0)  # model loaded, part of the vault embedded and written
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    with KnowledgeBase(vault, embed_model=model) as kb:
        seconds = timed(kb.index)
        return equals_clean(kb, model), seconds


def edits(source: Path, model: str) -> tuple[str, float]:
    vault = fresh_vault(source)
    pages = sorted(p for p in vault.rglob("*.md") if ".kb-qa" not in p.parts)
    rng = random.Random(3)
    with KnowledgeBase(vault, embed_model=model) as kb:
        watcher = Watcher(kb).start()
        watcher.wait_idle(120)
        for n in range(200):
            page = rng.choice(pages)
            tmp = page.with_name(page.name + ".tmp~")
            tmp.write_text(page.read_text() + f"\n\nEdit {n}: the heron counted {n} fish.\n")
            os.replace(tmp, page)
            time.sleep(0.05)
        time.sleep(0.5)
        seconds = timed(lambda: watcher.wait_idle(120))
        watcher.stop()
        return equals_clean(kb, model), seconds


def rm_index(source: Path, model: str) -> tuple[str, float]:
    vault = fresh_vault(source)
    with KnowledgeBase(vault, embed_model=model) as kb:
        watcher = Watcher(kb).start()
        watcher.wait_idle(120)
        started = time.perf_counter()
        shutil.rmtree(vault / ".kb-qa")
        while not kb.store.intact():
            time.sleep(0.05)
        time.sleep(0.3)
        watcher.wait_idle(300)
        seconds = time.perf_counter() - started
        watcher.stop()
        return equals_clean(kb, model), seconds


def rm_chroma(source: Path, model: str) -> tuple[str, float]:
    vault = fresh_vault(source)
    cli("index", str(vault), embed_model=model).wait()
    shutil.rmtree(vault / ".kb-qa" / "chroma")
    with KnowledgeBase(vault, embed_model=model) as kb:
        seconds = timed(kb.index)
        return equals_clean(kb, model), seconds


def chroma_empty(source: Path, model: str) -> tuple[str, float]:
    from chroma_server import chroma_server

    vault = fresh_vault(source)
    port = free_port()
    with chroma_server(WORK / "faults" / "chroma-1", port) as url:
        with KnowledgeBase(vault, embed_model=model, chroma_url=url) as kb:
            kb.index()
    with chroma_server(WORK / "faults" / "chroma-2", port) as url:
        with KnowledgeBase(vault, embed_model=model, chroma_url=url) as kb:
            seconds = timed(kb.index)
            return equals_clean(kb, model), seconds


def stalled_parse(source: Path, model: str) -> tuple[str, float]:
    vault = fresh_vault(source)
    cli("index", str(vault), embed_model=model).wait()
    (vault / "docs" / "brackets.md").write_text("# Brackets\n\n" + "[" * 300_000)
    with KnowledgeBase(vault, embed_model=model) as kb:
        started = time.perf_counter()
        report = kb.index()
        seconds = time.perf_counter() - started
        failed = [p for p, _ in report.skipped if p.endswith("brackets.md")]
        (vault / "docs" / "brackets.md").unlink()  # the clean index is of the other pages
        kb.index()
        verdict = equals_clean(kb, model)
    return f"{verdict}; the page {'failed' if failed else 'was indexed'}", seconds


def watch_chroma(source: Path, model: str) -> tuple[str, float]:
    vault = fresh_vault(source)
    page = sorted(p for p in vault.rglob("*.md") if ".kb-qa" not in p.parts)[0]
    with KnowledgeBase(vault, embed_model=model) as kb:
        watcher = Watcher(kb).start()
        watcher.wait_idle(120)
        started = time.perf_counter()
        shutil.rmtree(vault / ".kb-qa" / "chroma")
        page.write_text(page.read_text() + "\n\nThe quokka zebraquill note.\n")
        while True:
            hits = kb.search("zebraquill", 3)
            if hits and "zebraquill" in hits[0].chunk.text and hits[0].vector_rank is not None:
                break
            if time.perf_counter() - started > 120:
                watcher.stop()
                return "edit not searchable after 120 s", 120.0
            time.sleep(0.05)
        seconds = time.perf_counter() - started
        watcher.wait_idle(120)
        watcher.stop()
        return equals_clean(kb, model), seconds


def _serving(source: Path, model: str) -> tuple[subprocess.Popen[str], int]:
    """`kb-qa serve` on a free port over an indexed copy of the vault: (process, port)."""
    vault = fresh_vault(source)
    with KnowledgeBase(vault, embed_model=model) as kb:
        kb.index()
    port = free_port()
    proc = cli("serve", str(vault), "--port", str(port), embed_model=model)
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=1) as sock:
                sock.sendall(b"GET /api/health HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
                if sock.recv(12).startswith(b"HTTP/1.1 200"):
                    return proc, port
        except OSError:
            time.sleep(0.2)
    proc.kill()
    raise RuntimeError("kb-qa serve did not start")


def _rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return 0.0


def _open(conns: list[socket.socket]) -> int:
    """How many of ``conns`` the server has not closed."""
    alive = 0
    for sock in conns:
        sock.setblocking(False)
        try:
            while sock.recv(65536):  # a response (503) before the close is read past
                pass
        except BlockingIOError:
            alive += 1
        except OSError:
            pass
    return alive


def slow_clients(source: Path, model: str) -> tuple[str, float]:
    proc, port = _serving(source, model)
    try:
        before = _rss_mb(proc.pid)
        conns = []
        for _ in range(1_000):
            sock = socket.create_connection(("127.0.0.1", port), timeout=5)
            sock.sendall(b"GET /api/health HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: ")
            conns.append(sock)
        started = time.perf_counter()
        peak = _rss_mb(proc.pid)
        while time.perf_counter() - started < 60:
            for sock in conns:  # a byte each second keeps a slowloris client "active"
                with contextlib.suppress(OSError):
                    sock.send(b"a")
            if not _open(conns):
                break
            time.sleep(1.0)
        seconds = time.perf_counter() - started
        left = _open(conns)
        for sock in conns:
            sock.close()
        verdict = f"{left}/1000 open, RSS {before:.0f}->{peak:.0f} MB"
        return verdict, seconds
    finally:
        proc.send_signal(signal.SIGINT)
        proc.wait(30)


def big_headers(source: Path, model: str) -> tuple[str, float]:
    proc, port = _serving(source, model)
    try:
        before = _rss_mb(proc.pid)
        started = time.perf_counter()
        refused, sent_mb, peak = 0, 0.0, before
        block = b"a" * (1 << 20)
        for _ in range(4):
            with socket.create_connection(("127.0.0.1", port), timeout=10) as sock:
                sock.sendall(b"GET /api/health HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Big: ")
                with contextlib.suppress(OSError):
                    for _ in range(200):
                        sock.sendall(block)
                        sent_mb += 1
                peak = max(peak, _rss_mb(proc.pid))
                with contextlib.suppress(OSError):
                    refused += not sock.recv(64).startswith(b"HTTP/1.1 200")
        verdict = (
            f"{refused}/4 refused after {sent_mb:.0f} MB sent, RSS {before:.0f}->{peak:.0f} MB"
        )
        return verdict, time.perf_counter() - started
    finally:
        proc.send_signal(signal.SIGINT)
        proc.wait(30)


SCENARIOS = {
    "kill-9": kill_9,
    "edits": edits,
    "rm-index": rm_index,
    "rm-chroma": rm_chroma,
    "chroma-empty": chroma_empty,
    "stalled-parse": stalled_parse,
    "watch-chroma": watch_chroma,
    "slow-clients": slow_clients,
    "big-headers": big_headers,
}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--embed-model", default="minilm")
    parser.add_argument("--vault", type=Path, default=ROOT / "sample_site")
    parser.add_argument("scenarios", nargs="*", default=list(SCENARIOS))
    args = parser.parse_args()
    print(f"{'scenario':<14} {'equals clean index':<45} recovery")
    for name in args.scenarios:
        verdict, seconds = SCENARIOS[name](args.vault, args.embed_model)
        print(f"{name:<14} {verdict:<45} {seconds:.2f} s", flush=True)


if __name__ == "__main__":
    main()
