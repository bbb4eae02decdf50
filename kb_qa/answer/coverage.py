"""Do the sources cover a question? Decided from evidence retrieval already has.

The best vector match's cosine similarity separates questions the docs answer from ones
they do not (other products, general knowledge, other languages) well for the default
model: calibrated on 87 real user questions + 160 synthetic ones against 40 off-topic
questions run over every corpus (bench/answers.py prints the rates). Other embedding
models have other similarity scales and no calibration yet: for them a question counts as
covered whenever anything matched. A question in Chinese, Japanese or Korean is judged by
the keyword side whatever the model (MiniLM reads none of them): most of its character
pairs must occur in the best passages; one in another script MiniLM cannot read (Hebrew,
Arabic) by its words, with MiniLM, and so is one in another language of the Latin script
(French, German: ``spoken``), which MiniLM finds close to any text of that language.
"""

from __future__ import annotations

import itertools
import re
import unicodedata
from collections.abc import Callable, Sequence

from kb_qa.answer.amounts import without_asking_form
from kb_qa.answer.product import made_names, without_product, writes
from kb_qa.spoken import asked_in, cjk_topic, foreign, stems, topic_words
from kb_qa.text import STOPWORDS, cjk_runs, cjk_share, cjk_skip_pairs, keyword_tokens, unread_share
from kb_qa.types import Hit

# Cosine similarity of the best match at or above which the sources cover the question.
# 0.36: on real questions 4.6% of on-topic and 94.1% of off-topic ones come out not covered.
THRESHOLDS = {"minilm": 0.36}
# Below it, down to this, the question still counts as covered when one of the best three
# passages holds every one of its words, or the best one two of them side by side: a short
# question in plain words ("what port does the server listen on", "is there a dashboard?")
# or a short note scores lower than the section answering it. bench/coverage.py --per-index
# (134 on-topic dev questions, 480 off-topic): the side-by-side pair takes on-topic ones
# called not covered 7 -> 5 and leaves the off-topic ones flagged at 439 of 480.
WORDS_FLOOR = {"minilm": 0.30}
# Below it, the question is covered when one of the best three passages holds all its words
# within this many words per question word of each other. bench/coverage.py --per-index at
# 0.36: on-topic not covered 0.014 either way, off-topic flagged 0.920 -> 0.919 (every
# question word anywhere in a passage instead: 0.896, long sections hold many words).
NEAR = 2
CJK_SHARE = 0.3  # a question this CJK is judged by its words, not by MiniLM's vector
# A question mostly in another script MiniLM cannot read (Hebrew, Arabic, Cyrillic: its
# cosines to any text in that script come out alike, on topic or not) is judged by its
# words of three letters or more: this share of them must be in the best three passages.
UNREAD_SHARE = 0.5
UNREAD_MATCHED = 0.5
# Words that make a Hebrew or Arabic question a question (how, how much, which, why, when,
# where, whether, what), and the one-letter and article prefixes a word is matched without
_ASKING_WORDS = frozenset(
    "איך כמה למה מתי איפה האם איזה איזו באיזה באיזו מהו מהי كيف لماذا متى أين ماذا هل".split()
)
_PREFIXES = tuple("וה וב ול ו ה ב ל מ כ ש وال بال لل ال و ب ل".split())
CJK_MATCHED = 0.5  # share of its character pairs the best passages must contain ...
CJK_PAIRS = 2  # ... or this many of them, the pairs that only ask (多少, 怎么) aside
# Pairs too common to say what a question is about.
_GENERIC_PAIRS = frozenset("一个 一些 一下 这个 那个 我们 你们 他们 自己 没有 中的".split())
# Character pairs that make a question a question, not what it is about.
_ASKING = frozenset(
    "什么 怎么 怎样 如何 多少 多久 多长 是否 为什 哪些 哪里 哪个 可以 能否 需要 的是 是什 是多 "
    "吗 呢".split()
)
CJK_CHARS = 0.75  # share of a question's content characters the best passages must hold ...
# ... not counting characters that carry grammar, not a topic ("要" need, "的" of, "我" I).
_FUNCTION_CHARS = frozenset("的了是在有和要我你他她它们这那就也都还会能把被给对从到上下个一不吧啊")


