"""``kb-qa init``: the widget wired into a site's own config, then real builds that carry it.

Builds: a project made by ``zensical new``, sample_site (mkdocs.yml) under ``zensical build``
and under ``mkdocs build`` with the kb-qa plugin too (one widget per page), and a folder of
built HTML pages.
"""

from __future__ import annotations

import difflib
import html
import json
import re
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
import tomlkit
from kb_qa_widget import ASSETS, FILES, version
from ruamel.yaml import YAML

from kb_qa.cli import main
from kb_qa.wiring.options import LOADER_PATH

ROOT = Path(__file__).resolve().parents[1]
SAMPLE_SITE = ROOT / "sample_site"
ZENSICAL = Path(sys.executable).with_name("zensical")
needs_zensical = pytest.mark.skipif(not ZENSICAL.is_file(), reason="zensical is not installed")

LOADER_RE = re.compile(r'<script src="([^"]*kb-qa/kb-qa-options\.js)"')
CSS_RE = re.compile(r'<link rel="stylesheet" href="([^"]*kb-qa/kb-qa\.css)"')


def init(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str]:
    code = main(["init", *args])
    out = capsys.readouterr()
    return code, out.out + out.err


def only_added(before: str, after: str, edited: tuple[str, ...] = ()) -> list[str]:
    """The lines ``after`` adds to ``before``; fails if a line other than ``edited`` changed."""
    ops = difflib.ndiff(before.splitlines(), after.splitlines())
    lines = list(ops)
    removed = [line[2:] for line in lines if line.startswith("- ")]
    assert set(removed) <= set(edited), f"lines changed or removed: {removed}"
    return [line[2:] for line in lines if line.startswith("+ ")]


