"""Heading ids and texts of Hugo, mdBook, VitePress and Docusaurus pages, each case as the
generator's real build wrote it (Hugo 0.168, mdBook 0.5.4, VitePress 1.6.4; Docusaurus'
github-slugger): a verifier compared every citation link of real sites with the built
HTML and found these ids cited wrong (``## Snake_case_name`` cited at ``#snakecasename``).
tests/test_generator_builds.py checks such pages against a real ``hugo`` and ``mdbook``.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import pytest

from kb_qa.ingest import docusaurus, generators
from kb_qa.types import Heading

Headings = Callable[[Sequence[tuple[int, str]]], list[Heading]]


def one(headings: Headings, source: str) -> Heading:
    return headings([(2, source)])[0]


# (source, Hugo's id, mdBook's id, VitePress' id, the text shown)
UNDERSCORES = [
    ("Snake_case_name", "snake_case_name", "snake_case_name", "snake-case-name", "Snake_case_name"),
    ("A_B_C", "a_b_c", "a_b_c", "a-b-c", "A_B_C"),
    ("_emph_ and __strong__ word", *["emph-and-strong-word"] * 3, "emph and strong word"),
    ("__init__.py", "initpy", "initpy", "init-py", "init.py"),
]


@pytest.mark.parametrize(("source", "hugo", "mdbook", "vitepress", "text"), UNDERSCORES)
def test_an_underscore_inside_a_word_is_no_emphasis(
    source: str, hugo: str, mdbook: str, vitepress: str, text: str
) -> None:
    for name, anchor in (("hugo", hugo), ("mdbook", mdbook), ("vitepress", vitepress)):
        found = one(generators.HEADINGS[name], source)
        assert (found.anchor, found.text) == (anchor, text), name
    found = one(docusaurus.headings, source)
    assert (found.anchor, found.text) == (docusaurus.slug(text), text)
    assert one(docusaurus.headings, "Snake_case_name").anchor == "snake_case_name"


@pytest.mark.parametrize(
    ("source", "anchor"),
    [("Привет Мир", "привет-мир"), ("ÜBER CAPS", "über-caps"), ("Über Café", "über-café")],
)
def test_mdbook_lowercases_every_letter(source: str, anchor: str) -> None:
    # mdBook 0.5 does; kb-qa lowercased ASCII alone, as 0.4 did: #Привет-Мир was cited
    assert one(generators.HEADINGS["mdbook"], source).anchor == anchor
