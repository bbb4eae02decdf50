"""What a rendering of an MkDocs site depends on: its config file, hooks and plugins.

``inputs_key`` names them (a hook edited or a plugin installed renders every page
differently, so the index's fingerprint includes it); ``plugins_to_run`` is the site's
plugin list without the ones that are not installed and the ``SKIPPED_PLUGINS``, which only
shape the built output or fetch from the network.
"""

from __future__ import annotations

import contextlib
import hashlib
import logging
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from kb_qa.ingest.config_files import YAML_SUFFIXES
from kb_qa.ingest.mkdocs_yaml import read_config
from kb_qa.ingest.site import Site
from kb_qa.settings import Settings

log = logging.getLogger(__name__)


# Plugins whose work is the built output (minify, feeds, redirects, social cards, offline
# bundles), that fetch from the network (privacy, social, git hosting APIs), run git per page
# or build other projects: they change no page's Markdown, headings or URL.
SKIPPED_PLUGINS = frozenset(
    {
        "minify",
        "social",
        "privacy",
        "optimize",
        "offline",
        "info",
        "projects",
        "typeset",
        "rss",
        "redirects",
        "htmlproofer",
        "git-revision-date",
        "git-revision-date-localized",
        "git-committers",
        "git-authors",
        "git-latest-changes",
        "glightbox",
        "print-site",
        "with-pdf",
        "pdf-export",
        "exporter",
        "llmstxt",
        "kb-qa",
    }
)


# Plugins a build runs that kb-qa cannot, and what is not indexed without them. The
# monorepo plugin copies the site's docs into a temporary folder and adds its sub-projects'
# pages there: none is a file of the vault that kb-qa could cite, watch or highlight, and a
# QA pass's monorepo site was indexed with no page at all ("the build leaves it out").
# Without it, the site's own pages are indexed.
UNREAD_PLUGINS = {
    "monorepo": (
        "the monorepo plugin is not run: the pages of the sub-projects its nav includes "
        "('!include .../mkdocs.yml') are not indexed, only this site's own docs_dir"
    ),
}


def fingerprint(root: Path, config_file: Path, hooks: Sequence[str]) -> str:
    """What besides a page's own file changes its rendering: the config and hook files
    (named relative to the site, so that a site moved with its index stays current)."""
    digest = hashlib.sha1()
    for path in [config_file, *(root / h for h in hooks)]:
        name = path.relative_to(root) if path.is_relative_to(root) else path
        digest.update(str(name).encode())
        with contextlib.suppress(OSError):
            digest.update(path.read_bytes())
    return digest.hexdigest()


def config_file(site: Site, settings: Settings) -> Path | None:
    """The ``mkdocs.yml`` to render the site with, or None (not rendered: not an MkDocs
    site, a Zensical one, or ``render`` is off). ProperDocs' properdocs.yml is rendered
    too, and a YAML config ``config_file`` names (``mkdocs build -f site.yml``)."""
    if not settings.render or site.generator != "mkdocs":
        return None
    if not site.config_name.lower().endswith(YAML_SUFFIXES):
        return None
    return site.root / site.config_name


def inputs_key(site: Site, settings: Settings) -> str:
    """What decides every page's rendering besides its own file: the config, the hooks'
    code and which of its plugins are installed ("" when the site is not rendered)."""
    path = config_file(site, settings)
    if path is None:
        return ""
    try:
        inputs = site_inputs(path)
    except Exception:  # noqa: BLE001 - reported by the render itself
        return "unreadable"
    _, missing = plugins_to_run(inputs.plugins, inputs.theme, settings.skip_plugins)
    return fingerprint(site.root, path, inputs.hooks) + "|" + ",".join(sorted(missing))


@dataclass(frozen=True)
class SiteInputs:
    """What ``mkdocs.yml`` says about the code a build runs, read without running it."""

    hooks: tuple[str, ...]
    plugins: tuple[tuple[str, object], ...]  # (name, options) as written
    theme: str
    extensions: tuple[object, ...] = ()  # markdown_extensions entries as written
    theme_options: dict[str, object] | None = None  # ``theme:`` when it is a mapping


def site_inputs(config_file: Path) -> SiteInputs:
    """The hooks, plugins and theme name of a ``mkdocs.yml``."""
    config = read_config(config_file)
    if not isinstance(config, dict):
        raise ValueError("expected a mapping of settings")
    theme = config.get("theme")
    theme_name = theme.get("name") if isinstance(theme, dict) else theme
    return SiteInputs(
        hooks=tuple(str(h) for h in config.get("hooks") or [] if isinstance(h, str)),
        plugins=tuple(_plugin_entries(config.get("plugins"))),
        theme=str(theme_name or ""),
        extensions=tuple(config.get("markdown_extensions") or []),
        theme_options=dict(theme) if isinstance(theme, dict) else None,
    )


def entry_key(entry: object) -> str:
    """The name of a ``markdown_extensions`` entry ("toc", or the key of ``{toc: {...}}``)."""
    if isinstance(entry, dict) and len(entry) == 1:
        return str(next(iter(entry)))
    return str(entry)


def _plugin_entries(plugins: object) -> list[tuple[str, object]]:
    items: list[tuple[str, object]] = []
    if isinstance(plugins, dict):
        return [(str(k), v) for k, v in plugins.items()]
    for item in plugins if isinstance(plugins, list) else []:
        if isinstance(item, str):
            items.append((item, None))
        elif isinstance(item, dict) and len(item) == 1:
            name, options = next(iter(item.items()))
            items.append((str(name), options))
    return items


def _installed_plugins() -> set[str]:
    from importlib.metadata import entry_points

    return {ep.name for ep in entry_points(group="mkdocs.plugins")}


def plugins_to_run(
    entries: Sequence[tuple[str, object]],
    theme: str,
    skip: Sequence[str],
    notes: list[str] | None = None,
) -> tuple[list[object], list[str]]:
    """The plugins entry to load (as mkdocs.yml writes it) and the names not installed;
    what a plugin kb-qa does not run leaves out (``UNREAD_PLUGINS``) is added to ``notes``."""
    installed = _installed_plugins()
    keep: list[object] = []
    missing: list[str] = []
    skipped = SKIPPED_PLUGINS | set(skip)
    for name, options in entries:
        bare = name.split("/", 1)[-1]
        if name in skipped or bare in skipped:
            continue
        if bare in UNREAD_PLUGINS:
            if notes is not None:
                notes.append(UNREAD_PLUGINS[bare])
            continue
        if name not in installed and f"{theme}/{name}" not in installed:
            missing.append(name)
            continue
        keep.append({name: options} if options is not None else name)
    return keep, missing
