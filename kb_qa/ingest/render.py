"""Pages as MkDocs renders them: the site's hooks and plugins run, includes expanded.

A site's own machinery changes what readers see: hooks (``hooks:`` in ``mkdocs.yml``),
plugins with ``on_page_markdown`` (macros, the blog plugin's dated URLs), snippet includes,
directives that generate whole sections (mkdocstrings, mkdocs-click). The source files do
not show any of it, so for an MkDocs site kb-qa builds the pages the way ``mkdocs build``
does, up to each page's HTML, and never writes a site:

    config (hooks, installed plugins) -> on_startup, on_config, on_pre_build
    -> files (on_files) -> nav (on_nav) -> per page: on_pre_page, read_source,
       on_page_markdown, render (Python-Markdown with every extension), on_page_content

Plugins that are not installed are skipped with one warning naming them; plugins that only
shape the built output or fetch from the network (``SKIPPED_PLUGINS``) are not run. Running a
site's hooks runs its code, as ``mkdocs build`` does: ``render: false`` indexes the Markdown
sources alone (for vaults whose code you do not trust). Hooks must live inside the vault, and
so must every file ``INHERIT:`` leads to (``safe_config.check_inherit``).

The pages' chunks are made in ``rendered_chunks``; what a render depends on is in
``render_config``, what a page includes in ``page_includes``, which files it lists and in how
many passes (one per language of a translated site) in ``render_files``.
"""

from __future__ import annotations

import contextlib
import dataclasses
import logging
import os
import re
import tempfile
import threading
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from kb_qa.ingest import page_titles, render_files, snippet_guard
from kb_qa.ingest.deadline import ParseTimeout, deadline
from kb_qa.ingest.render_config import SiteInputs, entry_key, plugins_to_run, site_inputs
from kb_qa.ingest.safe_config import check_inherit
from kb_qa.ingest.vault import BROKEN_LINK, MISSING

log = logging.getLogger(__name__)

# Keeps snippet includes inside the vault (kb_qa/ingest/snippet_guard.py)
GUARD = snippet_guard.NAME
# One render at a time per process: it changes the working directory while it runs.
_RENDER_LOCK = threading.Lock()
# Lines only the HTML shows the text of: a snippet, a "::: x" directive, a pymdownx block
_INCLUDE = re.compile(r"^[ \t]*(?:;?-+8<-+|:::[ \t]*\S|/{3,}[ \t]*[\w-]+[ \t]*(?:\|.*)?$)", re.M)


@dataclass(frozen=True)
class RenderedPage:
    """One page as the site renders it."""

    path: str  # the source file, vault-relative
    url: str  # the page's URL as the site serves it (a blog post's dated URL, say)
    title: str
    html: str  # the page content (after on_page_content), without the theme
    # The Markdown changed on its way to the renderer (a hook, a plugin, an include)
    transformed: bool = False


@dataclass
class RenderRun:
    """The outcome of rendering some pages of a site."""

    pages: dict[str, RenderedPage] = field(default_factory=dict)  # by vault path
    warnings: list[tuple[str, str]] = field(default_factory=list)  # (path or config, message)
    listed: set[str] | None = None  # vault paths of the pages any pass lists (None: unknown)


class _Failure(Exception):
    """A plugin or hook raised during an event; names it."""

    def __init__(self, origin: str, event: str, exc: BaseException) -> None:
        self.origin = origin
        self.event = event
        self.exc = exc
        super().__init__(f"{origin} failed in {event} ({type(exc).__name__}: {exc})")


def _run(mkdocs_config: Any, event: str, item: Any = None, /, **kwargs: Any) -> Any:
    """``config.plugins.run_event`` that says which plugin or hook failed."""
    plugins = mkdocs_config.plugins
    for method in plugins.events[event]:
        origin = plugins._event_origins.get(method, "<unknown>")
        try:
            result = method(item, **kwargs) if item is not None else method(**kwargs)
        except Exception as exc:  # third-party code: reported, the page falls back
            raise _Failure(str(origin), event, exc) from exc
        if result is not None:
            item = result
    return item


