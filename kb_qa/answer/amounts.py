"""Questions that ask for an amount, and passages that state one.

"How much buttermilk goes into the pancakes?", "What's the limit?", "饺子和面要加多少水？" are
answered by a number with its unit ("450 ml", "256 KiB", "260 毫升"): the expected answer
type of question answering systems, in its simplest form. A passage that states an amount
is likelier to answer such a question than one that only shares its words ("makes about
12 pancakes" states a number, but no amount of anything the question measures).

Amounts count in prose, lists and tables, not in fenced code: a number there is an
example's value (a sample request's ``"timeout": "5m"``), not what the docs promise.
"""

from __future__ import annotations

import re

__all__ = ["asks_amount", "states_amount", "without_asking_form"]

_ASKS = re.compile(
    r"\bhow (?:much|many|long|big|large|often|far|heavy|soon)\b|\blimits?\b|\bsize\b"
    r"|多少|多久|多长|多大",
    re.IGNORECASE,
)
# The words that ask for an amount, in the languages whose questions are read by their
# words: "how long", "wie lange", "combien de temps", "cuánto tiempo", "quanto tempo". They
# say how a question asks, not what it is about: as a word to find, "long" scored "as long
# as 64 characters" for "How long is a token valid?", and "much" (in no passage) called
# "how much was the MOT?" not covered by a note whose table has the MOT's cost. Dropped from
# what no-key answers look for (English): bench/passages.py dev first passage 0.855
# unchanged, second passage shown 0.073 -> 0.055, off topic 0.055 -> 0.036.
_ASKING_FORM = re.compile(
    r"(?<=\bhow )(?:many|much|long|often|far|big|large|old|soon)\b"
    r"|(?<=\bwie )(?:lange|viele?|oft|weit|gro(?:ß|ss)|alt|bald)\b"
    r"|\bcombien(?: de temps)?\b|\bcu[áa]nt[oa]s?(?: tiempo)?\b|\bquant[oaie]s?(?: tempo)?\b",
    re.IGNORECASE,
)
_UNITS = (
    # data sizes
    r"[KMGTP]i?B|bytes?|bits?"
    # time
    r"|ms|s|secs?|seconds?|mins?|minutes?|h|hrs?|hours?|days?|weeks?|months?|years?"
    # length, volume, mass, pressure, temperature, share
    r"|nm|mm|cm|m|km|inch(?:es)?|ft|feet|miles?"
    r"|ml|cl|dl|l|litres?|liters?|tbsp|tsp|cups?|oz|g|kg|lbs?|bar|psi|kPa|°C|°F|%"
    # counts of something
    r"|times|characters?|requests?|items?|entries|rows?|connections?|retries|attempts?"
)
# A number, read once from the start of its run of digits, "." and "," (a leading ".5"
# included): tried from every digit, a pattern that may end at any digit of the run is
# cubic in its length (a page of 8,000 digits held a question for an amount 35 s).
_NUMBER = r"(?<![\d.,])[.,]*\d+(?:[.,]+\d+)*"
_AMOUNT = re.compile(
    rf"{_NUMBER}(?:\s?[-–x]\s?{_NUMBER})?\s?(?:(?:{_UNITS})(?![^\W\d_])"
    # a rate: "600 per minute", "300 jobs per second"
    rf"|(?:[^\W\d_]+\s)?(?:per|a|an|/)\s?(?:second|minute|hour|day|week|month|year)s?\b"
    # CJK units follow the number directly and need no word boundary
    r"|毫升|升|克|公斤|千克|斤|分钟|小时|秒|天|周|个月|年|个|分|次|倍|度|公里|米)",
    re.IGNORECASE,
)
_FENCE = re.compile(r"^ *(```|~~~).*?^ *\1[^\n]*$", re.MULTILINE | re.DOTALL)


def asks_amount(question: str) -> bool:
    """Whether the question asks how much, how many, how long or what the limit is."""
    return bool(_ASKS.search(question))


def states_amount(passage: str) -> bool:
    """Whether the passage, fenced code aside, states a number with its unit or as a rate."""
    return bool(_AMOUNT.search(_FENCE.sub("", passage)))


def without_asking_form(question: str) -> str:
    """The question without the words that ask for an amount ("how much", "wie lange"):
    what is left says what it is about."""
    return _ASKING_FORM.sub("", question)
