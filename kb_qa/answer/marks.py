"""Inline markup an answer shows as the page does: pymdown-extensions' keys, icons, critic
marks and footnote markers, GitHub's emoji shortcodes, HTML entities, inlinehilite's
language prefix, inline HTML; the HTML blocks a page shows as text (``<pre>``, ``<table>``,
``<details>``); and the lines it shows nowhere (``unshown``).

A technical writer's Material site showed ``++ctrl+c++``, ``:material-check:``,
``{--dims--}{++turns off++}``, ``[^hum]`` and ``&plusmn;0.5&nbsp;&deg;C`` in the chat where
its pages show "Ctrl+C", an icon, "turns off", a footnote number and "±0.5 °C"; copier's
docs write a file name as `` `#!jinja {{ answers_file }}.jinja` ``, which the page shows
without ``#!jinja``, and its questionnaire example as a ``<pre>`` block, which no answer
quoted (nor a README's ``<table>`` or ``<details>`` written as HTML). Every pattern is
bounded (a page of unclosed marks costs no answer seconds).
"""

from __future__ import annotations

import html
import re

from kb_qa.ingest.heading_text import ENTITY

# pymdownx.keys: "++ctrl+alt+del++" shows as "Ctrl+Alt+Del"; its names for common keys
_KEYS = re.compile(r"\+\+([\w-]{1,40}(?:\+[\w-]{1,40}){0,8})\+\+")
_KEY_NAMES = {
    "ctrl": "Ctrl", "control": "Ctrl", "alt": "Alt", "shift": "Shift", "cmd": "Cmd",
    "command": "Cmd", "meta": "Meta", "option": "Option", "enter": "Enter", "return": "Return",
    "esc": "Esc", "escape": "Esc", "tab": "Tab", "space": "Space", "backspace": "Backspace",
    "delete": "Del", "del": "Del", "windows": "Win", "win": "Win", "super": "Super",
    "up": "Up", "down": "Down", "left": "Left", "right": "Right", "page-up": "Page Up",
    "page-down": "Page Down", "home": "Home", "end": "End", "insert": "Ins", "ins": "Ins",
}  # fmt: skip
# Material's icon shortcodes (":material-check:", ":fontawesome-brands-github:"): an icon
_ICON = re.compile(r"[ \t]?:(?:material|fontawesome|octicons|simple)-[\w-]{1,80}:")
_EMOJI = re.compile(r":[a-z0-9_+-]{1,60}:")  # GitHub's emoji shortcodes (":rocket:")
# CriticMarkup, with its changes accepted: an insertion's text, a substitution's new text;
# a deletion and a comment are no text of the page's meaning
_CRITIC = re.compile(
    r"\{\+\+(.{0,500}?)\+\+\}|\{==(.{0,500}?)==\}|\{~~.{0,500}?~>(.{0,500}?)~~\}"
    r"|\{--.{0,500}?--\}|\{>>.{0,500}?<<\}",
    re.S,
)
_FOOTNOTE_REF = re.compile(r"\[\^[^\]\s]{1,100}\](?!:)")
# A line that includes a file: pymdownx.snippets' ``--8<-- "a.md"``, mdx_include's
# ``{* ../a.py hl[7] *}`` and ``{!> ../b.py!}``, markdown-include's ``{!abbreviations.md!}``.
# The page shows the file's text there, which a page read from its source does not hold.
_INCLUDES = r"-{1,}8<-{1,}[^\n]*|\{\*[^\n]*\*\}|\{!>?[^\n]*!\}"
INCLUDE_LINE = rf"[ \t]*(?:{_INCLUDES})[ \t]*"
# Lines no page shows where they stand, so no passage quotes them: an abbreviation's
# definition ("*[API]: Application Programming Interface", only a tooltip on the word), an
# include, and the footnotes extension's place marker, where the footnotes are listed.
# Pi-hole ends its API pages with "{!abbreviations.md!}" (a file of definitions only): the
# paragraph before it was quoted with that line, and one followed by "*[API]: …" without a
# blank line with the definition.
_UNSHOWN = re.compile(
    rf"[ \t]*(?:\*\[[^\]\n]{{1,200}}\]:[^\n]{{0,1000}}|///Footnotes Go Here///|{_INCLUDES})[ \t]*"
)
# pymdownx.inlinehilite's language prefix: `#!python print(x)` shows as `print(x)`
_INLINE_LANG = re.compile(r"(`+)#![\w+-]{1,40}[ \t]+(.*)\1", re.S)
_PRE = re.compile(r"[ \t]{0,3}<pre\b[^>]{0,500}>", re.I)
_TAG = re.compile(r"</?[A-Za-z][^<>]{0,1000}>")
# An HTML tag, not an autolink: "<https://paperless.example.com>" is a link the page shows
# (and the widget too), "<help@example.com>" an address shown as its words; nor text whose
# ">" is escaped: Mealie's table shows "Login with <OIDC_PROVIDER_NAME\>" as written.
HTML_TAG = re.compile(r"<(?![A-Za-z][A-Za-z0-9+.-]{1,31}:[^\s<>]*>)/?[A-Za-z][^<>]{0,1000}(?<!\\)>")
# A line break: Mealie's settings tables hold "OIDC_CLIENT_SECRET <br/> :octicons-tag-24:
# v2.0.0" (the name, and under it the version that added it); a quoted row showed the raw
# "<br/>", and a paragraph's "secret<br>in" read "secretin". A row is one line: a space.
_BREAK = re.compile(r"<br[ \t]{0,20}/?>", re.I)
_SHOWN_HTML = re.compile(r"[ \t]{0,3}<(?:table|details)\b", re.I)
_MAX_HTML = 20_000  # a longer HTML block is left out, as a long code block is


