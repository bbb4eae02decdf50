"""The question log's cost per answer, and `kb-qa insights` over a big log.

    python bench/insights.py logging [--n 300]      # what logging adds to an answer
    python bench/insights.py report [--rows 100000] # kb-qa insights over that many questions

``logging`` serves a copy of sample_site (MiniLM, extractive answers) twice in one process,
question_log on and off, and asks both the same questions in alternating order; it prints
the p50/p95 of the whole answer (POST /api/ask, JSON) on each and the median of the paired
differences (target: logging adds < 2 ms p50), plus what ``QuestionLog.record`` costs the
answering task and how fast the writer thread stores rows.

``report`` fills the question log of an indexed sample_site with ROWS questions over 90
days (on-topic ones citing real sections, 15% off-topic with many distinct wordings, 3% with
feedback), then times the real ``kb-qa insights`` command: text, --json, --html, --csv and
--since 7d (target: < 30 s on 2 cores for 100,000 questions).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import random
import resource
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import httpx

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))

from uvicorn_thread import UvicornThread  # noqa: E402

from kb_qa.kb.knowledge_base import KnowledgeBase  # noqa: E402
from kb_qa.owners.feedback import Feedback, FeedbackStore  # noqa: E402
from kb_qa.owners.questionlog import Cited, Entry, QuestionLog, connect, new_ref  # noqa: E402
from kb_qa.serve.app import create_app  # noqa: E402

WORK = Path(os.environ.get("KBQA_BENCH_DIR", "/tmp/kbqa-bench"))
QUESTIONS = ROOT / "bench" / "questions"


def sample_vault() -> Path:
    vault = WORK / "sample_site"
    if not vault.exists():
        shutil.copytree(ROOT / "sample_site", vault, ignore=shutil.ignore_patterns(".kb-qa"))
    return vault


def jsonl_questions(*names: str) -> list[str]:
    found = []
    for name in names:
        for line in (QUESTIONS / f"{name}.jsonl").read_text(encoding="utf-8").splitlines():
            if line.strip():
                found.append(json.loads(line)["question"])
    return found


def heading_questions(kb: KnowledgeBase) -> list[str]:
    headings = sorted({c.heading for c in kb.store.chunks() if c.heading})
    return [f"How does {h.lower()} work?" for h in headings]


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def bench_logging(n: int) -> None:
    index = WORK / "insights-logging-index"
    kb = KnowledgeBase(sample_vault(), index_dir=index, embed_model="minilm")
    kb.index()
    questions = heading_questions(kb)
    base = kb.settings.replace(rate_limit=0)
    times: dict[bool, list[float]] = {True: [], False: []}
    with (
        UvicornThread(create_app(kb, base.replace(question_log=True))) as on,
        UvicornThread(create_app(kb, base.replace(question_log=False))) as off,
        httpx.Client(timeout=30) as client,
    ):
        urls = {True: on.url, False: off.url}

        def one(logged: bool, question: str) -> float:
            started = time.perf_counter()
            response = client.post(
                urls[logged] + "/api/ask", json={"question": question, "stream": False}
            )
            response.raise_for_status()
            return (time.perf_counter() - started) * 1000

        for q in questions[:20]:  # warm both
            one(True, q)
            one(False, q)
        for i in range(n):
            q = questions[i % len(questions)]
            order = (True, False) if i % 2 else (False, True)
            for logged in order:
                times[logged].append(one(logged, q))
    diffs = [a - b for a, b in zip(times[True], times[False])]
    print(f"whole answer (POST /api/ask, JSON, extractive, sample_site, MiniLM), n={n} each:")
    for logged in (True, False):
        t = times[logged]
        label = "question_log on " if logged else "question_log off"
        print(f"  {label}: p50 {statistics.median(t):.2f} ms, p95 {percentile(t, 0.95):.2f} ms")
    print(
        f"  logging adds: p50 {statistics.median(times[True]) - statistics.median(times[False]):+.2f}"
        f" ms; median of paired differences {statistics.median(diffs):+.2f} ms (target < 2 ms)"
    )

    print(f"  on the answer's own path (in process): {answer_path_cost(kb):.1f} µs per answer")
    kb.close()

    log = QuestionLog(WORK / "insights-record-bench")
    cited = tuple(Cited("guides/retries.md", f"a{i}", ("Guide", f"Part {i}")) for i in range(5))
    entries = [
        Entry(new_ref(), time.time(), f"question {i}?", 1, "extractive", covered=True,
              citations=cited, retrieval_ms=12.0, first_token_ms=20.0, total_ms=25.0)
        for i in range(20_000)
    ]  # fmt: skip
    started = time.perf_counter()
    for e in entries[:10_000]:
        log.record(e)
    queued = (time.perf_counter() - started) / 10_000 * 1e6
    log.flush()
    started = time.perf_counter()
    for e in entries[10_000:]:
        log.record(e)
    log.flush()
    rate = 10_000 / (time.perf_counter() - started)
    log.close()
    shutil.rmtree(WORK / "insights-record-bench")
    print(
        f"QuestionLog.record: {queued:.1f} µs per answer; the writer thread stores {rate:,.0f} rows/s"
    )


def answer_path_cost(kb: KnowledgeBase) -> float:
    """What the question log adds to one answer's events, in µs: the logging wrapper around a
    real answer's events against the same events passed through plain."""
    from kb_qa.answer.answering import answer
    from kb_qa.serve.protocol import AskRequest

    async def collect(events: Any) -> list[Any]:
        return [e async for e in events]

    question = heading_questions(kb)[0]
    recorded = asyncio.run(collect(answer(kb, question)))

    async def replay() -> Any:
        for event in recorded:
            yield event

    folder = WORK / "insights-path-bench"
    api = create_app(kb, kb.settings.replace(index_dir=folder)).state.api
    ask = AskRequest(question)
    runs = 3000

    async def timed(logged: bool) -> float:
        started = time.perf_counter()
        for _ in range(runs):
            events = api._logged(replay(), ask, api.question_log) if logged else replay()
            await collect(events)
        return (time.perf_counter() - started) / runs * 1e6

    plain = min(asyncio.run(timed(False)) for _ in range(3))
    logged = min(asyncio.run(timed(True)) for _ in range(3))
    api.question_log.close()
    shutil.rmtree(folder)
    return logged - plain