def covered(question: str, hits: Sequence[Hit], embed_model: str) -> bool:
    """Whether ``hits`` (the question's results, best first) show the sources cover it."""
    if not hits:
        return False
    if cjk_share(question) >= CJK_SHARE:  # whatever the model: its character pairs decide
        return _cjk_covered(question, hits)
    threshold = THRESHOLDS.get(embed_model)
    if threshold is None:
        return True
    if unread_share(question) >= UNREAD_SHARE:  # Hebrew, Arabic...: MiniLM cannot read it
        return _words_covered(_unread_words(question), hits[:3])
    if lang := _language(question, hits):  # French, German...: MiniLM finds any such text alike
        return bool(_foreign_covered(question, lang, hits))
    best = max((h.similarity for h in hits if h.similarity is not None), default=0.0)
    if best >= threshold:
        return True
    asked = without_asking_form(question)  # "how much", "wie lange": no word to find
    wanted = keyword_tokens(asked)
    if not wanted:
        return False
    # "the --frozen flag" of docs that say "the --frozen option": what kind of thing it is,
    # in words the docs may not share, not what it is about.
    wanted = [t for t in wanted if t not in _KINDS] or wanted
    held = [keyword_tokens(h.chunk.index_text) for h in hits[:3]]  # each read once
    if _names_object(question, asked, hits[:3]) or _first_in_both(set(wanted), hits[:3], held):
        return True
    if best < WORDS_FLOOR.get(embed_model, threshold):
        # A short fact in a longer section scores lower still ("wheel bolt torque" of a tyres
        # section's "Torque: tighten the wheel bolts to 120 Nm", 0.27): its words close
        # together in one passage still cover it; scattered over a long one they do not.
        return any(_near(set(wanted), t, NEAR * len(set(wanted))) for t in held) or _agreed(
            set(wanted), hits[:3], held
        )
    return any(set(wanted) <= set(t) for t in held) or _holds_phrase(wanted, held[0])


def _language(question: str, hits: Sequence[Hit]) -> str:
    """The Latin-script language other than English a question is judged in: the one it is
    asked in (``foreign``), or, when its words do not tell ("Funktioniert Lumière
    offline?", "Comment installer Lumière ?": one function word), that of the best
    passage, which MiniLM reads as poorly."""
    if lang := foreign(question):
        return lang
    return foreign(hits[0].chunk.index_text[:2000]) if asked_in(question) == "" else ""


def _foreign_covered(question: str, lang: str, hits: Sequence[Hit]) -> bool | None:
    """Whether the best three passages hold UNREAD_MATCHED of the words of a question in
    ``lang`` (another Latin-script language than English) that say what it is about: of
    three letters or more, its function words and the words that ask for an amount ("wie
    lange", "combien de temps") aside, each read by ``lang``'s stemmer ("Comment lancer
    Lumière ?" of "lancez `lumiere init`"). None when it has no such word."""
    asked = topic_words(without_asking_form(question), lang)
    words = [w for w in stems(asked, lang) if len(w) >= 3]
    if not words:
        return None
    found = set().union(*(stems(h.chunk.index_text, lang) for h in hits[:3]))
    return sum(w in found for w in words) >= UNREAD_MATCHED * len(words)


def _agreed(wanted: set[str], hits: Sequence[Hit], held: Sequence[list[str]]) -> bool:
    """Whether the keyword search's first section holds every one of three or more question
    words (a site whose sections MiniLM scores low: "Which UID does the Debian package
    create?" of a tab "The package creates the orbit user with UID 781", cosine 0.11)."""
    return len(wanted) >= 3 and any(
        h.keyword_rank == 1 and wanted <= set(t) for h, t in zip(hits, held, strict=False)
    )


