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

A folder of built HTML pages (no config) gets the drop-in tags in every page instead.
The kb-qa MkDocs plugin recognises a wired site (``is_wired``) and does not add a second copy.

Every write is planned first and applied all or nothing (``Plan.apply``): a file where a
folder must go, a config or page that is a symlink out of the site, a config that is not
UTF-8 (or UTF-16 with a BOM) stop ``init`` with a message before anything is written. Each
file keeps its encoding (a Latin-1 page stays Latin-1) and its line endings (CRLF stays).
"""

from __future__ import annotations

import codecs
import contextlib
import difflib
import html
import json
import os
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from kb_qa.errors import ConfigError

ASSET_DIR = "kb-qa"
LOADER = "kb-qa-options.js"
LOADER_PATH = f"{ASSET_DIR}/{LOADER}"
CSS_PATH = f"{ASSET_DIR}/kb-qa.css"
EXTRA_KEY = "kb_qa"
# Where `kb-qa serve` listens by default: the widget's API while a site is previewed on
# this machine (`zensical serve` next to `kb-qa serve SITE --watch`).
PREVIEW_ENDPOINT = "http://127.0.0.1:8321"
_TAG_RE = re.compile(r"<(?:link|script)\b[^>]*\bdata-kb-qa[^>]*>(?:</script>)?\n?")


@dataclass(frozen=True)
class WidgetOptions:
    """What the site owner configures about the widget (``extra.kb_qa`` in the site config)."""

    endpoint: str = ""
    title: str = "Ask the docs"
    suggested_questions: tuple[str, ...] = ()
    preview_endpoint: str = PREVIEW_ENDPOINT

    def as_config(self) -> dict[str, Any]:
        """The ``extra.kb_qa`` mapping."""
        data: dict[str, Any] = {
            "endpoint": self.endpoint,
            "title": self.title,
            "suggested_questions": list(self.suggested_questions),
        }
        if self.preview_endpoint != PREVIEW_ENDPOINT:
            data["preview_endpoint"] = self.preview_endpoint
        return data

    def merged(self, **changes: Any) -> WidgetOptions:
        """A copy with the given (non-None) values replaced."""
        values = {**self.__dict__, **{k: v for k, v in changes.items() if v is not None}}
        values["suggested_questions"] = tuple(values["suggested_questions"])
        return WidgetOptions(**values)


def plugin_options(config: Any) -> WidgetOptions | None:
    """The options of the kb-qa MkDocs plugin in a config's ``plugins`` (None without it), so
    that wiring a site shows the title and questions its plugin already had."""
    plugins = config.get("plugins") if isinstance(config, dict) else None
    found: Any = None
    if isinstance(plugins, dict):
        found = plugins.get("kb-qa", None if "kb-qa" not in plugins else {})
    elif isinstance(plugins, list):
        for item in plugins:
            if item == "kb-qa":
                found = {}
            elif isinstance(item, dict) and "kb-qa" in item:
                found = item["kb-qa"] or {}
    if not isinstance(found, dict):
        return None
    return options_from({EXTRA_KEY: found})


def options_from(extra: Any) -> WidgetOptions | None:
    """``extra.kb_qa`` of a site config as options (None when it is absent)."""
    # Mapping: MkDocs hands plugins its extra as a config object, not a dict.
    if not isinstance(extra, Mapping) or not isinstance(extra.get(EXTRA_KEY), Mapping):
        return None
    raw = extra[EXTRA_KEY]
    suggested = raw.get("suggested_questions") or []
    if not isinstance(suggested, list):
        raise ConfigError(f"extra.{EXTRA_KEY}.suggested_questions must be a list of questions.")
    return WidgetOptions(
        endpoint=str(raw.get("endpoint") or ""),
        title=str(raw.get("title") or WidgetOptions.title),
        suggested_questions=tuple(str(q) for q in suggested),
        preview_endpoint=str(raw.get("preview_endpoint") or PREVIEW_ENDPOINT),
    )


@dataclass(frozen=True)
class Encoding:
    """How a file's text is stored: its codec and whether its lines end in CRLF."""

    codec: str = "utf-8"
    crlf: bool = False
    html: bool = False  # characters the codec lacks become character references

    def encode(self, text: str) -> bytes:
        """``text`` (LF line ends) as the file's bytes."""
        if self.crlf:
            text = text.replace("\n", "\r\n")
        return text.encode(self.codec, errors="xmlcharrefreplace" if self.html else "strict")


