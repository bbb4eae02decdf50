"""Anchor parity: kb-qa's heading anchors against the ids of a real ``mkdocs build`` or
``zensical build``.

Used by ``tests/test_anchor_parity.py`` and ``bench/anchor_parity.py`` (the one place
this logic lives).

For a site (``sample_site/`` or a corpus folder holding ``mkdocs.yml`` + ``docs/``):

1. copy it to a temporary folder and write a copy of its ``mkdocs.yml`` with only what cannot
   work offline/here removed: plugins that are not installed or need the network (``search``
   is always kept), ``hooks``, ``INHERIT``, a missing ``custom_dir`` or ``watch`` path,
   markdown extensions whose module is not installed, and ``strict`` (warnings about the
   removed parts must not stop the build);
2. run the real ``mkdocs build`` (or ``zensical build``: ``generator="zensical"``) on it;
   a ``zensical.toml`` is built as it is (Zensical ignores what it does not know);
3. for every Markdown page kb-qa indexes, read the heading ids (h1-h6 ``id`` inside the page's
   main content) from the built HTML, found with the same rule as ``Site.url_for``;
4. line them up with the headings kb-qa chunked (``chunk_document``), in order, and count
   the kb-qa headings whose anchor is the id of the matching rendered heading.
"""

from __future__ import annotations

import importlib.util
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterable
from dataclasses import dataclass, field
from html.parser import HTMLParser
from importlib.metadata import entry_points
from pathlib import Path
from typing import Any
from urllib.parse import unquote

import yaml

from kb_qa import KnowledgeBase
from kb_qa.ingest import anchors
from kb_qa.ingest.site import Site, load_site
from kb_qa.types import Chunk, Heading

REPO = Path(__file__).resolve().parents[1]
SAMPLE_SITE = REPO / "sample_site"
# sample_site's pages with a zensical.toml instead of mkdocs.yml (URLs and slugs changed).
SAMPLE_ZENSICAL_TOML = Path(__file__).resolve().parent / "sites" / "sample_site.zensical.toml"
CORPORA = ("mkdocs", "mkdocs-material", "pydantic", "uv")
GENERATORS = ("mkdocs", "zensical")
# Installed plugins that fetch things from the internet while building.
NETWORK_PLUGINS = frozenset({"social", "material/social", "privacy", "material/privacy"})
_PLUGIN_ERROR = re.compile(r"ERROR\s+-\s+([a-z][\w-]*):")
ZENSICAL_UNRENDERED = ("mkdocstrings", "autorefs")
RECORD_HOOK = Path(__file__).resolve().parent / "sites" / "record_pages.py"


def corpora_dir() -> Path:
    """Where the public corpora live: ``KBQA_CORPORA`` or ``shared/corpora`` beside the repo."""
    env = os.environ.get("KBQA_CORPORA")
    return Path(env) if env else REPO.parent / "shared" / "corpora"


def zensical_installed() -> bool:
    """Whether ``zensical build`` can run here (it is in the test extras)."""
    return _module_installed("zensical")


def zensical_sample_site(workdir: Path) -> Path:
    """A copy of sample_site's docs with ``tests/sites/sample_site.zensical.toml`` as its config."""
    root = workdir / "sample_site_toml"
    shutil.copytree(SAMPLE_SITE / "docs", root / "docs")
    shutil.copyfile(SAMPLE_ZENSICAL_TOML, root / "zensical.toml")
    return root


def sites() -> dict[str, Path]:
    """``sample_site`` plus every corpus that exists here, by name."""
    found = {"sample_site": SAMPLE_SITE}
    base = corpora_dir()
    for name in CORPORA:
        if (base / name / "mkdocs.yml").is_file():
            found[name] = base / name
    return found


# --- a copy of mkdocs.yml that builds here -------------------------------------------------


@dataclass
class _Tagged:
    """A YAML value with a tag kept as written (``!ENV``, ``!!python/name:...``)."""

    tag: str
    value: Any


class _Loader(yaml.SafeLoader):
    pass


class _Dumper(yaml.SafeDumper):
    pass


