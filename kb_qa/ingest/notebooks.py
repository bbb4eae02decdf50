"""Jupyter notebooks: indexed as an MkDocs site with mkdocs-jupyter publishes them, else
reported as skipped with what to do.

A notebook is JSON, not Markdown: what a reader sees of it is what mkdocs-jupyter renders
(nbconvert's HTML), so it is indexed only from that rendering (``render``, then
``rendered_chunks``), at the URL and heading ids the built page has. Where nothing renders
it (a notes vault, a site without the plugin or without it installed, ``render: false``)
it is skipped with the reason: the walk dropped notebooks without a word, and questions
only a notebook answered came back as coverage gaps.

nbconvert's page is ~620 KB of inlined CSS and JavaScript around a few KB of cells, with
"In [1]:" prompts, a hidden copy of each code cell for the copy button and a pilcrow in
each heading; ``readable`` keeps the cells: Markdown cells as rendered, code cells as
fenced code in the notebook's language, and text outputs up to ``MAX_OUTPUT`` characters.
"""

from __future__ import annotations

import html
import re

from kb_qa.ingest import render_config
from kb_qa.ingest.site import Site
from kb_qa.settings import Settings

SUFFIX = ".ipynb"
PLUGIN = "mkdocs-jupyter"
# A text output longer than this (a training log, a long traceback) is left out: a reader
# scrolls past it, and its words would outweigh the cell's prose in search.
MAX_OUTPUT = 2000

_WRAPPER = 'class="jupyter-wrapper"'
_NOISE = re.compile(
    r"<style\b.*?</style>|<script\b.*?</script>|<!--.*?-->|<svg\b.*?</svg>"
    # the copy button, and the cell's source again (hidden, for the button to copy)
    r'|<div class="zeroclipboard-container">.*?</clipboard-copy>\s*</div>'
    r'|<div class="clipboard-copy-txt"[^>]*>.*?</div>'
    r'|<div class="jp-(?:Input|Output)Prompt[^"]*"[^>]*>[^<]*</div>'  # "In [1]:", "Out[1]:"
    r'|<a class="anchor-link"[^>]*>.*?</a>',  # the pilcrow after each heading
    re.S,
)
# A code cell's input as Pygments highlighted it: "hl-python" names its language.
_CODE = re.compile(
    r'<div class="highlight-ipynb hl-([\w+-]+)[^"]*">\s*<pre>(.*?)</pre>\s*</div>', re.S
)
_TEXT_OUTPUT = re.compile(r"(<div class=\"jp-RenderedText[^>]*>\s*)<pre>(.*?)</pre>", re.S)
_TAG = re.compile(r"<[^>]+>")


def is_notebook(path: str) -> bool:
    """Whether a file (by its name) is a Jupyter notebook."""
    return path.lower().endswith(SUFFIX)


def not_indexed(site: Site, settings: Settings) -> str:
    """Why the notebooks of ``site`` cannot be indexed, or "" when they are (an MkDocs site
    rendered with mkdocs-jupyter installed)."""
    if not site.is_mkdocs:
        return (
            "Jupyter notebook: kb-qa reads only Markdown in a notes vault (it indexes "
            "notebooks on an MkDocs site that publishes them with mkdocs-jupyter); export "
            "it to Markdown (jupyter nbconvert --to markdown) to index it"
        )
    config = render_config.config_file(site, settings)
    if config is None:
        if site.generator != "mkdocs":
            return (
                f"Jupyter notebook: kb-qa indexes notebooks only on an MkDocs site with the "
                f"{PLUGIN} plugin, not on a {site.generator or 'this'} site; export it to "
                "Markdown (jupyter nbconvert --to markdown) to index it"
            )
        return (
            "Jupyter notebook: kb-qa indexes it as the site renders it, and render is off "
            "(render: false, KBQA_RENDER=false): turn it on to index it (it runs the site's "
            "hooks and plugins, as mkdocs build does)"
        )
    try:
        inputs = render_config.site_inputs(config)
    except Exception:  # noqa: BLE001 - the render reports the config; the notebooks wait
        return ""
    names = {name.split("/", 1)[-1] for name, _ in inputs.plugins}
    if PLUGIN not in names:
        return (
            f"Jupyter notebook, which the site does not publish: {site.config_name} lists no "
            f"{PLUGIN} plugin (add it to publish the notebook and index it)"
        )
    _, missing = render_config.plugins_to_run(inputs.plugins, inputs.theme, settings.skip_plugins)
    if any(name.split("/", 1)[-1] == PLUGIN for name in missing):
        return (
            f"Jupyter notebook: the site's {PLUGIN} plugin is not installed where kb-qa runs "
            f"(pip install {PLUGIN} to index it)"
        )
    if PLUGIN in settings.skip_plugins:
        return f"Jupyter notebook: skip_plugins leaves out {PLUGIN}, which renders it"
    return ""


class NotRendered(ValueError):
    """A notebook whose page the site did not render: there is no Markdown to read."""

    def __init__(self) -> None:
        super().__init__(
            "a Jupyter notebook is indexed only as the site renders it: fix what stops it "
            "rendering (mkdocs build shows it too), then index again"
        )


def readable(content: str) -> str:
    """A page mkdocs-jupyter rendered, as its cells: no inlined CSS or JavaScript, no
    prompts, code as ``<pre><code class="language-…">`` (fenced code once converted), long
    text outputs left out. Any other page is returned as it is."""
    if _WRAPPER not in content:
        return content
    content = _NOISE.sub("", content)
    content = _CODE.sub(_code, content)
    return _TEXT_OUTPUT.sub(_output, content)


def _code(match: re.Match[str]) -> str:
    code = _TAG.sub("", match.group(2))  # Pygments' spans; the text stays escaped
    return f'<pre><code class="language-{match.group(1)}">{code}</code></pre>'


def _output(match: re.Match[str]) -> str:
    text = match.group(2)
    if len(html.unescape(_TAG.sub("", text))) > MAX_OUTPUT:
        return match.group(1)
    return f"{match.group(1)}<pre>{text}</pre>"
