"""Markdown -> chunks, through the real vault reader, site config and chunker.

Every test writes real files and reads them the way an index run does, so front matter,
mkdocs.yml and encodings are handled exactly as in production.
"""

from __future__ import annotations

import functools
import re
import subprocess
import sys
from collections.abc import Callable, Sequence
from pathlib import Path

import markdown
import pytest

from kb_qa.ingest import chunking, vault
from kb_qa.ingest.site import load_site
from kb_qa.settings import Settings
from kb_qa.text import keyword_tokens, normalize
from kb_qa.types import Chunk, Document

SLUGS_CONFIG = """\
site_name: Test
markdown_extensions:
  - attr_list
  - toc:
      slugify: !!python/object/apply:pymdownx.slugs.slugify {kwds: {case: lower}}
"""


def chunk_file(root: Path, rel: str, chunk_chars: int = 1500) -> tuple[Document, list[Chunk]]:
    """Read one file of a vault and chunk it, as KnowledgeBase.index() does."""
    site = load_site(root)
    files, skipped = vault.scan(site, Settings(vault=root))
    assert not skipped
    info = next(f for f in files if f.path == rel)
    result = vault.read_document(site, info, vault.Boundary.of(Settings(vault=root)))
    assert result.document is not None, result.skipped
    return result.document, chunking.chunk_document(result.document, site.markdown(), chunk_chars)


def check_addresses(doc: Document, chunks: Sequence[Chunk]) -> None:
    """Offsets and lines point at the chunk text, and the chunks tile the body."""
    src = doc.source
    assert chunks
    previous_end = doc.body_start
    for c in chunks:
        assert src[c.start : c.end] == c.text
        assert c.line_start == src.count("\n", 0, c.start) + 1, c
        assert c.line_end == c.line_start + c.text.count("\n"), c
        assert c.start >= previous_end, f"{c.anchor}#{c.piece} overlaps the previous chunk"
        gap = src[previous_end : c.start]
        assert gap.strip() == "", f"text lost before {c.anchor}#{c.piece}: {gap!r}"
        previous_end = c.end
    assert src[previous_end:].strip() == "", "text lost after the last chunk"
    assert len({c.id for c in chunks}) == len(chunks), "chunk ids are not unique"


MIXED = """\
---
title: Mixed Page
tags: [a, b]
---
Intro before any heading, with émoji 🚀 and 中文.

# Mixed

Some *text* here.

## Lists

- one
- two
  continued

1. first
2. second

## Code

```python
# a comment, not a heading
print("hi")
```

Setext Heading
--------------

| a | b |
|---|---|
| 1 | 2 |

### Deeper

Last line without a newline"""


@pytest.mark.parametrize("newline", ["\n", "\r\n"], ids=["lf", "crlf"])
def test_offsets_and_lines_point_at_the_source(
    make_vault: Callable[..., Path], newline: str
) -> None:
    root = make_vault({"mixed.md": MIXED.replace("\n", newline)})
    doc, chunks = chunk_file(root, "mixed.md")
    check_addresses(doc, chunks)
    by_anchor = {c.anchor: c for c in chunks}
    assert list(by_anchor) == ["", "mixed", "lists", "code", "setext-heading", "deeper"]
    assert by_anchor[""].text.startswith("Intro before any heading")
    assert by_anchor[""].line_start == 5  # the line after the front matter
    code = by_anchor["code"]
    assert code.line_start == MIXED.splitlines().index("## Code") + 1
    assert 'print("hi")' in code.text
    assert by_anchor["deeper"].text.endswith("Last line without a newline")


