"""What a site's configuration says about pages: where they are, their URLs, their heading ids.

The configuration is ``mkdocs.yml`` (MkDocs, ProperDocs), ``zensical.toml`` (Zensical, which
also builds ``mkdocs.yml``: ``zensical.py``), the file ``config_file`` names (``config_files``)
or another generator's (``generators``). Without one, a vault is a folder of notes: every
Markdown file is a page and headings get Python-Markdown's default ids.

Only a site kb-qa renders (``render`` on) is trusted: its ``mkdocs.yml`` is read with MkDocs'
own loader and its markdown extensions are imported as listed. Otherwise, and always for
``zensical.toml``, nothing in the configuration runs (``safe_config.py``).
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import quote

import markdown

from kb_qa.errors import ConfigError
from kb_qa.ingest import (
    config_files,
    generators,
    i18n_layout,
    note_templates,
    page_titles,
    safe_config,
    snippet_guard,
    versioning,
    zensical,
    zensical_blog,
)
from kb_qa.ingest.config_files import CONFIG_FILES as CONFIG_FILES
from kb_qa.ingest.config_files import find_config
from kb_qa.ingest.mkdocs_yaml import read_config
from kb_qa.settings import Settings

if TYPE_CHECKING:
    import pathspec


BUILTIN_EXTENSIONS = ("toc", "tables", "fenced_code")
MARKDOWN_SUFFIXES = (".md", ".markdown", ".mdown", ".mkdn", ".mkd")
# MkDocs' own default exclusions (dotfiles and the templates folder), gitignore syntax.
DEFAULT_EXCLUDES = (".*", "/templates/")


@dataclass
class Site:
    """The parts of a site's configuration that decide what is indexed and how it is addressed."""

    root: Path
    docs_dir: Path
    site_url: str = ""
    # Where links from outside the site start: site_url, in a mike site's version folder
    link_base: str = ""
    use_directory_urls: bool = True
    # Pages are addressed like MkDocs does it (Zensical does the same): the site has a config.
    is_mkdocs: bool = False
    # Whose rules give the heading ids: "mkdocs" (also ProperDocs), "zensical", "" (no site)
    generator: str = ""
    config_name: str = ""  # the config file it was read from, e.g. "zensical.toml"
    # Where the generator's preview server listens (`mkdocs serve`, `zensical serve`)
    dev_addr: str = ""
    exclude_patterns: tuple[str, ...] = ()
    extensions: list[Any] = field(default_factory=list)
    extension_configs: dict[str, dict[str, Any]] = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)
    blog: zensical_blog.Blog | None = None  # a Zensical blog: its posts' URLs
    # A site translated with mkdocs-static-i18n: where each language's pages are published
    languages: i18n_layout.Languages | None = None
    nav: page_titles.NavTitles = field(default_factory=page_titles.NavTitles)  # its titles
    routes: generators.Routes | None = None  # another generator's: where it serves its pages

    @cached_property
    def excluded(self) -> pathspec.PathSpec:
        """gitignore-style patterns of files MkDocs would not render (of a notes vault: its
        Obsidian templates, ``note_templates``)."""
        import pathspec  # here, not at the top: a search never walks the vault

        defaults = list(DEFAULT_EXCLUDES) if self.is_mkdocs else []
        patterns = defaults + list(self.exclude_patterns)
        return pathspec.GitIgnoreSpec.from_lines(patterns)

    def page_url(self, doc_path: str, text: str, title: str, body_start: int) -> str | None:
        """``url_for``, but where a Zensical blog publishes a post (by its date and slug, None
        for a draft: ``zensical_blog``), or another generator its pages (``generators``)."""
        if self.routes is not None:
            return self.routes.url(doc_path, text)
        if self.blog is None or not self.blog.is_post(doc_path):
            return self.url_for(doc_path)
        stem = posixpath.splitext(posixpath.basename(doc_path))[0]
        path = zensical_blog.post_path(self.blog, text, title, body_start, stem)
        if not path:
            return None if path is None else self.url_for(doc_path)
        return quote(path + ("/" if self.use_directory_urls else ".html"))

    def url_for(self, doc_path: str) -> str:
        """Page URL relative to the site root, the way MkDocs computes it ("" is the home page),
        percent-encoded as MkDocs does: a note named "C# notes 100%.md" opens from a link."""
        return quote(self._unquoted_url(doc_path))

    def _unquoted_url(self, doc_path: str) -> str:
        if not self.is_mkdocs:
            return doc_path
        if self.languages is not None:
            doc_path = i18n_layout.published_path(doc_path, self.languages)
        directory, name = posixpath.split(doc_path)
        stem = name.rsplit(".", 1)[0]
        if stem in ("index", "README"):
            if not self.use_directory_urls:
                return posixpath.join(directory, "index.html")
            return f"{directory}/" if directory else ""
        if self.use_directory_urls:
            return posixpath.join(directory, stem) + "/"
        return posixpath.join(directory, stem) + ".html"

    def markdown(self) -> markdown.Markdown:
        """A Python-Markdown instance configured like the site's MkDocs build."""
        return markdown.Markdown(
            extensions=list(self.extensions), extension_configs=self.extension_configs
        )


