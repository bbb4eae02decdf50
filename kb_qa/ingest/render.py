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

``chunk_rendered`` turns one rendered page into chunks: a page whose rendering adds nothing
to its source is chunked from the source (offsets and lines into the file); any other page
from its HTML, converted to Markdown, with each heading's id as rendered and each section's
lines in the file where the section has a heading there (generated text keeps its URL only).
"""

from __future__ import annotations

import contextlib
import dataclasses
import hashlib
import logging
import os
import re
import tempfile
import threading
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import markdown

from kb_qa.ingest import anchors, snippet_guard
from kb_qa.ingest.deadline import ParseTimeout, deadline
from kb_qa.ingest.safe_config import check_inherit
from kb_qa.ingest.site import Site, read_config
from kb_qa.ingest.vault import MISSING, SKIP_DIRS
from kb_qa.settings import Settings
from kb_qa.types import Chunk, Document, Outline

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
# Keeps snippet includes inside the vault (kb_qa/ingest/snippet_guard.py)
GUARD = snippet_guard.NAME
# One render at a time per process: it changes the working directory while it runs.
_RENDER_LOCK = threading.Lock()
_INCLUDE = re.compile(r"^[ \t]*(?:;?-{1,}8<-{1,}|:::[ \t]*\S|///[ \t]*\S)", re.M)


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


def fingerprint(root: Path, config_file: Path, hooks: Sequence[str]) -> str:
    """What besides a page's own file changes its rendering: the config and hook files."""
    digest = hashlib.sha1()
    for path in [config_file, *(root / h for h in hooks)]:
        digest.update(str(path).encode())
        with contextlib.suppress(OSError):
            digest.update(path.read_bytes())
    return digest.hexdigest()


def config_file(site: Site, settings: Settings) -> Path | None:
    """The ``mkdocs.yml`` to render the site with, or None (not rendered: not an MkDocs
    site, a Zensical one, or ``render`` is off)."""
    if not settings.render or site.generator != "mkdocs":
        return None
    if site.config_name not in ("mkdocs.yml", "mkdocs.yaml"):
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
    _, missing = _plugins_to_run(inputs.plugins, inputs.theme, settings.skip_plugins)
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


def _entry_key(entry: object) -> str:
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


def _plugins_to_run(
    entries: Sequence[tuple[str, object]], theme: str, skip: Sequence[str]
) -> tuple[list[object], list[str]]:
    """The plugins entry to load (as mkdocs.yml writes it) and the names not installed."""
    installed = _installed_plugins()
    keep: list[object] = []
    missing: list[str] = []
    skipped = SKIPPED_PLUGINS | set(skip)
    for name, options in entries:
        bare = name.split("/", 1)[-1]
        if name in skipped or bare in skipped:
            continue
        if name not in installed and f"{theme}/{name}" not in installed:
            missing.append(name)
            continue
        keep.append({name: options} if options is not None else name)
    return keep, missing


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
def _importable(root: Path) -> Iterator[None]:
    """The site's folder on ``sys.path`` while it renders, as for ``python -m mkdocs build``
    run there: directives that import the site's own modules (mkdocs-click's ``:module:``)
    find them. Modules imported stay loaded, so the source parse of the page finds them too."""
    import sys

    entry = str(root)
    sys.path.insert(0, entry)
    try:
        yield
    finally:
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
        if reason == MISSING:
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
    # Hooks read files relative to where `mkdocs build` runs: the site's folder.
    with (
        _RENDER_LOCK,
        tempfile.TemporaryDirectory(prefix="kbqa-render-") as site_dir,
        _quiet_mkdocs() as logged,
        contextlib.chdir(root),
        _importable(root),
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
        docs_dir = Path(config.docs_dir).resolve()
        failed: dict[str, list[str]] = {}
        for file in files.documentation_pages():
            if not file.abs_src_path or file.page is None:
                continue
            try:
                rel = Path(file.abs_src_path).resolve().relative_to(root).as_posix()
            except ValueError:
                continue  # generated by a plugin outside the vault (a blog archive page)
            if not Path(file.abs_src_path).resolve().is_relative_to(docs_dir):
                continue
            if not wanted(rel):
                continue
            try:
                with deadline(parse_timeout, "MkDocs rendering the page"):
                    run.pages[rel] = _render_page(file.page, config, files, rel)
            except (_Failure, ParseTimeout) as exc:
                failed.setdefault(_short(exc), []).append(rel)
            except Exception as exc:  # noqa: BLE001 - a page MkDocs cannot render either
                failed.setdefault(f"MkDocs could not render it ({_short(exc)})", []).append(rel)
        with contextlib.suppress(Exception):
            _run(config, "shutdown")
    # One warning per cause: a plugin that fails on every blog post says so once.
    for problem, paths in failed.items():
        if len(paths) == 1:
            run.warnings.append((paths[0], f"{problem}; the page is indexed from its source"))
            continue
        listed = ", ".join(paths[:3]) + (f" and {len(paths) - 3} more" if len(paths) > 3 else "")
        run.warnings.append(
            (
                where,
                f"{problem} on {len(paths)} pages ({listed}); they are indexed from their sources",
            )
        )
    return run


_FALLBACK = "pages are indexed from their Markdown sources"


def _short(exc: BaseException) -> str:
    text = " ".join(str(exc).split()) or type(exc).__name__
    return text if len(text) < 300 else text[:297] + "…"


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
    plugins, missing = _plugins_to_run(inputs.plugins, inputs.theme, skip)
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
        entries = [e for e in entries if _entry_key(e) in usable]
    if any(_entry_key(e) == "pymdownx.snippets" for e in entries):
        entries.append({GUARD: {"root": str(config_file.parent)}})
    overrides["markdown_extensions"] = entries
    # A hook edited since the last run is read again (MkDocs caches them per process).
    config_options.Hooks._load_hook.cache_clear()
    config = load_config(config_file=str(config_file), **overrides)
    return config, missing, notes


def _site_events(config: Any, inside: Callable[[Path], str]) -> tuple[Any, Any]:
    """The build's site-wide events, up to the nav: (config, files)."""
    from mkdocs.structure.files import set_exclusions
    from mkdocs.structure.nav import get_navigation

    _run(config, "startup", command="build", dirty=False)
    config = _run(config, "config", config)
    _run(config, "pre_build", config=config)
    files = _get_files(config, inside)
    files = _run(config, "files", files, config=config)
    set_exclusions(files, config)
    nav = get_navigation(files, config)
    _run(config, "nav", nav, config=config, files=files)
    return config, files


def _get_files(config: Any, inside: Callable[[Path], str]) -> Any:
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
        title=str(page.title or ""),
        html=content,
        transformed=transformed(source, page.markdown or ""),
    )


