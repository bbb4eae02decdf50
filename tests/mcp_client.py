"""A real MCP client session with `kb-qa mcp` over stdio, as an assistant's client opens it."""

from __future__ import annotations

import contextlib
import json
import subprocess
import sys
from collections.abc import AsyncIterator
from pathlib import Path
from typing import IO, Any

from conftest import cli_env
from mcp import ClientSession, StdioServerParameters, stdio_client


def server_params(
    vault: Path, index_dir: Path, env: dict[str, str] | None = None
) -> StdioServerParameters:
    """How a client starts kb-qa's MCP server on ``vault`` with its index in ``index_dir``
    (in ``env``, the tests' CLI environment unless given)."""
    return StdioServerParameters(
        command=sys.executable,
        args=["-m", "kb_qa.cli", "mcp", str(vault), "--index-dir", str(index_dir)],
        env=env if env is not None else cli_env(),
    )


@contextlib.asynccontextmanager
async def mcp_session(
    vault: Path, index_dir: Path, env: dict[str, str] | None = None
) -> AsyncIterator[ClientSession]:
    """An initialised session with the server (stopped when the block ends)."""
    params = server_params(vault, index_dir, env)
    async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
        await session.initialize()
        yield session


def raw_server(
    vault: Path, index_dir: Path, errlog: IO[str], messages: list[dict[str, Any]]
) -> subprocess.Popen[bytes]:
    """The server as a process on pipes, sent ``messages`` (JSON-RPC, one a line) at once:
    for what a client library would not do (close its end mid-call, never read)."""
    server = subprocess.Popen(
        [sys.executable, "-m", "kb_qa.cli", "mcp", str(vault), "--index-dir", str(index_dir)],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=errlog, env=cli_env(),
    )  # fmt: skip
    assert server.stdin is not None and server.stdout is not None
    server.stdin.write(b"".join(json.dumps(m).encode() + b"\n" for m in messages))
    server.stdin.flush()
    return server
