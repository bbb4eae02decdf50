"""Citation links in the style the reader uses: a docs site, a file, VS Code or Obsidian."""

from __future__ import annotations

from pathlib import Path
from urllib.parse import quote

from kb_qa.errors import ConfigError
from kb_qa.types import Chunk

STYLES = ("site", "file", "vscode", "obsidian")


def link(chunk: Chunk, style: str, *, vault: Path, site_url: str = "") -> str:
    """The link for one chunk: ``site`` URL#anchor, ``file`` path:line, or an editor URI."""
    if style == "site":
        base = site_url.rstrip("/") + "/" if site_url else ""
        return base + chunk.link
    absolute = (vault / chunk.path).resolve()
    # Text a site generated (mkdocstrings, an include) has no line in the file: the file.
    line = f":{chunk.line_start}" if chunk.line_start else ""
    if style == "file":
        return f"{absolute}{line}"
    if style == "vscode":
        return f"vscode://file{quote(absolute.as_posix())}{line}"
    if style == "obsidian":
        note = chunk.path.rsplit(".", 1)[0]
        return f"obsidian://open?vault={quote(vault.resolve().name)}&file={quote(note)}"
    raise ConfigError(
        f"link_style {style!r} is not one of {', '.join(STYLES)} (KBQA_LINK_STYLE, or "
        "link_style in Python)."
    )
