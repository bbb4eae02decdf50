"""Keeping the index in step with the vault: one observer records, one worker indexes.

The watchdog observer only notes that something relevant changed. A single worker waits
for a short quiet period (editors write a temp file, rename it, touch a backup...), then
runs the ordinary incremental ``KnowledgeBase.index()``, which re-reads what changed on
disk and re-embeds only changed chunks. Because that scan looks at the disk rather than
at the events, renamed folders, deleted trees and files replaced by folders all come out
right, and bursts of events coalesce into one run. A failed run is logged and retried.
"""

from __future__ import annotations

import contextlib
import errno
import logging
import os
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from watchdog.events import FileSystemEvent, FileSystemEventHandler
from watchdog.observers import Observer

from kb_qa.errors import IndexBusyError, KbQaError
from kb_qa.ingest import changes
from kb_qa.ingest.changes import IGNORED_EVENTS, Freshness, identity, relevant
from kb_qa.types import IndexReport, Watched

log = logging.getLogger(__name__)


class _Recorder(FileSystemEventHandler):
    def __init__(self, watcher: Watcher) -> None:
        self.watcher = watcher

    def on_any_event(self, event: FileSystemEvent) -> None:
        if event.event_type in IGNORED_EVENTS:
            return
        paths = [event.src_path, getattr(event, "dest_path", "") or ""]
        try:
            for path in paths:
                if path and relevant(self.watcher.inside(str(path)), event.is_directory):
                    self.watcher.notify(str(path))
        except Exception:  # watchdog's thread must never die: the next run scans the disk
            log.debug("an event could not be recorded; indexing anyway", exc_info=True)
            self.watcher.notify("<unrecorded event>")


