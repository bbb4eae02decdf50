"""Reading a site's configuration without running the site's code.

MkDocs reads ``mkdocs.yml`` with PyYAML's full loader, so ``!!python/object/apply:os.system``
in it runs a command, and it imports every ``markdown_extensions`` entry by name. kb-qa does
that only when it renders the site (``render`` on: the site is trusted, as ``mkdocs build``
trusts it). With ``render`` off, and always for ``zensical.toml`` (Zensical sites are indexed
from their files), the configuration is read here instead:

- ``load_yaml`` uses ``ConfigLoader``, a ``yaml.SafeLoader`` that understands MkDocs' own
  tags (``!ENV``, ``!relative``) and the Python tags real sites write for Markdown: a
  ``!!python/name:`` of a function of Python-Markdown, pymdownx, Material or Zensical
  (``material.extensions.emoji.twemoji``) and a ``!!python/object/apply:`` of a slugify
  factory (``pymdownx.slugs.slugify``). Any other ``!!python/...`` tag is a ``ConfigError``
  naming the file, the line and the tag;
- ``extension_allowed`` admits only the extensions of those packages (by module), minus
  Zensical's that run the project's own code or read files kb-qa does not guard; the
  others are skipped by the caller, never imported;
- ``callable_allowed`` and ``factory_allowed`` decide the same for the functions Zensical
  names as strings or ``{object = ..., kwds = ...}`` in ``zensical.toml``.

``check_inherit`` (used when the site is rendered) refuses an ``INHERIT:`` chain that leads
out of the vault before MkDocs reads any of it: an inherited file is read with MkDocs'
loader, so its tags would run.
"""

from __future__ import annotations

import importlib
import logging
import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml
import yaml.nodes

from kb_qa.errors import ConfigError

log = logging.getLogger(__name__)

# Python-Markdown's own extensions by their short names (its ``markdown.extensions`` entry
# points), as sites write them.
BUILTIN_NAMES = frozenset(
    {
        "abbr",
        "admonition",
        "attr_list",
        "codehilite",
        "def_list",
        "extra",
        "fenced_code",
        "footnotes",
        "legacy_attrs",
        "legacy_em",
        "md_in_html",
        "meta",
        "nl2br",
        "sane_lists",
        "smarty",
        "tables",
        "toc",
        "wikilinks",
    }
)
# Packages whose extensions may be imported for a site kb-qa does not trust.
EXTENSION_PACKAGES = ("markdown.extensions", "pymdownx", "material", "mkdocs", "zensical")
# Zensical's extensions that run the project's code (macros loads its main.py, mkdocstrings
# imports the documented code) or read files and data outside the snippet guard.
UNSAFE_MODULES = (
    "zensical.extensions.macros",
    "zensical.extensions.mkdocstrings",
    "zensical.extensions.include_markdown",
    "zensical.extensions.table_reader",
    "zensical.extensions.markdownextradata",
)
# Modules whose functions a configuration may name (emoji indexes, fence formats, slugify)
CALLABLE_PACKAGES = (
    "markdown.extensions",
    "pymdownx",
    "material.extensions",
    "zensical.extensions",
)
# Functions a configuration may call, with the keywords it gives, to make another function
FACTORIES = frozenset({"pymdownx.slugs.slugify"})

PYTHON_TAG = "tag:yaml.org,2002:python/"
# What the user can do about a refused tag or extension, in every message.
TRUST_HINT = "turn rendering on (render: true, KBQA_RENDER=1) only if you trust this site's code"


def _within(module: str, packages: tuple[str, ...]) -> bool:
    return any(module == p or module.startswith(p + ".") for p in packages)


def _safe_module(module: str, packages: tuple[str, ...]) -> bool:
    return _within(module, packages) and not _within(module, UNSAFE_MODULES)


def extension_allowed(name: str) -> bool:
    """Whether a ``markdown_extensions`` entry may be imported for an untrusted site:
    Python-Markdown's short names, and modules of ``EXTENSION_PACKAGES`` (``module:Class``
    too), except ``UNSAFE_MODULES``."""
    if name in BUILTIN_NAMES:
        return True
    module = name.split(":", 1)[0]
    return _safe_module(module, EXTENSION_PACKAGES)


def callable_allowed(symbol: str) -> bool:
    """Whether ``module.function`` may be imported to hand it to an extension."""
    module, _, attr = symbol.rpartition(".")
    return bool(module and attr) and _safe_module(module, CALLABLE_PACKAGES)


def factory_allowed(symbol: str) -> bool:
    """Whether ``module.function`` may be called (with the site's keywords) to make one."""
    return symbol in FACTORIES


def import_symbol(symbol: str) -> Any:
    """``module.name`` imported (callers check ``callable_allowed`` first)."""
    module, _, attr = symbol.rpartition(".")
    return getattr(importlib.import_module(module), attr)


