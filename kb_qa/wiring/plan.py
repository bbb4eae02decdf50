"""``kb-qa init``: wire the chat widget into a site so that any generator that builds it shows it.

MkDocs, ProperDocs and Zensical all copy the docs folder's static files and honour
``extra_css`` / ``extra_javascript``, so a site is wired by:

- the widget's files copied into ``<docs_dir>/kb-qa/`` (kb-qa owns that folder), plus
  ``kb-qa-options.js``, a loader generated from the site config that starts ``kb-qa.js``
  with the widget's options (an ``extra_javascript`` entry cannot carry attributes);
- ``extra_css: [kb-qa/kb-qa.css]`` and ``extra_javascript: [kb-qa/kb-qa-options.js]`` and the
  widget's settings under ``extra.kb_qa`` in each config there is (``zensical.toml``,
  ``mkdocs.yml``, ``properdocs.yml``), edited in place: only those entries change, every other
  line (comments, order, quoting) stays.

A folder of built HTML pages (no config) gets the drop-in tags in every page instead; in
the tree mike publishes (``versions.json`` at its root), each version's folder is a site of
its own, its aliases' folders wired like it.
The kb-qa MkDocs plugin recognises a wired site (``is_wired``) and does not add a second copy.

Every write is planned first and applied all or nothing (``Plan.apply``): a file where a
folder must go, a config or page that is a symlink out of the site, a config that is not
UTF-8 (or UTF-16 with a BOM) stop ``init`` with a message before anything is written. Each
file keeps its encoding (a Latin-1 page stays Latin-1) and its line endings (CRLF stays).
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from kb_qa.errors import ConfigError
from kb_qa.ingest import versioning
from kb_qa.wiring.changes import Change, Encoding, change_of, file_changes, read_text
from kb_qa.wiring.options import (
    ASSET_DIR,
    CSS_PATH,
    EXTRA_KEY,
    LOADER,
    LOADER_PATH,
    PREVIEW_ENDPOINT,
    WidgetOptions,
    check_endpoint,
    loader_script,
    options_from,
    plugin_options,
)
from kb_qa.wiring.tags import (
    entry_path,
    html_with_tags,
    options_of_tags,
    page_tags,
    root_path,
    tag_options,
)


@dataclass
class Plan:
    """What wiring a site takes: the kind of site and the file changes (empty: wired)."""

    root: Path
    kind: str  # "zensical.toml + mkdocs.yml", "mkdocs.yml", "html", ...
    changes: list[Change] = field(default_factory=list)
    preview: str = PREVIEW_ENDPOINT  # what the chat of a preview on this machine asks

    def diff(self) -> str:
        """All changes as one diff (new widget files are listed, not printed)."""
        parts = []
        for change in self.changes:
            if change.path.suffix in (".js", ".css") and change.path.name != LOADER:
                state = "new" if change.before is None else "updated"
                parts.append(f"{state}: {change.path.relative_to(self.root).as_posix()}\n")
            else:
                parts.append(change.diff(self.root))
        return "".join(parts)

    def check(self) -> None:
        """``ConfigError`` when a change cannot be written, before anything is: a file
        where a folder must go, a folder where a file must go, a path out of the site."""
        site = self.root.resolve()
        for change in self.changes:
            path = change.path
            if path.is_symlink() or not path.parent.resolve().is_relative_to(site):
                raise ConfigError(
                    f"{path} is (or is inside) a symlink that leads out of the site folder "
                    f"{site}; kb-qa init edits only files inside it. Replace the link with "
                    "the file itself, or add kb-qa's lines to it by hand."
                )
            if path.is_dir():
                raise ConfigError(
                    f"{path} is a folder where kb-qa init writes a file: move it away and run "
                    "again."
                )
            for parent in path.parents:
                if parent.exists() and not parent.is_dir():
                    raise ConfigError(
                        f"{parent} is a file where kb-qa init puts the folder of the widget's "
                        "files: move it away (or rename it) and run again."
                    )
                if parent == self.root:
                    break
            try:
                change.encoding.encode(change.after)
            except UnicodeEncodeError as exc:
                raise ConfigError(
                    f"{path} is stored as {change.encoding.codec}, which cannot hold "
                    f"{exc.object[exc.start : exc.end]!r} of the widget's settings: use other "
                    "text (--title, --suggested) or save the file as UTF-8."
                ) from exc

    def apply(self) -> None:
        """Write every change, all or nothing: each file goes to a temporary file beside
        it first, then all are moved into place; on any failure the files already moved
        are put back as they were and the new ones removed (``ConfigError``)."""
        self.check()
        created: list[Path] = []
        staged: list[tuple[Change, Path]] = []
        done: list[tuple[Change, bytes | None]] = []
        try:
            for change in self.changes:
                for parent in reversed(change.path.parents):
                    if not parent.exists():
                        parent.mkdir()
                        created.append(parent)
                temp = change.path.with_name(f".{change.path.name}.kb-qa-init")
                temp.write_bytes(change.encoding.encode(change.after))
                with contextlib.suppress(OSError):
                    os.chmod(temp, change.path.stat().st_mode & 0o7777)
                staged.append((change, temp))
            for change, temp in staged:
                original = change.path.read_bytes() if change.path.exists() else None
                os.replace(temp, change.path)
                done.append((change, original))
        except OSError as exc:
            for change, original in reversed(done):
                with contextlib.suppress(OSError):
                    if original is None:
                        change.path.unlink()
                    else:
                        change.path.write_bytes(original)
            for _change, temp in staged:
                with contextlib.suppress(OSError):
                    temp.unlink()
            for folder in reversed(created):
                with contextlib.suppress(OSError):
                    folder.rmdir()
            raise ConfigError(
                f"kb-qa init could not write {getattr(exc, 'filename', None) or 'a file'} "
                f"({exc.strerror or exc}); nothing was changed. Fix that and run again."
            ) from exc


def plan(root: Path, **options: Any) -> Plan:
    """What wiring ``root`` takes; ``options`` (endpoint, title, suggested_questions) change
    the settings already in the site config (or the defaults)."""
    for name in ("endpoint", "preview_endpoint"):
        if options.get(name):
            check_endpoint(str(options[name]), f"--{name.replace('_', '-')}")
    root = root.resolve()
    if not root.is_dir():
        raise ConfigError(
            f"{root} is not a folder. Pass the site's folder (with mkdocs.yml or "
            "zensical.toml) or a folder of built HTML pages."
        )
    from kb_qa.ingest.site import CONFIG_FILES

    # Each generator reads its own file: wire every one there is.
    configs = [root / n for n in CONFIG_FILES if (root / n).is_file()]
    for config in configs:
        if not config.resolve().is_relative_to(root):
            raise ConfigError(
                f"{config} is a symlink to {config.resolve()}, outside the site folder: kb-qa "
                "init edits only files inside it. Run it where the config really is, or add "
                "kb-qa's lines by hand."
            )
    if not configs:
        if not any(root.rglob("*.html")):
            raise ConfigError(
                f"{root} has no zensical.toml, mkdocs.yml or .html pages. Run `kb-qa init` in "
                "a site's folder, or on the folder of a built site."
            )
        return _plan_html(root, options)
    result = Plan(root, " + ".join(c.name for c in configs))
    docs_dirs: dict[Path, WidgetOptions] = {}
    for config in configs:
        if config.suffix == ".toml":
            change, docs_dir, wanted, site_url = _plan_toml(config, options)
        else:
            change, docs_dir, wanted, site_url = _plan_yaml(config, options)
        if change is not None:
            result.changes.append(change)
        if not docs_dirs:
            result.preview = wanted.preview_endpoint
        if docs_dir not in docs_dirs:
            docs_dirs[docs_dir] = wanted
            result.changes += _asset_changes(docs_dir / ASSET_DIR, wanted, site_url)
    return result


def _asset_changes(target: Path, options: WidgetOptions, site_url: str) -> list[Change]:
    from kb_qa_widget import ASSETS, FILES

    wanted = {name: (ASSETS / name).read_text(encoding="utf-8") for name in FILES}
    wanted[LOADER] = loader_script(options, site_url)
    return file_changes(target, wanted)


# --- zensical.toml ---------------------------------------------------------------------------


def _plan_toml(
    path: Path, options: dict[str, Any]
) -> tuple[Change | None, Path, WidgetOptions, str]:
    """zensical.toml edited with tomlkit and read back (``toml_edit``)."""
    from kb_qa.wiring import toml_edit

    before, encoding = read_text(path)
    document = toml_edit.parse(before, str(path))
    wanted = options_from(toml_edit.current_extra(document, str(path))) or WidgetOptions()
    wanted = wanted.merged(**options)
    after = toml_edit.wired(before, str(path), wanted)
    project = toml_edit.project_of(document)
    docs_dir = path.parent / str(project.get("docs_dir") or "docs")
    site_url = versioning.link_base(str(project.get("site_url") or ""), project)
    return change_of(path, before, after, encoding), docs_dir, wanted, site_url


# --- mkdocs.yml ------------------------------------------------------------------------------


def _plan_yaml(
    path: Path, options: dict[str, Any]
) -> tuple[Change | None, Path, WidgetOptions, str]:
    """mkdocs.yml edited line by line (``yaml_edit``): nothing else is re-serialised."""
    from kb_qa.wiring import yaml_edit

    before, encoding = read_text(path)
    data = yaml_edit.load(before, str(path))
    known = options_from(data.get("extra")) or plugin_options(data) or WidgetOptions()
    wanted = known.merged(**options)
    text = yaml_edit.ensure_item(before, str(path), "extra_css", CSS_PATH, entry_path)
    text = yaml_edit.ensure_item(text, str(path), "extra_javascript", LOADER_PATH, entry_path)
    text = yaml_edit.ensure_mapping(text, str(path), "extra", EXTRA_KEY, wanted.as_config())
    docs_dir = path.parent / str(data.get("docs_dir") or "docs")
    site_url = versioning.link_base(str(data.get("site_url") or ""), data)
    return change_of(path, before, text, encoding), docs_dir, wanted, site_url


# --- a folder of built HTML pages -------------------------------------------------------------


Page = tuple[Path, str, Encoding]  # a page, its text and its encoding
MIKE_TREE = "html, versioned with mike"  # the kind of the tree mike publishes


def _plan_html(root: Path, options: dict[str, Any]) -> Plan:
    """Every page gets the drop-in tags (replacing kb-qa's older ones), the files go in kb-qa/;
    in the tree mike publishes, each version folder is a site of its own."""
    result = Plan(root, "html")
    versions = versioning.published_versions(root)
    if not versions:
        result.changes += _wire_pages(root, _pages(root), options)
        return result
    result.kind = MIKE_TREE
    if options.get("endpoint") and len(versions) > 1:
        raise ConfigError(_one_endpoint_for_versions(root, versions, str(options["endpoint"])))
    # Wired as one site, the tree gave every page the options of its first page (1.0/404.html:
    # readers of 2.0 asked 1.0's server) and a root at the tree's root, where a mike site has
    # no pages (a citation on /1.0/guides/scheduling/ opened /guides/retries/, a 404). The
    # pages outside the version folders (the root's redirect to the default) stay as they are.
    blind = []
    for published in versions:
        folders = [root / published.version]
        for alias in published.aliases:
            # A symlink alias (mike's default) is the version's own folder, wired with it.
            if (root / alias).is_dir() and not (root / alias).is_symlink():
                folders.append(root / alias)
        pages = {folder: _pages(folder) for folder in folders}
        # An alias is a copy of its version: it keeps the options the version's pages carry.
        kept = _kept(page for folder in folders for page in pages[folder])
        # A new `mike deploy` replaces the version's folder with pages that carry no widget:
        # wired then, they got endpoint "" and their readers asked the static host's /api/ask
        # (the preview endpoint is no version's: it is this machine's, on every version). One
        # version alone may go without, as any built site may: its origin answers for it.
        endpoint = options_of_tags(kept).endpoint if kept is not None else ""
        if len(versions) > 1 and not endpoint and any(pages.values()):
            blind.append(published.version)
        for folder in folders:
            result.changes += _wire_pages(folder, pages[folder], options, kept)
    if blind:  # all or nothing: the other versions are not wired without these
        raise ConfigError(_versions_without_endpoint(root, blind))
    return result


def _kept(pages: Iterable[Page]) -> dict[str, Any] | None:
    """The options a site's pages carry in their kb-qa tags: the first page's whose tags
    name an endpoint, else the first page's with tags (None: no page has them)."""
    first = None
    for _page, before, _encoding in pages:
        data = tag_options(before)
        if data is not None and options_of_tags(data).endpoint:
            return data
        first = first if first is not None else data
    return first


def _pages(site: Path) -> list[Page]:
    """The HTML pages of the site at ``site`` (kb-qa's own folder left out), with their text."""
    found = sorted(p for p in site.rglob("*.html") if ASSET_DIR not in p.relative_to(site).parts)
    return [  # not a link (out of the site, or to a page wired under its own name)
        (p, *read_text(p, page=True))
        for p in found
        if not p.is_symlink() and p.resolve().is_relative_to(site.resolve())
    ]


def _wire_pages(
    site: Path, pages: list[Page], options: dict[str, Any], kept: dict[str, Any] | None = None
) -> list[Change]:
    """The changes that wire the pages of the site at ``site``, its root: the ``kept``
    options of its tags (else those its pages' tags carry) with ``options`` over them."""
    # A site has no config to keep its options: run again (after each build, on a fresh
    # page or a rebuilt site), kb-qa init keeps those its pages' tags carry.
    carried = kept if kept is not None else _kept(pages)
    wanted = (options_of_tags(carried) if carried else WidgetOptions()).merged(**options)
    if carried is not None and options.get("preview_endpoint"):
        carried = {**carried, "preview_endpoint": options["preview_endpoint"]}
    changes = []
    for page, before, encoding in pages:
        # The 404 page is served at any path: its links start at the site's root path.
        base = root_path(before, site) if page == site / "404.html" else ""
        after = html_with_tags(
            before, page_tags(page.relative_to(site).as_posix(), wanted, base, carried)
        )
        if after != before:
            changes.append(Change(page, before, after, encoding))
    from kb_qa_widget import ASSETS, FILES

    files = {name: (ASSETS / name).read_text(encoding="utf-8") for name in FILES}
    return changes + file_changes(site / ASSET_DIR, files)


def _one_endpoint_for_versions(
    root: Path, versions: list[versioning.Published], endpoint: str
) -> str:
    """Why one --endpoint for every version of a mike tree is refused, and what to run."""
    names = ", ".join(v.version for v in versions)
    first = versions[-1].version
    aliases = ", ".join(f"{a} (of {v.version})" for v in versions for a in v.aliases)
    then = f" wires the aliases, {aliases}, like their versions and" if aliases else ""
    return (
        f"{root} is a site versioned with mike ({versioning.VERSIONS_FILE} lists {names}): "
        "with one --endpoint, every version's chat would be answered from the text of that "
        f"one server ({endpoint}), whichever version its reader is on. Run one `kb-qa serve` "
        "per version, from that version's checkout, and wire each version's folder with its "
        f"own: `kb-qa init {root / first} --endpoint URL`, and the same for each version. "
        f"Then `kb-qa init {root}` without --endpoint{then} keeps each version's endpoint "
        "(after each `mike deploy`, which leaves the version's new pages without the widget, "
        "wire that version again first). See kb-qa's docs: Deployment, Versioned sites."
    )


def _versions_without_endpoint(root: Path, blind: list[str]) -> str:
    """Why a mike tree with versions whose pages name no endpoint is not wired, and what
    to run."""
    names = ", ".join(blind)
    runs = "; ".join(f"`kb-qa init {root / version} --endpoint URL`" for version in blind)
    return (
        f"{root} is a site versioned with mike, and no page of {names} names its endpoint "
        "(a new `mike deploy` replaces a version's folder with pages that carry no widget): "
        "wired so, their chat would ask the site's own host, which answers for no version. "
        "Nothing was written. Wire each such version's folder with the URL of its own "
        f"`kb-qa serve`: {runs}. Then `kb-qa init {root}` wires the rest, each version with "
        "its endpoint. See kb-qa's docs: Deployment, Versioned sites."
    )
