"""An mdBook book: its chapters cited at the URLs and heading ids mdBook publishes, only
the chapters SUMMARY.md lists, its ``{{#include}}`` lines never quoted (a QA pass's book:
every citation opened ``src/guide/installation.md#...``, a 404 where mdBook publishes
``guide/installation.html``; SUMMARY.md was cited as a page).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from api_helpers import answered, asked
from conftest import write_files
from uvicorn_thread import UvicornThread

from kb_qa.errors import ConfigError
from kb_qa.ingest import mdbook, mdx
from kb_qa.kb.knowledge_base import KnowledgeBase
from kb_qa.serve.app import create_app

BOOK_TOML = """[book]
title = "Lattice"
authors = ["Sam"]
language = "en"
src = "src"
"""

SUMMARY = """# Summary

[Introduction](README.md)

# Guide

- [Installing Lattice](guide/installation.md)
- [Signals](guide/signals.md)
    - [Effects](guide/effects/README.md)
- [Not written yet]()

---

[Contributors](misc/contributors.md)
"""

INSTALLATION = """# Installation

Lattice is built with cargo.

## Requirements {#reqs}

Lattice needs Rust 1.74 or newer, installed with rustup.

## Install the crate

Add the crate to the manifest of your project:

```rust
{{#include ../../listings/install.rs}}
```

Then build it with `cargo build --release`; the crate compiles in about forty seconds.