@dataclass(frozen=True)
class RelativeDir:
    """MkDocs' ``!relative`` (the folder of the page being rendered) and ``!relative
    $docs_dir/...``: a folder the loader cannot know (``$config_dir`` it resolves)."""

    base: str  # "docs_dir" or "page"
    suffix: str = ""


class ConfigLoader(yaml.SafeLoader):
    """A ``yaml.SafeLoader`` for ``mkdocs.yml``: MkDocs' ``!ENV`` and ``!relative``, the
    allowlisted Python tags (see the module's docstring); other Python tags are refused and
    other unknown tags read as ``None`` (as kb-qa reads tags of modules not installed)."""

    path: Path = Path("mkdocs.yml")

    def refuse(self, node: yaml.nodes.Node, what: str) -> ConfigError:
        line = node.start_mark.line + 1
        return ConfigError(
            f"{self.path}, line {line}: {node.tag.replace('tag:yaml.org,2002:', '!!')} would "
            f"{what}, and kb-qa runs no code from a site it does not render (render: false, "
            "KBQA_RENDER=0). Remove the tag from the file, or "
            f"{TRUST_HINT}."
        )


def _construct_env(loader: ConfigLoader, node: yaml.nodes.Node) -> Any:
    """``!ENV VAR`` or ``!ENV [VAR, OTHER, default]``, as MkDocs (pyyaml-env-tag) reads it:
    the first variable set wins, its value typed like YAML would type it."""
    default = None
    if isinstance(node, yaml.nodes.ScalarNode):
        names = [loader.construct_scalar(node)]
    elif isinstance(node, yaml.nodes.SequenceNode):
        children = node.value
        if len(children) > 1:
            default = loader.construct_object(children[-1], deep=True)
            children = children[:-1]
        names = [loader.construct_scalar(child) for child in children]
    else:
        raise yaml.constructor.ConstructorError(
            None, None, f"expected a scalar or sequence node, but found {node.id}", node.start_mark
        )
    for name in names:
        if str(name) in os.environ:
            value = os.environ[str(name)]
            tag = loader.resolve(yaml.nodes.ScalarNode, value, (True, False))
            return loader.construct_object(yaml.nodes.ScalarNode(tag, value))
    return default


def _construct_relative(loader: ConfigLoader, node: yaml.nodes.ScalarNode) -> Any:
    """``!relative $config_dir/sub`` -> that folder; other forms -> ``RelativeDir``."""
    value = str(loader.construct_scalar(node) or "")
    prefix, _, suffix = value.partition("/")
    if prefix == "$config_dir":
        return str(loader.path.parent / suffix)
    if prefix == "$docs_dir":
        return RelativeDir("docs_dir", suffix)
    return RelativeDir("page", value)


def _construct_python(loader: ConfigLoader, suffix: str, node: yaml.nodes.Node) -> Any:
    """The Python tags an untrusted site may use; ``ConfigError`` for every other."""
    kind, _, symbol = suffix.partition(":")
    if kind == "tuple" and isinstance(node, yaml.nodes.SequenceNode):
        return tuple(loader.construct_sequence(node, deep=True))
    if kind == "name":
        if not callable_allowed(symbol):
            raise loader.refuse(node, f"import {symbol}")
        return _imported(loader, symbol)
    if kind == "object/apply":
        if not factory_allowed(symbol):
            raise loader.refuse(node, f"call {symbol}")
        args: list[Any] = []
        kwds: dict[str, Any] = {}
        if isinstance(node, yaml.nodes.SequenceNode):
            args = list(loader.construct_sequence(node, deep=True))
        elif isinstance(node, yaml.nodes.MappingNode):
            value = loader.construct_mapping(node, deep=True)
            if set(value) - {"args", "kwds"}:
                raise loader.refuse(node, f"set the state of what {symbol} returns")
            args = list(value.get("args") or [])
            kwds = dict(value.get("kwds") or {})
        factory = _imported(loader, symbol)
        return factory(*args, **kwds) if factory is not None else None
    if kind == "module":
        raise loader.refuse(node, f"import {symbol}")
    raise loader.refuse(node, "make a Python object")


def _imported(loader: ConfigLoader, symbol: str) -> Any:
    try:
        return import_symbol(symbol)
    except (ImportError, AttributeError) as exc:
        # A package that is not installed: the extension using it fails to load and is
        # reported; the rest of the config is read.
        log.warning("%s: cannot import %s (%s); ignoring that value", loader.path, symbol, exc)
        return None


ConfigLoader.add_constructor("!ENV", _construct_env)
ConfigLoader.add_constructor("!relative", _construct_relative)
ConfigLoader.add_multi_constructor(PYTHON_TAG, _construct_python)
ConfigLoader.add_multi_constructor("", lambda loader, suffix, node: None)


