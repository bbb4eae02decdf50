"""A VitePress site: where its pages are, the URL it gives each, its heading ids.

Its config, ``.vitepress/config.js`` (``.ts``, ``.mjs``, ``.mts``) in the site's folder or
in its ``docs/``, is JavaScript: it is never run, only searched for ``base``, ``srcDir`` and
``cleanUrls`` written literally among the config's own keys (a sidebar group's ``base:``
is not the site's). Every Markdown file under ``srcDir`` is a page: ``guide/signals.md`` is
published at ``guide/signals.html``, at ``guide/signals`` with ``cleanUrls``, an
``index.md`` as its folder (``guide/``), all under ``base``. Heading ids are @mdit-vue's
``slugify`` of the heading's text, or the ``{#id}`` its attributes give. Not built, so not
read: ``dist/`` and ``node_modules/`` folders, and ``srcExclude``'s globs when the config
writes them as a list of strings.
"""

from __future__ import annotations

import posixpath
import re
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import quote

from kb_qa.errors import ConfigError
from kb_qa.ingest.heading_text import Rules, shown
from kb_qa.ingest.mdbook import attributes
from kb_qa.types import Heading

FOLDER = ".vitepress"
CONFIG_FILES = tuple(f"config.{ext}" for ext in ("js", "ts", "mjs", "mts"))
DEV_ADDR = "localhost:5173"  # `vitepress dev`'s, whose chat kb-qa serve allows
# What VitePress never builds, at any depth (a "docs/dist/x.md" was cited, and 404ed), and
# MkDocs' "templates" folder (kb-qa's rule for any site) put back: VitePress builds it
EXCLUDED = ("node_modules/", "dist/", "!/templates/")
# Where the text of strings and comments is, to search the config's code alone
_STRING_OR_COMMENT = re.compile(
    r"""//[^\n]*|/\*.*?\*/|'(?:[^'\\\n]|\\.)*'|"(?:[^"\\\n]|\\.)*"|`(?:[^`\\]|\\.)*`""", re.S
)
_KEY = re.compile(r"(?<![\w$.])(base|srcDir|cleanUrls|rewrites|srcExclude)\s*:\s*")
# Keys only a config itself has: its own keys are at their depth of braces
_OWN_KEYS = re.compile(
    r"(?<![\w$.])(title|description|lang|head|themeConfig|markdown|vite|srcDir|outDir|"
    r"cleanUrls|base|lastUpdated|sitemap|rewrites|srcExclude|locales)\s*:"
)
_QUOTED = re.compile(r"""(['"`])([^'"`\n$]*)\1\s*(?=[,}\n]|$)""")
_BOOLEAN = re.compile(r"(true|false)\s*(?=[,}\n]|$)")
# srcExclude: ['**/drafts/**', 'notes.md'], a list of quoted strings
_STRINGS = re.compile(r"""\[\s*(?:(['"`])[^'"`\n$]*\1\s*(?:,\s*|(?=\])))*\]""")
_STRING = re.compile(r"""(['"`])([^'"`\n$]*)\1""")

# @mdit-vue/shared's slugify (packages/shared/src/slugify.ts, mdit-vue/mdit-vue), which
# VitePress gives markdown-it-anchor: NFKD, combining marks (U+0300-U+036F) and control
# characters removed, each run of these special characters one "-", none at either end, a
# leading digit prefixed with "_" (#121), lowercase
_SPECIAL = re.compile(r"""[\s~`!@#$%^&*()\-_+=\[\]{}|\\;:"'“”‘’<>,.?/]+""")
_COMBINING = re.compile("[\u0300-\u036f]")
_CONTROL = re.compile("[\u0000-\u001f]")


@dataclass(frozen=True)
class Routes:
    """Where a VitePress site publishes its pages: ``base`` without its slashes ("" for
    "/"), ``clean_urls`` its ``cleanUrls``."""

    base: str = ""
    clean_urls: bool = False

    def url(self, doc_path: str, text: str) -> str | None:
        """The page's URL relative to the host's root, ``base`` included (the drop-in
        script's ``data-root`` stays ``/``): VitePress' own links carry it."""
        folder, name = posixpath.split(doc_path)
        stem = posixpath.splitext(name)[0]
        if stem == "index":
            path = f"{folder}/" if folder else ""
        else:
            path = posixpath.join(folder, stem) + ("" if self.clean_urls else ".html")
        return quote(f"{self.base}/{path}" if self.base else path)


def config_of(root: Path) -> tuple[Path, Path | None] | None:
    """The VitePress project folder (the one holding ``.vitepress/``) at ``root`` or in
    its ``docs/``, with its config file (None when it has none: VitePress' defaults)."""
    for folder in (root, root / "docs"):
        marker = folder / FOLDER
        if marker.is_dir() and not marker.is_symlink():
            return folder, next((marker / n for n in CONFIG_FILES if (marker / n).is_file()), None)
    return None


