"""Serve: the stages out to readers, over HTTP, SSE and MCP.

Takes a ``KnowledgeBase`` (or a replica of one, ``replica``) and settings and gives the
Starlette app (``app``: CORS, error mapping; the routes by area in ``routes_ask``,
``routes_index``, ``routes_owners`` and ``routes_pages``; what they read and write in
``protocol``), its request guards (``guard``: rate limit, bearer token), the admin sign-in
to ``/insights`` (``admin``), the small website for a vault that is not a site (``pages``),
the rules every entry point applies to a question (``inputs``), the MCP server
(``mcp_server``) and the API in a background thread for ``mkdocs serve`` and tests
(``serving``).

Imports the shared top-level modules and every stage below: ingest, index, kb, answer,
owners.
"""
