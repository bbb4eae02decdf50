"""``kb-qa mcp``: the index as Model Context Protocol tools over stdio.

AI editors and assistants get the same grounded search and answers as the widget:
``search_docs`` returns sections with their heading path, link and passage, and
``ask_docs`` returns a cited answer. stdout belongs to the protocol, so everything
else (logs, index progress) goes to stderr.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from functools import partial
from typing import Annotated, Any

import anyio.to_thread
from mcp.server import MCPServer
from mcp.server.mcpserver import Context
from mcp.server.mcpserver.exceptions import ToolError
from mcp.types import ToolAnnotations
from pydantic import JsonValue, WithJsonSchema

from kb_qa import __version__
from kb_qa.answer.events import Error
from kb_qa.errors import KbQaError
from kb_qa.kb.knowledge_base import KnowledgeBase
from kb_qa.serve import inputs
from kb_qa.serve.first_index import FirstIndex
from kb_qa.types import Hit

INSTRUCTIONS = (
    "Search and answer questions from the user's Markdown knowledge base. Prefer search_docs "
    "to find sections and quote them; use ask_docs for a complete answer with citations. "
    "Cite the returned links when you use a passage."
)

PASSAGE_CHARS = 4_000  # one passage at most: a section can hold a whole pasted log
RESULT_CHARS = 48_000  # one search_docs reply at most: clients refuse or cut bigger ones

SEARCH_DOCS = (
    "Find the heading sections of the knowledge base that best match a query, best first. "
    "Returns JSON: a list of {heading_path, link, file, path, line_start, line_end, passage, "
    "truncated}; file is the section's file and line on this machine, link its page on the "
    f"site, path what include and exclude match. A passage is cut at {PASSAGE_CHARS:,} "
    f"characters, and the later ones when the reply reaches {RESULT_CHARS:,} (truncated: "
    "true): the whole section is lines line_start to line_end of its file."
)
ASK_DOCS = (
    "Answer a question from the knowledge base; every claim cites a numbered source. Returns "
    "the answer followed by its numbered sources (heading path, link and file)."
)
K = f"How many sections to return, 1 to {inputs.MAX_K}."
# The camelCase names are the fields' aliases, which mypy (without pydantic's plugin) does
# not know.
READ_ONLY = ToolAnnotations(readOnlyHint=True, destructiveHint=False, idempotentHint=True)  # type: ignore[call-arg]
INCLUDE = "Only pages matching these vault paths or globs (docs_dir included: docs/guides/*)."
EXCLUDE = "Leave out pages matching these vault paths or globs."
# The schema a model reads, while any JSON value is taken and checked by inputs, which says
# what is wrong in the HTTP API's words (pydantic's own errors read "1 validation error for
# search_docsArguments … type=int_from_float" with a link).
Count = Annotated[
    JsonValue,
    WithJsonSchema({"type": "integer", "minimum": 1, "maximum": inputs.MAX_K, "description": K}),
]
_LIST: dict[str, JsonValue] = {"type": "array", "items": {"type": "string"}}
_PATHS: dict[str, JsonValue] = {"anyOf": [_LIST, {"type": "null"}]}
Include = Annotated[JsonValue, WithJsonSchema({**_PATHS, "description": INCLUDE})]
Exclude = Annotated[JsonValue, WithJsonSchema({**_PATHS, "description": EXCLUDE})]
Query = Annotated[
    JsonValue,
    WithJsonSchema({"type": "string", "description": "What to look for, in the user's words."}),
]
Question = Annotated[
    JsonValue,
    WithJsonSchema({"type": "string", "description": "The user's question, as they asked it."}),
]


PROGRESS_SECONDS = 2.0  # a waiting call's progress report, which keeps clients from timing out


def build_server(kb: KnowledgeBase, first: FirstIndex | None = None) -> MCPServer:
    """An MCP server exposing ``search_docs`` and ``ask_docs`` over ``kb``; with ``first``,
    their calls wait for that index run."""
    server: MCPServer = MCPServer("kb-qa", instructions=INSTRUCTIONS, version=__version__)

    async def indexed(ctx: Context | None) -> None:
        """Wait for the first index run when the index held no page before it, telling a
        client that asked for progress how far it is (clients time a call out unless it
        reports progress: 60 s for some). An index that held pages is searched meanwhile."""
        if first is None:
            return
        while not first.had_pages and not await anyio.to_thread.run_sync(
            first.done.wait, PROGRESS_SECONDS, abandon_on_cancel=True
        ):
            if ctx is not None:
                done, total = first.progress
                await ctx.report_progress(
                    done, total or None, "Building the index before the first answer"
                )
        if said := first.unanswerable():  # the run failed, and there is no index to search
            raise ToolError(said)

    @server.tool(
        title="Search the docs", description=SEARCH_DOCS, annotations=READ_ONLY,
        structured_output=False,
    )  # fmt: skip
    async def search_docs(
        query: Query,
        k: Count = kb.settings.top_k,
        include: Include = None,
        exclude: Exclude = None,
        ctx: Context | None = None,
    ) -> str:
        try:
            query = inputs.question(query, kb.settings, "query")
            k = inputs.count(inputs.whole(k, "k"))
            only = inputs.patterns(include, "include")
            skip = inputs.patterns(exclude, "exclude")
            await indexed(ctx)
            search = partial(kb.search, query, k, include=only, exclude=skip)
            hits = await anyio.to_thread.run_sync(search)
        except (inputs.InputError, KbQaError) as exc:
            raise ToolError(str(exc)) from None
        if not hits:
            await matching(only, skip)
        return json.dumps(_fitted([_hit(kb, h) for h in hits]), ensure_ascii=False, indent=1)

    async def matching(only: Sequence[str], skip: Sequence[str]) -> None:
        """Fail the call when a path filter leaves no page, saying how paths are written
        (an assistant that left out docs_dir got nothing and said the docs are silent)."""
        try:
            await anyio.to_thread.run_sync(inputs.check_filters, kb, only, skip)
        except inputs.InputError as exc:
            raise ToolError(str(exc)) from None

    @server.tool(
        title="Ask the docs", description=ASK_DOCS, annotations=READ_ONLY,
        structured_output=False,
    )  # fmt: skip
    async def ask_docs(
        question: Question,
        include: Include = None,
        exclude: Exclude = None,
        ctx: Context | None = None,
    ) -> str:
        from kb_qa.answer.answering import answer

        try:
            question = inputs.question(question, kb.settings)
            only = inputs.patterns(include, "include")
            skip = inputs.patterns(exclude, "exclude")
        except inputs.InputError as exc:
            raise ToolError(str(exc)) from None
        await indexed(ctx)
        await matching(only, skip)
        text = ""
        sources: list[dict[str, Any]] = []
        async for event in answer(kb, question, include=only, exclude=skip):
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
            if c["url"].startswith(f"{kb.settings.vault / c['path']}:"):  # a notes vault's
                link = where  # its file, at the passage's line rather than the section's
            else:
                link = c["url"] if where in c["url"] else f"{c['url']} ({where})"
            lines.append(f"[{c['number']}] {' > '.join(c['heading_path'])}: {link}")
        return "\n".join(lines)

    return server


def _file(kb: KnowledgeBase, path: str, line: int) -> str:
    """Where an editor opens a section: its file's absolute path and line."""
    return f"{kb.settings.vault / path}:{line}"


