"""The watcher recovers when the vector store's files are deleted under it (issue 24, item 3).

Under ``serve --watch``, ``rm -rf VAULT/.kb-qa/chroma`` made every index run fail with
"attempt to write a readonly database" (chromadb keeps the deleted database open), the
edit never became searchable and ``/api/health`` said ``ok``. Now the running process opens
the folder again and puts the vectors back, and health reports a failing index run.

A real ``kb-qa serve --watch`` process on loopback, real embedded Chroma in the vault.
"""

from __future__ import annotations

import contextlib
import shutil
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx
from api_helpers import serve_process
from conftest import cli_env

GOOD = {
    "mkdocs.yml": "site_name: Zoo\n",
    "docs/otters.md": "# Otters\n\n## Sleep\n\nOtters hold hands while they sleep.\n",
    "docs/wombats.md": "# Wombats\n\n## Burrows\n\nWombats dig burrows with their claws.\n",
}


def _until(check: Callable[[], Any], seconds: float = 90) -> Any:
    """``check()`` once it is truthy; fails after ``seconds`` (a guard against a hang)."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        value = check()
        if value:
            return value
        time.sleep(0.3)
    raise AssertionError(f"not true after {seconds} s: {check.__doc__ or check}")


def _paths(url: str, query: str) -> list[str]:
    r = httpx.get(url + "/api/search", params={"q": query}, timeout=30)
    return [h["path"] for h in r.json().get("hits", [])] if r.status_code == 200 else []


def test_serve_watch_recovers_from_a_deleted_chroma_folder(
    make_vault: Callable[..., Path],
) -> None:
    vault = make_vault(GOOD)
    env = cli_env(KBQA_RATE_LIMIT="0", KBQA_QUESTION_LOG="0")
    with contextlib.closing(serve_process(vault, env, "--watch")) as served:
        url, _proc = next(served)
        assert httpx.get(url + "/api/health").json()["status"] == "ok"
        shutil.rmtree(vault / ".kb-qa" / "chroma")
        (vault / "docs" / "kingfisher.md").write_text(
            "# Kingfisher\n\n## Diving\n\nThe kingfisher dives for minnows.\n"
        )

        def edit_searchable() -> bool:
            """the new page is found and its vector is back"""
            r = httpx.get(url + "/api/search", params={"q": "kingfisher minnows"}, timeout=30)
            hits = r.json().get("hits", []) if r.status_code == 200 else []
            return (
                bool(hits)
                and hits[0]["path"] == "docs/kingfisher.md"
                and (hits[0]["vector_rank"] is not None)
            )

        _until(edit_searchable)

        def healthy() -> dict[str, Any] | None:
            """health is ok again"""
            body = httpx.get(url + "/api/health", timeout=30).json()
            return body if body["status"] == "ok" and not body["freshness"]["error"] else None

        health = _until(healthy)
        assert health["problem"] is None
        assert health["chunks"] >= 6
        assert (vault / ".kb-qa" / "chroma" / "chroma.sqlite3").is_file()
        # The old pages have their vectors again, and later edits keep arriving.
        otters = httpx.get(url + "/api/search", params={"q": "otters hold hands"}).json()
        assert otters["hits"][0]["vector_rank"] is not None
        (vault / "docs" / "wombats.md").write_text(
            "# Wombats\n\n## Droppings\n\nWombats leave cube-shaped droppings.\n"
        )
        _until(lambda: "docs/wombats.md" in _paths(url, "cube-shaped droppings")[:1])


def test_health_reports_a_failing_index_run(make_vault: Callable[..., Path]) -> None:
    vault = make_vault(GOOD)
    env = cli_env(KBQA_RATE_LIMIT="0", KBQA_QUESTION_LOG="0")
    with contextlib.closing(serve_process(vault, env, "--watch")) as served:
        url, _proc = next(served)
        assert httpx.get(url + "/api/health").json()["problem"] is None
        # Every run now stops on the broken config; the index keeps serving what it had.
        (vault / "mkdocs.yml").write_text("site_name: [unclosed\n")

        def failing() -> dict[str, Any] | None:
            """health reports the failing run"""
            body = httpx.get(url + "/api/health", timeout=30).json()
            return body if body["status"] == "degraded" else None

        health = _until(failing)
        assert "the last index run failed" in health["problem"]
        assert "mkdocs.yml" in health["problem"]
        assert "docs/otters.md" in _paths(url, "otters hold hands")
        (vault / "mkdocs.yml").write_text(GOOD["mkdocs.yml"])
        _until(lambda: httpx.get(url + "/api/health", timeout=30).json()["status"] == "ok")