def _construct_tagged(loader: yaml.SafeLoader, suffix: str, node: yaml.Node) -> _Tagged:
    if isinstance(node, yaml.ScalarNode):
        value: Any = loader.construct_scalar(node)
    elif isinstance(node, yaml.SequenceNode):
        value = loader.construct_sequence(node, deep=True)
    else:
        value = loader.construct_mapping(node, deep=True)
    return _Tagged(node.tag, value)


def _represent_tagged(dumper: yaml.SafeDumper, data: _Tagged) -> yaml.Node:
    if isinstance(data.value, list):
        return dumper.represent_sequence(data.tag, data.value)
    if isinstance(data.value, dict):
        return dumper.represent_mapping(data.tag, data.value)
    return dumper.represent_scalar(data.tag, data.value)


_Loader.add_multi_constructor("", _construct_tagged)
_Dumper.add_representer(_Tagged, _represent_tagged)


def read_config(path: Path) -> dict[str, Any]:
    """An ``mkdocs.yml`` with its tags (``!ENV``, ``!!python/name:...``) kept as written."""
    return yaml.load(path.read_text(encoding="utf-8"), Loader=_Loader)  # noqa: S506


def write_config(path: Path, config: dict[str, Any]) -> None:
    """Write ``config`` (from :func:`read_config`) back, tags and key order as they were."""
    path.write_text(
        yaml.dump(config, Dumper=_Dumper, allow_unicode=True, sort_keys=False), encoding="utf-8"
    )


def _entry_point_names(group: str) -> set[str]:
    return {ep.name for ep in entry_points(group=group)}


def _module_installed(module: str) -> bool:
    try:
        return importlib.util.find_spec(module) is not None
    except (ImportError, ValueError):
        return False


def _extension_installed(name: str) -> bool:
    """Would Python-Markdown find this extension (entry point name or module path)?"""
    if name in _entry_point_names("markdown.extensions"):
        return True
    return _module_installed(name.split(":", 1)[0])


def entry_name(item: Any) -> str | None:
    if isinstance(item, str):
        return item
    if isinstance(item, dict) and len(item) == 1:
        return str(next(iter(item)))
    return None


def _plugin_usable(name: str, theme: str) -> bool:
    if name == "search":
        return True
    installed = _entry_point_names("mkdocs.plugins")
    candidates = {name} | ({f"{theme}/{name}"} if theme and "/" not in name else set())
    if candidates & NETWORK_PLUGINS:
        return False
    return bool(candidates & installed)


def _plugin_missing_files(name: str, item: Any, root: Path, config: dict[str, Any]) -> str:
    """A file an installed plugin needs that the copy lacks ("" when none is missing)."""
    options: Any = {}
    if isinstance(item, tuple):
        options = item[1]
    elif isinstance(item, dict):
        options = item.get(name)
    options = options if isinstance(options, dict) else {}
    if name in ("blog", "material/blog") and options.get("authors", True):
        # Material's blog plugin fails on posts naming authors that its authors file lacks.
        docs = root / str(config.get("docs_dir") or "docs")
        blog_dir = str(options.get("blog_dir", "blog"))
        authors = str(options.get("authors_file", "{blog}/.authors.yml")).format(blog=blog_dir)
        if not (docs / authors).is_file():
            return authors
    return ""


