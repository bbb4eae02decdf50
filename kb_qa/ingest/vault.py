"""Finding and reading the Markdown files of a vault, reporting every file it cannot use.

Bad input never stops a run: unreadable, binary, oversized and badly encoded files are
skipped or repaired, and each is reported with its path and the reason."""

from __future__ import annotations

import hashlib
import os
import re
import stat
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import TYPE_CHECKING

from kb_qa.errors import VaultError, undecodable
from kb_qa.ingest import docusaurus, front_matter, notebooks, synced, zensical_blog
from kb_qa.ingest.decoding import binary_reason, decode, is_binary
from kb_qa.ingest.page_titles import file_title
from kb_qa.ingest.site import MARKDOWN_SUFFIXES, Site
from kb_qa.settings import Settings
from kb_qa.text import without_comments
from kb_qa.types import Document

if TYPE_CHECKING:
    import pathspec

MISSING = "file disappeared before it could be read"
BROKEN_LINK = "symlink whose target does not exist"
UNLISTED = "cannot list the folder (its notes indexed before are kept)"
BAD_NAME = "name is not valid UTF-8 (bytes of another encoding): rename it to index it"
SKIP_DIRS = frozenset({".git", "node_modules", "__pycache__"})
# Emacs' lock link (.#note.md), AppleDouble (._note.md), and Office's lock or temp file
# ("~$Wifi.md", a few bytes an editor left beside Wifi.md, was indexed and ranked above it)
NOT_NOTES = (".#", "._", "~$")
_LONE_CR = re.compile(r"\r(?!\n)")
# What the walk lists: notebooks and MDX pages too, so that where they cannot be indexed they
# are reported (``notebooks.not_indexed``, ``docusaurus.NOT_HERE``), not dropped without a word
_PAGES = (*MARKDOWN_SUFFIXES, notebooks.SUFFIX, docusaurus.MDX)


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
    # What the file holds is refused (binary), not only unreadable now: what it said before
    # must not be quoted any more
    refused: bool = False


@dataclass(frozen=True)
class Boundary:
    """The one rule for what may be read: a file whose real location is inside the vault
    and outside the index folder. Symlinks that stay inside the vault are fine; ones that
    lead out of it are refused, so a docs pull request cannot publish ``/etc/passwd``.
    """

    root: Path  # resolved vault folder
    index_dir: Path  # resolved index folder (never read as a document)
    given: Path | None = None  # the vault folder as named (absolute, links not resolved)

    @classmethod
    def of(cls, settings: Settings) -> Boundary:
        vault = Path(settings.vault)
        return cls(vault.resolve(), settings.index_path.resolve(), Path(os.path.abspath(vault)))

    def refuse(self, path: Path) -> str:
        """Why ``path`` may not be read, or "" when it may."""
        try:
            real = path.resolve(strict=True)
        except FileNotFoundError:
            return BROKEN_LINK if path.is_symlink() else MISSING
        except (OSError, RuntimeError) as exc:  # RuntimeError: a symlink loop
            return f"cannot resolve the path: {getattr(exc, 'strerror', None) or exc}"
        return self.refuse_real(real, path)

    def refuse_real(self, real: Path, path: Path | None = None) -> str:
        """Why a resolved path may not be read, or "" when it may.

        ``path`` is the name it was reached by: the hidden-file rule (no part of the path
        starts with '.', none is ``.git`` or ``node_modules``) applies to where a symlink
        leads, not only to its name, so ``docs/leak.md -> ../.git/config`` or ``../.env`` is
        refused. Hidden folders the name itself goes through (a ``docs_dir`` of ``.docs``,
        a hook in ``.hooks/``) are the caller's choice and stay allowed.
        """
        if not real.is_relative_to(self.root):
            return "symlink that leads outside the vault (only files inside the vault are read)"
        if real.is_relative_to(self.index_dir):
            return "inside the kb-qa index folder"
        hidden = _hidden_parts(real.relative_to(self.root))
        if hidden and not hidden <= self._hidden_named(path):
            return (
                f"symlink that leads to a hidden file or folder ({'/'.join(sorted(hidden))}): "
                "hidden files (names starting with '.', .git, node_modules) are never read"
            )
        return ""

    def _hidden_named(self, path: Path | None) -> set[str]:
        """The hidden parts of ``path`` as named, relative to the vault."""
        if path is None:
            return set()
        named = Path(os.path.normpath(os.path.abspath(path)))
        for base in (self.given, self.root):
            if base is not None and named.is_relative_to(base):
                return _hidden_parts(named.relative_to(base))
        return set()

    def read_bytes(self, path: Path, limit: int = -1) -> bytes:
        """The bytes (the first ``limit``) of a regular file inside the vault, checked on the
        opened file itself (so swapping a symlink in after the check changes nothing);
        ``VaultError`` if refused."""
        try:
            fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
        except (FileNotFoundError, ValueError):  # ValueError: a NUL byte in the name
            raise VaultError(MISSING) from None
        except OSError as exc:
            raise VaultError(f"cannot read file: {exc.strerror or exc}") from exc
        mode = os.fstat(fd).st_mode
        if not stat.S_ISREG(mode):
            os.close(fd)
            if stat.S_ISDIR(mode):
                raise VaultError("it is a folder now, not a file")
            raise VaultError("not a regular file (a pipe, device or socket)")
        with os.fdopen(fd, "rb") as f:
            real = _real_path(fd, path)
            reason = self.refuse_real(real, path)
            if reason:
                raise VaultError(reason)
            return f.read(limit)

    def relative(self, path: Path) -> str:
        """``path`` relative to the vault, POSIX separators."""
        return path.relative_to(self.root).as_posix()


