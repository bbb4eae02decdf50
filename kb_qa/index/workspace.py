"""A workspace: one named index, and how it is laid out in Chroma for readers.

The workspace name (``workspace`` setting, else the site's ``site_name``, else the vault
folder's name, slugged) names the Chroma collection, so a second machine with the docs in
another folder finds the same index. Each Chroma record carries everything a reader needs
(the chunk's text as the document; heading path, anchor, offsets, lines, URL and page
title as metadata), and the collection's metadata is the workspace record (site_url, link
style, embedding model, generation, writer). A read-only replica serves from that alone.
"""

from __future__ import annotations

import json
import re
import socket
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from kb_qa.types import Chunk

# Bump when what a Chroma record holds changes; older indexes are rebuilt once.
RECORDS_VERSION = "1"
MAX_NAME = 50
_PREFIX = "kbqa:"
_NOT_SLUG = re.compile(r"[^a-z0-9]+")


def slug(text: str) -> str:
    """Lowercase ASCII letters, digits and single dashes ("My Docs!" -> "my-docs")."""
    return _NOT_SLUG.sub("-", text.lower()).strip("-")[:MAX_NAME].strip("-")


def workspace_name(explicit: str, site_name: str, vault: Path) -> str:
    """The workspace's name: the setting, else the site's name, else the vault folder's."""
    for candidate in (explicit, site_name, vault.name):
        name = slug(candidate)
        if name:
            return name
    return "vault"


def collection_name(workspace: str) -> str:
    """The Chroma collection of a workspace (Chroma wants 3-512 safe characters)."""
    return f"kbqa-{workspace}"


MANIFEST = "manifest.sqlite3"  # the index folder's file that says an index is there


def writer_source(folder: Path) -> str:
    """Where a writer runs, for messages: ``host:/path/to/vault`` (or its index folder)."""
    return f"{socket.gethostname()}:{folder}"


@dataclass(frozen=True)
class WorkspaceRecord:
    """What a replica needs besides the chunks; kept as the collection's metadata."""

    generation: str = ""  # changes whenever the writer changed the records
    site_url: str = ""
    link_style: str = ""  # the writer's automatic link style ("site" or "file")
    embed_model: str = ""
    embed_build: str = ""  # embeddings.MODEL_BUILDS: another build of a model, other vectors
    writer: str = ""  # id of the writer's manifest: two vaults cannot share a workspace
    source: str = ""  # host:/path of the writer's vault, for messages
    vault: str = ""  # the writer's vault path (file-style links point there)
    records: str = ""  # RECORDS_VERSION the records were written with
    index: str = ""  # host:/path of the writer's index folder
    writing: str = ""  # "1" while the writer changes the records (replicas keep what they have)
    languages: str = ""  # a translated site's languages (i18n_layout.Languages.as_json)

    def metadata(self) -> dict[str, str]:
        """As Chroma collection metadata (flat strings, prefixed)."""
        return {_PREFIX + k: v for k, v in asdict(self).items()}

    @classmethod
    def of(cls, metadata: dict[str, Any] | None) -> WorkspaceRecord:
        """Read back from collection metadata (missing keys are empty)."""
        given = metadata or {}
        names = cls.__dataclass_fields__
        return cls(**{k: str(given.get(_PREFIX + k, "")) for k in names})


def chunk_record(chunk: Chunk, title: str, order: int) -> tuple[str, dict[str, str | int]]:
    """A chunk as a Chroma document (its text) and metadata (everything else)."""
    return chunk.text, {
        "path": chunk.path,
        "url": chunk.url,
        "anchor": chunk.anchor,
        "heading": chunk.heading,
        "heading_path": json.dumps(list(chunk.heading_path), ensure_ascii=False),
        "level": chunk.level,
        "start": chunk.start,
        "end": chunk.end,
        "line_start": chunk.line_start,
        "line_end": chunk.line_end,
        "hash": chunk.hash,
        "piece": chunk.piece,
        "context": chunk.context,
        "own_title": chunk.own_title,
        "title": title,
        "ord": order,
    }


def chunk_from_record(chunk_id: str, document: str, meta: dict[str, Any]) -> Chunk:
    """The chunk a Chroma record describes (the inverse of :func:`chunk_record`)."""
    return Chunk(
        id=chunk_id,
        path=str(meta["path"]),
        url=str(meta["url"]),
        anchor=str(meta["anchor"]),
        heading=str(meta["heading"]),
        heading_path=tuple(json.loads(str(meta["heading_path"]))),
        level=int(meta["level"]),
        text=document,
        start=int(meta["start"]),
        end=int(meta["end"]),
        line_start=int(meta["line_start"]),
        line_end=int(meta["line_end"]),
        hash=str(meta["hash"]),
        piece=int(meta["piece"]),
        context=str(meta["context"]),
        own_title=str(meta.get("own_title") or ""),
    )