def fill_log(index: Path, kb: KnowledgeBase, rows: int) -> None:
    """ROWS questions over the last 90 days, written straight into the log."""
    rng = random.Random(12)
    on_topic = heading_questions(kb) + jsonl_questions("mkdocs", "uv")
    off_topic = jsonl_questions("offtopic")
    openers = ["", "hi, ", "quick question: ", "please help: ", "hello! ", "so ", "hey team, "]
    closers = ["", " thanks", " ?", " asap", " in 2026", " on windows", " on mac", " for ci"]
    sections = [(c.path, c.anchor, c.heading_path) for c in kb.store.chunks()]
    now = time.time()
    log = QuestionLog(index, days=0)
    ratings = []
    for _ in range(rows):
        at = now - rng.random() * 90 * 86_400
        if rng.random() < 0.15:
            q = rng.choice(openers) + rng.choice(off_topic) + rng.choice(closers)
            covered = False
        else:
            q = rng.choice(on_topic)
            covered = True
        cited = tuple(Cited(*rng.choice(sections)) for _ in range(rng.randint(1, 4)))
        error = "llm_timeout" if rng.random() < 0.005 else ""
        entry = Entry(
            new_ref(), at, q, 1 + (rng.random() < 0.2), "llm", "openai/test",
            None if error else covered, () if error else cited,
            None if error else rng.uniform(5, 40), None if error else rng.lognormvariate(6.5, 0.6),
            None if error else rng.lognormvariate(7.5, 0.5), error,
            "The language model did not answer within 60 s." if error else "",
        )  # fmt: skip
        log.record(entry)
        if rng.random() < 0.03:
            rating = "down" if rng.random() < 0.4 else "up"
            reason = rng.choice(["", "", "wrong page", "too long", "outdated"])
            ratings.append(Feedback(rating, q, "…", reason, (), at + 30, entry.ref))
    log.close()
    store = FeedbackStore(index)
    for item in ratings:
        store.add(item)


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def bench_report(rows: int) -> None:
    index = WORK / f"insights-{rows}-index"
    vault = sample_vault()
    kb = KnowledgeBase(vault, index_dir=index, embed_model="minilm")
    kb.index()
    have = sum(1 for _ in QuestionLog(index).entries())
    if have != rows:
        print(f"filling the question log with {rows:,} questions …", file=sys.stderr)
        for name in ("feedback.sqlite3", "feedback.sqlite3-wal", "feedback.sqlite3-shm"):
            (index / name).unlink(missing_ok=True)
        fill_log(index, kb, rows)
    kb.close()
    env = {k: v for k, v in os.environ.items() if not k.startswith("KBQA_")}
    env["KBQA_QUESTION_LOG_DAYS"] = "0"  # keep the generated rows whatever their age
    base = [sys.executable, "-m", "kb_qa.cli", "insights", str(vault), "--index-dir", str(index)]
    html = WORK / "insights-report.html"
    print(
        f"kb-qa insights over {rows:,} logged questions (sample_site, MiniLM, {os.cpu_count()} "
        f"cores, load average {os.getloadavg()[0]:.1f} at the start):"
    )
    for label, extra, cold in (
        ("text, cold", [], True),
        ("--json, cold", ["--json"], True),
        ("--json, warm", ["--json"], False),
        ("--html, warm", ["--html", str(html)], False),
        ("--csv", ["--csv"], False),
        ("--since 7d --json", ["--since", "7d", "--json"], False),
    ):
        if cold:  # no vectors kept from an earlier report: every gap question is embedded
            with contextlib.closing(connect(index)) as conn, conn:
                conn.execute("DELETE FROM question_vectors")
        started, cpu = time.perf_counter(), _children_cpu()
        done = subprocess.run([*base, *extra], env=env, capture_output=True, text=True, check=True)
        seconds, cpu = time.perf_counter() - started, _children_cpu() - cpu
        size = f"{len(done.stdout.encode()) / 1e6:.1f} MB out" if done.stdout else ""
        if extra[:1] == ["--html"]:
            size = f"{html.stat().st_size / 1e6:.2f} MB file"
        print(f"  {label:<18} {seconds:6.1f} s wall, {cpu:5.1f} s CPU  {size}")
        if label == "--json, cold":
            gaps = json.loads(done.stdout)["gaps"]
            print(
                f"  {'':<18} gaps: {gaps['questions']:,} distinct questions, "
                f"{gaps['clustered']:,} clustered into {len(gaps['topics'])}+"
                f"{gaps['more_topics']} topics"
            )
    load = os.getloadavg()[0]
    peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
    print(
        f"  peak RSS of a run: {peak:.0f} MB; load average at the end {load:.1f} (target: < 30 s)"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="what", required=True)
    p = sub.add_parser("logging")
    p.add_argument("--n", type=int, default=300)
    p = sub.add_parser("report")
    p.add_argument("--rows", type=int, default=100_000)
    args = parser.parse_args()
    WORK.mkdir(parents=True, exist_ok=True)
    if args.what == "logging":
        bench_logging(args.n)
    else:
        bench_report(args.rows)


if __name__ == "__main__":
    main()