def offline_config(
    config: dict[str, Any], root: Path, hooks: bool = False
) -> tuple[dict[str, Any], list[str]]:
    """The config with what cannot work here removed, and a note of each removal; with
    ``hooks`` the site's hooks stay and a blog's missing authors file is stubbed."""
    config = dict(config)
    removed: list[str] = []
    for key in ("INHERIT",) if hooks else ("hooks", "INHERIT"):
        if config.pop(key, None) is not None:
            removed.append(key)
    if hooks and isinstance(config.get("hooks"), list):
        absent = [h for h in config["hooks"] if not (root / str(h)).is_file()]
        config["hooks"] = [h for h in config["hooks"] if h not in absent]
        removed += [f"hook {h} (missing)" for h in absent]
    if config.pop("strict", None):
        removed.append("strict")
    watch = config.get("watch")
    if isinstance(watch, list):
        missing = [w for w in watch if not (root / str(w)).exists()]
        if missing:
            config["watch"] = [w for w in watch if w not in missing]
            removed.append(f"watch {', '.join(map(str, missing))} (missing)")
    theme = config.get("theme")
    theme_name = ""
    if isinstance(theme, dict):
        theme = dict(theme)
        theme_name = str(theme.get("name") or "")
        custom = theme.get("custom_dir")
        if custom and not (root / str(custom)).is_dir():
            theme.pop("custom_dir")
            removed.append(f"theme.custom_dir {custom} (missing)")
        config["theme"] = theme
    elif isinstance(theme, str):
        theme_name = theme

    plugins = config.get("plugins")
    if plugins is not None:
        items = list(plugins.items()) if isinstance(plugins, dict) else list(plugins)
        kept: list[Any] = []
        for item in items:
            name = item[0] if isinstance(plugins, dict) else entry_name(item)
            if name is None or _plugin_usable(name, theme_name):
                missing = _plugin_missing_files(name, item, root, config) if name else ""
                if missing and hooks:
                    _stub_authors(root, config, missing)
                    removed.append(f"{missing} (missing; stubbed with the posts' authors)")
                    missing = ""
                if not missing:
                    kept.append(item)
                    continue
                removed.append(f"plugin {name} ({missing} missing)")
            else:
                removed.append(f"plugin {name}")
        config["plugins"] = dict(kept) if isinstance(plugins, dict) else kept

    extensions = config.get("markdown_extensions")
    if isinstance(extensions, list):
        kept_ext = []
        for item in extensions:
            name = entry_name(item)
            if name is not None and not _extension_installed(name):
                removed.append(f"markdown extension {name}")
                continue
            kept_ext.append(item)
        config["markdown_extensions"] = kept_ext
    return config, removed


_AUTHORS = re.compile(r"^authors:[ \t]*\n((?:[ \t]*-[ \t]*\S+[ \t]*\n)+)", re.M)


def _stub_authors(root: Path, config: dict[str, Any], authors_file: str) -> None:
    """Write the blog's authors file the corpus lacks, naming every author its posts name
    (the authors' names and avatars change no heading id or URL)."""
    docs = root / str(config.get("docs_dir") or "docs")
    names: set[str] = set()
    for post in docs.rglob("*.md"):
        for block in _AUTHORS.findall(post.read_text(encoding="utf-8", errors="replace")):
            names.update(line.strip().lstrip("-").strip() for line in block.splitlines())
    names.discard("")
    authors = {n: {"name": n, "description": "", "avatar": ""} for n in sorted(names)}
    (docs / authors_file).parent.mkdir(parents=True, exist_ok=True)
    (docs / authors_file).write_text(yaml.safe_dump({"authors": authors}), encoding="utf-8")


_FRONT_TEMPLATE = re.compile(
    r"\A---[ \t]*\n(?:(?!---|\.\.\.).*\n)*?template:\s*['\"]?([^'\"\n]+?)['\"]?\s*\n"
)


def _stub_missing_templates(config: dict[str, Any], root: Path) -> list[str]:
    """Templates that only a missing custom_dir had: page templates named in front matter
    (stubbed to extend ``main.html``) and Material's analytics partial of ``extra.analytics``
    (stubbed empty). The stubs go in a folder made the theme's custom_dir.
    """
    from mkdocs.utils import get_theme_dir

    theme = config.get("theme")
    theme = {"name": theme} if isinstance(theme, str) else theme
    if not isinstance(theme, dict) or not theme.get("name") or theme.get("custom_dir"):
        return []
    theme_dir = Path(get_theme_dir(str(theme["name"])))
    docs = root / str(config.get("docs_dir") or "docs")
    wanted: dict[str, str] = {}
    for page in docs.rglob("*.md"):
        match = _FRONT_TEMPLATE.match(page.read_text(encoding="utf-8", errors="replace"))
        if match and not (theme_dir / match.group(1)).is_file():
            wanted[match.group(1)] = '{% extends "main.html" %}\n'
    analytics = (config.get("extra") or {}).get("analytics") or {}
    provider = analytics.get("provider") if isinstance(analytics, dict) else None
    partial = f"partials/integrations/analytics/{provider}.html"
    if provider and (theme_dir / "partials").is_dir() and not (theme_dir / partial).is_file():
        wanted[partial] = ""
    stubs = root / "parity-overrides"
    for name, text in wanted.items():
        (stubs / name).parent.mkdir(parents=True, exist_ok=True)
        (stubs / name).write_text(text, encoding="utf-8")
    if wanted:
        config["theme"] = {**theme, "custom_dir": stubs.name}
    return [f"template {name} (missing; stubbed)" for name in sorted(wanted)]


