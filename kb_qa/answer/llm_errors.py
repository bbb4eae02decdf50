"""A failed language model call, told in words a user can act on: a wrong key, a model
name no provider serves, an unknown model, a timeout, a reply that is not a stream."""

from __future__ import annotations

import json
import logging
import re
from collections.abc import Iterator, Sequence
from typing import Any

from kb_qa.errors import LLMError, LLMTimeoutError, redacted
from kb_qa.settings import Settings

log = logging.getLogger("kb_qa.answer.llm")


class NotAStreamError(Exception):
    """The model's server answered 200 with something other than a completion stream."""


def unknown_provider(litellm: Any, settings: Settings) -> str:
    """What is wrong with a model name litellm cannot route to a provider ("llama3" for a
    local server: every answer failed as "rejected"), "" when it can. Checked offline."""
    try:
        litellm.get_llm_provider(model=settings.model, api_base=settings.api_base or None)
    except Exception:  # noqa: BLE001 - litellm's BadRequestError: no provider in the name
        return (
            f"litellm cannot tell which provider serves the model {settings.model!r}: "
            f"{_name_its_provider(settings)}; until then readers are answered with quotes "
            "of the sources"
        )
    return ""


def _name_its_provider(settings: Settings) -> str:
    name = settings.model
    local = f"openai/{name} for the OpenAI-compatible server at {settings.api_base}, "
    return (
        f"name it with its provider, e.g. {local if settings.api_base else ''}"
        f"ollama/{name} or anthropic/{name} (model, KBQA_MODEL)"
    )


def _original(exc: BaseException) -> BaseException:
    """The error behind litellm's wrapping, where it can be found.

    litellm wraps errors raised while streaming in MidStreamFallbackError, and reports a refused
    connection as an InternalServerError raised while handling openai's APIConnectionError.
    """
    import openai

    exc = getattr(exc, "original_exception", None) or exc
    seen: BaseException | None = exc
    for _ in range(5):
        seen = seen.__cause__ or seen.__context__ if seen is not None else None
        if isinstance(seen, openai.APIConnectionError):
            return seen
    return exc


def _missing_key(exc: BaseException) -> bool:
    """Whether the provider's client refused to start for want of an API key: openai's own
    error, raised before any request (litellm reports it as an HTTP 500)."""
    import openai

    for seen in _chain(exc):
        if type(seen) is openai.OpenAIError:  # raised by the client itself, before a request
            said = str(seen).lower()
            return "api_key" in said or "credentials" in said
    return False


def _chain(exc: BaseException) -> Iterator[BaseException]:
    """``exc`` and the errors behind it (cause, context, litellm's original), eight deep."""
    seen: BaseException | None = exc
    for _ in range(8):
        if seen is None:
            return
        yield seen
        seen = seen.__cause__ or seen.__context__ or getattr(seen, "original_exception", None)


def transient(exc: BaseException) -> bool:
    import openai

    if _missing_key(exc):
        return False  # it would be missing again
    exc = _original(exc)
    if isinstance(exc, openai.APITimeoutError):
        return False  # the user already waited the whole timeout once
    if isinstance(exc, openai.APIConnectionError):
        return True
    status = getattr(exc, "status_code", None)
    return isinstance(status, int) and (status == 429 or status >= 500)


_PREFIX = re.compile(r"^\s*(?:litellm\.)?\w*(?:Error|Exception)\w*\s*[:-]\s*")


QUOTED = "the provider's message quotes the request: not repeated here"
_QUOTE_WORDS = 4  # this many words of the request in a row make a quote


def reason(exc: BaseException, request: Sequence[str] = ()) -> str:
    """The provider's own words, without litellm's stacked class-name prefixes or a key it
    echoed, nor a provider's quote of the ``request`` it was sent (the reader's question:
    the log holds none)."""
    original = _original(exc)
    text = redacted(str(getattr(original, "message", None) or original))
    sent = {run for t in request for run in _runs(t)}
    if sent and not sent.isdisjoint(_runs(text)):
        return QUOTED
    for _ in range(5):
        stripped = _PREFIX.sub("", text, count=1)
        if stripped == text:
            break
        text = stripped
    text = " ".join(text.split())
    return (text[:300] + "…") if len(text) > 300 else (text or type(original).__name__)


