"""The language model: one streamed litellm call, one retry of a transient failure, and its
errors told in words a user can act on (a wrong key, an unknown model, a timeout).
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import re
from collections.abc import AsyncGenerator, AsyncIterator, Iterator
from typing import Any

import anyio
import anyio.to_thread

from kb_qa import extras
from kb_qa.answer.prompt import Prompt
from kb_qa.errors import ConfigError, LLMError, LLMTimeoutError, redacted
from kb_qa.settings import Settings
from kb_qa.text import SURROGATE

log = logging.getLogger(__name__)


RETRY_DELAY = 0.5  # seconds before the one retry of a transient LLM failure
TEMPERATURE = 0.1  # grounded answers: little creativity wanted


def litellm_client(settings: Settings) -> Any:
    """litellm, imported on first use: importing it takes seconds (kb-qa[llm] brings it)."""
    try:
        return extras.litellm(f"The model {settings.model} (KBQA_MODEL or --model)")
    except ConfigError as exc:
        raise LLMError(
            "Written answers are not available: kb-qa was installed without its language "
            f"model client ({extras.LLM_EXTRA} adds it).",
            str(exc),
        ) from exc


async def warm_up(settings: Settings) -> str:
    """Load the LLM client ahead of the first question, when a model is configured; what
    keeps written answers from working ("" when nothing does)."""
    if not settings.model:
        return ""
    try:
        litellm = await anyio.to_thread.run_sync(litellm_client, settings)
    except LLMError as exc:  # serve anyway: search works, and each answer says why it cannot
        log.error("%s", exc.detail)
        return exc.detail
    if missing := missing_keys(litellm, settings):
        # Every answer would fail: said at start (and by /api/health), not per question only
        problem = (
            f"the model {settings.model} needs {' and '.join(missing)}, which is not set in "
            "kb-qa's environment: until it is, readers are answered with quotes of the sources"
        )
        log.error("%s", problem)
        return problem
    # A mock call (no network) loads the lazily imported parts of litellm's streaming path,
    # which would otherwise add ~0.5 s to the first answer.
    try:
        response = await litellm.acompletion(
            model=settings.model,
            messages=[{"role": "user", "content": "warm up"}],
            mock_response="ok",
            stream=True,
        )
        async for _ in response:
            pass
    except Exception as exc:  # noqa: BLE001 - warming up is best effort
        log.debug("LLM warm-up failed: %s", exc)
    return ""


def missing_keys(litellm: Any, settings: Settings) -> list[str]:
    """The API keys the model's provider needs and the environment lacks (litellm's own
    check, which reads only the environment); none for a model behind ``api_base``, whose
    local servers need none."""
    if settings.api_base:
        return []
    try:
        found = litellm.validate_environment(model=settings.model)
    except Exception:  # noqa: BLE001 - a provider litellm cannot check: the first answer says
        return []
    return [k for k in found.get("missing_keys") or () if str(k).endswith("_API_KEY")]


def call_options(settings: Settings) -> dict[str, Any]:
    options: dict[str, Any] = {
        "model": settings.model,
        "timeout": settings.llm_timeout,
        "num_retries": 0,  # we retry once ourselves, and only before any text was shown
        "temperature": TEMPERATURE,
        "drop_params": True,  # models that reject a temperature get none
    }
    if settings.api_base:
        options["api_base"] = settings.api_base
        # Local OpenAI-compatible servers (llama.cpp, vLLM, LM Studio) need no key, but the
        # OpenAI client refuses to start without one.
        if settings.model.startswith("openai/") and not os.environ.get("OPENAI_API_KEY"):
            options["api_key"] = "not-needed"
    return options


MODEL_CUT = "\n\n*(The reply was cut here: the model reached its output limit.)*"


async def llm_pieces(
    prompt: Prompt, settings: Settings, usage: dict[str, int]
) -> AsyncIterator[str]:
    """The model's answer text as it streams, raw citation numbers and all."""
    litellm = await anyio.to_thread.run_sync(litellm_client, settings)
    options = call_options(settings)
    for attempt in (1, 2):
        sent = False
        response = None
        try:
            # llm_timeout bounds the wait for the first text and for each next piece, not
            # only each network read: keep-alive comments or reasoning chunks every few
            # seconds would otherwise keep a reader waiting with no limit.
            deadline = anyio.current_time() + settings.llm_timeout
            response = await litellm.acompletion(messages=prompt.messages, stream=True, **options)
            stopped = ""
            held = ""  # a piece's last half of a surrogate pair, waiting for its other half
            chunks = response.__aiter__()
            while True:
                with anyio.fail_after(max(0.0, deadline - anyio.current_time())):
                    try:
                        chunk = await chunks.__anext__()
                    except StopAsyncIteration:
                        break
                if getattr(chunk, "usage", None):
                    usage["prompt_tokens"] = chunk.usage.prompt_tokens or 0
                    usage["completion_tokens"] = chunk.usage.completion_tokens or 0
                if not chunk.choices:  # the final usage-only chunk has none
                    continue
                stopped = getattr(chunk.choices[0], "finish_reason", None) or stopped
                piece, held = _whole_characters(held + (chunk.choices[0].delta.content or ""))
                if piece:
                    sent = True
                    yield piece
                    deadline = anyio.current_time() + settings.llm_timeout
            if held:
                sent = True
                yield REPLACEMENT
            kind = _content_type(response)
            if not sent and kind.startswith(("text/html", "application/json")):
                # A proxy's page, a completion that ignored stream, an error sent with 200:
                # litellm reads each as an empty answer.
                raise NotAStreamError(f"the reply was {kind}, not a stream")
            if stopped == "length" and sent:  # the provider's output limit, not the answer's end
                yield MODEL_CUT
            return
        except Exception as exc:  # litellm raises many provider-specific types
            if attempt == 1 and not sent and _transient(exc):
                log.warning("language model failed (%s); retrying once", reason(exc))
                await anyio.sleep(RETRY_DELAY)
                continue
            raise _user_error(exc, settings, sent) from exc
        finally:
            if response is not None:
                await response.aclose()


