"""The small website ``kb-qa serve`` shows for a vault that is not a website itself.

``/`` lists the indexed pages with the chat widget; ``/view/<path>`` renders one indexed
Markdown file with the same heading ids the index uses, so a citation opens the section
and the widget highlights the passage. Raw HTML in the notes is shown as text, never run,
and only indexed paths can be viewed: nothing outside the vault is reachable.
"""

from __future__ import annotations

import html
import re
from collections.abc import Callable, Mapping, Sequence
from urllib.parse import quote, unquote

from markdown.extensions.toc import slugify
from markdown_it import MarkdownIt
from markdown_it.token import Token
from mdit_py_plugins.dollarmath import dollarmath_plugin
from mdit_py_plugins.tasklists import tasklists_plugin

from kb_qa.answer import marks
from kb_qa.ingest import docusaurus
from kb_qa.ingest.deadline import ParseTimeout, deadline
from kb_qa.ingest.linkgraph import Resolver
from kb_qa.text import (
    BLOCK_REF,
    HIGHLIGHT,
    PROPERTY_LINE,
    WIKILINK,
    is_properties,
    wikilink_label,
    without_block_ids,
)
from kb_qa.types import Chunk
from kb_qa.wiring.tags import widget_tags


def _math(_renderer: object, tokens: Sequence[Token], idx: int, *_: object) -> str:
    """A formula as its source shows it: its delimiters and every character, escaped."""
    token = tokens[idx]
    tag = "div" if token.type == "math_block" else "span"
    return f'<{tag} class="math">{html.escape(token.markup + token.content + token.markup)}</{tag}>'


# html=False: raw HTML in a note is escaped, never interpreted. "- [ ] task" items show
# as checkboxes (disabled: the view does not edit the note), as Obsidian shows them. Math
# ($...$, $$...$$, as Obsidian delimits it) is shown as written, delimiters included: no
# emphasis eating its "*" or "_", no escape eating its "\,"; the page highlights a
# quoted formula as the answer quotes it.
_RENDERER = (
    MarkdownIt("commonmark", {"html": False, "maxNesting": 100})
    .enable(["table", "strikethrough"])
    .use(tasklists_plugin)
    .use(dollarmath_plugin, allow_labels=False, allow_space=False, allow_digits=False)
    .use(lambda md: md.add_render_rule("math_inline", _math))
    .use(lambda md: md.add_render_rule("math_inline_double", _math))
    .use(lambda md: md.add_render_rule("math_block", _math))
)
_STYLE = """
body{font:16px/1.6 system-ui,sans-serif;max-width:48rem;margin:2rem auto;padding:0 1rem;
overflow-wrap:break-word;
color:#1f2328;background:#fff}
@media (prefers-color-scheme:dark){body{color:#e6edf3;background:#0d1117}a{color:#58a6ff}}
pre{overflow:auto;padding:.75rem;background:rgba(127,127,127,.12);border-radius:6px}
code{font-size:.9em}table{border-collapse:collapse}td,th{border:1px solid #8886;padding:.3rem}
nav{font-size:.9rem;margin-bottom:1rem}
.callout{border-left:4px solid #4f46e5;background:rgba(79,70,229,.08);padding:.5rem 1rem;
margin:1rem 0;border-radius:4px}
.callout-warning,.callout-caution,.callout-danger{border-color:#d97706}
.contains-task-list{list-style:none;padding-left:1.25rem}.task-list-item input{margin-right:.4rem}
mark:not(.kb-qa-highlight){background:none;color:inherit;border-bottom:.18em solid #d4a72c}
h1,h2,h3,h4,h5,h6{unicode-bidi:plaintext;text-align:start}
div.math{white-space:pre-wrap;overflow:auto;margin:1rem 0}
.properties{font-size:.9em;padding:.4rem .75rem;background:rgba(127,127,127,.1);border-radius:6px}
"""
_CALLOUT = re.compile(r"^\[!([A-Za-z-]+)\][+-]?[ \t]*(.*)")
_OWN_DIRECTION = frozenset({"paragraph_open", "list_item_open", "th_open", "td_open"})
# The pages run our widget and nothing else, even if a note smuggled markup through.
CSP = (
    "default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; "
    "img-src 'self' data:; object-src 'none'; base-uri 'none'; frame-ancestors 'self'"
)


def notice_page(title: str, body: str) -> str:
    """A page of the vault's site that says something (a note not shown), without the chat."""
    return _page(title, body, chat=False)


