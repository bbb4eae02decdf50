"""The product's name in a question: which words of the site's name name the product, the
question without them, whether it asks what the product is, and the names it makes on the
product's ("LumenTurboMode"). ``coverage`` judges a question naming the product by what it
asks besides the name.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from kb_qa.text import keyword_tokens
from kb_qa.types import Hit

__all__ = ["NAME_PAGES", "asks_about", "made_names", "product_words", "without_product", "writes"]

# A question naming the product ("How much does Lumen cost?", "Who founded Lumen?") is close
# to every section of its docs by the name alone (0.49-0.59 on the sample site, over the
# 0.36 threshold): it is covered only when what it asks besides the name is too, by the
# words floor ("How much does cost?": 0.21; "How much RAM does a server need?": 0.32) or by
# its words in one of the best passages (``covered_naming``). The name is the words of the
# site's name (and of a hyphenated one's parts: "paperless") that NAME_PAGES of its pages
# or more repeat, filler ("Documentation", "Docs") aside. bench/coverage.py --named: of
# 139 on-topic dev questions naming their product none is lost; of 228 named off-topic ones
# asked of 19 sites, 195 are flagged (31 before). A QA pass of 193 questions naming Lumen,
# Ruff, Paperless-ngx and Textual (short ones such as "ruff conda?" included) found about
# ten on-topic ones now called not covered ("Does Lumen work on ARM?", "Paperless-ngx
# mobile app?": words the docs do not use); the word rule took that from about 25.
NAME_PAGES = 0.3
_NAME_FILLER = frozenset(
    "documentation docs doc manual guide handbook wiki reference site project official user "
    "the for of and".split()
)


def product_words(site_name: str, pages: Sequence[str]) -> frozenset[str]:
    """The words of ``site_name`` that name the product: not filler, and in NAME_PAGES or
    more of ``pages`` (each page's text, lowercased)."""
    named = re.findall(r"[\w-]{2,}", site_name.lower())
    # "Paperless-ngx" is asked as "paperless" too
    words = {p for w in named for p in (w, *w.split("-")) if len(p) >= 2} - _NAME_FILLER
    need = NAME_PAGES * len(pages)
    return frozenset(w for w in words if pages and sum(w in p for p in pages) >= need)


def without_product(question: str, product: frozenset[str]) -> str | None:
    """``question`` without the product's name ("Lumen's" too); None when it does not name
    it, or asks nothing else ("What is Lumen?")."""
    if not product:
        return None
    rest, named = _unnamed(question, product)
    return rest if named and keyword_tokens(rest) else None


def _unnamed(question: str, product: frozenset[str]) -> tuple[str, int]:
    """``question`` with the product's name taken out, and how often it was there."""
    names = "|".join(re.escape(w) for w in sorted(product, key=len, reverse=True))
    rest, named = re.subn(rf"(?i)(?<![\w-])(?:{names})(?:['’]s)?(?![\w-])", " ", question)
    return " ".join(rest.split()), named


_JOINER = re.compile(r"[\W_]+")  # what a name's parts are written apart with


def made_names(question: str, product: frozenset[str]) -> list[str]:
    """The names ``question`` writes with the product's name as their first part, in
    CamelCase or snake case ("LumenTurboMode", "LUMEN_ATTEMPT")."""
    names = "|".join(re.escape(w) for w in sorted(product, key=len, reverse=True))
    return re.findall(rf"(?<![\w-])(?i:{names})(?=[A-Z_])\w+", question) if product else []


def writes(hits: Sequence[Hit], name: str) -> bool:
    """Whether a passage of ``hits`` writes ``name``, its parts perhaps apart."""
    joined = _JOINER.sub("", name.casefold())
    return any(joined in _JOINER.sub("", h.chunk.index_text.casefold()) for h in hits)


# Words that ask what a product is rather than about something of it ("Tell me about Lumen").
_ABOUT = frozenset(keyword_tokens("tell give about explain overview describe introduction purpose"))


def asks_about(question: str, product: frozenset[str]) -> bool:
    """Whether ``question`` asks what the product is: it names it and asks nothing else
    ("What is Lumen?", "What does Lumen do?", "Tell me about Lumen")."""
    if not product:
        return False
    rest, named = _unnamed(question, product)
    return bool(named) and set(keyword_tokens(rest)) <= _ABOUT