_CHARSET_RE = re.compile(rb"<meta[^>]+charset=[\"']?([A-Za-z0-9_.:-]+)", re.IGNORECASE)


def read_text(path: Path, *, page: bool = False) -> tuple[str, Encoding]:
    """A file's text with LF line ends, and how to write it back the same way.

    Configs must be UTF-8 (or UTF-16/UTF-8 with a BOM), as MkDocs and Zensical read them;
    a page that is not UTF-8 is read in the charset its ``<meta>`` declares, else Latin-1
    (which gives every byte back unchanged)."""
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise ConfigError(f"Cannot read {path}: {exc.strerror or exc}.") from exc
    if data.startswith(codecs.BOM_UTF8):
        codec = "utf-8-sig"
    elif data.startswith((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)):
        codec = "utf-16"
    else:
        codec = "utf-8"
    try:
        text = data.decode(codec)
    except UnicodeDecodeError as exc:
        if not page:
            raise ConfigError(
                f"{path} is not UTF-8 (byte {exc.start} cannot be read), so kb-qa init "
                "would corrupt it, and MkDocs and Zensical read it as UTF-8. Save it as "
                "UTF-8 and run again."
            ) from exc
        codec, text = _page_text(data)
    crlf = text.count("\r\n") * 2 > text.count("\n")
    return text.replace("\r\n", "\n") if crlf else text, Encoding(codec, crlf, page)


def _page_text(data: bytes) -> tuple[str, str]:
    """(codec, text) of a page that is not UTF-8."""
    declared = _CHARSET_RE.search(data[:4096])
    if declared:
        name = declared.group(1).decode("ascii")
        try:
            codecs.lookup(name)
            return name, data.decode(name)
        except (LookupError, UnicodeDecodeError):
            pass
    return "latin-1", data.decode("latin-1")


@dataclass
class Change:
    """One file as it is and as ``init`` would leave it (``before`` None: a new file)."""

    path: Path
    before: str | None
    after: str
    encoding: Encoding = field(default_factory=Encoding)

    def diff(self, root: Path) -> str:
        """A unified diff relative to ``root``."""
        name = (
            self.path.relative_to(root).as_posix()
            if self.path.is_relative_to(root)
            else str(self.path)
        )
        before = (self.before or "").splitlines(keepends=True)
        lines = difflib.unified_diff(
            before,
            self.after.splitlines(keepends=True),
            "/dev/null" if self.before is None else f"a/{name}",
            f"b/{name}",
        )
        text = "".join(lines)
        return text if text.endswith("\n") else text + "\n"


@dataclass
class Plan:
    """What wiring a site takes: the kind of site and the file changes (empty: wired)."""

    root: Path
    kind: str  # "zensical.toml + mkdocs.yml", "mkdocs.yml", "html", ...
    changes: list[Change] = field(default_factory=list)

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
        if docs_dir not in docs_dirs:
            docs_dirs[docs_dir] = wanted
            result.changes += _asset_changes(docs_dir / ASSET_DIR, wanted, site_url)
    return result


# --- assets ----------------------------------------------------------------------------------


def loader_script(options: WidgetOptions, site_url: str) -> str:
    """``kb-qa-options.js``: starts ``kb-qa.js`` (beside it) with the site's widget options."""
    data = {
        "endpoint": options.endpoint,
        "preview_endpoint": options.preview_endpoint,
        "title": options.title,
        "suggested": list(options.suggested_questions),
        "site_url": site_url,
    }
    return _LOADER_JS.replace("OPTIONS", json.dumps(data, ensure_ascii=False))


