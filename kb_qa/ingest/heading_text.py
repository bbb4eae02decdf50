"""A heading's Markdown as the text a site generator shows, and the text it makes the
heading's id from: code spans kept as written (``Vec<T>`` is no HTML tag), backslash
escapes and entities read, smart punctuation applied, then ``docusaurus.plain`` (links as
their words, no images, emphasis marks or HTML tags).

A verifier compared kb-qa's citations with real builds: ``## "Quoted" -- dashes`` is
``#quoted--dashes`` in Hugo and mdBook (their typographers make ``--`` an en dash before
the id is made; kb-qa cited ``#quoted----dashes``), and ``## Escaped \\*stars\\* and &amp;``
is ``#escaped-stars-and-`` (kb-qa kept the backslashes and "amp").
"""

from __future__ import annotations

import html
import re
from dataclasses import dataclass
from html.entities import html5

from kb_qa.ingest.docusaurus import plain

# A code span: its text is as written, CommonMark's one space at each end trimmed; "\`" is
# an escaped backtick, which opens none
_CODE = re.compile(r"(?<![`\\])(`+)(?!`)(.+?)(?<!`)\1(?!`)")
_ESCAPE = re.compile(r"\\([!-/:-@\[-`{-~])")  # CommonMark: any ASCII punctuation
# A character reference (answer.marks reads them in answers' prose too)
ENTITY = re.compile(r"&(#[0-9]{1,7}|#[xX][0-9a-fA-F]{1,6}|[A-Za-z][A-Za-z0-9]{1,31});")
_IMAGE = re.compile(r"!\[([^\]]*)\]\([^)]*\)")
# What was read as written (a code span, an escaped or decoded character) stands in the text
# as one private-use character while the rest is read, so "`*a*`" and "\*" are no emphasis
_KEPT = 0xF0000
_KEPT_CHAR = re.compile("[\U000f0000-\U000ffffd]")
_DASHES = re.compile(r"-{2,}")
_OPENS_AFTER = re.compile(r"[\s(\[{\u2013\u2014-]")


@dataclass(frozen=True)
class Rules:
    """How a generator reads a heading: ``smart`` its smart punctuation ("goldmark" for
    Hugo's typographer, "commonmark" for mdBook's pulldown-cmark, "" none); ``entities``
    which character references it decodes ("all", "named": goldmark's id keeps ``&#169;``
    as written, "none": VitePress' id keeps ``&amp;``); ``image_alt``, an image as its alt
    text (Hugo's ids) rather than nothing."""

    smart: str = ""
    entities: str = "all"
    image_alt: bool = False


def shown(source: str, rules: Rules = Rules()) -> str:
    """``source``, a heading's Markdown, as text by ``rules``."""
    kept: list[str] = []

    def keep(text: str) -> str:
        kept.append(text)
        return chr(_KEPT + len(kept) - 1)

    def code(match: re.Match[str]) -> str:
        text = match.group(2)
        if text.startswith(" ") and text.endswith(" ") and text.strip():
            text = text[1:-1]
        return keep(text)

    def entity(match: re.Match[str]) -> str:
        name = match.group(1)
        if name.startswith("#"):
            if rules.entities != "all":
                return match.group(0)
            return keep(html.unescape(match.group(0)))
        decoded = html5.get(name + ";")
        return keep(decoded) if decoded is not None and rules.entities != "none" else match.group(0)

    text = ENTITY.sub(entity, _ESCAPE.sub(lambda m: keep(m.group(1)), _CODE.sub(code, source)))
    if rules.smart:
        text = smart_punctuation(text, rules.smart)
    if rules.image_alt:
        text = _IMAGE.sub(r"\1", text)
    return _KEPT_CHAR.sub(lambda m: kept[ord(m.group(0)) - _KEPT], plain(text))


def smart_punctuation(text: str, style: str) -> str:
    """``--`` an en dash, ``---`` an em dash, ``...`` an ellipsis, straight quotes curly;
    a run of dashes as goldmark splits it (``---`` first: ``----`` is "—-") or as
    CommonMark's smart punctuation does (``----`` is "––"); goldmark's ``<<`` and ``>>``
    are angle quotes."""
    if style == "goldmark":
        text = text.replace("---", "\u2014").replace("--", "\u2013")
        text = text.replace("<<", "\u00ab").replace(">>", "\u00bb")
    else:
        text = _DASHES.sub(lambda m: _dash_run(len(m.group(0))), text)
    text = text.replace("...", "\u2026")
    out: list[str] = []
    for i, ch in enumerate(text):
        if ch in "\"'":
            opens = i == 0 or bool(_OPENS_AFTER.match(text[i - 1]))
            pair = "\u201c\u201d" if ch == '"' else "\u2018\u2019"
            ch = pair[0] if opens else pair[1]
        out.append(ch)
    return "".join(out)


def _dash_run(n: int) -> str:
    """CommonMark's smart dashes (commonmark.js, pulldown-cmark): all em dashes when ``n``
    is a multiple of 3, else all en dashes when it is even, else em dashes and one or two
    en dashes."""
    if n % 3 == 0:
        em, en = n // 3, 0
    elif n % 2 == 0:
        em, en = 0, n // 2
    elif n % 3 == 2:
        em, en = (n - 2) // 3, 1
    else:
        em, en = (n - 4) // 3, 2
    return "\u2014" * em + "\u2013" * en
