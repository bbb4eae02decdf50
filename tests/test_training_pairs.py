"""training/pairs.py: the hard negative of a pair never holds the query's own words, and it is
written as the positive is, so that nothing but meaning tells them apart."""

from __future__ import annotations

import importlib.util
import random
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
# Loaded by path: training/ is not a package, and its module names must not shadow others.
_SPEC = importlib.util.spec_from_file_location("training_pairs", ROOT / "training" / "pairs.py")
assert _SPEC and _SPEC.loader
pairs = importlib.util.module_from_spec(_SPEC)
sys.modules["training_pairs"] = pairs  # dataclasses look their module up by name
_SPEC.loader.exec_module(pairs)

KEYS = """# Keys

## Rotating signing keys

The signing keys of the vault are rotated every ninety days. Rotation creates a new key pair,
publishes the public half and retires the old private half after a grace period of one week.

## Revoking a leaked key

A leaked signing key is revoked at once with the revoke command. Clients that cached the
public half stop trusting it on their next refresh.
"""

SETUP = """# Setup

## First start

On the first start the server writes its configuration and generates the initial signing keys.
Operators schedule the quarterly rotation of signing keys with the maintenance timer, as the
[rotation page](index.md#rotating-signing-keys) describes in detail for every deployment.

## Why does the server refuse to start?

The server refuses to start when its data folder is not writable by the service user or when
the configured port is already taken by another process on the same machine.

## Ports

The server listens on port 8400 for clients and on port 8401 for the metrics endpoint,
both configurable in the configuration file under the listen section.
"""


def _pairs(tmp_path: Path, context: str = "line") -> list[pairs.Pair]:
    (tmp_path / "docs").mkdir(parents=True)
    (tmp_path / "mkdocs.yml").write_text("site_name: Keys\n", encoding="utf-8")
    (tmp_path / "docs" / "index.md").write_text(KEYS, encoding="utf-8")
    (tmp_path / "docs" / "setup.md").write_text(SETUP, encoding="utf-8")
    chunks = pairs.site_chunks(tmp_path)
    return list(pairs.site_pairs("example/keys", chunks, random.Random(1), context))


def test_a_link_pairs_negative_is_never_the_section_its_sentence_comes_from(tmp_path: Path):
    made = _pairs(tmp_path)
    links = [p for p in made if p.kind == "link"]
    assert len(links) == 1
    link = links[0]
    assert "rotation page" in link.query and "Rotating signing keys" in link.positive
    # The sentence's own section ("First start") holds every word of it: as a negative it
    # would teach that a passage holding the reader's words is not the answer.
    assert "First start" not in link.negative
    assert link.negative.startswith("Keys > Revoking a leaked key")


def test_question_and_heading_negatives_lose_their_heading_as_the_positive_does(tmp_path: Path):
    made = _pairs(tmp_path)
    kinds = {p.kind for p in made}
    assert {"question", "heading"} <= kinds
    for p in made:
        if p.kind == "link":
            continue
        for text in (p.positive, p.negative):
            assert not text.startswith(("Keys >", "Setup >", "#")), (p.kind, text[:60])
    question = next(p for p in made if p.kind == "question")
    assert question.query == "Why does the server refuse to start?"
    assert question.positive.startswith("The server refuses to start")
    assert question.negative.startswith("On the first start")


def test_a_link_pair_can_say_the_whole_paragraph_around_its_link(tmp_path: Path):
    (line,) = [p for p in _pairs(tmp_path) if p.kind == "link"]
    (whole,) = [p for p in _pairs(tmp_path / "again", "paragraph") if p.kind == "link"]
    assert not line.query.startswith("On the first start")
    assert whole.query.startswith("On the first start the server writes its configuration")
    assert "describes in detail for every deployment" in whole.query
    assert "refuses to start" not in whole.query  # the next paragraph is not its own
    assert whole.positive == line.positive
