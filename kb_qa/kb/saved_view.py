"""The search view saved beside the index, so that a new process loads it instead of
building it again.

Building the view tokenises every section for the keyword index, reads every link and
gathers every vector: on a 30,000-note vault that is most of each `kb-qa search` or `ask`
(tens of seconds), while the index has not changed since the last one. The process that
builds the view of an index generation (`kb-qa index` after a run, or the first search)
writes it to ``view-<generation>/`` in the index folder; a process that opens that
generation later reads it back. What is written is data only (JSON and NumPy arrays,
read without pickle), and it is checked against the sections the manifest holds now:
anything that does not match, or cannot be read, is ignored and the view built as before.
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import json
import logging
import os
import shutil
import time
import uuid
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from kb_qa.index.keyword import KeywordIndex
from kb_qa.kb.view import Loaded
from kb_qa.settings import Settings
from kb_qa.types import Chunk

log = logging.getLogger(__name__)

FORMAT = "1"  # bump when what a view holds changes
# The modules that decide what a view holds (tokens, link counts, history pages): a view
# saved by another version of them (an upgrade that tokenises differently) is not read.
BUILT_BY = ("kb.view", "index.keyword", "index.retrieval", "text", "ingest.linkgraph")
PREFIX = "view-"
UNFINISHED = "view.unfinished-"
STALE_UNFINISHED = 3600.0  # seconds after which a folder a killed process left is removed


def folder_of(index: Path, generation: str) -> Path:
    """Where the view of ``generation`` is saved."""
    return index / f"{PREFIX}{generation}"


def is_saved(index: Path, generation: str) -> bool:
    """Whether a finished view of ``generation`` is saved (its contents are checked when
    it is loaded)."""
    return bool(generation) and (folder_of(index, generation) / "meta.json").is_file()


def _meta(
    generation: str, chunks: Sequence[Chunk], refused: frozenset[str], settings: Settings
) -> dict[str, object]:
    """What a saved view must match to be used: its generation, the sections in order
    (ids and content hashes), the paths refused and the settings the view depends on."""
    digest = hashlib.sha1()
    for c in chunks:
        digest.update(f"{c.id}\0{c.hash}\n".encode())
    return {
        "format": FORMAT,
        "code": _code(),
        "generation": generation,
        "chunks": digest.hexdigest(),
        "size": len(chunks),
        "refused": sorted(refused),
        "history_pages": list(settings.history_pages),
    }


@functools.cache
def _code() -> str:
    """A hash of the source of the ``BUILT_BY`` modules ("" when it cannot be read)."""
    digest = hashlib.sha1()
    root = Path(__file__).resolve().parent.parent
    for name in BUILT_BY:
        try:
            digest.update((root / (name.replace(".", "/") + ".py")).read_bytes())
        except OSError:
            return ""
    return digest.hexdigest()


def was_read(index: Path) -> bool:
    """Whether a view of some generation is saved here: a process other than the writer
    searched this index (``kb-qa search``, ``ask``, ``mcp``), so ``kb-qa index`` prepares
    the next one; an index nobody searches that way costs no view."""
    return any(p.is_dir() for p in index.glob(PREFIX + "*"))


def save(index: Path, view: Loaded, settings: Settings) -> bool:
    """Write ``view`` for later processes; False (and nothing left behind) when it cannot
    be written: a read-only index folder or a full disk costs the next process a rebuild,
    never a search."""
    if not view.generation or view.keyword is None or view.link_text is None:
        return False
    target = folder_of(index, view.generation)
    if is_saved(index, view.generation):
        return True
    work = index / f"{UNFINISHED}{uuid.uuid4().hex}"
    try:
        work.mkdir()
        view.keyword.save(work / "keyword")
        view.link_text.save(work / "links")
        np.save(work / "linked.npy", np.asarray(view.linked, np.float32), allow_pickle=False)
        if view.vectors is not None:
            np.save(work / "vectors.npy", view.vectors, allow_pickle=False)
        meta = _meta(view.generation, view.chunks, view.refused, settings)
        meta["history"] = sorted(view.history)
        meta["history_only"] = {t: sorted(ids) for t, ids in view.history_only.items()}
        # Written last: a folder without it is one a process did not finish.
        (work / "meta.json").write_text(json.dumps(meta, ensure_ascii=False), encoding="utf-8")
        try:
            work.rename(target)
        except OSError:  # another process saved the same generation meanwhile
            shutil.rmtree(work, ignore_errors=True)
    except (OSError, ValueError) as exc:
        log.debug("the search view could not be saved in %s: %s", index, exc)
        shutil.rmtree(work, ignore_errors=True)
        return False
    _remove_others(index, target.name)
    return True


def load(
    index: Path,
    generation: str,
    chunks: list[Chunk],
    refused: frozenset[str],
    settings: Settings,
) -> Loaded | None:
    """The saved view of ``generation`` over exactly ``chunks``, or None (none saved, or
    one that does not match what the index holds now, or cannot be read)."""
    if not is_saved(index, generation):
        return None
    folder = folder_of(index, generation)
    try:
        meta = json.loads((folder / "meta.json").read_text(encoding="utf-8"))
        wanted = _meta(generation, chunks, refused, settings)
        if any(meta.get(key) != value for key, value in wanted.items()):
            log.debug("the saved search view is not this index's: building it again")
            return None
        vectors = None
        if (folder / "vectors.npy").is_file():
            vectors = np.load(folder / "vectors.npy", allow_pickle=False)
            if vectors.shape[0] != len(chunks) or vectors.dtype != np.float32:
                return None
        linked = np.load(folder / "linked.npy", allow_pickle=False)
        if linked.shape != (len(chunks),):
            return None
        keyword = KeywordIndex.load(folder / "keyword", len(chunks))
        link_text = KeywordIndex.load(folder / "links", len(chunks))
        history_only = {str(t): set(ids) for t, ids in dict(meta["history_only"]).items()}
        return Loaded(
            generation=generation,
            chunks=chunks,
            by_id={c.id: i for i, c in enumerate(chunks)},
            keyword=keyword,
            history=set(meta["history"]),
            history_only=history_only,
            vectors=vectors,
            linked=linked,
            link_text=link_text,
            refused=refused,
            saved=True,
        )
    except (OSError, ValueError, KeyError, TypeError) as exc:
        log.debug("the saved search view in %s could not be read (%s): building it", folder, exc)
        return None


def _remove_others(index: Path, kept: str) -> None:
    """Remove the views of older generations, and folders a killed save left long ago."""
    now = time.time()
    for entry in index.iterdir():
        name = entry.name
        old = name.startswith(PREFIX) and name != kept
        with contextlib.suppress(OSError):
            if name.startswith(UNFINISHED):
                old = now - entry.stat().st_mtime > STALE_UNFINISHED
            if old and entry.is_dir() and not os.path.islink(entry):
                shutil.rmtree(entry, ignore_errors=True)
