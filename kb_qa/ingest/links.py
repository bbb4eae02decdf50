"""Citation links in the style the reader uses: a docs site, a file, VS Code or Obsidian."""

from __future__ import annotations

from pathlib import Path
from urllib.parse import quote

from kb_qa.errors import ConfigError
from kb_qa.settings import LINK_STYLES as STYLES
from kb_qa.types import Chunk


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
        # Obsidian's URI: every "/" of the path encoded, and the heading after "#" (%23).
        note = chunk.path.rsplit(".", 1)[0]
        if chunk.level > 0 and chunk.heading:
            note += f"#{chunk.heading}"
        where = quote(vault.resolve().name, safe="")
        return f"obsidian://open?vault={where}&file={quote(note, safe='')}"
    raise ConfigError(
        f"link_style {style!r} is not one of {', '.join(STYLES)} (KBQA_LINK_STYLE, or "
        "link_style in Python)."
    )
