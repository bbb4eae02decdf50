"""A Markdown extension that keeps ``pymdownx.snippets`` inside the vault.

``--8<-- "file"`` reads files itself: its ``restrict_base_path`` compares paths as written,
so a symlink inside a base path (``docs/snippets/leak.md -> /etc/passwd``) or a base path
of ``/`` would pull a file from outside the vault into a page. Loaded after snippets
(``kb_qa.snippet_guard`` with ``root``), it refuses any snippet whose real location is
outside ``root`` (the include renders as missing) and switches off URL downloads, so that
rendering never reaches the network.

The extension is named by ``NAME``, the module path of the compatibility module
``kb_qa/snippet_guard.py``: that name is in every index's fingerprint (the site's Markdown
extensions), so it stays as it was when the guard lived at the top of the package, and an
index built before the move is not rebuilt.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from markdown import Markdown
from markdown.extensions import Extension

NAME = "kb_qa.snippet_guard"


class SnippetGuard(Extension):
    def __init__(self, **kwargs: Any) -> None:
        self.config = {"root": ["", "the vault folder: snippets must really be inside it"]}
        super().__init__(**kwargs)

    def extendMarkdown(self, md: Markdown) -> None:
        if "snippet" not in md.preprocessors:
            return
        root = Path(str(self.getConfig("root"))).resolve()
        snippets = md.preprocessors["snippet"]
        snippets.url_download = False
        find: Callable[[str], str | None] = snippets.get_snippet_path

        def inside_only(path: str) -> str | None:
            found = find(path)
            if found and not Path(found).resolve().is_relative_to(root):
                return None
            return found

        snippets.get_snippet_path = inside_only


def makeExtension(**kwargs: Any) -> SnippetGuard:
    return SnippetGuard(**kwargs)