def is_hidden(rel: str) -> bool:
    """Whether a vault-relative path goes through a hidden file or folder (never indexed)."""
    return bool(_hidden_parts(Path(rel)))


def _hidden_parts(rel: Path) -> set[str]:
    """The parts of a vault-relative path that make it hidden (see ``Boundary.refuse_real``)."""
    return {p for p in rel.parts if p.startswith(".") or p in SKIP_DIRS}


def _real_path(fd: int, fallback: Path) -> Path:
    """Where an open file really is (Linux: from /proc; elsewhere: resolve the name)."""
    try:
        return Path(os.readlink(f"/proc/self/fd/{fd}"))
    except OSError:
        return fallback.resolve()


def require_folder(root: Path) -> None:
    """Raise VaultError unless the vault folder ``root`` is there."""
    if not root.is_dir():
        raise VaultError(f"Vault folder {root} does not exist or is not a folder.")


def scan(site: Site, settings: Settings) -> tuple[list[FileInfo], list[tuple[str, str]]]:
    """List the vault's Markdown files (sorted), and the files skipped, each with a reason."""
    root = settings.vault
    require_folder(root)
    boundary = Boundary.of(settings)
    docs_dir = site.docs_dir.resolve()
    if not docs_dir.is_relative_to(boundary.root):
        raise VaultError(
            f"docs_dir {docs_dir} is outside the vault {boundary.root}; kb-qa reads only "
            "files inside the vault, the folder of the site's config. Keep the docs in a "
            "folder under the config's (move the config up beside them, or the docs down)."
        )
    ignore = ignored_by(settings)
    found: list[FileInfo] = []
    skipped: list[tuple[str, str]] = []
    no_notebooks: str | None = None  # why notebooks are not indexed here, asked once
    for path, refused in _walk(docs_dir, boundary):
        rel = boundary.relative(path)
        doc_rel = path.relative_to(docs_dir).as_posix()
        if ignore.match_file(rel) or site.excluded.match_file(doc_rel):
            continue
        if refused:
            skipped.append((shown_path(rel), refused))
            continue
        if rel.lower().endswith(docusaurus.MDX) and site.generator != "docusaurus":
            skipped.append((shown_path(rel), docusaurus.NOT_HERE))
            continue
        if notebooks.is_notebook(rel):
            if no_notebooks is None:
                no_notebooks = notebooks.not_indexed(site, settings)
            if no_notebooks:
                skipped.append((shown_path(rel), no_notebooks))
                continue
        try:
            st = path.stat()
        except OSError as exc:
            skipped.append((rel, f"cannot read file information: {exc.strerror or exc}"))
            continue
        if not stat.S_ISREG(st.st_mode):
            skipped.append((rel, "not a regular file (a pipe, device or socket)"))
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


def ignored_by(settings: Settings) -> pathspec.GitIgnoreSpec:
    """The vault's ``ignore`` patterns: a path they match is left out of the index."""
    import pathspec  # here, not at the top: a search never walks the vault

    return pathspec.GitIgnoreSpec.from_lines(settings.ignore)


# Why another generator's page is not indexed (``generators``): a Hugo or Docusaurus draft
# was said to be "a draft blog post: `zensical build` leaves it out"
LEFT_OUT = (
    "the site's build publishes no page for it (a draft, a headless bundle, a chapter the "
    "book's SUMMARY.md does not list): it is not indexed"
)


