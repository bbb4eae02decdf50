"""``plugins: [search, kb-qa]``: the kb-qa chat widget on every page of an MkDocs site.

- injects the widget's script and stylesheet into every page and copies them into the site;
  a site wired by ``kb-qa init`` (its extra_javascript loads ``kb-qa/kb-qa-options.js``, for
  generators without plugins) gets the widget once: those entries are dropped from this
  build and the plugin injects it, with the settings of ``extra.kb_qa``;
- ``index_on_build``: refreshes the kb-qa index after a build, taking heading ids from the
  rendered pages' table of contents so citations land on exactly the ids the site has;
- ``serve_api``: during ``mkdocs serve``, runs the kb-qa API in the same process on a
  loopback port (``port``, else ``KBQA_PORT``, else a free one) and points the widget at it,
  so ``mkdocs serve`` alone gives a working chat.
"""

from __future__ import annotations

import dataclasses
import logging
import os
import re
import shutil
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import urlparse

from mkdocs.config import base
from mkdocs.config import config_options as c
from mkdocs.config.defaults import MkDocsConfig
from mkdocs.exceptions import PluginError
from mkdocs.plugins import BasePlugin, CombinedEvent, event_priority
from mkdocs.structure.pages import Page
from mkdocs.utils import get_relative_url

from kb_qa.errors import ConfigError, InstallError
from kb_qa.ingest import render, render_files, versioning
from kb_qa.wiring import options as wiring
from kb_qa.wiring.options import check_endpoint
from kb_qa.wiring.tags import inject, is_wired, widget_tags

from . import preview  # relative: installed as kb_qa_mkdocs (pyproject.toml)
from .preview import log_problems

if TYPE_CHECKING:
    from mkdocs.structure.nav import Navigation
    from mkdocs.utils.templates import TemplateContext

    from kb_qa.serve.serving import BackgroundServer

log = logging.getLogger("mkdocs.plugins.kb-qa")


class _ToMkDocs(logging.Handler):
    """kb-qa's own log lines (an index run's warnings) in MkDocs' log, as the plugin's: they
    printed bare, through Python's last-resort handler."""

    def emit(self, record: logging.LogRecord) -> None:
        log.log(record.levelno, "kb-qa: %s", record.getMessage(), exc_info=record.exc_info)


_KB_QA_LOG = logging.getLogger("kb_qa")
_FORWARD = _ToMkDocs()  # on kb-qa's logger while MkDocs runs (on_startup to on_shutdown)

ASSET_DIR = wiring.ASSET_DIR
_SHORTCUT = re.compile(r"^((mod|ctrl|alt|shift|meta)\+)*[a-z0-9/.,;]$", re.I)


class KbQaConfig(base.Config):
    """Options of the kb-qa plugin."""

    enabled = c.Type(bool, default=True)
    endpoint = c.Type(str, default="")
    # Unset (""), the title and placeholder are the widget's own in each page's language.
    title = c.Type(str, default="")
    placeholder = c.Type(str, default="")
    # The widget's words replaced: {key: text}, or {language: {key: text}} for its pages.
    labels = c.Type(dict, default={})
    suggested_questions = c.ListOfItems(c.Type(str), default=[])
    shortcut = c.Type(str, default="mod+k")
    index_on_build = c.Type(bool, default=False)
    serve_api = c.Type(bool, default=True)
    port = c.Type(int, default=0)  # of the API under `mkdocs serve`; 0: KBQA_PORT, else free