@contextlib.contextmanager
def _quiet_mkdocs() -> Iterator[list[str]]:
    """MkDocs and its plugins log what is meant for a build (nav, links, config errors): it
    is collected (errors, for the run's warnings), not printed."""
    logger = logging.getLogger("mkdocs")
    level, propagate = logger.level, logger.propagate
    errors: list[str] = []

    class Collect(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            errors.append(record.getMessage())

    handler = Collect(logging.ERROR)
    logger.addHandler(handler)
    logger.setLevel(logging.ERROR)
    logger.propagate = False
    os.environ.setdefault("NO_MKDOCS_2_WARNING", "1")
    try:
        yield errors
    finally:
        logger.removeHandler(handler)
        logger.setLevel(level)
        logger.propagate = propagate


@contextlib.contextmanager
def _in_site_folder(root: Path) -> Iterator[None]:
    """Render as ``python -m mkdocs build`` run in the site's folder does: hooks read files
    relative to it, and directives that import the site's own modules (mkdocs-click's
    ``:module:``) find them on ``sys.path``; they stay loaded for the source parse too."""
    import sys

    before, entry = os.getcwd(), str(root)
    os.chdir(root)
    sys.path.insert(0, entry)
    try:
        yield
    finally:
        os.chdir(before)
        with contextlib.suppress(ValueError):
            sys.path.remove(entry)


def render_pages(
    root: Path,
    config_file: Path,
    wanted: Callable[[str], bool],
    *,
    skip_plugins: Sequence[str] = (),
    inside: Callable[[Path], str],
    extensions: Sequence[str] | None = None,
    parse_timeout: float = 0,
    site_url: str | None = None,
) -> RenderRun:
    """Render the pages whose vault path ``wanted`` accepts.

    ``extensions`` are the markdown extensions that load here (``Site.extensions``): the
    others, already reported by ``load_site``, are left out, as the heading ids are.
    ``site_url`` (``Site.site_url``, checked by ``site.plain_site_url``) replaces the
    config's, which ``!ENV`` may have filled with a secret.

    ``inside(path)`` says why a path may not be read ("" when it may): hooks outside the
    vault are refused. A site whose config or plugins fail gets no pages (the caller falls
    back to the sources) and one warning; a page that fails falls back alone, and so does a
    page that takes longer than ``parse_timeout`` CPU seconds to render (``kb_qa.ingest.deadline``).
    """
    run = RenderRun()
    where = config_file.name
    try:
        # MkDocs reads an inherited file with its own loader: none from outside the vault.
        check_inherit(config_file, root)
        inputs = site_inputs(config_file)
    except Exception as exc:  # noqa: BLE001 - the caller reports and reads the sources
        run.warnings.append((where, f"could not be read to render the site ({exc})"))
        return run
    hooks = []
    for hook in inputs.hooks:
        outside = not (root / hook).resolve().is_relative_to(root.resolve())
        reason = "it is outside the vault" if outside else inside(root / hook)
        if reason in (MISSING, BROKEN_LINK):
            # MkDocs would stop; the rest of the site still renders as it would with it.
            run.warnings.append((where, f"hook {hook} does not exist: pages render without it"))
            continue
        if reason:
            run.warnings.append(
                (where, f"hook {hook} is not used: {reason}; pages are indexed from their sources")
            )
            return run
        hooks.append(hook)
    inputs = dataclasses.replace(inputs, hooks=tuple(hooks))
    with (
        _RENDER_LOCK,
        tempfile.TemporaryDirectory(prefix="kbqa-render-") as site_dir,
        _quiet_mkdocs() as logged,
        _in_site_folder(root),
    ):
        try:
            config, missing, notes = _load(
                config_file, inputs, site_dir, skip_plugins, extensions, site_url
            )
            run.warnings += [(where, note) for note in notes]
        except Exception as exc:  # noqa: BLE001 - config errors of the site's own build
            why = "; ".join(logged) or _short(exc)
            run.warnings.append((where, f"MkDocs could not load it ({why}); {_FALLBACK}"))
            return run
        if missing:
            run.warnings.append(
                (
                    where,
                    f"plugin(s) {', '.join(missing)} not installed: pages are rendered without "
                    "them (install them to index what they add)",
                )
            )
        try:
            config, files = _site_events(config, inside)
        except _Failure as exc:
            run.warnings.append((where, f"{exc}; {_FALLBACK}"))
            return run
        except Exception as exc:  # noqa: BLE001
            run.warnings.append(
                (where, f"MkDocs could not list the pages ({_short(exc)}); {_FALLBACK}")
            )
            return run
        failed: dict[str, list[str]] = {}
        published = render_files.listed(files, root)
        if elsewhere := render_files.generated_elsewhere(files, root):
            run.warnings.append((where, elsewhere))
        _render_files(run, config, files, root, wanted, parse_timeout, failed)
        # mkdocs-static-i18n builds the other languages after the first (their pages at
        # /fr/...): render each as it does, its pages at the URLs that build gives them.
        for _ in render_files.other_languages(config):
            try:
                config, files = _site_events(config, inside, again=True)
            except Exception as exc:  # noqa: BLE001 - that language falls back to its sources
                run.warnings.append((where, f"{_short(exc)}; {_FALLBACK}"))
                break  # what that language publishes is not known: nothing is left out
            published |= render_files.listed(files, root)
            _render_files(run, config, files, root, wanted, parse_timeout, failed)
        else:
            run.listed = published
        with contextlib.suppress(Exception):
            _run(config, "shutdown")
    # One warning per cause: a plugin that fails on every blog post says so once.
    for problem, paths in failed.items():
        if len(paths) == 1:
            run.warnings.append((paths[0], f"{problem}{FROM_SOURCE}"))
            continue
        listed = render_files.first_few(paths)
        run.warnings.append(
            (
                where,
                f"{problem} on {len(paths)} pages ({listed}); they are indexed from their sources",
            )
        )
    return run


def _render_files(
    run: RenderRun,
    config: Any,
    files: Any,
    root: Path,
    wanted: Callable[[str], bool],
    parse_timeout: float,
    failed: dict[str, list[str]],
) -> None:
    """Render the pages of ``files`` that ``wanted`` accepts and no earlier pass rendered
    (a page a translation falls back to is the original language's, at its own URL)."""
    docs_dir = Path(config.docs_dir).resolve()
    for file in files.documentation_pages():
        path = render_files.vault_path(file.abs_src_path, root)
        # None: generated by a plugin outside the vault (a blog archive page)
        if path is None or file.page is None or not path.is_relative_to(docs_dir):
            continue
        rel = path.relative_to(root).as_posix()
        if rel in run.pages or not wanted(rel):
            continue
        try:
            with deadline(parse_timeout, "MkDocs rendering the page"):
                run.pages[rel] = _render_page(file.page, config, files, rel)
        except (_Failure, ParseTimeout) as exc:
            failed.setdefault(_short(exc), []).append(rel)
        except Exception as exc:  # noqa: BLE001 - a page MkDocs cannot render either
            failed.setdefault(f"MkDocs could not render it ({_short(exc)})", []).append(rel)


_FALLBACK = "pages are indexed from their Markdown sources"
FROM_SOURCE = "; the page is indexed from its source"
_SEARCH_PATH = re.compile(r"With sys\.path = \[[^\]]*\],? ?")


def unparsed(warnings: list[tuple[str, str]], path: str, exc: BaseException) -> str:
    """Why ``path`` is skipped when its source cannot be parsed either, taking back the
    warning that said it would be indexed from its source (mkdocs-click's page of a module
    that is not installed fails both ways: one line says so)."""
    parsed = f"{type(exc).__name__}: {exc}"
    said = [w for w in warnings if w[0] == path and w[1].endswith(FROM_SOURCE)]
    if not said:
        return f"could not be parsed as Markdown ({parsed})"
    warnings.remove(said[0])
    hint = "; install what it imports where kb-qa runs" if isinstance(exc, ImportError) else ""
    problem = said[0][1].removesuffix(FROM_SOURCE)
    return f"{problem}, nor could its source be parsed ({parsed}): it is not indexed{hint}"


def _short(exc: BaseException) -> str:
    """The error in one line of under 300 characters, its cause kept: griffe's search path
    (``With sys.path = [...]``) is left out, and a longer text keeps its start and its end,
    where Python's errors say what was missing."""
    text = " ".join(str(exc).split()) or type(exc).__name__
    text = _SEARCH_PATH.sub("", text)
    return text if len(text) < 300 else text[:140] + " … " + text[-155:]


def _load(
    config_file: Path,
    inputs: SiteInputs,
    site_dir: str,
    skip: Sequence[str],
    extensions: Sequence[str] | None,
    site_url: str | None = None,
) -> tuple[Any, list[str], list[str]]:
    """The MkDocs config to render with: (config, plugins not installed, notes of what was
    left out)."""
    from mkdocs.config import config_options, load_config

    notes: list[str] = []
    plugins, missing = plugins_to_run(inputs.plugins, inputs.theme, skip, notes)
    overrides: dict[str, Any] = {
        "plugins": plugins,
        "hooks": list(inputs.hooks),
        "watch": [],  # folders `mkdocs serve` watches: nothing to do with the pages
    }
    theme = inputs.theme_options
    custom = theme.get("custom_dir") if theme else None
    if theme and custom and not (config_file.parent / str(custom)).is_dir():
        # Templates shape the built pages around the content, never the content itself.
        overrides["theme"] = {k: v for k, v in theme.items() if k != "custom_dir"}
        notes.append(f"theme custom_dir {custom} does not exist: pages render without it")
    overrides |= {"site_dir": site_dir, "strict": False}
    if site_url is not None:
        overrides["site_url"] = site_url
    entries = list(inputs.extensions)
    if extensions is not None:
        usable = set(extensions)
        entries = [e for e in entries if entry_key(e) in usable]
    if any(entry_key(e) == "pymdownx.snippets" for e in entries):
        entries.append({GUARD: {"root": str(config_file.parent)}})
    overrides["markdown_extensions"] = entries
    # A hook edited since the last run is read again (MkDocs caches them per process).
    config_options.Hooks._load_hook.cache_clear()
    config = load_config(config_file=str(config_file), **overrides)
    return config, missing, notes


def _site_events(
    config: Any, inside: Callable[[Path], str], again: bool = False
) -> tuple[Any, Any]:
    """The build's site-wide events, up to the nav: (config, files); ``again`` for another
    pass over the same config, as MkDocs' ``build`` runs (no startup)."""
    from mkdocs.structure.files import set_exclusions
    from mkdocs.structure.nav import get_navigation

    if not again:
        _run(config, "startup", command="build", dirty=False)
    config = _run(config, "config", config)
    _run(config, "pre_build", config=config)
    files = render_files.get_files(config, inside)
    files = _run(config, "files", files, config=config)
    set_exclusions(files, config)
    nav = get_navigation(files, config)
    _run(config, "nav", nav, config=config, files=files)
    return config, files


def _render_page(page: Any, config: Any, files: Any, rel: str) -> RenderedPage:
    config._current_page = page
    try:
        page = _run(config, "pre_page", page, config=config, files=files)
        page.read_source(config)
        source = page.markdown or ""
        page.markdown = _run(config, "page_markdown", source, page=page, config=config, files=files)
        page.render(config, files)
        content = _run(
            config, "page_content", page.content or "", page=page, config=config, files=files
        )
    finally:
        config._current_page = None
    return RenderedPage(
        path=rel,
        url=page.url,
        title=page_titles.shown_html(str(page.title or "")),
        html=content,
        transformed=transformed(source, page.markdown or ""),
    )


def transformed(source: str, markdown: str) -> bool:
    """Whether a page's Markdown changed on its way to the renderer (``source`` as read,
    ``markdown`` after on_page_markdown), or pulls in text only the HTML shows (snippets,
    mkdocstrings, mkdocs-click, "/// tab | Name"; "///Footnotes Go Here///" is no block)."""
    return markdown != source or bool(_INCLUDE.search(markdown))