def _hit(kb: KnowledgeBase, hit: Hit) -> dict[str, Any]:
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
        "truncated": False,
    }


def _fitted(hits: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """``hits`` with each passage cut to :data:`PASSAGE_CHARS` and the reply to about
    :data:`RESULT_CHARS`, best hit first: a later hit keeps its heading path, link, file
    and lines, with less passage or none."""
    room = RESULT_CHARS - len(json.dumps([{**h, "passage": ""} for h in hits], indent=1))
    for h in hits:
        text = h["passage"]
        allowed = max(0, min(PASSAGE_CHARS, room))
        cut = _cut(text, allowed)
        while (excess := _chars(cut) - allowed) > 0:  # escapes (\n, \") count too
            cut = _cut(cut, len(cut) - excess)
        h["passage"], h["truncated"] = cut, cut != text
        room -= _chars(cut)
    return hits


def _cut(text: str, limit: int) -> str:
    """``text`` within ``limit`` characters, at a line's end when one is in its second half."""
    if len(text) <= limit:
        return text
    end = text.rfind("\n", 0, limit + 1)
    return text[: end if end > limit // 2 else limit].rstrip()


def _chars(text: str) -> int:
    """What ``text`` adds to the JSON reply, quotes and escapes included, minus the quotes."""
    return len(json.dumps(text, ensure_ascii=False)) - 2


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