class KbQaPlugin(BasePlugin[KbQaConfig]):
    """Adds the chat widget; optionally indexes the site and serves the API under `mkdocs serve`."""

    def __init__(self) -> None:
        self.command = "build"
        self.dirty = False
        self._pages: dict[str, render.RenderedPage] = {}  # by source file, absolute
        self._api: BackgroundServer | None = None  # while `mkdocs serve` runs
        self._told_port = 0  # a port changed under it, said once
        self._endpoint = ""
        self._site_url = ""
        self._options = wiring.WidgetOptions()
        self._port = 0
        self._port_source = ""
        self._built = False  # `mkdocs serve` built the site once: later builds are edits

    def on_startup(self, *, command: str, dirty: bool) -> None:
        self.command = command
        self.dirty = dirty  # a `mkdocs serve --dirty` rebuild renders the changed pages only
        if _FORWARD not in _KB_QA_LOG.handlers:
            _KB_QA_LOG.addHandler(_FORWARD)

    @event_priority(100)
    def _written_site_url(self, config: MkDocsConfig) -> None:
        """The site_url of mkdocs.yml, read before other plugins' ``on_config`` changes it:
        ``mike deploy 2.0`` makes it ``…/2.0``, while the index's citations carry the
        config's own, which is the prefix the widget must map onto the page's root (in the
        default version's folder when the site names one: ``versioning``, as the index)."""
        self._site_url = versioning.link_base(config.site_url or "", config)

    def _on_config(self, config: MkDocsConfig) -> MkDocsConfig | None:
        if not self.config.enabled:
            return config
        try:
            endpoint = check_endpoint(self.config.endpoint)
        except ConfigError as exc:
            raise PluginError(f"kb-qa: {exc}") from exc
        _check_labels(self.config.labels)
        if not _SHORTCUT.match(self.config.shortcut.strip()):
            raise PluginError(
                f"kb-qa: shortcut {self.config.shortcut!r} is not a key combination like "
                "'mod+k', 'ctrl+shift+k' or '/'."
            )
        others = [p for p in config.plugins.values() if isinstance(p, KbQaPlugin) and p is not self]
        if others:
            raise PluginError(
                "kb-qa: the kb-qa plugin is listed more than once under plugins: keep one."
            )
        self._endpoint = endpoint.rstrip("/")
        # mkdocs-static-i18n builds each further language with this config again: what is
        # said of the site is said once, at its first language
        first = not render_files.later_language(config)
        try:
            import kb_qa_widget  # noqa: F401  # a wheel built without the widget's bundle says so

            self._options = self._widget_options(config, first)
            wired = check_endpoint(self._options.endpoint, "extra.kb_qa.endpoint")
        except (ConfigError, InstallError) as exc:  # a site wired by `kb-qa init`, edited by hand
            raise PluginError(f"kb-qa: {exc}") from exc
        if not endpoint and wired:
            self._endpoint = wired.rstrip("/")
        if (
            first
            and self.command != "serve"
            and wiring.blocked_as_mixed_content(self._endpoint, self._site_url)
        ):
            log.warning(
                "kb-qa: endpoint %r is http while site_url is https: browsers block the chat's "
                "requests from the site's pages (mixed content). Serve the kb-qa API over "
                "https and give its https:// address.",
                self._endpoint,
            )
        if first and self.command == "build" and not self._endpoint:
            # Info, not a warning: an API behind the site's own host is a setup, and
            # `mkdocs build --strict` must not fail for it.
            log.info(
                "kb-qa: no endpoint is set: the built pages' chat asks /api/ask on the host "
                "that serves them. Set the plugin's endpoint to the kb-qa API's address if "
                "it runs elsewhere."
            )
        # Citation URLs are absolute when the site has a site_url; the widget maps them back
        # onto the site it runs on (a local `mkdocs serve`, a preview deploy, a version):
        # self._site_url is the config's, as the index has it (_written_site_url).
        if self.command == "serve" and self.config.serve_api:
            # The preview answers from the text being edited, whatever the built site calls.
            if self._endpoint and first:
                log.info(
                    "kb-qa: the preview's chat asks the API started here, not the endpoint %s "
                    "(the built site's); set serve_api: false to preview with that one",
                    self._endpoint,
                )
            self._port = self._api_port()
            self._endpoint = self._start_api(config) or self._endpoint
            if self._api is not None:
                # `mkdocs serve` rewrote config.site_url to the dev address; the index keeps
                # the site_url of mkdocs.yml, and that is the prefix its citations carry.
                self._site_url = self._api.kb.store.meta("site_url") or self._site_url
        if first:
            self._pages = {}  # a translated site's later languages add theirs
        return config

    on_config = CombinedEvent(_written_site_url, _on_config)

    def _widget_options(self, config: MkDocsConfig, first: bool) -> wiring.WidgetOptions:
        """The widget's title and questions: the plugin's own, or on a site wired by
        ``kb-qa init``, those of ``extra.kb_qa`` (what every generator shows). A wired site
        loses its kb-qa extra_javascript/extra_css entries for this build, so the widget is
        on each page once (injected here, pointing at the API under serve). ``first``: the
        build of the site's first language (a translated site's others say nothing again)."""
        if not is_wired(config.extra_javascript):
            return wiring.WidgetOptions(
                title=self.config.title,
                suggested_questions=tuple(self.config.suggested_questions),
            )
        config.extra_javascript = [e for e in config.extra_javascript if not is_wired([e])]
        config.extra_css = [
            e for e in config.extra_css if not str(e).lstrip("/").endswith(wiring.CSS_PATH)
        ]
        if first:  # said once for a translated site (its first language)
            log.info("kb-qa: the site is wired by `kb-qa init`: the plugin adds the widget, once")
        return wiring.options_from(config.extra) or wiring.WidgetOptions()

    def _api_port(self) -> int:
        """The port of the API under `mkdocs serve`: the ``port`` option, else ``KBQA_PORT``,
        else 0 (a free port, new on every start)."""
        port, source = self.config.port, "the kb-qa plugin's `port` option"
        if not port and os.environ.get("KBQA_PORT", "").strip():
            raw, source = os.environ["KBQA_PORT"].strip(), "KBQA_PORT"
            try:
                port = int(raw)
            except ValueError:
                raise PluginError(f"kb-qa: {source} must be a port number, not {raw!r}.") from None
        if not 0 <= port <= 65535:
            raise PluginError(
                f"kb-qa: {source} must be a port number (1-65535, or 0 for a free one), not {port}."
            )
        self._port_source = source
        return port

    def _start_api(self, config: MkDocsConfig) -> str:
        if self._api is None:
            vault, config_file = _site_config(config)
            # The API runs on another port than the site, so the browser needs CORS for it.
            dev_addr = f"{config.dev_addr.host}:{config.dev_addr.port}"
            self._api = preview.start_api(
                vault, self._port, self._port_source, dev_addr, config_file
            )
        elif self._port not in (0, self._told_port) and not self._api.url.endswith(
            f":{self._port}"
        ):  # mkdocs.yml edited under `mkdocs serve`: the API cannot move while it serves
            self._told_port = self._port  # news (`--strict` must not abort on it)
            log.info(
                "kb-qa: the chat's API stays at %s: a new port (%d) takes effect when "
                "`mkdocs serve` restarts",
                self._api.url,
                self._port,
            )
        return self._api.url if self._api is not None else ""

    def on_page_context(
        self, context: TemplateContext, /, *, page: Page, config: MkDocsConfig, nav: Navigation
    ) -> TemplateContext | None:
        if self.config.enabled and self.config.index_on_build and page.file.abs_src_path:
            # The page as this build rendered it, for the index: its URL, content and
            # whether the Markdown changed on its way (hooks, plugins, includes). A page a
            # translation falls back to keeps its own language's URL (the first build's).
            self._pages.setdefault(
                page.file.abs_src_path,
                render.RenderedPage(
                    path=page.file.abs_src_path,
                    url=page.url,
                    title=str(page.title or ""),
                    html=page.content or "",
                    transformed=render.transformed(_source(page), page.markdown or ""),
                ),
            )
        return context

    def on_post_page(self, output: str, /, *, page: Page, config: MkDocsConfig) -> str | None:
        if not self.config.enabled:
            return output
        return inject(output, self._tags(page.url))

    def on_post_template(
        self, output_content: str, /, *, template_name: str, config: MkDocsConfig
    ) -> str | None:
        if not self.config.enabled or template_name != "404.html":
            return output_content
        # The 404 page is served at any path, so its links start at the site's root path.
        base = urlparse(config.site_url or "").path or "/"
        return inject(output_content, self._tags("", base=base.rstrip("/") + "/"))

    def _tags(self, page_url: str, base: str = "") -> str:
        if base:
            css, js, root = f"{base}{ASSET_DIR}/kb-qa.css", f"{base}{ASSET_DIR}/kb-qa.js", base
        else:
            css = get_relative_url(f"{ASSET_DIR}/kb-qa.css", page_url)
            js = get_relative_url(f"{ASSET_DIR}/kb-qa.js", page_url)
            root = get_relative_url(".", page_url)
        options: dict[str, Any] = {
            "endpoint": self._endpoint,
            "title": self._options.title,
            "placeholder": self.config.placeholder,
            "suggested": list(self._options.suggested_questions),
            "shortcut": self.config.shortcut,
            "root": root,
            "site_url": self._site_url,
        }
        if self.config.labels:
            options["labels"] = self.config.labels
        return widget_tags(css, js, options)

    def on_post_build(self, *, config: MkDocsConfig) -> None:
        if not self.config.enabled:
            return
        from kb_qa_widget import ASSETS, FILES

        target = Path(config.site_dir) / ASSET_DIR
        target.mkdir(parents=True, exist_ok=True)
        for name in FILES:
            shutil.copyfile(ASSETS / name, target / name)
        if render_files.languages_to_come(config):
            return  # indexed once, after the last language of a translated site
        if self.config.index_on_build:
            self._index(config)
        elif self._api is not None:
            if self._built:  # the first build is of the pages the API's index just read
                preview.refresh(self._api)
            self._built = True

    def _index(self, config: MkDocsConfig) -> None:
        from kb_qa import KbQaError, KnowledgeBase
        from kb_qa.serve.serving import progress_logger

        vault, config_file = _site_config(config)
        log.info("kb-qa: bringing the index of %s up to date…", vault)
        rendered = {}
        for src, page in self._pages.items():
            try:
                rel = Path(src).resolve().relative_to(vault).as_posix()
            except ValueError:
                continue  # a page a plugin generated outside the site's folder
            rendered[rel] = dataclasses.replace(page, path=rel)
        try:
            with KnowledgeBase(vault, generator="mkdocs", config_file=config_file) as kb:
                report = kb.index(
                    progress_logger(log, "kb-qa: "), rendered, complete=not self.dirty
                )
        except KbQaError as exc:
            raise PluginError(f"kb-qa: indexing failed: {exc}") from exc
        log.info(
            "kb-qa: indexed %d files, %d chunks (%d embedded; %s) in %.1f s",
            report.files,
            report.chunks,
            report.embedded,
            report.spent,
            report.seconds,
        )
        log_problems(report)

    def on_shutdown(self) -> None:
        if self._api is not None:
            self._api.stop()
            self._api = None
        _KB_QA_LOG.removeHandler(_FORWARD)