NESTED_CONFIG = """\
site_name: T
markdown_extensions:
  - admonition
  - pymdownx.details
  - pymdownx.superfences
  - pymdownx.tabbed:
      alternate_style: true
"""
# Headings MkDocs renders inside an admonition, a collapsible block (tab-indented) and a
# tab, one in an admonition in that tab; the "#" line in a fence is code.
NESTED = """\
# Page

!!! note "Read first"
    Intro text here.

    ### Inner steps
    - alpha step
    - beta step

    ```bash
    # not a heading
    ```

??? tip "More"
\t#### Tabbed in
\tText.

=== "GET"

    ### GET
    Reads a resource.

    !!! warning
        ##### Deeper
        Deep text.

## Next
More.
"""


@pytest.mark.parametrize("newline", ["\n", "\r\n"], ids=["lf", "crlf"])
def test_a_heading_in_an_admonition_or_tab_is_a_section_at_its_lines(
    make_vault: Callable[..., Path], newline: str
) -> None:
    """Mealie's upgrade guide has "### Before Upgrading" in a warning: its chunk was read
    from the page's HTML, re-indented, at offsets 0-0, its citation on the wrong lines."""
    root = make_vault({"mkdocs.yml": NESTED_CONFIG, "docs/index.md": NESTED.replace("\n", newline)})
    for chunk_chars in (1500, 40):  # whole sections, and sections cut into pieces
        doc, chunks = chunk_file(root, "docs/index.md", chunk_chars)
        check_addresses(doc, chunks)
        firsts = {c.anchor: c for c in chunks if c.piece == 0}
        assert list(firsts) == ["page", "inner-steps", "tabbed-in", "get", "deeper", "next"]
    doc, chunks = chunk_file(root, "docs/index.md")
    by_anchor = {c.anchor: c for c in chunks}
    steps = by_anchor["inner-steps"]
    assert (steps.line_start, steps.line_end) == (6, 14)  # to the tip's title line
    assert steps.text.startswith("    ### Inner steps") and "# not a heading" in steps.text
    assert steps.heading_path == ("Page", "Inner steps")
    assert by_anchor["page"].text.endswith("Intro text here.")
    assert by_anchor["deeper"].heading_path == ("Page", "GET", "Deeper")


def test_a_heading_in_an_admonition_the_site_does_not_render_is_no_section(
    make_vault: Callable[..., Path],
) -> None:
    """Without the admonition extensions MkDocs shows those lines as code: no section."""
    root = make_vault({"mkdocs.yml": "site_name: T\n", "docs/index.md": NESTED})
    doc, chunks = chunk_file(root, "docs/index.md")
    check_addresses(doc, chunks)
    assert [c.anchor for c in chunks] == ["page", "next"]


def test_front_matter_title_heads_the_path_and_is_stripped(make_vault: Callable[..., Path]) -> None:
    root = make_vault(
        {
            "guide.md": "---\ntitle: Guide\n---\n# Getting started\n\nHello.\n\n"
            "## Install\n\nSteps.\n\n### Linux\n\napt-get.\n\n## Use\n\nRun it.\n",
            "same.md": "---\ntitle: Install Guide\n---\n"
            "# Install Guide\n\nIntro.\n\n## Linux\n\nx\n",
        }
    )
    doc, chunks = chunk_file(root, "guide.md")
    check_addresses(doc, chunks)
    paths = {c.anchor: c.heading_path for c in chunks}
    # The page's first H1 stands beside the front matter title; the title opens every path.
    assert paths == {
        "getting-started": ("Guide",),
        "install": ("Guide", "Install"),
        "linux": ("Guide", "Install", "Linux"),
        "use": ("Guide", "Use"),
    }
    assert chunks[0].heading == "Getting started"
    assert doc.title == "Guide"
    assert all("title:" not in c.text and "---" not in c.text for c in chunks)
    assert chunks[0].start >= doc.body_start
    # A front matter title equal to the H1 is not repeated in the path.
    _, same = chunk_file(root, "same.md")
    assert [c.heading_path for c in same] == [("Install Guide",), ("Install Guide", "Linux")]