def transformed(source: str, markdown: str) -> bool:
    """Whether a page's Markdown changed on its way to the renderer (``source`` as read,
    ``markdown`` after on_page_markdown), or pulls in text through an include or a block
    directive (snippets, mkdocstrings, mkdocs-click) that only the HTML shows."""
    return markdown != source or bool(_INCLUDE.search(markdown))


# --- what a page includes -----------------------------------------------------------------

# ``--8<-- "file.md"`` (inline) and a block of file names between two ``--8<--`` lines; a
# leading ``;`` escapes it. A name may end in ``:5:10`` (lines) or ``:section``.
_SNIPPET_INLINE = re.compile(r"""^[ \t]*-{1,}8<-{1,}[ \t]+(["'])(.+?)\1""", re.M)
_SNIPPET_BLOCK = re.compile(
    r"^[ \t]*-{1,}8<-{1,}[ \t]*\n(.*?)^[ \t]*-{1,}8<-{1,}[ \t]*$", re.M | re.S
)


def includes(markdown: str, site: Site) -> list[str]:
    """The vault files a page pulls in with ``pymdownx.snippets`` (and the site's
    ``auto_append`` files), vault-relative; a page whose includes change is rendered again."""
    config = site.extension_configs.get("pymdownx.snippets")
    if config is None:
        return []
    names = [m.group(2) for m in _SNIPPET_INLINE.finditer(markdown)]
    for block in _SNIPPET_BLOCK.findall(markdown):
        names += [line.strip() for line in block.splitlines() if line.strip()]
    names += [str(n) for n in config.get("auto_append") or []]
    bases = [Path(b) for b in config.get("base_path") or [site.root]]
    root = site.root.resolve()
    found: set[str] = set()
    for name in names:
        if name.startswith(";") or "://" in name:
            continue
        name = re.sub(r"(:-?\d*)+$|:[A-Za-z_][\w-]*$", "", name)
        for base in bases:
            path = (base / name).resolve()
            if path.is_file() and path.is_relative_to(root):
                found.add(path.relative_to(root).as_posix())
                break
    return sorted(found)


# A page's dependency on the vault's Python code (see ``python_stamp``)
PYTHON_FILES = "*.py"
_DIRECTIVE = re.compile(r"^[ \t]*:::[ \t]*\S", re.M)
# Folders of installed packages and build output, not the project's own code
_NOT_CODE = SKIP_DIRS | {"site-packages", "venv", "env", "site"}


def generates_from_code(markdown: str) -> bool:
    """Whether a page has a block directive that writes sections from code (mkdocstrings'
    ``::: package.module``, ``::: mkdocs-click``)."""
    return bool(_DIRECTIVE.search(markdown))


