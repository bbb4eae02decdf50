"""An mdBook book: its chapters, the URL mdBook gives each page, its heading ids.

``book.toml`` is read with tomllib, never run: ``[book] src`` ("src" by default) holds the
chapters, and mdBook builds only those ``SUMMARY.md`` links (another Markdown file there is
no page, and ``SUMMARY.md`` is the book's table of contents, not a chapter). A chapter
``guide/installation.md`` is published at ``guide/installation.html``, a ``README.md`` at
``index.html`` (mdBook's index preprocessor, on unless ``[build]
use-default-preprocessors = false`` leaves it out and ``[preprocessor.index]`` does not
put it back). Heading ids are mdBook's own (``normalize_id``), or the ``{#id}`` a
heading's attributes give; its sidebar's name for a chapter, the link's text in
``SUMMARY.md``, is the page's title.
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import quote

import tomllib

from kb_qa.errors import ConfigError
from kb_qa.ingest.docusaurus import plain
from kb_qa.ingest.heading_text import Rules, shown
from kb_qa.ingest.page_titles import NavTitles
from kb_qa.types import Heading

CONFIG_FILE = "book.toml"
CONFIG_FILES = (CONFIG_FILE,)
SUMMARY = "SUMMARY.md"
DEV_ADDR = "localhost:3000"  # `mdbook serve`'s, whose chat kb-qa serve allows
# A link of SUMMARY.md: [Name](path.md) or [Name](<path with spaces.md>); [Draft]() is a
# chapter with no file yet
_LINK = re.compile(r"\[((?:[^\]\\\n]|\\.)*)\]\(\s*(<[^<>\n]*>|[^\s()]*)[^)\n]*\)")
_FENCE = re.compile(r"^[ \t]*(`{3,}|~{3,})", re.MULTILINE)
_GLOB = re.compile(r"([\\*?\[\]])")
# Heading attributes, pulldown-cmark's (mdBook) and markdown-it-attrs' (VitePress) alike:
# "## Computed Signals {#computed .api}"; each part an #id, a .class or key=value
_ATTRIBUTES = re.compile(r"[ \t]*\{([^{}\n]*)\}[ \t]*$")
_ATTRIBUTE = re.compile(r"""#[^\s#.]+|\.[^\s#.]+|[^\s=#.]+=(?:"[^"]*"|'[^']*'|\S*)""")
# ...with this after it when [output.html] smart-punctuation is off: it makes "--" an en
# dash, which no heading id keeps ("## A -- B" is #a--b with it, #a----b without)
NO_SMART_PUNCTUATION = "-no-smart-punctuation"


@dataclass(frozen=True)
class Routes:
    """Where mdBook publishes each chapter: ``readme_index``, a README chapter as the
    folder's ``index.html`` (mdBook's index preprocessor)."""

    readme_index: bool = True

    def url(self, doc_path: str, text: str) -> str | None:
        """The chapter's URL relative to the book's root, as ``mdbook build`` writes it."""
        folder, name = posixpath.split(doc_path)
        stem = posixpath.splitext(name)[0]
        # The preprocessor's is_readme_file: the file stem matches (?i)^readme$
        if self.readme_index and stem.lower() == "readme":
            stem = "index"
        return quote(posixpath.join(folder, f"{stem}.html"))


def site_fields(root: Path) -> dict[str, Any] | None:
    """What ``site.Site`` holds of the book at ``root``, or of the book whose ``src``
    folder ``root`` is (None when it is neither)."""
    config = root / CONFIG_FILE
    warnings: list[str] = []
    if config.is_file():
        book = _read(config)
        src_dir = (root / _src(book, config)).resolve()
    elif (root.parent / CONFIG_FILE).is_file() and (root / SUMMARY).is_file():
        # The src folder given alone: book.toml is outside the vault, never read
        book, src_dir = {}, root
        warnings.append(
            f"{root.parent / CONFIG_FILE} is outside the vault, and kb-qa reads nothing "
            f"outside it: give kb-qa {root.parent} to read it; meanwhile a README.md chapter "
            "is taken to be published as index.html (mdBook's index preprocessor)"
        )
    else:
        return None
    if not src_dir.is_dir():
        raise ConfigError(
            f"{config}: the book's src folder {src_dir} does not exist. Fix `src` under "
            "[book] (it is relative to book.toml) or create the folder."
        )
    chapters = _chapters(src_dir / SUMMARY, config)
    return {
        "docs_dir": src_dir,
        "is_mkdocs": True,  # a site with a config: citations open its pages
        "generator": "mdbook" + ("" if _smart_punctuation(book) else NO_SMART_PUNCTUATION),
        "config_name": CONFIG_FILE,
        "dev_addr": DEV_ADDR,
        # Everything but the chapters SUMMARY.md lists: mdBook builds nothing else
        "exclude_patterns": ("*", *(f"!/{_escaped(path)}" for path in chapters)),
        "nav": NavTitles(titles={path: name for path, name in chapters.items() if name}),
        "routes": Routes(readme_index=_readme_index(book)),
        "warnings": warnings,
    }


def _escaped(path: str) -> str:
    """``path`` as a gitignore pattern matching that file alone ("a[1].md" is no range)."""
    return _GLOB.sub(r"\\\1", path)