{{#include ../../listings/notes.md}}

## Options

The first options section.

## Options

The second options section.

## `Vec<T>` and **more**

Vectors hold the signals.
"""

FILES = {
    "book.toml": BOOK_TOML,
    "listings/install.rs": 'fn main() { println!("lattice"); }\n',
    "listings/notes.md": "Notes shared by two chapters.\n",
    "src/SUMMARY.md": SUMMARY,
    "src/README.md": "# Lattice\n\nLattice is a reactive grid for spreadsheets.\n",
    "src/guide/installation.md": INSTALLATION,
    "src/guide/signals.md": "# Signals\n\nA signal holds one value of a cell.\n",
    "src/guide/effects/README.md": "# Effects\n\nAn effect runs when a signal changes.\n",
    "src/misc/contributors.md": "# Contributors\n\nThanks to everyone who sent a patch.\n",
    "src/drafts/unlisted.md": "# Unlisted\n\nThe frobnicator sprocket is not in the book.\n",
}


@pytest.fixture(scope="module")
def book(tmp_path_factory: pytest.TempPathFactory) -> Iterator[KnowledgeBase]:
    root = write_files(tmp_path_factory.mktemp("mdbook") / "book", FILES)
    kb = KnowledgeBase(root, index_dir=root.parent / "index", embed_model="hash")
    report = kb.index()
    assert not report.skipped, report.skipped
    said = " ".join(text for _, text in report.warnings)
    assert "looks like a mdBook site" not in said  # the warning kb-qa gave before
    yield kb
    kb.close()


def links(kb: KnowledgeBase) -> dict[str, set[str]]:
    """Each indexed file's page URLs (its citation links without their #anchor)."""
    found: dict[str, set[str]] = {}
    for chunk in kb.searchable_chunks():
        found.setdefault(chunk.path, set()).add(chunk.link.split("#")[0])
    return found


def test_the_chapters_summary_lists_are_cited_where_mdbook_publishes_them(
    book: KnowledgeBase,
) -> None:
    assert links(book) == {
        "src/README.md": {"index.html"},  # mdBook's index preprocessor
        "src/guide/installation.md": {"guide/installation.html"},
        "src/guide/signals.md": {"guide/signals.html"},
        "src/guide/effects/README.md": {"guide/effects/index.html"},
        "src/misc/contributors.md": {"misc/contributors.html"},
    }  # no SUMMARY.md, no chapter it does not list (mdBook builds neither)


def test_heading_ids_are_mdbooks(book: KnowledgeBase) -> None:
    sections = {
        chunk.anchor: chunk.heading
        for chunk in book.searchable_chunks()
        if chunk.path == "src/guide/installation.md"
    }
    assert sections["reqs"] == "Requirements"  # {#reqs}: not part of the heading's text
    assert sections["options"] == sections["options-1"] == "Options"
    assert sections["vect-and-more"] == "Vec<T> and more"  # a code span's text, as written
    titles = {c.heading_path[0] for c in book.searchable_chunks() if c.path.endswith("ion.md")}
    assert titles == {"Installing Lattice"}  # the name SUMMARY.md (the sidebar) gives it


def test_the_http_api_cites_mdbook_pages(book: KnowledgeBase) -> None:
    with UvicornThread(create_app(book)) as server:
        given = answered(server.url, "Which Rust version does Lattice need?")
    assert "Rust 1.74 or newer" in given["text"]
    assert given["citations"][0]["link"].startswith("guide/installation.html#reqs")


def test_includes_are_never_quoted(book: KnowledgeBase) -> None:
    done, citations = asked(book, "How long does the crate take to compile with cargo build?")
    assert "forty seconds" in done.text
    assert "{{#include" not in done.text and "```" not in done.text, done.text
    for cited in citations.citations:
        source = (Path(book.settings.vault) / cited.path).read_text()
        assert source[cited.start : cited.end] == cited.text  # the file's own bytes


def test_an_unlisted_chapter_is_not_answered_from(book: KnowledgeBase) -> None:
    done, _ = asked(book, "What is the frobnicator sprocket?")
    assert "frobnicator" not in done.text


def test_a_chapter_added_to_summary_is_indexed(
    make_vault: Callable[..., Path], kb: Callable[..., KnowledgeBase]
) -> None:
    vault = make_vault(FILES)
    opened = kb(vault)
    opened.index()
    summary = vault / "src/SUMMARY.md"
    summary.write_text(SUMMARY + "- [Drafts](drafts/unlisted.md)\n", encoding="utf-8")
    opened.index()
    assert links(opened)["src/drafts/unlisted.md"] == {"drafts/unlisted.html"}


def test_book_toml_src_and_the_index_preprocessor_turned_off(
    make_vault: Callable[..., Path], kb: Callable[..., KnowledgeBase]
) -> None:
    config = '[book]\nsrc = "chapters"\n\n[build]\nuse-default-preprocessors = false\n'
    vault = make_vault(
        {
            "book.toml": config,
            "chapters/SUMMARY.md": "- [Intro](README.md)\n- [Über uns](<über uns.md>)\n",
            "chapters/README.md": "# Intro\n\n## Über alles\n\nThe intro.\n",
            "chapters/über uns.md": "# Über uns\n\nWho we are.\n",
        }
    )
    opened = kb(vault)
    opened.index()
    assert {c.link for c in opened.searchable_chunks()} == {
        "README.html#intro",
        "README.html#über-alles",  # mdBook 0.5 lowercases every letter
        "%C3%BCber%20uns.html#über-uns",
    }


def test_the_src_folder_given_alone(
    make_vault: Callable[..., Path], kb: Callable[..., KnowledgeBase]
) -> None:
    site = make_vault(FILES)
    report = kb(site / "src").index()
    said = " ".join(text for _, text in report.warnings)
    assert "outside the vault" in said and str(site) in said


def test_a_broken_book_toml_says_what_to_do(
    make_vault: Callable[..., Path], kb: Callable[..., KnowledgeBase]
) -> None:
    vault = make_vault({"book.toml": "[book\n", "src/SUMMARY.md": "- [A](a.md)\n"})
    with pytest.raises(ConfigError, match=r"cannot be read as TOML.*fix it"):
        kb(vault).index()


def test_include_lines_and_code_blocks_of_includes_are_no_text() -> None:
    page = (
        "Intro.\n\n```rust\n{{#include ../x.rs:main}}\n```\n\n"
        "```rust\nfn a() {}\n{{#rustdoc_include ../y.rs}}\n```\n\n"
        "\\{{#include shown.rs}}\n"
    )
    out = mdx.as_mkdocs(page).split("\n")
    assert len(out) == page.count("\n") + 1  # line for line
    assert out[2:5] == ["", "", ""]  # the whole block: nothing of it is shown as written
    assert out[6:10] == ["```rust", "fn a() {}", "", "```"]
    assert out[11] == "\\{{#include shown.rs}}"  # escaped: the book shows it as text


def test_normalize_id_matches_mdbooks_own_tests() -> None:
    # rust-lang/mdBook src/utils/mod.rs, it_normalizes_ids and it_generates_unique_ids
    assert mdbook.normalize_id("`--passes`: add more rustdoc passes") == (
        "--passes-add-more-rustdoc-passes"
    )
    assert mdbook.normalize_id("Method-call 🐙 expressions") == "method-call--expressions"
    assert mdbook.normalize_id("中文標題 CJK title") == "中文標題-cjk-title"
    # ...as mdBook 0.5 has them: every letter lowercased (0.4's "Über" stayed "Über")
    found = mdbook.headings([(2, "Über"), (2, "中文標題 CJK title"), (2, "Über"), (2, "Über")])
    assert [h.anchor for h in found] == ["über", "中文標題-cjk-title", "über-1", "über-2"]


def test_kb_qa_index_reads_the_book_without_a_warning(
    tmp_path: Path, run_cli: Callable[..., Any]
) -> None:
    # It said "looks like a mdBook site ... citations link to the Markdown files".
    root = write_files(tmp_path / "book", FILES)
    env = {"KBQA_INDEX_DIR": str(tmp_path / "i")}
    result = run_cli("index", str(root), env=env)
    assert result.returncode == 0, result.stderr
    assert "looks like" not in result.stdout + result.stderr
    found = run_cli("search", "Rust 1.74 rustup", "--vault", str(root), "--json", env=env)
    assert "guide/installation.html#reqs" in found.stdout, found.stdout


def test_a_summary_link_with_a_fragment_names_another_file(
    make_vault: Callable[..., Path], kb: Callable[..., KnowledgeBase]
) -> None:
    # mdbook 0.5.4 builds ref/includes.html from a file "ref/includes.md#top" (it creates
    # it): ref/includes.md's text is on no page, and kb-qa cited it there
    vault = make_vault(
        {
            "book.toml": "[book]\n",
            "src/SUMMARY.md": "- [Intro](README.md)\n- [Includes](ref/includes.md#top)\n",
            "src/README.md": "# Intro\n\nThe intro.\n",
            "src/ref/includes.md": "# Includes\n\nText no page shows.\n",
        }
    )
    opened = kb(vault)
    opened.index()
    assert {c.path for c in opened.searchable_chunks()} == {"src/README.md"}
