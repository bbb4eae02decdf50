"""The names other note apps give a note besides its file name, for ``[[links]]`` to find it.

Obsidian, Foam and Dendron link a note by its file name (``[[Home Server]]``,
``[[project.alpha]]``). Others name it otherwise:

- Logseq stores the page "Project Alpha/Runbook" as ``Project Alpha___Runbook.md`` (older
  graphs: ``Project Alpha%2FRunbook.md``) and names a page by its ``title::`` property;
- a Zettelkasten (Zettlr, The Archive) links ``[[202403011200]]`` to the note whose file
  name starts with that ID, ``202403011200 Write-skew anomalies.md``.

A link's file name comes first; these names are tried only when no file name matches, and
only a name that one note alone has.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from kb_qa.text import name_key

# Logseq's namespace separator in file names: "___" (:file/name-format :triple-lowbar) or
# "%2F" (the format before it).
_NAMESPACE = re.compile(r"___|%2F", re.IGNORECASE)
# A Zettelkasten ID opening a file name: a timestamp of 12 or 14 digits (Zettlr's default
# is %Y%M%D%h%m%s, The Archive's 12 digits), then a space, a dash or nothing.
_ZETTEL_ID = re.compile(r"^(\d{12}|\d{14})(?=$|[ \t_-])")


# A Logseq journal: journals/2025_03_12.md (its default :journal/file-name-format, yyyy_MM_dd)
_JOURNAL = re.compile(r"(?:^|/)journals/(\d{4})_(\d{2})_(\d{2})\.[^/]+$")
_MONTHS = "Jan Feb Mar Apr May Jun Jul Aug Sep Oct Nov Dec".split()


def journal_title(path: str) -> str:
    """The title Logseq gives a journal file, in its default :journal/page-title-format
    "MMM do, yyyy": journals/2025_03_12.md is "Mar 12th, 2025" ("" for any other file).
    Cited as "2025_03_12", the day was hard to read, and Logseq's links to it,
    ``[[Mar 12th, 2025]]``, named no note."""
    m = _JOURNAL.search(path)
    if m is None or not 1 <= int(m.group(2)) <= 12 or not 1 <= int(m.group(3)) <= 31:
        return ""
    day = int(m.group(3))
    suffix = "th" if 11 <= day <= 13 else {1: "st", 2: "nd", 3: "rd"}.get(day % 10, "th")
    return f"{_MONTHS[int(m.group(2)) - 1]} {day}{suffix}, {m.group(1)}"


def stem(path: str) -> str:
    """A note's file name without its folder and extension."""
    return path.rsplit("/", 1)[-1].rsplit(".", 1)[0]


def page_name(file_stem: str) -> str:
    """The page a Logseq file name stands for: "Project Alpha___Runbook" ->
    "Project Alpha/Runbook" (any other name as it is)."""
    return _NAMESPACE.sub("/", file_stem)


def other_names(path: str, title: str) -> list[str]:
    """The names, as ``text.name_key`` compares them, a link may give the note at ``path``
    titled ``title`` other than its file name."""
    name = stem(path)
    names = [page_name(name), title, journal_title(path)]
    if m := _ZETTEL_ID.match(name):
        names.append(m.group(1))
    return [name_key(n.strip()) for n in names if n.strip() and n != name]


def by_other_name(notes: Iterable[tuple[str, str]]) -> dict[str, str]:
    """Each name of ``other_names`` that one note of ``notes`` (path, title) alone has, and
    that note's path."""
    found: dict[str, set[str]] = {}
    for path, title in notes:
        for name in other_names(path, title):
            found.setdefault(name, set()).add(path)
    return {name: paths.pop() for name, paths in found.items() if len(paths) == 1}
