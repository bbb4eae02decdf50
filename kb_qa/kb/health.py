"""What a knowledge base says of itself to health checks (its problem, its counts), and
whether its searches keep the view they had while another process's index run is not done.

A run writes in groups of 400 sections, publishing a generation after each; a rebuild
begins by emptying the index. A server that loaded each generation as it came answered
from a third of a site (a `kb-qa index` of Textual's docs, cited blog posts for "How do I
add rows to a DataTable?") and said `ok`; a run stopped half-way (Ctrl-C) left it so for
good. Until such a run is done, the view loaded before it is served, and health says so.
"""

from __future__ import annotations

import threading
from typing import Any

from kb_qa.errors import IndexStateError
from kb_qa.index.store import Store
from kb_qa.kb.view import Loaded
from kb_qa.settings import Settings

__all__ = ["IndexHealth"]


class IndexHealth:
    """``problem``, ``stats`` and ``held_back`` of ``KnowledgeBase``."""

    settings: Settings
    store: Store
    _loaded: Loaded
    _one_run: threading.Lock

    def _stopped_half_way(self) -> bool:
        """Whether the last index run ended before it had written everything."""
        return "1" in (self.store.meta("writing"), self.store.meta("rebuilding"))

    def held_back(self) -> bool:
        """Whether searches keep the view loaded before another process's index run: one
        writing now (or rebuilding, which begins by emptying the index), or one stopped
        half-way (until an index run finishes it). Before it writes, the index is the last
        run's, whole: a server loads that one (``follow``), not an older one."""
        if self._loaded.keyword is None or self._one_run.locked():
            return False
        return self._stopped_half_way()

    def problem(self) -> str:
        """What keeps search from working fully right now ("" when nothing does)."""
        vault = self.settings.vault
        if not vault.is_dir() and self.settings.index_path.is_relative_to(vault):  # and index
            return f"the vault folder {vault} is missing; the index serves what it had"
        if not self.store.intact():
            return (
                f"the index folder {self.store.folder} was deleted; run `kb-qa index` "
                "(`kb-qa serve --watch` makes it again by itself)"
            )
        if self.store.being_written():  # a run writing now: counts mid-way are not a fault
            return ""
        if self._stopped_half_way() and not self._one_run.locked():
            kept = (
                "answers come from the index as it was before that run"
                if self._loaded.keyword is not None
                else "results may be incomplete"
            )
            return f"the last index run was stopped before it was done: {kept}. Run `kb-qa index`"
        try:
            problem = self.store.vector_problem()
        except IndexStateError as exc:
            return str(exc)
        # Answers go on from the loaded vectors meanwhile; an index run repairs it.
        return f"{problem}: run `kb-qa index` to repair it" if problem else ""

    def _served(self) -> tuple[int, int, str]:
        """Files, chunks and generation of the view searches read."""
        chunks = self._loaded.chunks
        return len({c.path for c in chunks}), len(chunks), self._loaded.generation

    def stats(self) -> dict[str, Any]:
        """Index status for health checks: the counts of what searches read."""
        last = self.store.meta("last_indexed")
        if self.held_back():  # not the half-written manifest's
            files, count, generation = self._served()
        else:
            db = self.store.db
            files = db.execute("SELECT COUNT(*) FROM files").fetchone()[0]
            count = db.execute("SELECT COUNT(*) FROM chunks").fetchone()[0]
            generation = self.store.meta("generation")
            if self._one_run.locked() and len(self._loaded.chunks) > count:
                # This object's own run fills an index it emptied (`serve --watch` making a
                # deleted index folder anew: health said "empty" while every answer was
                # cited): searches read the loaded view meanwhile.
                files, count, generation = self._served()
        return {
            "vault": str(self.settings.vault),
            "files": files,
            "chunks": count,
            "embed_model": self.store.meta("embed_model"),
            "last_indexed": float(last) if last else None,
            "chroma": self.settings.chroma_url or str(self.settings.index_path / "chroma"),
            "workspace": self.store.workspace,
            "generation": generation,
            "loaded": self._loaded.keyword is not None,
        }