def site_of(s: Settings) -> Site:
    """``load_site`` as the settings ``s`` say: generator, render, version, config file."""
    return load_site(
        s.vault, s.generator, render=s.render, version=s.site_version, config_file=s.config_file
    )


def load_site(
    root: Path,
    generator: str = "",
    *,
    render: bool = False,
    version: str = "",
    config_file: str = "",
) -> Site:
    """Read the site's config (see ``find_config``: ``config_file`` names one with another
    name, relative to ``root``); otherwise describe a plain vault.

    ``generator`` says whose rules give heading ids: empty means Zensical's for
    ``zensical.toml`` and MkDocs' for ``mkdocs.yml``; "zensical" also applies Zensical's
    rules to a ``mkdocs.yml`` that Zensical builds.

    ``render`` is the ``render`` setting: on, the site is trusted (``mkdocs.yml`` read with
    MkDocs' loader, its extensions imported as listed) except that ``INHERIT:`` may not
    lead out of the vault; off (the default), and always for ``zensical.toml``, the config
    is read with ``safe_config`` and only allowlisted extensions are imported."""
    config_path = find_config(root, generator, config_file)
    if config_path is None and (other_site := generators.site_fields(root, version)):
        return Site(root=root, **other_site)  # its config is JavaScript or TOML: never run
    if config_path is None:
        site = Site(root=root, docs_dir=root, exclude_patterns=note_templates.patterns(root))
        _set_extensions(site, [], root, BUILTIN_EXTENSIONS)
        # Read as notes, a site's pages cite the server's file paths, not the site's URLs.
        said = (
            config_files.docs_folder_warning(root)
            or generators.unread_warning(root)
            or config_files.unnamed_warning(root)
        )
        site.warnings += [said] if said else []
        return site
    is_toml = config_path.suffix.lower() == ".toml"  # zensical.toml, or one config_file names
    trusted = render and not is_toml
    if is_toml:
        config = zensical.read_project(config_path)
    elif trusted:
        safe_config.check_inherit(config_path, root)
        config = read_config(config_path)
    else:
        config = safe_config.load_site_yaml(config_path)
    if not isinstance(config, dict):
        raise ConfigError(f"{config_path}: expected a mapping of settings at the top level.")
    warnings = [] if generator or is_toml else zensical.built_unannounced(root, config)
    generator = "zensical" if is_toml else (generator or "mkdocs")
    docs_dir = (root / str(config.get("docs_dir") or "docs")).resolve()
    if not docs_dir.is_dir():
        raise ConfigError(
            f"{config_path}: docs_dir {docs_dir} does not exist. Fix docs_dir or create the folder."
        )
    # Drafts are left out of a build (`mkdocs serve` shows them): an answer must not quote
    # unpublished text, nor cite a page that is not there.
    exclude = f"{config.get('exclude_docs') or ''}\n{config.get('draft_docs') or ''}"
    site = Site(
        root=root,
        docs_dir=docs_dir,
        site_url=plain_site_url(config.get("site_url"), config_path, warnings),
        use_directory_urls=(
            zensical.directory_urls(config)
            if generator == "zensical"
            else bool(config.get("use_directory_urls", True))
        ),
        is_mkdocs=True,
        generator=generator,
        config_name=config_path.name,
        # The defaults of Zensical (its config.py) and of MkDocs.
        dev_addr=str(
            config.get("dev_addr")
            or ("localhost:8000" if generator == "zensical" else "127.0.0.1:8000")
        ),
        exclude_patterns=tuple(line for line in str(exclude).splitlines() if line.strip()),
    )
    site.warnings += warnings
    site.link_base = versioning.link_base(site.site_url, config, version)
    site.nav = page_titles.read_nav(config.get("nav") if is_toml else _nav(config_path))
    if generator == "zensical":
        site.blog = zensical_blog.blog_of(config)
        entries = zensical.extension_entries(config)
        _set_extensions(site, entries, root, zensical.BUILTIN_EXTENSIONS, trusted)
    else:
        site.languages = i18n_layout.languages_of(config)
        if site.languages is not None and not trusted:  # a render leaves them out itself
            site.exclude_patterns += tuple(site.languages.unbuilt_patterns())
        entries = config.get("markdown_extensions") or []
        _set_extensions(site, entries, root, BUILTIN_EXTENSIONS, trusted)
    return site


