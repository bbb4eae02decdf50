"""What the watcher sees: which changed paths matter to the index, a folder's identity (to
tell a replaced vault folder from the one being watched), how current the index is
(``Freshness``, for ``/api/health`` and the widget), and what its log says."""

from __future__ import annotations

import logging
import os
import re
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, cast

from kb_qa.ingest import docusaurus, generators, notebooks, synced
from kb_qa.ingest.note_templates import SETTINGS
from kb_qa.ingest.site import CONFIG_FILES, MARKDOWN_SUFFIXES
from kb_qa.ingest.vault import NOT_NOTES, SKIP_DIRS
from kb_qa.types import IndexReport

log = logging.getLogger("kb_qa.ingest.watch")  # the watcher's log, as users filter it
IGNORED_EVENTS = ("opened", "closed", "closed_no_write")
TEMPLATE_SETTINGS = frozenset(settings for settings, _key, _kind in SETTINGS)


@dataclass(frozen=True)
class Freshness:
    """How current the index is, for ``/api/health`` and the widget."""

    last_change_seen: float | None
    last_change_indexed: float | None
    queue: int
    indexing: bool
    error: str  # why the last index run failed ("" when it did not)
    unwatched: str = ""  # why edits (or some of them) are not followed at all
    embedded: int = 0  # sections the running index run has embedded so far
    to_embed: int = 0  # of these (0 when no run is embedding)

    def as_dict(self) -> dict[str, Any]:
        """JSON-ready form."""
        return {
            "last_change_seen": self.last_change_seen,
            "last_change_indexed": self.last_change_indexed,
            "queue": self.queue,
            "indexing": self.indexing,
            "error": self.error,
            "unwatched": self.unwatched,
            "embedded": self.embedded,
            "to_embed": self.to_embed,
        }


# A run embedding at least this many sections says how far it has got, this often.
PROGRESS_SECTIONS = 500
PROGRESS_SECONDS = 30.0


@dataclass
class Embedding:
    """How far an index run's embedding has got: a 5 MB note is thousands of sections, and
    minutes of a run that said nothing (the log, ``/api/health``'s freshness)."""

    done: int = 0
    total: int = 0
    said: float = field(default_factory=time.monotonic)

    def update(self, done: int, total: int) -> None:
        self.done, self.total = done, total
        now = time.monotonic()
        if total >= PROGRESS_SECTIONS and 0 < done < total and now - self.said >= PROGRESS_SECONDS:
            log.info("indexing: %s of %s sections embedded", f"{done:,}", f"{total:,}")
            self.said = now


INOTIFY_LOG = "watchdog.observers.inotify"


class LimitReached(logging.Handler):
    """watchdog only logs a folder it could not watch once it runs ("Unable to watch
    ...: inotify watch limit reached"): this hands such a folder inside ``vault`` to
    ``unwatched`` (the watcher's error)."""

    def __init__(self, vault: Path, unwatched: Callable[[str], None]) -> None:
        super().__init__(logging.WARNING)
        self.vault, self.unwatched = vault, unwatched

    def emit(self, record: logging.LogRecord) -> None:
        if record.getMessage().startswith("Unable to watch") and record.args:
            args = cast("tuple[str | bytes, ...]", record.args)  # ("…%s…", path), never a dict
            folder = Path(os.fsdecode(args[0]))  # watchdog's paths are bytes
            if folder.is_relative_to(self.vault):  # not another watcher's vault
                self.unwatched(str(folder))


def relevant(path: str, is_directory: bool) -> bool:
    """Whether a changed path can affect the index (nothing under ``node_modules``, ``.git``
    or Logseq's backups, which the vault scan skips)."""
    if Path(path).as_posix() in TEMPLATE_SETTINGS:
        return True  # a templates folder chosen in Obsidian: its notes leave the index
    parts = Path(path).parts
    if SKIP_DIRS.intersection(parts) or synced.in_logseq_backups(parts):
        return False
    name = Path(path).name
    if is_directory:
        return not name.startswith(".")
    if name.startswith((".", "#", *NOT_NOTES)) or name.endswith("~") or name == "4913":
        return False  # editor swap/backup/probe files, Office's "~$note.md" lock
    # .py: a site's hooks (and the modules mkdocs-click documents) change how pages render;
    # .ipynb: a notebook mkdocs-jupyter publishes is a page (its edits were not re-indexed);
    # .mdx and a Docusaurus config: a Docusaurus site's pages and where it serves them
    pages = (*MARKDOWN_SUFFIXES, notebooks.SUFFIX, docusaurus.MDX, ".py")
    configs = (*CONFIG_FILES, *generators.CONFIG_FILES)
    return name.lower().endswith(pages) or name in configs


def identity(folder: Path) -> tuple[int, int] | None:
    """The folder's device and inode: another folder under the same name has others."""
    try:
        st = folder.stat()
    except OSError:
        return None
    return st.st_dev, st.st_ino


_CONTROL = re.compile(r"[\x00-\x1f\x7f]")


def shown(path: str) -> str:
    """A path for a log line: a newline in a file name cannot forge a line of its own."""
    return _CONTROL.sub(lambda m: f"\\x{ord(m.group()):02x}", path)


def limit_message(folder: str, instances: bool) -> str:
    """Why ``folder`` is not watched: the system's limit of watched folders, or of inotify
    instances, was reached; how to raise it."""
    if instances:
        return (
            f"cannot watch {folder}: the system's limit of inotify instances is reached "
            "(editors and sync tools use them too), so edits are not followed. Raise it "
            "(sysctl fs.inotify.max_user_instances=1024) and restart"
        )
    return (
        f"cannot watch {folder}: the system's limit of watched folders is reached, so "
        "edits there are not followed. Raise it (sysctl fs.inotify.max_user_watches="
        "524288) and restart, or keep big folders such as node_modules out of the vault"
    )


def reindexed(report: IndexReport) -> str:
    """The watcher's line for an index run that changed something ("" for one that did
    not): notes changed and removed, then what happened to their sections."""
    r = report
    if not (r.changed_files or r.removed_files or r.deleted or r.rebuilt or r.repaired):
        return ""
    removed = f", {r.removed_files} removed" if r.removed_files else ""
    return (
        f"re-indexed {r.changed_files} changed file(s){removed}: {r.embedded} section(s) "
        f"embedded, {r.reused} reused, {r.deleted} deleted ({r.seconds * 1000:.0f} ms)"
        + (f". Rebuilt: {r.rebuilt}" if r.rebuilt else "")  # said here alone
    )


def said(report: IndexReport) -> set[tuple[str, str, str]]:
    """A run's warnings and skipped files as the watcher says them: (kind, path, message)."""
    return {("", *w) for w in report.warnings} | {("skipped ", *w) for w in report.skipped}
