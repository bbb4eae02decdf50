"""Helpers shared by the answer/API tests and bench/api.py: the sample vault, SSE parsing."""

from __future__ import annotations

import asyncio
import json
import shutil
import sys
import time
from collections.abc import Iterable, Iterator
from pathlib import Path
from subprocess import PIPE, STDOUT, Popen
from typing import IO, Any

import httpx

from kb_qa.answer.answering import Citations, Done, Event, answer
from kb_qa.kb.knowledge_base import KnowledgeBase
from kb_qa.serve.serving import free_port

SAMPLE_SITE = Path(__file__).resolve().parents[1] / "sample_site"


def indexed_sample(root: Path, **settings: Any) -> KnowledgeBase:
    """A copy of sample_site under ``root``, indexed (hash embedder unless told otherwise)."""
    vault = root / "vault"
    shutil.copytree(SAMPLE_SITE, vault, ignore=shutil.ignore_patterns(".kb-qa", "site"))
    settings.setdefault("embed_model", "hash")
    kb = KnowledgeBase(vault, index_dir=root / "index", **settings)
    kb.index()
    return kb


def asked(kb: KnowledgeBase, question: str, **kwargs: Any) -> tuple[Done, Citations]:
    """The ``Done`` and ``Citations`` events of ``answer``'s stream for ``question``."""

    async def run() -> list[Event]:
        return [e async for e in answer(kb, question, **kwargs)]

    events = asyncio.run(run())
    done, citations = events[-1], events[-2]
    assert isinstance(done, Done) and isinstance(citations, Citations)
    return done, citations


def answered(url: str, question: str, **body: Any) -> dict[str, Any]:
    """The real /api/ask's answer to ``question`` as one JSON object (200 expected)."""
    response = httpx.post(
        url + "/api/ask", json={"question": question, "stream": False, **body}, timeout=60
    )
    assert response.status_code == 200, response.text
    return dict(response.json())


def rated(url: str, question: str, rating: str = "up", **fields: Any) -> httpx.Response:
    """Ask ``question`` at ``url``, then rate its answer with the id the answer carried."""
    given = answered(url, question)
    body = {"question": question, "answer": given["text"], "rating": rating}
    body["answer_id"] = given["answer_id"]
    return httpx.post(url + "/api/feedback", json={**body, **fields}, timeout=30)


def parse_sse(lines: Iterable[str]) -> list[tuple[str, Any]]:
    """(event name, decoded data) for each Server-Sent Event in ``lines``."""
    events = []
    name, data = "message", []
    for line in lines:
        if line == "":
            if data:
                events.append((name, json.loads("\n".join(data))))
            name, data = "message", []
        elif line.startswith("event:"):
            name = line.removeprefix("event:").strip()
        elif line.startswith("data:"):
            data.append(line.removeprefix("data:").removeprefix(" "))
        elif not line.startswith(":"):  # a comment (": ping" while a model thinks)
            raise AssertionError(f"not an SSE line: {line!r}")
    if data:
        events.append((name, json.loads("\n".join(data))))
    return events


def serve_process(
    vault: Path | None,
    env: dict[str, str],
    *args: str,
    cwd: Path | None = None,
    output: IO[str] | None = None,
) -> Iterator[tuple[str, Popen[str]]]:
    """Run the real `kb-qa serve VAULT ARGS` on a free port until the generator is closed;
    yields (its URL, the process) once /api/health answers and the first index run it
    makes beside the server has ended (``first_index``). Without a vault it is a
    read-only replica (ARGS name --chroma-url and --workspace); ``output`` takes the log
    instead of a pipe (which fills up unless someone reads it)."""
    port = free_port()
    where = [str(vault)] if vault is not None else []
    proc = Popen(
        [sys.executable, "-m", "kb_qa.cli", "serve", *where, "--port", str(port), *args],
        env=env,
        cwd=cwd,
        stdout=output or PIPE,
        stderr=STDOUT,
        text=True,
    )
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 120
    while True:
        assert proc.poll() is None, proc.stdout.read() if proc.stdout else ""
        try:
            health = httpx.get(url + "/api/health", timeout=1)
            if health.status_code == 200 and (health.json()["first_index"] or {"done": 1})["done"]:
                break
        except httpx.HTTPError:
            pass
        assert time.monotonic() < deadline, "kb-qa serve did not start"
        time.sleep(0.1)
    try:
        yield url, proc
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