@dataclass
class Build:
    """A built copy of a site."""

    source: Path  # the original site folder (read only)
    root: Path  # the writable copy that was built
    site_dir: Path
    removed: list[str]
    seconds: float
    log: str
    pages: dict[str, str] = field(default_factory=dict)  # vault path -> URL (``hooks`` builds)


def build_site(
    source: Path,
    workdir: Path,
    generator: str = "mkdocs",
    hooks: bool = False,
    drop: tuple[str, ...] = (),
    retry: bool = False,
) -> Build:
    """Copy ``source`` into ``workdir``, make its config work here and build it with
    ``generator`` (``mkdocs build``, or ``zensical build``). With ``hooks`` (MkDocs only) the
    site's hooks run and the build records each page's source and URL (``Build.pages``)."""
    root = workdir / "src"
    # Not a previous build or kb-qa index at the top of the site folder.
    top = str(source)
    shutil.copytree(
        source, root, ignore=lambda d, names: {".kb-qa", "site"} & set(names) if d == top else set()
    )
    for path in [root, *root.rglob("*")]:
        path.chmod(0o755 if path.is_dir() else 0o644)
    site_dir = workdir / "site"
    removed: list[str] = []
    toml_file = root / "zensical.toml"
    if generator == "zensical" and toml_file.is_file():
        config_file = toml_file
        project = _zensical_project(toml_file)
        site_dir = root / str(project.get("site_dir") or "site")
    else:
        config_file = next(p for p in (root / "mkdocs.yml", root / "mkdocs.yaml") if p.is_file())
        config = read_config(config_file)
        config, removed = offline_config(config, root, hooks)
        if drop and isinstance(config.get("plugins"), list):
            before = {entry_name(p) for p in config["plugins"]}
            config["plugins"] = [p for p in config["plugins"] if entry_name(p) not in drop]
            dropped = [name for name in drop if name in before]
            removed += [f"plugin {name} (not compared: see parity.build_site)" for name in dropped]
        removed += _stub_missing_templates(config, root)
        if hooks:
            shutil.copyfile(RECORD_HOOK, root / RECORD_HOOK.name)
            config["hooks"] = [*(config.get("hooks") or []), RECORD_HOOK.name]
        if generator == "zensical":
            # Zensical has no --site-dir and wants the output inside the project.
            config["site_dir"] = "site"
            site_dir = root / "site"
        write_config(config_file, config)
    pages_file = workdir / "pages.jsonl"
    env = {**os.environ, "NO_MKDOCS_2_WARNING": "1", "KBQA_PARITY_PAGES": str(pages_file)}
    if generator == "zensical":
        command = [zensical_command(), "build", "--clean", "-f", str(config_file)]
    else:
        command = [sys.executable, "-m", "mkdocs", "build", "-q", "-f", str(config_file)]
        command += ["-d", str(site_dir)]
    started = time.perf_counter()
    proc = subprocess.run(command, cwd=root, env=env, capture_output=True, text=True, check=False)
    if proc.returncode != 0 and generator == "zensical" and config_file.suffix != ".toml":
        # Zensical renders MkDocs themes' templates with its own engine; some it cannot
        # (the mkdocs theme's {% trans %}, an override including a missing icon). The theme
        # does not change heading ids: say why and build with Zensical's own theme.
        reason = _last_error_line(proc.stdout + proc.stderr)
        config["theme"] = {"name": "material"}
        removed.append(f"theme (Zensical cannot build it: {reason}; built with its own)")
        removed += _stub_missing_templates(config, root)
        write_config(config_file, config)
        proc = subprocess.run(
            command, cwd=root, env=env, capture_output=True, text=True, check=False
        )
    seconds = time.perf_counter() - started
    failing = tuple(sorted(set(_PLUGIN_ERROR.findall(proc.stdout + proc.stderr)) - set(drop)))
    if proc.returncode != 0 and generator == "mkdocs" and failing and not retry:
        # A plugin that cannot build here (mkdocstrings documenting a package that is not
        # installed): both sides go without it.
        shutil.rmtree(workdir / "src")
        shutil.rmtree(workdir / "site", ignore_errors=True)
        pages_file.unlink(missing_ok=True)
        again = build_site(source, workdir, generator, hooks, (*drop, *failing), retry=True)
        again.removed[:] = [
            r.replace("not compared: see parity.build_site", "fails to build here")
            if any(r.startswith(f"plugin {f} ") for f in failing)
            else r
            for r in again.removed
        ]
        return again
    if proc.returncode != 0:
        raise RuntimeError(f"{generator} build of {source} failed:\n{proc.stdout}\n{proc.stderr}")
    pages: dict[str, str] = {}
    if pages_file.is_file():
        for line in pages_file.read_text(encoding="utf-8").splitlines():
            record = json.loads(line)
            src = Path(record["src"]).resolve()
            if src.is_relative_to(root.resolve()):  # not a page a plugin generated elsewhere
                pages[src.relative_to(root.resolve()).as_posix()] = record["url"]
    return Build(source, root, site_dir, removed, seconds, proc.stdout + proc.stderr, pages)


