"""The language model: one streamed litellm call and one retry of a transient failure (its
errors are told in words a user can act on by ``llm_errors``).
"""

from __future__ import annotations

import contextlib
import logging
import os
from collections.abc import AsyncGenerator
from typing import Any

import anyio
import anyio.to_thread

from kb_qa import extras
from kb_qa.answer.llm_errors import (
    NotAStreamError,
    reason,
    transient,
    unknown_provider,
    user_error,
)
from kb_qa.answer.prompt import Prompt
from kb_qa.errors import ConfigError, LLMError
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
    if unrouted := unknown_provider(litellm, settings):
        log.error("%s", unrouted)
        return unrouted
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


# Providers whose servers run anywhere (llama.cpp, vLLM, Ollama, LM Studio): behind an
# api_base they need no key. A hosted provider's model behind one (a company's gateway to
# Anthropic) still needs its key: litellm refuses every call without it.
SELF_HOSTED = frozenset(
    "openai openai_like custom_openai text-completion-openai hosted_vllm vllm ollama "
    "ollama_chat lm_studio llamafile xinference".split()
)


def missing_keys(litellm: Any, settings: Settings) -> list[str]:
    """The API keys the model's provider needs and the environment lacks (litellm's own
    check, which reads only the environment); none for a self-hosted provider's model
    behind ``api_base``."""
    provider = settings.model.split("/", 1)[0] if "/" in settings.model else ""
    if settings.api_base and (provider in SELF_HOSTED or not provider):
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
) -> AsyncGenerator[str, None]:
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
            request = [str(m.get("content", "")) for m in prompt.messages]
            if attempt == 1 and not sent and transient(exc):
                log.warning("language model failed (%s); retrying once", reason(exc, request))
                await anyio.sleep(RETRY_DELAY)
                continue
            raise user_error(exc, settings, sent, request) from exc
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


def _content_type(response: Any) -> str:
    """The Content-Type the model's server sent, as litellm keeps it ("" if unknown)."""
    hidden = getattr(response, "_hidden_params", None) or {}
    headers = hidden.get("additional_headers") or {}
    return str(headers.get("llm_provider-content-type", "")).lower()


THINK_OPEN, THINK_CLOSE = "<think>", "</think>"


async def without_thinking(pieces: AsyncGenerator[str, None]) -> AsyncGenerator[str, None]:
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
