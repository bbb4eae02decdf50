"""Heading ids and texts of Hugo, mdBook, VitePress and Docusaurus pages, each case as the
generator's real build wrote it (Hugo 0.168, mdBook 0.5.4, VitePress 1.6.4; Docusaurus'
github-slugger): a verifier compared every citation link of real sites with the built
HTML and found these ids cited wrong (``## Snake_case_name`` cited at ``#snakecasename``).
tests/test_generator_builds.py checks such pages against a real ``hugo`` and ``mdbook``.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path

import pytest
from conftest import write_files

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


# (source, Hugo's id, mdBook's id, VitePress' id or None where it was not built)
READ_AS_WRITTEN = [
    ("Code `Vec<T>` span", "code-vect-span", "code-vect-span", "code-vec-t-span"),
    ('"Quoted" -- dashes', "quoted--dashes", "quoted--dashes", "quoted-dashes"),
    (
        "It's a dash --- here... 'single'",
        *["its-a-dash--here-single"] * 2,
        "it-s-a-dash-here-single",
    ),
    ("a ---- b ----- c ------ d", "a---b--c--d", "a--b--c--d", None),
    ("Use --flag here-- and a--b", "use-flag-here-and-ab", "use-flag-here-and-ab", None),
    (
        "Escaped \\*stars\\* and &amp; entity &copy;",
        *["escaped-stars-and--entity-"] * 2,
        "escaped-stars-and-amp-entity-copy",
    ),
    ("Escaped \\_a\\_ and \\\\ and \\` end", *["escaped-_a_-and--and--end"] * 2, None),
    (
        "Hex &#x41;BC and &#65; and &AMP; &nbsp;x &bogus; end",
        "hex-x41bc-and-65-and--x-bogus-end",
        "hex-abc-and-a-and---x-bogus-end",
        None,
    ),
    (
        "Ampersand &lt;tag&gt; and &#169; num",
        "ampersand-tag-and-169-num",
        "ampersand-tag-and--num",
        "ampersand-lt-tag-gt-and-169-num",
    ),
    (
        "Image ![alt text](x.png) heading",
        "image-alt-text-heading",
        "image--heading",
        "image-heading",
    ),
    ('Attr form {id="attr-id"}', "attr-id", '"attr-id"', "attr-id"),
    ("Code ``a `b` c`` end", "code-a-b-c-end", "code-a-b-c-end", None),
]


@pytest.mark.parametrize(("source", "hugo", "mdbook", "vitepress"), READ_AS_WRITTEN)
def test_code_escapes_entities_and_smart_punctuation_are_read_as_the_generator_does(
    source: str, hugo: str, mdbook: str, vitepress: str | None
) -> None:
    for name, anchor in (("hugo", hugo), ("mdbook", mdbook), ("vitepress", vitepress)):
        if anchor is not None:
            assert one(generators.HEADINGS[name], source).anchor == anchor, name


def test_shown_text_has_no_backslashes_nor_entities() -> None:
    source = "Escaped \\*stars\\* and &amp; entity &copy;"
    for name in ("hugo", "mdbook", "vitepress"):
        assert one(generators.HEADINGS[name], source).text == "Escaped *stars* and & entity ©"
    assert one(generators.HEADINGS["mdbook"], '"Quoted" -- dashes').text == "“Quoted” – dashes"


@pytest.mark.parametrize(
    ("files", "generator"),
    [
        ({"hugo.toml": 'baseURL = "/"\n', "content/a.md": ""}, "hugo"),
        (
            {
                "hugo.toml": "[markup.goldmark.extensions.typographer]\ndisable = true\n",
                "content/a.md": "",
            },
            "hugo-no-typographer",
        ),
        (
            {
                "hugo.toml": "[markup.goldmark.extensions]\ntypographer = false\n",
                "content/a.md": "",
            },
            "hugo-no-typographer",
        ),
        ({"book.toml": "[book]\n", "src/SUMMARY.md": "- [A](a.md)\n"}, "mdbook"),
        (
            {
                "book.toml": "[output.html]\nsmart-punctuation = false\n",
                "src/SUMMARY.md": "- [A](a.md)\n",
            },
            "mdbook-no-smart-punctuation",
        ),
    ],
)
def test_smart_punctuation_turned_off_in_the_config_keeps_the_dashes(
    tmp_path: Path, files: dict[str, str], generator: str
) -> None:
    # Hugo's typographer and mdBook 0.5's smart-punctuation are on unless the config turns
    # them off; off, "--" stays two hyphens in the id (real builds: #quoted----dashes)
    fields = generators.site_fields(write_files(tmp_path, files))
    assert fields is not None and fields["generator"] == generator
    anchor = one(generators.HEADINGS[generator], '"Quoted" -- dashes').anchor
    assert anchor == ("quoted--dashes" if generator in ("hugo", "mdbook") else "quoted----dashes")
