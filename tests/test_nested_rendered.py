"""A heading inside a content tab or an admonition, on an MkDocs site kb-qa renders.

QA passes over Pi-hole's and Mealie's docs (Material) found such pages read whole from their
built HTML: the page's heading ids were not all among the headings chunked from the source,
as CommonMark reads an indented heading as code. Every passage of the page was then not the
docs' bytes (with the ``abbr`` extension each "API" read "API (Application Programming
Interface)") and the nested heading's section had no place in the file (offsets 0-0, its
citation on lines 2-3 where its list was on 6-8). Built with a real ``mkdocs build``.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path

import markdown

from kb_qa import ask
from kb_qa.answer.blocks import passages
from kb_qa.ingest.rendered_chunks import html_to_markdown
from kb_qa.kb.knowledge_base import KnowledgeBase
from tests.test_render import mkdocs_build

CONFIG = (
    "site_name: Hole\n"
    "theme:\n  name: null\n  custom_dir: theme\n"
    "markdown_extensions:\n  - abbr\n  - admonition\n"
    "  - pymdownx.tabbed:\n      alternate_style: true\n"
)
API = (
    "## Errors\n"
    "The API returns `429` when the API is called too often.\n\n"
    '=== "GET"\n\n'
    "    ### GET\n"
    "    Reads a resource.\n\n"
    "*[API]: Application Programming Interface\n"
)
UPDATING = (
    "# Page\n\n"
    '!!! note "Read first"\n'
    "    Intro text here.\n\n"
    "    ### Inner steps\n"
    "    - alpha step\n"
    "    - beta step\n\n"
    "## Next\n"
    "More.\n"
)
SITE = {
    "mkdocs.yml": CONFIG,
    # A theme that renders only the page body, so every heading id is the page's.
    "theme/main.html": "{{ page.content }}\n",
    "docs/api.md": API,
    "docs/updating.md": UPDATING,
}


def test_a_page_with_a_heading_in_a_tab_is_read_from_its_source(
    make_vault: Callable[..., Path], kb: Callable[..., KnowledgeBase], tmp_path: Path
) -> None:
    vault = make_vault(SITE)
    site = mkdocs_build(vault, tmp_path / "site")
    instance = kb(vault)
    report = instance.index()
    assert "rendering" in report.phases
    for name, source in (("api", API), ("updating", UPDATING)):
        chunks = sorted(
            (c for c in instance.store.chunks() if c.path == f"docs/{name}.md"),
            key=lambda c: c.start,
        )
        html = (site / name / "index.html").read_text(encoding="utf-8")
        built = re.findall(r'<h[1-6][^>]*\sid="([^"]*)"', html)
        assert [c.anchor for c in chunks] == built
        for c in chunks:  # each passage is the docs' bytes, at its place in the file
            assert source[c.start : c.end] == c.text, c
            assert c.line_start == source.count("\n", 0, c.start) + 1, c
            assert c.line_end == c.line_start + c.text.count("\n"), c
    [errors] = [c for c in instance.store.chunks() if c.anchor == "errors"]
    assert "The API returns `429` when the API is called too often." in errors.text
    [get] = [c for c in instance.store.chunks() if c.anchor == "get"]
    assert get.text.startswith("    ### GET\n    Reads a resource.")

    reply = ask(instance, "what happens when the API is called too often")
    assert "The API returns `429` when the API is called too often." in reply.text, reply.text
    assert "(Application" not in reply.text
    reply = ask(instance, "what are the inner steps?")
    cited = {(c.anchor, c.line_start, c.line_end) for c in reply.citations}
    # The quoted list, on lines 7-8 under its heading (line 6), as prose, not code
    assert ("inner-steps", 7, 8) in cited, reply.citations
    assert "- alpha step\n- beta step" in reply.text and "```" not in reply.text


def test_html_of_an_abbreviation_is_read_as_its_word() -> None:
    """A page read from its HTML keeps an abbreviation as written; its meaning is the
    tooltip (``<abbr title>``), not text of the page."""
    md = markdown.Markdown(extensions=["abbr"])
    html = md.convert("The API returns 429.\n\n*[API]: Application Programming Interface\n")
    assert "<abbr" in html
    assert html_to_markdown(html) == "The API returns 429.\n"


def test_a_section_cut_inside_a_box_is_quoted_as_prose_not_code() -> None:
    """Its lines keep the box's indent (the opener is in the section before), which
    CommonMark reads as one indented code block: Pi-hole's "Is PATCH idempotent?" quoted
    the right passage inside a code block. A tab-indented one, and its code, too."""
    for indent in ("    ", "\t"):
        section = (
            f"{indent}### PATCH\n{indent}PATCH is not idempotent: a second call changes it "
            f"again.\n\n{indent}```bash\n{indent}curl -X PATCH x\n{indent}```\n"
        )
        kinds = [(b.kind, b.text) for b in passages(section)]
        assert kinds == [
            ("prose", "PATCH is not idempotent: a second call changes it again."),
            ("code", "```bash\ncurl -X PATCH x\n```"),
        ]
        for b in passages(section):  # what a citation highlights: the docs' own lines
            assert section[b.span[0] : b.span[1]].lstrip().startswith(b.text.split("\n")[0])
    # A page's opening indented code block is code still
    assert [b.kind for b in passages("    pip install kb-qa\n")] == ["code"]
