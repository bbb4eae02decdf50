"""Read-only replicas over one Chroma server: readiness, throughput, memory.

    python bench/replicas.py [--corpus NAME ...] [--embed-model minilm] [--throughput CORPUS]
                             [--cache-from DIR_WITH_{corpus}]

Starts a real `chroma run` on a fresh path, indexes each corpus into it (a writer's
manifest and embedding cache are kept in the work folder, so later runs embed nothing;
``--cache-from /tmp/kbqa-bench/index/synthetic-{corpus}-default-d`` seeds that cache from
another index built with the same model), then prints:
- per corpus: seconds from starting `kb-qa serve --chroma-url URL --workspace NAME` (an
  empty folder, no vault) to /api/ready answering 200 (process start, model load, chunks
  loaded from Chroma and the keyword index built), the load itself as the replica timed
  it, and the replica's RSS;
- on one corpus: /api/search throughput and latency with 20 clients spread round-robin
  (as a load balancer would) over 1 and over 2 replicas, next to one ordinary embedded
  `kb-qa serve VAULT` on the same docs. Everything shares the machine's cores with the
  Chroma server and the clients, so 2 replicas on one machine measure the overhead of the
  topology, not the scaling across machines.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import shutil
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parent))

from api import SEARCH_REQUESTS, pct, questions_for, rss_mb, search_throughput
from corpora import CORPORA, WORK, corpus_copy

from kb_qa.kb.knowledge_base import KnowledgeBase
from kb_qa.serve.serving import free_port

HERE = WORK / "replicas"
CLIENTS = 20


def _env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("KBQA_")}
    return env | {"KBQA_RATE_LIMIT": "0", "PYTHONUNBUFFERED": "1"} | extra


@contextlib.contextmanager
def chroma(path: Path) -> Iterator[str]:
    """`chroma run` on ``path`` (emptied first) until the block ends; yields its URL."""
    shutil.rmtree(path, ignore_errors=True)
    path.mkdir(parents=True)
    port = free_port()
    script = Path(sys.executable).parent / "chroma"
    with open(path.parent / "chroma.log", "w") as log:
        proc = subprocess.Popen(
            [str(script), "run", "--path", str(path), "--port", str(port), "--host", "127.0.0.1"],
            stdout=log,
            stderr=subprocess.STDOUT,
        )
        url = f"http://127.0.0.1:{port}"
        try:
            _wait_for(url + "/api/v2/heartbeat", proc, 60)
            yield url
        finally:
            proc.terminate()
            proc.wait(20)


def _wait_for(url: str, proc: subprocess.Popen[bytes], bound: float) -> float:
    started = time.perf_counter()
    while time.perf_counter() - started < bound:
        if proc.poll() is not None:
            raise SystemExit(f"{proc.args[:3]} exited with {proc.returncode}")
        with contextlib.suppress(httpx.HTTPError):
            if httpx.get(url, timeout=2).status_code == 200:
                return time.perf_counter() - started
        time.sleep(0.02)
    raise SystemExit(f"{url} did not answer within {bound} s")


@contextlib.contextmanager
def api(
    args: list[str], env: dict[str, str], cwd: Path, name: str
) -> Iterator[tuple[str, int, float]]:
    """`kb-qa serve ARGS` until the block ends: (URL, pid, seconds until /api/ready is 200)."""
    port = free_port()
    started = time.perf_counter()
    with open(HERE / f"{name}.log", "w") as log:
        proc = subprocess.Popen(
            [sys.executable, "-m", "kb_qa.cli", "serve", *args, "--port", str(port)],
            env=env,
            cwd=cwd,
            stdout=log,
            stderr=subprocess.STDOUT,
        )
        url = f"http://127.0.0.1:{port}"
        try:
            _wait_for(url + "/api/ready", proc, 600)
            yield url, proc.pid, time.perf_counter() - started
        finally:
            proc.terminate()
            try:
                proc.wait(20)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()


def seed_cache(index_dir: Path, source: Path, model: str) -> int:
    """Copy another index's embedding cache (same model only); returns vectors copied."""
    manifest = index_dir / "manifest.sqlite3"
    with contextlib.closing(sqlite3.connect(manifest)) as db, db:
        db.execute("ATTACH DATABASE ? AS src", (str(source / "manifest.sqlite3"),))
        row = db.execute("SELECT value FROM src.meta WHERE key='embed_model'").fetchone()
        if not row or row[0] != model:
            print(f"  not seeding from {source}: built with {row[0] if row else 'nothing'}")
            return 0
        before = db.execute("SELECT COUNT(*) FROM vectors").fetchone()[0]
        db.execute("INSERT OR IGNORE INTO vectors SELECT key, vec FROM src.vectors")
        return db.execute("SELECT COUNT(*) FROM vectors").fetchone()[0] - before


