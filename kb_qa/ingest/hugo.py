"""A Hugo site: where its content is, the URL Hugo publishes each page at, its heading ids,
its shortcodes read as no text. Read as notes, a Hugo site's citations opened 404s
(``install.md`` that ``slug: setup`` publishes at ``setup/``, ``_index.md`` as ``_index/``)
and its drafts were quoted. Its config (``hugo.toml``/``.yaml``/``.json``, a ``config.toml``
naming a ``baseURL``, ``config/_default/``) is read, never run: ``contentDir``,
``uglyURLs``, ``disablePathToLower``, ``[permalinks]``, goldmark's ``autoHeadingIDType``
and ``typographer`` (its heading ids: ``hugo_headings``).
"""

from __future__ import annotations

import json
import posixpath
import re
import unicodedata
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import date
from pathlib import Path
from typing import Any
from urllib.parse import quote

import tomllib
import yaml

from kb_qa.errors import ConfigError
from kb_qa.ingest.front_matter import fields

NAMES = tuple(f"hugo.{ext}" for ext in ("toml", "yaml", "yml", "json"))
# An older site's config.toml is Hugo's only when it names a baseURL (Zola's says base_url)
OLD_NAMES = tuple(f"config.{ext}" for ext in ("toml", "yaml", "yml", "json"))
CONFIG_FILES = (*NAMES, *OLD_NAMES)
CONFIG_DIR = "config/_default"
# The files of a config folder whose name is the key they hold (markup.toml is [markup])
_SPLIT_KEYS = ("markup", "permalinks")
DEV_ADDR = "localhost:1313"  # `hugo server`'s preview, whose chat kb-qa serve allows
# Hugo's generator names, by goldmark's autoHeadingIDType: ``Site.generator`` is the one
# thing a page carries to the chunker, so the id type rides in it
GENERATORS = {
    "github": "hugo",
    "github-ascii": "hugo-github-ascii",
    "blackfriday": "hugo-blackfriday",
}
# ...with this after it when the typographer is off: it makes "--" an en dash, which no
# heading id keeps ("## A -- B" is #a--b with it, #a----b without)
NO_TYPOGRAPHER = "-no-typographer"
# ":sections[1:]" is a token with an index, not read here: the whole is one unknown token
_TOKEN = re.compile(r":(\w+(?:\[[^\]]*\])?)")
_TOKENS = (
    "year", "month", "day", "title", "slug", "filename", "contentbasename", "section",
    "sections", "slugorfilename", "slugorcontentbasename",
)  # fmt: skip
_DATE_KEYS = ("date", "publishdate", "pubdate", "published", "lastmod", "modified")