def _last_error_line(output: str) -> str:
    lines = [line.strip() for line in output.splitlines() if line.strip()]
    return lines[-1] if lines else "no output"


def zensical_command() -> str:
    """The ``zensical`` script next to this Python (the test venv), else on PATH."""
    beside = Path(sys.executable).with_name("zensical")
    return str(beside) if beside.is_file() else "zensical"


def _zensical_project(path: Path) -> dict[str, Any]:
    from kb_qa.ingest.zensical import read_project

    return read_project(path)


# --- headings of a built page -------------------------------------------------------------


class _ContentHeadings(HTMLParser):
    """h1-h6 with their ids inside the page's main content element."""

    def __init__(self, container: tuple[str, str, str]) -> None:
        super().__init__(convert_charrefs=True)
        self.tag, self.attr, self.value = container
        self.depth = 0  # nesting of ``self.tag`` inside the container (0 = outside)
        self.done = False
        self.heading: tuple[int, str] | None = None
        self.text: list[str] = []
        self.skip = 0  # depth inside a permalink anchor
        self.headings: list[Heading] = []

    def _is_container(self, tag: str, attrs: list[tuple[str, str | None]]) -> bool:
        if tag != self.tag:
            return False
        if not self.attr:
            return True
        value = dict(attrs).get(self.attr) or ""
        return self.value in value.split() or value == self.value

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if self.done:
            return
        if self.depth == 0:
            if self._is_container(tag, attrs):
                self.depth = 1
            return
        if tag == self.tag:
            self.depth += 1
        if len(tag) == 2 and tag[0] == "h" and tag[1] in "123456":
            self.heading = (int(tag[1]), dict(attrs).get("id") or "")
            self.text = []
        elif self.heading and tag == "a" and "headerlink" in (dict(attrs).get("class") or ""):
            self.skip = 1
        elif self.skip and tag == "a":
            self.skip += 1

    def handle_endtag(self, tag: str) -> None:
        if self.done or self.depth == 0:
            return
        if tag == self.tag:
            self.depth -= 1
            if self.depth == 0:
                self.done = True
            return
        if self.skip and tag == "a":
            self.skip -= 1
        elif self.heading and tag == f"h{self.heading[0]}":
            level, anchor = self.heading
            self.headings.append(Heading(level, " ".join("".join(self.text).split()), anchor))
            self.heading = None

    def handle_data(self, data: str) -> None:
        if self.heading and not self.skip:
            self.text.append(data)