def test_title_falls_back_to_first_h1_then_file_name(make_vault: Callable[..., Path]) -> None:
    root = make_vault(
        {
            "h1.md": "Preamble.\n\n# Real Title\n\n## Part\n\nx\n",
            "my-notes.md": "## Only H2\n\ntext\n",
            "topic/index.md": "Just text, no headings.\n",
        }
    )
    _, h1 = chunk_file(root, "h1.md")
    assert [c.heading_path for c in h1] == [
        ("Real Title",),
        ("Real Title",),
        ("Real Title", "Part"),
    ]
    assert h1[0].anchor == "" and h1[0].text == "Preamble."
    # A note is titled by its file name as written, as Obsidian shows it ...
    _, notes = chunk_file(root, "my-notes.md")
    assert notes[0].heading_path == ("my-notes", "Only H2")
    _, index = chunk_file(root, "topic/index.md")
    assert index[0].heading_path == ("index",)


@pytest.mark.parametrize(
    ("name", "title"),
    [
        ("my-notes.md", "My notes"),
        ("Network-Plan.md", "Network Plan"),  # MkDocs capitalises only an all-lower name
        ("topic/index.md", "Index"),  # MkDocs' File.name, not the folder's
        ("index.md", "Home"),
    ],
)
def test_a_site_page_without_a_title_is_named_as_mkdocs_names_it(
    make_vault: Callable[..., Path], name: str, title: str
) -> None:
    """... a site's page as MkDocs names it. Every name was lower-cased after its first
    letter ("Network Plan" became "Network plan"), and a daily note's date lost its dashes."""
    root = make_vault({"mkdocs.yml": "site_name: T\n", f"docs/{name}": "Just text.\n"})
    _, chunks = chunk_file(root, f"docs/{name}")
    assert chunks[0].heading_path == (title,)


def test_heading_levels_pop_correctly(make_vault: Callable[..., Path]) -> None:
    root = make_vault(
        {"p.md": "# T\n\n### Deep\n\nx\n\n## Mid\n\ny\n\n#### Leaf\n\nz\n\n# Second\n\nw\n"}
    )
    _, chunks = chunk_file(root, "p.md")
    assert [(c.level, c.heading_path) for c in chunks] == [
        (1, ("T",)),
        (3, ("T", "Deep")),
        (2, ("T", "Mid")),
        (4, ("T", "Mid", "Leaf")),
        (1, ("T", "Second")),
    ]


def test_setext_headings(make_vault: Callable[..., Path]) -> None:
    root = make_vault({"s.md": "Big Title\n=========\n\nintro\n\nSmall Part\n----------\n\ntext\n"})
    doc, chunks = chunk_file(root, "s.md")
    check_addresses(doc, chunks)
    assert [(c.anchor, c.level, c.heading_path) for c in chunks] == [
        ("big-title", 1, ("Big Title",)),
        ("small-part", 2, ("Big Title", "Small Part")),
    ]
    assert chunks[1].text == "Small Part\n----------\n\ntext"
    assert chunks[1].line_start == 6


def test_hash_inside_fenced_code_is_not_a_heading(make_vault: Callable[..., Path]) -> None:
    source = (
        "# Page\n\n## Shell\n\n"
        "```bash\n# install it\n## not this either\napt-get install x\n```\n\n"
        "~~~\n# tilde fence\n~~~\n\n    # indented code\n\n## Next\n\ndone\n"
    )
    root = make_vault({"c.md": source})
    doc, chunks = chunk_file(root, "c.md")
    check_addresses(doc, chunks)
    assert [c.anchor for c in chunks] == ["page", "shell", "next"]
    shell = chunks[1]
    assert "# install it" in shell.text and "# tilde fence" in shell.text
    assert "# indented code" in shell.text