@dataclass(frozen=True)
class Routes:
    """Where a Hugo site publishes its content pages; ``root`` is its content folder (read
    to tell a leaf bundle's resources), left out of the index's fingerprint by ``repr``."""

    ugly: bool | tuple[tuple[str, bool], ...] = False  # uglyURLs: all, or by section
    lower: bool = True  # not disablePathToLower
    # [permalinks]: (kind "page" or "section", top-level section, pattern)
    permalinks: tuple[tuple[str, str, str], ...] = ()
    root: Path | None = field(default=None, repr=False, compare=False)

    def url(self, doc_path: str, text: str) -> str | None:
        """The page's URL relative to the site's root (its ``baseURL``), as Hugo publishes
        it; None for a page a build leaves out: a draft, a headless bundle, a leaf bundle's
        resource (``post/notes.md`` beside ``post/index.md``)."""
        meta = {str(k).lower(): v for k, v in fields(text).items()}
        if any(meta.get(k) in (True, "true") for k in ("draft", "headless")) or _unrendered(meta):
            return None
        folder, name = posixpath.split(doc_path)
        stem = posixpath.splitext(name)[0]
        if self._in_leaf_bundle(folder, stem):
            return None
        if isinstance(meta.get("url"), str) and meta["url"].strip():
            return quote(meta["url"].strip().lstrip("/"))  # as written: Hugo leaves it so
        parts = [p for p in folder.split("/") if p]
        if stem == "_index":  # a section's (or the home page's) list page
            pattern = self._pattern("section", parts[0] if parts else "")
            path = self._expand(pattern, meta, parts, parts[-1] if parts else "") if pattern else ""
            path = path or "/".join(parts)
            return quote(self._cased(path) + "/") if path else ""
        if stem == "index" and not parts:  # content/index.md: the home page, a leaf bundle
            return ""
        base = parts.pop() if stem == "index" else stem  # a leaf bundle's folder
        section = parts[0] if parts else ""
        if pattern := self._pattern("page", section):
            path = self._expand(pattern, meta, parts, base)
        else:
            slug = str(meta.get("slug") or "").strip()
            path = "/".join([*parts, _sanitize(slug) if slug else base])
        ugly = self.ugly if isinstance(self.ugly, bool) else dict(self.ugly).get(section, False)
        return quote(self._cased(path) + (".html" if ugly else "/"))

    def _in_leaf_bundle(self, folder: str, stem: str) -> bool:
        """Whether a page in ``folder`` is a resource of a leaf bundle: a folder at or above
        it holds an index.md that is not the page itself. The content folder's own index.md
        makes the home page one: a real build then publishes no other page."""
        if self.root is None:
            return False
        parts = [p for p in folder.split("/") if p]
        for depth in range(len(parts) - (stem == "index"), -1, -1):  # not its own index.md
            here = self.root.joinpath(*parts[:depth])
            if (here / "index.md").is_file() or (here / "index.markdown").is_file():
                return True
        return False

    def _pattern(self, kind: str, section: str) -> str:
        return next((p for k, s, p in self.permalinks if k == kind and s == section), "")

    def _expand(self, pattern: str, meta: Mapping[str, Any], parts: list[str], base: str) -> str:
        """A ``[permalinks]`` pattern with the page's values (``site_fields`` let through
        only the tokens read here)."""
        day = _date(meta)
        title = str(meta.get("title") or "")
        slug = str(meta.get("slug") or "")
        values = {
            "year": f"{day.year:04d}",
            "month": f"{day.month:02d}",
            "day": f"{day.day:02d}",
            "title": _sanitize(title),
            "slug": _sanitize(slug or title),
            "section": parts[0] if parts else "",
            "sections": "/".join(parts),
            **dict.fromkeys(("filename", "contentbasename"), base),
            **dict.fromkeys(("slugorfilename", "slugorcontentbasename"), _sanitize(slug) or base),
        }
        path = _TOKEN.sub(lambda m: values.get(m.group(1), m.group(0)), pattern)
        return re.sub(r"/{2,}", "/", path).strip("/")

    def _cased(self, path: str) -> str:
        path = "/".join(_sanitize(part) for part in path.split("/"))
        return path.lower() if self.lower else path


def _unrendered(meta: Mapping[str, Any]) -> bool:
    """``build: {render: never}`` (or ``_build``, and the older ``render: false``)."""
    build = meta.get("build", meta.get("_build"))
    render = build.get("render") if isinstance(build, dict) else None
    return render is False or str(render).lower() in ("never", "false")


def _date(meta: Mapping[str, Any]) -> date:
    """The page's date as Hugo reads it for ``:year``; Hugo's zero date when it has none."""
    for key in _DATE_KEYS:
        value = meta.get(key)
        if isinstance(value, date):
            return value
        if isinstance(value, str) and (m := re.match(r"(\d{4})-(\d{2})-(\d{2})", value.strip())):
            return date(int(m.group(1)), int(m.group(2)), int(m.group(3)))
    return date(1, 1, 1)


def _sanitize(part: str) -> str:
    """A path segment as Hugo writes it (helpers.UnicodeSanitize): letters, digits, marks
    and ``. _ - # + ~ @ %`` kept, a run of spaces one ``-``, anything else dropped."""
    out: list[str] = []
    hyphen = False
    for ch in part:
        kept = ch in "._-#+~@%" or unicodedata.category(ch)[0] in "LM" or ch.isdigit()
        if kept:
            if hyphen and ch != "-":
                out.append("-")
            hyphen = False
            out.append(ch)
        elif out and out[-1] != "-" and ch.isspace():
            hyphen = True
    return "".join(out)


