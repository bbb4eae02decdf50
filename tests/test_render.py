"""MkDocs sites indexed as they render: hooks, plugins, includes and directives, for real.

Each fixture site is written into a temporary folder and, where the test compares with what
readers get, built with a real ``mkdocs build`` (the venv's mkdocs 1.6, mkdocs-material's blog
plugin, pymdownx.snippets, mkdocs-click, mkdocstrings). Nothing of kb-qa is mocked: the sites
are indexed by a real KnowledgeBase with the hash embedder.
"""

from __future__ import annotations

import http.server
import re
import shutil
import subprocess
import sys
import threading
from collections.abc import Callable, Mapping
from pathlib import Path

import pytest

from kb_qa.ingest import render_config, render_files
from kb_qa.ingest import vault as vault_files
from kb_qa.ingest.chunking import chunk_document
from kb_qa.ingest.site import load_site
from kb_qa.kb.knowledge_base import KnowledgeBase
from kb_qa.types import Chunk, Document, IndexReport

KB = Callable[..., KnowledgeBase]
Files = Mapping[str, str]
WriteFiles = Callable[[Path, Files], Path]

HOOK = """\
import re


def on_page_markdown(markdown, *, page, config, files):
    # Like Material's own docs hook: a setting's shortcode becomes its name and id.
    return re.sub(
        r"<!-- md:setting (\\S+) -->",
        lambda m: f"`{m.group(1).split('.')[-1]}` {{ #{m.group(1)} }}",
        markdown,
    )
"""

HOOK_SITE: Files = {
    "mkdocs.yml": (
        "site_name: Hooks\n"
        "hooks:\n"
        "  - hooks/shortcodes.py\n"
        "markdown_extensions:\n"
        "  - attr_list\n"
        "  - toc:\n"
        "      permalink: true\n"
    ),
    "hooks/shortcodes.py": HOOK,
    "docs/index.md": (
        "# Settings\n\n"
        "Intro about the settings.\n\n"
        "#### <!-- md:setting config.lang -->\n\n"
        "Sets the language of the wombat site.\n"
    ),
    "docs/other.md": "# Other\n\n## Plain section\n\nNothing generated here, quokka.\n",
}

SNIPPET_SITE: Files = {
    "mkdocs.yml": (
        "site_name: Snippets\n"
        "markdown_extensions:\n"
        "  - toc\n"
        "  - pymdownx.snippets:\n"
        "      base_path: [includes]\n"
        "      check_paths: true\n"
    ),
    "docs/guide.md": '# Guide\n\nThe guide\'s own words.\n\n--8<-- "part.md"\n',
    # Outside docs_dir: MkDocs never sees it as a page, only the include pulls it in.
    "includes/part.md": "## Included part\n\nThe numbat only lives in the included file.\n",
}

BLOG_SITE: Files = {
    "mkdocs.yml": "site_name: Blog\ntheme:\n  name: material\nplugins:\n  - blog\n",
    "docs/index.md": "# Home\n\nWelcome.\n",
    "docs/blog/index.md": "# Blog\n",
    "docs/blog/posts/hello.md": (
        "---\ndate: 2024-01-02\n---\n\n"
        "# Hello world\n\nThe first post talks about the bilby.\n\n"
        "## Details\n\nMore bilby facts.\n"
    ),
    "docs/blog/posts/draft.md": (
        "---\ndate: 2024-01-03\ndraft: true\n---\n\n# Not yet\n\nThe unpublished quoll plan.\n"
    ),
}

CLICK_SITE: Files = {
    "mkdocs.yml": "site_name: CLI\nmarkdown_extensions:\n  - attr_list\n  - mkdocs-click\n",
    "cli_app.py": (
        "import click\n\n\n"
        "@click.group()\n"
        "def cli():\n"
        '    """The wallaby tool."""\n\n\n'
        "@cli.command()\n"
        "@click.option('--colour', help='Paint the kookaburra in this colour.')\n"
        "def paint(colour):\n"
        '    """Paint a picture of the kookaburra."""\n'
    ),
    "docs/cli.md": (
        "# Command line\n\n"
        "::: mkdocs-click\n    :module: cli_app\n    :command: cli\n    :depth: 1\n"
    ),
}

DOCSTRING_SITE: Files = {
    "mkdocs.yml": (
        "site_name: API\n"
        "plugins:\n"
        "  - mkdocstrings:\n"
        "      handlers:\n"
        "        python:\n"
        "          paths: [src]\n"
    ),
    "src/tinymod.py": (
        '"""A tiny module."""\n\n\n'
        "def greet(name: str) -> str:\n"
        '    """Greet the dingo called name politely."""\n'
        "    return f'hello {name}'\n"
    ),
    "docs/api.md": "# API\n\nReference below.\n\n::: tinymod\n",
}