def _page(title: str, body: str, chat: bool = True) -> str:
    # The widget this server serves, citing the notes under /view/: the tags every page kb-qa
    # writes has, its files' version included
    tags = {"endpoint": "", "root": "/view/"}
    widget = widget_tags("/kb-qa/kb-qa.css", "/kb-qa/kb-qa.js", tags) if chat else ""
    return (
        '<!doctype html><html lang="en"><head><meta charset="utf-8">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        '<link rel="icon" href="data:,">'  # no /favicon.ico request (a 404 in the console)
        f"<title>{html.escape(title)}</title><style>{_STYLE}</style>"
        f"{widget}</head>"
        f"<body>{body}</body></html>"
    )


def index_page(vault_name: str, pages: Sequence[dict[str, str]]) -> str:
    """``/``: the vault's pages and the chat widget."""
    items = "".join(
        f'<li><a href="/view/{html.escape(quote(p["path"]), quote=True)}" dir="auto">'
        f"{html.escape(p['title'] or p['path'])}</a> <small><bdi>{html.escape(p['path'])}</bdi>"
        "</small></li>"
        for p in pages
    )
    body = (
        f"<h1>{html.escape(vault_name)}</h1><p>Ask a question with the button in the corner "
        f"(or Ctrl/⌘+K). {len(pages)} indexed pages:</p><ul>{items}</ul>"
    )
    return _page(vault_name, body)


def view_page(
    path: str,
    source: str,
    chunks: Sequence[Chunk],
    links: Resolver,
    gone: Callable[[], bool] = lambda: False,
    parse_timeout: float = 0,
    refs: Mapping[str, tuple[str, str]] | None = None,
) -> str | None:
    """``/view/<path>``: one note rendered, its headings carrying the indexed anchors.

    A note that takes longer than ``parse_timeout`` CPU seconds to render (a hostile shape:
    160 KB of ``[`` took markdown-it's inline pass 11 s) is shown as plain text, saying so.
    """
    try:
        with deadline(parse_timeout, "rendering the note"):
            return _view_page(path, source, chunks, links, gone, refs or {})
    except ParseTimeout:
        notice = (
            f"<p><strong>This note took longer than {parse_timeout:g} s to render "
            "(parse_timeout), so it is shown as plain text.</strong></p>"
        )
        nav = f'<nav><a href="/">All pages</a> · {html.escape(path)}</nav>'
        return _page(path, nav + notice + f"<pre>{html.escape(source)}</pre>")


def _view_page(
    path: str,
    source: str,
    chunks: Sequence[Chunk],
    links: Resolver,
    gone: Callable[[], bool],
    refs: Mapping[str, tuple[str, str]],
) -> str | None:
    """:func:`view_page` without its time limit.

    ``links`` finds the note an Obsidian ``[[wikilink]]`` names, so it opens that note's
    view, and the anchor the index gave a ``[[note#heading]]``'s heading; ``refs`` maps a
    Logseq block's id to the link and text a ``((id))`` reference shows. Callouts render
    as callouts. ``gone()`` is asked between stages: when it says the reader has left, the
    render stops and returns None.
    """
    # Each heading's anchor by the file line it is on: the view's parser (raw HTML off, so
    # that it shows as text) sees headings inside an HTML block that the index's does not.
    anchors = {c.line_start: c.anchor for c in chunks if c.piece == 0 and c.level > 0}
    start = _body_start(source, chunks)
    first_line = source.count("\n", 0, start) + 1
    tokens = _RENDERER.parse(source[start:])
    if gone():
        return None
    _callouts(tokens)
    _properties(tokens)
    for n, token in enumerate(tokens):
        if n % 1000 == 0 and gone():
            return None
        if token.type == "inline" and token.children:
            token.children = _drawers(token.children)
            token.children = _highlights(_wikilinks(token.children, links, path))
            if refs:
                token.children = _block_refs(token.children, refs)
            for child in token.children:  # block ids ("^quorum-rule", "id:: …") are not shown
                if child.type == "text" and ("^" in child.content or "::" in child.content):
                    child.content = without_block_ids(child.content)
                elif child.type == "link_open":
                    href = note_link(str(child.attrGet("href") or ""), links, path)
                    if href is not None:
                        child.attrSet("href", href)
    github: dict[str, int] = {}  # GitHub's ids given so far on the page
    for n, token in enumerate(tokens):
        if token.type in _OWN_DIRECTION:  # a Hebrew or Arabic line reads right to left
            token.attrSet("dir", "auto")
        if token.type == "heading_open" and token.map is not None:
            anchor = anchors.get(first_line + token.map[0])
            if anchor:
                token.attrSet("id", anchor)
            _github_id(tokens[n + 1], anchor or "", github)
    title = chunks[0].heading_path[0] if chunks else path
    nav = f'<nav><a href="/">All pages</a> · {html.escape(path)}</nav>'
    if gone():
        return None
    return _page(title, nav + _RENDERER.renderer.render(tokens, _RENDERER.options, {}))


