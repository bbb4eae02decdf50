"""A real Chroma server (``chroma run`` from the venv) on a loopback port, for tests."""

from __future__ import annotations

import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx
import pytest


def chroma_script() -> str | None:
    """The ``chroma`` console script installed beside this interpreter, else one on PATH."""
    beside = Path(sys.executable).parent / "chroma"
    return str(beside) if beside.exists() else shutil.which("chroma")


@contextmanager
def chroma_server(data: Path, port: int) -> Iterator[str]:
    """Run ``chroma run --path data/db --port port`` until the block ends; yields its URL."""
    with chroma_process(data, port) as (url, _process):
        yield url


@contextmanager
def chroma_process(data: Path, port: int) -> Iterator[tuple[str, subprocess.Popen[bytes]]]:
    """``chroma_server``, yielding its process too (to pause it, as an overloaded or
    partitioned server looks)."""
    script = chroma_script()
    if script is None:
        pytest.skip("the `chroma` console script is not installed in this environment")
    data.mkdir(parents=True, exist_ok=True)
    url = f"http://127.0.0.1:{port}"
    # The server logs every request: send it to a file, a pipe nobody reads would fill up.
    with open(data / "server.log", "a") as log:
        proc = subprocess.Popen(
            [script, "run", "--path", str(data / "db"), "--port", str(port), "--host", "127.0.0.1"],
            stdout=log,
            stderr=subprocess.STDOUT,
        )
        try:
            deadline = time.monotonic() + 60
            while True:
                if proc.poll() is not None:
                    pytest.fail(
                        f"chroma exited with {proc.returncode}: "
                        f"{(data / 'server.log').read_text()[-2000:]}"
                    )
                try:
                    if httpx.get(f"{url}/api/v2/heartbeat", timeout=1).status_code == 200:
                        break
                except httpx.HTTPError:
                    pass
                if time.monotonic() > deadline:
                    pytest.fail("chroma server did not answer within 60 s")
                time.sleep(0.1)
            yield url, proc
        finally:
            proc.send_signal(signal.SIGCONT)  # a paused server would not hear the next one
            proc.terminate()
            try:
                proc.wait(10)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait(10)
