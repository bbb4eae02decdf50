"""``mkdocs.yml`` read with MkDocs' own loader, for a site that is trusted (``render`` on).

Its Python tags import and call what they name, as ``mkdocs build`` does;
``safe_config`` reads every other site without running anything.
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

import yaml

from kb_qa.errors import ConfigError
from kb_qa.ingest.safe_config import with_inherited

log = logging.getLogger(__name__)


def read_config(path: Path) -> Any:
    """Load mkdocs.yml with MkDocs' own loader (``!ENV``, ``!!python/name``), leniently.

    Its Python tags import and call what they name: only for a site that is trusted (see
    ``load_site``); ``safe_config.load_yaml`` reads any other. A tag naming a module that is
    not installed (Textual's ``!!python/name:textual._doc.format_svg``) reads as ``None``,
    that value alone: the other tags keep their values. It is not logged here: MkDocs'
    own load of the same file fails on it, and the run's warnings say so once, with the
    line. The files its ``INHERIT:`` names are merged in as MkDocs merges them
    (``safe_config.with_inherited``)."""
    return with_inherited(_read(path), path, _read)


def _read(path: Path) -> Any:
    from mkdocs.utils.yaml import get_yaml_loader

    text = path.read_text(encoding="utf-8", errors="replace")
    try:
        try:
            return yaml.load(text, Loader=get_yaml_loader())  # noqa: S506 - MkDocs' own loader
        except yaml.constructor.ConstructorError as exc:
            log.debug("%s: %s; reading that value as None", path, exc)
            loader = _lenient_loader(get_yaml_loader())
            return yaml.load(text, Loader=loader)  # noqa: S506 - MkDocs' own loader, lenient
    except yaml.YAMLError as exc:
        raise ConfigError(f"{path} is not valid YAML: {exc}") from exc


def _lenient_loader(base: type[Any]) -> type[Any]:
    """``base`` (MkDocs' loader) with a Python tag that cannot be imported read as None."""

    class Lenient(base):  # type: ignore[misc, valid-type]
        def find_python_name(self, name: str, mark: Any, *args: Any, **kwds: Any) -> Any:
            try:
                return super().find_python_name(name, mark, *args, **kwds)
            except yaml.constructor.ConstructorError:
                return None

        def find_python_module(self, name: str, mark: Any) -> Any:
            try:
                return super().find_python_module(name, mark)
            except yaml.constructor.ConstructorError:
                return None

        def make_python_instance(self, suffix: str, node: Any, *args: Any, **kwds: Any) -> Any:
            if self.find_python_name(suffix, node.start_mark) is None:
                return None
            return super().make_python_instance(suffix, node, *args, **kwds)

    # A tag MkDocs registers only while it loads the config for real (``!relative``).
    Lenient.add_constructor(None, lambda loader, node: None)
    return Lenient
