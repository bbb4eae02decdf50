"""Text as it is matched: normalised (NFKC, plain quotes, single spaces) and tokenised.

The original Markdown is kept on every chunk for display and highlighting; only the
matching side sees these forms.
"""

from __future__ import annotations

import itertools
import re
import unicodedata
from functools import lru_cache

import Stemmer

from kb_qa.verbatim import FENCE_LINE, closes_fence, code_segments, code_spans

_QUOTES = str.maketrans({"\u2018": "'", "\u2019": "'", "\u201c": '"', "\u201d": '"', "\u00a0": " "})
_SPACE = re.compile(r"\s+")
# Obsidian-style [[page]], [[page#heading]], [[page|shown text]] and ![[embeds]].
# Each part is bounded: unbounded, a long run of "[[a[[a…" took quadratic time to reject.
WIKILINK = re.compile(r"!?\[\[([^\[\]|#]{0,300})(?:#([^\[\]|]{0,300}))?(?:\|([^\[\]]{0,300}))?\]\]")
# A lone surrogate (text decoded with "surrogateescape", a JSON "\ud800"): no UTF-8 holds it.
SURROGATE = re.compile("[\ud800-\udfff]")
# Obsidian's ==highlight==, shown as its words.
HIGHLIGHT = re.compile(r"==(?=\S)([^=\n]{1,500}?)(?<=\S)==")
# Callout markers such as "> [!note]" or "> [!warning]-".
_CALLOUT = re.compile(r"\[!([A-Za-z-]+)\][+-]?")
# CJK ideographs, kana (half-width katakana too: "ｺｰﾋｰ豆"), hangul. Latin-script words
# (letters, digits, underscore) or runs of them are tokens.
_CJK_CHARS = "\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uac00-\ud7af\uff65-\uff9f"
_TOKEN = re.compile(rf"[{_CJK_CHARS}]+|[^\W_]+(?:_[^\W_]+)*")
_CJK = re.compile(f"[{_CJK_CHARS}]")
_WHITE = re.compile(r"\s")  # one whitespace character
# A name written in CamelCase ("PermanentError", "HTTPException", "APIRouter"): its parts.
_CAMEL_CASE = re.compile(r"[a-z][A-Z]|[A-Z]{2}[a-z]")
_CAMEL_PART = re.compile(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|\d+")


# Tense auxiliaries ("did", "were") name no topic; modals ("should I commit it?") can.
# Arabic's question and function words likewise, in both hamza spellings ("ما هو المنفذ
# الافتراضي؟" led with the heading "ما الذي يقدمه قمر؟", which shares only "ما").
STOPWORDS = frozenset(
    """a am an and are as at be been being but by can did do does for from had has have how i
    if in into is it its me my no not of on or so such than that the their then there these
    they this to too us was we were what when where which while who why will with would you
    your i'm
    ما ماذا هو هي هم هل كيف أين اين متى لماذا لما من في على إلى الى عن التي الذي الذين هذا
    هذه ذلك تلك هناك هنا و أو او ثم قد لا لم لن مع كان كانت يكون عند أي اي إن ان أن إذا اذا
    به بها له لها فيه فيها""".split()
)
# Arabic script, and its marks: short vowels, shadda, sukun, Quranic marks and the tatweel
# that only stretches a line. Writers add them or not ("نفّذ" / "نفذ"), readers rarely
# type them, and as word breaks they cut words in two ("يشفّر" read as "يشف" and "ر").
_ARABIC_SCRIPT = re.compile("[\u0600-\u06ff\u0750-\u077f\u08a0-\u08ff]")
_ARABIC_MARKS = re.compile(
    "[\u0610-\u061a\u0640\u064b-\u065f\u0670\u06d6-\u06dc\u06df-\u06e8\u06ea-\u06ed]"
)
# German's umlauts as keyboards without them write them ("fluechtige" for "flüchtige",
# "Woerter" for "Wörter"), on both sides of every match: a question typed so found
# another section. Words spelt "ue" anyway ("Quelle", "aktuell") read as they did.
_UMLAUTS = str.maketrans({"ä": "ae", "ö": "oe", "ü": "ue"})
_PERSIAN_LETTERS = re.compile("[\u067e\u0686\u0698\u06a9\u06af\u06cc]")  # پ چ ژ ک گ ی


# Bidi embeddings, overrides and isolates: a reader's "\u202e" would show the rest of a
# line reversed ("txt.exe" read "exe.txt") wherever the owner reads it (marks, LRM and RLM,
# only nudge neutral characters and stay).
BIDI_CONTROLS = re.compile("[\u202a-\u202e\u2066-\u2069]")
# Obsidian's block id, "^quorum-rule" ending a line (or alone on one): an address that
# ``[[Note#^quorum-rule]]`` links to, hidden in reading view. These patterns read a file's
# own text, whose lines may end in CRLF: "\r" is part of no line.
BLOCK_ID = re.compile(r"(?:^|(?<=[ \t]))\^([A-Za-z0-9-]+)[ \t]*(?=\r?$)", re.M)


_UUID = r"[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}"
# Logseq's hidden block properties, each on a line of its own under its block's first line:
# "id:: <uuid>" (the address a "((uuid))" reference points to) and "collapsed:: true".
LOGSEQ_ID = re.compile(rf"^([^\r\n]*)\r?\n[ \t]*id::[ \t]*({_UUID})[ \t]*(?=\r?$)", re.M)
HIDDEN_PROPERTY = re.compile(
    rf"^[ \t]*(?:id::[ \t]*{_UUID}|collapsed::[ \t]*(?:true|false))[ \t]*\r?(?:\n|$)", re.M
)
# A Logseq block reference, shown by Logseq as the text of the block it points to.
BLOCK_REF = re.compile(rf"\(\(({_UUID})\)\)")
# A Logseq property line, "type:: project" or "alias:: Golf, the car": the lines opening a
# page are its properties, which Logseq shows as a small list of the page's metadata, not
# as its text. A blank or the line's end follows the "::", so C++'s "std::move" is none.
PROPERTY_LINE = re.compile(r"^[ \t]*([A-Za-z][\w-]*)::(?=[ \t\r]|$)(.*)$", re.M)  # value: strip()


def is_properties(text: str) -> bool:
    """Whether ``text`` (a paragraph) is nothing but Logseq property lines."""
    lines = [line for line in text.split("\n") if line.strip()]
    return bool(lines) and "::" in text and all(PROPERTY_LINE.match(line) for line in lines)


# A Logseq drawer under a block: ":LOGBOOK:", the task's "CLOCK: [2025-03-14 Fri 09:02:11]"
# lines, ":END:" (or ":PROPERTIES:" … ":END:"). Logseq hides it; quoted, "How much was the
# new kettle?" showed the clock lines of the task above it. Its reach is bounded: a page of
# openers never closed costs each a hundred lines' scan, no more.
DRAWER = re.compile(
    r"^[ \t]*:(?:LOGBOOK|PROPERTIES):[ \t]*\r?\n(?:[^\n]*\n){0,100}?[ \t]*:END:[ \t]*\r?(?:\n|$)",
    re.M,
)


def without_block_ids(text: str) -> str:
    """``text`` without Obsidian's block ids and Logseq's ``id::`` and ``collapsed::``
    lines and drawers (neither app shows them)."""
    if "^" in text:
        text = BLOCK_ID.sub("", text)
    if ":END:" in text:
        text = DRAWER.sub("", text)
    return HIDDEN_PROPERTY.sub("", text) if "::" in text else text


def nfc(name: str) -> str:
    """A file name or path as typed: macOS writes names decomposed ("e" and a combining
    accent, NFD), keyboards and links compose them (NFC); both read the same."""
    return name if name.isascii() else unicodedata.normalize("NFC", name)


def name_key(name: str) -> str:
    """How a link's note name is compared with file names: composed and case-folded."""
    return nfc(name).casefold()


def normalize(text: str) -> str:
    """NFKC, straight quotes, wikilinks as their words, no block ids or ``==marks==``,
    collapsed whitespace."""
    text = without_block_ids(unicodedata.normalize("NFKC", text).translate(_QUOTES))
    text = WIKILINK.sub(_wikilink_words, text)
    text = _CALLOUT.sub(r"\1:", text)
    if "==" in text:  # "==stopcock==" read by MiniLM as a different thing: 0.377 -> 0.292
        text = "".join(  # but "a==b and c==d" in code is code
            part if code else HIGHLIGHT.sub(r"\1", part) for code, part in code_segments(text)
        )
    return _SPACE.sub(" ", text).strip()


TITLE_WORDS = 14


def question_title(question: str) -> str:
    """The first line of a question, or its first words when it is one long line."""
    text = question.strip()
    first = text.split("\n", 1)[0].strip()
    if first != text:
        return first
    words = text.split()
    return " ".join(words[:TITLE_WORDS]) if len(words) > TITLE_WORDS else text


def wikilink_label(match: re.Match[str]) -> str:
    """A ``WIKILINK`` match as Obsidian shows it: its alias, else its target as written
    ("Garden Plan > Garlic", "projects/Home Server")."""
    target, heading, label = match.groups()
    if heading and heading.strip().startswith("^"):  # a block's address is not shown
        heading = ""
    parts = [target or "", *(heading or "").split("#")]  # [[note#parent#heading]]
    written = " > ".join(p.strip() for p in parts if p.strip())
    return (label or "").strip() or written


def as_shown(text: str) -> str:
    """A line of a note as Obsidian's reading view shows it: wikilinks as their labels,
    ``==highlights==`` as their words."""
    if "[[" in text:
        text = WIKILINK.sub(wikilink_label, text)
    return HIGHLIGHT.sub(r"\1", text) if "==" in text else text


def _wikilink_words(match: re.Match[str]) -> str:
    page, heading, shown = match.group(1), match.group(2), match.group(3)
    if shown:
        return shown
    return " ".join(p.strip() for p in (page.rsplit("/", 1)[-1], heading) if p and p.strip())


@lru_cache(maxsize=3)
def _stemmer(language: str = "english") -> Stemmer.Stemmer:
    return Stemmer.Stemmer(language)


def _stemmed(words: list[str], arabic: bool) -> list[str]:
    """``words`` stemmed in their language: Arabic script's by the Arabic Snowball stemmer
    (its article and prefixes, "المنفذ" / "منفذ", and hamza forms, "أين" / "اين"), or the
    Persian one for words with Persian letters; every other word by the English one.
    ``arabic``: the text has Arabic script (else every word is stemmed as English)."""
    stems = _stemmer().stemWords(words)
    if arabic:
        for i, word in enumerate(words):
            if _ARABIC_SCRIPT.search(word):
                language = "persian" if _PERSIAN_LETTERS.search(word) else "arabic"
                stems[i] = _stemmer(language).stemWord(word)
    return stems


def _raw_tokens(text: str) -> list[str]:
    """Words and CJK runs of ``text`` (NFKC, case-folded, Arabic script's marks removed), in
    order, before stemming."""
    text = unicodedata.normalize("NFKC", text).casefold().translate(_UMLAUTS)
    if _ARABIC_SCRIPT.search(text):
        text = _ARABIC_MARKS.sub("", text)
    return _TOKEN.findall(text)


def keyword_tokens(text: str, *, camel_parts: bool = False) -> list[str]:
    """Tokens for BM25: stemmed Latin words without stopwords, CJK as character bigrams.

    bm25s' default pattern keeps an unspaced Chinese run as one token, so a query word
    would never match inside it; bigrams (plus single characters for one-character runs)
    make "向量数据库" match any text containing it. ``camel_parts`` adds the parts of
    CamelCase names and keeps decimals and dates whole (``decimals``, ``ISO_DATE``); the
    extractive answer reads passages so. The keyword index does not: there they cost the
    pydantic corpus (every class a "Model") and gained nothing on real questions
    (docs/pages/research-log.md: "CamelCase names split into their parts")."""
    words: list[str] = []
    cjk: list[str] = []
    if camel_parts:  # a reader's words: "2.0" is one, not the "2" and "0" of "0.2" too
        text = unicodedata.normalize("NFKC", text)  # as decimals() and _raw_tokens read it
        words += _DECIMAL.findall(text) + ISO_DATE.findall(text)
        text = _DECIMAL.sub(" ", text)
    for token in _raw_tokens(text):
        if _CJK.match(token):
            if len(token) == 1:
                cjk.append(token)
            else:
                cjk.extend(token[i : i + 2] for i in range(len(token) - 1))
        elif token not in STOPWORDS:
            words.append(token)
            if "_" in token:  # snake_case names also match their parts
                words.extend(p for p in token.split("_") if p and p not in STOPWORDS)
    if camel_parts:  # ... and so do CamelCase names: "fail permanently" finds `PermanentError`
        for name in _TOKEN.findall(unicodedata.normalize("NFKC", text)):
            if _CAMEL_CASE.search(name):
                parts = (p.casefold() for p in _CAMEL_PART.findall(name))
                words.extend(p for p in parts if p not in STOPWORDS)
    return _stemmed(words, _ARABIC_SCRIPT.search(text) is not None) + cjk


# A number with a decimal point or a version ("2.0", "3.11.2"), not part of a word; a date
_DECIMAL = re.compile(r"(?<![\w.])\d+(?:\.\d+)+(?![\w]|\.\w)")
ISO_DATE = re.compile(r"(?<![\w-])\d{4}-[01]\d-[0-3]\d(?![\w-])")  # as daily notes write it


def decimals(text: str) -> list[str]:
    """The decimals and dotted versions of ``text``, each one word: aligned as digits, "The
    delay doubles (2.0)" also matched the "0.2" row of a table."""
    return _DECIMAL.findall(unicodedata.normalize("NFKC", text))


def cjk_runs(text: str) -> list[str]:
    """The unspaced CJK runs of ``text`` (NFKC), in order."""
    return [t for t in _raw_tokens(text) if _CJK.match(t)]


def cjk_chars(text: str) -> set[str]:
    """The single CJK characters of ``text``: a one-character word of a question (煮 "boil",
    醒 "rest") is no character pair of the text that holds it."""
    return {ch for run in cjk_runs(text) for ch in run}


def cjk_skip_pairs(text: str) -> set[str]:
    """The characters two apart in each CJK run of ``text``: "每天要背" gives 每要 and 天背,
    which match "每天背" where the question put a particle between the words."""
    return {run[i] + run[i + 2] for run in cjk_runs(text) for i in range(len(run) - 2)}


# Short forms people type in questions for the words docs spell out ("How much RAM does
# it need?" of a table row "Memory"): general technical usage, not any one project's. Not
# those whose stem is another word's ("info": a log level; "app", "deps", "perf", "resp"
# stem as "applicable", "depends", "performs", "responsible" do).
SPELLED_OUT = {
    "ram": "memory",
    "mem": "memory",
    "cpu": "processor",
    "db": "database",
    "auth": "authentication",
    "config": "configuration",
    "cfg": "configuration",
    "repo": "repository",
    "env": "environment",
    "k8s": "kubernetes",
    "dir": "directory",
    "pkg": "package",
    "msg": "message",
    "req": "request",
    "tmp": "temporary",
    "param": "parameter",
    "params": "parameters",
    "arg": "argument",
    "args": "arguments",
    "admin": "administrator",
}


def spelled_out(text: str) -> list[str]:
    """The stemmed tokens of the words ``text``'s short forms stand for (``SPELLED_OUT``)."""
    words = [SPELLED_OUT[t] for t in _raw_tokens(text) if t in SPELLED_OUT]
    return keyword_tokens(" ".join(words)) if words else []


def compound_tokens(text: str) -> list[str]:
    """Each pair of adjacent words written as one, stemmed: "back off" -> "backoff",
    "log in" -> "login", "time out" -> "timeout". A query's pair only counts when the
    docs use the joined word (the keyword index checks its vocabulary)."""
    words = [t for t in _raw_tokens(text) if not _CJK.match(t)]
    pairs = [a + b for a, b in itertools.pairwise(words) if "_" not in a + b]
    return _stemmed(pairs, _ARABIC_SCRIPT.search(text) is not None)


def unread_share(text: str) -> float:
    """Fraction of letters outside the Latin script (Chinese, Korean, Hebrew, Arabic,
    Cyrillic...): what an English model such as MiniLM embeds without reading."""
    letters = [ch for ch in text if ch.isalpha()]
    if not letters:
        return 0.0
    latin = sum(1 for ch in letters if unicodedata.name(ch, "").startswith("LATIN"))
    return 1.0 - latin / len(letters)


def cjk_share(text: str) -> float:
    """Fraction of non-space characters that are CJK (counted by the regex engine: a whole
    vault's text, read once to choose its model, took 3.5 s a character at a time for 3,000
    notes)."""
    letters = len(text) - len(_WHITE.findall(text))
    if not letters:
        return 0.0
    return len(_CJK.findall(text)) / letters


_NOT_NEWLINE = re.compile(r"[^\n]")


def blanked(text: str) -> str:
    """``text`` as spaces, its line breaks kept: gone from sight, every offset and line
    number still the same."""
    return _NOT_NEWLINE.sub(" ", text)


def without_comments(text: str) -> str:
    """``text`` with Obsidian's ``%% comments %%`` (inline or over lines; one left open runs
    to the end, as in Obsidian) turned into spaces, line breaks kept: what Obsidian hides is
    neither indexed, quoted nor shown, and every offset is still the file's.

    One pass, line by line: outside a comment, a fenced block (``` or ~~~, indented by
    blanks, tabs or ">") and an indented code block (four blanks or a tab after a blank
    line) are code, and so are code spans; inside one, everything up to the closing ``%%``
    is comment, fences included."""
    if "%%" not in text:
        return text
    out: list[str] = []
    inside = False
    fence = ""
    blank_before = True
    for line in text.splitlines(keepends=True):
        if not inside and fence:  # in a fenced block: code until it closes
            out.append(line)
            if closes_fence(line.replace("\t", " "), fence):
                fence = ""
            continue
        if not inside:
            opening = FENCE_LINE.match(line.replace("\t", " "))
            if opening:
                fence = opening.group(1)
                out.append(line)
                continue
            if blank_before and (line.startswith("    ") or line[:1] == "\t"):
                out.append(line)  # an indented code block's line
                continue
        blank_before = not line.strip() or (blank_before and line.startswith(("    ", "\t")))
        shown, inside = _comment_line(line, inside)
        out.append(shown)
    return "".join(out)


def _comment_line(line: str, inside: bool) -> tuple[str, bool]:
    """One line with its comment parts blanked, ``inside`` a comment at its start; code
    spans outside comments keep their ``%%``. With it, whether a comment is open at its end."""
    out: list[str] = []
    for is_code, part in code_spans(line) if not inside else [(False, line)]:
        if is_code and not inside:
            out.append(part)
            continue
        pieces = part.split("%%")
        for n, piece in enumerate(pieces):
            if n:
                out.append("  ")
                inside = not inside
            out.append(blanked(piece) if inside else piece)
    return "".join(out), inside