def config_of(root: Path) -> Path | None:
    """The Hugo config of the site at ``root``, or of the site whose content folder ``root``
    is (its config in the folder above); None for another folder."""
    for folder in (root, root.parent) if root.name == "content" else (root,):
        for name in (*NAMES, *OLD_NAMES):
            path = folder / name
            if path.is_file() and (name in NAMES or _names_base_url(path)):
                return path
        for name in (*NAMES, *OLD_NAMES):
            if (path := folder / CONFIG_DIR / name).is_file():
                return path
    return None


def _names_base_url(path: Path) -> bool:
    try:
        with path.open("rb") as file:
            return b"baseurl" in file.read(65536).lower()
    except OSError:
        return False


def site_fields(root: Path) -> dict[str, Any] | None:
    """What ``site.Site`` holds of the Hugo site at ``root`` (None when it is none)."""
    config_file = config_of(root)
    if config_file is None:
        return None
    warnings: list[str] = []
    site_root = config_file.parent
    if site_root.name == "_default":  # config/_default/hugo.toml
        site_root = site_root.parent.parent
    if site_root != root:  # the content folder given: its config is outside the vault, unread
        warnings.append(
            f"{config_file} is outside the vault, and kb-qa reads nothing outside it: give "
            f"kb-qa {site_root} to read its settings; meanwhile {_ASSUMED}"
        )
        config: dict[str, Any] = {}
        content = root
    else:
        config = read_config(config_file)
        content = root / str(config.get("contentdir") or "content")
    if not content.is_dir():
        raise ConfigError(
            f"{config_file} is a Hugo config, but its content folder {content} is no folder: "
            "create it, or set contentDir to the folder holding the site's Markdown."
        )
    parser = _get(config, "markup", "goldmark", "parser")
    id_type = str(parser.get("autoheadingidtype") or "github").lower()
    if id_type not in GENERATORS:
        warnings.append(
            f"{config_file.name}: autoHeadingIDType {id_type!r} is none of Hugo's (github, "
            "github-ascii, blackfriday); citations use github's heading ids"
        )
        id_type = "github"
    ugly = config.get("uglyurls", False)
    typographer = _get(config, "markup", "goldmark", "extensions").get("typographer", True)
    if isinstance(typographer, Mapping):  # [markup.goldmark.extensions.typographer]
        typographer = not typographer.get("disable", False)
    return {
        "docs_dir": content,
        "is_mkdocs": True,  # a site with a config: citations open its pages
        "generator": GENERATORS[id_type] + ("" if typographer is not False else NO_TYPOGRAPHER),
        "config_name": config_file.name,
        "dev_addr": DEV_ADDR,
        "exclude_patterns": ("!/templates/",),  # MkDocs' rule, not Hugo's: a section here
        "routes": Routes(
            ugly=tuple(sorted((str(k), bool(v)) for k, v in ugly.items()))
            if isinstance(ugly, dict)
            else bool(ugly),
            lower=not config.get("disablepathtolower", False),
            permalinks=_permalinks(config.get("permalinks"), config_file.name, warnings),
            root=content,
        ),
        "warnings": warnings,
    }


_ASSUMED = "citations assume Hugo's default URLs (no uglyURLs, no [permalinks])"


def read_config(path: Path) -> dict[str, Any]:
    """Hugo's settings from ``path``, keys lowercased as Hugo reads them (``baseURL`` is
    ``baseurl``); in a config folder, with its ``markup`` and ``permalinks`` files too."""
    config = _load(path)
    if path.parent.name == "_default":
        for key in _SPLIT_KEYS:
            for ext in ("toml", "yaml", "yml", "json"):
                if (part := path.parent / f"{key}.{ext}").is_file():
                    config.setdefault(key, _load(part))
    return config


