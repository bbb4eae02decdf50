"""What Zensical does differently from MkDocs when it reads a site's configuration.

Zensical (``zensical build``) reads ``zensical.toml`` (its settings under ``[project]``) or
``mkdocs.yml``. For heading ids and URLs three things differ from MkDocs, all read from
Zensical 0.0.73's ``zensical/config.py``:

- without a ``markdown_extensions`` setting it renders with its own default set
  (``DEFAULT_EXTENSIONS`` below), not MkDocs' bare ``toc``/``tables``/``fenced_code``;
- its built-in extensions are ``toc`` and ``tables``, and ``pymdownx.superfences`` is added
  last when the site does not list it (instead of MkDocs' ``fenced_code``);
- in TOML, callables are written as strings (``emoji_generator = "module.func"``) or as
  ``{object = "module.func", kwds = {...}}`` (a ``slugify`` factory), and extensions may be
  nested tables (``[project.markdown_extensions.pymdownx.tabbed]``).

This module turns that into the MkDocs-style list that ``site.py`` already resolves. It does
not import Zensical: kb-qa reads a Zensical site without Zensical installed.
"""

from __future__ import annotations

import contextlib
import importlib
from pathlib import Path
from typing import Any

from kb_qa.errors import ConfigError
from kb_qa.ingest import safe_config

CONFIG_FILE = "zensical.toml"
BUILTIN_EXTENSIONS = ("toc", "tables")
FENCES = "pymdownx.superfences"

# Zensical's defaults for a site that does not set markdown_extensions (its config.py
# DEFAULT_MARKDOWN_EXTENSIONS); callables named as strings, resolved like the site's own.
DEFAULT_EXTENSIONS: dict[str, dict[str, Any]] = {
    "abbr": {},
    "admonition": {},
    "attr_list": {},
    "def_list": {},
    "footnotes": {},
    "md_in_html": {},
    "toc": {"permalink": True},
    "pymdownx.arithmatex": {"generic": True},
    "pymdownx.betterem": {},
    "pymdownx.caret": {},
    "pymdownx.details": {},
    "pymdownx.emoji": {
        "emoji_generator": "zensical.extensions.emoji.to_svg",
        "emoji_index": "zensical.extensions.emoji.twemoji",
    },
    "pymdownx.highlight": {
        "anchor_linenums": True,
        "line_spans": "__span",
        "pygments_lang_class": True,
    },
    "pymdownx.inlinehilite": {},
    "pymdownx.keys": {},
    "pymdownx.magiclink": {},
    "pymdownx.mark": {},
    "pymdownx.smartsymbols": {},
    "pymdownx.superfences": {"custom_fences": [{"name": "mermaid", "class": "mermaid"}]},
    "pymdownx.tabbed": {"alternate_style": True, "combine_header_slug": True},
    "pymdownx.tasklist": {"custom_checkbox": True},
    "pymdownx.tilde": {},
}

# Zensical ships copies of Material's emoji functions; Material's give the same HTML, and
# they are what is installed when Zensical is not.
_STAND_INS = {"zensical.extensions.emoji.": "material.extensions.emoji."}
_MATERIAL = "material.extensions"


def site_name(root: Path) -> str:
    """The ``site_name`` of ``root/zensical.toml`` ("" without one, or when it cannot be
    read; ``site.site_name`` reads mkdocs.yml's)."""
    config = root / CONFIG_FILE
    if not config.is_file():
        return ""
    try:
        return str(read_project(config).get("site_name") or "")
    except (ConfigError, OSError):
        return ""


def read_project(path: Path) -> dict[str, Any]:
    """The settings of a ``zensical.toml``: its ``[project]`` table, as plain Python values."""
    import tomlkit  # here, not at the top: only a Zensical site reads TOML
    import tomlkit.exceptions

    try:
        document = tomlkit.parse(path.read_text(encoding="utf-8", errors="replace"))
    except tomlkit.exceptions.TOMLKitError as exc:
        raise ConfigError(f"{path} is not valid TOML: {exc}. Fix the file and run again.") from exc
    config = document.unwrap()
    project = config.get("project", config)
    if not isinstance(project, dict):
        raise ConfigError(f"{path}: [project] must be a table of settings.")
    return project