def test_duplicate_headings_are_numbered(make_vault: Callable[..., Path]) -> None:
    root = make_vault({"d.md": "# Page\n\n## Setup\n\na\n\n## Setup\n\nb\n\n## Setup\n\nc\n"})
    doc, chunks = chunk_file(root, "d.md")
    check_addresses(doc, chunks)
    assert [c.anchor for c in chunks] == ["page", "setup", "setup_1", "setup_2"]
    assert [c.text[-1] for c in chunks[1:]] == ["a", "b", "c"]
    assert chunks[2].link == "d.md#setup_1"


def test_attr_list_custom_id(make_vault: Callable[..., Path]) -> None:
    root = make_vault(
        {
            "mkdocs.yml": "site_name: T\nmarkdown_extensions:\n  - attr_list\n",
            "docs/a.md": "# Page\n\n## Custom Name { #custom }\n\nx\n\n## Custom\n\ny\n\n"
            "## Twice { #same }\n\n1\n\n## Again { #same }\n\n2\n",
        }
    )
    doc, chunks = chunk_file(root, "docs/a.md")
    check_addresses(doc, chunks)
    assert [(c.anchor, c.heading) for c in chunks] == [
        ("page", "Page"),
        ("custom", "Custom Name"),
        ("custom_1", "Custom"),  # the explicit id reserves "custom"
        ("same", "Twice"),
        ("same", "Again"),  # MkDocs renders both with id="same"
    ]
    assert chunks[1].heading_path == ("Page", "Custom Name")


def test_default_slugify_drops_cjk(make_vault: Callable[..., Path]) -> None:
    root = make_vault(
        {
            "zh.md": "# Guide\n\n## 安装步骤\n\n第一步\n\n## 配置\n\n第二步\n\n"
            "## C++ & Python: 100% fun!\n\nx\n\n## Rocket 🚀 launch\n\ny\n",
        }
    )
    _, chunks = chunk_file(root, "zh.md")
    assert [c.anchor for c in chunks] == ["guide", "_1", "_2", "c-python-100-fun", "rocket-launch"]
    assert chunks[1].heading_path == ("Guide", "安装步骤")


def test_pymdownx_slugs_keep_unicode(make_vault: Callable[..., Path]) -> None:
    root = make_vault(
        {
            "mkdocs.yml": SLUGS_CONFIG,
            "docs/zh.md": "# Guide\n\n## 安装步骤\n\n第一步\n\n## C++ & Python: 100% fun!\n\nx\n",
        }
    )
    _, chunks = chunk_file(root, "docs/zh.md")
    assert [c.anchor for c in chunks] == ["guide", "安装步骤", "c--python-100-fun"]
    assert chunks[1].url == "zh/"
    assert chunks[1].link == "zh/#安装步骤"