def _site_config(config: MkDocsConfig) -> tuple[Path, str]:
    """The vault (the config's folder) and the config file this build reads, by name: a
    site built with `mkdocs build -f site.yml` was indexed as a folder of notes, since kb-qa
    looked for mkdocs.yml there, and cited the server's file paths."""
    path = Path(config.config_file_path).resolve()
    return path.parent, path.name


def _check_labels(labels: dict[Any, Any]) -> None:
    """The ``labels`` option: each a string (``send: Ask``), or a language's own strings
    (``fr: {send: Demander}``); which keys there are is the widget's to say (it warns in
    the browser's console about one it does not know)."""
    for key, value in labels.items():
        inner = value.items() if isinstance(value, dict) else [(key, value)]
        if not isinstance(key, str) or not all(
            isinstance(k, str) and isinstance(v, str) for k, v in inner
        ):
            raise PluginError(
                f"kb-qa: labels: {key!r} must be a text (send: Ask) or a language's texts "
                "(fr: {send: Demander}); the keys are listed under the widget's options."
            )


def _source(page: Page) -> str:
    """The page's Markdown as ``read_source`` gets it from its file, before any plugin or
    hook changed it (whatever their order); "" when the file cannot be read again."""
    from mkdocs.utils import meta

    try:
        return meta.get_data(page.file.content_string)[0]
    except (OSError, ValueError):
        return ""
