"""Finding and reading the Markdown files of a vault, reporting every file it cannot use.

Bad input never stops a run: unreadable, binary, oversized and badly encoded files are
skipped or repaired, and each is reported with its path and the reason.
"""

from __future__ import annotations

import hashlib
import os
import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pathspec
import yaml

from kb_qa.errors import VaultError
from kb_qa.settings import Settings
from kb_qa.site import MARKDOWN_SUFFIXES, Site
from kb_qa.types import Document

SKIP_DIRS = frozenset({".git", "node_modules", "__pycache__"})
_FRONT_MATTER = re.compile(
    r"\A(?:\ufeff)?---[ \t]*\r?\n(.*?\r?\n)?(?:---|\.\.\.)[ \t]*(?:\r?\n|\Z)", re.S
)


@dataclass(frozen=True)
class FileInfo:
    """A candidate Markdown file: where it is and what its stat says."""

    path: str  # vault-relative POSIX path
    doc_path: str  # relative to docs_dir
    size: int
    mtime_ns: int


@dataclass(frozen=True)
class ReadResult:
    """A document, or the reason it was skipped, plus warnings about repairs made."""

    document: Document | None
    skipped: str = ""
    warnings: tuple[str, ...] = ()


def scan(site: Site, settings: Settings) -> tuple[list[FileInfo], list[tuple[str, str]]]:
    """List the vault's Markdown files (sorted), and the files skipped by size."""
    root = settings.vault
    if not root.is_dir():
        raise VaultError(f"Vault folder {root} does not exist or is not a folder.")
    ignore = pathspec.GitIgnoreSpec.from_lines(settings.ignore)
    index_dir = settings.index_path.resolve()
    found: list[FileInfo] = []
    skipped: list[tuple[str, str]] = []
    for path in _walk(site.docs_dir, index_dir):
        rel = path.relative_to(root).as_posix()
        doc_rel = path.relative_to(site.docs_dir).as_posix()
        if ignore.match_file(rel) or site.excluded.match_file(doc_rel):
            continue
        try:
            st = path.stat()
        except OSError as exc:
            skipped.append((rel, f"cannot read file information: {exc.strerror or exc}"))
            continue
        if st.st_size > settings.max_file_bytes:
            skipped.append(
                (
                    rel,
                    f"file is {_size(st.st_size)}, over the {_size(settings.max_file_bytes)} "
                    "limit (raise KBQA_MAX_FILE_BYTES to index it)",
                )
            )
            continue
        found.append(FileInfo(rel, doc_rel, st.st_size, st.st_mtime_ns))
    found.sort(key=lambda f: f.path)
    return found, skipped


def _walk(top: Path, index_dir: Path) -> Iterator[Path]:
    """Markdown files under ``top``, skipping hidden folders, tool folders and the index."""
    for dirpath, dirnames, filenames in os.walk(top, followlinks=False):
        here = Path(dirpath)
        dirnames[:] = sorted(
            d
            for d in dirnames
            if not d.startswith(".") and d not in SKIP_DIRS and (here / d).resolve() != index_dir
        )
        for name in sorted(filenames):
            if name.lower().endswith(MARKDOWN_SUFFIXES) and not name.startswith("."):
                yield here / name


def read_document(site: Site, info: FileInfo) -> ReadResult:
    """Read and decode one file; split off its front matter."""
    full = site.root / info.path
    try:
        data = full.read_bytes()
    except FileNotFoundError:
        return ReadResult(None, "file disappeared before it could be read")
    except OSError as exc:
        return ReadResult(None, f"cannot read file: {exc.strerror or exc}")
    if b"\x00" in data[:8192]:
        return ReadResult(None, "binary file with a Markdown extension (contains NUL bytes)")
    warnings: list[str] = []
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        text = data.decode("utf-8", errors="replace")
        warnings.append(
            f"invalid UTF-8 at byte {exc.start}; undecodable bytes were replaced with U+FFFD"
        )
    if text.startswith("\ufeff"):
        text = text[1:]
    title, aliases, body_start, fm_warning = _front_matter(text)
    if fm_warning:
        warnings.append(fm_warning)
    doc = Document(
        path=info.path,
        doc_path=info.doc_path,
        url=site.url_for(info.doc_path),
        title=title,
        source=text,
        body_start=body_start,
        file_hash=hashlib.sha1(data).hexdigest(),
        size=len(data),
        mtime_ns=info.mtime_ns,
        aliases=aliases,
    )
    return ReadResult(doc, "", tuple(warnings))


def _front_matter(text: str) -> tuple[str, tuple[str, ...], int, str]:
    """(title, aliases, offset where the body starts, warning) for a YAML front matter block."""
    match = _FRONT_MATTER.match(text)
    if not match:
        return "", (), 0, ""
    try:
        meta = yaml.safe_load(match.group(1) or "") or {}
    except yaml.YAMLError as exc:
        where = getattr(exc, "problem_mark", None)
        line = f" at line {where.line + 2}" if where is not None else ""
        return "", (), match.end(), f"front matter is not valid YAML{line}; it was ignored"
    if not isinstance(meta, dict):
        return "", (), match.end(), "front matter is not a mapping of keys; it was ignored"
    title = meta.get("title")
    aliases = meta.get("aliases") or []
    if isinstance(aliases, str):
        aliases = [aliases]
    return (
        str(title).strip() if title else "",
        tuple(str(a) for a in aliases if a),
        match.end(),
        "",
    )


def _size(n: int) -> str:
    """A byte count a person can compare: 15,008 bytes, 1.5 MB."""
    if n < 1_000_000:
        return f"{n:,} bytes"
    return f"{n / 1e6:.2f} MB"