def _github_id(inline: Token, anchor: str, seen: dict[str, int]) -> None:
    """Give a heading GitHub's id too when it differs from the index's: a README written for
    GitHub links ``#naming-rules-1`` and ``#contributing-``, which its view named
    ``naming-rules_1`` and ``contributing-heart`` (the docs' own links went nowhere)."""
    github = docusaurus.unique_slug(marks.emoji(docusaurus.plain(inline.content)), seen)
    if github and github != anchor and inline.children is not None:
        target = Token("html_inline", "", 0)
        target.content = f'<a id="{html.escape(github, quote=True)}" aria-hidden="true"></a>'
        inline.children.insert(0, target)


def _wikilinks(children: list[Token], links: Resolver, here: str) -> list[Token]:
    """Text tokens holding ``[[note#heading|label]]`` become links to that note's view,
    labelled as Obsidian shows them: the alias, else the target as written (``Garden Plan >
    Garlic``, ``projects/Home Server``)."""

    def link(m: re.Match[str]) -> list[Token]:
        embed = m.group(0).startswith("!")
        target, heading, alias = m.groups()
        shown = wikilink_label(m)
        found = links.note(here, target or "")
        if found is None and heading and not heading.startswith("^"):
            # "[[C# tips]]" of a note "C# tips.md" (Obsidian refuses "#" in names; files
            # made elsewhere have it): no note "C", so the whole name, as its text shows
            found = links.note(here, f"{target}#{heading}")
            if found is not None:
                heading, shown = None, shown if alias else f"{target}#{heading}"
        if embed or found is None:  # embeds are never followed; unknown notes stay text
            return [_text(shown)]
        block = bool(heading and heading.strip().startswith("^"))
        anchor = links.heading(found, heading) if heading else None
        # A block's link opens the section holding it (or the note's top).
        fragment = anchor or (slugify(heading, "-") if heading and not block else "")
        href = "/view/" + quote(found) + (f"#{fragment}" if fragment else "")
        opened = Token("link_open", "a", 1, attrs={"href": href})
        return [opened, _text(shown), Token("link_close", "a", -1)]

    return _replaced(children, WIKILINK, "[[", link)


def note_link(href: str, links: Resolver, here: str) -> str | None:
    """Where a Markdown link between notes leads in ``/view`` (None: leave it as written).

    The browser resolved it alone: "<../50% done?.md>" read "?.md" as a query (a 404) and
    "#Setup" or "#🚀-launch" named no id (they are "setup" and "launch"). The note is found
    relative to ``here`` as written, else by name as Obsidian finds it; the fragment is
    kept when it is an anchor of that note, else read as a heading's text."""
    if not href.strip("#") or _SCHEME.match(href) or href.startswith(("/", "//")):
        return None
    raw_page, hashed, raw_fragment = href.partition("#")
    page, fragment = unquote(raw_page), unquote(raw_fragment)
    found = here if not page else None
    if page.lower().endswith(".md"):
        found = links.beside(here, page) or links.note(here, page[:-3])
    if found is None:
        return None
    anchor = fragment
    if fragment and (found, fragment) not in links.sections:
        anchor = links.heading(found, fragment) or fragment
    return "/view/" + quote(found) + (f"#{quote(anchor)}" if hashed and anchor else "")


_SCHEME = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*:")


def _block_refs(children: list[Token], refs: Mapping[str, tuple[str, str]]) -> list[Token]:
    """Logseq's ``((block id))`` as Logseq shows it, the text of that block, linked to the
    section holding it (an id no indexed block has stays as written)."""

    def link(m: re.Match[str]) -> list[Token]:
        found = refs.get(m.group(1).lower())
        if found is None:
            return [_text(m.group(0))]
        opened = Token("link_open", "a", 1, attrs={"href": found[0]})
        return [opened, _text(found[1]), Token("link_close", "a", -1)]

    return _replaced(children, BLOCK_REF, "((", link)


_DRAWER_OPEN = re.compile(r":(?:LOGBOOK|PROPERTIES):")
DRAWER_LINES = 100  # as text.DRAWER: a drawer never closed within them is shown as written


