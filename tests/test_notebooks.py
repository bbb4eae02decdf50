"""Jupyter notebooks on an MkDocs site with mkdocs-jupyter: indexed as the built site shows
them, cited at the ids the built page has; where nothing renders them, reported as skipped.

A tester's site (6 Markdown pages, 4 notebooks in its nav) said "Indexed 6 files": the
notebooks were dropped without a word, and every question only they answered was a
coverage gap. The notebooks here are written with nbformat and the site is built with a
real ``mkdocs build``; the index is a real KnowledgeBase (hash embedder).
"""

from __future__ import annotations

import re
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import nbformat
import pytest
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook, new_output

from kb_qa import ask
from kb_qa.ingest import changes
from kb_qa.kb.knowledge_base import KnowledgeBase

KB = Callable[..., KnowledgeBase]
NOTEBOOK = "docs/tutorials/kernel.ipynb"
LONG_LOG = "".join(f"epoch {n}: loss 0.{n:04d}\n" for n in range(200))  # 4,000+ characters

MKDOCS_YML = (
    "site_name: Smoothy\n"
    "nav:\n"
    "  - Home: index.md\n"
    "  - Kernel smoothing: tutorials/kernel.ipynb\n"
    "plugins:\n"
    "  - mkdocs-jupyter:\n"
    "      execute: false\n"
    "markdown_extensions:\n"
    "  - toc:\n"
    "      permalink: true\n"
)


def notebook(bandwidth_rule: str = "Silverman's rule of thumb") -> str:
    """The kernel tutorial: prose, code with outputs, and two headings named "Example"
    (mkdocs-jupyter gives both the id ``example``)."""
    nb = new_notebook()
    nb.metadata["kernelspec"] = {
        "name": "python3",
        "display_name": "Python 3",
        "language": "python",
    }
    nb.cells = [
        new_markdown_cell("# Kernel smoothing\n\nKernel smoothing suits heavy-tailed noise."),
        new_markdown_cell(
            "## Choosing a bandwidth\n\nWhen `bandwidth='auto'`, Smoothy picks the bandwidth "
            f"with {bandwidth_rule}. On this data set it chooses 2.71."
        ),
        new_code_cell(
            "ks = smoothy.KernelSmoother(bandwidth='auto')\nks.fit(prices).bandwidth_",
            execution_count=1,
            outputs=[new_output("execute_result", data={"text/plain": "2.71"}, execution_count=1)],
        ),
        new_markdown_cell("## Example\n\nA first example, with the gaussian kernel."),
        new_code_cell(
            "smoothy.KernelSmoother(bandwidth=3).fit(prices)",
            execution_count=2,
            outputs=[new_output("stream", name="stdout", text=LONG_LOG)],
        ),
        new_markdown_cell(
            "## Example\n\nA second example, with the tricube kernel, which gives zero weight "
            "to points further than the bandwidth."
        ),
        new_code_cell("smoothy.KernelSmoother(bandwidth=3, kernel='tricube')", execution_count=3),
    ]
    return str(nbformat.writes(nb))


def write_site(root: Path, config: str = MKDOCS_YML) -> Path:
    (root / "docs" / "tutorials").mkdir(parents=True)
    (root / "mkdocs.yml").write_text(config, encoding="utf-8")
    (root / "docs" / "index.md").write_text(
        "# Smoothy\n\nSmoothy smooths noisy time series.\n", encoding="utf-8"
    )
    (root / NOTEBOOK).write_text(notebook(), encoding="utf-8")
    return root


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The tutorial page of the site as a real ``mkdocs build`` writes it."""
    root = write_site(tmp_path_factory.mktemp("built") / "site")
    out = root.parent / "out"
    command = [sys.executable, "-m", "mkdocs", "build", "-q", "-d", str(out)]
    proc = subprocess.run(command, cwd=root, capture_output=True, text=True, check=False)
    assert proc.returncode == 0, proc.stderr
    return out / "tutorials" / "kernel" / "index.html"


def test_a_notebook_is_answered_and_cited_at_an_id_of_its_built_page(
    built: Path, tmp_path: Path, kb: KB
) -> None:
    ids = set(re.findall(r'\sid="([^"]+)"', built.read_text(encoding="utf-8")))
    instance = kb(write_site(tmp_path / "site"))
    report = instance.index()
    assert report.skipped == [], report.skipped
    assert report.files == 2

    reply = ask(instance, "Which rule picks the bandwidth when it is auto?")
    assert "Silverman" in reply.text, reply.text
    first = reply.citations[0]
    assert first.link == "tutorials/kernel/#choosing-a-bandwidth"
    assert first.anchor in ids

    chunks = [c for c in instance.store.chunks() if c.path == NOTEBOOK]
    assert {c.url for c in chunks} == {"tutorials/kernel/"}
    assert {c.anchor for c in chunks} <= ids
    # Both "Example" sections: at the one id the page has for them, each its own chunk
    examples = [c for c in chunks if c.anchor == "example"]
    assert [("gaussian" in c.text, "tricube" in c.text) for c in examples] == [
        (True, False),
        (False, True),
    ]
    text = "\n".join(c.text for c in chunks)
    # The cells, readable: fenced code and short outputs; no CSS, prompts or copy buttons
    assert "```python\nks = smoothy.KernelSmoother(bandwidth='auto')" in text
    assert "2.71\n```" in text
    assert "epoch 150" not in text  # a long log is left out
    for noise in ("In [", "Out[", "jp-", "{", "¶", "Copied!"):
        assert noise not in text, noise


def test_an_edited_notebook_is_indexed_again(tmp_path: Path, kb: KB) -> None:
    """The watcher re-indexed Markdown only: a notebook's edit must start a run, which
    re-reads it."""
    assert changes.relevant(NOTEBOOK, is_directory=False)
    site = write_site(tmp_path / "site")
    instance = kb(site)
    instance.index()
    (site / NOTEBOOK).write_text(notebook("Scott's normal reference rule"), encoding="utf-8")
    report = instance.index()
    assert report.changed_files == 1
    reply = ask(instance, "Which rule picks the bandwidth when it is auto?")
    assert "Scott's normal reference rule" in reply.text, reply.text


@pytest.mark.parametrize(
    ("case", "says"),
    [
        ("vault", "export it to Markdown (jupyter nbconvert --to markdown)"),
        ("render off", "render is off"),
        ("no plugin", "mkdocs.yml lists no mkdocs-jupyter plugin"),
    ],
)
def test_a_notebook_nothing_renders_is_reported_as_skipped(
    case: str, says: str, tmp_path: Path, kb: KB
) -> None:
    config = {"vault": "", "no plugin": "site_name: Smoothy\n"}.get(case, MKDOCS_YML)
    site = write_site(tmp_path / "site", config)
    if case == "vault":
        (site / "mkdocs.yml").unlink()
    instance = kb(site, render=case != "render off")
    report = instance.index()
    [(skipped, why)] = report.skipped
    assert skipped == NOTEBOOK
    assert why.startswith("Jupyter notebook") and says in why, why
    assert report.files == 1