def _load(path: Path) -> dict[str, Any]:
    try:
        text = path.read_text(encoding="utf-8", errors="replace")
        if path.suffix == ".toml":
            data: object = tomllib.loads(text)
        elif path.suffix == ".json":
            data = json.loads(text)
        else:
            data = yaml.safe_load(text)
    except (OSError, ValueError, yaml.YAMLError) as exc:  # TOML's and JSON's are ValueErrors
        raise ConfigError(
            f"{path} cannot be read as Hugo's config ({exc}); fix it (`hugo` stops on it too)."
        ) from exc
    if not isinstance(data, dict | None):
        raise ConfigError(f"{path}: expected a mapping of settings at the top level.")
    return _lowered(data or {})


def _lowered(data: Mapping[Any, Any]) -> dict[str, Any]:
    return {str(k).lower(): _lowered(v) if isinstance(v, Mapping) else v for k, v in data.items()}


def _get(config: Mapping[str, Any], *keys: str) -> Mapping[str, Any]:
    for key in keys:
        value = config.get(key)
        config = value if isinstance(value, Mapping) else {}
    return config


def _permalinks(value: object, name: str, warnings: list[str]) -> tuple[tuple[str, str, str], ...]:
    """``[permalinks]`` as (kind, section, pattern): the older form (``posts = "..."``) is
    the pages'; a pattern with a token not read here (``:slugs``, a Go time layout such as
    ``:06``) is left out, with a warning: its pages are cited at Hugo's default URLs."""
    if not isinstance(value, Mapping):
        return ()
    found: list[tuple[str, str, str]] = []
    for key, pattern in value.items():
        if key in ("page", "section") and isinstance(pattern, Mapping):
            found += [(key, str(s), str(p)) for s, p in pattern.items() if isinstance(p, str)]
        elif isinstance(pattern, str):
            found.append(("page", str(key), pattern))
    kept = []
    for kind, section, pattern in found:
        unknown = sorted({t for t in _TOKEN.findall(pattern) if t not in _TOKENS})
        if unknown:
            warnings.append(
                f"{name}: the permalink {pattern!r} of {section or 'the home'} uses "
                f"{', '.join(':' + t for t in unknown)}, which kb-qa does not read; citations "
                f"of its {kind}s assume Hugo's default layout (content/{section}/x.md at "
                f"{section}/x/). Use :year :month :day :title :slug :filename :section to fix it"
            )
        else:
            kept.append((kind, section.strip("/").lower(), pattern))
    return tuple(sorted(kept))


# {{< note >}}, {{% alert title="Warning" %}}, {{< /tabs >}}, arguments over several lines
# too; not Hugo's escaped form {{</* note */>}}, which the page shows as written
_SHORTCODE = re.compile(
    r"\{\{([<%])[ \t\r\n]*/?[ \t]*[A-Za-z_][\w./-]*(?:[^{}]|\{(?!\{)|\}(?!\}))*?[>%]\}\}"
)
_FENCE = re.compile(r"[ \t]{0,3}(`{3,}|~{3,})")


def without_shortcodes(markdown: str) -> str:
    """``markdown`` with Hugo's shortcode tags, opening and closing, blanked out (the text
    between them stays), line for line: a quote is still found in the file's own bytes.
    A fenced code block's lines are code, as written."""
    if "{{<" not in markdown and "{{%" not in markdown:
        return markdown
    code: list[tuple[int, int]] = []  # offsets of fenced code blocks' lines
    fence, start, at = "", 0, 0
    for line in markdown.split("\n"):
        if fence and (end := line.strip()).startswith(fence) and set(end) == {fence[0]}:
            code.append((start, at + len(line)))
            fence = ""
        elif not fence and (opened := _FENCE.match(line)):
            fence, start = opened.group(1), at
        at += len(line) + 1
    if fence:
        code.append((start, len(markdown)))

    def blank(match: re.Match[str]) -> str:
        if any(a <= match.start() < b for a, b in code):
            return match.group(0)
        return re.sub(r"[^\r\n]", "", match.group(0))  # its line breaks stay

    return _SHORTCODE.sub(blank, markdown)
