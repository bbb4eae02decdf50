"""Heading ids exactly as MkDocs renders them.

Slug rules differ per site (toc ``slugify``, ``separator``, ``attr_list`` ids, numbering of
duplicates, extensions that reshape heading text), so rather than re-implementing them we
render the page with Python-Markdown configured like the site and read the ids back, then
line them up with the headings markdown-it found in the source.
"""

from __future__ import annotations

import difflib
import html
import re
import unicodedata
from collections.abc import Sequence

import markdown

from kb_qa.ingest.deadline import ParseTimeout, deadline
from kb_qa.types import Heading

_HEADING_RE = re.compile(r"<h([1-6])(\s[^>]*)?>(.*?)</h\1>", re.DOTALL | re.IGNORECASE)
_ID_RE = re.compile(r'\sid="([^"]*)"')
# A tag ends before the next "<": with `<[^>]+>`, a heading of unclosed tags was read to
# its end from each of them (quadratic); rendered text writes a "<" as &lt;.
_TAG_RE = re.compile(r"<[^<>]+>")
# The permalink sign MkDocs' toc appends to a heading (`permalink: true`); read once, as
# _LABELS_RE below is (8,000 unclosed `<a a class="` in a heading took seconds).
_HEADERLINK_RE = re.compile(
    r'<a\b(?:[^<>"]|"[^<>"]*")*?\sclass="headerlink"[^<>]*>[^<]*(?:<(?!/?a\b)[^<]*)*</a>'
)
# mkdocstrings' object labels (``show_labels``, on by default), rendered inside the heading
# after the name: "Settings" read "Settings\n\n\n  \n      dataclass" on a Material site of
# mkdocstrings-python pages, and an answer's "See also:" line broke over four lines. They
# are badges beside the title, not its words (the section's text keeps them). Its
# symbol-type badge (``<code class="doc-symbol ...">``) is empty: CSS draws it.
# Each part stops at the next "<" (its tag cannot reach past it, its text past the next
# span) and its alternatives start with different characters, so a page is read once: with
# `[^>]*` and `.*?` instead, 8,000 unclosed `<span a class="` in a heading took 12 s to
# index, every `<span` reading on to the end of the heading.
_LABELS_RE = re.compile(
    r'<span\b(?:[^<>"]|"[^<>"]*")*?\sclass="[^<>"]*\bdoc-labels\b[^<>"]*"[^<>]*>'
    r"[^<]*(?:<(?!/?span\b)[^<]*)*</span>",
    re.IGNORECASE,
)
_SPACE_RE = re.compile(r"[ \t\n\r\f]+")
_ATTR_LIST_RE = re.compile(r"\s*\{:?\s*[#.][^}]*\}\s*$")
_IMAGE_RE = re.compile(r"!\[[^\]]*\](?:\([^)]*\)|\[[^\]]*\])?")
_LINK_RE = re.compile(r"\[([^\]]*)\](?:\([^)]*\)|\[[^\]]*\])")
_SHORTCODE_RE = re.compile(r":[a-z0-9_+-]+:")


def rendered_headings(md: markdown.Markdown, body: str) -> list[Heading]:
    """Render ``body`` and return its headings that have an id, in page order.

    Headings without an id are raw HTML in the source (``<h4>Example</h4>``): MkDocs leaves
    them alone, so they are no link target, and markdown-it does not see them as headings.
    """
    md.reset()
    return html_headings(md.convert(body))


def html_headings(out: str) -> list[Heading]:
    """The headings with an id in rendered HTML, in page order."""
    headings = []
    for match in _HEADING_RE.finditer(out):
        id_match = _ID_RE.search(match.group(2) or "")
        if not id_match:
            continue
        inner = _LABELS_RE.sub("", _HEADERLINK_RE.sub("", match.group(3)))
        # A heading's text as a reader reads its title: on one line, one space between words
        # (mkdocstrings indents its heading's parts on lines of their own). HTML's white
        # space only, as a browser collapses it: a non-breaking space stays.
        text = html.unescape(_SPACE_RE.sub(" ", _TAG_RE.sub("", inner))).strip()
        headings.append(
            Heading(level=int(match.group(1)), text=text, anchor=html.unescape(id_match.group(1)))
        )
    return headings


def match_text(text: str) -> str:
    """A loose key for comparing heading text across Markdown renderers."""
    text = unicodedata.normalize("NFKC", text).casefold()
    return "".join(ch for ch in text if ch.isalnum())


def source_key(raw: str, links: bool = False) -> str:
    """``match_text`` of a heading's Markdown source, with what renders to no text removed.

    Drops a trailing attribute list (``{ #id .class }``), HTML tags and emoji/icon shortcodes
    (``:smile:``, ``:material-check:``), decodes entities and, unless ``links``, keeps only
    the text of links and drops images (a reference that is not defined renders as written).
    """
    text = _ATTR_LIST_RE.sub("", raw)
    if not links:
        text = _IMAGE_RE.sub("", text)
        text = _LINK_RE.sub(r"\1", text)
    text = _TAG_RE.sub("", text)
    text = _SHORTCODE_RE.sub("", text)
    return match_text(html.unescape(text))