def _nav(config_file: Path) -> object:
    """``nav:`` read without the environment or any Python tag (as ``site_name`` is): its
    titles head every citation, so ``!ENV`` must not put a secret there."""
    try:
        config = safe_config.load_yaml(config_file, safe_config.NameLoader)
    except (ConfigError, OSError):
        return None  # reported where the config is read for its settings
    return config.get("nav") if isinstance(config, dict) else None


_PLAIN_URL = re.compile(
    r"https?://(?:[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?\.)*[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?"
    r"(?::[0-9]{1,5})?(?:/[A-Za-z0-9._~%!$&'()*+,;=:@/-]*)?"
)


def plain_site_url(value: object, config_file: Path, warnings: list[str]) -> str:
    """``site_url`` when it is a plain http(s) address (a host, a port, a path), else "".
    Citation links and ``/api/health`` show it to every reader, and ``!ENV`` fills it from
    the environment: ``site_url: !ENV [OPENAI_API_KEY, ...]`` would publish a secret. An
    address with user info, a query or a fragment, or anything that is no URL, is left out
    with a warning that does not repeat it (links are then made without the site's address)."""
    if value is None or value == "":
        return ""
    text = str(value).strip()
    if _PLAIN_URL.fullmatch(text):
        return text
    warnings.append(
        f"{config_file.name}: site_url is not a plain http(s) address (https://host/path/, "
        "no user, query or fragment); it is ignored and not shown here, since it may come "
        "from the environment (!ENV). Citation links are made without it: write the site's "
        "address there"
    )
    return ""


def site_name(root: Path) -> str:
    """The ``site_name`` of ``root/mkdocs.yml`` ("" without one, or when it cannot be read).

    Read without running anything, whatever ``render`` says: every command opens the index
    by this name (``kb-qa search`` too), and a name needs no Python tag. Nor is it read from
    the environment (``!ENV``: only its default counts): ``/api/health`` shows the name."""
    names = ("mkdocs.yml", "mkdocs.yaml")
    config_file = next((root / n for n in names if (root / n).is_file()), None)
    if config_file is None:
        return ""
    try:
        config = safe_config.load_yaml(config_file, safe_config.NameLoader)
    except (ConfigError, OSError):
        return ""  # indexing reports the broken file; the name falls back to the folder's
    return str(config.get("site_name") or "") if isinstance(config, dict) else ""


def any_site_name(root: Path) -> str:
    """The name the site at ``root`` gives itself: ``site_name`` of its mkdocs.yml, else of
    its zensical.toml ("" for a folder that is neither)."""
    return site_name(root) or zensical.site_name(root)


_PROBE = "# Title\n\n## Part `code`\n\nText with a [link](other.md#part) and *emphasis*.\n"


