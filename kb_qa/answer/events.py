"""The events an answer is made of: ``Status``, ``Delta``, ``Citations``, ``Done``, ``Error``.

Each has a ``name`` and ``data()``, which the server sends as one Server-Sent Event and the
CLI and MCP server read directly.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Any, ClassVar

from kb_qa.answer.citations import Citation


@dataclass(frozen=True)
class Status:
    """Progress: ``searching``, then ``reading`` with the number of excerpts and pages."""

    name: ClassVar[str] = "status"
    stage: str
    message: str
    excerpts: int | None = None
    pages: int | None = None

    def data(self) -> dict[str, Any]:
        """The SSE ``data`` payload."""
        return {k: v for k, v in dataclasses.asdict(self).items() if v is not None}


@dataclass(frozen=True)
class Delta:
    """The next piece of answer text, citations already renumbered."""

    name: ClassVar[str] = "delta"
    text: str

    def data(self) -> dict[str, Any]:
        """The SSE ``data`` payload."""
        return {"text": self.text}


@dataclass(frozen=True)
class Citations:
    """Every citation of the answer, resolved; ``citations[i].number == i + 1``."""

    name: ClassVar[str] = "citations"
    citations: tuple[Citation, ...]

    def data(self) -> dict[str, Any]:
        """The SSE ``data`` payload."""
        return {"citations": [citation_json(c) for c in self.citations]}


@dataclass(frozen=True)
class Done:
    """The end of a successful answer: its whole text, timings (ms), model and counts."""

    name: ClassVar[str] = "done"
    text: str
    model: str  # the litellm model string, or "" for an extractive answer
    mode: str  # "llm" or "extractive"
    timings: dict[str, float] = field(default_factory=dict)
    counts: dict[str, int] = field(default_factory=dict)
    # Retrieval's evidence says the sources cover the question (both modes; in LLM mode
    # the model also says so in words)
    covered: bool = True
    # The question log's id of this question ("" when not logged)
    question_id: str = ""
    # What a rating of this answer sends back (kb_qa.owners.answer_ids; the API sets it)
    answer_id: str = ""
    # "llm_error" or "llm_timeout": the model failed before it wrote anything, and the
    # answer quotes the sources instead (mode "extractive"; answering.answer) ...
    fallback: str = ""
    # ... and what the failure was, in words safe to show anyone ("The language model
    # service failed (HTTP 500)."): the owner's report keeps it with the question
    fallback_message: str = ""

    def data(self) -> dict[str, Any]:
        """The SSE ``data`` payload."""
        return dataclasses.asdict(self)


@dataclass(frozen=True)
class Error:
    """The answer failed; ``message`` is meant for a person, ``code`` for a program."""

    name: ClassVar[str] = "error"
    message: str
    code: str  # "llm_timeout", "llm_error", "retrieval_error", "stopping" or "internal"
    detail: str = ""  # for the operator only (CLI, server log): never sent to clients

    def data(self) -> dict[str, Any]:
        """The SSE ``data`` payload."""
        return {"message": self.message, "code": self.code}


Event = Status | Delta | Citations | Done | Error


def citation_json(c: Citation) -> dict[str, Any]:
    """A citation as JSON."""
    data = dataclasses.asdict(c)
    data["heading_path"] = list(c.heading_path)
    return data