def _read(config: Path) -> dict[str, Any]:
    try:
        return tomllib.loads(config.read_text(encoding="utf-8", errors="replace"))
    except (OSError, tomllib.TOMLDecodeError) as exc:
        raise ConfigError(
            f"{config} cannot be read as TOML ({exc}): fix it (`mdbook build` fails on it "
            "too), then index again."
        ) from exc


def _src(book: dict[str, Any], config: Path) -> str:
    table = book.get("book")
    src = table.get("src", "src") if isinstance(table, dict) else "src"
    if not isinstance(src, str) or not src.strip():
        raise ConfigError(f"{config}: `src` under [book] is not a folder name: write src = 'src'.")
    return src


def _readme_index(book: dict[str, Any]) -> bool:
    build, preprocessors = book.get("build"), book.get("preprocessor")
    defaults = build.get("use-default-preprocessors", True) if isinstance(build, dict) else True
    return defaults is not False or (isinstance(preprocessors, dict) and "index" in preprocessors)


def _smart_punctuation(book: dict[str, Any]) -> bool:
    """``[output.html] smart-punctuation``: on unless false (mdBook 0.5; 0.4's was off)."""
    output = book.get("output")
    html = output.get("html") if isinstance(output, dict) else None
    return not isinstance(html, dict) or html.get("smart-punctuation", True) is not False


def _chapters(summary: Path, config: Path) -> dict[str, str]:
    """The chapters ``summary`` links (their paths relative to the src folder), each with
    its name as the book's sidebar shows it."""
    try:
        text = summary.read_text(encoding="utf-8", errors="replace")
    except FileNotFoundError:
        raise ConfigError(
            f"{summary} does not exist: mdBook builds the chapters SUMMARY.md lists (see "
            f"{config.name}'s `src`); write one, e.g. `- [Introduction](README.md)`."
        ) from None
    except OSError as exc:
        raise ConfigError(f"{summary} cannot be read ({exc.strerror or exc}).") from exc
    fences = _FENCE.split(text)[::3]  # no link inside a code block: what is between fences
    chapters: dict[str, str] = {}
    for part in fences:
        for match in _LINK.finditer(part):
            # "ref/a.md#top" is a file of that name to mdBook 0.5 (it creates it, and builds
            # ref/a.html from it): ref/a.md is then no chapter, its text on no page
            target = match.group(2).strip("<>")
            if not target or re.match(r"[A-Za-z][\w+.-]*:|/", target):
                continue  # a draft chapter with no file yet, or a link out of the book
            path = posixpath.normpath(target)
            if not path.startswith("../"):
                chapters.setdefault(path, plain(match.group(1)))
    return chapters


def headings(raw: Sequence[tuple[int, str]], smart: bool = True) -> list[Heading]:
    """Each source heading (level, Markdown text) with its text as shown and the id mdBook
    gives it: its ``{#id}``, else ``normalize_id`` of its text, a repeat numbered -1, -2
    (unique_id_from_content; an explicit id is not counted). The text is read as
    pulldown-cmark reads it: escapes and entities decoded, and with ``smart`` punctuation
    (``--`` an en dash, which no id keeps)."""
    rules = Rules(smart="commonmark" if smart else "")
    seen: dict[str, int] = {}
    found = []
    for level, source in raw:
        source, explicit = attributes(source)
        text = shown(source, rules)
        anchor = explicit or _unique(normalize_id(text.strip().lstrip("#").strip()), seen)
        found.append(Heading(level=level, text=text, anchor=anchor))
    return found


def attributes(source: str) -> tuple[str, str]:
    """A heading's Markdown without the attributes it ends with (``{#id .class}``), and
    the id they give ("" for none; ``id=`` as written). Braces holding anything else are
    the heading's text ("Use {braces}")."""
    match = _ATTRIBUTES.search(source)
    if match is None or not match.group(1).strip():
        return source, ""
    parts = match.group(1).split()
    if not all(_ATTRIBUTE.fullmatch(part) for part in parts):
        return source, ""
    # id="x" is an id too: VitePress' is x, mdBook's "x", quotes and all (mdBook 0.5.4)
    ids = [part[1 if part[0] == "#" else 3 :] for part in parts if part.startswith(("#", "id="))]
    return source[: match.start()], ids[-1] if ids else ""


def normalize_id(text: str) -> str:
    """mdBook 0.5's normalize_id (rust-lang/mdBook): alphanumerics, "_" and "-" kept,
    every letter lowercased ("## Über" is #über; mdBook 0.4 lowercased ASCII letters alone),
    each whitespace a "-", every other character dropped: "`--passes`: add more" is
    "--passes-add-more"."""
    kept = (
        ch.lower() if ch.isalnum() or ch in "_-" else "-"
        for ch in text
        if ch.isalnum() or ch in "_-" or ch.isspace()
    )
    return "".join(kept)


def _unique(anchor: str, seen: dict[str, int]) -> str:
    """mdBook's unique_id_from_content: the n-th repeat of an id is ``id-n``."""
    count = seen.get(anchor, 0)
    seen[anchor] = count + 1
    return f"{anchor}-{count}" if count else anchor
