"""Before the model: one generous retrieval for the question (and, for a follow-up, the
conversation, and the model's rewrites of it), and the prompt with its numbered excerpts.
"""

from __future__ import annotations

import re
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from kb_qa.answer.coverage import CJK_SHARE, covered_naming
from kb_qa.answer.product import asks_about, product_words
from kb_qa.answer.prompt import Prompt, Turn, build_messages
from kb_qa.index.retrieval import fuse_rankings, path_matches
from kb_qa.ingest import site
from kb_qa.settings import Settings
from kb_qa.spoken import foreign, topic_words
from kb_qa.text import STOPWORDS, cjk_runs, cjk_share, normalize
from kb_qa.types import Hit
from kb_qa.verbatim import code_segments

if TYPE_CHECKING:
    from kb_qa.kb.knowledge_base import KnowledgeBase


@dataclass(frozen=True)
class Prepared:
    queries: list[str]
    prompt: Prompt
    ranked: list[tuple[int, Hit]]  # (excerpt number, hit) for the excerpts, best first
    candidates: int  # hits retrieved before the token budget
    retrieval_ms: float
    covered: bool  # retrieval's evidence says the sources cover the question
    asked: str = ""  # the question as asked (markup dropped), what a no-key answer quotes for
    carried: str = ""  # the previous question's key terms, when searched with them
    about: bool = False  # the question asks what the product is ("What is Lumen?")


def prepare(
    kb: KnowledgeBase,
    settings: Settings,
    question: str,
    history: Sequence[Turn] = (),
    include: Sequence[str] = (),
    exclude: Sequence[str] = (),
    for_model: bool | None = None,
    rewritten: Sequence[str] = (),
    lang: str = "",
) -> Prepared:
    """Retrieval and prompt assembly: blocking work, run in a worker thread.

    Every query is ranked for a reader (what the no-key answer shows and what coverage is
    judged on); ``for_model`` (default: a model is configured) also ranks each query
    plainly, with both fusions, and fuses all of it into the prompt (in-prompt recall on
    real questions 0.943 -> 0.954 for the plain ranking, -> 0.965 with both fusions).
    ``lang``, the reader's language, ranks a translated site's pages in it first.
    """
    started = time.perf_counter()
    # As the search reads them (a file path inside the vault too), for the prompt's list of
    # excluded pages: unread, such a path left every page out and the answer found nothing.
    include, exclude = kb.vault_paths(include), kb.vault_paths(exclude)
    for_model = bool(settings.model) if for_model is None else for_model
    queries = [without_markup(question)]  # what the model reads keeps the question as asked
    # The model's rewrites of it (rewrite.py, run before this thread); without them a
    # follow-up that leans on the conversation is searched with the previous question's
    # key terms: alone, "and how do I change it?" finds unrelated sections.
    asked = queries[0]
    carried = "" if rewritten else carried_terms(asked, history)
    follow = _searched_with(asked, carried)
    queries += rewritten

    def ranked_for(q: str, reader: bool, fusion: str | None = None) -> list[Hit]:
        n = settings.answer_candidates
        return kb.search(
            q,
            n,
            include=include,
            exclude=exclude,
            sections=False,
            reader=reader,
            fusion=fusion,
            lang=lang,
        )

    with kb.pinned():  # every query of this answer searches one index generation
        product = product_of(kb)

        def judged(q: str, hits: list[Hit]) -> bool:
            def search(rest: str) -> list[Hit]:
                return kb.search(rest, 10, include=include, exclude=exclude, lang=lang)

            return covered_naming(q, hits[:10], kb.embedder.name, product, search)

        rankings = []
        stood_alone = False  # searched alone and covered so: judged below already
        if follow and may_stand_alone(queries[0]):
            alone = ranked_for(queries[0], reader=True)
            if judged(queries[0], alone):
                rankings = [alone]  # it says what it asks and the docs answer it: a new question
                stood_alone = True
                carried = ""
        if follow and not rankings:
            queries = follow
        rankings = rankings or [ranked_for(q, reader=True) for q in queries]
        reader_hits = fuse_rankings(rankings, settings.rrf_k)[: settings.answer_candidates]
        about = asks_about(asked, product)
        if about:  # the site's home page says what the product is: its sections first
            reader_hits.sort(key=lambda h: h.chunk.url != "")
        hits = reader_hits
        if for_model:
            plain = [ranked_for(q, reader=False) for q in queries]
            # Both fusions: each finds gold sections the other ranks low (in-prompt recall
            # on real questions 0.948 -> 0.965).
            other = "rrf" if settings.fusion != "rrf" else "zscore"
            plain += [ranked_for(q, reader=False, fusion=other) for q in queries]
            hits = fuse_rankings(rankings + plain, settings.rrf_k)[: settings.answer_candidates]
        # Judged on what was searched: a rewrite written out in full covers a follow-up whose
        # bare words ("and how do I change it?") cover nothing.
        judging = zip(queries, rankings) if rewritten else [(queries[0], rankings[0])]
        is_covered = stood_alone or any(judged(q, r) for q, r in judging)
        is_covered = is_covered or (about and any(h.chunk.url == "" for h in reader_hits))
    paths = [p["path"] for p in kb.pages()]
    excluded = [
        p for p in paths if (include and not path_matches(p, include)) or path_matches(p, exclude)
    ]
    prompt = build_messages(
        question,
        hits,
        history=history,
        all_pages=paths,
        excluded=excluded,
        token_budget=settings.token_budget,
    )
    numbers = {h.chunk.id: n for n, h in enumerate(prompt.excerpts, 1)}
    ranked = [(numbers[h.chunk.id], h) for h in reader_hits if h.chunk.id in numbers]
    elapsed = (time.perf_counter() - started) * 1000
    return Prepared(queries, prompt, ranked, len(hits), elapsed, is_covered, asked, carried, about)


