"""Exceptions raised by kb-qa.

    KbQaError                 base: every message says what went wrong and what to do
    ├── ConfigError           a setting or mkdocs.yml value is wrong
    ├── VaultError            the vault folder is missing or unreadable
    ├── IndexStateError       the index folder cannot be opened or is from another version
    ├── EmbeddingError        the embedding model failed to load or to embed
    └── LLMError              the language model failed or returned garbage
        └── LLMTimeoutError   it did not answer (or stopped answering) within llm_timeout

The CLI prints ``str(error)`` without a traceback; the HTTP API returns it as JSON or sends it
as an SSE ``error`` event.
"""

from __future__ import annotations

import os
import re
import sys

# What to do when this process's locale cannot decode what kb-qa is given or finds (a C
# locale with Python's UTF-8 mode off reads every non-ASCII byte as undecodable).
USE_UTF8_LOCALE = "use a UTF-8 locale (for example LANG=C.UTF-8)"


class KbQaError(Exception):
    """Base class for errors a user can act on."""


class ConfigError(KbQaError):
    """A setting (environment variable, CLI flag or mkdocs.yml option) is invalid."""


class InstallError(KbQaError):
    """kb-qa's installation lacks a file it ships (a wheel built without the widget's bundle)."""


class VaultError(KbQaError):
    """The vault folder does not exist or cannot be read."""


class IndexStateError(KbQaError):
    """The index folder cannot be used as it is."""


class IndexBusyError(IndexStateError):
    """Another process is updating the index right now (it holds the write lock)."""


class EmbeddingError(KbQaError):
    """The embedding model could not be loaded or failed while embedding."""


class LLMError(KbQaError):
    """The language model did not produce an answer.

    ``str(error)`` is safe to show to anyone; ``detail`` holds the provider's own words and
    the setting to check, for the operator (the server log and the CLI), since a provider's
    error body can carry an API key or internal addresses.
    """

    def __init__(self, message: str, detail: str = "") -> None:
        super().__init__(message)
        self.detail = detail


class LLMTimeoutError(LLMError):
    """The language model did not answer within the configured timeout."""


# Environment variables holding a secret: a provider that echoes the key it was sent in its
# error ("Incorrect API key provided: sk-…") must not put it in a log, on a terminal or in an
# answer to a client.
_SECRET_NAME = re.compile(r"(?:KEY|TOKEN|SECRET|PASSWORD)$", re.IGNORECASE)


def redacted(text: str) -> str:
    """``text`` with the value of every secret-named environment variable (``*_API_KEY``,
    ``AWS_SECRET_ACCESS_KEY``, ``*_TOKEN``, …; 8 characters or more) blanked, longest
    first so that no key's tail outlives a shorter one."""
    secrets = sorted(
        (v for k, v in os.environ.items() if len(v) >= 8 and _SECRET_NAME.search(k)),
        key=len,
        reverse=True,
    )
    for value in secrets:
        if value in text:
            text = text.replace(value, "[redacted]")
    return text


def misread_by_locale(text: str) -> bool:
    """Whether ``text`` (a file name, an argument) holds bytes this process's locale could
    not decode (Python keeps them as lone surrogates) that are UTF-8 all the same: the
    locale is at fault then, not the text."""
    try:
        return os.fsencode(text).decode("utf-8") != text
    except UnicodeError:
        return False


def undecodable(name: str) -> bool:
    """Whether a file or folder name holds bytes that are not UTF-8 (as lone surrogates).
    UTF-8 that this process's locale could not decode is a VaultError instead: skipping
    the file as misnamed would drop it from the index, and renaming it would not help."""
    if not re.search("[\ud800-\udfff]", name):
        return False
    if misread_by_locale(name):
        shown = os.fsencode(name).decode("utf-8")
        raise VaultError(
            f"This locale ({sys.getfilesystemencoding()}) cannot read the names of the "
            f"vault's files ({shown}): {USE_UTF8_LOCALE}. The index was left as it was."
        )
    return True


def database_failed(exc: Exception) -> str:
    """What to do when the index's SQLite database (the manifest, or Chroma's) fails: a
    read-only one is made writable, not rebuilt."""
    if "readonly" in str(exc).replace("read-only", "readonly").lower():
        return (
            f"the index's database cannot be written ({exc}). Make the index folder and its "
            "files writable (their owner and mode, or a read-only mount), or set index_dir "
            "(KBQA_INDEX_DIR) to a writable folder."
        )
    return (
        f"the index's database failed ({exc}). Check that the index folder is writable and "
        "the disk has room; `kb-qa index` rebuilds a broken index."
    )


def folder_is_file(path: object) -> IndexStateError:
    """A file where the index folder goes, as every command says it."""
    return IndexStateError(
        f"The index folder {path} is a file. Move it away, or point --index-dir "
        "(KBQA_INDEX_DIR) at a folder."
    )