def _drawers(children: list[Token]) -> list[Token]:
    """``children`` without Logseq's drawers (":LOGBOOK:", its "CLOCK: [...]" lines,
    ":END:"), each a line of a block's paragraph: Logseq hides them, and the kettle's line
    showed under the task's clock lines."""
    out: list[Token] = []
    i = 0
    while i < len(children):
        child = children[i]
        if child.type == "text" and _DRAWER_OPEN.fullmatch(child.content.strip()):
            ends = range(i + 1, min(len(children), i + 2 * DRAWER_LINES))
            end = next((j for j in ends if children[j].content.strip() == ":END:"), None)
            if end is not None:
                if out and out[-1].type == "softbreak":
                    out.pop()
                i = end + 1
                if not out and i < len(children) and children[i].type == "softbreak":
                    i += 1  # a drawer opening the paragraph: the break after it goes too
                continue
        out.append(child)
        i += 1
    return out


def _highlights(children: list[Token]) -> list[Token]:
    """Text tokens holding Obsidian's ``==highlight==`` show it marked, without the ``==``."""

    def marked(m: re.Match[str]) -> list[Token]:
        return [Token("mark_open", "mark", 1), _text(m.group(1)), Token("mark_close", "mark", -1)]

    return _replaced(children, HIGHLIGHT, "==", marked)


def _replaced(
    children: list[Token],
    pattern: re.Pattern[str],
    marker: str,
    tokens_for: Callable[[re.Match[str]], list[Token]],
) -> list[Token]:
    """``children`` with each match of ``pattern`` in a text token (one holding ``marker``)
    replaced by ``tokens_for(match)``."""
    out: list[Token] = []
    for child in children:
        if child.type != "text" or marker not in child.content:
            out.append(child)
            continue
        last = 0
        for m in pattern.finditer(child.content):
            out.append(_text(child.content[last : m.start()]))
            out += tokens_for(m)
            last = m.end()
        out.append(_text(child.content[last:]))
    return [t for t in out if t.type != "text" or t.content]


def _text(content: str) -> Token:
    token = Token("text", "", 0)
    token.content = content
    return token


def _callouts(tokens: list[Token]) -> None:
    """``> [!tip] Title`` blockquotes become callout boxes headed by their title."""
    for i, token in enumerate(tokens[:-2]):
        inline = tokens[i + 2]
        if token.type != "blockquote_open" or tokens[i + 1].type != "paragraph_open":
            continue
        children = inline.children or []
        m = _CALLOUT.match(children[0].content) if children and children[0].type == "text" else None
        if inline.type != "inline" or m is None:
            continue
        kind, title = m.group(1).lower(), m.group(2).strip()
        close = next(
            t for t in tokens[i:] if t.type == "blockquote_close" and t.level == token.level
        )
        token.tag = close.tag = "div"
        token.attrSet("class", f"callout callout-{kind}")
        rest = (
            children[2:] if len(children) > 1 and children[1].type == "softbreak" else children[1:]
        )
        strong = [Token("strong_open", "strong", 1), _text(title or kind.title())]
        strong.append(Token("strong_close", "strong", -1))
        inline.children = strong + ([Token("hardbreak", "br", 0), *rest] if rest else [])


def _properties(tokens: list[Token]) -> None:
    """A paragraph of Logseq properties ("type:: project", "alias:: Golf, the car") as
    Logseq shows them: a small list of the page's metadata, a line each ("key: value"), not
    one run-on paragraph of "key:: value" pairs."""
    for i, token in enumerate(tokens[:-1]):
        inline = tokens[i + 1]
        if token.type != "paragraph_open" or not is_properties(inline.content):
            continue
        token.attrSet("class", "properties")
        children: list[Token] = []
        line_start = True
        for child in inline.children or []:
            m = PROPERTY_LINE.match(child.content) if line_start and child.type == "text" else None
            if m is not None:  # the key, in bold, and the value's text after it
                children += [Token("strong_open", "strong", 1), _text(m.group(1))]
                children += [Token("strong_close", "strong", -1), _text(": " + m.group(2).strip())]
            else:
                children.append(Token("hardbreak", "br", 0) if child.type == "softbreak" else child)
            line_start = child.type == "softbreak"
        inline.children = [t for t in children if t.type != "text" or t.content]


def _body_start(source: str, chunks: Sequence[Chunk]) -> int:
    """Skip front matter: the chunks never start before the body."""
    if source.startswith("---") and chunks:
        return min(c.start for c in chunks)
    return 0
