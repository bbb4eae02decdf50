"""The first index run of a server that is up before the run ends.

A cold index of a big site takes a minute or more (mkdocs-material's 1,855 sections: 52 s
on two cores; bigger sites and vaults, minutes). ``kb-qa mcp`` must answer its client's
handshake at once, ``kb-qa serve`` its health checks, and ``mkdocs serve`` should show the
site, so all start serving and run the first index in a thread: what asks meanwhile waits
for it (MCP tools) or is told how far it is (the HTTP API, while the index is still empty;
an index that held pages before is searched as it is).
"""

from __future__ import annotations

import logging
import sqlite3
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from kb_qa.errors import IndexBusyError, IndexStateError, KbQaError, database_failed

if TYPE_CHECKING:
    from kb_qa.kb.knowledge_base import KnowledgeBase
    from kb_qa.types import IndexReport

log = logging.getLogger(__name__)

__all__ = ["FirstIndex", "run", "serves_meanwhile"]

RETRY_SECONDS = 5  # what a client told "being built" is asked to wait before asking again


@dataclass
class FirstIndex:
    """How far the first index run is, shared by the thread that runs it and the server."""

    done: threading.Event = field(default_factory=threading.Event)
    error: str = ""  # what stopped it, said to every question
    failure: BaseException | None = None  # the exception of a run that failed (not stopped)
    progress: tuple[int, int] = (0, 0)  # sections embedded, of how many
    # Its pages are read and rendered: what is left is embedding and writing. A site's
    # render runs its hooks in this process, so `mkdocs serve` waits for this before its own
    # build starts beside the run.
    embedding: threading.Event = field(default_factory=threading.Event)
    had_pages: bool = False  # the index held pages before the run: they are served meanwhile
    report: IndexReport | None = None  # the run's, once it ended
    started: float = field(default_factory=time.perf_counter)
    # An edit saved while the run was going: the thread runs once more when it ends, as
    # only one run of an index may go at a time.
    again: bool = False
    lock: threading.Lock = field(default_factory=threading.Lock)
    # The server is stopping: the run ends after the batch it is embedding (what it
    # embedded is kept for the next start), never inside ONNX Runtime as the process exits.
    cancelled: threading.Event = field(default_factory=threading.Event)
    # A later run (an author's edit under `mkdocs serve`) is bringing the index up to date:
    # answers meanwhile say the docs changed a moment ago.
    refreshing: bool = False

    def note_progress(self, done: int, total: int) -> None:
        """An index run's progress callback: sections embedded, of how many."""
        self.progress = (done, total)
        self.embedding.set()

    def finish(self, report: IndexReport | None = None, error: str = "") -> None:
        """The run ended, with its report or what stopped it (called holding ``lock``)."""
        self.report, self.error = report, error
        self.embedding.set()
        self.done.set()

    def unanswerable(self) -> str:
        """Why questions cannot be answered yet, in words ("" when they can): the run is
        going, or failed, and the index held nothing before it."""
        if self.had_pages or (self.done.is_set() and not self.error):
            return ""
        if self.done.is_set():
            return self.error
        done, total = self.progress
        if total:
            far = f" ({done:,} of {total:,} sections embedded)"
        else:
            far = "" if self.embedding.is_set() else " (reading the pages)"
        return (
            f"The docs are still being indexed for the chat{far}. Ask again in a minute: "
            "answers start as soon as the index is built."
        )

    def as_dict(self) -> dict[str, int | bool | str]:
        """JSON-ready form, for ``/api/health``."""
        done, total = self.progress
        done_now = self.done.is_set()
        return {
            "done": done_now,
            "embedded": done,
            "to_embed": total,
            "error": self.error,
            "refreshing": self.refreshing,
        }


def serves_meanwhile(kb: KnowledgeBase) -> bool:
    """Whether ``kb``'s pages may be searched while its first run goes: it holds some, and
    the run will not empty it first (a rebuild after an upgrade or a new embedding model
    starts from nothing, so a search meanwhile found few pages or none)."""
    if not kb.store.files():
        return False
    try:
        return not kb.pending_rebuild()
    except KbQaError:  # a config the run cannot read either: it says so to every call
        return False


class Stopped(Exception):
    """Raised inside an index run whose server is stopping (``FirstIndex.cancelled``)."""


BUSY_RETRY_SECONDS = 1.0


def index_when_free(
    kb: KnowledgeBase,
    said_to: logging.Logger,
    progress: Callable[[int, int], None] | None = None,
    stop: threading.Event | None = None,
    waiting: Callable[[], None] | None = None,
) -> IndexReport:
    """``kb.index()``, waiting while another process updates the same index (two editor
    windows on one vault, a `kb-qa index` still running) instead of failing for good;
    ``stop`` ends the wait (``Stopped``), ``waiting`` hears that it began."""
    said = False
    while True:
        try:
            return kb.index(progress=progress)
        except IndexBusyError:
            if not said:
                said_to.warning(
                    "another kb-qa process is updating this index; waiting for it to finish"
                )
                said = True
                if waiting is not None:
                    waiting()
            if stop is None:
                time.sleep(BUSY_RETRY_SECONDS)
            elif stop.wait(BUSY_RETRY_SECONDS):
                raise Stopped from None


def run(
    kb: KnowledgeBase,
    first: FirstIndex,
    progress: Callable[[int, int], None] | None = None,
    ended: Callable[[FirstIndex], None] | None = None,
    index: Callable[[Callable[[int, int], None]], IndexReport] | None = None,
) -> None:
    """The first index run of ``kb``, in the calling thread (``first`` says how far it is);
    then the search is warmed up, and the index run once more if an edit came meanwhile
    (``again``), until none did. ``ended`` is called when it is over, failed or not.
    ``index(progress)`` makes the first run (default: ``index_when_free``)."""

    def note(done: int, total: int) -> None:
        if first.cancelled.is_set():
            raise Stopped
        first.note_progress(done, total)
        if progress is not None:
            progress(done, total)

    report: IndexReport | None = None
    error = ""
    try:
        # Another process updating the index (a `kb-qa index`, a second `mkdocs serve`) is
        # waited for: failing, the chat refused every question until restarted.
        # (``embedding``: whoever waits for this run to have rendered need not wait for it).
        wait = first.embedding.set
        report = (index or (lambda n: index_when_free(kb, log, n, first.cancelled, wait)))(note)
        first.embedding.set()
    except Stopped:
        error = "The server stopped before the index was built."
    except KbQaError as exc:  # said by the caller (``ended``), and to every question
        error, first.failure = f"The index could not be built: {exc}", exc
    except sqlite3.Error as exc:  # read-only or broken: what to do, without a traceback
        said = database_failed(exc)
        error, first.failure = f"The index could not be built: {said}", IndexStateError(said)
    except Exception as exc:  # never a question answered from half an index
        log.exception("the first index run failed")
        error, first.failure = f"The index could not be built: {exc}", exc
    if not error:
        try:  # the model and the search view, before the first question
            kb.search("warm up", 1)
        except KbQaError as exc:  # an empty vault: health says so, as it did at start
            log.warning("starting without a working index: %s", exc)
    while True:
        with first.lock:  # an edit sees the run done, or asks for one more
            if error or not first.again or first.cancelled.is_set():
                first.finish(report, error)
                break
            first.again = False
        try:  # the first run's index stands whatever becomes of this one
            kb.index(progress=note)
        except Stopped:
            pass
        except KbQaError as exc:  # the next edit tries again, as a rebuild's refresh does
            log.warning("could not update the chat's index: %s", exc)
        except Exception:
            log.exception("could not update the chat's index")
    if ended is not None:
        ended(first)