def directory_urls(config: dict[str, Any]) -> bool:
    """``use_directory_urls`` as Zensical builds with it: its offline plugin (``[project.plugins.
    offline]``, on unless ``enabled = false``) turns it off, so that pages open from disk."""
    offline = plugin_options(config, "offline") is not None
    return bool(config.get("use_directory_urls", True)) and not offline


def plugin_options(config: dict[str, Any], name: str) -> dict[str, Any] | None:
    """The options of plugin ``name`` (or ``material/name``) when the config turns it on:
    ``[project.plugins.name]`` (a table), ``plugins = ["name"]`` or ``[{name = {...}}]``;
    None when it is absent, ``false`` or ``enabled = false``."""
    plugins = config.get("plugins")
    items: list[tuple[Any, Any]] = []
    if isinstance(plugins, dict):
        items = list(plugins.items())
    elif isinstance(plugins, list):
        for item in plugins:
            if isinstance(item, str):
                items.append((item, {}))
            elif isinstance(item, dict) and len(item) == 1:
                items.append(next(iter(item.items())))
    found: dict[str, Any] | None = None
    for key, value in items:
        if str(key).removeprefix("material/") != name:
            continue
        if value is False or (isinstance(value, dict) and value.get("enabled", True) is False):
            found = None
        else:
            found = dict(value) if isinstance(value, dict) else {}
    return found


def extension_entries(config: dict[str, Any]) -> list[Any]:
    """The site's markdown_extensions as MkDocs writes them (names, or one-key mappings),
    with Zensical's defaults when the setting is absent and superfences added last."""
    value = config.get("markdown_extensions", DEFAULT_EXTENSIONS)
    if value is None:
        value = []
    if isinstance(value, dict):
        items = list(_hoist(value).items())
    elif isinstance(value, list):
        items = []
        for item in value:
            if isinstance(item, str):
                items.append((item, {}))
            elif isinstance(item, dict) and len(item) == 1:
                name, cfg = next(iter(item.items()))
                items.append((str(name), cfg))
            else:
                items.append(("", item))  # site.py warns about it
    else:
        raise ConfigError(
            f"markdown_extensions must be a list or a table, not {type(value).__name__}."
        )
    if FENCES not in {name for name, _ in items}:
        items.append((FENCES, {}))
    return [({name: cfg or {}} if name else cfg) for name, cfg in items]


def _hoist(value: dict[str, Any]) -> dict[str, Any]:
    """``pymdownx = {tabbed = {...}}`` (unquoted dotted keys in TOML) -> ``pymdownx.tabbed``."""
    result = dict(value)
    for prefix in ("pymdownx", "zensical"):
        nested = result.pop(prefix, None)
        if not isinstance(nested, dict):
            if nested is not None:
                result[prefix] = nested
            continue
        for name, cfg in nested.items():
            deeper = prefix == "pymdownx" and name == "blocks"
            deeper = deeper or (prefix == "zensical" and name == "extensions")
            if deeper and isinstance(cfg, dict):
                for block, block_cfg in cfg.items():
                    result[f"{prefix}.{name}.{block}"] = block_cfg
            else:
                result[f"{prefix}.{name}"] = cfg
    return result