def mkdocs_build(vault: Path, out: Path, env: Mapping[str, str] | None = None) -> Path:
    """A real ``mkdocs build`` of ``vault`` into ``out`` (outside the vault); ``out`` back."""
    result = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "-q", "-f", "mkdocs.yml", "-d", str(out)],
        cwd=vault,
        env=dict(env) if env is not None else None,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    return out


def html_ids(page: Path) -> set[str]:
    """Every ``id`` attribute of a built HTML page."""
    return set(re.findall(r'\sid="([^"]+)"', page.read_text(encoding="utf-8")))


def chunks_of(instance: KnowledgeBase, path: str) -> list[Chunk]:
    return [c for c in instance.store.chunks() if c.path == path]


def by_anchor(chunks: list[Chunk], anchor: str) -> list[Chunk]:
    return [c for c in chunks if c.anchor == anchor]


def warnings_text(report: IndexReport) -> list[str]:
    return [f"{path}: {message}" for path, message in report.warnings]


@pytest.fixture(scope="module")
def built(
    tmp_path_factory: pytest.TempPathFactory, write_files: WriteFiles
) -> Callable[[str, Files], tuple[Path, Path]]:
    """``built("hooks", HOOK_SITE)`` -> (vault, built site folder), each site built once."""
    cache: dict[str, tuple[Path, Path]] = {}

    def make(name: str, files: Files) -> tuple[Path, Path]:
        if name not in cache:
            root = tmp_path_factory.mktemp(name)
            vault = write_files(root / "vault", files)
            cache[name] = (vault, mkdocs_build(vault, root / "site"))
        return cache[name]

    return make


@pytest.fixture
def fresh_hook_site(make_vault: Callable[..., Path]) -> Path:
    """A copy of the hook site of the test's own, for tests that edit it."""
    return make_vault(dict(HOOK_SITE), name="hook-vault")


# 1 -----------------------------------------------------------------------------------------


def test_hook_heading_id_is_indexed_as_mkdocs_builds_it(
    built: Callable[[str, Files], tuple[Path, Path]], kb: KB
) -> None:
    vault, site = built("hooks", HOOK_SITE)
    instance = kb(vault)
    report = instance.index()
    assert report.warnings == []
    assert "rendering" in report.phases

    chunks = chunks_of(instance, "docs/index.md")
    [lang] = by_anchor(chunks, "config.lang")
    assert lang.heading == "lang"
    assert "wombat" in lang.text
    assert "md:setting" not in " ".join(c.text for c in chunks)
    # The heading line is in the file (as the shortcode): the section maps back to it.
    source_lines = HOOK_SITE["docs/index.md"].splitlines()
    assert source_lines[lang.line_start - 1] == "#### <!-- md:setting config.lang -->"
    # The same id as the real build gives the heading.
    html = (site / "index.html").read_text(encoding="utf-8")
    assert re.search(r'<h4 id="config\.lang">', html), html
    assert {c.anchor for c in chunks} <= html_ids(site / "index.html")
    # A page the hook leaves alone keeps its source chunks (and the build's URL).
    other = chunks_of(instance, "docs/other.md")
    assert {c.anchor for c in other} == {"other", "plain-section"}
    assert {c.url for c in other} == {"other/"}
    [plain] = by_anchor(other, "plain-section")
    assert (plain.line_start, plain.line_end) == (3, 5)
    assert plain.text == HOOK_SITE["docs/other.md"][plain.start : plain.end]


def test_a_properdocs_site_is_rendered_as_an_mkdocs_one(
    make_vault: Callable[..., Path], kb: KB
) -> None:
    """properdocs.yml was read but never rendered: what its hooks add was not in the chat."""
    files = dict(HOOK_SITE)
    files["properdocs.yml"] = files.pop("mkdocs.yml")
    instance = kb(make_vault(files, name="properdocs"))
    report = instance.index()
    assert "rendering" in report.phases
    [lang] = by_anchor(chunks_of(instance, "docs/index.md"), "config.lang")
    assert lang.heading == "lang"


# 2 -----------------------------------------------------------------------------------------


def test_snippet_include_is_indexed_under_its_heading_at_the_pages_url(
    built: Callable[[str, Files], tuple[Path, Path]], kb: KB
) -> None:
    vault, site = built("snippets", SNIPPET_SITE)
    instance = kb(vault)
    report = instance.index()
    assert report.warnings == []
    chunks = instance.store.chunks()
    assert {c.path for c in chunks} == {"docs/guide.md"}  # the include is no page of its own
    holding = [c for c in chunks if "numbat only lives" in c.text]
    assert holding, [c.text for c in chunks]
    assert {c.anchor for c in holding} == {"included-part"}
    assert {c.url for c in holding} == {"guide/"}
    assert "included-part" in html_ids(site / "guide" / "index.html")
    # Not a section of docs/guide.md's own text: no lines in it.
    assert {(c.line_start, c.line_end) for c in holding} == {(0, 0)}
    [own] = by_anchor(chunks, "guide")
    assert own.line_start == 1