def _set_extensions(
    site: Site,
    configured: list[Any],
    root: Path,
    builtins: tuple[str, ...],
    trusted: bool = False,
) -> None:
    """Resolve the site's markdown_extensions, dropping (with a warning) those that fail.
    Unless the site is ``trusted``, only ``safe_config.extension_allowed`` extensions are
    imported: any other is left out with a warning naming it."""
    source = site.config_name or "mkdocs.yml"
    names: list[str] = list(builtins)
    configs: dict[str, dict[str, Any]] = {}
    for item in configured:
        if isinstance(item, dict) and len(item) == 1:
            name, cfg = next(iter(item.items()))
            configs[name] = dict(cfg or {})
        elif isinstance(item, str):
            name = item
        else:
            site.warnings.append(f"{source}: ignoring markdown_extensions entry {item!r}")
            continue
        if not trusted and not safe_config.extension_allowed(str(name)):
            configs.pop(name, None)
            site.warnings.append(_not_loaded(source, str(name)))
            continue
        if name not in names:
            names.append(name)
    if site.generator == "zensical":
        site.warnings += zensical.resolve_callables(configs)
    _tune_for_ids(configs, root, site.docs_dir)
    usable: list[str] = []
    for name in names:
        try:
            # Some extensions load fine and fail on first use (material.extensions.preview
            # needs MkDocs' own "relpath" processor): render a sample so they fail here.
            # Snippets are probed under the guard too: a site's ``auto_append`` would be read
            # (or, with ``url_download``, fetched) while the sample renders.
            guarded = [snippet_guard.NAME] if name == "pymdownx.snippets" else []
            markdown.Markdown(
                extensions=[name, *guarded],
                extension_configs={
                    name: configs.get(name, {}),
                    snippet_guard.NAME: {"root": str(root)},
                },
            ).convert(_PROBE)
        except Exception as exc:  # noqa: BLE001 - any third-party import/config failure
            site.warnings.append(
                f"{source}: markdown extension {name!r} could not be loaded ({exc}); "
                "heading ids are computed without it"
            )
            continue
        usable.append(name)
    if "pymdownx.snippets" in usable:
        # Includes are read only from inside the vault (kb_qa/ingest/snippet_guard.py).
        usable.append(snippet_guard.NAME)
        configs[snippet_guard.NAME] = {"root": str(root)}
    site.extensions = usable
    site.extension_configs = {n: configs[n] for n in usable if n in configs}


def _not_loaded(source: str, name: str) -> str:
    """The warning for an extension an untrusted site lists outside the allowlist."""
    allowed = (
        "imports only the extensions of Python-Markdown, pymdownx, MkDocs, Material and "
        "Zensical (none that runs the project's own code)"
    )
    if source.endswith(".toml"):  # zensical.toml, or the TOML file config_file names
        why = f"kb-qa indexes a Zensical site from its files and {allowed}"
    else:
        why = f"with rendering off kb-qa {allowed}; {safe_config.TRUST_HINT}"
    return (
        f"{source}: markdown extension {name!r} is not loaded: {why}. Heading ids are "
        "computed without it"
    )


def _tune_for_ids(configs: dict[str, dict[str, Any]], root: Path, docs_dir: Path) -> None:
    """Switch off work that cannot change heading ids (permalinks); root snippet paths.
    Syntax highlighting stays as the site has it: without Pygments, SuperFences rejects
    fence options such as ``hl_lines`` and ``linenums``, so the fence is not a code block
    at all and everything after it parses differently (headings lost or misnumbered)."""
    # The site may name it "toc" or "markdown.extensions.toc" (a permalink sign would
    # otherwise end every heading's text: "Build configuration¶").
    for key in {"toc", *(k for k in configs if k == "markdown.extensions.toc")}:
        toc = configs.setdefault(key, {})
        toc["permalink"] = False
        toc["anchorlink"] = False
        toc.pop("permalink_title", None)
    if "pymdownx.snippets" in configs:
        base = configs["pymdownx.snippets"].get("base_path", ["."])
        base = base if isinstance(base, list) else [base]
        # `!relative` values are MkDocs placeholders, not strings: they mean a folder of the
        # site, and the site's root is the nearest answer without running MkDocs.
        configs["pymdownx.snippets"]["base_path"] = [_base_path(b, root, docs_dir) for b in base]
        configs["pymdownx.snippets"]["url_download"] = False  # kb-qa reads no URL, ever


def _base_path(value: Any, root: Path, docs_dir: Path) -> str:
    if isinstance(value, str):
        return str(root / value)
    relative = value if isinstance(value, safe_config.RelativeDir) else None
    if relative is not None and relative.base == "docs_dir":
        return str(docs_dir / relative.suffix)
    return str(root)


def default_slugify() -> Callable[[str, str], str]:
    """Python-Markdown's default toc slugify."""
    from markdown.extensions.toc import slugify

    return slugify