def _runs(text: str) -> set[tuple[str, ...]]:
    """Each ``_QUOTE_WORDS`` words of ``text`` in a row (case-folded)."""
    words = text.casefold().split()
    return {tuple(words[i : i + _QUOTE_WORDS]) for i in range(len(words) - _QUOTE_WORDS + 1)}


def user_error(
    exc: BaseException, settings: Settings, sent: bool, request: Sequence[str] = ()
) -> LLMError:
    """A message anyone may see for a failed LLM call, and the provider's words as detail
    (not a quote of the ``request``)."""
    import openai

    original = _original(exc)
    timeout = f"{settings.llm_timeout:g} s"
    raise_it = "Or raise llm_timeout (KBQA_LLM_TIMEOUT)."
    if isinstance(original, (openai.APITimeoutError, TimeoutError)):
        if sent:
            return LLMTimeoutError(
                f"The language model stopped answering for {timeout}; the answer is incomplete. "
                "Try again.",
                raise_it,
            )
        return LLMTimeoutError(
            f"The language model did not answer within {timeout}. Try again.", raise_it
        )
    said = reason(exc, request)
    status = getattr(original, "status_code", None)
    where = f" at {settings.api_base}" if settings.api_base else ""
    if sent:
        message, fix = "The language model's answer broke off. Try again.", ""
    elif _unreadable(exc):
        message, fix = (
            "The language model sent a reply that could not be read.",
            f"Check that the model{where} speaks the OpenAI-compatible streaming format.",
        )
    elif isinstance(original, openai.APIConnectionError):
        message, fix = (
            "Could not reach the language model. Try again shortly.",
            f"Check that it is running{where} and that api_base (KBQA_API_BASE) is right.",
        )
    elif _missing_key(exc):
        message, fix = (
            "The language model needs an API key, and none is set.",
            "Set the provider's API key variable, e.g. OPENAI_API_KEY, or api_base "
            "(KBQA_API_BASE) for a local server.",
        )
    elif status in (401, 403):
        message, fix = (
            "The language model provider refused the request.",
            "Check the provider's API key variable, e.g. OPENAI_API_KEY or ANTHROPIC_API_KEY.",
        )
    elif status == 404:
        base = " and api_base (KBQA_API_BASE): an OpenAI-compatible one often ends in /v1"
        message, fix = (
            "The language model was not found.",
            f"Check model (KBQA_MODEL): {settings.model!r}{where}"
            + (base if settings.api_base else "")
            + ".",
        )
    elif status == 429:
        message, fix = "The language model provider is limiting requests. Try again shortly.", ""
    elif isinstance(status, int) and status >= 500:
        message, fix = f"The language model service failed (HTTP {status}). Try again shortly.", ""
    elif status == 400 and "provider not provided" in said.lower():
        hint = _name_its_provider(settings)
        message, fix = "The language model rejected the request.", hint[0].upper() + hint[1:] + "."
    elif status == 400:
        message, fix = (
            "The language model rejected the request.",
            "If the prompt is too long for it, lower token_budget (KBQA_TOKEN_BUDGET).",
        )
    else:
        log.error("language model call failed: %s: %s", type(original).__name__, said)
        message, fix = "The language model call failed.", "Check model (KBQA_MODEL)."
    stop = "" if said.endswith((".", "!", "?", "…")) else "."  # not "Connection error.. Check"
    return LLMError(message, f"{said}{stop} {fix}" if fix else said)


def _unreadable(exc: BaseException) -> bool:
    """Whether the provider's reply (or its stream) was not valid JSON."""
    return any(isinstance(seen, json.JSONDecodeError | NotAStreamError) for seen in _chain(exc))
