"""What kb-qa reads of a page's front matter: a YAML block's title, aliases and tags (or
Hugo's TOML between ``+++`` lines, or JSON), or Logseq's page properties (``alias:: k8s``)
opening the page."""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from typing import Any, NamedTuple

import tomllib
import yaml

FRONT_MATTER = re.compile(
    r"\A(?:\ufeff)?---[ \t]*\r?\n(.*?\r?\n)?(?:---|\.\.\.)[ \t]*(?:\r?\n|\Z)", re.S
)
# Hugo's other two forms: a Hugo page opening with "+++" lines was read as no front matter,
# its TOML quoted as the page's first paragraph. JSON only as Hugo writes it, "{" and "}"
# alone on their lines: a note opening with "{" on a line of text is not front matter.
TOML_FRONT_MATTER = re.compile(
    r"\A(?:\ufeff)?\+\+\+[ \t]*\r?\n(.*?\r?\n)?\+\+\+[ \t]*(?:\r?\n|\Z)", re.S
)
JSON_FRONT_MATTER = re.compile(r"\A(?:\ufeff)?(\{[ \t]*\r?\n.*?\r?\n\}[ \t]*)(?:\r?\n|\Z)", re.S)


class FrontMatter(NamedTuple):
    """What kb-qa reads of a note's YAML front matter."""

    title: str = ""
    aliases: tuple[str, ...] = ()
    tags: tuple[str, ...] = ()  # Obsidian's ``tags`` (or ``tag``), without their "#"
    body_start: int = 0  # offset where the body starts
    warning: str = ""


def parse(text: str) -> FrontMatter:
    """The title, aliases and tags of a front matter block, and where the body starts."""
    meta, end, warning = _block(text)
    if warning:
        return FrontMatter(body_start=end, warning=warning)
    if meta is None:
        return FrontMatter()
    if not isinstance(meta, dict):
        return FrontMatter(
            body_start=end,
            warning="front matter is not a mapping of keys; it was ignored",
        )
    title = meta.get("title")
    return FrontMatter(
        str(title).strip() if title else "",
        _names(meta.get("aliases"), split=False),
        tuple(t.lstrip("#") for t in _names(meta.get("tags", meta.get("tag")), split=True)),
        end,
    )


def fields(text: str) -> dict[str, Any]:
    """Every key of the page's front matter ({} for none, or one that is not valid)."""
    meta = _block(text)[0]
    return meta if isinstance(meta, dict) else {}


def _block(text: str) -> tuple[object, int, str]:
    """The front matter's value (None when the page has none), where it ends, and why it
    was ignored ("" when it was read)."""
    if match := FRONT_MATTER.match(text):
        try:
            return yaml.safe_load(match.group(1) or "") or {}, match.end(), ""
        except yaml.YAMLError as exc:
            where = getattr(exc, "problem_mark", None)
            line = f" at line {where.line + 2}" if where is not None else ""
            return None, match.end(), f"front matter is not valid YAML{line}; it was ignored"
    if match := TOML_FRONT_MATTER.match(text):
        try:
            return tomllib.loads(match.group(1) or ""), match.end(), ""
        except tomllib.TOMLDecodeError as exc:
            return None, match.end(), f"front matter is not valid TOML ({exc}); it was ignored"
    if match := JSON_FRONT_MATTER.match(text):
        try:
            meta = json.loads(match.group(1))
        except ValueError:
            return None, 0, ""  # text that opens with "{", not Hugo's front matter
        return (meta, match.end(), "") if isinstance(meta, dict) else (None, 0, "")
    return None, 0, ""


_PROPERTY = re.compile(r"^(?:-[ \t]+)?([A-Za-z][\w-]*)::[ \t]*(.*?)[ \t]*$")


def page_properties(text: str) -> FrontMatter:
    """Logseq's page properties, ``alias:: k8s, kube`` lines opening the page: its
    ``title``, ``alias`` (aliases) and ``tags`` (the lines stay text of the page)."""
    found: dict[str, str] = {}
    for line in text.splitlines():
        match = _PROPERTY.match(line)
        if not match:
            break
        found[match.group(1).lower()] = match.group(2)
    if not found:
        return FrontMatter()
    return FrontMatter(
        found.get("title", ""),
        tuple(a.strip().strip("[]") for a in found.get("alias", "").split(",") if a.strip()),
        _names(found.get("tags", "").replace("[[", "").replace("]]", ""), split=True),
    )


def _names(value: object, split: bool) -> tuple[str, ...]:
    """A front-matter list, or one string (with ``split``: names apart by commas or blanks,
    as Obsidian reads ``tags: a, b``)."""
    if isinstance(value, str):
        items: Sequence[object] = value.replace(",", " ").split() if split else [value]
    elif isinstance(value, list):
        items = value
    else:
        return ()
    return tuple(str(item).strip() for item in items if item is not None and str(item).strip())