_PRODUCTS: dict[tuple[str, str], frozenset[str]] = {}


def product_of(kb: KnowledgeBase) -> frozenset[str]:
    """The words naming the product of ``kb``'s site (``product.product_words``), worked
    out once per index generation; none for a vault that is not a site."""
    generation, chunks = kb.view_chunks()
    key = (str(kb.settings.vault), generation)
    if key not in _PRODUCTS:
        root = kb.settings.vault
        name = site.any_site_name(root) if root else ""
        pages: dict[str, list[str]] = {}
        for c in chunks if name else ():
            pages.setdefault(c.path, []).append(c.text)
        texts = ["\n".join(t).lower() for t in pages.values()]
        _PRODUCTS.clear()  # one index per process, as a rule: no growing cache
        _PRODUCTS[key] = product_words(name, texts)
    return _PRODUCTS[key]


# An HTML tag: the "/" of a closing tag, its name, what follows the name, a closing "/".
_TAG = re.compile(r"<(/?)([A-Za-z][\w-]*)(\s[^<>]*)?(/?)>")
_BLANKS = re.compile(r"[ \t]{2,}")


def without_markup(question: str) -> str:
    """A question without the HTML markup pasted or typed into it ("<b>how</b> do retries
    work?", "<img src=x onerror=...> ..."): tags the question also closes, self-closing
    ones and those with ``name=value`` attributes go (the last leave their name: "img").
    A bare ``<id>``, ``Optional<T>`` or ``Box<dyn Error>`` is what it asks about, and code
    (spans and fenced blocks, ``code_segments``) is left as it is."""
    parts = code_segments(question)
    prose = [part for is_code, part in parts if not is_code]
    closed = {m.group(2).casefold() for p in prose for m in _TAG.finditer(p) if m.group(1)}

    def tag(m: re.Match[str]) -> str:
        name, rest = m.group(2), (m.group(3) or "").strip()
        if m.group(1) or m.group(4) or rest.endswith("/") or name.casefold() in closed:
            return " "
        if "=" in rest:
            return f" {name} "
        return m.group(0)

    plain = [(is_code, part if is_code else _TAG.sub(tag, part)) for is_code, part in parts]
    if "".join(part for _, part in plain) == question:
        return question  # its lines as they are: the first is its title
    text = "".join(part if is_code else _BLANKS.sub(" ", part) for is_code, part in plain)
    return text.strip() or question


# Words that point back: "it", "that", "the other one" ("one" alone is mostly a number:
# "Can I run one job per hour?"), 它, 这个, Japanese それ.
_DEPENDENT = re.compile(
    r"\b(?:it|its|this|that|these|those|they|them|same|instead|there)\b|"
    r"\b(?:that|this|which|the|other|another)\s+one\b|\bone\W*$|"
    r"它|这个|那个|这些|那些|それ|これ|その|この|あれ",
    re.IGNORECASE,
)
# Uses of "there" that point nowhere: "is there a dashboard?".
_NOT_POINTING = re.compile(
    r"\b(?:is|are|was|were|be)\s+there\b|\bthere\s+(?:is|are|was|were)\b", re.IGNORECASE
)
# Openings and endings of a question that continues the last one: "and …", "what about …",
# "那…", "还有…", "…呢？".
# A correction too: "no, I meant the CLI", "actually, …" ("No module named pip" is not).
_CONTINUES = re.compile(
    r"^\s*(?:(?:and|or|but|also|so|then|what\s+about|how\s+about|what\s+if|same|actually)\b|"
    r"(?:no|nope|sorry)\s*[,.!;]|那|还有)|\bi\s+meant?\b|呢\W*$",
    re.IGNORECASE,
)
# A fragment opening with a word that relates it to something ("On Windows?", "for Docker?"):
# a follow-up, never a search of its own.
_RELATES = re.compile(
    r"\s*(?:on|for|with|without|in|into|inside|under|via|using|at|by|from|to|per|over|"
    r"through|within|vs|versus|than)\b",
    re.IGNORECASE,
)
FRAGMENT_WORDS = 3  # a question this short without a question of its own is a follow-up
FRAGMENT_CJK = 4  # ... and in Chinese or Japanese, this many characters ("怎么改？")


def points_back(question: str) -> bool:
    """Whether a question names what it asks about by a word that points back ("it",
    "that one", "它"): the conversation's terms are then what it asks about."""
    return _DEPENDENT.search(_NOT_POINTING.sub(" ", question)) is not None


