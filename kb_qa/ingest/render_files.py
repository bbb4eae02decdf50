"""What a render of an MkDocs site lists: its files (walking only what kb-qa reads) and the
passes it is built in, one per language of a site translated with mkdocs-static-i18n.

mkdocs-static-i18n builds the default language, then, from its ``on_post_build``, builds
the site again for each other language it builds (``languages[].build``), its pages at
``/<locale>/...``: ``page.fr.md`` (its suffix layout) or ``docs/fr/page.md`` (its folder
layout) is published at ``fr/page/``. kb-qa runs no ``on_post_build``, so
``other_languages`` sets the plugin on each other language in turn, as it does itself, and
the render lists the pages of each pass.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

# Why a Markdown file of the site is not indexed when no pass of its build lists it
UNPUBLISHED = (
    "the site's build leaves it out (a draft, a page of a language the site does not "
    "build, or a plugin excludes it): it is not indexed"
)


def other_languages(config: Any) -> Iterator[str]:
    """The locales mkdocs-static-i18n builds after the first (none without it), setting its
    plugin on each before yielding it: the caller then runs the build's events again."""
    plugin = _i18n(config)
    first = getattr(plugin, "current_language", None)
    if plugin is None or first is None:
        return
    locales = plugin.build_languages
    try:
        for locale in locales:
            if locale != first:
                plugin.current_language = locale
                yield str(locale)
    finally:
        plugin.current_language = first


def get_files(config: Any, inside: Callable[[Path], str]) -> Any:
    """MkDocs' ``get_files``, walking only what kb-qa reads: it follows every folder
    symlink, so a link to ``/`` made it walk the whole disk (killed at 150 s and 3.5 GB).
    Here a symlinked folder is followed only when ``inside`` allows its target (inside the
    vault, not hidden) and it was not walked yet (no loops); the rest is MkDocs' own code."""
    from mkdocs.structure.files import File, Files, _file_sort_key, set_exclusions

    docs_dir = str(config["docs_dir"])
    top = Path(docs_dir).resolve()
    seen: set[Path] = {top}
    files: list[Any] = []
    conflicting: list[tuple[Any, Any]] = []
    for source_dir, dirnames, filenames in os.walk(docs_dir, followlinks=True):
        relative_dir = os.path.relpath(source_dir, docs_dir)
        keep = []
        for name in sorted(dirnames):
            sub = Path(source_dir) / name
            real = sub.resolve()
            if sub.is_symlink() and (
                inside(sub) or real in seen or real.is_relative_to(top) or top.is_relative_to(real)
            ):
                continue
            seen.add(real)
            keep.append(name)
        dirnames[:] = keep
        filenames.sort(key=_file_sort_key)
        by_dest: dict[str, Any] = {}
        for filename in filenames:
            file = File(
                os.path.join(relative_dir, filename),
                docs_dir,
                config["site_dir"],
                config["use_directory_urls"],
            )
            previous = by_dest.setdefault(file.dest_uri, file)
            if previous is not file:
                conflicting.append((previous, file))
            files.append(file)
    set_exclusions(files, config)
    # README.md is left out when the folder has an index file too (as MkDocs does).
    for a, b in conflicting:
        drop = a if b.inclusion.is_included() else b
        with contextlib.suppress(ValueError):
            files.remove(drop)
    return Files(files)


def listed(files: Any, root: Path) -> set[str]:
    """The vault paths of the pages a build of ``files`` publishes: MkDocs' documentation
    pages after every plugin's ``on_files``, without a Material blog's drafts or the pages of
    a language mkdocs-static-i18n does not build."""
    paths = (vault_path(file.abs_src_path, root) for file in files.documentation_pages())
    return {path.relative_to(root).as_posix() for path in paths if path is not None}


def generated_elsewhere(files: Any, root: Path) -> str:
    """What to say of the pages a plugin writes outside the vault (mkdocs-gen-files' temp
    folder: pipx's CLI reference, its `pipx ... --help` output, was left out without a
    word), "" when there are none. A blog's archive and category pages are not counted:
    they list what the vault's posts say."""
    names = sorted(
        file.src_uri
        for file in files.documentation_pages()
        if file.abs_src_path
        and vault_path(file.abs_src_path, root) is None
        and not type(file.page).__module__.startswith("material.plugins.blog")
    )
    if not names:
        return ""
    return (
        f"{len(names)} page(s) a plugin generates outside the vault are not indexed "
        f"({first_few(names)}): "
        "kb-qa indexes the vault's own files; commit the generated Markdown to answer from it"
    )


def first_few(paths: list[str]) -> str:
    """The first three of ``paths`` and how many more, for a warning about many pages."""
    return ", ".join(paths[:3]) + (f" and {len(paths) - 3} more" if len(paths) > 3 else "")


def vault_path(abs_src_path: str | None, root: Path) -> Path | None:
    """Where a page's source is in the vault (resolved ``root``), as the vault's walk names
    it: a page that is a symlink by its own name, not its target's (copier's
    ``docs/index.md`` links to ``../README.md``: named by its target, the page was neither
    rendered nor listed, and was skipped as one the build leaves out). None for a file
    outside the vault (a page a plugin generates elsewhere)."""
    if not abs_src_path:
        return None
    path = Path(os.path.abspath(abs_src_path))
    path = path.parent.resolve() / path.name  # the vault's own folder may be named by a link
    return path if path.is_relative_to(root) else None


def later_language(config: Any) -> bool:
    """Whether this build is one mkdocs-static-i18n runs for a language after the first (from
    its ``on_post_build``): the pages of the whole build are those of every language's."""
    plugin = _i18n(config)
    return plugin is not None and bool(getattr(plugin, "building", False))


def languages_to_come(config: Any) -> bool:
    """Whether mkdocs-static-i18n builds another language after this build ends."""
    plugin = _i18n(config)
    if plugin is None:
        return False
    first = getattr(plugin, "default_language", None)
    others = [locale for locale in plugin.build_languages if locale != first]
    if not later_language(config):
        return bool(others)
    return getattr(plugin, "current_language", None) != others[-1]


def _i18n(config: Any) -> Any:
    """The mkdocs-static-i18n plugin of the build, if it builds languages; else None."""
    plugin = config.plugins.get("i18n")
    return plugin if isinstance(getattr(plugin, "build_languages", None), list) else None