_LOADER_JS = """\
// Generated by `kb-qa init` from the site config (extra.kb_qa): edit the settings there and
// run `kb-qa init` again. Loads kb-qa.js (beside this file) with the widget's options,
// which an extra_javascript entry cannot pass as attributes.
(function () {
  if (document.querySelector("script[data-kb-qa-options]")) return; // already on the page
  var options = OPTIONS;
  var me = document.currentScript;
  var src = me && me.src ? me.src : new URL("kb-qa/kb-qa-options.js", location.href).href;
  // The site's root is the folder above kb-qa/, wherever the site is served from.
  options.root = new URL("..", src).href;
  // Previewed on this machine without an endpoint: the API of `kb-qa serve` nearby.
  var local = /^(localhost|127\\.0\\.0\\.1|\\[::1\\])$/.test(location.hostname);
  if (!options.endpoint && local && options.preview_endpoint.indexOf(location.origin) !== 0) {
    options.endpoint = options.preview_endpoint;
  }
  var script = document.createElement("script");
  script.src = src.replace(/kb-qa-options\\.js(\\?.*)?$/, "kb-qa.js");
  script.setAttribute("data-kb-qa-options", JSON.stringify(options));
  document.head.appendChild(script);
})();
"""


def _asset_changes(target: Path, options: WidgetOptions, site_url: str) -> list[Change]:
    from kb_qa_widget import ASSETS, FILES

    wanted = {name: (ASSETS / name).read_text(encoding="utf-8") for name in FILES}
    wanted[LOADER] = loader_script(options, site_url)
    return _file_changes(target, wanted)


def _file_changes(target: Path, wanted: dict[str, str]) -> list[Change]:
    changes = []
    for name, text in wanted.items():
        path = target / name
        before = read_text(path)[0] if path.is_file() and not path.is_symlink() else None
        if before != text:
            changes.append(Change(path, before, text))
    return changes


# --- zensical.toml ---------------------------------------------------------------------------


def _plan_toml(
    path: Path, options: dict[str, Any]
) -> tuple[Change | None, Path, WidgetOptions, str]:
    import tomlkit
    import tomlkit.exceptions
    from tomlkit.items import InlineTable

    before, encoding = read_text(path)
    try:
        document = tomlkit.parse(before)
    except tomlkit.exceptions.TOMLKitError as exc:
        raise ConfigError(f"{path} is not valid TOML: {exc}. Fix it and run again.") from exc
    project: Any = document["project"] if "project" in document else document
    extra = project.get("extra")
    if extra is not None and not isinstance(extra, dict):
        raise ConfigError(f"{path}: extra must be a table. Fix it and run again.")
    wanted = options_from(extra.unwrap() if extra is not None else None) or WidgetOptions()
    wanted = wanted.merged(**options)
    for key, item in (("extra_css", CSS_PATH), ("extra_javascript", LOADER_PATH)):
        entries = project.get(key)
        if entries is None:
            entries = tomlkit.array()
            project[key] = entries
        if not isinstance(entries, list):
            raise ConfigError(f"{path}: {key} must be a list. Fix it and run again.")
        if not any(_entry_path(e) == item for e in entries):
            entries.append(item)
    if extra is None:
        extra = tomlkit.table(is_super_table=True)
        project["extra"] = extra
    current = extra.get(EXTRA_KEY)
    if current is None or _unwrapped(current) != wanted.as_config():
        # Inside an inline table (`extra = {...}`) only an inline table may stand.
        inline = isinstance(extra, InlineTable)
        table: Any = tomlkit.inline_table() if inline else tomlkit.table()
        for key, value in wanted.as_config().items():
            table[key] = value
        extra[EXTRA_KEY] = table
    after = tomlkit.dumps(document)
    docs_dir = path.parent / str(project.get("docs_dir") or "docs")
    site_url = str(project.get("site_url") or "")
    return _change(path, before, after, encoding), docs_dir, wanted, site_url


