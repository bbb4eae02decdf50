"""The URLs of a Zensical blog's posts, and which posts its build leaves out.

Zensical's blog plugin (``[project.plugins.blog]``, Material's blog as Zensical builds it)
publishes ``docs/blog/posts/hello.md`` at ``blog/2024/03/01/hello-post/``: the post's date
and a slug of its title (or its ``slug``), not its file's path, and leaves posts with
``draft: true`` out of the build. kb-qa indexes a Zensical site from its Markdown files, so
it works both out here, with the plugin's defaults and the options that change them
(``blog_dir``, ``post_dir``, ``post_url_format`` with ``{date}``, ``{slug}``, ``{file}`` and
``{categories}``, ``post_url_date_format`` with ``yyyy``, ``MM`` and ``dd``,
``post_slugify_separator``, ``draft``), as checked against a real ``zensical build``.
"""

from __future__ import annotations

import datetime as dt
import posixpath
import re
from dataclasses import dataclass
from typing import Any

import yaml

from kb_qa.ingest import zensical

_H1 = re.compile(r"^#[ \t]+(.+?)[ \t]*#*[ \t]*$", re.MULTILINE)
_ATTRS = re.compile(r"\s*\{[^}]*\}\s*$")
_DATE_TOKENS = {"yyyy": "%Y", "MM": "%m", "dd": "%d"}
DRAFT = "a draft blog post (draft: true): `zensical build` leaves it out"


@dataclass(frozen=True)
class Blog:
    """The blog plugin's settings that decide where posts are published."""

    blog_dir: str = "blog"
    post_dir: str = "blog/posts"
    url_format: str = "{date}/{slug}"
    date_format: str = "yyyy/MM/dd"
    separator: str = "-"
    drafts_built: bool = False

    def is_post(self, doc_path: str) -> bool:
        return doc_path.startswith(self.post_dir.rstrip("/") + "/")

    def post_url(self, meta: dict[str, Any], body: str, title: str, stem: str) -> str | None:
        """The post's path under the site root without the page suffix (None: not known)."""
        date = meta.get("date")
        if isinstance(date, dict):
            date = date.get("created")
        if not isinstance(date, (dt.date, dt.datetime)):
            return None
        date_text = self.date_format
        for token, code in _DATE_TOKENS.items():
            date_text = date_text.replace(token, date.strftime(code))
        if re.search(r"[A-Za-z]", date_text):
            return None  # a date token not known here
        slug = str(meta.get("slug") or "") or self._slug(title or _first_h1(body))
        categories = meta.get("categories") or []
        if not isinstance(categories, list):
            categories = [categories]
        values = {
            "date": date_text,
            "slug": slug,
            "file": stem,
            "categories": "/".join(self._slug(str(c)) for c in categories),
        }
        try:
            path = self.url_format.format(**values)
        except (KeyError, IndexError, ValueError):
            return None
        # An empty {categories} leaves no empty folder: "{categories}/{slug}" -> "slug".
        path = "/".join(part for part in path.split("/") if part)
        return posixpath.normpath(posixpath.join(self.blog_dir, path))

    def _slug(self, text: str) -> str:
        from pymdownx.slugs import slugify

        return str(slugify(case="lower")(text, self.separator))


def blog_of(config: dict[str, Any]) -> Blog | None:
    """The blog plugin's settings in a Zensical config (None when it is not on)."""
    options = zensical.plugin_options(config, "blog")
    if options is None:
        return None
    blog_dir = str(options.get("blog_dir", "blog")).strip("/") or "."
    post_dir = str(options.get("post_dir", "{blog}/posts")).format(blog=blog_dir)
    return Blog(
        blog_dir=blog_dir,
        post_dir=posixpath.normpath(post_dir),
        url_format=str(options.get("post_url_format", "{date}/{slug}")),
        date_format=str(options.get("post_url_date_format", "yyyy/MM/dd")),
        separator=str(options.get("post_slugify_separator", "-")),
        drafts_built=bool(options.get("draft", False)),
    )


def post_path(blog: Blog, text: str, title: str, body_start: int, stem: str) -> str | None:
    """Where the build publishes a post of ``blog`` (its path under the site root, without
    the page's suffix): "" when that is not known here, None for a draft the build leaves
    out. ``body_start`` is where the front matter of ``text`` ends; ``stem`` the file's
    name without its suffix."""
    block = "\n".join(text[:body_start].splitlines()[1:-1])
    try:
        meta = yaml.safe_load(block) if block.strip() else {}
    except yaml.YAMLError:
        meta = {}
    meta = meta if isinstance(meta, dict) else {}
    if meta.get("draft") is True and not blog.drafts_built:
        return None
    return blog.post_url(meta, text[body_start:], title, stem) or ""


def _first_h1(body: str) -> str:
    match = _H1.search(body)
    return _ATTRS.sub("", match.group(1)) if match else ""