def assign(
    parsed: Sequence[tuple[int, str]], rendered: Sequence[Heading], md: markdown.Markdown
) -> list[Heading]:
    """Give each source heading (level, raw text) the rendered heading it corresponds to.

    The rendered page usually has more headings than markdown-it finds (headings inside
    admonitions, tabs, ``md_in_html`` blocks, snippets), sometimes fewer. The two lists are
    aligned as sequences of (level, text key); headings left over between two aligned runs
    are paired by similar text at the same level, then by position when the leftovers line
    up one to one. A source heading the renderer did not produce (rare) gets an id computed
    the way MkDocs would, kept unique on the page.
    """
    rendered = [h for h in rendered if h.anchor]
    keys = [(level, source_key(raw)) for level, raw in parsed]
    rkeys = [(h.level, match_text(h.text)) for h in rendered]
    pairs: dict[int, int] = {}
    matcher = difflib.SequenceMatcher(None, keys, rkeys, autojunk=False)
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag == "equal":
            pairs.update(zip(range(i1, i2), range(j1, j2), strict=True))
        elif tag == "replace":
            pairs.update(_pair_gap(parsed, rkeys, range(i1, i2), range(j1, j2)))

    used = {h.anchor for h in rendered}
    result: list[Heading] = []
    for i, (level, raw) in enumerate(parsed):
        if i in pairs:
            result.append(rendered[pairs[i]])
            continue
        anchor = _unique(_single_heading_id(md, level, raw), used)
        used.add(anchor)
        result.append(Heading(level=level, text=_plain(raw), anchor=anchor))
    return result


def _pair_gap(
    parsed: Sequence[tuple[int, str]],
    rkeys: Sequence[tuple[int, str]],
    gap: range,
    rgap: range,
) -> dict[int, int]:
    """Pair source and rendered headings between two aligned runs, keeping their order."""
    pairs: dict[int, int] = {}
    k = rgap.start
    for i in gap:
        level, raw = parsed[i]
        variants = {source_key(raw), source_key(raw, links=True), match_text(raw)}
        candidates = [r for r in range(k, rgap.stop) if rkeys[r][0] == level]
        found = next(
            (r for r in candidates if any(_similar(v, rkeys[r][1]) for v in variants)), None
        )
        if found is None:
            scored = [(_ratio(variants, rkeys[r][1]), -r) for r in candidates]
            best = max(scored, default=(0.0, 0))
            found = -best[1] if best[0] >= 0.75 else None
        if found is not None:
            pairs[i] = found
            k = found + 1
    if not pairs and len(gap) == len(rgap):
        # Same number on both sides and nothing alike: the text renders differently
        # (abbreviations, smart symbols, emoji); pair by position where levels agree.
        pairs = {i: r for i, r in zip(gap, rgap, strict=True) if parsed[i][0] == rkeys[r][0]}
    return pairs


def _similar(key: str, rkey: str) -> bool:
    if not key or not rkey:
        return key == rkey
    return key in rkey or rkey in key


def _ratio(variants: set[str], rkey: str) -> float:
    return max(difflib.SequenceMatcher(None, v, rkey, autojunk=False).ratio() for v in variants)


def _single_heading_id(md: markdown.Markdown, level: int, raw: str) -> str:
    headings = rendered_headings(md, "#" * level + " " + raw)
    return headings[0].anchor if headings else ""


def _unique(anchor: str, used: set[str]) -> str:
    if anchor not in used:
        return anchor
    n = 1
    while f"{anchor}_{n}" in used:
        n += 1
    return f"{anchor}_{n}"


def _plain(raw: str) -> str:
    return re.sub(r"\s*\{[^}]*\}\s*$", "", raw).strip()


def page_headings(
    md: markdown.Markdown,
    body: str,
    raw_headings: Sequence[tuple[int, int, str]],
    parse_timeout: float,
    warnings: list[str] | None,
) -> list[Heading]:
    """The page's headings as ``md`` renders the whole page, or its headings alone when the
    page is nested too deep for Python-Markdown, takes too long to render, or an extension
    fails on it (an include whose file is missing: FastAPI's pages all were left out)."""
    try:
        with deadline(parse_timeout, "rendering the page for its heading ids"):
            return rendered_headings(md, body)
    except RecursionError:
        # Nested too deep for Python-Markdown (MkDocs cannot render this page either).
        pass
    except ParseTimeout as exc:
        if warnings is not None:
            warnings.append(f"{exc}; heading ids were computed from the headings alone")
    except Exception:  # noqa: BLE001, S110 - a site's extension, whatever it raises
        # Said where it matters: the build that failed on the page reported it with its
        # error ("MkDocs could not render it (...); the page is indexed from its source").
        pass
    # The ids depend only on the headings and their order, so render those alone.
    only = "\n\n".join("#" * level + " " + raw for _, level, raw in raw_headings)
    with deadline(parse_timeout, "rendering the page's headings for their ids"):
        return rendered_headings(md, only)
