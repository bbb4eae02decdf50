"""BM25 keyword ranking over the same chunks as the vector index (bm25s, in memory)."""

from __future__ import annotations

import logging
import re
from collections.abc import Sequence
from pathlib import Path

import bm25s
import numpy as np

from kb_qa.text import (
    ISO_DATE,
    compound_tokens,
    keyword_tokens,
    spelled_out,
    without_block_ids,
)
from kb_qa.types import Chunk

# bm25s sets its own logger to DEBUG on import, which floods the CLI.
logging.getLogger("bm25s").setLevel(logging.WARNING)


# A code a question names: letters, then three digits or more (an error code "LUM-2003", a
# lint rule "E501", "PEP-660"). Names with an inner "." or "_" (mkdocs.yml, user_id) and
# versions are not: real questions name many, and the few chunks holding one often do not
# answer (real dev R@5 0.595 -> 0.582 when they counted).
_CODE = re.compile(r"(?<![\w.-])[A-Za-z]{1,8}-?\d{3,}(?![\w.-]*\w)")


def tokens_and_dates(text: str) -> list[str]:
    """A text's words, and a date whole besides its parts: "What happened on 2024-01-12?"
    was as near to 2024-12-01 as to 2024-01-12."""
    return keyword_tokens(text) + ISO_DATE.findall(text)


