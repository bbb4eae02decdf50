"""The rules every entry point applies to what a user asks: the HTTP API, ``kb-qa mcp``
and the CLI (``search``, ``ask``) check a question, a result count and path filters here,
so none of them takes a 1 MB question or a lone surrogate that another one refuses.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from kb_qa.errors import KbQaError
from kb_qa.index.retrieval import path_matches
from kb_qa.settings import MAX_TOP_K, Settings
from kb_qa.text import SURROGATE

if TYPE_CHECKING:
    from kb_qa.kb.knowledge_base import KnowledgeBase

MAX_K = MAX_TOP_K  # results a search returns at most
MAX_PATTERNS = 100
MAX_PATTERN_CHARS = 500
# Characters that show nothing: controls, zero-width and format characters, the BOM.
_INVISIBLE = re.compile(
    "[\x00-\x1f\x7f-\x9f\u00ad\u180e\u200b-\u200f\u202a-\u202e\u2060-\u2064\ufeff]"
)


class InputError(KbQaError):
    """A question or parameter a user sent breaks a rule; ``status`` is its HTTP status
    (413 for too long, 422 for malformed, 400 for text that cannot be stored)."""

    def __init__(self, message: str, status: int = 422) -> None:
        super().__init__(message)
        self.status = status


def question(text: Any, settings: Settings, name: str = "question") -> str:
    """``text`` stripped, if it is a non-empty string within ``max_question_chars``."""
    if not isinstance(text, str) or not _INVISIBLE.sub("", text).strip():
        # NULs, zero-width spaces and byte-order marks alone say nothing either.
        raise InputError(f"{name} is required and must be a non-empty string.")
    if len(text) > settings.max_question_chars:
        subject = "The q parameter" if name == "q" else f"The {name}"  # /api/search's
        raise InputError(
            f"{subject} is {len(text):,} characters long; the limit is "
            f"{settings.max_question_chars:,} (max_question_chars).",
            413,
        )
    if SURROGATE.search(text):
        raise InputError(
            f"The {name} contains an invalid Unicode character (a lone surrogate).", 400
        )
    return text.strip()


def whole(value: Any, name: str) -> int:
    """``value`` if it is a whole number (a JSON integer, not true or 2.5), in the words the
    HTTP API uses for a query string's."""
    if isinstance(value, bool) or not isinstance(value, int):
        raise InputError(f"{name} must be a whole number written with the digits 0-9.")
    return value


def count(k: int) -> int:
    """A number of results, 1 to :data:`MAX_K`."""
    if not 1 <= k <= MAX_K:
        raise InputError(f"k must be between 1 and {MAX_K}.")
    return k


def patterns(values: Any, name: str) -> tuple[str, ...]:
    """Path filters (``include`` / ``exclude``): a list of at most :data:`MAX_PATTERNS`
    strings of at most :data:`MAX_PATTERN_CHARS` characters."""
    given: Sequence[Any] = values or []
    if not isinstance(given, list | tuple) or not all(isinstance(p, str) for p in given):
        raise InputError(f"{name} must be a list of vault paths or globs.")
    if len(given) > MAX_PATTERNS or any(len(p) > MAX_PATTERN_CHARS for p in given):
        raise InputError(
            f"{name} may hold at most {MAX_PATTERNS} paths of {MAX_PATTERN_CHARS} characters."
        )
    if any(not p.strip() for p in given):  # an empty pattern matches no page, silently
        raise InputError(f"{name} holds an empty path: give a vault path or glob, or leave it out.")
    return tuple(given)


def unmatched(paths: Sequence[str], include: Sequence[str], exclude: Sequence[str]) -> str:
    """Why path filters left none of the index's ``paths``, with how paths are written (an
    AI assistant tends to leave docs_dir out: ``guides/*`` for ``docs/guides/*``); empty
    when they leave some page, or the index holds none."""
    if not paths:
        return ""
    kept = [p for p in paths if not include or path_matches(p, include)]
    if not kept:
        guess = sorted({g for pattern in include for p in paths if (g := _within(p, pattern))})
        hint = f"; did you mean {', '.join(guess[:3])}?" if guess else f" (such as {paths[0]})."
        return (
            f"include {list(include)} matches no page of the knowledge base. Paths are "
            f"relative to the vault, as the path of a search result shows them{hint}"
        )
    if all(path_matches(p, exclude) for p in kept):
        return f"exclude {list(exclude)} leaves out every page that include leaves in."
    return ""


def check_filters(kb: KnowledgeBase, include: Sequence[str], exclude: Sequence[str]) -> None:
    """Raise ``InputError`` when path filters, read as a search reads them, leave no page of
    ``kb`` (``unmatched``): a search of nothing answered "not covered" of docs that cover
    the question, and ``kb-qa insights`` listed it as a gap."""
    if include or exclude:
        paths = sorted(kb.store.files())
        if why := unmatched(paths, kb.vault_paths(include), kb.vault_paths(exclude)):
            raise InputError(why)


def _within(path: str, pattern: str) -> str:
    """``pattern`` under the folder of ``path`` it matches below the vault's top, or ''."""
    pattern = pattern.strip().removeprefix("./").lstrip("/")
    for i, char in enumerate(path):
        if char == "/" and pattern and path_matches(path[i + 1 :], [pattern]):
            return path[: i + 1] + pattern
    return ""
