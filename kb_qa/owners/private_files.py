"""Files that hold what readers wrote (their questions, ratings): readable by the server's
user alone, whatever its umask."""

from __future__ import annotations

import contextlib
import logging
import os
import stat
from pathlib import Path

log = logging.getLogger(__name__)

__all__ = ["made_private", "write_private"]


def made_private(path: Path) -> Path:
    """``path``, the readers' database, readable by its owner alone: created so when it is
    not there (made by SQLite, it took the server's umask, usually readable by every user
    of the machine; SQLite gives its -wal and -shm files the database's mode), and made so,
    once and said, when an older kb-qa left it readable by others."""
    # The index folder may have been deleted under a running server: make it again, but
    # never the folder holding it (a vault moved away must not come back as an empty one,
    # which its watcher would then index: FileNotFoundError instead).
    path.parent.mkdir(exist_ok=True)
    try:
        os.close(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600))
    except FileExistsError:
        _tightened(path)
    return path


def _tightened(path: Path) -> None:
    """An existing database and its -wal and -shm files made 0600 when others could read
    them (a file the server's user does not own, or cannot change, is left as it is)."""
    for file in (path, path.with_name(path.name + "-wal"), path.with_name(path.name + "-shm")):
        with contextlib.suppress(OSError):
            if file.stat().st_mode & 0o077 and os.name != "nt":
                os.chmod(file, 0o600)
                log.warning("%s was readable by other users of this machine: made it 0600", file)


def write_private(path: Path, text: str) -> None:
    """``text`` written to ``path`` (an exported report: every question and reason in it)
    readable by its owner alone: created 0600 whatever the umask, and a file already there
    made 0600 before it is written. A FIFO or device (``/dev/stdout``) keeps its mode."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as out:
        if stat.S_ISREG(os.fstat(fd).st_mode) and hasattr(os, "fchmod"):
            with contextlib.suppress(OSError):  # a file another user owns keeps its mode
                os.fchmod(fd, 0o600)
        out.write(text)