def page_headings(html_text: str) -> list[Heading]:
    """Headings with an ``id`` in the main content of a built page, in page order.

    The content is the first ``<article>`` (Material), else ``role="main"`` (the mkdocs and
    readthedocs themes), else ``.md-content``.
    """
    for container in (("article", "", ""), ("div", "role", "main"), ("div", "class", "md-content")):
        parser = _ContentHeadings(container)
        parser.feed(html_text)
        parser.close()
        if parser.depth or parser.done:
            return [h for h in parser.headings if h.anchor]
    return []


def built_page(site_dir: Path, url: str) -> Path:
    """The built HTML file at a page URL ("setup/", "setup.html", "" for the home page)."""
    url = unquote(url)  # a URL: "%C3%BC/" is the folder "ü"
    return site_dir / url if url.endswith(".html") else site_dir / url / "index.html"


def html_path(site: Site, site_dir: Path, doc_path: str) -> Path:
    """The built HTML file of a page, by the same rule as ``Site.url_for``."""
    url = unquote(site.url_for(doc_path))  # a URL: "my%20page/" is the folder "my page"
    return site_dir / url if url.endswith(".html") else site_dir / url / "index.html"


# --- kb-qa's headings and the comparison ---------------------------------------------------


def kbqa_chunks(root: Path, generator: str = "") -> list[Chunk]:
    """The chunks ``kb-qa index`` makes of the site at ``root``: the real ingestion path
    (the site rendered with its hooks and plugins), with hash embeddings (no model)."""
    with (
        tempfile.TemporaryDirectory(prefix="kbqa-parity-index-") as index_dir,
        KnowledgeBase(root, index_dir=index_dir, embed_model="hash", generator=generator) as kb,
    ):
        kb.index()
        return kb.store.chunks()


def kbqa_pages(site: Site) -> dict[str, tuple[str, list[Heading]]]:
    """doc_path -> (page URL, the headings kb-qa chunked: level, text, anchor, in order)."""
    pages: dict[str, tuple[str, list[Heading]]] = {}
    docs = site.docs_dir.resolve()
    for c in kbqa_chunks(site.root, site.generator):  # in path and document order
        doc_path = (site.root / c.path).resolve().relative_to(docs).as_posix()
        _, headings = pages.setdefault(doc_path, (c.url, []))
        # One piece-0 chunk per heading section; the preamble (level 0) has no anchor.
        if c.piece == 0 and c.level > 0:
            headings.append(Heading(c.level, c.heading, c.anchor))
    return pages


def kbqa_headings(site: Site) -> dict[str, list[Heading]]:
    """doc_path -> the headings kb-qa chunked (level, text, anchor), in page order."""
    return {path: headings for path, (_, headings) in kbqa_pages(site).items()}


@dataclass(frozen=True)
class Miss:
    page: str
    ours: str
    rendered: str  # the id of the rendered heading we lined up with ("" if none)
    heading: str
    level: int


@dataclass
class PageResult:
    headings: int = 0
    matched: int = 0
    misses: list[Miss] = field(default_factory=list)
    extra: list[Heading] = field(default_factory=list)  # rendered, not among kb-qa's


def _key(text: str) -> str:
    return anchors.match_text(text)


def _same_text(a: str, b: str) -> bool:
    ka, kb = _key(a), _key(b)
    return ka == kb or (bool(ka) and bool(kb) and (ka in kb or kb in ka))


