"""Optional dependencies: imported on first use, with a message naming the extra to install.

The first command's install (``pip install kb-qa``) gives the whole default experience:
local embeddings, the embedded index, extractive answers. Written answers and hosted
embedding models go through litellm, which with its provider SDKs weighs ~240 MB, so it
comes with ``pip install 'kb-qa[llm]'``.
"""

from __future__ import annotations

from types import ModuleType

from kb_qa.errors import ConfigError

LLM_EXTRA = "pip install 'kb-qa[llm]'"


def litellm(setting: str) -> ModuleType:
    """litellm, or a ConfigError naming the setting that needs it and how to install it.

    ``setting`` names what needs it and where it is set, e.g. "The model gpt-4o-mini
    (KBQA_MODEL or --model)".
    """
    try:
        import litellm as module
    except ImportError as exc:
        raise ConfigError(
            f"{setting} needs litellm, which this install does not have: run {LLM_EXTRA}, "
            "or unset it to stay with what runs locally."
        ) from exc
    module.suppress_debug_info = True  # no "Give Feedback" banner on every expected error
    return module