def test_anchors_equal_ids_in_a_real_mkdocs_build(
    make_vault: Callable[..., Path], tmp_path: Path
) -> None:
    page = (
        "# Home\n\n## Setup\n\n## 安装步骤\n\n## Intro { #setup-2 }\n\n## Setup\n\n"
        "## C++ & Python: 100% fun!\n\n```\n# not a heading\n```\n\nSetext Sub\n----------\n\n"
        "### `code` and [a link](https://example.org)\n\n## Setup\n"
    )
    root = make_vault(
        {
            "mkdocs.yml": SLUGS_CONFIG + "theme:\n  name: null\n  custom_dir: theme\n",
            # A theme that renders only the page body, so every heading id is one of ours.
            "theme/main.html": "{{ page.content }}\n",
            "docs/index.md": page,
        }
    )
    site_dir = tmp_path / "site"
    build = subprocess.run(
        [
            sys.executable,
            "-m",
            "mkdocs",
            "build",
            "-q",
            "-f",
            str(root / "mkdocs.yml"),
            "-d",
            str(site_dir),
        ],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert build.returncode == 0, build.stderr
    html = (site_dir / "index.html").read_text(encoding="utf-8")
    built = re.findall(r'<h[1-6][^>]*\sid="([^"]*)"', html)
    _, chunks = chunk_file(root, "docs/index.md")
    assert [c.anchor for c in chunks] == built
    assert len(built) == 9


def paragraphs(n: int, size: int) -> list[str]:
    """``n`` distinct paragraphs of exactly ``size`` characters."""
    out = []
    for i in range(n):
        head = f"Paragraph {i} "
        out.append(head + ("lorem " * size)[: size - len(head)])
    return out


def test_long_section_splits_on_paragraphs(make_vault: Callable[..., Path]) -> None:
    paras = paragraphs(12, 200)
    root = make_vault(
        {"long.md": "# Page\n\n## Long\n\n" + "\n\n".join(paras) + "\n\n## After\n\nend\n"}
    )
    doc, chunks = chunk_file(root, "long.md", chunk_chars=500)
    check_addresses(doc, chunks)
    long = [c for c in chunks if c.anchor == "long"]
    assert len(long) > 1
    assert [c.piece for c in long] == list(range(len(long)))
    assert all(c.heading_path == ("Page", "Long") for c in long)
    assert all(len(c.text) <= 500 for c in long)
    assert long[0].text.startswith("## Long")
    assert all(c.text.startswith("Paragraph ") for c in long[1:])
    # No paragraph is cut: each appears whole in exactly one piece.
    for p in paras:
        assert sum(p in c.text for c in long) == 1
    assert chunks[-1].anchor == "after"


def test_long_list_splits_between_items(make_vault: Callable[..., Path]) -> None:
    items = [f"- item {i:02d} " + "detail " * 12 for i in range(20)]
    root = make_vault({"list.md": "# Page\n\n## Items\n\n" + "\n".join(items) + "\n"})
    doc, chunks = chunk_file(root, "list.md", chunk_chars=400)
    check_addresses(doc, chunks)
    pieces = [c for c in chunks if c.anchor == "items"]
    assert len(pieces) > 2
    assert all(c.text.startswith("- item") for c in pieces[1:])
    for item in items:
        assert sum(item.rstrip() in c.text for c in pieces) == 1


def test_first_piece_counts_its_heading(make_vault: Callable[..., Path]) -> None:
    heading = "## " + "A heading long enough to matter " * 4
    root = make_vault({"h.md": heading + "\n\n" + "\n\n".join(paragraphs(4, 150)) + "\n"})
    doc, chunks = chunk_file(root, "h.md", chunk_chars=400)
    check_addresses(doc, chunks)
    assert all(len(c.text) <= 400 for c in chunks), [len(c.text) for c in chunks]


def test_code_block_is_never_cut(make_vault: Callable[..., Path]) -> None:
    code_lines = [f"value_{i} = compute({i})  # step {i}" for i in range(40)]
    code_lines.insert(20, "")  # a blank line inside the block must not end it
    code = "```python\n" + "\n".join(code_lines) + "\n```"
    assert len(code) > 3 * 300
    body = "\n\n".join(paragraphs(3, 120))
    source = f"# Page\n\n## Code\n\n{body}\n\n{code}\n\n{body.replace('Paragraph', 'Closing')}\n"
    root = make_vault({"code.md": source})
    doc, chunks = chunk_file(root, "code.md", chunk_chars=300)
    check_addresses(doc, chunks)
    holding = [c for c in chunks if "```python" in c.text]
    assert len(holding) == 1
    assert code in holding[0].text
    assert all(c.text.count("```") % 2 == 0 for c in chunks)
    assert len([c for c in chunks if c.anchor == "code"]) >= 3  # text around it still split


def test_a_code_blocks_annotations_stay_in_its_piece(make_vault: Callable[..., Path]) -> None:
    # pydantic's concepts/unions.md: Material shows the numbered list after the code as
    # tooltips inside it. A piece that started with the list quoted text the page hides.
    code = "```python\nprint(User(id=123))  # (1)\nprint(User(id='456'))  # (2)\n```"
    notes = "1. As expected the input is validated against the `int` member.\n" + (
        "2. We're in lax mode and the numeric string `'123'` is valid as input. " * 3
    )
    body = "\n\n".join(paragraphs(2, 120))
    source = f"# Page\n\n## Left to right\n\n{body}\n\n{code}\n\n{notes}\n\n{body}\n"
    root = make_vault({"unions.md": source})
    doc, chunks = chunk_file(root, "unions.md", chunk_chars=300)
    check_addresses(doc, chunks)
    (holding,) = [c for c in chunks if "```python" in c.text]
    assert f"{code}\n\n{notes.rstrip()}" in holding.text
    assert not any(c.text.startswith("1. As expected") for c in chunks)
    assert len([c for c in chunks if c.anchor == "left-to-right"]) >= 3  # the rest still split


def test_big_table_splits_with_header_repeated(make_vault: Callable[..., Path]) -> None:
    header = "| Name | Value |\n|------|-------|"
    rows = [f"| row{i:02d} | value number {i} with some words |" for i in range(60)]
    root = make_vault({"t.md": "# Page\n\n## Table\n\n" + header + "\n" + "\n".join(rows) + "\n"})
    doc, chunks = chunk_file(root, "t.md", chunk_chars=400)
    check_addresses(doc, chunks)
    pieces = [c for c in chunks if c.anchor == "table"]
    assert len(pieces) > 1
    assert all(len(c.text) <= 400 for c in pieces)
    assert header in pieces[0].text
    for piece in pieces[1:]:
        assert piece.context == header
        assert piece.text.startswith("| row")
        assert header in piece.index_text
    for row in rows:
        assert sum(row in c.text for c in pieces) == 1


def test_blank_lines_before_first_heading_make_no_chunk(make_vault: Callable[..., Path]) -> None:
    root = make_vault(
        {
            "fm.md": "---\ntitle: T\n---\n\n# Head\n\ntext\n",
            "blank.md": "\n\n# Head\n\ntext\n",
        }
    )
    for rel in ("fm.md", "blank.md"):
        _, chunks = chunk_file(root, rel)
        assert all(c.text.strip() for c in chunks), [(c.anchor, c.text) for c in chunks]


def test_keyword_tokens_cjk_bigrams_and_stemming() -> None:
    tokens = keyword_tokens("向量数据库")
    assert tokens == ["向量", "量数", "数据", "据库"]
    assert keyword_tokens("库") == ["库"]
    assert keyword_tokens("running") == ["run"]
    assert keyword_tokens("The indexes are running") == ["index", "run"]
    mixed = keyword_tokens("Install the 向量数据库 on Linux")
    assert mixed == ["instal", "linux", "向量", "量数", "数据", "据库"]  # stopwords dropped
    # NFKC: full-width letters and ligatures match their plain forms.
    assert keyword_tokens("ＲＵＮＮＩＮＧ") == ["run"]
    assert keyword_tokens("ﬁle") == ["file"]
    # snake_case names match whole and by their parts
    assert keyword_tokens("max_file_bytes") == ["max_file_byt", "max", "file", "byte"]
    # ... and so do the docs' CamelCase names, acronyms included (a question's stay whole)
    docs = functools.partial(keyword_tokens, camel_parts=True)
    assert docs("lumen.PermanentError") == ["lumen", "permanenterror", "perman", "error"]
    assert docs("HTTPException") == ["httpexcept", "http", "except"]
    assert docs("Python ASCII") == ["python", "ascii"]
    assert keyword_tokens("HTTPException") == ["httpexcept"]
    assert normalize("“smart”  quotes\u00a0here") == '"smart" quotes here'


def test_an_outline_items_sub_items_are_cut_points_with_the_item_as_context(
    make_vault: Callable[..., Path],
) -> None:
    """A daily note is one list: "- Log" with forty sub-bullets outgrew a chunk, and only
    top-level items could be cut, so the whole day was one oversized chunk ("not covered"
    for the question one bullet answers). Now a piece may start at a sub-item, under its
    item's first line."""
    log = "".join(f"    - 09:{n:02} did routine task number {n} of the day\n" for n in range(45))
    note = f"# 2024-03-11\n\n- Log\n{log}    - The dentist moved to 14 March at 9:15\n- Ideas\n"
    root = make_vault({"journal/2024-03-11.md": note})
    doc, chunks = chunk_file(root, "journal/2024-03-11.md")
    check_addresses(doc, chunks)
    assert len(chunks) >= 2 and all(len(c.text) <= 1500 for c in chunks)
    later = [c for c in chunks if c.piece > 0]
    assert later and all(c.context == "- Log" for c in later)
    assert any("dentist" in c.text for c in later)


@pytest.mark.parametrize("newline", ["\n", "\r\n"], ids=["lf", "crlf"])
def test_a_fence_left_open_is_read_as_mkdocs_reads_it(
    make_vault: Callable[..., Path], newline: str
) -> None:
    """A writer saved a page with its new code fence not closed yet: MkDocs rendered every
    heading after it, kb-qa read them as code, and the answers quoted the rendered HTML with
    sections at offset 0 or spanning the rest of the file."""
    page = (
        "# Webhooks\n\n## Testing locally\n\n```bash\ncurl -X POST <url>\n\n"
        "## Event types\n\nSent on every retry.\n\n## Checking signatures\n\nUse the header.\n"
    )
    root = make_vault({"hooks.md": page.replace("\n", newline)})
    doc, chunks = chunk_file(root, "hooks.md")
    check_addresses(doc, chunks)
    by_anchor = {c.anchor: c for c in chunks}
    assert list(by_anchor) == ["webhooks", "testing-locally", "event-types", "checking-signatures"]
    assert by_anchor["event-types"].text.rstrip().endswith("Sent on every retry.")
    # A fence closed on the last line is a fence, as before.
    closed = "# A\n\n## Code\n\n```bash\n## not a heading\n```"
    doc, chunks = chunk_file(make_vault({"a.md": closed.replace("\n", newline)}, name="v2"), "a.md")
    assert [c.anchor for c in chunks] == ["a", "code"]


@pytest.mark.parametrize("newline", ["\n", "\r\n"], ids=["lf", "crlf"])
def test_a_paragraph_over_a_rule_is_no_heading_on_a_site(
    make_vault: Callable[..., Path], newline: str
) -> None:
    """A merge left conflict markers in a page ("<<<<<<< HEAD", two lines, "======="):
    CommonMark reads a paragraph of two lines over "===" or "---" as a heading, MkDocs
    (Python-Markdown) as a paragraph and a rule, so the chat cited an anchor the page did
    not have. A one-line one is a heading in both; a notes vault keeps CommonMark's."""
    page = (
        "# Main\n\n<<<<<<< HEAD\nThe marker word is siteconflictbeta.\n=======\n"
        "The other side.\n>>>>>>> cb\n\nFirst line of a paragraph\nits second line.\n---\n\n"
        "More text.\n\nSetext\n------\n\nUnder it.\n\n> Quoted line one\n> and two.\n> ---\n"
    )
    files = {"mkdocs.yml": "site_name: S\n", "docs/main.md": page.replace("\n", newline)}
    doc, chunks = chunk_file(make_vault(files), "docs/main.md")
    check_addresses(doc, chunks)
    built = markdown.markdown(page, extensions=["toc"])
    assert [c.anchor for c in chunks] == ["main", "setext"] == re.findall(r' id="([^"]+)"', built)
    assert "siteconflictbeta" in chunks[0].text and "More text." in chunks[0].text
    # A notes vault reads it as Obsidian does (CommonMark): the paragraph is a heading.
    doc, chunks = chunk_file(make_vault({"main.md": page}, name="notes"), "main.md")
    assert len(chunks) > 2