def _walk(top: Path, boundary: Boundary) -> Iterator[tuple[Path, str]]:
    """Markdown files (and Jupyter notebooks) under ``top`` with the reason each may not be
    read ("" if it may).

    Hidden folders, tool folders, Logseq's backups and the index are skipped; symlinked
    folders are followed only when they lead to a folder inside the vault not walked yet (so
    links cannot loop).
    """
    seen: set[Path] = set()
    unlisted: list[OSError] = []  # folders os.walk could not list (permissions)
    for dirpath, dirnames, filenames in os.walk(top, followlinks=True, onerror=unlisted.append):
        yield from _unlisted(unlisted)
        here = Path(dirpath)
        keep = []
        for d in sorted(dirnames):
            if d.startswith(".") or d in SKIP_DIRS or synced.is_logseq_backups(here / d):
                continue
            if undecodable(d):
                yield here / d, f"folder {BAD_NAME}"
                continue
            sub = here / d
            real = sub.resolve()
            if real.is_relative_to(boundary.index_dir):
                continue
            if sub.is_symlink():
                reason = boundary.refuse_real(real, sub)
                if reason:
                    yield sub, f"folder is a {reason}"
                    continue
                if real in seen or real.is_relative_to(top) or top.is_relative_to(real):
                    continue  # already indexed under its own name, or a loop
            seen.add(real)
            keep.append(d)
        dirnames[:] = keep
        sync_files = synced.not_read(filenames)
        for name in sorted(filenames):
            path = here / name
            if name in sync_files:
                yield path, sync_files[name]
                continue
            if not name.lower().endswith(_PAGES) or name.startswith(NOT_NOTES):
                continue
            if undecodable(name):
                yield path, f"file {BAD_NAME}"
            elif name.startswith("."):
                yield path, "hidden file (its name starts with '.')"
            elif path.is_symlink():
                yield path, boundary.refuse(path)
            else:
                yield path, ""
    yield from _unlisted(unlisted)  # the folder walked last, too


def _unlisted(errors: list[OSError]) -> Iterator[tuple[Path, str]]:
    """The folders the walk could not list, as skipped: what the index holds of them stays."""
    while errors:
        exc = errors.pop(0)
        yield Path(str(exc.filename)), f"{UNLISTED}: {exc.strerror or exc}"


def kept_by_unlisted(path: str, skipped: Sequence[tuple[str, str]]) -> bool:
    """Whether ``path`` (indexed before, not found now) lies in a folder that could not be
    listed: its notes are kept, as a file that cannot be read now loses nothing."""
    folders = [rel for rel, why in skipped if why.startswith(UNLISTED)]
    return any(f in ("", ".") or PurePosixPath(path).is_relative_to(f) for f in folders)


def shown_path(rel: str) -> str:
    """A path as a person can read it: bytes no encoding decodes shown as U+FFFD."""
    return rel.encode("utf-8", "surrogateescape").decode("utf-8", "replace")


def read_document(site: Site, info: FileInfo, boundary: Boundary) -> ReadResult:
    """Read and decode one file (inside the vault only); split off its front matter."""
    try:
        data = boundary.read_bytes(site.root / info.path)
    except VaultError as exc:
        return ReadResult(None, str(exc))
    if is_binary(data):
        return ReadResult(None, binary_reason(data), refused=True)
    text, decoded = decode(data)
    warnings = [decoded] if decoded else []
    text = source_text(text, notes=not site.is_mkdocs)
    front = front_matter.parse(text)
    if not site.is_mkdocs and front == front_matter.FrontMatter():
        front = front_matter.page_properties(text)  # Logseq writes them where others write YAML
    if front.warning:
        warnings.append(front.warning)
    if (url := site.page_url(info.doc_path, text, front.title, front.body_start)) is None:
        why = zensical_blog.DRAFT if site.routes is None else LEFT_OUT
        return ReadResult(None, why, refused=True)
    doc = Document(
        path=info.path,
        doc_path=info.doc_path,
        url=url,
        title=front.title,
        source=text,
        body_start=front.body_start,
        file_hash=hashlib.sha1(data).hexdigest(),
        size=len(data),
        mtime_ns=info.mtime_ns,
        aliases=front.aliases,
        tags=front.tags,
        note=not site.is_mkdocs,
        nav_title=site.nav.titles.get(info.doc_path, ""),
        file_title=file_title(info.doc_path, site.generator, info.doc_path in site.nav.in_section)
        if site.is_mkdocs
        else "",
        generator=site.generator,
    )
    return ReadResult(doc, "", tuple(warnings))


def source_text(text: str, notes: bool) -> str:
    """A file's text as it is indexed, and as ``/view`` renders it: without a byte order mark,
    a lone CR (classic Mac OS's line ending) read as the line ending it is (LF), and, in a
    notes vault, with Obsidian's ``%% comments %%`` blanked (``text.without_comments``):
    offsets stay the file's. A docs site's ``%%`` is its text: MkDocs shows it."""
    text = text.removeprefix("\ufeff")
    if "\r" in text:  # CRLF stays: every line is counted by its "\n"
        text = _LONE_CR.sub("\n", text)
    if not notes:
        return text
    front = front_matter.FRONT_MATTER.match(text)  # "%%" in front matter is a value, not a comment
    start = front.end() if front else 0
    return text[:start] + without_comments(text[start:])


def _size(n: int) -> str:
    """A byte count a person can compare: 15,008 bytes, 1.5 MB."""
    if n < 1_000_000:
        return f"{n:,} bytes"
    return f"{n / 1e6:.2f} MB"
