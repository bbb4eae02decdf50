"""kb-qa: grounded, cited answers over a Markdown knowledge base.

Importing this package switches off every library's phone-home before those
libraries load: users must never need to know these variables exist.
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

from kb_qa.errors import (
    ConfigError,
    EmbeddingError,
    IndexStateError,
    KbQaError,
    LLMError,
    LLMTimeoutError,
    VaultError,
)
from kb_qa.settings import Settings
from kb_qa.types import Chunk, Document, Heading, Hit, IndexReport

__version__ = "0.1.0"


def __getattr__(name: str) -> object:
    # KnowledgeBase pulls in chromadb and onnxruntime; load them only when asked for.
    if name == "KnowledgeBase":
        from kb_qa.kb.knowledge_base import KnowledgeBase

        return KnowledgeBase
    raise AttributeError(f"module 'kb_qa' has no attribute {name!r}")


__all__ = [
    "Chunk",
    "ConfigError",
    "Document",
    "EmbeddingError",
    "Heading",
    "Hit",
    "IndexReport",
    "IndexStateError",
    "KbQaError",
    "KnowledgeBase",
    "LLMError",
    "LLMTimeoutError",
    "Settings",
    "VaultError",
    "__version__",
]
