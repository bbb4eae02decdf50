"""Versioned sites (mike): the version folder a link from outside the site opens.

``mike deploy 2.0 latest`` publishes each version of a site in its own folder (``/2.0/``,
``/latest/``); the site's root only redirects its home page to the default version, so
``https://docs.example.com/guides/retries/`` is a 404. The widget opens a citation under
the version its reader is on (it maps the index's address onto the page's own root), but a
link printed outside the site (``kb-qa ask``, ``kb-qa search``, the MCP tools, the insights
report) has no such page: it must name a version. The one a site names is the mike
plugin's ``canonical_version`` (what mike itself puts in ``site_url``), else the version
selector's ``extra.version.default`` (Material for MkDocs, Zensical), which is the version
the site's root redirects to. Each version is answered by its own server, run from that
version's checkout, and its operator names the version it publishes (the ``site_version``
setting), which wins: a server of 1.0 printed links to /latest/, another version's text.

The tree mike publishes (its gh-pages branch) holds ``versions.json`` at its root, listing
each version's folder and its aliases (``published_versions``): ``kb-qa init`` wires each
version folder as a site of its own.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import quote

from kb_qa.errors import ConfigError, VaultError
from kb_qa.ingest import zensical
from kb_qa.ingest.docusaurus_config import read_listing

__all__ = ["Published", "link_base", "published_versions", "version_folder"]
VERSIONS_FILE = "versions.json"  # what mike writes at the root of the tree it publishes


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


def link_base(site_url: str, config: Mapping[str, Any], version: str = "") -> str:
    """``site_url`` with a version folder (the address links from outside the site start
    with): ``version``, the one this checkout publishes (the ``site_version`` setting), else
    that of ``version_folder``; ``site_url`` itself when there is none."""
    folder = version.strip("/ ") or version_folder(config)
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


@dataclass(frozen=True)
class Published:
    """One version in the tree mike publishes: its folder and its aliases' folders (each a
    copy of the version's pages, a symlink to its folder, or pages that redirect there)."""

    version: str
    aliases: tuple[str, ...] = ()


def published_versions(root: Path) -> list[Published]:
    """The versions of the mike tree at ``root``, as its ``versions.json`` lists them (newest
    first, as mike writes it); [] when ``root`` is no such tree: no ``versions.json``, or
    one that is not mike's list (another tool's file of that name), or none of the version
    folders it names is there."""
    try:
        data = read_listing(root, VERSIONS_FILE)
    except VaultError as exc:  # a pipe hung `kb-qa init`; a link out of the tree was read
        raise ConfigError(
            f"{root / VERSIONS_FILE} is not read: {exc}. mike writes it to list the versions "
            "of the site; replace it with mike's file (or remove it if the site has none), "
            "then run kb-qa init again."
        ) from None
    try:
        listed = json.loads(data) if data is not None else None
    except ValueError:
        return []
    if not isinstance(listed, list):
        return []
    found = []
    for entry in listed:
        version = entry.get("version") if isinstance(entry, dict) else None
        if not isinstance(version, str) or not _folder_in(root, version):
            continue
        aliases = entry.get("aliases") if isinstance(entry.get("aliases"), list) else []
        # An alias names a folder as a version does: "../outside" planned edits out of the
        # tree, "." edits of every page twice
        kept = (a for a in aliases if isinstance(a, str) and _folder_in(root, a))
        found.append(Published(version, tuple(kept)))
    return found


def _folder_in(root: Path, name: str) -> bool:
    """Whether ``name`` is one folder right inside ``root`` (not a path that leads out)."""
    return bool(name) and "/" not in name and name not in (".", "..") and (root / name).is_dir()