# 3 -----------------------------------------------------------------------------------------


def test_blog_post_chunks_have_the_dated_url_of_the_build(
    built: Callable[[str, Files], tuple[Path, Path]], kb: KB
) -> None:
    vault, site = built("blog", BLOG_SITE)
    instance = kb(vault)
    report = instance.index()
    assert report.warnings == []
    post = chunks_of(instance, "docs/blog/posts/hello.md")
    assert post and any("bilby" in c.text for c in post)
    urls = {c.url for c in post}
    assert len(urls) == 1
    [url] = urls
    assert re.fullmatch(r"blog/2024/01/02/[a-z-]+/", url), url
    assert (site / url / "index.html").is_file()
    assert {c.anchor for c in post} <= html_ids(site / url / "index.html")
    # The folder the source sits in is no URL of the site.
    assert not (site / "blog" / "posts" / "hello" / "index.html").exists()


def test_a_draft_the_build_leaves_out_is_not_indexed_until_it_is_published(
    built: Callable[[str, Files], tuple[Path, Path]], kb: KB, tmp_path: Path
) -> None:
    """Material's blog builds no page for a ``draft: true`` post: kb-qa indexed it from its
    source, so answers quoted unpublished text and cited ``blog/posts/draft/``, a 404."""
    vault, site = built("blog", BLOG_SITE)
    assert not list(site.rglob("*quoll*")) and "quoll" not in "".join(
        p.read_text(encoding="utf-8") for p in site.rglob("*.html")
    )
    draft = "docs/blog/posts/draft.md"
    instance = kb(vault)
    report = instance.index()
    assert not chunks_of(instance, draft)
    assert [why for path, why in report.skipped if path == draft] == [render_files.UNPUBLISHED]
    # Unchanged, it is not rendered again to find that out (nor is anything else)
    again = instance.index()
    assert "rendering" not in again.phases
    assert [why for path, why in again.skipped if path == draft] == [render_files.UNPUBLISHED]
    # Published, it is indexed where the build puts it
    copy = tmp_path / "vault"
    shutil.copytree(vault, copy)
    fresh = kb(copy)
    fresh.index()
    post = copy / draft
    post.write_text(post.read_text(encoding="utf-8").replace("draft: true\n", ""), "utf-8")
    report = fresh.index()
    assert not report.skipped
    [url] = {c.url for c in chunks_of(fresh, draft)}
    assert re.fullmatch(r"blog/2024/01/03/[a-z-]+/", url), url


def test_a_click_page_whose_module_is_missing_is_reported_once_and_truly(
    make_vault: Callable[..., Path], kb: KB
) -> None:
    # Hatch's docs/cli/reference.md documents hatch.cli, not importable where kb-qa runs.
    # Its owner read "MkDocs could not render it (No module named 'hatch.cli'); the page is
    # indexed from its source" and, below, the same page skipped: "could not be parsed as
    # Markdown". Now it is indexed from its source (its ids from its headings alone), said
    # in one line.
    files = dict(CLICK_SITE)
    files["docs/cli.md"] = files["docs/cli.md"].replace("cli_app", "no_such_cli_xyz")
    files["docs/a.md"] = "# A\n\nThe bilby digs.\n"
    instance = kb(make_vault(files, name="missing-click"))
    report = instance.index()
    [(path, reason)] = report.warnings
    assert path == "docs/cli.md" and not report.skipped
    assert reason == (
        "MkDocs could not render it (No module named 'no_such_cli_xyz'); the page is indexed "
        "from its source"
    )
    assert [p["path"] for p in instance.pages()] == ["docs/a.md", "docs/cli.md"]


def test_a_missing_griffe_extension_is_named_not_cut_off(
    make_vault: Callable[..., Path], kb: KB
) -> None:
    # FastAPI's owner read "MkDocs could not render it (Error while importing extension
    # 'griffe_typingdoc': With sys.path = ['/srv/site', ... ] …)": griffe lists sys.path
    # first, and the message was cut at 300 characters before the cause.
    files = dict(DOCSTRING_SITE)
    files["mkdocs.yml"] += "          options:\n            extensions: [no_such_griffe_ext_xyz]\n"
    instance = kb(make_vault(files, name="griffe-ext"))
    report = instance.index()
    [(path, warning)] = report.warnings
    assert path == "docs/api.md"
    assert "No module named 'no_such_griffe_ext_xyz'" in warning
    assert "sys.path" not in warning and len(warning) < 400


# 4 -----------------------------------------------------------------------------------------


