"""Files that hold what readers wrote (their questions, ratings): readable by the server's
user alone, whatever its umask."""

from __future__ import annotations

import contextlib
import os
from pathlib import Path

__all__ = ["made_private"]


def made_private(path: Path) -> Path:
    """``path``, the readers' database, created readable by its owner alone when it is not
    there: made by SQLite, it took the server's umask (usually readable by every user of the
    machine). SQLite gives its -wal and -shm files the database's mode."""
    # The index folder may have been deleted under a running server: make it again.
    path.parent.mkdir(parents=True, exist_ok=True)
    with contextlib.suppress(FileExistsError):
        os.close(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600))
    return path
