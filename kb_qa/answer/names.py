"""A question that names something an API reference documents under that name and under
longer ones: ``parse`` beside ``parse_url``, ``connect`` beside ``connect_url``.

mkdocstrings gives each function its own heading, so an API page's sections differ by the
name at the end of their heading path. The keyword index reads ``parse_url`` as its parts
too (so "parse a url" finds it), and the vector side sees two near twins: "What does parse
raise?" led with ``parse_url``'s Raises, ranked first by both searches.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

__all__ = ["NAME_WEIGHT", "named_exactly"]

# Added to a section's lead score (``extractive``) when its heading is a name the question
# writes and another candidate's heading holds that name only inside a longer one.
# bench/passages.py dev: every set unchanged at 0.1 to 0.5 (real docs 0.656, the sample site
# and vault 0.855, copier 0.545, pipx 0.381, Pi-hole 0.591), and the QA pass's API questions
# answered from the function they name; at 0.3 without the rival (any heading that is a word
# of the question): real docs dev 0.656 -> 0.594.
NAME_WEIGHT = 0.3
_NAME = re.compile(r"[A-Za-z_][\w.]*[A-Za-z0-9_]|[A-Za-z]")


def named_exactly(question: str, paths: Sequence[Sequence[str]]) -> list[bool]:
    """Per heading path of ``paths``: whether one of its headings is a name the question
    writes that another path holds only as a part of a longer name, which the question
    does not name whole ("my .env file" names every part of ``env_file``)."""
    asked = {w.casefold() for w in _NAME.findall(question)}
    per_path = [_names(path) for path in paths]
    longer = set().union(*per_path)
    rivalled = {n for n in asked if any(n in _parts(m) and not _parts(m) <= asked for m in longer)}
    return [bool(own & rivalled) for own in per_path]


def _names(path: Sequence[str]) -> set[str]:
    """The headings of ``path`` that are one name ("parse", "`connect()`", "Backoff")."""
    shown = (h.strip().strip("`").removesuffix("()").strip("`").casefold() for h in path)
    return {h for h in shown if _NAME.fullmatch(h)}


def _parts(name: str) -> set[str]:
    """A snake_case name's parts: ``parse_url`` -> parse, url. A dotted path is no longer
    name of its last part: ``tidewire.retry`` is the module holding ``retry``, and counting it
    as a rival made "How many retry attempts does RetryPolicy make?" lead with ``retry``."""
    return set(name.split("_"))