def test_mkdocs_click_directive_is_indexed_with_the_built_anchors(
    built: Callable[[str, Files], tuple[Path, Path]], kb: KB
) -> None:
    vault, site = built("click", CLICK_SITE)
    instance = kb(vault)
    report = instance.index()
    assert report.warnings == [] and report.skipped == []
    chunks = chunks_of(instance, "docs/cli.md")
    ids = html_ids(site / "cli" / "index.html")
    [doc] = [c for c in chunks if "Paint a picture of the kookaburra" in c.text]
    [option] = [c for c in chunks if "Paint the kookaburra in this colour" in c.text]
    assert any("The wallaby tool" in c.text for c in chunks)
    for c in (doc, option):
        assert c.anchor and c.anchor in ids, (c.anchor, ids)
        assert c.url == "cli/"
        assert (c.line_start, c.line_end) == (0, 0)  # generated: no heading in the file


# 5 -----------------------------------------------------------------------------------------


def test_mkdocstrings_docstring_is_indexed_with_the_built_anchor(
    built: Callable[[str, Files], tuple[Path, Path]], kb: KB
) -> None:
    """The docstring's heading (``greet(name)``, id ``tinymod.greet``) is generated: it is
    not in docs/api.md, so its section has line 0; the module docstring, which mkdocstrings
    renders without a heading of its own, belongs to the page's ``# API`` section and gets
    that section's lines (1-5). That is chunk_rendered's rule: lines of the source section
    where the heading is in the file, else 0."""
    root, site = built("docstrings", DOCSTRING_SITE)
    instance = kb(root)
    report = instance.index()
    assert report.warnings == []
    chunks = chunks_of(instance, "docs/api.md")
    ids = html_ids(site / "api" / "index.html")
    [greet] = [c for c in chunks if "Greet the dingo called name politely" in c.text]
    assert greet.anchor == "tinymod.greet"
    assert greet.anchor in ids
    assert greet.url == "api/"

    # Which headings docs/api.md itself has, as the source chunker sees them.
    site_info = load_site(root, "mkdocs", render=True)
    [doc] = [d for d in _documents(instance) if d.path == "docs/api.md"]
    in_file = {c.anchor: c for c in chunk_document(doc, site_info.markdown(), 1500, None)}
    assert "tinymod.greet" not in in_file
    lines = len(DOCSTRING_SITE["docs/api.md"].splitlines())
    for c in chunks:
        if c.anchor in in_file:
            assert 1 <= c.line_start <= c.line_end <= lines, c
        else:
            assert (c.line_start, c.line_end) == (0, 0), c
    [api] = by_anchor(chunks, "api")
    assert "A tiny module." in api.text and api.line_start == 1


def _documents(instance: KnowledgeBase) -> list[Document]:
    """The vault's documents as kb-qa reads them (before any rendering)."""
    site = load_site(instance.settings.vault, "mkdocs", render=instance.settings.render)
    files, _ = vault_files.scan(site, instance.settings)
    boundary = vault_files.Boundary.of(instance.settings)
    docs = [vault_files.read_document(site, info, boundary).document for info in files]
    return [d for d in docs if d is not None]


# 6 -----------------------------------------------------------------------------------------

FAILING_HOOK = """\
def on_page_markdown(markdown, *, page, config, files):
    if page.file.src_uri == "broken.md":
        raise RuntimeError("the emu ate the shortcode")
    return markdown.replace("<!-- md:flag -->", "**flagged**")
"""


def test_a_hook_failing_on_one_page_is_reported_and_the_page_falls_back(
    make_vault: Callable[..., Path], kb: KB
) -> None:
    vault = make_vault(
        {
            "mkdocs.yml": "site_name: Failing\nhooks:\n  - hooks/failing.py\n",
            "hooks/failing.py": FAILING_HOOK,
            "docs/broken.md": "# Broken\n\n<!-- md:flag --> The cassowary page.\n",
            "docs/fine.md": "# Fine\n\n<!-- md:flag --> The lyrebird page.\n",
        }
    )
    instance = kb(vault)
    report = instance.index()
    failures = [w for w in warnings_text(report) if "emu ate" in w]
    assert len(failures) == 1, report.warnings
    assert "hooks/failing.py" in failures[0] and "broken.md" in failures[0]
    # The failing page is indexed from its source; the other one as rendered.
    broken = chunks_of(instance, "docs/broken.md")
    assert any("<!-- md:flag --> The cassowary page." in c.text for c in broken)
    assert broken[0].line_start == 1
    fine = chunks_of(instance, "docs/fine.md")
    assert any("**flagged**" in c.text and "lyrebird" in c.text for c in fine), fine
    assert not any("md:flag" in c.text for c in fine)


# 7 -----------------------------------------------------------------------------------------