def prose(text: str) -> str:
    """``text`` (prose, its code held out) with the marks above read as the page shows
    them; entities last, so that an escaped ``&lt;b&gt;`` reads as the text "<b>"."""
    if "++" in text:
        text = _KEYS.sub(_keys, text)
    if ":" in text:
        text = _EMOJI.sub(_emoji, _ICON.sub("", text))
    if "{" in text:
        text = _CRITIC.sub(lambda m: m.group(1) or m.group(2) or m.group(3) or "", text)
    if "[^" in text:
        text = _FOOTNOTE_REF.sub("", text)  # a definition keeps its label (units.FOOTNOTE)
    return ENTITY.sub(_entity, text) if "&" in text else text


def _entity(m: re.Match[str]) -> str:
    shown = html.unescape(m[0])
    # A "|" written as an entity is text in a table's cell: decoded, it would end the cell
    return m[0] if shown == "|" else shown.replace("\xa0", " ")


def emoji(text: str) -> str:
    """``text`` with GitHub's emoji shortcodes as their emoji (``_emoji``)."""
    return _EMOJI.sub(_emoji, text) if ":" in text else text


def _emoji(m: re.Match[str]) -> str:
    """A GitHub emoji shortcode (":rocket:") as the emoji GitHub and Material show; any
    other colon-wrapped word (a time's ":30:") as written."""
    from pymdownx import gemoji_db  # here: pymdown-extensions' table, read once it is needed

    found = gemoji_db.emoji.get(m[0])
    return "".join(chr(int(c, 16)) for c in found["unicode"].split("-")) if found else m[0]


def _keys(m: re.Match[str]) -> str:
    names = (_KEY_NAMES.get(k.lower(), k.upper() if len(k) == 1 else k) for k in m[1].split("+"))
    return "+".join(names)


def code(span: str) -> str:
    """A code span as the page shows it: without inlinehilite's ``#!lang`` prefix."""
    if span.startswith("`") and "#!" in span[:4] and (m := _INLINE_LANG.fullmatch(span)):
        return f"{m[1]}{m[2]}{m[1]}"
    return span


def without_tags(text: str) -> str:
    """Prose (its code held out) or a table's row with its inline HTML as the page shows it:
    a tag's text without the tag (``<kbd>Ctrl</kbd>`` as "Ctrl"), a line break as a space."""
    if "<" not in text:
        return text
    return HTML_TAG.sub("", _BREAK.sub(" ", text))


def unshown(line: str) -> bool:
    """Whether a line of a page's source shows nowhere on the page as written (``_UNSHOWN``)."""
    return bool(_UNSHOWN.fullmatch(line))


def html_block(raw: str) -> tuple[str, str] | None:
    """An HTML block an answer may quote, as (kind, Markdown) of what it shows: a ``<pre>``
    block as a fenced code block (its tags removed, its entities read); a ``<table>`` or a
    ``<details>`` block as Markdown (a README's collapsible FAQ entry written without blank
    lines is one HTML block: "What does error E1042 mean?" quoted the entry after it, and a
    table of minimum versions was never quoted). None for any other HTML (layout, images)."""
    if _PRE.match(raw):
        shown = html.unescape(_TAG.sub("", raw)).strip("\n")
        fence = "~~~" if "```" in shown else "```"
        return ("code", f"{fence}\n{shown}\n{fence}") if shown.strip() else None
    if not _SHOWN_HTML.match(raw) or len(raw) > _MAX_HTML:
        return None
    # As a page read from its HTML reads (a summary as its title's lead-in); imported here:
    # most sections hold no such block, and the renderer's modules cost an answer's start
    from kb_qa.ingest.rendered_chunks import html_to_markdown

    shown = html_to_markdown(raw).strip()
    return ("prose", shown) if shown else None