def compare_page(page: str, ours: list[Heading], rendered: list[Heading]) -> PageResult:
    """Line kb-qa's headings up with the rendered ones in order and count equal ids.

    A kb-qa heading matches when the next rendered headings (in order) include one with the
    same id and the same level or text. Otherwise it is a miss, reported with the id of the
    rendered heading that has its text, if there is one.
    """
    result = PageResult(headings=len(ours))
    j = 0
    for h in ours:
        k = next(
            (
                k
                for k in range(j, len(rendered))
                if rendered[k].anchor == h.anchor
                and (rendered[k].level == h.level or _same_text(rendered[k].text, h.text))
            ),
            None,
        )
        if k is not None:
            result.matched += 1
        else:
            k = next(
                (
                    k
                    for k in range(j, len(rendered))
                    if rendered[k].level == h.level and _same_text(rendered[k].text, h.text)
                ),
                None,
            )
            other = rendered[k].anchor if k is not None else ""
            result.misses.append(Miss(page, h.anchor, other, h.text, h.level))
        if k is not None:
            result.extra.extend(rendered[j:k])
            j = k + 1
    result.extra.extend(rendered[j:])
    return result


@dataclass
class SiteResult:
    name: str
    generator: str = "mkdocs"
    build_log: str = ""
    pages: int = 0
    headings: int = 0
    matched: int = 0
    misses: list[Miss] = field(default_factory=list)
    extra: list[tuple[str, Heading]] = field(default_factory=list)
    unbuilt: list[str] = field(default_factory=list)  # pages with no HTML at the url_for path
    removed: list[str] = field(default_factory=list)
    kbqa_warnings: list[str] = field(default_factory=list)
    build_seconds: float = 0.0

    @property
    def percent(self) -> float:
        return 100.0 * self.matched / self.headings if self.headings else 100.0


def check_site(
    name: str, source: Path, workdir: Path | None = None, generator: str = "mkdocs"
) -> SiteResult:
    """Build ``source`` with ``generator`` and compare every page's ids with kb-qa's anchors."""
    with tempfile.TemporaryDirectory(prefix=f"kbqa-parity-{name}-") as tmp:
        # Zensical renders mkdocstrings' directives itself; kb-qa indexes a Zensical site
        # from its sources (docs/pages/site-generators.md, "Which site generator?"), so API
        # pages are not compared.
        drop = ZENSICAL_UNRENDERED if generator == "zensical" else ()
        build = build_site(source, Path(workdir or tmp), generator, drop=drop)
        # The copy that was built: its config is the one both sides use.
        site = load_site(build.root, generator, render=True)
        result = SiteResult(
            name,
            generator=generator,
            build_log=build.log,
            removed=build.removed,
            kbqa_warnings=list(site.warnings),
            build_seconds=build.seconds,
        )
        for doc_path, (url, ours) in kbqa_pages(site).items():
            path = built_page(build.site_dir, url)
            if not path.is_file():
                result.unbuilt.append(doc_path)
                continue
            rendered = page_headings(path.read_text(encoding="utf-8"))
            page = compare_page(doc_path, ours, rendered)
            result.pages += 1
            result.headings += page.headings
            result.matched += page.matched
            result.misses.extend(page.misses)
            result.extra.extend((doc_path, h) for h in page.extra)
    return result


def format_table(results: Iterable[SiteResult]) -> str:
    header = ("corpus", "built by", "pages", "headings", "matched", "%", "misses", "extra")
    rows = [(*header, "unbuilt", "build s")]
    for r in results:
        rows.append(
            (
                r.name,
                r.generator,
                str(r.pages),
                str(r.headings),
                str(r.matched),
                f"{r.percent:.2f}",
                str(len(r.misses)),
                str(len(r.extra)),
                str(len(r.unbuilt)),
                f"{r.build_seconds:.1f}",
            )
        )
    return aligned(rows)


def aligned(rows: list[tuple[str, ...]]) -> str:
    """Rows as a plain-text table: the first column left-aligned, the others right."""
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    lines = []
    for row in rows:
        cells = [row[0].ljust(widths[0])]
        cells += [cell.rjust(w) for cell, w in zip(row[1:], widths[1:], strict=True)]
        lines.append("  ".join(cells))
    return "\n".join(lines)


# --- the index against a build that runs the site's own hooks and plugins -----------------