def test_a_plugin_that_is_not_installed_is_named_once(
    make_vault: Callable[..., Path], kb: KB
) -> None:
    vault = make_vault(
        {
            "mkdocs.yml": (
                "site_name: Missing\nplugins:\n  - search\n  - not-a-real-plugin-xyz\n"
                "hooks:\n  - hooks/shortcodes.py\nmarkdown_extensions:\n  - attr_list\n"
            ),
            "hooks/shortcodes.py": HOOK,
            "docs/index.md": HOOK_SITE["docs/index.md"],
        }
    )
    instance = kb(vault)
    report = instance.index()
    named = [w for w in warnings_text(report) if "not-a-real-plugin-xyz" in w]
    assert len(named) == 1, report.warnings
    assert len(report.warnings) == 1, report.warnings
    assert "not installed" in named[0]
    # The rest of the site still renders: the hook ran.
    assert by_anchor(chunks_of(instance, "docs/index.md"), "config.lang")
    assert report.skipped == []


# 8 -----------------------------------------------------------------------------------------


def test_render_false_indexes_the_sources(
    built: Callable[[str, Files], tuple[Path, Path]], kb: KB
) -> None:
    vault, _ = built("hooks", HOOK_SITE)
    instance = kb(vault, render=False)
    report = instance.index()
    assert "rendering" not in report.phases
    chunks = chunks_of(instance, "docs/index.md")
    anchors = {c.anchor for c in chunks}
    assert "config.lang" not in anchors
    assert any("<!-- md:setting config.lang -->" in c.text for c in chunks)


def test_render_false_from_the_environment(
    built: Callable[[str, Files], tuple[Path, Path]],
    kb: KB,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    vault, _ = built("hooks", HOOK_SITE)
    monkeypatch.setenv("KBQA_RENDER", "false")
    instance = kb(vault)
    assert instance.settings.render is False
    instance.index()
    assert "config.lang" not in {c.anchor for c in chunks_of(instance, "docs/index.md")}


# 9 -----------------------------------------------------------------------------------------


def test_unchanged_site_renders_nothing_and_an_edited_hook_rechunks(
    fresh_hook_site: Path, kb: KB
) -> None:
    vault = fresh_hook_site
    instance = kb(vault)
    first = instance.index()
    assert first.changed_files == 2 and "rendering" in first.phases

    again = instance.index()
    assert again.changed_files == 0
    assert "rendering" not in again.phases
    assert again.rebuilt == ""

    hook = vault / "hooks" / "shortcodes.py"
    hook.write_text(HOOK.replace("{{ #{m.group(1)} }}", "{{ #opt-{m.group(1)} }}"), "utf-8")
    edited = instance.index()
    assert edited.rebuilt or edited.changed_files > 0
    assert "rendering" in edited.phases
    anchors = {c.anchor for c in chunks_of(instance, "docs/index.md")}
    assert "opt-config.lang" in anchors
    assert "config.lang" not in anchors


# 10 ----------------------------------------------------------------------------------------

OUTSIDE_HOOK = """\
def on_page_markdown(markdown, *, page, config, files):
    return markdown + "\\n\\nThe outside hook ran: platypus-from-outside.\\n"
"""


@pytest.mark.parametrize("how", ["symlink", "relative"])
def test_a_hook_outside_the_vault_is_not_run(tmp_path: Path, kb: KB, how: str) -> None:
    outside = tmp_path / "outside.py"
    outside.write_text(OUTSIDE_HOOK, encoding="utf-8")
    vault = tmp_path / "vault"
    (vault / "docs").mkdir(parents=True)
    (vault / "hooks").mkdir()
    (vault / "docs" / "index.md").write_text("# Home\n\nThe home page.\n", encoding="utf-8")
    if how == "symlink":
        (vault / "hooks" / "evil.py").symlink_to(outside)
        hook = "hooks/evil.py"
    else:
        hook = "../outside.py"
    (vault / "mkdocs.yml").write_text(f"site_name: Out\nhooks:\n  - {hook}\n", encoding="utf-8")

    instance = kb(vault)
    report = instance.index()
    said = [w for w in warnings_text(report) if hook in w and "not used" in w]
    assert len(said) == 1, report.warnings
    chunks = instance.store.chunks()
    assert chunks and all("platypus-from-outside" not in c.text for c in chunks)
    assert {c.anchor for c in chunks} == {"home"}


# 11 ----------------------------------------------------------------------------------------


def test_index_on_build_writes_the_hook_anchor(
    tmp_path: Path,
    write_files: WriteFiles,
    cli_env: Callable[..., dict[str, str]],
) -> None:
    files = dict(HOOK_SITE)
    files["mkdocs.yml"] += "plugins:\n  - search\n  - kb-qa:\n      index_on_build: true\n"
    vault = write_files(tmp_path / "vault", files)
    site = mkdocs_build(vault, tmp_path / "site", env=cli_env())
    assert 'id="config.lang"' in (site / "index.html").read_text(encoding="utf-8")
    with KnowledgeBase(vault, embed_model="hash") as instance:
        chunks = chunks_of(instance, "docs/index.md")
        [lang] = by_anchor(chunks, "config.lang")
        assert lang.heading == "lang"
        assert "wombat" in lang.text
        # The in-process render agrees with what the build handed over: nothing to redo.
        assert instance.index().changed_files == 0


def test_index_on_build_leaves_out_the_drafts_the_build_leaves_out(
    tmp_path: Path,
    write_files: WriteFiles,
    cli_env: Callable[..., dict[str, str]],
) -> None:
    files = dict(BLOG_SITE)
    files["mkdocs.yml"] += "  - kb-qa:\n      index_on_build: true\n"
    vault = write_files(tmp_path / "vault", files)
    result = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "-d", str(tmp_path / "site")],
        cwd=vault,
        env=cli_env(),
        capture_output=True,
        text=True,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    # Said once, as news: a draft is what the author asked for (--strict must not abort)
    assert "WARNING" not in result.stderr, result.stderr
    with KnowledgeBase(vault, embed_model="hash") as instance:
        assert chunks_of(instance, "docs/blog/posts/hello.md")
        assert not chunks_of(instance, "docs/blog/posts/draft.md")
        assert instance.index().changed_files == 0