def zensical_build(root: Path) -> Path:
    result = subprocess.run(
        [str(ZENSICAL), "build", "--clean"],
        cwd=root,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    return root / "site"


def built_pages(site: Path) -> list[Path]:
    return sorted(p for p in site.rglob("*.html") if "kb-qa" not in p.parts)


def assert_every_page_loads_the_widget(site: Path) -> None:
    pages = built_pages(site)
    assert pages
    for page in pages:
        text = page.read_text(encoding="utf-8")
        scripts, links = LOADER_RE.findall(text), CSS_RE.findall(text)
        assert len(scripts) == 1 and len(links) == 1, page
        # 404.html is served at any path: its links start at the site's root ("/kb-qa/...").
        base = site if scripts[0].startswith("/") else page.parent
        target = (base / scripts[0].lstrip("/")).resolve()
        assert target == (site / LOADER_PATH).resolve(), page
    for name in FILES:
        assert (site / "kb-qa" / name).read_bytes() == (ASSETS / name).read_bytes()


@needs_zensical
def test_init_on_a_zensical_new_project(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    root = tmp_path / "project"
    subprocess.run([str(ZENSICAL), "new", str(root)], check=True, capture_output=True)
    config = root / "zensical.toml"
    before = config.read_text(encoding="utf-8")

    assert init(capsys, str(root), "--check")[0] == 1
    code, out = init(capsys, str(root), "--dry-run", "--title", "Ask us", "--suggested", "How?")
    assert code == 0 and '+extra_javascript = ["kb-qa/kb-qa-options.js"]' in out
    assert "dry run" in out and config.read_text(encoding="utf-8") == before
    assert not (root / "docs" / "kb-qa").exists()

    code, out = init(capsys, str(root), "--title", "Ask us", "--suggested", "How?")
    assert code == 0 and "--- a/zensical.toml" in out and "new: docs/kb-qa/kb-qa.js" in out
    after = config.read_text(encoding="utf-8")
    # Every comment and setting of the template stays as it was; only kb-qa's lines are new.
    added = only_added(before, after)
    assert '# extra_javascript = ["javascripts/extra.js"]' in after
    assert set(added) == {
        'extra_css = ["kb-qa/kb-qa.css"]',
        'extra_javascript = ["kb-qa/kb-qa-options.js"]',
        "",
        "[project.extra.kb_qa]",
        'endpoint = ""',
        'title = "Ask us"',
        'suggested_questions = ["How?"]',
    }
    project = tomlkit.parse(after).unwrap()["project"]
    assert project["extra"]["kb_qa"]["title"] == "Ask us"

    code, out = init(capsys, str(root))
    assert code == 0 and "nothing to change" in out
    assert config.read_text(encoding="utf-8") == after
    assert init(capsys, str(root), "--check")[0] == 0

    site = zensical_build(root)
    assert_every_page_loads_the_widget(site)
    loader = (site / LOADER_PATH).read_text(encoding="utf-8")
    options = json.loads(re.search(r"var options = (\{.*\});", loader).group(1))
    assert options["title"] == "Ask us" and options["suggested"] == ["How?"]
    assert options["site_url"] == "https://www.example.com/"
    assert f'"kb-qa.js?v={version()}"' in loader  # this widget's version, not a cached one

    # Another port for the preview's API: the next step says to serve there (it said
    # 8321 whatever the loader asked, and the preview's chat called a port nobody answered).
    code, out = init(capsys, str(root), "--preview-endpoint", "http://127.0.0.1:8623")
    assert code == 0
    assert f"run `kb-qa serve {root} --watch --port 8623` beside your preview" in out
    assert "(the preview's chat asks http://127.0.0.1:8623)" in out
    code, out = init(capsys, str(root), "--preview-endpoint", "http://127.0.0.1:8321")
    assert code == 0 and f"run `kb-qa serve {root} --watch` beside your preview" in out
    after = config.read_text(encoding="utf-8")

    # A changed setting replaces kb-qa's own table and nothing else.
    code, _ = init(capsys, str(root), "--endpoint", "https://api.example.com")
    again = config.read_text(encoding="utf-8")
    assert code == 0 and 'endpoint = "https://api.example.com"' in again
    assert 'title = "Ask us"' in again
    only_added(before, again)


def test_init_keeps_mkdocs_yml_formatting(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Mixed indentation, flow lists, quotes and comments: ruamel.yaml finds the entries,
    kb-qa inserts lines, nothing else is re-serialised."""
    root = tmp_path / "site"
    (root / "docs").mkdir(parents=True)
    (root / "docs" / "index.md").write_text("# Home\n", encoding="utf-8")
    before = """\
site_name: 'Mixed'   # quoted, with a comment
theme:
  name: material
nav:
  - Home: index.md
  - About:
    - index.md     # a less indented nested list
extra_css: ['extra.css']
extra_javascript:
    - path: extra.js
      defer: true
extra:
  analytics:
    provider: none
"""
    config = root / "mkdocs.yml"
    config.write_text(before, encoding="utf-8")
    code, out = init(capsys, str(root), "--suggested", "Où est la clé ?")
    after = config.read_text(encoding="utf-8")
    assert code == 0
    # What answers the chat is said: an owner of a MkDocs 1.x site wired it, ran `mkdocs
    # serve` and got "Could not reach the answer service", without a word about why.
    assert f"run `kb-qa serve {root} --watch` beside your preview" in out
    assert "`- kb-qa` under `plugins:` has `mkdocs serve` run it." in out
    # The flow list is edited in place; everything else is only added to.
    added = only_added(before, after, edited=("extra_css: ['extra.css']",))
    assert "    - kb-qa/kb-qa-options.js" in added
    assert "extra_css: [kb-qa/kb-qa.css, 'extra.css']" in added
    data = YAML(typ="safe").load(after)
    assert data["extra_javascript"][0] == "kb-qa/kb-qa-options.js"
    assert data["extra"]["analytics"] == {"provider": "none"}
    assert data["extra"]["kb_qa"]["suggested_questions"] == ["Où est la clé ?"]
    assert init(capsys, str(root))[1].endswith("nothing to change.\n")

    code, _ = init(capsys, str(root), "--title", "Ask")
    changed = config.read_text(encoding="utf-8")
    assert YAML(typ="safe").load(changed)["extra"]["kb_qa"]["title"] == "Ask"
    assert YAML(typ="safe").load(changed)["extra"]["analytics"] == {"provider": "none"}
    assert changed.count("kb_qa:") == 1


def copy_sample_site(tmp_path: Path) -> Path:
    root = tmp_path / "sample"
    shutil.copytree(SAMPLE_SITE, root, ignore=shutil.ignore_patterns(".kb-qa", "site"))
    return root


@needs_zensical
def test_sample_site_wired_builds_with_zensical_and_with_mkdocs(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], cli_env: Callable[..., dict[str, str]]
) -> None:
    root = copy_sample_site(tmp_path)
    before = (root / "mkdocs.yml").read_text(encoding="utf-8")
    code, _ = init(capsys, str(root), "--title", "Ask Lumen")
    assert code == 0
    only_added(before, (root / "mkdocs.yml").read_text(encoding="utf-8"))
    # Zensical ignores the kb-qa plugin: the widget comes from extra_javascript.
    assert_every_page_loads_the_widget(zensical_build(root))

    # MkDocs runs the plugin too: the widget is on each page once, with extra.kb_qa's title.
    result = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--quiet", "-d", str(tmp_path / "mk")],
        cwd=root,
        env=cli_env(NO_MKDOCS_2_WARNING="1"),
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    for page in built_pages(tmp_path / "mk"):
        text = page.read_text(encoding="utf-8")
        assert not LOADER_RE.search(text), page
        assert len(re.findall(r'href="[^"]*kb-qa/kb-qa\.css(\?v=\w+)?"', text)) == 1, page
        raw = re.findall(r'data-kb-qa-options="([^"]*)"', text)
        assert len(raw) == 1, page
        assert json.loads(html.unescape(raw[0]))["title"] == "Ask Lumen"


@needs_zensical
def test_init_on_a_folder_of_html_pages(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    root = copy_sample_site(tmp_path)
    (root / "mkdocs.yml").write_text(
        (root / "mkdocs.yml").read_text(encoding="utf-8").replace("site_url:", "#site_url:"),
        encoding="utf-8",
    )
    site = zensical_build(root)
    assert init(capsys, str(site), "--check")[0] == 1
    code, out = init(capsys, str(site), "--endpoint", "https://api.example.com")
    assert code == 0 and "new: kb-qa/kb-qa.js" in out
    assert "with KBQA_CORS_ORIGINS set to the site's origin" in out
    for page in built_pages(site):
        text = page.read_text(encoding="utf-8")
        raw = re.findall(r'data-kb-qa-options="([^"]*)"', text)
        assert len(raw) == 1, page
        options = json.loads(html.unescape(raw[0]))
        assert options["endpoint"] == "https://api.example.com"
        src, v = re.search(r'<script src="([^"]+kb-qa\.js)\?v=(\w+)"', text).groups()
        assert v == version()
        if page.name == "404.html":  # served at any path: from the root, as its own links
            assert src == "/kb-qa/kb-qa.js" and options["root"] == "/"
            continue
        assert (page.parent / src).resolve() == (site / "kb-qa" / "kb-qa.js").resolve()
        assert (page.parent / options["root"]).resolve() == site.resolve()
    assert init(capsys, str(site), "--endpoint", "https://api.example.com")[1].endswith(
        "nothing to change.\n"
    )
    # Run again as the docs say, after each build, without the options: a folder of pages
    # has no config to keep them, so they are kept from the pages' own tags (the endpoint
    # was wiped, and the widget asked the static host).
    assert init(capsys, str(site), "--check")[0] == 0
    assert init(capsys, str(site))[1].endswith("nothing to change.\n")
    (site / "new.html").write_text("<html><head></head><body><h1>New</h1></body></html>")
    assert init(capsys, str(site))[0] == 0
    new = (site / "new.html").read_text(encoding="utf-8")
    (raw,) = re.findall(r'data-kb-qa-options="([^"]*)"', new)
    assert json.loads(html.unescape(raw))["endpoint"] == "https://api.example.com"


def test_init_explains_a_folder_it_cannot_wire(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out = init(capsys, str(tmp_path))
    assert code == 1 and "no zensical.toml, mkdocs.yml or .html pages" in out


@pytest.mark.parametrize(
    "config",
    [
        "site_name: A",  # no final newline
        "site_name: A\nextra:\nextra_css:\n",
        "site_name: A\nextra: {}\nextra_javascript: []\n",
        "site_name: A\nextra:\n  kb_qa:\n    title: Old\n    # a stale comment\n\n  other: 1\n",
    ],
)
def test_init_yaml_corner_cases(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], config: str
) -> None:
    (tmp_path / "docs").mkdir()
    (tmp_path / "mkdocs.yml").write_text(config, encoding="utf-8")
    assert init(capsys, str(tmp_path), "--title", "New")[0] == 0
    data = YAML(typ="safe").load((tmp_path / "mkdocs.yml").read_text(encoding="utf-8"))
    assert data["site_name"] == "A"
    assert data["extra_css"] == ["kb-qa/kb-qa.css"]
    assert data["extra_javascript"] == ["kb-qa/kb-qa-options.js"]
    assert data["extra"]["kb_qa"]["title"] == "New"
    assert data["extra"].get("other", 1) == 1
    assert init(capsys, str(tmp_path))[1].endswith("nothing to change.\n")


def test_init_refuses_a_flow_extra_it_would_rewrite(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "docs").mkdir()
    (tmp_path / "mkdocs.yml").write_text("site_name: A\nextra: {a: 1}\n", encoding="utf-8")
    code, out = init(capsys, str(tmp_path))
    assert code == 1 and "Add these lines under extra: by hand" in out


def test_a_404_page_served_under_a_sub_path_reaches_the_widget_from_there(tmp_path: Path) -> None:
    """Its links are root-absolute (it is served at any URL); relative ones to the widget
    resolved against the missing page's URL, and the launcher never showed."""
    from kb_qa.wiring.tags import root_path

    (tmp_path / "assets").mkdir()
    (tmp_path / "assets" / "main.css").write_text("", encoding="utf-8")
    page = '<link href="https://cdn.example/x.css"><link href="/docs/assets/main.css">'
    assert root_path(page, tmp_path) == "/docs/"
    # Nothing says where the root is (a hand-written site, relative links): no guess, the
    # widget's links stay relative as the page's own are (a site under /proj/ keeps working).
    assert root_path('<link href="style.css"><p>nothing linked</p>', tmp_path) == ""


DOTTED_EXTRA = """\
[project]
site_name = "Dotted"
# Material's own way to hide "Made with": a dotted key under [project].
extra.generator = false
nav = [
  { "Home" = "index.md" },
  { "Guide" = "guide.md" },
]
extra.status.new = "Recently added"
extra_css = ["extra.css"]

[project.theme]
features = ["navigation.instant"]
"""


@needs_zensical
def test_init_adds_to_dotted_extra_keys_without_moving_the_settings_after_them(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """``extra.generator = false`` under ``[project]``: a ``[extra.kb_qa]`` table inserted
    after it took every setting below it (``nav``, ``extra_css``) out of ``[project]``, so
    Zensical built the site without its nav and without the widget, and ``--check`` failed."""
    (tmp_path / "docs").mkdir()
    for name in ("index", "guide"):
        (tmp_path / "docs" / f"{name}.md").write_text(f"# {name}\n", encoding="utf-8")
    (tmp_path / "docs" / "extra.css").write_text("", encoding="utf-8")
    config = tmp_path / "zensical.toml"
    config.write_text(DOTTED_EXTRA, encoding="utf-8")
    wanted = tomlkit.parse(DOTTED_EXTRA).unwrap()

    assert init(capsys, str(tmp_path), "--title", "Ask")[0] == 0
    after = config.read_text(encoding="utf-8")
    only_added(DOTTED_EXTRA, after, edited=('extra_css = ["extra.css"]',))
    data = tomlkit.parse(after).unwrap()
    assert set(data) == {"project"}, after
    project = data["project"]
    assert project["extra"].pop("kb_qa")["title"] == "Ask"
    assert project.pop("extra_javascript") == [LOADER_PATH]
    assert project["extra_css"] == ["extra.css", "kb-qa/kb-qa.css"]
    project["extra_css"].pop()
    assert data == wanted
    assert init(capsys, str(tmp_path), "--title", "Ask")[1].endswith("nothing to change.\n")
    assert init(capsys, str(tmp_path), "--check")[0] == 0

    site = zensical_build(tmp_path)
    assert_every_page_loads_the_widget(site)
    # The nav is the site's own ("Guide", not the page's title "guide").
    text = re.sub(r"\s+", " ", (site / "index.html").read_text(encoding="utf-8"))
    assert re.search(r'href="./guide/" class="md-nav__link">.*?Guide', text)
    assert ">guide<" not in text.replace(" ", "")


def test_init_leaves_a_blank_line_between_its_table_and_the_next(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "docs").mkdir()
    before = '[project]\nsite_name = "A"\n\n[project.extra]\ngenerator = false\n\n[project.theme]\n'
    (tmp_path / "zensical.toml").write_text(before, encoding="utf-8")
    assert init(capsys, str(tmp_path))[0] == 0
    after = (tmp_path / "zensical.toml").read_text(encoding="utf-8")
    assert "suggested_questions = []\n\n[project.theme]\n" in after
    assert after.endswith("[project.theme]\n")


def test_a_zensical_site_versioned_with_mike_is_wired_with_its_default_version(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The widget maps a citation back onto its page's root by the prefix the index gives
    links (``kb_qa.ingest.versioning``): on a mike site that names its default version, the
    loader `kb-qa init` writes must hold the same prefix, version folder included, or every
    citation would open ``/2.0/latest/…``."""
    from kb_qa.kb.knowledge_base import KnowledgeBase

    root = tmp_path / "site"
    (root / "docs").mkdir(parents=True)
    (root / "docs" / "index.md").write_text("# Home\n\n## Start\n\nHello.\n", encoding="utf-8")
    (root / "zensical.toml").write_text(
        '[project]\nsite_name = "S"\nsite_url = "https://docs.example.org/s/"\n\n'
        '[project.extra.version]\nprovider = "mike"\ndefault = "stable"\n',
        encoding="utf-8",
    )
    assert init(capsys, str(root))[0] == 0
    loader = (root / "docs" / LOADER_PATH).read_text(encoding="utf-8")
    options = json.loads(re.search(r"var options = (\{.*\});", loader).group(1))
    assert options["site_url"] == "https://docs.example.org/s/stable/"
    with KnowledgeBase(root, index_dir=tmp_path / "index", embed_model="hash") as kb:
        kb.index()
        [chunk] = [c for c in kb.store.chunks() if c.anchor == "start"]
        assert kb.url(chunk) == "https://docs.example.org/s/stable/#start"


def test_check_on_a_site_with_the_plugin_says_which_builds_it_serves(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A CI job's `kb-qa init --check` on a site using the MkDocs plugin said "not wired up
    (or is out of date)", though `mkdocs build` adds the chat: it says which builds have it."""
    root = copy_sample_site(tmp_path)
    code, said = init(capsys, str(root), "--check")
    assert code == 1 and "has the kb-qa MkDocs plugin: built by MkDocs or ProperDocs" in said
    assert "this check does not apply" in said and "not wired up (or is out of date)" not in said