# An identifier as a question writes it: "connect", "Client.publish", "chunk_size"; a
# hyphen joins ("re-render" is no "render", which an API reference's render() documents).
_IDENTIFIER = re.compile(r"[^\W\d][\w.-]*\w|[^\W\d]")
# Written as code writes names (DeliveryMode, chunk_size, DEFAULT_PORT): no English word.
_COMPOUND = re.compile(r"[a-z][A-Z]|_")


def _names_object(question: str, asked: str, hits: Sequence[Hit]) -> bool:
    """Whether one of ``hits`` documents an API object the question names as its code does
    (an anchor such as mkdocstrings' ``tidewire.routing.bind`` under a heading ``bind``),
    the name a compound one or the section holding half the question's other words. A QA
    pass asked a generated reference "What does bind raise?" (cosine 0.18: a short question
    against a parameter table, "bind" and its "Raises" a table apart) and "What are the
    values of DeliveryMode?" (its members listed, "values" written nowhere): both were not
    covered. The other words are counted with the kinds of thing ("What parameters does
    Client take?" of a section with a "Parameters" table and no "take")."""
    written: set[str] = set()
    for word in _IDENTIFIER.findall(question):
        written.update((word, *word.split(".")))
    words = set(keyword_tokens(asked))
    for h in hits:
        head = h.chunk.heading.split()
        module, dot, name = h.chunk.anchor.rpartition(".")
        if not (module and dot and head and head[0] == name and name in written):
            continue
        if _COMPOUND.search(name):
            return True
        others = words - set(keyword_tokens(name))
        held = set(keyword_tokens(h.chunk.index_text))
        if 2 * sum(w in held for w in others) >= len(others):
            return True
    return False


def _first_in_both(wanted: set[str], hits: Sequence[Hit], held: Sequence[list[str]]) -> bool:
    """Whether the section both searches put first holds all but one of three or more of
    the question's words, close together, one of them a name it writes as code: "What is
    the default heartbeat interval?" of a settings table's row "`heartbeat` | Seconds
    between heartbeats ... Defaults to 60" (cosine 0.26), whose docs never say "interval".
    Not the code: "What language is spoken in Brazil?" of paperless-ngx's "Localization"
    ("the language ... Brazilian Portuguese")."""
    for h, t in zip(hits, held, strict=False):
        if h.keyword_rank == 1 and h.vector_rank == 1 and len(wanted) >= 3:
            found = wanted.intersection(t)
            named = keyword_tokens(" ".join(_CODE_NAME.findall(h.chunk.text)))
            return (
                len(found) >= len(wanted) - 1
                and not found.isdisjoint(named)
                and _near(found, t, NEAR * len(found))
            )
    return False


_CODE_NAME = re.compile(r"`([^\W\d][\w.]*)`")  # `heartbeat`, `Client.publish`


_KINDS = frozenset(keyword_tokens("flag option parameter argument arg switch"))
# How a question asks, not what about: "Why should I open the firewall?" of an admonition
# "Open the firewall" was not covered, its "should" in no passage.
_KINDS |= frozenset(keyword_tokens("must should could may might shall ought"))