def test_skip_plugins_skips_a_plugin_by_name(make_vault: Callable[..., Path], kb: KB) -> None:
    vault = make_vault(
        {
            "mkdocs.yml": (
                "site_name: Skip\nplugins:\n  - search\n  - not-a-real-plugin-xyz\n  - minify\n"
            ),
            "docs/index.md": "# Home\n\nThe home page.\n",
        }
    )
    assert "minify" in render_config.SKIPPED_PLUGINS  # (not installed here either: never asked for)
    report = kb(vault, skip_plugins=("not-a-real-plugin-xyz",)).index()
    assert report.warnings == []


# includes, the vault boundary, a config MkDocs rejects -------------------------------------


def _settled(instance: KnowledgeBase) -> KnowledgeBase:
    """``instance`` indexed, and indexed again: the second run renders nothing."""
    instance.index()
    again = instance.index()
    assert again.changed_files == 0 and "rendering" not in again.phases
    return instance


@pytest.mark.parametrize("form", ["with-options", "without-options", "crlf-block"])
def test_editing_an_included_file_renders_the_page_again(
    make_vault: Callable[..., Path], kb: KB, form: str
) -> None:
    site = dict(SNIPPET_SITE)
    if form == "without-options":  # "- pymdownx.snippets" with its defaults: the site's folder
        site["mkdocs.yml"] = "site_name: Snippets\nmarkdown_extensions:\n  - pymdownx.snippets\n"
        site["docs/guide.md"] = site["docs/guide.md"].replace("part.md", "includes/part.md")
    if form == "crlf-block":  # a Windows page listing its includes in a block: not tracked
        site["docs/guide.md"] = "# Guide\r\n\r\nOwn words.\r\n\r\n--8<--\r\npart.md\r\n--8<--\r\n"
    vault = make_vault(site, name="snippet-edit")
    instance = _settled(kb(vault))
    assert "numbat" in " ".join(c.text for c in instance.store.chunks())
    part = vault / "includes" / "part.md"
    part.write_text("## Included part\n\nNow the echidna lives here.\n", encoding="utf-8")
    report = instance.index()
    assert report.changed_files == 1  # docs/guide.md, whose own file did not change
    text = " ".join(c.text for c in instance.store.chunks())
    assert "echidna" in text and "numbat" not in text


@pytest.mark.parametrize("render_site", [True, False])
def test_a_snippet_that_leads_outside_the_vault_is_not_included(
    tmp_path: Path, kb: KB, render_site: bool
) -> None:
    secret = tmp_path / "secret.md"
    secret.write_text("## Secret\n\nThe outside-only-axolotl password.\n", encoding="utf-8")
    vault = tmp_path / "vault"
    (vault / "docs" / "snippets").mkdir(parents=True)
    (vault / "docs" / "snippets" / "leak.md").symlink_to(secret)
    (vault / "mkdocs.yml").write_text(
        "site_name: Leak\nmarkdown_extensions:\n  - pymdownx.snippets:\n"
        "      base_path: [docs/snippets, /]\n",
        encoding="utf-8",
    )
    (vault / "docs" / "index.md").write_text(
        f'# Home\n\nOur words.\n\n--8<-- "leak.md"\n\n--8<-- "{secret}"\n', encoding="utf-8"
    )
    instance = kb(vault, render=render_site)
    instance.index()
    chunks = instance.store.chunks()
    assert chunks and all("axolotl" not in c.text and "Secret" not in c.heading for c in chunks)
    assert {c.anchor for c in chunks} == {"home"}


