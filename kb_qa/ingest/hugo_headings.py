"""A Hugo page's heading ids, as its Markdown renderer goldmark writes them: the id its
attributes give (``{#verify}``, ``{id="verify"}``), else the id of its text by
``autoHeadingIDType``, the text read as goldmark reads it (``heading_text``): a code
span's ``Vec<T>`` kept, escapes and named entities read, an image as its alt text, and
with the typographer (on unless ``markup.goldmark.extensions.typographer`` is off) ``--``
an en dash, which no id keeps.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Sequence

from kb_qa.ingest.heading_text import Rules, shown
from kb_qa.types import Heading

# "## Verify {#verify}", "## Verify {#verify .wide}", "## Verify {.wide}", "## Verify
# {id="verify"}": goldmark's attribute list, which is not part of the heading's text; its
# #id (or id=) is the heading's id
_ATTRIBUTES = re.compile(
    r"\s*\{((?:\s*(?:#[^\s{}]+|\.[^\s{}]+|[\w-]+=(?:\"[^\"]*\"|'[^']*'|[^\s{}]+)))+)\s*\}\s*$"
)
_ID = re.compile(r"""#([^\s{}]+)|(?<![\w-])id=(?:"([^"]*)"|'([^']*)'|([^\s{}]+))""")


def headings(
    raw: Sequence[tuple[int, str]], id_type: str = "github", typographer: bool = True
) -> list[Heading]:
    """Each source heading (level, Markdown text) with its text as shown and the id Hugo's
    goldmark gives it: its ``{#id}`` attribute, else its text's id of ``id_type``, numbered
    -1, -2 when already on the page ("heading" for one with no letters)."""
    smart = "goldmark" if typographer else ""
    shows, reads = Rules(smart=smart), Rules(smart=smart, entities="named", image_alt=True)
    seen: set[str] = set()
    given = [_ATTRIBUTES.search(source) for _, source in raw]
    for attributes in given:  # goldmark reserves every explicit id before it makes one
        if attributes and (explicit := _explicit_id(attributes.group(1))):
            seen.add(explicit)
    found = []
    for (level, source), attributes in zip(raw, given):
        source = source[: attributes.start()] if attributes else source
        anchor = _explicit_id(attributes.group(1)) if attributes else ""
        if not anchor:
            # goldmark's id reads an image's alt text and keeps "&#169;" as written, where
            # the page shows no alt text and a "©"
            anchor = base = auto_id(shown(source, reads), id_type) or "heading"
            number = 0
            while anchor in seen:
                number += 1
                anchor = f"{base}-{number}"
            seen.add(anchor)
        found.append(Heading(level=level, text=shown(source, shows), anchor=anchor))
    return found


def _explicit_id(attributes: str) -> str:
    """The last id the attributes give, ``#x`` or ``id="x"``."""
    ids = [next(g for g in m.groups() if g is not None) for m in _ID.finditer(attributes)]
    return ids[-1] if ids else ""


def auto_id(text: str, id_type: str = "github") -> str:
    """goldmark's id of a heading's text in Hugo (markup/goldmark/autoid.go): github keeps
    letters, digits and ``_`` lowercased and makes each space or ``-`` a ``-``;
    github-ascii first drops accents and then anything not ASCII; blackfriday joins runs of
    letters and digits with one ``-``."""
    if id_type == "blackfriday":
        words = re.split(r"[^\w]|_", text.lower())
        return "-".join(w for w in words if w)
    if id_type == "github-ascii":
        text = unicodedata.normalize("NFD", text)
        text = "".join(c for c in text if unicodedata.category(c) != "Mn" and c.isascii())
    kept = []
    for ch in text:
        if ch in "- \t":
            kept.append("-")
        elif ch == "_" or unicodedata.category(ch)[0] == "L" or unicodedata.category(ch) == "Nd":
            kept.append(ch.lower())
    return "".join(kept)
