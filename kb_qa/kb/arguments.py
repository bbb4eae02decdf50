"""The arguments of a library call to ``KnowledgeBase.search``, checked before use."""

from __future__ import annotations

import contextlib
from collections.abc import Iterable, Sequence
from pathlib import Path

from kb_qa.settings import Settings
from kb_qa.text import SURROGATE


def checked_search(
    question: object, k: object, include: object, exclude: object, call: str = "search"
) -> str:
    """The question of a library call to ``search`` (or ``call``), once its arguments are
    of use (the CLI, HTTP API and MCP tools check theirs first, with their own words)."""
    if not isinstance(question, str):
        raise TypeError(f"{call}: the question must be a string, not {type(question).__name__}")
    if isinstance(k, bool) or not isinstance(k, int) or k < 1:
        raise ValueError(f"{call}: k must be a whole number of 1 or more, not {k!r}")
    for name, patterns in (("include", include), ("exclude", exclude)):
        if (
            isinstance(patterns, str)
            or not isinstance(patterns, Iterable)
            or not all(isinstance(p, str) for p in patterns)
        ):
            raise TypeError(
                f"{call}: {name} must be a list of vault paths or globs, e.g. "
                f"{name}=['docs/guides/*'], not {patterns!r}"
            )
    # A lone surrogate (from a bad decode) cannot be tokenized: read it as "?".
    return SURROGATE.sub("?", question)


def vault_relative(patterns: Sequence[str], vault: Path | None) -> list[str]:
    """Path filters as the index names pages: relative to ``vault``, with "/" (an absolute
    path inside the vault, or "docs\\guides", matched nothing)."""
    found = []
    for pattern in patterns:
        pattern = pattern.replace("\\", "/")
        if vault and Path(pattern).is_absolute():  # resolved only then
            with contextlib.suppress(ValueError):
                pattern = Path(pattern).resolve().relative_to(Path(vault).resolve()).as_posix()
        found.append(pattern)
    return found


def checked_opening(vault_path: object, settings: object) -> None:
    """``KnowledgeBase(vault_path, settings)``'s arguments, refused in words: an empty path
    failed in ``Path(None)`` deep inside, a dict of settings with an AttributeError."""
    if settings is not None and not isinstance(settings, Settings):
        raise TypeError(
            f"KnowledgeBase: settings must be a kb_qa.Settings, not {type(settings).__name__}: "
            "pass settings as keyword arguments instead, KnowledgeBase(vault, top_k=3)"
        )
    if vault_path == "":
        raise ValueError("KnowledgeBase: the vault path is empty: give a folder ('.': this one)")