def resolve_callables(configs: dict[str, dict[str, Any]]) -> list[str]:
    """Turn the callables Zensical accepts as strings or ``{object, kwds}`` into objects.

    Only functions of Python-Markdown, pymdownx, Material and Zensical extensions are
    imported, and only ``safe_config.FACTORIES`` are called: a site's configuration runs no
    code of its own (kb-qa reads a Zensical site from its files). Any other is left out, so
    the extension uses its default (Python-Markdown's slugify, say), with a warning; so is
    one that cannot be imported. Returns the warnings.
    """
    problems: list[str] = []

    def resolve(value: Any, default: str, instead: str) -> Any:
        symbol = value if isinstance(value, str) else str(value.get("object") or default)
        allowed = (
            safe_config.callable_allowed(symbol)
            if isinstance(value, str)
            else safe_config.factory_allowed(symbol)
        )
        if not allowed:
            problems.append(
                f"{CONFIG_FILE}: not using {value!r}: kb-qa imports only functions of "
                "Python-Markdown, pymdownx, Material and Zensical extensions, and calls only "
                f"{', '.join(sorted(safe_config.FACTORIES))}; {instead} is used instead"
            )
            return _UNUSED
        try:
            if isinstance(value, str):
                return _resolve(value)
            return _resolve(symbol)(**dict(value.get("kwds") or {}))
        except (ImportError, AttributeError, ValueError, TypeError) as exc:
            problems.append(
                f"{CONFIG_FILE}: cannot use {value!r} ({exc}); install the package that "
                "provides it, or fix the name"
            )
        return value

    def settle(
        mapping: dict[str, Any], key: str, default: str, instead: str = "the extension's default"
    ) -> None:
        value = resolve(mapping[key], default, instead)
        if value is _UNUSED:
            del mapping[key]
        else:
            mapping[key] = value

    emoji = configs.get("pymdownx.emoji", {})
    for key in ("emoji_generator", "emoji_index"):
        value = emoji.get(key)
        if callable(value) and value.__module__.startswith(_MATERIAL):
            # Zensical reads mkdocs.yml with Material's emoji functions swapped for its own,
            # whose icons keep their <title> (part of the heading text, so of its id).
            module = value.__module__.replace(_MATERIAL, "zensical.extensions")
            value = f"{module}.{value.__name__}"
            with contextlib.suppress(ImportError, AttributeError, ValueError):
                emoji[key] = _resolve(value)
        elif isinstance(value, str):
            settle(emoji, key, "")
    for name in ("toc", "pymdownx.tabbed", "pymdownx.blocks.tab"):
        cfg = configs.get(name, {})
        if isinstance(cfg.get("slugify"), dict):
            settle(cfg, "slugify", "pymdownx.slugs.slugify", "the default slugify")
    fences = configs.get(FENCES, {}).get("custom_fences", [])
    inline = configs.get("pymdownx.inlinehilite", {}).get("custom_inline", [])
    for entry in [*fences, *inline]:
        if not isinstance(entry, dict):
            continue
        for key in ("format", "validator"):
            if isinstance(entry.get(key), (str, dict)):
                settle(entry, key, "pymdownx.superfences.fence_code_format")
    return problems


_UNUSED = object()


def _resolve(symbol: str) -> Any:
    """Import ``module.name``; Zensical's own emoji functions fall back to Material's."""
    candidates = [symbol]
    for prefix, stand_in in _STAND_INS.items():
        if symbol.startswith(prefix):
            candidates.append(stand_in + symbol.removeprefix(prefix))
    for candidate in candidates[:-1]:
        module_name, _, attr = candidate.rpartition(".")
        try:
            return getattr(importlib.import_module(module_name), attr)
        except (ImportError, AttributeError, ValueError):
            continue
    module_name, _, attr = candidates[-1].rpartition(".")
    return getattr(importlib.import_module(module_name), attr)


_GENERATOR_META = '<meta name="generator" content="zensical'


def built_unannounced(root: Path, config: dict[str, Any]) -> list[str]:
    """A warning when the ``mkdocs.yml`` site at ``root`` was last built by Zensical (its
    built home page says so) while kb-qa reads it by MkDocs' rules: their heading ids
    differ (Zensical turns on ``attr_list``: ``## Setup {#my-id}`` is ``#my-id`` there,
    ``#setup-my-id`` for MkDocs), so citations would open ids the pages do not have."""
    built = (root / str(config.get("site_dir") or "site") / "index.html").resolve()
    if not built.is_relative_to(root.resolve()) or not built.is_file():
        return []
    with contextlib.suppress(OSError), built.open("rb") as page:
        if _GENERATOR_META.encode() in page.read(16384).lower():
            return [
                f"{built.relative_to(root.resolve())} was built by Zensical, and this site's "
                "mkdocs.yml is read by MkDocs' rules: set KBQA_GENERATOR=zensical so that "
                "citations open the heading ids Zensical gives"
            ]
    return []
