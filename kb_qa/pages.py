"""The small website ``kb-qa serve`` shows for a vault that is not a website itself.

``/`` lists the indexed pages with the chat widget; ``/view/<path>`` renders one indexed
Markdown file with the same heading ids the index uses, so a citation opens the section
and the widget highlights the passage. Raw HTML in the notes is shown as text, never run,
and only indexed paths can be viewed: nothing outside the vault is reachable.
"""

from __future__ import annotations

import html
from collections.abc import Sequence

from markdown_it import MarkdownIt

from kb_qa.types import Chunk

# html=False: raw HTML in a note is escaped, never interpreted.
_RENDERER = MarkdownIt("commonmark", {"html": False, "maxNesting": 100}).enable(
    ["table", "strikethrough"]
)
WIDGET = '<script src="/kb-qa/kb-qa.js" defer data-endpoint="" data-root="/view/"></script>'
_STYLE = """
body{font:16px/1.6 system-ui,sans-serif;max-width:48rem;margin:2rem auto;padding:0 1rem;
color:#1f2328;background:#fff}
@media (prefers-color-scheme:dark){body{color:#e6edf3;background:#0d1117}a{color:#58a6ff}}
pre{overflow:auto;padding:.75rem;background:rgba(127,127,127,.12);border-radius:6px}
code{font-size:.9em}table{border-collapse:collapse}td,th{border:1px solid #8886;padding:.3rem}
nav{font-size:.9rem;margin-bottom:1rem}
"""
# The pages run our widget and nothing else, even if a note smuggled markup through.
CSP = (
    "default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; "
    "img-src 'self' data:; object-src 'none'; base-uri 'none'; frame-ancestors 'self'"
)


def _page(title: str, body: str) -> str:
    return (
        '<!doctype html><html lang="en"><head><meta charset="utf-8">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        f"<title>{html.escape(title)}</title><style>{_STYLE}</style>"
        f'<link rel="stylesheet" href="/kb-qa/kb-qa.css">{WIDGET}</head>'
        f"<body>{body}</body></html>"
    )


def index_page(vault_name: str, pages: Sequence[dict[str, str]]) -> str:
    """``/``: the vault's pages and the chat widget."""
    items = "".join(
        f'<li><a href="/view/{html.escape(p["path"], quote=True)}">'
        f"{html.escape(p['title'] or p['path'])}</a> <small>{html.escape(p['path'])}</small></li>"
        for p in pages
    )
    body = (
        f"<h1>{html.escape(vault_name)}</h1><p>Ask a question with the button in the corner "
        f"(or Ctrl/⌘+K). {len(pages)} indexed pages:</p><ul>{items}</ul>"
    )
    return _page(vault_name, body)


def view_page(path: str, source: str, chunks: Sequence[Chunk]) -> str:
    """``/view/<path>``: one note rendered, its headings carrying the indexed anchors."""
    anchors = [c.anchor for c in chunks if c.piece == 0 and c.level > 0]
    tokens = _RENDERER.parse(source[_body_start(source, chunks) :])
    headings = [t for t in tokens if t.type == "heading_open"]
    # The chunker walked the same markdown-it headings in the same order.
    for token, anchor in zip(headings, anchors):
        if anchor:
            token.attrSet("id", anchor)
    title = chunks[0].heading_path[0] if chunks else path
    nav = f'<nav><a href="/">All pages</a> · {html.escape(path)}</nav>'
    return _page(title, nav + _RENDERER.renderer.render(tokens, _RENDERER.options, {}))


def _body_start(source: str, chunks: Sequence[Chunk]) -> int:
    """Skip front matter: the chunks never start before the body."""
    if source.startswith("---") and chunks:
        return min(c.start for c in chunks)
    return 0