def index_into(name: str, chroma_url: str, model: str, cache_from: str) -> str:
    """Index one corpus into the Chroma server (the writer's job); returns its workspace."""
    index_dir = HERE / f"writer-{name}"
    fresh = not (index_dir / "manifest.sqlite3").exists()
    with KnowledgeBase(
        corpus_copy(name), index_dir=index_dir, chroma_url=chroma_url, embed_model=model
    ) as kb:
        if fresh and cache_from:
            copied = seed_cache(index_dir, Path(cache_from.format(corpus=name)), model)
            print(f"  seeded {copied} cached vectors")
        report = kb.index()
        print(
            f"  {name}: workspace {kb.store.workspace}, {report.files} files, "
            f"{report.chunks} chunks ({report.embedded} embedded) in {report.seconds:.1f} s",
            flush=True,
        )
        return kb.store.workspace


def search_load(urls: list[str], questions: list[str]) -> tuple[float, float, float]:
    """(requests/s, p50 ms, p95 ms) of /api/search with CLIENTS clients over ``urls``."""
    for url in urls:  # warm: first requests pay for lazy work
        for q in questions[:5]:
            httpx.get(url + "/api/search", params={"q": q, "k": 10}, timeout=60)
    rate, latencies = search_throughput(urls, questions, CLIENTS)
    return rate, statistics.median(latencies), pct(latencies, 0.95)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpus", action="append", choices=CORPORA, default=[])
    parser.add_argument("--embed-model", default="minilm")
    parser.add_argument("--throughput", default="mkdocs-material", choices=CORPORA)
    parser.add_argument("--cache-from", default="", help="folder with {corpus} in its name")
    args = parser.parse_args()
    corpora = args.corpus or list(CORPORA)
    HERE.mkdir(parents=True, exist_ok=True)
    print(f"embed model {args.embed_model}; load average {os.getloadavg()[0]:.1f}", flush=True)
    with chroma(HERE / "chroma") as chroma_url, tempfile.TemporaryDirectory() as empty:
        print(f"Chroma server {chroma_url}; indexing (the writer):", flush=True)
        workspaces = {
            name: index_into(name, chroma_url, args.embed_model, args.cache_from)
            for name in corpora
        }
        replica_env = _env(KBQA_CHROMA_URL=chroma_url)

        print("\nreplica ready (from process start to /api/ready 200):")
        for name, workspace in workspaces.items():
            env = replica_env | {"KBQA_WORKSPACE": workspace}
            with api([], env, Path(empty), f"replica-{name}") as (url, pid, ready):
                health = httpx.get(url + "/api/health").json()
                q = questions_for(corpus_copy(name), None, 50)
                search_load([url], q[:20])  # a little traffic, for the RSS after use
                now, peak = rss_mb(pid)
                print(
                    f"  {name:<16} ready in {ready:5.2f} s (chunks loaded + keyword index "
                    f"{health['load_seconds']:.2f} s; {health['chunks']} chunks)   "
                    f"RSS {now:.0f} MB (peak {peak:.0f} MB)",
                    flush=True,
                )

        name = args.throughput
        if name not in workspaces:
            return
        questions = questions_for(corpus_copy(name), None, 200)
        env = replica_env | {"KBQA_WORKSPACE": workspaces[name]}
        print(f"\n/api/search on {name}, {CLIENTS} clients, {SEARCH_REQUESTS} requests:")
        with (
            api([], env, Path(empty), "replica-a") as (a, _, _),
            api([], env, Path(empty), "replica-b") as (b, _, _),
        ):
            for label, urls in (("1 replica", [a]), ("2 replicas", [a, b])):
                rate, p50, p95 = search_load(urls, questions)
                print(
                    f"  {label:<24} {rate:6.1f} requests/s   p50 {p50:6.1f} ms   p95 {p95:6.1f} ms",
                    flush=True,
                )
        local = HERE / f"local-{name}"
        if not (local / "manifest.sqlite3").exists():
            local.mkdir(exist_ok=True)
            shutil.copy(
                HERE / f"writer-{name}" / "manifest.sqlite3", local
            )  # vectors from its cache
        embedded = _env(KBQA_EMBED_MODEL=args.embed_model)
        with api(
            [str(corpus_copy(name)), "--index-dir", str(local)], embedded, Path(empty), "local"
        ) as (
            url,
            _,
            _,
        ):
            rate, p50, p95 = search_load([url], questions)
            print(
                f"  {'embedded kb-qa serve':<24} {rate:6.1f} requests/s   p50 {p50:6.1f} ms   p95 {p95:6.1f} ms"
            )


if __name__ == "__main__":
    main()