def _unwrapped(item: Any) -> Any:
    return item.unwrap() if hasattr(item, "unwrap") else item


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
    text = yaml_edit.ensure_item(before, str(path), "extra_css", CSS_PATH, _entry_path)
    text = yaml_edit.ensure_item(text, str(path), "extra_javascript", LOADER_PATH, _entry_path)
    text = yaml_edit.ensure_mapping(text, str(path), "extra", EXTRA_KEY, wanted.as_config())
    docs_dir = path.parent / str(data.get("docs_dir") or "docs")
    site_url = str(data.get("site_url") or "")
    return _change(path, before, text, encoding), docs_dir, wanted, site_url


def _entry_path(entry: Any) -> str:
    """The path of an extra_javascript/extra_css entry (a string, or a mapping with path)."""
    if isinstance(entry, dict):
        return str(entry.get("path", ""))
    return str(getattr(entry, "path", entry))  # MkDocs' ExtraScriptValue has .path


def _change(path: Path, before: str, after: str, encoding: Encoding | None = None) -> Change | None:
    return Change(path, before, after, encoding or Encoding()) if after != before else None


# --- a folder of built HTML pages -------------------------------------------------------------


def _plan_html(root: Path, options: dict[str, Any]) -> Plan:
    """Every page gets the drop-in tags (replacing kb-qa's older ones), the files go in kb-qa/."""
    result = Plan(root, "html")
    wanted = WidgetOptions().merged(**options)
    pages = sorted(p for p in root.rglob("*.html") if ASSET_DIR not in p.relative_to(root).parts)
    for page in pages:
        if page.is_symlink() or not page.resolve().is_relative_to(root):
            continue  # a link (out of the site, or to a page wired under its own name)
        before, encoding = read_text(page, page=True)
        after = html_with_tags(before, page_tags(page.relative_to(root).as_posix(), wanted))
        if after != before:
            result.changes.append(Change(page, before, after, encoding))
    from kb_qa_widget import ASSETS, FILES

    files = {name: (ASSETS / name).read_text(encoding="utf-8") for name in FILES}
    result.changes += _file_changes(root / ASSET_DIR, files)
    return result


def page_tags(page: str, options: WidgetOptions) -> str:
    """The widget's <link> and <script> for a page at ``page`` (a path under the site root)."""
    up = "../" * page.count("/")
    data = {
        "endpoint": options.endpoint,
        "title": options.title,
        "suggested": list(options.suggested_questions),
        "root": up or "./",
    }
    return widget_tags(f"{up}{CSS_PATH}", f"{up}{ASSET_DIR}/kb-qa.js", data)


def widget_tags(css: str, js: str, options: dict[str, Any]) -> str:
    """The stylesheet and script tags that put the widget on a page, its options as JSON."""
    data = html.escape(json.dumps(options, ensure_ascii=False), quote=True)
    return (
        f'<link rel="stylesheet" href="{html.escape(css)}" data-kb-qa>\n'
        f'<script src="{html.escape(js)}" defer data-kb-qa-options="{data}"></script>\n'
    )


def html_with_tags(page: str, tags: str) -> str:
    """``page`` with kb-qa's tags (and no older copy of them) at the end of <head>."""
    return inject(_TAG_RE.sub("", page), tags)


def inject(page: str, tags: str) -> str:
    """Put the widget's tags at the end of <head> (or the start of the document)."""
    marker = page.find("</head>")
    if marker == -1:
        return tags + page
    return page[:marker] + tags + page[marker:]


# --- is a site wired? ------------------------------------------------------------------------


def is_wired(extra_javascript: Iterable[Any]) -> bool:
    """Whether a site's extra_javascript loads the widget the way ``kb-qa init`` wires it."""
    return any(_entry_path(e).lstrip("/").endswith(LOADER_PATH) for e in extra_javascript)
