"""The templates of an Obsidian vault, which are no notes: ``# {{date}}`` and ``<% tp.file.title
%>`` were indexed like any note, and shown as the "nearest section" of a question the
vault does not answer.

Obsidian's Templates plugin keeps them in the folder ``.obsidian/templates.json`` names
(``"folder"``), the Templater plugin in the one its ``data.json`` names
(``"templates_folder"``), and the Daily notes plugin names its template file
(``.obsidian/daily-notes.json``, ``"template"``, without ``.md``). ``patterns`` turns them
into gitignore patterns the vault scan leaves out, as it does ``exclude_docs`` of a site.
Settings files are read only when they are regular files inside the vault.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

SETTINGS = (
    (".obsidian/templates.json", "folder", "folder"),
    (".obsidian/plugins/templater-obsidian/data.json", "templates_folder", "folder"),
    (".obsidian/daily-notes.json", "template", "file"),
)
_MAX_BYTES = 1 << 20
_SPECIAL = re.compile(r"([\\\[\]*?!#])")


def patterns(root: Path) -> tuple[str, ...]:
    """gitignore patterns (from the vault root) of the template folders and files the
    vault's Obsidian settings name; () for a vault without them."""
    found: list[str] = []
    for settings, key, kind in SETTINGS:
        value = _setting(root, settings, key)
        path = "/".join(part for part in value.replace("\\", "/").split("/") if part)
        if not path or path.startswith(".") or ".." in path.split("/"):
            continue
        escaped = "/" + _SPECIAL.sub(r"\\\1", path)
        pattern = escaped + "/" if kind == "folder" else escaped + ".md"
        if pattern not in found:
            found.append(pattern)
    return tuple(found)


def _setting(root: Path, name: str, key: str) -> str:
    """One string setting of an Obsidian settings file ("" when it cannot be read)."""
    path = root / name
    try:
        inside = path.resolve().is_relative_to(root.resolve())
        if not inside or path.is_symlink() or not path.is_file():
            return ""
        if path.stat().st_size > _MAX_BYTES:
            return ""
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return ""
    value = data.get(key) if isinstance(data, dict) else None
    return value.strip() if isinstance(value, str) else ""
