"""Keeping the index in step with the vault: one observer records, one worker indexes.

The watchdog observer only notes that something relevant changed. A single worker waits
for a short quiet period (editors write a temp file, rename it, touch a backup...), then
runs the ordinary incremental ``KnowledgeBase.index()``, which re-reads what changed on
disk and re-embeds only changed chunks. Because that scan looks at the disk rather than
at the events, renamed folders, deleted trees and files replaced by folders all come out
right, and bursts of events coalesce into one run. A failed run is logged and retried;
it never stops the watcher.
"""

from __future__ import annotations

import errno
import logging
import os
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from watchdog.events import FileSystemEvent, FileSystemEventHandler
from watchdog.observers import Observer

from kb_qa.errors import IndexBusyError, KbQaError
from kb_qa.ingest.site import CONFIG_FILES, MARKDOWN_SUFFIXES
from kb_qa.ingest.vault import SKIP_DIRS
from kb_qa.types import IndexReport

log = logging.getLogger(__name__)

IGNORED_EVENTS = ("opened", "closed", "closed_no_write")


@dataclass(frozen=True)
class Freshness:
    """How current the index is, for ``/api/health`` and the widget."""

    last_change_seen: float | None
    last_change_indexed: float | None
    queue: int
    indexing: bool
    error: str  # why the last index run failed ("" when it did not)
    unwatched: str = ""  # why edits (or some of them) are not followed at all

    def as_dict(self) -> dict[str, Any]:
        """JSON-ready form."""
        return {
            "last_change_seen": self.last_change_seen,
            "last_change_indexed": self.last_change_indexed,
            "queue": self.queue,
            "indexing": self.indexing,
            "error": self.error,
            "unwatched": self.unwatched,
        }


def relevant(path: str, is_directory: bool) -> bool:
    """Whether a changed path can affect the index (nothing under ``node_modules`` or
    ``.git``, which the vault scan skips)."""
    if SKIP_DIRS.intersection(Path(path).parts):
        return False
    name = Path(path).name
    if is_directory:
        return not name.startswith(".")
    if name.startswith((".", "#")) or name.endswith("~") or name == "4913":
        return False  # editor swap/backup/probe files
    # .py: a site's hooks (and the modules mkdocs-click documents) change how pages render
    return name.lower().endswith((*MARKDOWN_SUFFIXES, ".py")) or name in CONFIG_FILES


class _Recorder(FileSystemEventHandler):
    def __init__(self, watcher: Watcher) -> None:
        self.watcher = watcher

    def on_any_event(self, event: FileSystemEvent) -> None:
        if event.event_type in IGNORED_EVENTS:
            return
        paths = [event.src_path, getattr(event, "dest_path", "") or ""]
        for path in paths:
            if path and relevant(str(path), event.is_directory):
                self.watcher.notify(str(path))


