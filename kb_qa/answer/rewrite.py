"""Optional query rewriting: a short LLM call turns the question into a few search queries.

Off by default (``rewrite_queries``): it costs one extra model round trip before the
answer starts. It helps most with follow-up questions ("and how do I turn it off?"),
which it rewrites into standalone queries using the conversation. Any failure falls back
to the original question alone.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Sequence
from typing import Any

from kb_qa.answer.llm import litellm_client
from kb_qa.answer.llm_errors import reason
from kb_qa.answer.prompt import Turn
from kb_qa.settings import Settings

log = logging.getLogger(__name__)

PROMPT = (
    "Rewrite the user's last question as {n} different search queries for a documentation "
    "search engine. Make each query standalone (resolve references to earlier messages), "
    "vary the wording (synonyms, the likely section title, key terms), keep the question's "
    "language. Reply with one query per line and nothing else."
)
MAX_QUERY_CHARS = 300
_NUMBERING = re.compile(r"^\s*(?:[-*•]|\d+[.)])\s*")


def rewrite(
    question: str, history: Sequence[Turn], settings: Settings, options: dict[str, Any]
) -> list[str]:
    """Up to ``settings.rewrite_count`` alternative queries ([] when the call fails).

    Blocking: the answer runs it on a thread of its own before retrieval takes a search
    thread, so a slow model never holds the threads other readers' searches run on. (Not
    litellm's acompletion: its async logging worker outlives the loop that started it.)"""
    recent = "\n".join(f"{t.role}: {t.content[:500]}" for t in list(history)[-4:])
    content = (f"Conversation so far:\n{recent}\n\n" if recent else "") + f"Question: {question}"
    try:
        litellm = litellm_client(settings)
        response = litellm.completion(
            **{**options, "timeout": min(settings.llm_timeout, settings.rewrite_timeout)},
            messages=[
                {"role": "system", "content": PROMPT.format(n=settings.rewrite_count)},
                {"role": "user", "content": content},
            ],
        )
        text = response.choices[0].message.content or ""
    except Exception as exc:  # noqa: BLE001 - rewriting is an optional improvement
        said = reason(exc, [content])  # not the question, if the provider quotes it
        log.warning("query rewriting failed, searching with the question alone: %s", said)
        return []
    queries = []
    for line in text.splitlines():
        query = _NUMBERING.sub("", line).strip().strip('"')
        if query and query.casefold() != question.casefold() and query not in queries:
            queries.append(query[:MAX_QUERY_CHARS])
    return queries[: settings.rewrite_count]
