"""Versioned sites (mike): the version folder a link from outside the site opens.

``mike deploy 2.0 latest`` publishes each version of a site in its own folder (``/2.0/``,
``/latest/``); the site's root only redirects its home page to the default version, so
``https://docs.example.com/guides/retries/`` is a 404. The widget opens a citation under
the version its reader is on (it maps the index's address onto the page's own root), but a
link printed outside the site (``kb-qa ask``, ``kb-qa search``, the MCP tools, the insights
report) has no such page: it must name a version. The one a site names is the mike
plugin's ``canonical_version`` (what mike itself puts in ``site_url``), else the version
selector's ``extra.version.default`` (Material for MkDocs, Zensical), which is the version
the site's root redirects to.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any
from urllib.parse import quote

from kb_qa.ingest import zensical

__all__ = ["link_base", "version_folder"]


def version_folder(config: Mapping[str, Any]) -> str:
    """The folder of the version a link from outside the site opens ("" when the site is
    not versioned with mike or names no such version). ``config`` is the config file's
    mapping, or MkDocs' loaded config (its plugins loaded)."""
    mike = _mike_options(config)
    if mike is None and _selector(config).get("provider") != "mike":
        return ""
    canonical = (mike or {}).get("canonical_version")
    if isinstance(canonical, str) and canonical.strip("/ "):
        return canonical.strip("/ ")
    default = _selector(config).get("default")
    if isinstance(default, list):  # Material takes a list of aliases too: the first leads
        default = default[0] if default else ""
    return str(default).strip("/ ") if isinstance(default, str | int | float) else ""


def link_base(site_url: str, config: Mapping[str, Any]) -> str:
    """``site_url`` with the version folder of ``version_folder`` (the address links from
    outside the site start with); ``site_url`` itself when there is none."""
    folder = version_folder(config)
    if not site_url or not folder:
        return site_url
    return f"{site_url.rstrip('/')}/{quote(folder, safe='')}/"


def _mike_options(config: Mapping[str, Any]) -> Mapping[str, Any] | None:
    """The mike plugin's options when the site lists it (None otherwise)."""
    plugins = config.get("plugins")
    loaded = plugins.get("mike") if isinstance(plugins, Mapping) else None
    options = getattr(loaded, "config", None)
    if isinstance(options, Mapping):  # MkDocs' loaded plugin
        return options
    return zensical.plugin_options(dict(config), "mike")


def _selector(config: Mapping[str, Any]) -> Mapping[str, Any]:
    extra = config.get("extra")
    version = extra.get("version") if isinstance(extra, Mapping) else None
    return version if isinstance(version, Mapping) else {}