REPLACEMENT = "\ufffd"


def _whole_characters(text: str) -> tuple[str, str]:
    """(``text`` with each UTF-16 surrogate pair joined into its character and any other
    surrogate replaced by U+FFFD, a final first half held back): a model's JSON may split an
    emoji's "\\ud83d" and "\\ude00" over two pieces, or send half of one, and a lone
    surrogate cannot be encoded to send on."""
    held = text[-1] if text and "\ud800" <= text[-1] <= "\udbff" else ""
    text = text[: len(text) - len(held)]
    if SURROGATE.search(text):
        text = text.encode("utf-16-le", "surrogatepass").decode("utf-16-le", "replace")
    return text, held


class NotAStreamError(Exception):
    """The model's server answered 200 with something other than a completion stream."""


def _content_type(response: Any) -> str:
    """The Content-Type the model's server sent, as litellm keeps it ("" if unknown)."""
    hidden = getattr(response, "_hidden_params", None) or {}
    headers = hidden.get("additional_headers") or {}
    return str(headers.get("llm_provider-content-type", "")).lower()


THINK_OPEN, THINK_CLOSE = "<think>", "</think>"


async def without_thinking(pieces: AsyncGenerator[str, None]) -> AsyncIterator[str]:
    """``pieces`` without a leading ``<think>…</think>`` block: reasoning models served
    without a reasoning parser (DeepSeek-R1 distills on llama.cpp, Ollama or vLLM) write
    their thoughts into the answer, citations and all."""
    head: str | None = ""  # the answer's start while it may still open a think block
    tail: str | None = None  # inside a think block: its last characters, for its close
    thought = False  # a think block was left out: the answer starts at its first word
    async with contextlib.aclosing(pieces):  # closing this closes the model's stream
        async for piece in pieces:
            if tail is not None:  # thinking: only the close matters, however long it runs
                tail += piece
                end = tail.find(THINK_CLOSE)
                if end < 0:
                    tail = tail[-len(THINK_CLOSE) :]
                    continue
                head, tail, thought = tail[end + len(THINK_CLOSE) :], None, True
                piece = ""
            if head is None:
                yield piece
                continue
            head += piece
            start = head.lstrip()
            if len(start) < len(THINK_OPEN) and THINK_OPEN.startswith(start):
                continue  # "<thi", or nothing but blanks: not known yet
            if start.startswith(THINK_OPEN):
                tail, head = start[len(THINK_OPEN) :], ""
                end = tail.find(THINK_CLOSE)
                if end < 0:
                    continue
                head, tail, thought = tail[end + len(THINK_CLOSE) :], None, True
                start = head.lstrip()
                if len(start) < len(THINK_OPEN) and THINK_OPEN.startswith(start):
                    continue
            yield start if thought else head
            head = None
    start = (head or "").lstrip()
    if tail is None and start and not start.startswith(THINK_OPEN):
        yield start if thought else head or ""  # a short answer, or one that only looked like one


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


def _transient(exc: BaseException) -> bool:
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


def reason(exc: BaseException) -> str:
    """The provider's own words, without litellm's stacked class-name prefixes or a key it
    echoed."""
    original = _original(exc)
    text = redacted(str(getattr(original, "message", None) or original))
    for _ in range(5):
        stripped = _PREFIX.sub("", text, count=1)
        if stripped == text:
            break
        text = stripped
    text = " ".join(text.split())
    return (text[:300] + "…") if len(text) > 300 else (text or type(original).__name__)


def _user_error(exc: BaseException, settings: Settings, sent: bool) -> LLMError:
    """A message anyone may see for a failed LLM call, and the provider's words as detail."""
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
    said = reason(exc)
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
        message, fix = (
            "The language model was not found.",
            f"Check model (KBQA_MODEL): {settings.model!r}{where}.",
        )
    elif status == 429:
        message, fix = "The language model provider is limiting requests. Try again shortly.", ""
    elif isinstance(status, int) and status >= 500:
        message, fix = f"The language model service failed (HTTP {status}). Try again shortly.", ""
    elif status == 400:
        message, fix = (
            "The language model rejected the request.",
            "If the prompt is too long for it, lower token_budget (KBQA_TOKEN_BUDGET).",
        )
    else:
        log.error("language model call failed: %s: %s", type(original).__name__, said)
        message, fix = "The language model call failed.", "Check model (KBQA_MODEL)."
    return LLMError(message, f"{said}. {fix}" if fix else said)


def _unreadable(exc: BaseException) -> bool:
    """Whether the provider's reply (or its stream) was not valid JSON."""
    return any(isinstance(seen, json.JSONDecodeError | NotAStreamError) for seen in _chain(exc))