def leans_on_conversation(question: str) -> bool:
    """Whether a question needs the conversation to be understood (see follow_up_queries)."""
    if _CONTINUES.search(question) or points_back(question):
        return True
    if cjk_share(question) >= CJK_SHARE:
        return sum(map(len, cjk_runs(question))) <= FRAGMENT_CJK
    return len(question.split()) <= FRAGMENT_WORDS


# Words of a question that say what is asked, not what it is about: a follow-up brings its
# own ("how do I change it?"), and the previous question's would pull its answer back.
_GENERIC = frozenset(
    """default defaults use uses using used get gets want need way ways possible should could
    please know tell work works happen happens thing things also just any all some much many
    more most other here now like make see did done able one ones""".split()
)
_WORD = re.compile(r"[^\W_]+(?:[_./-][^\W_]+)*")


def key_terms(question: str) -> str:
    """What a question is about: its words without stopwords and generic question words, in
    order ("What time zone do cron schedules use by default?" -> "time zone cron
    schedules"); names such as ``uv.lock`` or ``max_attempts`` stay whole."""
    terms: list[str] = []
    for word in _WORD.findall(topic_words(normalize(question), foreign(question))):
        folded = word.casefold()
        if folded not in STOPWORDS and folded not in _GENERIC and word not in terms:
            terms.append(word)
    return " ".join(terms)


# A question that points back but names this many things of its own (key_terms) may be a
# new question: see may_stand_alone.
OWN_TERMS = 5


def may_stand_alone(question: str) -> bool:
    """Whether a question that leans on the conversation may be a question of its own all
    the same. A fragment that names something and relates to nothing ("spare key", "alarm
    code"; not "On Windows?"): how people search their notes. One that points back: it
    does not open as a continuation, names ``OWN_TERMS`` things or more, and one of them
    comes before the first word that points back, so that the word can point to it ("I
    enqueued a job by mistake. How do I stop it from the CLI?"; not "Can they show in the
    local preview but not in the real build?"). ``prepare`` then searches it alone, and
    keeps that when the docs cover it alone ("Our legal team says no Google requests. How
    do I stop that?" after a question about fonts is not covered alone: a follow-up).

    bench/passages.py, dev split: the first passage holds the answer for 0.745 of the
    questions asked right after an unrelated one, 0.855 so (as for the questions alone);
    22 of its 55 questions point back. bench/answers.py --followups: 0.900 either way."""
    if _CONTINUES.search(question):
        return False
    unpointed = _NOT_POINTING.sub(" ", question)
    pointer = _DEPENDENT.search(unpointed)
    if not pointer and cjk_share(question) < CJK_SHARE and not _RELATES.match(question):
        # Read as a follow-up of whatever was asked before, a fragment was answered from
        # that topic ("spare key" after a Chinese lesson quoted the lesson).
        return bool(key_terms(question))
    before = key_terms(unpointed[: pointer.start()]) if pointer else ""
    return len(key_terms(question).split()) >= OWN_TERMS and bool(before)


def follow_up_queries(question: str, history: Sequence[Turn]) -> list[str]:
    """Without a model to rewrite it, a question that leans on the conversation is searched
    with the previous user turn's key terms, in both orders (the first line leads the
    reader's ranking through its title vector), and not alone. bench/answers.py
    --followups, 20 follow-ups over the synthetic corpora: the gold section in the answer's
    first five 0.450 alone, 0.750 with the whole previous question added in both orders
    (the version before), 0.900 so; 0.800 for the question written out in full.

    A question leans on the conversation when it points back ("it", "that one", "它"),
    opens as a continuation ("and if…", "what about…") or is a bare fragment of
    three words or fewer ("On Windows?"). Shortness alone is no sign: "How much RAM does a
    Lumen server need?" asked after a question about retries is a new question, and read
    as a follow-up it found retry sections (bench/passages.py, "after another"). [] when
    the question stands on its own; one that points back but may not is checked by
    ``prepare`` (``may_stand_alone``)."""
    return _searched_with(question, carried_terms(question, history))


def _searched_with(question: str, terms: str) -> list[str]:
    """``question`` with the conversation's ``terms``, in both orders ([] without terms)."""
    return [f"{question}\n{terms}", f"{terms}\n{question}"] if terms else []


CARRIED_TURNS = 3  # user turns a chain of follow-ups reaches back to


def carried_terms(question: str, history: Sequence[Turn]) -> str:
    """The previous user turn's key terms when ``question`` leans on the conversation, else
    "" (see follow_up_queries); when that turn was a follow-up too, the terms of the turn it
    followed as well ("and for one job?" after "how do I change it?" after "How many times
    is a failing job attempted?" carried "change" alone and was not covered)."""
    if not leans_on_conversation(question):
        return ""
    terms: list[str] = []
    asked = [t.content for t in reversed(history) if t.role == "user"][:CARRIED_TURNS]
    for previous in asked:
        terms.append(key_terms(previous) or previous)
        if not leans_on_conversation(previous) or may_stand_alone(previous):
            break
    return " ".join(terms)
