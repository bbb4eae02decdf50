"""Helpers shared by the answer/API tests and bench/api.py: the sample vault, SSE parsing."""

from __future__ import annotations

import json
import shutil
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from kb_qa.kb import KnowledgeBase

SAMPLE_SITE = Path(__file__).resolve().parents[1] / "sample_site"


def indexed_sample(root: Path, **settings: Any) -> KnowledgeBase:
    """A copy of sample_site under ``root``, indexed (hash embedder unless told otherwise)."""
    vault = root / "vault"
    shutil.copytree(SAMPLE_SITE, vault, ignore=shutil.ignore_patterns(".kb-qa", "site"))
    settings.setdefault("embed_model", "hash")
    kb = KnowledgeBase(vault, index_dir=root / "index", **settings)
    kb.index()
    return kb


def parse_sse(lines: Iterable[str]) -> list[tuple[str, Any]]:
    """(event name, decoded data) for each Server-Sent Event in ``lines``."""
    events = []
    name, data = "message", []
    for line in lines:
        if line == "":
            if data:
                events.append((name, json.loads("\n".join(data))))
            name, data = "message", []
        elif line.startswith("event:"):
            name = line.removeprefix("event:").strip()
        elif line.startswith("data:"):
            data.append(line.removeprefix("data:").removeprefix(" "))
        else:
            raise AssertionError(f"not an SSE line: {line!r}")
    if data:
        events.append((name, json.loads("\n".join(data))))
    return events
