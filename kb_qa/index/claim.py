"""The workspace in Chroma: an index run claims its workspace before it writes, moves an
index that lives elsewhere (an old collection named after the vault's path, a workspace
renamed), and publishes what readers of the workspace need (site URL, link style).
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import logging
import socket
import sqlite3
from dataclasses import asdict, replace
from pathlib import Path
from typing import TYPE_CHECKING

from kb_qa.errors import ConfigError
from kb_qa.index.workspace import MANIFEST, RECORDS_VERSION, WorkspaceRecord, writer_source

if TYPE_CHECKING:
    from kb_qa.index.chroma import Collection
    from kb_qa.settings import Settings

log = logging.getLogger(__name__)


def legacy_collection_name(vault: Path) -> str:
    """The collection kb-qa used before workspaces had names (one per vault path)."""
    digest = hashlib.sha1(str(vault.resolve()).encode()).hexdigest()[:10]
    stem = "".join(ch if ch.isalnum() else "-" for ch in vault.resolve().name.lower())[:40]
    return f"kbqa-{stem.strip('-') or 'vault'}-{digest}"


class WorkspaceClaim:
    """The workspace steps of ``kb_qa.index.store.Store`` (its settings, manifest and Chroma)."""

    # Set by Store.__init__
    settings: Settings
    folder: Path
    workspace: str
    name: str
    vectors: Collection

    if TYPE_CHECKING:  # Store's and its Manifest's

        @property
        def db(self) -> sqlite3.Connection: ...
        @property
        def writer_id(self) -> str: ...
        def meta(self, key: str) -> str: ...
        def set_meta(self, **values: str) -> None: ...
        def reset(self, keep_vectors: bool) -> None: ...

    def settle_workspace(self, explicit: bool) -> str:
        """Before a write: claim the workspace and move an index that lives elsewhere.

        Returns why the index is rewritten ("" when it is not); cached embeddings are
        reused, so nothing is embedded again.
        """
        why = self._claim(explicit)
        moved = self._moved()
        if moved and not why:
            previous = self.meta("collection") or legacy_collection_name(self.settings.vault)
            # A renamed workspace on a server may still have replicas reading it: it stays
            # as it was (deleted, they lost it mid-serve, and re-indexing it for them
            # deleted the new one in turn). Anywhere else its old collection is litter.
            kept = bool(self.settings.chroma_url) and self.meta("records") == RECORDS_VERSION
            if previous != self.name and not kept:
                self.vectors.delete_other(previous)
            elif previous != self.name:
                was = previous.removeprefix("kbqa-")
                moved += (
                    f"; workspace {was!r} stays on the server as it was, for any replica "
                    f"still reading it (point them at {self.workspace!r})"
                )
            self.reset(keep_vectors=True)
            why = moved
        self.set_meta(records=RECORDS_VERSION, collection=self.name)
        return why

    def _moved(self) -> str:
        """Why the index must be rewritten into this workspace's collection ("" if not).

        Indexes from before workspaces had names live in a collection named after the
        vault's path and hold only vectors; a renamed workspace lives under the old name.
        """
        if not self.db.execute("SELECT 1 FROM chunks LIMIT 1").fetchone():
            return ""
        if self.meta("records") != RECORDS_VERSION:
            return (
                f"the index now lives in workspace {self.workspace!r} and keeps each chunk's "
                "text in Chroma"
            )
        previous = self.meta("collection")
        if previous and previous != self.name:
            was = previous.removeprefix("kbqa-")
            return f"the workspace is now {self.workspace!r} (was {was!r})"
        return ""

    def _claim(self, explicit: bool) -> str:
        """Make sure this vault may write the workspace on a shared Chroma server.

        Another vault's workspace of the same name is refused, unless the ``workspace``
        setting names it on purpose (then this vault takes it over: returns why the index
        is rebuilt).
        """
        if not self.settings.chroma_url:
            return ""  # an embedded index belongs to its folder
        record = self.vectors.record()
        if not record.writer or record.writer == self.writer_id:
            return ""
        same_vault = record.source == writer_source(self.settings.vault)
        other = self._live_index_folder(record)
        if not explicit and same_vault and other:
            # Two index folders of one vault would rewrite the workspace in turn, each run
            # a full rebuild under the replicas; a folder deleted to start afresh is fine.
            raise ConfigError(
                f"Workspace {self.workspace!r} on {self.settings.chroma_url} is written from "
                f"this vault's index folder {other}, not {self.folder}. Use that one "
                f"(--index-dir {other}), or pass --workspace {self.workspace} to make this "
                "folder its writer from now on."
            )
        if not explicit and not same_vault:
            raise ConfigError(
                f"The Chroma server at {self.settings.chroma_url} already holds workspace "
                f"{self.workspace!r}, written from {record.source or 'another index folder'}. "
                "Give this vault its own name with --workspace NAME (KBQA_WORKSPACE), or pass "
                f"--workspace {self.workspace} to make this vault its writer from now on."
            )
        self.reset(keep_vectors=True)
        return (
            f"this vault takes over workspace {self.workspace!r} from "
            f"{record.source or 'another index folder'}: rewriting it"
        )

    def _live_index_folder(self, record: WorkspaceRecord) -> str:
        """The record's writer's index folder when it is on this machine and still holds
        that writer's index ("" when it is gone, elsewhere or unknown)."""
        host, _, path = record.index.partition(":")
        if not path or host != socket.gethostname() or not Path(path).is_absolute():
            return ""
        manifest = (Path(path) / MANIFEST).as_uri() + "?mode=ro"
        try:
            with contextlib.closing(sqlite3.connect(manifest, uri=True)) as db:
                row = db.execute("SELECT value FROM meta WHERE key='writer'").fetchone()
        except sqlite3.Error:
            return ""
        return path if row and row[0] == record.writer else ""

    def mark_writing(self) -> None:
        """Tell the replicas of a shared workspace that its records are being changed: they
        keep serving what they loaded (one that starts meanwhile waits) until ``publish``.
        A replica loading mid-run got old and new records mixed under the old generation."""
        if not self.settings.chroma_url:
            return
        record = replace(
            self.vectors.record(),
            writer=self.writer_id,
            source=writer_source(self.settings.vault),
            writing="1",
        )
        self.vectors.publish(record)

    def publish(self, site_url: str, link_style: str, untouched: bool = False) -> None:
        """Tell readers what the workspace holds now (only when it changed; ``untouched``:
        the embedded Chroma is as this index left it, so its record is the one written)."""
        record = WorkspaceRecord(
            generation=self.meta("generation"),
            site_url=site_url,
            link_style=link_style,
            embed_model=self.meta("embed_model"),
            embed_build=self.meta("embed_build"),
            writer=self.writer_id,
            source=writer_source(self.settings.vault),
            vault=str(self.settings.vault),
            records=RECORDS_VERSION,
            index=writer_source(self.folder.resolve()),
            languages=self.meta("languages"),
        )
        if untouched and self.meta("published") == json.dumps(asdict(record)):
            return
        if self.vectors.record() != record:
            self.vectors.publish(record)
        self.set_meta(published=json.dumps(asdict(record)))
