"""``kb-qa mcp``: the index as Model Context Protocol tools over stdio.

AI editors and assistants get the same grounded search and answers as the widget:
``search_docs`` returns sections with their heading path, link and passage, and
``ask_docs`` returns a cited answer. stdout belongs to the protocol, so everything
else (logs, index progress) goes to stderr.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import partial
from typing import Annotated, Any

import anyio.to_thread
from mcp.server import MCPServer
from mcp.server.mcpserver import Context
from mcp.server.mcpserver.exceptions import ToolError
from pydantic import Field

from kb_qa import __version__
from kb_qa.answer.events import Error
from kb_qa.errors import KbQaError
from kb_qa.kb.knowledge_base import KnowledgeBase
from kb_qa.serve import inputs

INSTRUCTIONS = (
    "Search and answer questions from the user's Markdown knowledge base. Prefer search_docs "
    "to find sections and quote them; use ask_docs for a complete answer with citations. "
    "Cite the returned links when you use a passage."
)

SEARCH_DOCS = (
    "Find the heading sections of the knowledge base that best match a query. Returns JSON: "
    "a list of {heading_path, link, file, path, line_start, line_end, passage}; file is the "
    "section's file and line on this machine, link its page on the site."
)
ASK_DOCS = (
    "Answer a question from the knowledge base; every claim cites a numbered source. Returns "
    "the answer followed by its numbered sources (heading path, link and file)."
)
INCLUDE = "Only pages matching these vault paths or globs (docs_dir included: docs/guides/*)."
EXCLUDE = "Leave out pages matching these vault paths or globs."


@dataclass
class FirstIndex:
    """The first index run of ``kb-qa mcp``, made while the client is already connected:
    MCP clients give up on a handshake that waits for a cold index (minutes on a big
    site), so the tools wait for it instead."""

    done: threading.Event = field(default_factory=threading.Event)
    error: str = ""  # what stopped it, said to every tool call
    progress: tuple[int, int] = (0, 0)  # sections embedded, of how many


PROGRESS_SECONDS = 2.0  # a waiting call's progress report, which keeps clients from timing out


def build_server(kb: KnowledgeBase, first: FirstIndex | None = None) -> MCPServer:
    """An MCP server exposing ``search_docs`` and ``ask_docs`` over ``kb``; with ``first``,
    their calls wait for that index run."""
    server: MCPServer = MCPServer("kb-qa", instructions=INSTRUCTIONS, version=__version__)

    async def indexed(ctx: Context | None) -> None:
        """Wait for the first index run, telling a client that asked for progress how far
        it is (clients time a call out unless it reports progress: 60 s for some)."""
        if first is None:
            return
        while not await anyio.to_thread.run_sync(
            first.done.wait, PROGRESS_SECONDS, abandon_on_cancel=True
        ):
            if ctx is not None:
                done, total = first.progress
                await ctx.report_progress(
                    done, total or None, "Bringing the index up to date before the first answer"
                )
        if first.error:
            raise ToolError(first.error)

    @server.tool(description=SEARCH_DOCS, structured_output=False)
    async def search_docs(
        query: Annotated[str, Field(description="What to look for, in the user's words.")],
        k: Annotated[int, Field(description="How many sections to return, 1 to 100.")] = 8,
        include: Annotated[list[str] | None, Field(description=INCLUDE)] = None,
        exclude: Annotated[list[str] | None, Field(description=EXCLUDE)] = None,
        ctx: Context | None = None,
    ) -> str:
        try:
            query = inputs.question(query, kb.settings, "query")
            k = inputs.count(k)
            only = inputs.patterns(include, "include")
            skip = inputs.patterns(exclude, "exclude")
            await indexed(ctx)
            search = partial(kb.search, query, k, include=only, exclude=skip)
            hits = await anyio.to_thread.run_sync(search)
        except (inputs.InputError, KbQaError) as exc:
            raise ToolError(str(exc)) from None
        return json.dumps([_hit(kb, h) for h in hits], ensure_ascii=False, indent=1)

    @server.tool(description=ASK_DOCS, structured_output=False)
    async def ask_docs(
        question: Annotated[str, Field(description="The user's question, as they asked it.")],
        ctx: Context | None = None,
    ) -> str:
        from kb_qa.answer.answering import answer

        try:
            question = inputs.question(question, kb.settings)
        except inputs.InputError as exc:
            raise ToolError(str(exc)) from None
        await indexed(ctx)
        text = ""
        sources: list[dict[str, Any]] = []
        async for event in answer(kb, question):
            data = event.data()
            if event.name == "done":
                text = data["text"]
            elif event.name == "citations":
                sources = data["citations"]
            elif isinstance(event, Error):  # the client sees a failed call, not an answer
                # Over stdio the client is the operator's own editor: what to fix goes too
                # (a key echoed by the provider is blanked from it, errors.redacted).
                raise ToolError(f"{event.message} {event.detail}".strip())
        lines = [text.strip(), ""] if sources else [text.strip()]
        for c in sources:
            where = _file(kb, c["path"], c["line_start"])
            also = "" if where in c["url"] else f" ({where})"
            lines.append(f"[{c['number']}] {' > '.join(c['heading_path'])}: {c['url']}{also}")
        return "\n".join(lines)

    return server


def _file(kb: KnowledgeBase, path: str, line: int) -> str:
    """Where an editor opens a section: its file's absolute path and line."""
    return f"{kb.settings.vault / path}:{line}"


def _hit(kb: KnowledgeBase, hit: Any) -> dict[str, Any]:
    c = hit.chunk
    link = kb.url(c)
    if "://" not in link and not link.startswith("/"):  # a site without site_url: no URL
        link = _file(kb, c.path, c.line_start)
    return {
        "heading_path": list(c.heading_path),
        "link": link,
        "file": _file(kb, c.path, c.line_start),
        "path": c.path,
        "line_start": c.line_start,
        "line_end": c.line_end,
        "passage": c.text,
    }


def serve_stdio(kb: KnowledgeBase, first: FirstIndex | None = None) -> None:
    """Run the MCP server on stdin/stdout until the client leaves: it closes the stream,
    or it died and the next reply meets a broken pipe (which is no error of the server's)."""
    try:
        build_server(kb, first).run("stdio")
    except BaseException as exc:
        if not _client_gone(exc):
            raise


def _client_gone(exc: BaseException) -> bool:
    """Whether ``exc`` is, or groups nothing but, the client's end of the pipe closing."""
    if isinstance(exc, BrokenPipeError | ConnectionResetError):
        return True
    group: Sequence[BaseException] = getattr(exc, "exceptions", ())
    return bool(group) and all(_client_gone(e) for e in group)
