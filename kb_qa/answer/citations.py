"""Citation post-processing: the model's ``[i]`` markers -> renumbered, clickable citations.

The model cites the global excerpt numbers the prompt gave it. While the answer streams,
``CitationRenumberer`` rewrites each citation group so the reader sees ``[1]``, ``[2]``, ... in
order of first appearance, drops numbers that were never given, and leaves other brackets alone.

Recognised (a *group* is one or more markers written back to back, e.g. ``[3][4]``)::

    [3]   [3, 70]   [3,70]   [3][4]   【3】   ［3］   [3，4]   [3、4]   [3; 4]   [2-4]   [2–4]
    [Excerpt 3]   [excerpt 3, 4]   [Source 3]   [Sources: 3, 4]

A range (``[2-4]``, ``[2–4]``, ``[1, 3-5]``) stands for each number in it, but only when every
number of its group was given and it runs forwards over at most ``MAX_RANGE`` numbers: else it
is left as text (``[0-9]``, ``[8-12]`` of 10 excerpts).

Normal form of the output: one bracket per citation, ``[1][2]``, numbers ascending inside a group,
duplicates removed. One bracket per number keeps the client trivial (each ``[n]`` is one chip).

Not citations, left byte for byte as written:
- anything inside inline code or a fenced code block;
- link text: a marker followed by ``(`` as in ``[12](https://...)``;
- an escaped bracket ``\\[1]``, brackets around non-numbers (``[x]``, ``[^1]``), numbers of more
  than 3 digits (``[2023]``);
- a marker glued to a preceding ASCII letter, digit, ``_`` or ``]`` (``arr[0]``, ``x[99]``) unless
  every number in it was given: "word[3]" is still a citation, "arr[0]" is indexing.

A group whose numbers were all never given disappears together with the spaces before it, so
``"fact [99]."`` becomes ``"fact."``.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from enum import Enum

from kb_qa.types import Hit

__all__ = ["Citation", "CitationRenumberer", "renumber", "resolve", "strip_citations"]

OPENERS = "[【［"
CLOSERS = "]】］"
SEPARATORS = ",，、;；"
SPACES = " \t\u3000"
DASHES = "-\u2013\u2014"  # hyphen, en dash, em dash: "[2-4]"
MAX_RANGE = 10  # a longer range ("[1-150]") is not one a reader can check: left as text
MAX_DIGITS = 3  # prompts give at most a few hundred excerpts; [2023] is a year, not a citation
MAX_MARKER = 48  # longest marker held back while streaming; longer is treated as plain text
# Longest group of back-to-back markers: a longer run ("[1][1][1]…" for a megabyte) is cut
# into groups of this size, so what is held back (and parsed again per delta) stays small
MAX_GROUP = 8 * MAX_MARKER
FENCE_CHARS = "`~"
WORDS = ("excerpt", "source")  # a word a marker may open with ("[Excerpt 3]")


@dataclass(frozen=True)
class Citation:
    """One citation as the reader sees it, resolved to the passage it points at."""

    number: int  # display number, 1..m in order of first appearance
    excerpt: int  # the global excerpt number the model wrote
    url: str  # where the citation points, by link_style (absolute when the site has a URL)
    path: str
    anchor: str
    heading_path: tuple[str, ...]
    text: str  # the passage, exactly source[start:end]
    start: int
    end: int
    line_start: int
    line_end: int
    # Page URL + "#anchor" relative to the site root (Chunk.link): what a widget on the
    # site itself links to, wherever the site is served from.
    link: str = ""


class _Parse(Enum):
    INCOMPLETE = "incomplete"  # the buffer ends before we can decide
    NO = "no"  # not a citation: the opener is plain text
    YES = "yes"


def _is_ident(ch: str) -> bool:
    return ch == "_" or ch == "]" or (ch.isascii() and ch.isalnum())


def _parse_marker(s: str, i: int, final: bool) -> tuple[_Parse, int, list[int], bool]:
    """Parse one marker starting at ``s[i]`` (an opener); return (result, end, numbers,
    whether it holds a range)."""
    numbers: list[int] = []
    digits = ""
    want_number = True  # after the opener, a separator or a range's dash
    ranged = False
    low: int | None = None  # the first number of a range whose dash was read
    closed = False  # the last number read ended a range

    def take() -> bool:
        """Add the number just read (or the range it ends); False if that range is none."""
        nonlocal low, closed
        number = int(digits)
        closed = low is not None
        if low is None:
            numbers.append(number)
            return True
        first, low = low, None
        if not 1 <= first < number < first + MAX_RANGE:  # MAX_RANGE numbers at most
            return False  # "[0-9]", "[4-2]", "[1-150]": not a range of citations
        numbers.extend(range(first, number + 1))
        return True

    j = i + 1
    # "[Excerpt 3]", "[source 2]": the prompt gives excerpts as <excerpt number="3">
    ahead = s[j : j + len("excerpts")].casefold()
    for word in WORDS:
        if ahead.startswith(word):
            j += len(word)
            j += j < len(s) and s[j] == "s"  # "[Sources 2, 3]"
            j += j < len(s) and s[j] in ":#"
            if j < len(s) and s[j] not in SPACES and not s[j].isdecimal():
                return _Parse.NO, j, [], False  # "[Excerpts]", "[sourcecode]"
            break
        if not final and len(ahead) == len(s) - j and word.startswith(ahead):
            return _Parse.INCOMPLETE, j, [], False  # "[Exc" may be "[Excerpt 3]"
    while j < len(s):
        if j - i > MAX_MARKER:
            return _Parse.NO, j, [], False
        ch = s[j]
        if ch.isdecimal():
            if not want_number and not digits:
                return _Parse.NO, j, [], False  # "[3 4]": two numbers without a separator
            digits += ch
            if len(digits) > MAX_DIGITS:
                return _Parse.NO, j, [], False
            want_number = False
        elif ch in SPACES:
            if digits:
                if not take():
                    return _Parse.NO, j, [], False
                digits = ""
        elif ch in DASHES:
            if digits:
                if not take():
                    return _Parse.NO, j, [], False
                digits = ""
            if want_number or not numbers or low is not None or closed:
                return _Parse.NO, j, [], False  # "[-3]", "[3,-4]", "[1-2-3]"
            low, ranged, want_number = numbers.pop(), True, True
        elif ch in SEPARATORS:
            if digits:
                if not take():
                    return _Parse.NO, j, [], False
                digits = ""
            if want_number:
                return _Parse.NO, j, [], False  # "[,3]" or "[3,,4]"
            want_number = True
        elif ch in CLOSERS:
            if digits and not take():
                return _Parse.NO, j, [], False
            if want_number or not numbers:
                return _Parse.NO, j, [], False  # "[]", "[3,]"
            return _Parse.YES, j + 1, numbers, ranged
        else:
            return _Parse.NO, j, [], False
        j += 1
    return (_Parse.NO if final else _Parse.INCOMPLETE), j, [], False


def _parse_group(s: str, i: int, final: bool) -> tuple[_Parse, int, list[int], bool]:
    """Parse back-to-back markers from ``s[i]``; return (result, end, numbers in written order,
    whether a marker of them holds a range)."""
    numbers: list[int] = []
    ranged = False
    j = i
    while True:
        result, end, found, has_range = _parse_marker(s, j, final)
        if result is _Parse.INCOMPLETE:
            return result, j, [], False
        if result is _Parse.NO:
            break
        if end == len(s) and not final:
            # the next character may be "(" or another marker
            return _Parse.INCOMPLETE, j, [], False
        if end < len(s) and s[end] == "(":
            break  # link text, "[3](url)": this marker is not a citation
        numbers.extend(found)
        ranged = ranged or has_range
        j = end
        if j == len(s) or s[j] not in OPENERS or j - i > MAX_GROUP:
            break
    return (_Parse.YES if numbers else _Parse.NO), j, numbers, ranged


_BACKTICKS = re.compile(r"`+")
MAX_SPAN = 400  # characters held back after a backtick run, waiting for the one closing it


class CitationRenumberer:
    """Rewrites citation markers in a streamed answer; feed deltas, then call ``finish``."""

    def __init__(self, n_excerpts: int) -> None:
        self.n_excerpts = n_excerpts
        self.order: dict[int, int] = {}  # display number -> excerpt number
        self.dropped = 0  # cited numbers outside 1..n_excerpts, removed from the text
        # Offsets in the output where a group of such numbers alone was removed ("B [420]."
        # -> "B."): that sentence cites nothing now, whatever follows (``cite_uncited``).
        self.emptied: list[int] = []
        self._emitted = 0  # characters returned so far
        self._display: dict[int, int] = {}  # excerpt number -> display number
        self._strip = False  # strip_citations: remove every citation, keep no numbers
        self._buf = ""  # unconsumed input: a marker that may still be incomplete
        self._ws = ""  # consumed spaces not yet emitted (removed if a dropped group follows)
        self._prev = ""  # last consumed input character
        # Code tracking, so brackets in code stay as written.
        self._fence = ""  # the open fence ("```", "~~~~", ...) or ""
        self._closing = False  # this line inside a fence may be its closing fence
        self._span = 0  # backtick count of the open inline code span, 0 when none
        self._pending = 0  # backtick count of a run that opens a span only if it closes
        self._run = ""  # the run of backticks or tildes being counted
        self._run_at_start = False
        self._line_start = True  # only up to 3 spaces seen so far on this line
        self._indent = 0

    def feed(self, text: str) -> str:
        """Take the next delta; return the text that is safe to show now."""
        out = self._scan(self._buf + text, final=False)
        self._emitted += len(out)
        return out

    def finish(self) -> str:
        """Flush whatever was held back at the end of the answer."""
        out = self._scan(self._buf, final=True)
        out += self._ws
        self._ws = ""
        self._emitted += len(out)
        return out

    def _scan(self, s: str, final: bool) -> str:
        out: list[str] = []
        i = 0
        self._buf = ""
        while i < len(s):
            ch = s[i]
            if self._run and ch != self._run[0]:
                self._end_run()
            if self._pending and not self._opens_span(s, i, final):
                if self._pending:  # not known yet: hold the rest until it is
                    self._buf = s[i:]
                    break
            if ch in OPENERS and not self._in_code() and self._prev != "\\":
                result, end, numbers, ranged = _parse_group(s, i, final)
                if result is _Parse.INCOMPLETE:
                    self._buf = s[i:]
                    break
                if result is _Parse.YES and self._cite(numbers, out, ranged):
                    self._prev = s[end - 1]
                    self._line_start = False
                    i = end
                    continue
            self._consume(ch, out)
            i += 1
        return "".join(out)

    def _cite(self, numbers: list[int], out: list[str], ranged: bool = False) -> bool:
        """Write one citation group; False if it should stay plain text. A group holding a
        range ("[2-4]") is a citation only when every number of it was given."""
        if self._strip:
            if _is_ident(self._prev):
                return False  # "arr[0]": indexing, not a citation
            self._ws = ""
            return True
        valid = [n for n in numbers if 1 <= n <= self.n_excerpts]
        invalid = len(numbers) - len(valid)
        if invalid and (ranged or _is_ident(self._prev)):
            return False  # "arr[0]": indexing; "[8-12]" of 10 excerpts: not citations
        self.dropped += invalid
        shown: list[int] = []
        for n in valid:
            if n not in self._display:
                self._display[n] = len(self._display) + 1
                self.order[self._display[n]] = n
            if self._display[n] not in shown:
                shown.append(self._display[n])
        if not shown:
            self._ws = ""  # "fact [99]." -> "fact."
            self.emptied.append(self._emitted + sum(map(len, out)))
            return True
        out.append(self._ws + "".join(f"[{d}]" for d in sorted(shown)))
        self._ws = ""
        return True

    def _consume(self, ch: str, out: list[str]) -> None:
        """Pass one character through as written, updating the code-tracking state."""
        if ch in SPACES:
            self._ws += ch
            if ch == " " and self._line_start and self._indent < 3:
                self._indent += 1
            else:
                self._line_start = False
        else:
            out.append(self._ws + ch)
            self._ws = ""
            if ch == "\n":
                if self._fence and self._closing:
                    self._fence = ""
                self._closing = False
                self._span = 0  # inline code does not cross lines in model answers
                self._line_start = True
                self._indent = 0
            elif ch in FENCE_CHARS:
                if not self._run:
                    self._run_at_start = self._line_start
                self._run += ch
            else:
                if self._fence:
                    self._closing = False  # text after the fence chars: not a closing fence
                self._line_start = False
        self._prev = ch

    def _end_run(self) -> None:
        """A run of backticks or tildes just ended: it may open or close code."""
        run, at_start = self._run, self._run_at_start
        self._run = ""
        self._line_start = False
        if self._fence:
            fence = self._fence
            self._closing = at_start and run[0] == fence[0] and len(run) >= len(fence)
        elif at_start and len(run) >= 3:
            self._fence = run
            self._span = 0
        elif run[0] == "`":
            if not self._span:
                self._pending = len(run)  # code only if a run as long closes it (_opens_span)
            elif self._span == len(run):
                self._span = 0

    def _opens_span(self, s: str, i: int, final: bool) -> bool:
        """Whether the backtick run that ended at ``s[i]`` opens a code span: a run of as
        many backticks closes it before the line ends (CommonMark). Else its backticks are
        text, and citations after them are citations, as the widget reads them. Leaves
        ``_pending`` set when ``s`` does not tell yet."""
        end = s.find("\n", i)
        line = s[i:] if end < 0 else s[i:end]
        for run in _BACKTICKS.finditer(line[:MAX_SPAN]):
            if len(run.group()) == self._pending and (run.end() < len(line) or end >= 0 or final):
                self._span, self._pending = self._pending, 0
                return True
        # A model's paragraph is one line: past MAX_SPAN characters the answer streams on,
        # the backticks read as text, rather than held back to the paragraph's end.
        if end >= 0 or final or len(line) > MAX_SPAN:
            self._pending = 0
        return False

    def _in_code(self) -> bool:
        return bool(self._fence or self._span)


def renumber(text: str, n_excerpts: int) -> tuple[str, dict[int, int], int]:
    """Renumber a whole answer at once; return (text, order, dropped)."""
    renumberer = CitationRenumberer(n_excerpts)
    out = renumberer.feed(text) + renumberer.finish()
    return out, renumberer.order, renumberer.dropped


def strip_citations(text: str) -> str:
    """Remove every citation marker, e.g. from an earlier answer sent back as history."""
    renumberer = CitationRenumberer(0)
    renumberer._strip = True
    return renumberer.feed(text) + renumberer.finish()


def resolve(order: dict[int, int], excerpts: Sequence[Hit]) -> list[Citation]:
    """Turn ``order`` (display -> excerpt number) into citations; excerpt n is excerpts[n - 1]."""
    citations = []
    for number in sorted(order):
        excerpt = order[number]
        chunk = excerpts[excerpt - 1].chunk
        citations.append(
            Citation(
                number=number,
                excerpt=excerpt,
                url=chunk.link,
                path=chunk.path,
                anchor=chunk.anchor,
                heading_path=chunk.heading_path,
                text=chunk.text,
                start=chunk.start,
                end=chunk.end,
                line_start=chunk.line_start,
                line_end=chunk.line_end,
                link=chunk.link,
            )
        )
    return citations
