"""Servers the tests start as processes (`zensical serve`, `properdocs serve`, `kb-qa serve`)."""

from __future__ import annotations

import signal
import subprocess
import time

import httpx


def wait_for(url: str, process: subprocess.Popen[str], seconds: float = 120) -> httpx.Response:
    """The first 200 response from ``url`` (preview servers answer 404 until they have built);
    fails with the process's stderr if it exits first."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise AssertionError(f"{process.args} exited: {process.communicate()[1][-3000:]}")
        try:
            response = httpx.get(url, timeout=5)
            if response.status_code == 200:
                return response
        except httpx.TransportError:
            pass
        time.sleep(0.3)
    raise AssertionError(f"{url} did not answer in {seconds} s")


def stop(process: subprocess.Popen[str]) -> str:
    """Stop as Ctrl-C does, and kill if it has not exited 15 s later; returns its stderr
    (when piped). Not SIGTERM: ``mkdocs serve`` removes its temporary build folder on
    Ctrl-C only (SIGTERM left a /tmp/mkdocs_* folder behind per test)."""
    process.send_signal(signal.SIGINT)
    try:
        _, err = process.communicate(timeout=15)
    except subprocess.TimeoutExpired:
        process.kill()
        _, err = process.communicate()
    return err or ""