def python_stamp(root: Path) -> tuple[int, int]:
    """(newest modification time in ns, count) of the vault's Python files: pages whose
    sections are generated from code render again when it changes. Hidden folders,
    virtual environments and installed packages are not the project's code."""
    newest, count = 0, 0
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = [
            d
            for d in dirnames
            if not d.startswith(".")
            and d not in _NOT_CODE
            and not (Path(dirpath) / d / "pyvenv.cfg").exists()
        ]
        for name in filenames:
            if name.endswith(".py"):
                with contextlib.suppress(OSError):
                    newest = max(newest, (Path(dirpath) / name).stat().st_mtime_ns)
                    count += 1
    return (newest, count)


def stamp(path: Path) -> tuple[int, int]:
    """A file's (modification time in ns, size), (0, -1) when it is gone."""
    try:
        st = path.stat()
    except OSError:
        return (0, -1)
    return (st.st_mtime_ns, st.st_size)


# --- chunks of a rendered page ------------------------------------------------------------

# A heading the renderer gave no id (raw ``<h4>`` in the source) is no link target: it is
# kept as bold text, so it opens no section of its own.
_NO_ID_HEADING = re.compile(r"<h([1-6])(?![^>]*\sid=)(\s[^>]*)?>(.*?)</h\1>", re.S | re.I)


# Pygments' line numbers as a table beside the code (``linenums``): the code alone.
_LINENO_TABLE = re.compile(
    r'<table class="highlighttable">.*?<td class="code">(.*?)</td>\s*</tr>\s*</table>', re.S
)


def html_to_markdown(content: str) -> str:
    """A page's content HTML as Markdown text: what the reader sees, in Markdown's form."""
    import html_to_markdown as h2m

    content = _NO_ID_HEADING.sub(r"<p><strong>\3</strong></p>", content)
    content = _LINENO_TABLE.sub(r"\1", content)
    options = h2m.ConversionOptions(
        exclude_selectors=[".headerlink", ".linenos", ".linenodiv", "script", "style"],
        skip_images=True,
        extract_metadata=False,
        autolinks=False,
    )
    return h2m.convert(content, options).content or ""


def chunk_rendered(
    doc: Document,
    page: RenderedPage,
    md: markdown.Markdown,
    chunk_chars: int,
    outline: Outline | None = None,
    *,
    parse_timeout: float = 0,
    warnings: list[str] | None = None,
) -> list[Chunk]:
    """Chunks of one rendered page (see the module's docstring), at the page's own URL;
    ``parse_timeout`` and ``warnings`` as for ``chunk_document``."""
    from kb_qa.ingest.chunking import chunk_document, with_hash

    doc = dataclasses.replace(doc, url=page.url)
    rendered = anchors.html_headings(page.html)
    ids = {h.anchor for h in rendered}
    limits: dict[str, Any] = {"parse_timeout": parse_timeout, "warnings": warnings}
    from_source = chunk_document(doc, md, chunk_chars, rendered, outline, **limits)
    if not page.transformed and ids <= {c.anchor for c in from_source}:
        return from_source
    # The HTML, with each section's place in the file where its heading is in the file.
    text = html_to_markdown(page.html)
    shown = dataclasses.replace(doc, source=text, body_start=0)
    chunks = chunk_document(shown, md, chunk_chars, rendered, **limits)
    origin: dict[str, tuple[int, int, int, int]] = {}
    for c in from_source:
        if c.anchor not in ids and c.anchor:
            continue
        first = origin.get(c.anchor, (c.start, c.end, c.line_start, c.line_end))
        origin[c.anchor] = (first[0], c.end, first[2], c.line_end)
    result: list[Chunk] = []
    section: Chunk | None = None  # the last chunk that opened one of the page's sections
    for c in chunks:
        if c.anchor in ids or c.anchor == "":
            section = c
        else:
            # A heading of the converted text that is not one of the page's (a line that
            # reads like Markdown heading syntax) belongs to the section around it.
            if section is None:  # before the first heading: the page's opening text
                title = c.heading_path[:1]
                section = dataclasses.replace(
                    c, anchor="", heading=title[0], heading_path=title, level=0
                )
            c = dataclasses.replace(
                c, heading=section.heading, heading_path=section.heading_path, level=section.level
            )
        start, end, line_start, line_end = origin.get(section.anchor, (0, 0, 0, 0))
        c = dataclasses.replace(
            c, anchor=section.anchor, start=start, end=end, line_start=line_start, line_end=line_end
        )
        result.append(with_hash(c))
    return _unique_ids(result)


def _unique_ids(chunks: list[Chunk]) -> list[Chunk]:
    """Chunk ids stay unique after a stray heading was folded into its section."""
    seen: set[str] = set()
    result = []
    for c in chunks:
        cid, n = c.id, 1
        while cid in seen:
            cid, n = f"{c.id}~{n}", n + 1
        seen.add(cid)
        result.append(c if cid == c.id else dataclasses.replace(c, id=cid))
    return result
