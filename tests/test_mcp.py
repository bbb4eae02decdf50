"""`kb-qa mcp` driven by a real MCP client session from the `mcp` package, over stdio."""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path

import anyio
from conftest import cli_env
from mcp import ClientSession, StdioServerParameters, stdio_client

SAMPLE = Path(__file__).resolve().parents[1] / "sample_site"


async def _session_calls(vault: Path, index_dir: Path) -> dict[str, object]:
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "kb_qa.cli", "mcp", str(vault), "--index-dir", str(index_dir)],
        env=cli_env(),
    )
    async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
        await session.initialize()
        tools = await session.list_tools()
        search = await session.call_tool(
            "search_docs", {"query": "How do I rotate an API token?", "k": 3}
        )
        ask = await session.call_tool(
            "ask_docs", {"question": "What is the default retry backoff?"}
        )
    return {
        "tools": sorted(t.name for t in tools.tools),
        "search": search.content[0].text,
        "ask": ask.content[0].text,
    }


def test_mcp_tools_over_stdio(tmp_path: Path) -> None:
    vault = tmp_path / "site"
    shutil.copytree(SAMPLE, vault)
    result = anyio.run(_session_calls, vault, tmp_path / "idx")
    assert result["tools"] == ["ask_docs", "search_docs"]
    hits = json.loads(str(result["search"]))
    assert len(hits) == 3
    assert any("token" in " ".join(h["heading_path"]).lower() for h in hits)
    assert all(h["link"].startswith("https://lumen.example.com/") for h in hits)
    assert all(h["passage"] for h in hits)
    answer = str(result["ask"])
    # No LLM is configured: the answer is extractive, cites [1] and lists that source.
    assert "[1]" in answer
    assert "\n[1] " in answer and "https://lumen.example.com/" in answer
