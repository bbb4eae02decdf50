"""Every hostile file at once, against a real `kb-qa serve`: no 500, no byte from outside the
vault, the server keeps answering, and the index equals a clean re-index afterwards.
"""

from __future__ import annotations

import subprocess
from collections.abc import Callable
from pathlib import Path
from urllib.parse import quote

import httpx
from api_helpers import serve_process
from hostile.corpus import GOOD, OUTSIDE_MARK, write_hostile_vault

from kb_qa.index.manifest import embed_key
from kb_qa.kb.knowledge_base import KnowledgeBase

QUERIES = ["otters", "zebracorn outside secret", "walnuts", "alert script", "deep quote", "PWNED"]


def snapshot(
    vault: Path, index_dir: Path, build: bool = False
) -> tuple[frozenset[tuple[str, str]], frozenset[str]]:
    with KnowledgeBase(vault, embed_model="hash", index_dir=index_dir) as kb:
        if build:
            kb.index()
        chunks = frozenset((c.id, embed_key(c)) for c in kb.store.chunks())
        ids = frozenset(kb.store.chroma(lambda col: col.get(include=[]))["ids"])
    return chunks, ids


def test_hostile_vault_against_a_real_server(
    tmp_path: Path, cli_env: Callable[..., dict[str, str]]
) -> None:
    vault = write_hostile_vault(tmp_path)
    served = serve_process(vault, cli_env(KBQA_RATE_LIMIT="0"), "--watch")
    url, proc = next(served)
    try:
        seen: list[str] = []
        sources = httpx.get(url + "/api/sources").json()["pages"]
        paths = {p["path"] for p in sources}
        assert set(GOOD) <= paths and "alias.md" in paths
        assert not paths & {"leak.md", "leak-relative.md", "pipe.md", "..md", "huge.md"}
        assert not any(p.startswith(("leakdir/", "loop/")) for p in paths)
        for q in QUERIES:
            for route in ("/api/search",):
                r = httpx.get(url + route, params={"q": q, "k": 50})
                assert r.status_code == 200, r.text
                seen.append(r.text)
            r = httpx.post(url + "/api/ask", json={"question": q, "stream": False}, timeout=30)
            assert r.status_code == 200, r.text
            seen.append(r.text)
        for page in [*sorted(paths), "leak.md", "leakdir/more.md", "../outside/secret.md"]:
            r = httpx.get(url + "/view/" + quote(page))
            assert r.status_code in (200, 404), (page, r.status_code)
            assert "<script>alert" not in r.text
            seen.append(r.text)
        assert all(OUTSIDE_MARK not in text for text in seen)
        health = httpx.get(url + "/api/health").json()
        assert health["status"] == "ok", health
    finally:
        proc.terminate()
        try:
            out, _ = proc.communicate(timeout=20)
        except subprocess.TimeoutExpired:
            proc.kill()
            out, _ = proc.communicate()
        served.close()
    assert "Traceback" not in out, out[-3000:]
    # What the server left equals a clean index of the same files.
    served = snapshot(vault, vault / ".kb-qa")
    assert served[0] and served == snapshot(vault, tmp_path / "clean", build=True)