def covered_naming(
    question: str,
    hits: Sequence[Hit],
    embed_model: str,
    product: frozenset[str],
    search: Callable[[str], Sequence[Hit]],
) -> bool:
    """:func:`covered`, and for a question naming the product, as close as WORDS_FLOOR
    without the name too (``search`` finds the hits of the question without it). Questions
    in CJK or another script are judged by their words alone; one in another Latin-script
    language by its words without the name."""
    if not covered(question, hits, embed_model):
        return False
    # A name made on the product's ("LumenConvergenceWarning", "LUMEN_TURBO"): the docs write
    # it (its parts perhaps apart: `lumen.Client()`) or do not cover it. By the name's words
    # alone, "What does LumenConvergenceWarning mean?" quoted job handlers.
    for name in made_names(question, product):
        parts = re.sub(r"(?<=[a-z])(?=[A-Z])|_", " ", name)  # its words, searched too
        if not writes(hits, name) and not writes(search(parts), name):
            return False

    floor = WORDS_FLOOR.get(embed_model)
    if floor is None or cjk_share(question) >= CJK_SHARE or unread_share(question) >= UNREAD_SHARE:
        return True
    rest = without_product(question, product)
    if rest is None:
        return True
    if lang := _language(question, hits):
        # Judged by its words, the name not one of them ("Qui a fondé Lumière ?" was
        # covered by "Lumière" alone); asking nothing else, it asks what the product is.
        return _foreign_covered(rest, lang, hits) is not False
    if max((h.similarity or 0.0 for h in search(rest)), default=0.0) >= floor:
        return True
    # Or two of its words or more close together in one of the best passages: "Does Lumen
    # support Windows?" of "Windows is not supported as a server platform" (0.26 without
    # the name). Or most of what it asks is in one, word for word (unstemmed: "founded" is
    # not a passage's "not found"): "ruff check?", "Lumen windows?" (0.18-0.21 without the
    # name), "How much memory does Lumen need?" of a table's "Memory" row.
    wanted = set(keyword_tokens(rest)) - _KINDS
    asked = [w for w in _plain_words(rest) if w not in _ASKING_AMOUNT]
    for h in hits[:3]:
        text = h.chunk.index_text
        if len(wanted) >= 2 and _near(wanted, keyword_tokens(text), NEAR * len(wanted)):
            return True
        held = set(_plain_words(text))
        if asked and 2 * sum(w in held for w in asked) > len(asked):
            return True
    return False


_ASKING_AMOUNT = frozenset("much many".split())


def _plain_words(text: str) -> list[str]:
    """The words of ``text`` as written, lowercased, a plural's "s" off, stop words aside."""
    words = re.findall(r"[^\W_]+(?:[-'][^\W_]+)*", text.lower())
    return [w[:-1] if len(w) > 3 and w.endswith("s") else w for w in words if w not in STOPWORDS]


def _near(wanted: set[str], text: list[str], reach: int) -> bool:
    """Whether ``text`` holds every word of ``wanted`` within ``reach`` words of each other."""
    count: dict[str, int] = {}
    at = [i for i, t in enumerate(text) if t in wanted]
    first = 0
    for i in at:
        count[text[i]] = count.get(text[i], 0) + 1
        while len(count) == len(wanted):
            if i - at[first] < reach:
                return True
            left = text[at[first]]
            count[left] -= 1
            if not count[left]:
                del count[left]
            first += 1
    return False


def _unread_words(question: str) -> list[str]:
    """The words of a question in a script MiniLM cannot read that say what it asks: of
    three letters or more, its asking words aside."""
    return [
        t
        for t in keyword_tokens(question)
        if len(t) >= 3 and unread_share(t) == 1.0 and t not in _ASKING_WORDS
    ]


def _words_covered(words: list[str], hits: Sequence[Hit]) -> bool:
    """A question MiniLM cannot read, or reads as any text of its language: covered when
    the passages hold UNREAD_MATCHED of its ``words``, a word matching with or without a
    prefix ("לשרת" finds "השרת", "الأرز" finds "أرز")."""
    found = set().union(*(_stems(t) for h in hits for t in keyword_tokens(h.chunk.index_text)))
    held = sum(1 for w in words if _stems(w) & found)
    return bool(words) and held >= UNREAD_MATCHED * len(words)


def _stems(word: str) -> set[str]:
    """``word`` and the word without one prefix of Hebrew or Arabic (and, the, in, to)."""
    return {word} | {
        word[len(p) :] for p in _PREFIXES if word.startswith(p) and len(word) > len(p) + 2
    }


