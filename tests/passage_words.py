"""The words a reader sees of a quoted Markdown passage once MkDocs (and Material) rendered it,
to compare with the words the page highlights (``tests/test_widget_passages.py``,
``bench/highlights.py``).

Written independently of the widget's own ``stripMarkdown`` (widget/src/passage.js), so that
a word the widget wrongly expects or drops shows as a difference here.
"""

from __future__ import annotations

import html
import re
from collections.abc import Callable

_WORD = re.compile(r"[^\W_]+")  # "_only_" and "model_dump" alike: underscores split words
_PREFIX = re.compile(r"^(?:[ \t]*>)*[ \t]*")  # indentation and blockquote markers
_FENCE = re.compile(r"^(`{3,}|~{3,})(.*)$")
_TITLE = re.compile(r"""title=["']([^"']*)["']""")
# Material's code annotations: "# (1)!" (the comment goes) or "# (1)" (a marker replaces it).
_ANNOTATION = re.compile(r"(?:#|//|--|;|%|<!--|/\*)\s*\(\d+\)!?\s*(?:-->|\*/)?")
_ADMONITION = re.compile(r"""^(?:!!!|\?\?\?\+?)\s*([\w-]+)?(?:[^"]*"([^"]*)")?""")
_TAB = re.compile(r'^===\+?\s*"([^"]*)"')
_DEFINITION = re.compile(r"^(?:\[[^\]^][^\]]*\]:\s|\*\[[^\]]+\]:|-{2,}8<-{2,})")
_FOOTNOTE = re.compile(r"^\[\^[^\]]+\]:\s?")
_LIST_ITEM = re.compile(r"^(?:[-*+]|\d{1,9}[.)])\s+(?:\[[ xX]\]\s+)?")
# Links and images first, over the whole line: a link's text may be a code span.
_LINKS = [
    (re.compile(r"<!--.*?-->", re.S), " "),
    (re.compile(r"!\[[^\]]*\](?:\([^)]*\)|\[[^\]]*\])"), " "),  # images show no text
    (re.compile(r"\[\^[^\]]+\]"), " "),  # footnote references
    (re.compile(r"\[([^\]]*)\](?:\((?:[^()]|\([^()]*\))*\)|\[[^\]]*\])"), r"\1"),  # links
]
# A reference whose label the page does not define (mkdocstrings' autorefs left out of a build)
# shows as written: "[`Any`][typing.Any]".
_UNRESOLVED = re.compile(r"\[([^\]]*)\]\[([^\]]*)\]")
_INLINE: list[tuple[re.Pattern[str], str | Callable[[re.Match[str]], str]]] = [
    (re.compile(r"<(?:https?|mailto):([^>\s]*)>"), r"\1"),
    (re.compile(r"</?[A-Za-z][^<>]*>"), " "),  # raw HTML tags render as elements
    (re.compile(r"\{\s*:?\s*[#.][^{}]*\}|\{\s*:[^{}]*\}"), " "),  # attribute lists
    (re.compile(r":[a-z][a-z0-9_+-]*:"), " "),  # emoji and icon shortcodes
    # An entity renders as its character ("&para;" is "¶", no word; "caf&eacute;" is "café")
    (
        re.compile(r"&(?:#\d{1,7}|#x[0-9a-fA-F]{1,6}|[A-Za-z][A-Za-z0-9]{1,31});"),
        lambda m: html.unescape(m.group()),
    ),
]


def words(text: str) -> list[str]:
    """The words of plain text (what the page marked), case-folded."""
    return _WORD.findall(text.casefold())


def _inline(line: str, references: bool = True) -> str:
    if not references:
        line = _UNRESOLVED.sub(r"\1 \2", line)
    for pattern, repl in _LINKS:
        line = pattern.sub(repl, line)
    # Code spans render as their text: keep them, read other markup only outside them.
    parts = re.split(r"(`+[^`]*`+)", line)
    for i in range(0, len(parts), 2):
        for pattern, shown in _INLINE:
            parts[i] = pattern.sub(shown, parts[i])
    return " ".join(parts)


def reader_words(markdown: str, references: bool = True) -> list[str]:
    """The words of ``markdown`` as the rendered page shows them: code as written (without
    its annotation markers, with its title), an admonition's title, a tab's label, link
    text; no link targets, images, definitions, attribute lists, HTML tags or comments.
    Without ``references``, a reference link ``[text][label]`` shows its label too."""
    shown: list[str] = []
    fence = ""
    for raw in markdown.splitlines():
        line = _PREFIX.sub("", raw, count=1)
        opener = _FENCE.match(line)
        if fence:
            if opener and opener.group(1)[0] == fence[0] and len(opener.group(1)) >= len(fence):
                if not opener.group(2).strip():
                    fence = ""
                    continue
            shown.append(_ANNOTATION.sub(" ", line))
        elif opener:
            fence = opener.group(1)
            title = _TITLE.search(opener.group(2))
            shown.append(title.group(1) if title else "")
        elif admonition := _ADMONITION.match(line):
            title = admonition.group(2)
            shown.append(title if title is not None else admonition.group(1) or "")
        elif tab := _TAB.match(line):
            shown.append(_inline(tab.group(1), references))
        elif not _DEFINITION.match(line):
            shown.append(_inline(_LIST_ITEM.sub("", _FOOTNOTE.sub("", line)), references))
    return words("\n".join(shown))