class KeywordIndex:
    """A BM25 index whose document i is chunk i of the list it was built from."""

    def __init__(
        self, chunks: Sequence[Chunk], token_cache: dict[str, list[str]] | None = None
    ) -> None:
        self.size = len(chunks)
        # Weaker length normalisation than the usual b=0.75: every chunk opens with its heading
        # path, so short sections are not under-informative, and b 0.4-0.5 ranked gold
        # sections higher on the dev questions (bench/quality.py; R@5 0.850 -> 0.869).
        self._bm25 = bm25s.BM25(k1=1.5, b=0.5)
        # Tokenising is most of the build time; reuse tokens of unchanged chunks (by hash)
        # so a rebuild after one edit stays fast.
        old = token_cache or {}
        self.tokens = {
            c.hash: old.get(c.hash) or tokens_and_dates(_keyword_text(c)) for c in chunks
        }
        self._index([self.tokens[c.hash] for c in chunks])

    @classmethod
    def of_texts(
        cls, texts: Sequence[str], token_cache: dict[str, list[str]] | None = None
    ) -> KeywordIndex:
        """A BM25 index whose document i is ``texts[i]`` (an empty text matches nothing);
        ``tokens`` is keyed by text here, and ``token_cache`` (a previous one's) is reused."""
        index = cls([])
        index.size = len(texts)
        old = token_cache or {}
        index.tokens = {t: old.get(t) or tokens_and_dates(t) for t in dict.fromkeys(texts)}
        index._index([index.tokens[t] for t in texts])
        return index

    def _index(self, corpus: list[list[str]]) -> None:
        self._vocab: dict[str, int] = {}
        if not any(corpus):
            return
        # bm25s needs a token in every document: an empty one gets a word no query has.
        self._bm25.index([doc or ["\x00"] for doc in corpus], show_progress=False)
        self._vocab = self._bm25.vocab_dict

    def save(self, folder: Path) -> None:
        """Write the BM25 index to ``folder`` as bm25s writes it (JSON and NumPy arrays:
        nothing in them runs code when read). The tokens are not written."""
        folder.mkdir(parents=True, exist_ok=True)
        if self._vocab:
            self._bm25.save(folder, show_progress=False)

    @classmethod
    def load(cls, folder: Path, size: int) -> KeywordIndex:
        """The index ``save`` wrote for ``size`` documents; its ``tokens`` are empty (a
        rebuild from it tokenises every text again). ValueError when it holds another size."""
        index = cls([])
        index.size = size
        if (folder / "params.index.json").is_file():
            index._bm25 = bm25s.BM25.load(folder, show_progress=False)
            index._vocab = index._bm25.vocab_dict
            if int(index._bm25.scores["num_docs"]) != size:
                raise ValueError(f"a keyword index of {index._bm25.scores['num_docs']} documents")
        return index

    def scores(self, query: str) -> np.ndarray:
        """BM25 score of every chunk for ``query`` (zeros when no query word is indexed)."""
        tokens = [t for t in tokens_and_dates(query) if t in self._vocab]
        tokens += [t for t in compound_tokens(query) if t in self._vocab and t not in tokens]
        tokens += [t for t in spelled_out(query) if t in self._vocab and t not in tokens]
        if not tokens:
            return np.zeros(self.size, dtype=np.float32)
        return np.asarray(self._bm25.get_scores(tokens), dtype=np.float32)

    def holding_all(self, query: str) -> set[int]:
        """The chunks that hold every word of ``query`` (two words or more); none when a
        word is in no chunk at all."""
        words = list(dict.fromkeys(keyword_tokens(query)))
        if len(words) < 2 or any(w not in self._vocab for w in words):
            return set()
        held = np.ones(self.size, dtype=bool)
        for word in words:
            held &= np.asarray(self._bm25.get_scores([word])) > 0
            if not held.any():
                return set()
        return set(np.flatnonzero(held).tolist())

    def holding_code(self, query: str, chunks: Sequence[Chunk] = ()) -> set[int]:
        """The chunk holding one of ``query``'s codes (``_CODE``: "LUM-2003", "E501") whole
        when no other chunk does; none otherwise. One held by a few chunks is not enough:
        ruff's "I001 warning even after running isort" then opened on the rule's pages,
        not the FAQ comparing ruff to isort (real dev R@1 0.278 -> 0.266). A date
        ("2024-01-12") counts so when the chunks holding it are of one page of ``chunks``
        (a daily note's sections, each headed by its date): found by words alone, its note
        came 7th behind notes that MiniLM, which reads no date, found nearer."""
        held: set[int] = set()
        for code in dict.fromkeys(_CODE.findall(query)):
            if len(at := self._holding(code)) == 1:
                held |= at
        held = held if len(held) <= 1 else set()
        for date in dict.fromkeys(ISO_DATE.findall(query) if chunks else ()):
            at = self._holding(date)
            if len({chunks[i].path for i in at}) == 1:
                held |= at
        return held

    def _holding(self, code: str) -> set[int]:
        """The chunks holding every word of ``code``."""
        words = list(dict.fromkeys(tokens_and_dates(code)))
        if not words or any(w not in self._vocab for w in words):
            return set()
        found = np.ones(self.size, dtype=bool)
        for word in words:
            found &= np.asarray(self._bm25.get_scores([word])) > 0
        return set(np.flatnonzero(found).tolist())

    def top(self, query: str, n: int, allowed: np.ndarray | None = None) -> list[int]:
        """Indexes of the ``n`` best-scoring chunks with a positive score."""
        return [i for i, _ in self.top_scored(query, n, allowed)]

    def top_scored(
        self, query: str, n: int, allowed: np.ndarray | None = None
    ) -> list[tuple[int, float]]:
        """(index, BM25 score) of the ``n`` best-scoring chunks with a positive score."""
        scores = self.scores(query)
        if allowed is not None:
            scores = np.where(allowed, scores, 0.0)
        n = min(n, int((scores > 0).sum()))
        if n <= 0:
            return []
        best = np.argpartition(-scores, n - 1)[:n]
        return [(int(i), float(scores[i])) for i in best[np.argsort(-scores[best], kind="stable")]]


def _keyword_text(chunk: Chunk) -> str:
    # The heading path is repeated so that words in headings weigh more than body words.
    # Block ids ("^quorum-rule") are addresses, not words of the note.
    return " ".join(chunk.indexed_path) + "\n" + without_block_ids(chunk.index_text)