class Watcher:
    """Watch a KnowledgeBase's vault and keep its index current."""

    def __init__(
        self,
        kb: Any,
        debounce: float = 0.25,
        max_delay: float = 2.0,
        retry_delay: float = 2.0,
        given: Path | None = None,
    ) -> None:
        self.kb = kb
        self.vault: Path = kb.settings.vault
        # The vault as the user named it: a symlink there (git-sync's) may be re-pointed.
        self.given = Path(os.path.abspath(given)) if given is not None else None
        self.repointed = threading.Event()
        self.index_dir = kb.settings.index_path.resolve()
        self.debounce = debounce
        self.max_delay = max_delay
        self.retry_delay = retry_delay
        self.last_report: IndexReport | None = None
        self._pending: set[str] = set()
        self._first_pending = 0.0
        self._last_event = 0.0
        self._seen: float | None = None
        self._indexed: float | None = None
        self._indexing = False
        self._error = ""
        self._cond = threading.Condition()
        self._stop = threading.Event()
        self._observer: Any = None
        self._watched: tuple[int, int] | None = None  # the vault folder being watched
        self._limit = _LimitReached(self)
        self._limited = ""  # why part of the vault is not watched (the limit of watches)
        self._moved = ""  # the vault path now leads elsewhere (a re-pointed symlink)
        self._warned: set[tuple[str, str]] = set()  # the last run's warnings, logged already
        self._worker = threading.Thread(target=self._run, name="kb-qa-indexer", daemon=True)

    # -- recording --------------------------------------------------------------------------

    def notify(self, path: str) -> None:
        """Note a change (called from watchdog's thread; cheap and never blocking)."""
        if Path(path).resolve().is_relative_to(self.index_dir):
            return
        now = time.time()
        with self._cond:
            if not self._pending:
                self._first_pending = time.monotonic()
            self._pending.add(path)
            self._last_event = time.monotonic()
            self._seen = now
            self._cond.notify()

    # -- lifecycle --------------------------------------------------------------------------

    def start(self, initial: bool = True) -> Watcher:
        """Start watching; with ``initial``, first reconcile the index with the disk."""
        if initial:
            with self._cond:
                self._pending.add("<startup>")
                self._first_pending = self._last_event = 0.0
        self._schedule()
        self._worker.start()
        return self

    def stop(self) -> None:
        """Stop the observer and the worker."""
        self._stop.set()
        with self._cond:
            self._cond.notify_all()
        self._unschedule()
        if self._worker.is_alive():
            self._worker.join(timeout=30)

    def wait_idle(self, timeout: float = 30.0) -> bool:
        """Block until nothing is pending or being indexed (for tests and benchmarks)."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            with self._cond:
                if not self._pending and not self._indexing:
                    return True
            time.sleep(0.02)
        return False

    def freshness(self) -> Freshness:
        """Current freshness figures."""
        with self._cond:
            return Freshness(
                self._seen,
                self._indexed,
                len(self._pending),
                self._indexing,
                self._error,
                self._moved or self._limited,
            )

    def _schedule(self) -> None:
        if self._observer is not None or not self.vault.is_dir():
            return
        observer = Observer()
        observer.schedule(_Recorder(self), str(self.vault), recursive=True)
        observer.daemon = True
        identity = _identity(self.vault)
        try:
            observer.start()
        except OSError as exc:
            if exc.errno == errno.ENOENT:  # gone since: re-armed when it is back
                return
            if exc.errno not in (errno.ENOSPC, errno.EMFILE):
                raise
            self._unwatched(str(self.vault))  # the system's limit of watched folders
            return
        self._observer, self._watched = observer, identity
        logging.getLogger(_INOTIFY_LOG).addHandler(self._limit)

    def _unschedule(self) -> None:
        # stop() (the caller's thread) and a vault check (the worker's) may both get here.
        logging.getLogger(_INOTIFY_LOG).removeHandler(self._limit)
        with self._cond:
            observer, self._observer = self._observer, None
        if observer is not None:
            observer.stop()
            observer.join(timeout=5)

    def _check_link(self) -> None:
        """Say so when the vault's path now leads to another folder (git-sync re-points a
        symlink at each new revision): the index follows the folder kb-qa started on, so
        only a restart follows the link (``repointed`` is set for ``kb-qa watch`` to exit)."""
        if self.given is None or self._moved:
            return
        now = self.given.resolve()
        if now == self.vault or not now.is_dir():
            return
        self._moved = (
            f"the vault path {self.given} now leads to {now}, not to {self.vault} (a "
            "re-pointed symlink, as git-sync makes): restart kb-qa to index the new folder "
            "(its vectors are reused)"
        )
        log.error("%s", self._moved)
        self.repointed.set()

    def _watching(self) -> bool:
        """Whether the observer still watches the vault folder: the folder is the one it
        started on (a new inode, or the same number reused after a delete: its watch ended)."""
        emitters = list(self._observer.emitters)
        return (
            _identity(self.vault) == self._watched
            and self._observer.is_alive()
            and bool(emitters)
            and all(e.is_alive() for e in emitters)
        )

    def _unwatched(self, folder: str) -> None:
        """The system's limit of watched folders was reached (at ``folder``): say how to
        raise it; health shows it until a run succeeds after it is raised."""
        message = (
            f"cannot watch {folder}: the system's limit of watched folders is reached, so "
            "edits there are not followed. Raise it (sysctl fs.inotify.max_user_watches="
            "524288) and restart, or keep big folders such as node_modules out of the vault"
        )
        with self._cond:
            first, self._limited = not self._limited, message
        if first:
            log.error("%s", message)

    # -- the one writer ---------------------------------------------------------------------

    def _run(self) -> None:
        while not self._stop.is_set():
            batch = self._next_batch()
            if batch is None:
                continue
            self._index_once(batch)

    def _next_batch(self) -> set[str] | None:
        """Wait for changes, then for a quiet period; return them (None to loop again)."""
        with self._cond:
            while not self._pending and not self._stop.is_set():
                # Wake up now and then to notice a vault folder that disappeared/returned.
                if not self._cond.wait(timeout=self.retry_delay):
                    self._check_vault()
            if self._stop.is_set():
                return None
            now = time.monotonic()
            quiet = now - self._last_event
            waited = now - self._first_pending
            if quiet < self.debounce and waited < self.max_delay:
                self._cond.wait(timeout=min(self.debounce - quiet, self.max_delay - waited))
                return None
            batch, self._pending = self._pending, set()
            self._indexing = True
            return batch

    def _index_once(self, batch: set[str]) -> None:
        started = time.time()
        try:
            report = self.kb.index()
        except IndexBusyError:
            self._busy(batch)
            return
        except KbQaError as exc:
            self._failed(batch, str(exc))
            return
        except Exception as exc:  # the watcher must survive anything
            log.exception("indexing failed")
            self._failed(batch, f"indexing failed: {exc}")
            return
        self.last_report = report
        with self._cond:
            self._indexing = False
            self._indexed = started
            self._error = ""
        if report.changed_files or report.deleted or report.rebuilt or report.repaired:
            log.info(
                "re-indexed %d changed file(s): %d chunks embedded, %d reused, %d deleted "
                "(%.0f ms)",
                report.changed_files,
                report.embedded,
                report.reused,
                report.deleted,
                report.seconds * 1000,
            )
        # Bad UTF-8, front matter that is not YAML, a site config's extension that cannot
        # load: said once while it lasts, not again on every save.
        warned, self._warned = self._warned, set(report.warnings)
        for path, message in report.warnings:
            if (path, message) not in warned:
                log.warning("%s: %s", path, message)
        for path, reason in report.skipped:
            log.warning("skipped %s: %s", path, reason)

    def _busy(self, batch: set[str]) -> None:
        """Another process (a second server, `kb-qa index`) is writing the index: not a
        failure. Its run takes our edits in too; ours follows when it is done."""
        log.info("another kb-qa process is updating the index; indexing again after it")
        with self._cond:
            self._indexing = False
            self._pending |= batch
            self._first_pending = self._last_event = time.monotonic()
        self._stop.wait(self.retry_delay)

    def _failed(self, batch: set[str], message: str) -> None:
        # Said once, not at every retry (a full disk would log an error every 2 s).
        log.log(
            logging.DEBUG if message == self._error else logging.ERROR,
            "%s (will retry every %.0f s; the index keeps serving what it has)",
            message,
            self.retry_delay,
        )
        with self._cond:
            self._indexing = False
            self._error = message
            self._pending |= batch
            self._first_pending = self._last_event = time.monotonic()
        self._stop.wait(self.retry_delay)
        self._check_vault()

    def _check_vault(self) -> None:
        """Re-arm the observer when the vault folder comes back after vanishing."""
        if self._stop.is_set():
            return
        self._check_link()
        exists = self.vault.is_dir()
        if not exists and self._observer is not None:
            log.error("vault folder %s disappeared; serving the existing index", self.vault)
            self._unschedule()
            with self._cond:
                self._error = f"vault folder {self.vault} is missing"
        elif exists and self._observer is not None and not self._watching():
            # Replaced (restored from a backup, swapped in with mv): the observer still
            # watches the old folder, or nothing at all.
            log.info("vault folder %s was replaced; watching the new one, re-indexing", self.vault)
            self._unschedule()
            self._schedule()
            with self._cond:
                self._pending.add("<vault-replaced>")
                self._first_pending = self._last_event = 0.0
        elif exists and self._observer is None and not self._limited:
            log.info("vault folder %s is back; re-indexing", self.vault)
            self._schedule()
            with self._cond:
                self._pending.add("<vault-returned>")
                self._first_pending = self._last_event = 0.0
        elif exists and not self.kb.store.intact():
            # Someone deleted the index folder: index() makes it again and re-indexes.
            with self._cond:
                self._pending.add("<index-folder-deleted>")
                self._first_pending = self._last_event = 0.0
        elif exists and self.kb.store.vectors.vanished():
            # Only the Chroma folder went: index() reopens it and puts the vectors back.
            with self._cond:
                self._pending.add("<vector-store-deleted>")
                self._first_pending = self._last_event = 0.0


_INOTIFY_LOG = "watchdog.observers.inotify"


def _identity(folder: Path) -> tuple[int, int] | None:
    """The folder's device and inode: another folder under the same name has others."""
    try:
        st = folder.stat()
    except OSError:
        return None
    return st.st_dev, st.st_ino


class _LimitReached(logging.Handler):
    """watchdog only logs a folder it could not watch once it runs ("Unable to watch
    ...: inotify watch limit reached"): this turns that into the watcher's error."""

    def __init__(self, watcher: Watcher) -> None:
        super().__init__(logging.WARNING)
        self.watcher = watcher

    def emit(self, record: logging.LogRecord) -> None:
        if record.getMessage().startswith("Unable to watch") and record.args:
            folder = Path(os.fsdecode(record.args[0]))  # watchdog's paths are bytes
            if folder.is_relative_to(self.watcher.vault):  # not another watcher's vault
                self.watcher._unwatched(str(folder))
