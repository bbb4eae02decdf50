"""A site whose settings live in a file its ``mkdocs.yml`` inherits (``INHERIT:``), read as
MkDocs reads it: a QA pass's site kept its Markdown extensions there and was indexed
without them (its snippets left as ``--8<--`` lines, its anchors slugified otherwise than
the built pages, its ``site_url`` lost)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from kb_qa.ingest.site import load_site
from kb_qa.kb.knowledge_base import KnowledgeBase

BASE = """markdown_extensions:
  - pymdownx.snippets:
      base_path: [snips]
      check_paths: true
  - toc:
      slugify: !!python/object/apply:pymdownx.slugs.slugify
        kwds: {case: lower, percent_encode: true}
site_url: https://docs.example.com/
"""
FILES = {
    "base.yml": BASE,
    "mkdocs.yml": "INHERIT: base.yml\nsite_name: Inherited\n",
    "docs/index.md": '# Support\n\n## Über Eskalation\n\n--8<-- "oncall.md"\n',
    "snips/oncall.md": "Call the bridge line on +1 555 0100 when the pager stays silent.\n",
}


@pytest.mark.parametrize("render", [True, False])
def test_the_inherited_settings_shape_the_index(
    make_vault: Callable[..., Path], kb: Callable[..., KnowledgeBase], render: bool
) -> None:
    vault = make_vault(FILES)
    site = load_site(vault, render=render)
    assert site.site_url == "https://docs.example.com/"
    base = kb(vault, render=render)
    base.index()
    hit = base.search("Über Eskalation", 1)[0]
    # the built page's id (pymdownx's slugify, percent-encoded), not Python-Markdown's
    assert hit.chunk.anchor == "%C3%BCber-eskalation"
    if render:  # the snippet as the page shows it (unrendered, files are read as written)
        assert "bridge line" in hit.chunk.text and "--8<--" not in hit.chunk.text


def test_an_inherited_file_outside_the_site_is_not_read(
    make_vault: Callable[..., Path], tmp_path: Path
) -> None:
    outside = tmp_path / "elsewhere.yml"
    outside.write_text("site_url: https://outside.example/\n", encoding="utf-8")
    vault = make_vault({"mkdocs.yml": f"INHERIT: {outside}\nsite_name: S\n", "docs/a.md": "# A\n"})
    assert load_site(vault, render=False).site_url != "https://outside.example/"


def test_an_inherited_file_that_is_missing_is_left_out(
    make_vault: Callable[..., Path], kb: Callable[..., KnowledgeBase]
) -> None:
    # Typer's mkdocs.yml inherits a file its build writes first (mkdocs.env.yml): a copy of
    # its docs without it could not be indexed at all.
    vault = make_vault(
        {"mkdocs.yml": "INHERIT: env.yml\nsite_name: S\n", "docs/a.md": "# A\n\nText.\n"}
    )
    base = kb(vault, render=False)
    assert base.index().files == 1