def site_fields(root: Path) -> dict[str, Any] | None:
    """What ``site.Site`` holds of the VitePress site at ``root`` (None when it is none)."""
    found = config_of(root)
    if found is None:
        return None
    project, config = found
    warnings: list[str] = []
    text = ""
    if config is not None:
        try:
            text = config.read_text(encoding="utf-8", errors="replace")
        except OSError as exc:
            warnings.append(f"{config.name} cannot be read ({exc.strerror or exc}); {_ASSUMED}")
    name = str(config.relative_to(root)) if config is not None else ""
    if config is None and (project / FOLDER / "config").is_dir():
        # VitePress' own docs keep theirs in .vitepress/config/index.ts, with shared.ts
        warnings.append(f"{project / FOLDER / 'config'} is not read by kb-qa; {_ASSUMED}")
    settings = read_settings(text, name, warnings)
    src_dir = (project / str(settings.get("srcDir") or ".")).resolve()
    if not src_dir.is_dir():
        raise ConfigError(
            f"{config}: srcDir {src_dir} is no folder: VitePress reads the pages from srcDir, "
            "relative to the folder holding .vitepress/. Fix srcDir or create the folder."
        )
    base = str(settings.get("base") or "").strip("/")
    return {
        "docs_dir": src_dir,
        "is_mkdocs": True,  # a site with a config: citations open its pages
        "generator": "vitepress",
        "config_name": config.name if config is not None else FOLDER,
        "dev_addr": DEV_ADDR,
        "exclude_patterns": EXCLUDED + _patterns(settings.get("srcExclude", ()), name, warnings),
        "routes": Routes(base=base, clean_urls=settings.get("cleanUrls") is True),
        "warnings": warnings,
    }


_ASSUMED = (
    "citations assume VitePress' defaults (base '/', the pages beside .vitepress/, URLs "
    "ending in .html); write base, srcDir and cleanUrls literally in the config "
    "(base: '/docs/', cleanUrls: true) if they are not"
)


def read_settings(
    config: str, name: str, warnings: list[str]
) -> dict[str, str | bool | tuple[str, ...]]:
    """``base``, ``srcDir``, ``cleanUrls`` and ``srcExclude`` as the config's text writes
    them among its own keys; one written some way that needs running the config to know is
    warned about and left out (its default applies), and so are ``rewrites``, which kb-qa
    does not follow."""
    code = _STRING_OR_COMMENT.sub(lambda m: m.group(0)[0] + " " * (len(m.group(0)) - 1), config)
    depths = _depths(code)
    own = min((depths[m.start()] for m in _OWN_KEYS.finditer(code)), default=-1)
    found: dict[str, str | bool | tuple[str, ...]] = {}
    for match in _KEY.finditer(code):
        if depths[match.start()] != own:
            continue  # a sidebar group's base, a locale's settings
        key, value = match.group(1), config[match.end() :]
        if key == "rewrites":
            warnings.append(
                f"{name}: rewrites move pages to other URLs, which kb-qa does not follow: "
                "citations of the rewritten pages open their source paths"
            )
        elif key == "cleanUrls" and (boolean := _BOOLEAN.match(value)):
            found[key] = boolean.group(1) == "true"
        elif key == "srcExclude" and (strings := _STRINGS.match(value)):
            found[key] = tuple(m.group(2) for m in _STRING.finditer(strings.group(0)))
        elif key not in ("cleanUrls", "srcExclude") and (quoted := _QUOTED.match(value)):
            found[key] = quoted.group(2)
        else:
            warnings.append(f"{name}: {key} is not written literally; {_ASSUMED}")
    return found


def _patterns(globs: object, name: str, warnings: list[str]) -> tuple[str, ...]:
    """srcExclude's globs (relative to srcDir) as gitignore patterns: ``drafts/**`` is
    ``/drafts/**``; a negated one ("!x") is warned about and left out."""
    found = []
    for glob in globs if isinstance(globs, tuple) else ():
        if glob.startswith("!"):
            warnings.append(f"{name}: srcExclude's {glob!r} is not read by kb-qa; it is left out")
        elif glob.strip():
            found.append("/" + glob.strip().removeprefix("./").lstrip("/"))
    return tuple(found)


def _depths(code: str) -> list[int]:
    """The depth of braces at each character of ``code``."""
    depths, depth = [], 0
    for ch in code:
        depth -= ch == "}"
        depths.append(depth)
        depth += ch == "{"
    return depths


def headings(raw: Sequence[tuple[int, str]]) -> list[Heading]:
    """Each source heading (level, Markdown text) with its text as shown and the id
    VitePress gives it: its ``{#id}``, else ``slugify`` of its text; a repeat of either is
    numbered -1, -2 (markdown-it-anchor's uniqueSlug, which counts explicit ids too)."""
    seen: set[str] = set()
    found = []
    for level, source in raw:
        source, explicit = attributes(source)
        # The id is made of the heading's text with its entities as written: "&amp;" is
        # "amp" in it, where the page shows "&"
        text, as_written = shown(source), shown(source, Rules(entities="none"))
        anchor = _unique(explicit.strip("\"'") or slugify(as_written), seen)
        found.append(Heading(level=level, text=text, anchor=anchor))
    return found


def slugify(text: str) -> str:
    """@mdit-vue/shared's slugify (see ``_SPECIAL``): "Computed Signals" is
    "computed-signals", "2. Étapes" "_2-etapes"."""
    slug = _CONTROL.sub("", _COMBINING.sub("", unicodedata.normalize("NFKD", text)))
    slug = _SPECIAL.sub("-", slug).strip("-")
    return re.sub(r"^([0-9])", r"_\1", slug).lower()


def _unique(slug: str, seen: set[str]) -> str:
    result, n = slug, 1
    while result in seen:
        result, n = f"{slug}-{n}", n + 1
    seen.add(result)
    return result