class ProbeLoader(ConfigLoader):
    """``ConfigLoader`` that reads every Python tag as ``None``, importing nothing: for a
    setting or two (``site_name``, ``INHERIT``) of any site, trusted or not."""


ProbeLoader.add_multi_constructor(PYTHON_TAG, lambda loader, suffix, node: None)


def _construct_env_default(loader: ConfigLoader, node: yaml.nodes.Node) -> Any:
    """``!ENV`` read without the environment: its default (``!ENV [VAR, default]``), the
    file's own words, else None."""
    if isinstance(node, yaml.nodes.SequenceNode) and len(node.value) > 1:
        return loader.construct_object(node.value[-1], deep=True)
    return None


class NameLoader(ProbeLoader):
    """``ProbeLoader`` that does not read the environment: for ``site_name``, which names
    the index and which ``/api/health`` shows to every client. ``site_name: !ENV
    OPENAI_API_KEY`` in a vault under review must not publish the reviewer's key."""


NameLoader.add_constructor("!ENV", _construct_env_default)


def load_yaml(path: Path, loader: type[ConfigLoader] = ConfigLoader) -> Any:
    """``path`` read with ``loader``; ``ConfigError`` when it is not valid YAML or uses a
    Python tag that is refused."""
    text = path.read_text(encoding="utf-8", errors="replace")
    instance = loader(text)
    instance.path = path
    try:
        return instance.get_single_data()
    except yaml.YAMLError as exc:
        raise ConfigError(f"{path} is not valid YAML: {exc}") from exc
    finally:
        instance.dispose()


def check_inherit(config_file: Path, root: Path) -> None:
    """Refuse an ``INHERIT:`` chain that leads out of ``root`` (symlinks followed) or loops,
    reading each file with ``ProbeLoader`` (nothing in it runs)."""
    boundary = root.resolve()
    seen: set[Path] = set()
    current = config_file
    while True:
        seen.add(current.resolve())
        try:
            config = load_yaml(current, ProbeLoader)
        except (ConfigError, OSError):
            return  # not readable here: the loader that reads it for real reports it
        parent = config.get("INHERIT") if isinstance(config, dict) else None
        if not isinstance(parent, str) or not parent:
            return
        target = Path(os.path.normpath(current.parent / parent))
        if not target.resolve().is_relative_to(boundary):
            raise ConfigError(
                f"{current}: INHERIT: {parent} is outside the vault ({target.resolve()}). kb-qa "
                "does not read a configuration from outside the vault when it renders the site "
                "(MkDocs would run what its tags name). Move the inherited file into the vault, "
                "or index with render: false (KBQA_RENDER=0) to read the Markdown files as "
                "written."
            )
        if target.resolve() in seen:
            raise ConfigError(f"{current}: INHERIT: {parent} inherits from itself in a loop.")
        current = target


def load_site_yaml(path: Path) -> Any:
    """A ``mkdocs.yml`` read with ``load_yaml``, the files its ``INHERIT:`` names merged in."""
    return with_inherited(load_yaml(path), path, load_yaml)


def with_inherited(config: Any, path: Path, load: Callable[[Path], Any]) -> Any:
    """``config`` (read from ``path``) merged over the files its ``INHERIT:`` chain names,
    each read with ``load``, as MkDocs merges them: a mapping key by key, any other value
    (a list of extensions) replaced by the child's. A site that kept its
    ``markdown_extensions`` in an inherited file was indexed without them (no snippets
    expanded, another slugify: anchors the built pages did not have). A file outside
    ``path``'s folder, or a loop, is not read (``check_inherit`` refuses it when rendering)."""
    boundary = path.parent.resolve()
    seen = {path.resolve()}
    current, merged = path, config
    while isinstance(merged, dict) and isinstance(merged.get("INHERIT"), str):
        target = Path(os.path.normpath(current.parent / merged.pop("INHERIT")))
        if not target.resolve().is_relative_to(boundary) or target.resolve() in seen:
            log.warning("%s: INHERIT leads outside the site's folder or loops: not read", current)
            return merged
        seen.add(target.resolve())
        try:
            parent = load(target)
        except OSError as exc:  # the site does not build either: index what the file says
            log.warning(
                "%s: INHERIT: cannot read %s (%s): indexed without it", current, target, exc
            )
            return merged
        if isinstance(parent, dict):
            merged = _merged(parent, merged)
        current = target
    return merged


def _merged(parent: dict[str, Any], child: dict[str, Any]) -> dict[str, Any]:
    out = dict(parent)
    for key, value in child.items():
        old = out.get(key)
        out[key] = (
            _merged(old, value) if isinstance(old, dict) and isinstance(value, dict) else value
        )
    return out
