"""kb-qa: grounded, cited answers over a Markdown knowledge base.

    from kb_qa import KnowledgeBase, ask

    with KnowledgeBase("docs-folder") as kb:
        kb.index()                          # brings the index up to date
        hits = kb.search("retry backoff")   # sections, best first
        reply = ask(kb, "How do retries back off?")   # text and citations
        # (ask_async in an event loop; answer(kb, question) streams the events)

Errors a user can act on are ``KbQaError`` subclasses; wrong arguments raise ``TypeError``
or ``ValueError``. Importing this package switches off every library's phone-home before
those libraries load (it sets their variables unless the process already has).
"""

from __future__ import annotations

import os

# Set before chromadb / onnxruntime / litellm are imported anywhere in the process.
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
os.environ.setdefault("ORT_DISABLE_TELEMETRY", "1")
os.environ.setdefault("ANONYMIZED_TELEMETRY", "False")
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
os.environ.setdefault("NO_MKDOCS_2_WARNING", "1")

from typing import TYPE_CHECKING

from kb_qa.errors import (
    ConfigError,
    EmbeddingError,
    IndexBusyError,
    IndexStateError,
    KbQaError,
    LLMError,
    LLMTimeoutError,
    VaultError,
)
from kb_qa.settings import Settings
from kb_qa.types import Chunk, Document, Heading, Hit, IndexReport

if TYPE_CHECKING:  # what __getattr__ loads on first use, as type checkers see it
    from kb_qa.answer.answering import answer
    from kb_qa.answer.citations import Citation
    from kb_qa.answer.events import Citations, Delta, Done, Error, Status
    from kb_qa.answer.library import Answer, ask, ask_async
    from kb_qa.answer.prompt import Turn
    from kb_qa.kb.knowledge_base import KnowledgeBase

__version__ = "0.2.0"

if not TYPE_CHECKING:
    import importlib
    import types

    class _Streams(types.ModuleType):
        """The subpackage kb_qa.answer, callable: ``answer(kb, question, ...)`` is
        ``kb_qa.answer.answering.answer``, the stream of an answer's events."""

        def __call__(self, *args: object, **kwargs: object) -> object:
            from kb_qa.answer.answering import answer as stream

            return stream(*args, **kwargs)

    # ``answer`` is also the name of the subpackage kb_qa.answer, which Python binds here
    # once anything imports it: `from kb_qa import answer` then gave that module ("'module'
    # object is not callable"). So the subpackage is what the name holds, from the start
    # (its __init__ loads nothing), and calling it streams.
    answer = importlib.import_module("kb_qa.answer")
    answer.__class__ = _Streams

# Loaded only when asked for: they pull in chromadb and onnxruntime (0.5 s).
_LAZY = {
    "KnowledgeBase": "kb_qa.kb.knowledge_base",
    "ask": "kb_qa.answer.library",
    "ask_async": "kb_qa.answer.library",
    "Answer": "kb_qa.answer.library",
    "Citation": "kb_qa.answer.citations",
    **dict.fromkeys(("Status", "Delta", "Citations", "Done", "Error"), "kb_qa.answer.events"),
    "Turn": "kb_qa.answer.prompt",
}


def __getattr__(name: str) -> object:
    if name in _LAZY:
        import importlib

        return getattr(importlib.import_module(_LAZY[name]), name)
    raise AttributeError(f"module 'kb_qa' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(__all__)


__all__ = [
    "Answer",
    "Chunk",
    "Citation",
    "Citations",
    "ConfigError",
    "Delta",
    "Document",
    "Done",
    "EmbeddingError",
    "Error",
    "Heading",
    "Hit",
    "IndexBusyError",
    "IndexReport",
    "IndexStateError",
    "KbQaError",
    "KnowledgeBase",
    "LLMError",
    "LLMTimeoutError",
    "Settings",
    "Status",
    "Turn",
    "VaultError",
    "__version__",
    "answer",
    "ask",
    "ask_async",
]