@pytest.mark.parametrize("render_site", [True, False])
def test_a_snippet_the_config_appends_from_a_url_is_never_fetched(
    tmp_path: Path, kb: KB, render_site: bool
) -> None:
    """``auto_append`` names snippets added to every page; with ``url_download`` a URL one
    was fetched while kb-qa tried the extension on a sample page, before the guard that keeps
    includes inside the vault was loaded (a vault could make kb-qa call any address)."""
    asked: list[str] = []

    class Listener(http.server.BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            asked.append(self.path)
            self.send_response(200)
            self.end_headers()
            self.wfile.write(b"## Fetched\n\nThe fetched-fennec text.\n")

        def log_message(self, *args: object) -> None:
            pass

    server = http.server.HTTPServer(("127.0.0.1", 0), Listener)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        vault = tmp_path / "vault"
        (vault / "docs").mkdir(parents=True)
        (vault / "mkdocs.yml").write_text(
            "site_name: Fetch\nmarkdown_extensions:\n  - pymdownx.snippets:\n"
            "      url_download: true\n      auto_append:\n"
            f"        - http://127.0.0.1:{server.server_port}/appended.md\n",
            encoding="utf-8",
        )
        (vault / "docs" / "index.md").write_text("# Home\n\nOur words.\n", encoding="utf-8")
        instance = kb(vault, render=render_site)
        instance.index()
        chunks = instance.store.chunks()
    finally:
        server.shutdown()
        server.server_close()
    assert asked == []
    assert chunks and all("fennec" not in c.text for c in chunks)


def test_a_config_mkdocs_rejects_is_reported_in_its_words(
    make_vault: Callable[..., Path], kb: KB
) -> None:
    vault = make_vault(
        {
            "mkdocs.yml": "site_name: Bad\nuse_directory_urls: maybe\n",
            "docs/index.md": "# Home\n\n## Part\n\nText.\n",
        }
    )
    report = kb(vault).index()
    said = [w for w in warnings_text(report) if "MkDocs could not load it" in w]
    assert len(said) == 1 and "use_directory_urls" in said[0], report.warnings
    assert "indexed from their Markdown sources" in said[0]
    assert report.chunks == 2 and not report.skipped


def test_headings_after_numbered_code_are_all_chunked(
    make_vault: Callable[..., Path], kb: KB
) -> None:
    """Pygments' line numbers are a table beside the code: converted as they are, the code
    became a table cell (and on Material's code-blocks page, inside a list, a code fence that
    swallowed the six headings after it). The page takes the HTML route (a snippet)."""
    page = (
        "# Code\n\n"
        '--8<-- "note.md"\n\n'
        '``` py linenums="1"\ndef f():\n    return 1\n```\n\n'
        "## After the code\n\nText after.\n\n"
        '!!! note "In a note"\n\n    ### Inside the note\n\n    Noted.\n\n'
        "## Last\n\nThe end.\n"
    )
    vault = make_vault(
        {
            "mkdocs.yml": "site_name: C\nmarkdown_extensions:\n  - admonition\n"
            "  - pymdownx.highlight\n  - pymdownx.superfences\n"
            "  - pymdownx.snippets:\n      base_path: [includes]\n",
            "docs/index.md": page,
            "includes/note.md": "Read this page first.\n",
        }
    )
    instance = kb(vault)
    instance.index()
    assert "Read this page first." in " ".join(c.text for c in instance.store.chunks())
    anchors_ = [c.anchor for c in instance.store.chunks() if c.piece == 0]
    assert anchors_ == ["code", "after-the-code", "inside-the-note", "last"]
    [code] = [c for c in instance.store.chunks() if c.anchor == "code"]
    assert "return 1" in code.text and "|" not in code.text  # the code, not a table of it


def test_editing_documented_code_renders_its_api_page_again(
    make_vault: Callable[..., Path], kb: KB
) -> None:
    """A page of sections mkdocstrings generates depends on the vault's Python files: a
    docstring edit shows up in the next run (``kb-qa watch`` starts one on a .py save)."""
    vault = make_vault(dict(DOCSTRING_SITE), name="docstring-edit")
    instance = _settled(kb(vault))
    module = vault / "src" / "tinymod.py"
    module.write_text(
        module.read_text(encoding="utf-8").replace("politely", "with a wombat hat"),
        encoding="utf-8",
    )
    report = instance.index()
    assert report.changed_files == 1  # docs/api.md, whose own file did not change
    text = " ".join(c.text for c in chunks_of(instance, "docs/api.md"))
    assert "wombat hat" in text and "politely" not in text
    # Pages without generated sections do not depend on the code.
    assert instance.index().changed_files == 0


def test_index_on_build_sees_the_markdown_before_any_plugin_changed_it(
    tmp_path: Path,
    write_files: WriteFiles,
    cli_env: Callable[..., dict[str, str]],
) -> None:
    """A hook (or plugin) that runs before kb-qa's own on_page_markdown (a higher event
    priority) still counts as a change: the page is chunked from what it rendered."""
    files = dict(HOOK_SITE)
    files["hooks/shortcodes.py"] = HOOK.replace(
        "import re\n", "import re\n\nfrom mkdocs.plugins import event_priority\n"
    ).replace("def on_page_markdown", "@event_priority(90)\ndef on_page_markdown")
    files["mkdocs.yml"] += "plugins:\n  - search\n  - kb-qa:\n      index_on_build: true\n"
    vault = write_files(tmp_path / "vault", files)
    mkdocs_build(vault, tmp_path / "site", env=cli_env())
    with KnowledgeBase(vault, embed_model="hash") as instance:
        chunks = chunks_of(instance, "docs/index.md")
        [lang] = by_anchor(chunks, "config.lang")
        assert "md:setting" not in " ".join(c.text for c in chunks), [c.text for c in chunks]
        assert "wombat" in lang.text


def test_a_page_an_extension_fails_on_is_indexed_from_its_source(
    make_vault: Callable[..., Path], kb: KB
) -> None:
    """FastAPI's docs with their include extension installed and the included files absent:
    the build failed on 90 pages, and reading their sources with the same extensions failed
    too, so they were left out ("nor could its source be parsed"). Their headings alone
    give the ids: each is indexed from its source, with a warning."""
    vault = make_vault(
        {
            "mkdocs.yml": (
                "site_name: S\nmarkdown_extensions:\n  - toc\n"
                "  - pymdownx.snippets:\n      check_paths: true\n"
            ),
            "docs/index.md": "# Home\n\nWelcome.\n",
            "docs/guide.md": (
                "# Guide\n\n## Declaring a body\n\nUse a model for the numbat body.\n\n"
                '--8<-- "missing/example.py"\n\n## Testing\n\nThe client tests the quokka.\n'
            ),
        }
    )
    base = kb(vault)
    report = base.index()
    chunks = [c for c in base.store.chunks() if c.path == "docs/guide.md"]
    assert [c.anchor for c in chunks] == ["guide", "declaring-a-body", "testing"], report.skipped
    assert any("numbat body" in c.text for c in chunks)
    assert not report.skipped
    [(path, said)] = report.warnings  # the build's failure, said once
    assert path == "docs/guide.md" and said.endswith("the page is indexed from its source")


def test_a_page_that_is_a_symlink_is_rendered_under_its_own_name(
    make_vault: Callable[..., Path], kb: KB
) -> None:
    """copier's ``docs/index.md`` links to ``../README.md`` (as many projects' do): MkDocs
    builds it as the home page, but kb-qa named it by its target, skipped it as a page the
    build leaves out, and "How do I install copier?" was not covered."""
    vault = make_vault(
        {
            "mkdocs.yml": "site_name: P\n",
            "README.md": "# P\n\n## Install\n\nRun `pipx install p`.\n",
            "docs/other.md": "# Other\n\nElse.\n",
        }
    )
    (vault / "docs" / "index.md").symlink_to("../README.md")
    instance = kb(vault)
    report = instance.index()
    assert "rendering" in report.phases
    assert not report.skipped, report.skipped
    [install] = [c for c in chunks_of(instance, "docs/index.md") if c.heading == "Install"]
    assert (install.url, install.anchor) == ("", "install")
    assert "pipx install p" in install.text


GENERATING_HOOK = """\
import os
import tempfile

from mkdocs.structure.files import File


def on_files(files, config):
    # As mkdocs-gen-files does: the page is written to a folder of its own, outside the docs
    folder = tempfile.mkdtemp(prefix="gen-")
    os.makedirs(os.path.join(folder, "reference"))
    with open(os.path.join(folder, "reference", "cli.md"), "w", encoding="utf-8") as out:
        out.write("# CLI\\n\\nRun `relay --help`.\\n")
    files.append(File("reference/cli.md", folder, config["site_dir"], True))
    return files
"""


def test_pages_a_plugin_generates_outside_the_vault_are_said_not_to_be_indexed(
    make_vault: Callable[..., Path], kb: KB
) -> None:
    """pipx's CLI reference is written by mkdocs-gen-files into a temporary folder: the page
    users need most was left out of the index without a word."""
    vault = make_vault(
        {
            "mkdocs.yml": "site_name: Relay\nhooks:\n  - hooks/gen.py\n",
            "hooks/gen.py": GENERATING_HOOK,
            "docs/index.md": "# Relay\n\nRelay relays.\n",
        }
    )
    report = kb(vault).index()
    said = [message for _, message in report.warnings]
    assert any(
        "1 page(s) a plugin generates outside the vault are not indexed (reference/cli.md)" in m
        for m in said
    ), said
    assert report.files == 1 and not report.skipped
