"""Which language a question is asked in, told by its function words, and the question
without them.

MiniLM reads English. A French question over French docs scores high against any French
section, on topic or not ("Quelle est la capitale de l'Australie ?" reached 0.41, over the
coverage threshold), and its "les", "sont", "est" count as topic words in the keyword
search and the passage choice. The words a language asks with (``stop-words``' lists,
Latin-script languages only: other scripts are ``text.unread_share``'s) tell which one a
question is in: of 627 English questions (``bench/questions``) none is read as another
language, and each of the 8 off-topic ones in Spanish, German, French, Italian and Dutch
is. Japanese and Korean grammar is told by its script and endings (``cjk_topic``).
"""

from __future__ import annotations

import functools
import re
import unicodedata
from collections.abc import Sequence

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
    return _told(question)


def _told(text: str) -> str:
    words = [w.lower() for w in _WORD.findall(text)]
    counts = sorted((sum(w in _stop_words(lang) for w in words), lang) for lang in LATIN)
    (second, _), (most, lang) = counts[-2], counts[-1]
    return lang if most >= MIN_WORDS and most > second else ""


# A vault's language is told from this many of its pages, evenly spread, each by its first
# this many characters: a 30,000-note vault is told in well under a second.
SAMPLE_PAGES = 200
SAMPLE_CHARS = 3000
_LETTER = re.compile(r"[^\W\d_]")
_LATIN_LETTER = re.compile(r"[A-Za-z\u00c0-\u024f]")


def foreign_share(texts: Sequence[str]) -> float:
    """The share of ``texts`` (pages, weighed by how much of each is read) written in a
    language other than English: in another script, or in a Latin-script language told by
    its function words (``asked_in``'s rule)."""
    step = max(1, len(texts) // SAMPLE_PAGES)
    read = foreign = 0
    for text in texts[::step]:
        sample = text[:SAMPLE_CHARS]
        letters = len(_LETTER.findall(sample)) or 1
        latin = len(_LATIN_LETTER.findall(sample))  # by the regex engine: unread_share is slow
        other = latin < letters / 2 or _told(sample) not in ("", "en")
        read += len(sample)
        foreign += len(sample) if other else 0
    return foreign / read if read else 0.0


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


# Japanese writes its particles, endings and most asking words in hiragana beside the kanji
# and katakana of its topic words ("家賃はいくら？", "初日に何をする"): a run of hiragana in
# a run holding kanji or katakana is grammar (okurigana too: "申し込み" reads as 申 and 込,
# in the question and the note alike). Korean spaces its words, each a stem with a particle
# or an ending after it ("두부는", "넣어요"). A QA pass over a Japanese and Korean vault:
# "家賃はいくら？" was not covered by "家賃8万5千円", its はい, いく, くら in no note.
_JA_RUN = re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]+")
_HIRAGANA = re.compile(r"[\u3041-\u309f]+")
_JA_ASKING = re.compile("[何誰幾]")  # what, who, how many: kanji that only ask
_JA_WORDS = frozenset(
    "は が を に で と の も へ から まで より か ね よ いくら なに なん いつ どこ どう どうやって "
    "どれ どの だれ する します しますか ですか ますか ます です でしょうか".split()
)
_HANGUL = re.compile(r"[\uac00-\ud7af]+")
# Particles and endings a Korean word's stem is read without, longest first.
_KO_ENDINGS = sorted(
    "은 는 이 가 을 를 의 에 에서 에게 한테 와 과 랑 이랑 도 만 로 으로 부터 까지 보다 서 요 "
    "어요 아요 여요 해요 에요 예요 이에요 나요 까요 을까요 니까 습니까 세요 으세요 죠 지요 "
    "는다 다 고".split(),
    key=len,
    reverse=True,
)
# Korean asking words (when, where, how, what, how much, who, why, how many, which) and the
# stems of "there is", "do", "become".
_KO_GRAMMAR = frozenset(
    "언제 어디 어떻게 무엇 뭐 뭘 얼마 누구 왜 몇 무슨 어느 어떤 있 하 해 되 돼".split()
)


def cjk_topic(text: str) -> str:
    """``text`` (NFKC) with the Japanese and Korean words that carry grammar, not a topic
    (particles, endings, asking words), as spaces. Chinese is left as it is."""
    text = _JA_RUN.sub(_japanese_topic, unicodedata.normalize("NFKC", text))
    return _HANGUL.sub(_korean_topic, text)


def _japanese_topic(match: re.Match[str]) -> str:
    run = match.group()
    if _HIRAGANA.fullmatch(run):  # kana alone: "りんご" is a word, "いくら" asks
        return " " if run in _JA_WORDS else run
    if not _HIRAGANA.search(run):  # Chinese, or kanji and katakana: "コーヒー豆"
        return run
    return _JA_ASKING.sub(" ", _HIRAGANA.sub(" ", run))


def _korean_topic(match: re.Match[str]) -> str:
    word = match.group()
    for end in _KO_ENDINGS:
        if word.endswith(end) and len(word) > len(end):
            word = word[: -len(end)]
            break
    return " " if word in _KO_GRAMMAR else word