class Watcher:
    """Watch a KnowledgeBase's vault and keep its index current."""

    def __init__(
        self,
        kb: Watched,
        debounce: float = 0.25,
        max_delay: float = 2.0,
        retry_delay: float = 2.0,
        given: Path | None = None,
        after: Callable[[IndexReport], None] | None = None,
    ) -> None:
        self.kb = kb
        self.after = after  # called after each run that changed the index
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
        self._waiting = False  # for another process's run: said once (_busy)
        self._cond = threading.Condition()
        self._stop = threading.Event()
        self._observer: Any = None
        self._watched: tuple[int, int] | None = None  # the vault folder being watched
        self._limit = changes.LimitReached(self.vault, self._unwatched)
        self._limited = ""  # why part of the vault is not watched (the limit of watches)
        self._moved = ""  # the vault path now leads elsewhere (a re-pointed symlink)
        self._warned: set[tuple[str, str, str]] = set()  # last run's warnings, skips: said
        self._embedding = changes.Embedding()  # how far the running index run has got
        self._worker = threading.Thread(target=self._run, name="kb-qa-indexer", daemon=True)

    # -- recording --------------------------------------------------------------------------

    def inside(self, path: str) -> str:
        """``path`` relative to the vault when in it (a vault under node_modules: its parts)."""
        with contextlib.suppress(ValueError):
            return str(Path(path).relative_to(self.vault))
        return path

    def _run_now(self, reason: str) -> None:
        """Queue an index run that waits for no quiet period (``reason`` names it)."""
        with self._cond:
            self._pending.add(reason)
            self._first_pending = self._last_event = 0.0

    def notify(self, path: str) -> None:
        """Note a change (called from watchdog's thread; cheap and never blocking)."""
        try:
            real = Path(path).resolve()
        except (OSError, RuntimeError):  # a symlink loop: the scan reports it
            real = Path(os.path.abspath(path))
        if real.is_relative_to(self.index_dir):
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

    def observe(self) -> Watcher:
        """Record changes from now on: what is saved during a first run is indexed next."""
        self._schedule()
        return self

    def start(self, initial: bool = True, said: IndexReport | None = None) -> Watcher:
        """Start watching; with ``initial``, first reconcile the index with the disk. ``said``:
        a run whose warnings and skips the caller said (serve's first: said again at a save)."""
        if said is not None:
            self._warned = changes.said(said)
        if initial:
            self._run_now("<startup>")
        self._schedule()
        self._worker.start()
        return self

    def stop(self, wait: float | None = 30.0) -> bool:
        """Stop the observer and the worker (a run ends at its next batch of embeddings, or
        when done); False when it is still in a run after ``wait`` s: do not close under it."""
        self._stop.set()
        with self._cond:
            self._cond.notify_all()
            busy = self._indexing
        if busy:
            log.info("stopping: the index run ends at its next batch of embeddings, or when done")
        self._unschedule()
        if self._worker.is_alive():
            self._worker.join(timeout=wait)
        return not self._worker.is_alive()

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
                *((self._embedding.done, self._embedding.total) if self._indexing else ()),
            )

    def _schedule(self) -> None:
        if self._observer is not None or not self.vault.is_dir():
            return
        observer = Observer()
        observer.daemon = True
        folder = identity(self.vault)
        try:  # watchdog raises a kernel limit from schedule() or start()
            observer.schedule(_Recorder(self), str(self.vault), recursive=True)
            observer.start()
        except OSError as exc:
            with contextlib.suppress(Exception):  # its inotify thread and descriptor go too
                observer.stop()
            if exc.errno == errno.ENOENT:  # gone since: re-armed when it is back
                return
            if exc.errno not in (errno.ENOSPC, errno.EMFILE):
                raise
            self._unwatched(str(self.vault), instances=exc.errno == errno.EMFILE)
            return
        self._observer, self._watched = observer, folder
        logging.getLogger(changes.INOTIFY_LOG).addHandler(self._limit)
        if self._stop.is_set():  # stop() ran meanwhile (a vault check racing it): undo
            self._unschedule()

    def _unschedule(self) -> None:
        # stop() (the caller's thread) and a vault check (the worker's) may both get here.
        logging.getLogger(changes.INOTIFY_LOG).removeHandler(self._limit)
        with self._cond:
            observer, self._observer = self._observer, None
        if observer is not None:
            observer.stop()
            observer.join(timeout=5)

    def _check_link(self) -> None:
        """Say so when the vault's path now leads to another folder (git-sync re-points a
        symlink at each new revision): the index follows the folder kb-qa started on, so
        ``repointed`` is set for ``kb-qa watch`` to open the index again on the new one."""
        if self.given is None or self._moved:
            return
        now = self.given.resolve()
        if now == self.vault or not now.is_dir():
            return
        self._moved = (
            f"the vault path {self.given} now leads to {now}, not to {self.vault} (a "
            "re-pointed symlink, as git-sync makes): kb-qa watch follows it; kb-qa serve "
            "serves the old folder's index until it is restarted (vectors are reused)"
        )
        log.error("%s", self._moved)
        self.repointed.set()

    def _watching(self) -> bool:
        """Whether the observer still watches the vault folder: the folder is the one it
        started on (a new inode, or the same number reused after a delete: its watch ended)."""
        emitters = list(self._observer.emitters)
        return (
            identity(self.vault) == self._watched
            and self._observer.is_alive()
            and bool(emitters)
            and all(e.is_alive() for e in emitters)
        )

    def _unwatched(self, folder: str, instances: bool = False) -> None:
        """The system's limit of watched folders (or of inotify instances) was reached at
        ``folder``: say how to raise it; health shows it until kb-qa restarts."""
        message = changes.limit_message(folder, instances)
        with self._cond:
            first, self._limited = not self._limited, message
        if first:
            log.error("%s", message)

    # -- the one writer ---------------------------------------------------------------------

    def _run(self) -> None:
        while not self._stop.is_set():
            try:
                batch = self._next_batch()
                if batch is not None:
                    self._index_once(batch)
            except Exception as exc:  # the one indexer thread must not die
                log.exception("the watcher hit an error; it goes on")
                with self._cond:
                    self._indexing = False
                    self._error = f"the watcher hit an error: {exc}"
                self._stop.wait(self.retry_delay)

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
            self._indexing, self._embedding = True, changes.Embedding()
            return batch

    def _index_once(self, batch: set[str]) -> None:
        started = time.time()
        try:
            report = self.kb.index(progress=self._unless_stopped)
        except _Stopped:  # the next start catches up with what changed
            with self._cond:
                self._indexing = False
            return
        except IndexBusyError:
            self._busy(batch)
            return
        except KbQaError as exc:
            self._failed(batch, str(exc))
            return
        except Exception as exc:  # the watcher must survive anything
            message = f"indexing failed: {exc}"
            if message != self._error:  # the traceback once, not at every retry
                log.exception("indexing failed")
            self._failed(batch, message)
            return
        self.last_report = report
        with self._cond:
            self._indexing = self._waiting = False
            self._indexed = started
            self._error = ""
        if said_done := changes.reindexed(report):
            log.info("%s", said_done)
            if self.after is not None:
                try:
                    self.after(report)
                except Exception:  # the index is current; what comes after it may fail
                    log.exception("after indexing")
        # Bad UTF-8, front matter that is not YAML, a site config's extension that cannot
        # load: said once while it lasts, not again on every save.
        said = changes.said(report)
        warned, self._warned = self._warned, said
        for kind, path, message in sorted(said - warned):
            log.warning("%s%s: %s", kind, changes.shown(path), message)

    def _unless_stopped(self, done: int, total: int) -> None:
        """An index run's progress: said now and then, and stopping ends it between two
        batches of embeddings."""
        self._embedding.update(done, total)
        if self._stop.is_set():
            raise _Stopped

    def _busy(self, batch: set[str]) -> None:
        """Another process (a second server, `kb-qa index`) is writing the index: not a
        failure. Its run takes our edits in too; ours follows when it is done. Said once
        while it lasts (a bulk update of another server's said it 120 times in 6 minutes)."""
        if not self._waiting:
            log.info("another kb-qa process is updating the index; indexing again after it")
        with self._cond:
            self._waiting = True
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

    def _back(self) -> None:
        """The vault folder is there again: health no longer says it is missing while the
        run it starts goes on (a folder cloned in place read "missing" for 12 s)."""
        with self._cond:  # the watcher's word for it, or the last run's (require_folder)
            if self._error.lower().startswith(f"vault folder {str(self.vault).lower()} "):
                self._error = ""

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
            # watches the old folder, or nothing at all; or the observer itself stopped.
            if identity(self.vault) == self._watched:
                log.warning("the file watcher stopped; restarting it and re-indexing")
            else:
                log.info("vault folder %s was replaced; watching it, re-indexing", self.vault)
            self._unschedule()
            self._schedule()
            self._back()
            self._run_now("<vault-replaced>")
        elif exists and self._observer is None and not self._limited:
            log.info("vault folder %s is back; re-indexing", self.vault)
            self._schedule()
            self._back()
            self._run_now("<vault-returned>")
        elif exists and not self.kb.store.intact():
            # Someone deleted the index folder: index() makes it again and re-indexes.
            self._run_now("<index-folder-deleted>")
        elif exists and self.kb.store.vectors_gone():
            # The Chroma folder went, or the server came back empty: index() puts them back.
            self._run_now("<vector-store-deleted>")


class _Stopped(Exception):
    """Raised into an index run when the watcher stops."""
