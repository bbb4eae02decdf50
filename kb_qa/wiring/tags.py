"""The widget in a page and in a config: the drop-in <link> and <script> tags of a built
page, and the ``extra_javascript`` entry that shows a site is wired (``is_wired``).
"""

from __future__ import annotations

import html
import json
import re
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from kb_qa.wiring.options import (
    ASSET_DIR,
    CSS_PATH,
    EXTRA_KEY,
    LOADER_PATH,
    WidgetOptions,
    options_from,
)

TAG_RE = re.compile(r"<(?:link|script)\b[^>]*\bdata-kb-qa[^>]*>(?:</script>)?\n?")


def entry_path(entry: Any) -> str:
    """The path of an extra_javascript/extra_css entry (a string, or a mapping with path)."""
    if isinstance(entry, dict):
        return str(entry.get("path", ""))
    return str(getattr(entry, "path", entry))  # MkDocs' ExtraScriptValue has .path


def page_tags(
    page: str, options: WidgetOptions, base: str = "", carried: dict[str, Any] | None = None
) -> str:
    """The widget's <link> and <script> for a page at ``page`` (a path under the site root);
    from ``base``, the site root's path (``/docs/``), for a page served at any path (404).
    ``carried``: the options the page's kb-qa tags carry (``tag_options``), kept beside
    ``options``."""
    up = base or "../" * page.count("/")
    data: dict[str, Any] = {"endpoint": options.endpoint}
    # Without an endpoint, a page previewed on this machine calls `kb-qa serve` here; tags
    # that named no preview endpoint (the MkDocs plugin's) are not given one unasked.
    if carried is None or "preview_endpoint" in carried:
        data["preview_endpoint"] = options.preview_endpoint
    data["title"] = options.title
    data["suggested"] = list(options.suggested_questions)
    data["root"] = up or "./"
    # Options init does not set (the plugin's site_url, shortcut, placeholder, labels) stay:
    # re-wired, a page built by the plugin lost them all (its citations' absolute URLs were
    # no longer mapped to the site, its Ctrl+K became the default).
    data.update((k, v) for k, v in (carried or {}).items() if k not in data and k not in _OWN)
    return widget_tags(f"{up}{CSS_PATH}", f"{up}{ASSET_DIR}/kb-qa.js", data)


def widget_tags(css: str, js: str, options: dict[str, Any]) -> str:
    """The stylesheet and script tags that put the widget on a page, its options as JSON;
    the files' URLs carry their version (``kb_qa_widget.version``)."""
    from kb_qa_widget import version

    data = html.escape(json.dumps(options, ensure_ascii=False), quote=True)
    v = f"?v={version()}"
    return (
        f'<link rel="stylesheet" href="{html.escape(css + v)}" data-kb-qa>\n'
        f'<script src="{html.escape(js + v)}" defer data-kb-qa-options="{data}"></script>\n'
    )


_OPTIONS_ATTR = re.compile(r'\bdata-kb-qa-options="([^"]*)"')
# The options init sets itself from WidgetOptions and the page's place (never carried).
_OWN = frozenset({"endpoint", "preview_endpoint", "title", "suggested", "root"})


def tag_options(page: str) -> dict[str, Any] | None:
    """All the options a page's kb-qa tags carry, as written (None when it has none, or they
    cannot be read)."""
    for tag in TAG_RE.findall(page):
        if found := _OPTIONS_ATTR.search(tag):
            try:
                data = json.loads(html.unescape(found.group(1)))
            except ValueError:
                return None
            return data if isinstance(data, dict) else None
    return None


def options_of_tags(data: dict[str, Any]) -> WidgetOptions:
    """The widget options among those a page's tags carry (``tag_options``): ``kb-qa init``
    run again on a built site keeps what the first run set."""
    # The tag's names for extra.kb_qa's (a list of questions is "suggested" there)
    raw: dict[str, Any] = {
        k: data[k] for k in ("endpoint", "title", "preview_endpoint") if k in data
    }
    if isinstance(data.get("suggested"), list):
        raw["suggested_questions"] = data["suggested"]
    return options_from({EXTRA_KEY: raw}) or WidgetOptions()


def html_with_tags(page: str, tags: str) -> str:
    """``page`` with kb-qa's tags (and no older copy of them) at the end of <head>."""
    return inject(TAG_RE.sub("", page), tags)


# Where a page's head starts: after its doctype and <html>/<head> tags, any of them left out.
_HEAD_START = re.compile(
    r"\A\s*(?:<!doctype[^>]*>\s*)?(?:<html\b[^>]*>\s*)?(?:<head\b[^>]*>)?", re.I
)


def inject(page: str, tags: str) -> str:
    """Put the widget's tags at the end of <head>; in a page without ``</head>`` (HTML may
    leave it out, and minifiers do), where its head starts: before the doctype, the tags
    would put the page in quirks mode."""
    marker = page.find("</head>")
    if marker == -1:
        start = _HEAD_START.match(page)
        marker = start.end() if start else 0
    return page[:marker] + tags + page[marker:]


# --- is a site wired? ------------------------------------------------------------------------


def is_wired(extra_javascript: Iterable[Any]) -> bool:
    """Whether a site's extra_javascript loads the widget the way ``kb-qa init`` wires it."""
    return any(entry_path(e).lstrip("/").endswith(LOADER_PATH) for e in extra_javascript)


_LINKED = re.compile(r"""(?:href|src)=["'](/[^"'?#]*)""")


def root_path(page_html: str, root: Path) -> str:
    """The path a page served at any URL (a 404 page) reaches the site root by: the prefix
    its root-absolute links to the site's own files share ("" when none says: the page's
    links stay relative, as the site's own are)."""
    for link in _LINKED.findall(page_html):
        parts = link.split("/")
        for cut in range(1, len(parts)):
            rest = "/".join(parts[cut:])
            if rest and (root / rest).is_file():
                return "/".join(parts[:cut]) + "/"
    return ""
