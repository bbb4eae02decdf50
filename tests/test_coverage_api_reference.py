"""Short questions about an API reference mkdocstrings generates, built by a real ``mkdocs
build`` and judged with the default model (MiniLM).

A QA pass over a package's reference was told "These docs don't seem to cover that" of
"What does bind raise?", though retrieval's first section was ``bind``'s, whose Raises table
lists ``KeyError``: a short question scores low against a parameter table (cosine 0.18), and
the words rule wanted "bind" and "raise" close together, a table apart there. Likewise "What
parameters does Client take?" ("take" written nowhere), "What are the values of
DeliveryMode?" (its members listed, "values" written nowhere) and "What is the default
heartbeat interval?" (a settings table says "Seconds between heartbeats").
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from kb_qa.answer.prepare import prepare
from kb_qa.kb.knowledge_base import KnowledgeBase

ROUTING = '''\
"""Routing keys and topic matching."""


def matches(pattern: str, key: str) -> bool:
    """Tell whether a routing key matches a topic pattern.

    `*` matches exactly one word, `#` matches zero or more words; words are separated by dots.

    Args:
        pattern: A topic pattern such as `orders.*.created`.
        key: A routing key such as `orders.eu.created`.

    Returns:
        True when the key matches.
    """
    return True


def validate_key(key: str, max_length: int = 255) -> str:
    """Check a routing key.

    Args:
        key: The routing key.
        max_length: Longest key accepted, in characters.

    Returns:
        The key, unchanged.

    Raises:
        ValueError: If the key is empty, longer than `max_length`, or holds a space.
    """
    return key


def bind(client, queue: str, exchange: str, pattern: str = "#") -> None:
    """Bind a queue to an exchange.

    Args:
        client: An open [`Client`][tidewire.client.Client].
        queue: Name of the queue.
        exchange: Name of the exchange.
        pattern: Topic pattern; the default `#` receives every message.

    Raises:
        KeyError: If the exchange does not exist.
    """


def render(key: str) -> str:
    """Render a routing key for the broker's console.

    Args:
        key: The routing key.

    Returns:
        The key, its words separated by slashes.
    """
    return key.replace(".", "/")
'''

MODELS = '''\
"""Enums shared by the client."""
import enum


class Priority(enum.IntEnum):
    """Delivery priority of a message.

    Attributes:
        LOW: Delivered after every other message; value 1.
        NORMAL: The default priority; value 5.
        URGENT: Delivered before every other message; value 9.
    """

    LOW = 1
    NORMAL = 5
    URGENT = 9


class DeliveryMode(enum.Enum):
    """How hard the broker tries to keep a message.

    Attributes:
        TRANSIENT: Kept in memory only; lost when the broker restarts.
        PERSISTENT: Written to disk before the publish is acknowledged.
    """

    TRANSIENT = "transient"
    PERSISTENT = "persistent"
'''

CONFIG = '''\
"""Client configuration."""
from dataclasses import dataclass


@dataclass
class Settings:
    """Settings of a [`Client`][tidewire.client.Client].

    Attributes:
        host: Broker host name.
        port: Broker TCP port; defaults to 5671.
        timeout: Seconds to wait for the broker on connect; defaults to 30.0.
        heartbeat: Seconds between heartbeats; 0 disables them. Defaults to 60.
        max_frame: Largest frame accepted, in bytes; defaults to 131072.
        tls: Use TLS; defaults to True.
    """

    host: str = "localhost"
    port: int = 5671
    timeout: float = 30.0
    heartbeat: int = 60
    max_frame: int = 131072
    tls: bool = True
'''

CLIENT = '''\
"""The client: connecting and publishing."""
from tidewire.config import Settings


class Client:
    """A connection to a tidewire broker.

    Use [`connect`][tidewire.client.connect] rather than building one directly.

    Args:
        settings: Connection settings.
        name: Client name shown in the broker's console.
    """

    def __init__(self, settings: Settings, name: str | None = None) -> None:
        self.settings = settings
        self.name = name

    def publish(self, queue: str, body: bytes, *, confirm: bool = True) -> None:
        """Publish one message.

        Args:
            queue: Name of the queue.
            body: The payload.
            confirm: Wait for the broker's acknowledgement.

        Raises:
            TimeoutError: If no acknowledgement arrives.
        """


def connect(host: str = "localhost", port: int = 5671, timeout: float = 30.0) -> Client:
    """Open a connection to the broker.

    Args:
        host: Broker host name.
        port: Broker TCP port.
        timeout: Seconds to wait for the broker.

    Returns:
        A connected client.

    Raises:
        ConnectionFailed: If the broker cannot be reached within `timeout` seconds.
    """
    return Client(Settings(host=host, port=port, timeout=timeout))
'''

SITE = {
    "mkdocs.yml": (
        "site_name: Tidewire\n"
        "theme:\n  name: material\n"
        "plugins:\n"
        "  - search\n"
        "  - mkdocstrings:\n"
        "      handlers:\n"
        "        python:\n"
        "          paths: [src]\n"
        "          options:\n"
        "            show_source: false\n"
        "            docstring_section_style: table\n"
        "            show_signature_annotations: true\n"
        "            separate_signature: true\n"
        "            show_root_heading: true\n"
    ),
    "docs/index.md": "# Tidewire\n\nA small client for the tidewire message broker.\n",
    "docs/guides/publishing.md": (
        "# Publishing\n\nOpen a client with `connect()` and publish a message to a queue:\n\n"
        '```python\nclient = connect("mq.local")\nclient.publish("jobs", b"hello")\n```\n'
    ),
    **{
        f"docs/api/{module}.md": f"# `tidewire.{module}`\n\n::: tidewire.{module}\n"
        for module in ("client", "config", "models", "routing")
    },
    "src/tidewire/__init__.py": '"""Tidewire."""\n',
    "src/tidewire/client.py": CLIENT,
    "src/tidewire/config.py": CONFIG,
    "src/tidewire/models.py": MODELS,
    "src/tidewire/routing.py": ROUTING,
}


@pytest.fixture(scope="module")
def reference(
    tmp_path_factory: pytest.TempPathFactory, write_files: Callable[..., Path]
) -> Iterator[KnowledgeBase]:
    """The reference indexed with MiniLM (its pages rendered by a real mkdocs build)."""
    root = tmp_path_factory.mktemp("tidewire")
    vault = write_files(root / "vault", SITE)
    with KnowledgeBase(vault, embed_model="minilm", index_dir=root / "idx") as kb:
        kb.index()
        yield kb


@pytest.mark.parametrize(
    ("question", "section"),
    [
        ("What does bind raise?", "tidewire.routing.bind"),
        ("What does connect raise?", "tidewire.client.connect"),
        ("What parameters does Client take?", "tidewire.client.Client"),
        ("What are the values of DeliveryMode?", "tidewire.models.DeliveryMode"),
        ("What is the default heartbeat interval?", "tidewire.config.Settings"),
    ],
)
def test_a_short_question_naming_a_documented_object_is_covered(
    reference: KnowledgeBase, question: str, section: str
) -> None:
    prepared = prepare(reference, reference.settings, question)
    assert section in [h.chunk.anchor for _, h in prepared.ranked[:3]]
    assert prepared.covered, question


@pytest.mark.parametrize(
    "question",
    [
        # "re-render" is one word, not the reference's render()
        "How do I make a React component re-render?",
        "What is the capital of France?",
        "How do I bind a keyboard shortcut in Vim?",
        "What are the values of the Swiss franc coins?",
    ],
)
def test_a_question_about_something_else_is_not_covered(
    reference: KnowledgeBase, question: str
) -> None:
    assert not prepare(reference, reference.settings, question).covered, question
