"""`kb-qa mcp` at its edges, driven as a client would: oversized sections, path filters an
assistant gets wrong, and a client that goes away while a call is still waiting."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import time
from pathlib import Path

from conftest import cli_env

from kb_qa.kb.knowledge_base import KnowledgeBase
from kb_qa.serve.mcp_server import PROGRESS_SECONDS

SAMPLE = Path(__file__).resolve().parents[1] / "sample_site"


def test_a_client_that_dies_while_a_call_waits_ends_the_server_cleanly(tmp_path: Path) -> None:
    """An editor that crashed (both pipes closed) while a call waited for the first index
    run: the next progress report hit a broken pipe and the server died with a 60-line
    traceback and exit 1 (with the real model, SIGABRT in ONNX Runtime's teardown: a crash
    report on the user's desktop). Now it ends as when the client closes stdin."""
    vault = tmp_path / "site"
    shutil.copytree(SAMPLE, vault)
    hello = {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t"}}
    call = {"name": "search_docs", "arguments": {"query": "retries"}, "_meta": {"progressToken": 1}}
    messages = [
        {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": hello},
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": call},
    ]
    log = tmp_path / "mcp.log"
    with KnowledgeBase(vault, embed_model="hash", index_dir=tmp_path / "idx") as other:
        with other.store.writer_lock(), log.open("w") as errlog:  # the first run waits
            server = subprocess.Popen(
                [sys.executable, "-m", "kb_qa.cli", "mcp", str(vault), "--index-dir",
                 str(tmp_path / "idx")],
                stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=errlog, env=cli_env(),
            )  # fmt: skip
            assert server.stdin is not None and server.stdout is not None
            server.stdin.write(b"".join(json.dumps(m).encode() + b"\n" for m in messages))
            server.stdin.flush()
            assert b'"id":1' in server.stdout.readline().replace(b" ", b"")
            assert b"notifications/progress" in server.stdout.readline()  # the call waits
            server.stdout.close()  # the client is gone: nobody reads the next report,
            time.sleep(PROGRESS_SECONDS + 1)  # which is written into a broken pipe
            server.stdin.close()
            try:
                code = server.wait(timeout=30)
            finally:
                server.kill()
    text = log.read_text()
    assert code == 0 and "Traceback" not in text, text