_ANY_ID = re.compile(r"""\sid=["']([^"']+)["']""")


@dataclass
class RenderedResult:
    """kb-qa's index of a site against a real ``mkdocs build`` that ran its hooks."""

    name: str
    pages: int = 0  # content pages: built from a Markdown file kb-qa indexes
    ids: int = 0  # heading ids in those pages' content
    covered: int = 0  # of them, ids some chunk of that page (at that URL) carries
    uncovered: list[tuple[str, str]] = field(default_factory=list)  # (url, id)
    missing_anchor: list[tuple[str, str]] = field(default_factory=list)  # chunk (url, anchor)
    missing_url: list[str] = field(default_factory=list)  # chunk URLs the build lacks
    chunks: int = 0
    removed: list[str] = field(default_factory=list)
    kbqa_warnings: list[str] = field(default_factory=list)
    build_seconds: float = 0.0

    @property
    def percent(self) -> float:
        return 100.0 * self.covered / self.ids if self.ids else 100.0


def check_rendered(name: str, source: Path, workdir: Path | None = None) -> RenderedResult:
    """Build ``source`` with its hooks and plugins and measure kb-qa's index of the same copy:
    the share of rendered heading ids of content pages that have a chunk, chunk anchors the
    built page lacks, and chunk URLs the build did not produce."""
    with tempfile.TemporaryDirectory(prefix=f"kbqa-rendered-{name}-") as tmp:
        build = build_site(source, Path(workdir or tmp), "mkdocs", hooks=True)
        chunks = kbqa_chunks(build.root, "mkdocs")
        result = RenderedResult(
            name, chunks=len(chunks), removed=build.removed, build_seconds=build.seconds
        )
        result.kbqa_warnings = list(load_site(build.root, "mkdocs", render=True).warnings)
        by_page: dict[tuple[str, str], set[str]] = {}
        for c in chunks:
            by_page.setdefault((c.path, c.url), set()).add(c.anchor)
        for path, url in sorted(build.pages.items()):
            anchors_here = by_page.get((path, url))
            if anchors_here is None and not any(p == path for p, _ in by_page):
                continue  # not a page kb-qa indexes (excluded, or generated by a plugin)
            result.pages += 1
            html_text = built_page(build.site_dir, url).read_text(encoding="utf-8")
            for h in page_headings(html_text):
                result.ids += 1
                if h.anchor in (anchors_here or set()):
                    result.covered += 1
                else:
                    result.uncovered.append((url, h.anchor))
        ids_of: dict[str, set[str] | None] = {}
        for c in chunks:
            if c.url not in ids_of:
                page = built_page(build.site_dir, c.url)
                ids_of[c.url] = (
                    set(_ANY_ID.findall(page.read_text(encoding="utf-8")))
                    if page.is_file()
                    else None
                )
            found = ids_of[c.url]
            if found is None:
                result.missing_url.append(c.url)
            elif c.anchor and c.anchor not in found:
                result.missing_anchor.append((c.url, c.anchor))
    return result


def format_rendered(results: Iterable[RenderedResult]) -> str:
    header = (
        "site",
        "pages",
        "rendered ids",
        "with a chunk",
        "%",
        "anchors missing",
        "URLs missing",
    )
    rows = [header]
    for r in results:
        rows.append(
            (
                r.name,
                str(r.pages),
                str(r.ids),
                str(r.covered),
                f"{r.percent:.2f}",
                str(len(r.missing_anchor)),
                str(len(set(r.missing_url))),
            )
        )
    return aligned(rows)


def with_plugin(root: Path) -> None:
    """Add the kb-qa plugin to the config of a site ``build_site`` made buildable."""
    config_file = root / "mkdocs.yml"
    config = read_config(config_file)
    plugins = config.get("plugins")
    if isinstance(plugins, dict):
        plugins.setdefault("kb-qa", {})
    elif "kb-qa" not in {entry_name(p) for p in plugins or []}:
        config["plugins"] = [*(plugins or ["search"]), "kb-qa"]
    write_config(config_file, config)