def _cjk_covered(question: str, hits: Sequence[Hit]) -> bool:
    """A Chinese, Japanese or Korean question: covered when the best passages hold enough
    of its character pairs (MiniLM reads none of them; the other models are uncalibrated).
    Japanese and Korean grammar is no pair of it (``cjk_topic``): "家賃はいくら？" asks for
    家賃, which the passages hold as the question has it and read without their grammar."""
    topic = cjk_topic(question)
    wanted = {t for t in keyword_tokens(topic) if cjk_share(t) == 1.0}
    texts = [h.chunk.index_text for h in hits[:3]]
    found = set().union(*(keyword_tokens(t) for t in texts), *(_read(t) for t in texts))
    about = ((wanted | cjk_skip_pairs(topic)) & found) - _ASKING
    # A short personal note answers in few words: two content pairs are enough, a pair
    # of characters one apart counting too ("每天要背" finds "每天背"). Or the pairs
    # that say what it asks about, not how it asks (子怎 and 么做 straddle 怎么): half of
    # them in the best passages ("怎么包饺子？"), or the first, the topic a Chinese
    # question opens with, naming one of the best sections ("饺子和面要加多少水？" and
    # "饺子做法"; "减肥方法有哪些？" is not about a section named "学习方法"). Or the topic
    # pair in the best passages with most of the question's content characters, its
    # one-character verb included: "面团要醒多久？" against "面团……醒 30 分钟". A Japanese
    # or Korean question's one-character stems are content too (飼 of "ペットは飼えますか？":
    # else ペット's ット, in "セットアップ", was half of it).
    content = _content_pairs(topic)
    if topic != unicodedata.normalize("NFKC", question):
        content += [run for run in cjk_runs(topic) if len(run) == 1 and run not in content]
    named = set().union(*(keyword_tokens(" ".join(h.chunk.indexed_path)) for h in hits[:3]))
    return bool(wanted) and (
        len(wanted & found) >= CJK_MATCHED * len(wanted)
        or len(about) >= CJK_PAIRS
        or (bool(content) and len(found.intersection(content)) >= CJK_MATCHED * len(content))
        or (bool(content) and content[0] in named)
        or (bool(content) and content[0] in found and _chars_held(topic, hits[:3]))
    )


def _read(text: str) -> list[str]:
    """The tokens of a passage's Japanese or Korean without its grammar (none for others)."""
    topic = cjk_topic(text)
    return keyword_tokens(topic) if topic != unicodedata.normalize("NFKC", text) else []


def _content_pairs(question: str) -> list[str]:
    """The question's character pairs that lie outside its asking words (什么, 怎么, 吗) and
    are not generic, in order: what it is about, its topic first."""
    pairs: list[str] = []
    for run in cjk_runs(question):
        asking = _asking_at(run)
        for i in range(len(run) - 1):
            pair = run[i : i + 2]
            if i in asking or i + 1 in asking or pair in _GENERIC_PAIRS or pair in pairs:
                continue
            pairs.append(pair)
    return pairs


def content_chars(question: str) -> set[str]:
    """The CJK characters of a question outside its asking words: "饺子怎么煮？" gives 饺,
    子 and 煮, its one-character verb included. A Japanese or Korean question is passed as
    ``cjk_topic`` gives it, without its grammar."""
    chars: set[str] = set()
    for run in cjk_runs(question):
        asking = _asking_at(run)
        chars.update(ch for i, ch in enumerate(run) if i not in asking)
    return chars


def _chars_held(question: str, hits: Sequence[Hit]) -> bool:
    """Whether ``hits`` hold at least CJK_CHARS of the question's content characters (those
    outside its asking words that carry a topic, not grammar)."""
    chars = content_chars(question) - _FUNCTION_CHARS
    text = "".join(h.chunk.index_text for h in hits)
    return bool(chars) and sum(ch in text for ch in chars) >= CJK_CHARS * len(chars)


def _asking_at(run: str) -> set[int]:
    """The positions in a CJK run of its asking words (什么, 怎么, 多少, 吗)."""
    asking: set[int] = set()
    for word in _ASKING:
        at = run.find(word)
        while at >= 0:
            asking.update(range(at, at + len(word)))
            at = run.find(word, at + 1)
    return asking


def _holds_phrase(wanted: list[str], text: list[str]) -> bool:
    """Whether ``text`` has two of the question's words side by side as the question has
    them ("power bank", "environment variable"): a short note names its subject so even
    when the question's other words are not its own ("Can I take my power bank on the
    plane?" against "airlines allow up to 100 Wh")."""
    said = set(itertools.pairwise(wanted))
    return any(pair in said for pair in itertools.pairwise(text))
