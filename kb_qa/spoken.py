"""Which language a question is asked in, told by its function words, and the question
without them.

MiniLM reads English. A French question over French docs scores high against any French
section, on topic or not ("Quelle est la capitale de l'Australie ?" reached 0.41, over the
coverage threshold), and its "les", "sont", "est" count as topic words in the keyword
search and the passage choice. The words a language asks with (``stop-words``' lists,
Latin-script languages only: other scripts are ``text.unread_share``'s) tell which one a
question is in: of 627 English questions (``bench/questions``) none is read as another
language, and each of the 8 off-topic ones in Spanish, German, French, Italian and Dutch
is.
"""

from __future__ import annotations

import functools
import re
import unicodedata

import Stemmer
from stop_words import get_stop_words

# The Latin-script languages ``stop-words`` has lists for.
LATIN: tuple[str, ...]
LATIN = ("ca", "cs", "da", "de", "en", "es", "fi", "fr", "hu", "id", "it", "ms", "nb", "nl")
LATIN += ("pl", "pt", "ro", "sk", "sv", "tr", "vi")
MIN_WORDS = 2  # a language's words a question must hold to be read as in it
_WORD = re.compile(r"[^\W\d_]+")


@functools.cache
def _stop_words(lang: str) -> frozenset[str]:
    return frozenset(get_stop_words(lang))


@functools.lru_cache(maxsize=256)  # asked of one question by search, coverage and quoting
def asked_in(question: str) -> str:
    """The language ``question`` is asked in ("fr", "en"), told by the function words it
    holds: at least ``MIN_WORDS`` of one language's, more than of any other. "" when they
    do not tell (a question of names and code, a tie)."""
    words = [w.lower() for w in _WORD.findall(question)]
    counts = sorted((sum(w in _stop_words(lang) for w in words), lang) for lang in LATIN)
    (second, _), (most, lang) = counts[-2], counts[-1]
    return lang if most >= MIN_WORDS and most > second else ""


def foreign(question: str) -> str:
    """The language of a question asked in a Latin-script language other than English
    (``asked_in``), "" for an English one or one that does not tell."""
    lang = asked_in(question)
    return "" if lang == "en" else lang


def topic_words(text: str, lang: str) -> str:
    """``text`` without the function words of ``lang`` (``foreign``'s answer; "" leaves it
    as it is: English ones are ``text.STOPWORDS``, dropped wherever words are read)."""
    if not lang:
        return text
    stop = _stop_words(lang)
    return _WORD.sub(lambda m: " " if m.group().lower() in stop else m.group(), text)


# Snowball's stemmer of each language ``stop-words`` has a list for (PyStemmer, as the
# keyword index's English one): "lancer" and "lancez" are one word in French.
_SNOWBALL = {
    "ca": "catalan", "da": "danish", "de": "german", "es": "spanish", "fi": "finnish",
    "fr": "french", "hu": "hungarian", "id": "indonesian", "it": "italian", "nb": "norwegian",
    "nl": "dutch", "pl": "polish", "pt": "portuguese", "ro": "romanian", "sv": "swedish",
    "tr": "turkish",
}  # fmt: skip


@functools.cache
def _stemmer(lang: str) -> Stemmer.Stemmer | None:
    return Stemmer.Stemmer(_SNOWBALL[lang]) if lang in _SNOWBALL else None


def stems(text: str, lang: str) -> set[str]:
    """The words of ``text`` (NFKC, case-folded) as ``lang``'s stemmer reads them, when it
    has one (else as written)."""
    words = _WORD.findall(unicodedata.normalize("NFKC", text).casefold())
    stemmer = _stemmer(lang)
    return set(stemmer.stemWords(words) if stemmer else words)
