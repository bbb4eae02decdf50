"""What a page pulls in besides its own file: snippet includes and the vault's Python code.

The manifest keeps each page's includes with their time and size, so an edit to an
included file re-reads the pages that include it; a page with a block directive
(mkdocstrings, mkdocs-click) depends on the vault's Python files as a whole.
"""

from __future__ import annotations

import contextlib
import os
import re
from pathlib import Path

from kb_qa.ingest.site import Site
from kb_qa.ingest.vault import SKIP_DIRS

# ``--8<-- "file.md"`` (inline) and a block of file names between two ``--8<--`` lines; a
# leading ``;`` escapes it. A name may end in ``:5:10`` (lines) or ``:section``.
_SNIPPET_INLINE = re.compile(r"""^[ \t]*-{1,}8<-{1,}[ \t]+(["'])(.+?)\1""", re.M)
_SNIPPET_BLOCK = re.compile(  # a CRLF page's lines end in "\r\n"
    r"^[ \t]*-{1,}8<-{1,}[ \t]*\r?\n(.*?)^[ \t]*-{1,}8<-{1,}[ \t]*\r?$", re.M | re.S
)


def includes(markdown: str, site: Site) -> list[str]:
    """The vault files a page pulls in with ``pymdownx.snippets`` (and the site's
    ``auto_append`` files), vault-relative; a page whose includes change is rendered again."""
    if "pymdownx.snippets" not in site.extensions:
        return []
    # Listed without options, it has no entry of its own there: its defaults apply.
    config = site.extension_configs.get("pymdownx.snippets", {})
    names = [m.group(2) for m in _SNIPPET_INLINE.finditer(markdown)]
    for block in _SNIPPET_BLOCK.findall(markdown):
        names += [line.strip() for line in block.splitlines() if line.strip()]
    names += [str(n) for n in config.get("auto_append") or []]
    bases = [Path(b) for b in config.get("base_path") or [site.root]]
    root = site.root.resolve()
    found: set[str] = set()
    for name in names:
        if name.startswith(";") or "://" in name:
            continue
        name = re.sub(r"(:-?\d*)+$|:[A-Za-z_][\w-]*$", "", name)
        for base in bases:
            path = (base / name).resolve()
            if path.is_file() and path.is_relative_to(root):
                found.add(path.relative_to(root).as_posix())
                break
    return sorted(found)


# A page's dependency on the vault's Python code (see ``python_stamp``)
PYTHON_FILES = "*.py"
_DIRECTIVE = re.compile(r"^[ \t]*:::[ \t]*\S", re.M)
# Folders of installed packages and build output, not the project's own code
_NOT_CODE = SKIP_DIRS | {"site-packages", "venv", "env", "site"}


def generates_from_code(markdown: str) -> bool:
    """Whether a page has a block directive that writes sections from code (mkdocstrings'
    ``::: package.module``, ``::: mkdocs-click``)."""
    return bool(_DIRECTIVE.search(markdown))


def python_stamp(root: Path) -> tuple[int, int]:
    """(newest modification time in ns, count) of the vault's Python files: pages whose
    sections are generated from code render again when it changes. Hidden folders,
    virtual environments and installed packages are not the project's code."""
    newest, count = 0, 0
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = [
            d
            for d in dirnames
            if not d.startswith(".")
            and d not in _NOT_CODE
            and not (Path(dirpath) / d / "pyvenv.cfg").exists()
        ]
        for name in filenames:
            if name.endswith(".py"):
                with contextlib.suppress(OSError):
                    newest = max(newest, (Path(dirpath) / name).stat().st_mtime_ns)
                    count += 1
    return (newest, count)


def stamp(path: Path) -> tuple[int, int]:
    """A file's (modification time in ns, size), (0, -1) when it is gone."""
    try:
        st = path.stat()
    except OSError:
        return (0, -1)
    return (st.st_mtime_ns, st.st_size)
