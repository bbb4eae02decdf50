"""``kb-qa mcp``: the index as Model Context Protocol tools over stdio.

AI editors and assistants get the same grounded search and answers as the widget:
``search_docs`` returns sections with their heading path, link and passage, and
``ask_docs`` returns a cited answer. stdout belongs to the protocol, so everything
else (logs, index progress) goes to stderr.
"""

from __future__ import annotations

import json
from typing import Any

from mcp.server import MCPServer

from kb_qa.kb.knowledge_base import KnowledgeBase
from kb_qa.serve import inputs

INSTRUCTIONS = (
    "Search and answer questions from the user's Markdown knowledge base. Prefer search_docs "
    "to find sections and quote them; use ask_docs for a complete answer with citations. "
    "Cite the returned links when you use a passage."
)


def build_server(kb: KnowledgeBase) -> MCPServer:
    """An MCP server exposing ``search_docs`` and ``ask_docs`` over ``kb``."""
    server: MCPServer = MCPServer("kb-qa", instructions=INSTRUCTIONS)

    @server.tool()
    def search_docs(query: str, k: int = 8) -> str:
        """Find the heading sections of the knowledge base that best match a query.

        Returns JSON: a list of {heading_path, link, path, line_start, line_end, passage}.
        """
        k = max(1, min(int(k), 50))
        try:
            query = inputs.question(query, kb.settings, "query")
        except inputs.InputError as exc:
            return f"Error: {exc}"
        hits = kb.search(query, k)
        return json.dumps([_hit(kb, h) for h in hits], ensure_ascii=False, indent=1)

    @server.tool()
    async def ask_docs(question: str) -> str:
        """Answer a question from the knowledge base; every claim cites a numbered source.

        Returns the answer followed by its numbered sources (heading path and link).
        """
        from kb_qa.answer.answering import answer

        try:
            question = inputs.question(question, kb.settings)
        except inputs.InputError as exc:
            return f"Error: {exc}"
        text = ""
        sources: list[dict[str, Any]] = []
        async for event in answer(kb, question):
            data = event.data()
            if event.name == "done":
                text = data["text"]
            elif event.name == "citations":
                sources = data["citations"]
            elif event.name == "error":
                return f"Error: {data['message']}"
        lines = [text.strip(), ""] if sources else [text.strip()]
        for c in sources:
            lines.append(f"[{c['number']}] {' > '.join(c['heading_path'])}: {c['url']}")
        return "\n".join(lines)

    return server


def _hit(kb: KnowledgeBase, hit: Any) -> dict[str, Any]:
    c = hit.chunk
    return {
        "heading_path": list(c.heading_path),
        "link": kb.url(c),
        "path": c.path,
        "line_start": c.line_start,
        "line_end": c.line_end,
        "passage": c.text,
    }


def serve_stdio(kb: KnowledgeBase) -> None:
    """Run the MCP server on stdin/stdout until the client closes the stream."""
    build_server(kb).run("stdio")
