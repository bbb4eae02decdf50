"""Translated and versioned MkDocs sites, built for real: every citation opens a page and an
id the build has, in the reader's language and version.

Translations are made with mkdocs-static-i18n (both its layouts: ``docs/fr/page.md`` and
``page.fr.md``), versions with mike (``mike deploy`` runs ``mkdocs build`` with
``MIKE_DOCS_VERSION`` set and its plugin first). Both are in the test extra; each test
skips when its plugin is not installed. Nothing of kb-qa is mocked: real ``mkdocs build``,
a real KnowledgeBase (hash embedder), the widget options exactly as the build wrote them.
"""

from __future__ import annotations

import html
import json
import re
from collections.abc import Callable, Mapping
from pathlib import Path

import httpx
import pytest
from uvicorn_thread import UvicornThread
from widget_stack import mkdocs_build

from kb_qa.ingest import i18n_layout, render_files
from kb_qa.kb.knowledge_base import KnowledgeBase
from kb_qa.serve.app import create_app

KB = Callable[..., KnowledgeBase]
Files = Mapping[str, str]

RETRIES_EN = (
    "# Retries\n\nLumen retries failed jobs.\n\n"
    "## Default policy\n\nEvery job is attempted five times (`retry.max_attempts`).\n"
)
RETRIES_FR = (
    "# Nouvelles tentatives\n\nLumen relance les tâches en échec.\n\n"
    "## Politique par défaut\n\nChaque tâche est tentée cinq fois (`retry.max_attempts`).\n"
)
HOME_EN = "# Lumen\n\n## Where to start\n\nRead the retries guide.\n"
HOME_FR = "# Lumen\n\n## Par où commencer\n\nLisez le guide des nouvelles tentatives.\n"
ONLY_EN = "# Install\n\n## Requirements\n\nLinux only, for now.\n"


def i18n_config(structure: str) -> str:
    return (
        "site_name: Lumen\n"
        "site_url: https://lumen.example.com/\n"
        "plugins:\n"
        "  - search\n"
        "  - i18n:\n"
        f"      docs_structure: {structure}\n"
        "      languages:\n"
        "        - {locale: en, default: true, name: English}\n"
        "        - {locale: fr, name: Français}\n"
        "  - kb-qa\n"
        "markdown_extensions:\n"
        "  - toc:\n"
        "      permalink: true\n"
    )


SUFFIX_SITE: Files = {
    "mkdocs.yml": i18n_config("suffix"),
    "docs/index.md": HOME_EN,
    "docs/index.fr.md": HOME_FR,
    "docs/guides/retries.md": RETRIES_EN,
    "docs/guides/retries.fr.md": RETRIES_FR,
    "docs/install.md": ONLY_EN,  # not translated: the French site shows it in English
}
FOLDER_SITE: Files = {
    "mkdocs.yml": i18n_config("folder"),
    "docs/en/index.md": HOME_EN,
    "docs/fr/index.md": HOME_FR,
    "docs/en/guides/retries.md": RETRIES_EN,
    "docs/fr/guides/retries.md": RETRIES_FR,
    "docs/en/install.md": ONLY_EN,
}
# What a French reader must be cited: the French page's URL, the French heading's id.
FRENCH = {
    "guides/retries": ("fr/guides/retries/", {"nouvelles-tentatives", "politique-par-defaut"}),
    "index": ("fr/", {"lumen", "par-ou-commencer"}),
}


def page_ids(site: Path, url: str) -> set[str]:
    """The ids of the built page at ``url`` (empty when the build has no such page)."""
    page = site / url / "index.html" if url == "" or url.endswith("/") else site / url
    if not page.is_file():
        return set()
    return set(re.findall(r'\sid="([^"]+)"', page.read_text(encoding="utf-8")))


@pytest.mark.parametrize("render", [True, False], ids=["rendered", "files"])
@pytest.mark.parametrize(("layout", "files"), [("suffix", SUFFIX_SITE), ("folder", FOLDER_SITE)])
def test_translated_pages_are_cited_at_their_language_url(
    layout: str,
    files: Files,
    render: bool,
    make_vault: Callable[..., Path],
    kb: KB,
    tmp_path: Path,
    cli_env: Callable[..., dict[str, str]],
) -> None:
    """``page.fr.md`` was cited at ``page.fr/``, a page the build does not have: every French
    section of a suffix-layout site opened a 404. So it still was, and the default language
    of a folder-layout site at ``en/...``, when the site was indexed from its files
    (``render: false``), not as it renders."""
    pytest.importorskip("mkdocs_static_i18n")
    vault = make_vault(dict(files), name=layout)
    result = mkdocs_build(vault, tmp_path / "site", cli_env(), "--quiet")
    assert result.returncode == 0, result.stderr
    instance = kb(vault, render=render)
    report = instance.index()
    assert report.skipped == []
    chunks = instance.store.chunks()
    assert {c.path for c in chunks} == {p for p in files if p.endswith(".md")}
    for chunk in chunks:
        assert chunk.anchor in page_ids(tmp_path / "site", chunk.url), (chunk.path, chunk.link)
    french = [c for c in chunks if ".fr." in c.path or "/fr/" in c.path]
    for stem, (url, anchors) in FRENCH.items():
        mine = [c for c in french if stem in c.path]
        assert {c.url for c in mine} == {url}, [c.link for c in mine]
        assert {c.anchor for c in mine} == anchors
    assert all(c.url.startswith("fr/") for c in french)
    assert not any(c.url.startswith("fr/") for c in chunks if c not in french)
    assert instance.url(french[0]).startswith("https://lumen.example.com/fr/")


def test_the_plugin_is_read_as_mkdocs_reads_its_settings() -> None:
    """Listed or as a mapping; switched off; the first language the default when none is."""
    langs = [{"locale": "de"}, {"locale": "fr"}]
    listed = i18n_layout.languages_of({"plugins": ["search", {"i18n": {"languages": langs}}]})
    mapped = i18n_layout.languages_of({"plugins": {"i18n": {"languages": langs}}})
    assert listed == mapped == i18n_layout.Languages("suffix", "de", frozenset({"de", "fr"}))
    assert listed is not None
    assert i18n_layout.published_path("a/b.fr.md", listed) == "fr/a/b.md"
    assert i18n_layout.published_path("a/b.de.md", listed) == "a/b.md"
    assert i18n_layout.published_path("a/v1.2.md", listed) == "a/v1.2.md"
    off = {"plugins": [{"i18n": {"enabled": False, "languages": langs}}]}
    assert i18n_layout.languages_of(off) is None
    assert i18n_layout.languages_of({"plugins": ["search"]}) is None


def test_a_language_the_site_does_not_build_is_not_indexed_until_it_is_built(
    make_vault: Callable[..., Path],
    kb: KB,
    tmp_path: Path,
    cli_env: Callable[..., dict[str, str]],
) -> None:
    """``build: false`` keeps French out of the site: kb-qa indexed the ``.fr.md`` files
    from their sources, citing each at ``page.fr/`` (a 404) in answers to English readers."""
    pytest.importorskip("mkdocs_static_i18n")
    files = dict(SUFFIX_SITE)
    files["mkdocs.yml"] = files["mkdocs.yml"].replace(
        "name: Français}", "name: Français, build: false}"
    )
    vault = make_vault(files)
    result = mkdocs_build(vault, tmp_path / "site", cli_env(), "--quiet")
    assert result.returncode == 0, result.stderr
    assert not (tmp_path / "site" / "fr").exists()
    instance = kb(vault)
    report = instance.index()
    french = {"docs/index.fr.md", "docs/guides/retries.fr.md"}
    assert {c.path for c in instance.store.chunks()} == {
        p for p in files if p.endswith(".md")
    } - french
    assert dict(report.skipped) == dict.fromkeys(french, render_files.UNPUBLISHED)
    for chunk in instance.store.chunks():
        assert chunk.anchor in page_ids(tmp_path / "site", chunk.url), chunk.link
    # Built after all: the config changed, so the French pages are indexed at fr/
    (vault / "mkdocs.yml").write_text(SUFFIX_SITE["mkdocs.yml"], encoding="utf-8")
    report = instance.index()
    assert report.skipped == []
    urls = {c.path: c.url for c in instance.store.chunks()}
    assert urls["docs/guides/retries.fr.md"] == "fr/guides/retries/"


@pytest.mark.parametrize(("layout", "files"), [("suffix", SUFFIX_SITE), ("folder", FOLDER_SITE)])
def test_a_language_the_site_does_not_build_is_left_out_of_an_index_of_its_files(
    layout: str, files: Files, make_vault: Callable[..., Path], kb: KB
) -> None:
    """Indexed from its files (``render: false``), a site's French pages were indexed
    although ``build: false`` keeps them off the site: answers cited pages it has not."""
    built = dict(files)
    built["mkdocs.yml"] = built["mkdocs.yml"].replace(
        "name: Français}", "name: Français, build: false}"
    )
    instance = kb(make_vault(built, name=layout), render=False)
    instance.index()
    paths = {c.path for c in instance.store.chunks()}
    assert paths == {p for p in files if p.endswith(".md") and ".fr." not in p and "/fr/" not in p}


@pytest.mark.parametrize("render", [True, False], ids=["rendered", "files"])
def test_a_reader_is_answered_from_their_own_language_first(
    render: bool, make_vault: Callable[..., Path], kb: KB
) -> None:
    """One index holds every language, and a question built around a setting's name
    (``retry.max_attempts``, the same in both) was answered from the English page for a
    French reader. The widget sends its page's ``<html lang>``: a page the site has in the
    reader's language ranks first, and one it has only in another (``install.md``) still
    answers. Real uvicorn, real Chroma (hash embedder)."""
    if render:
        pytest.importorskip("mkdocs_static_i18n")
    instance = kb(make_vault(dict(SUFFIX_SITE)), render=render)
    instance.index()

    def first(question: str, lang: str) -> str:
        return instance.search(question, 5, lang=lang)[0].chunk.url

    question = "retry.max_attempts"
    assert first(question, "fr") == "fr/guides/retries/"
    assert first(question, "fr-CA") == "fr/guides/retries/"  # its primary language
    assert first(question, "en") == "guides/retries/"
    assert first("Linux only requirements", "fr") == "install/"  # not translated
    # The twins are left out before the best candidates are taken, not after: words of the
    # English page, from a French reader, found only English twins among them, then nothing.
    english = "job attempted five times"
    assert [h.chunk.url for h in instance.search(english, 1, candidates=2, lang="fr")] == [
        "fr/guides/retries/"
    ]
    # A question asked in another of the site's languages is answered from that language's
    # pages: an English one on a French page from the English page, a French one on an
    # English page from the French page (with MiniLM, the French pages alone left "How long
    # are dead messages kept?" not covered).
    assert first("How many times is every job attempted?", "fr") == "guides/retries/"
    assert first("Combien de fois chaque tâche est-elle tentée ?", "en") == "fr/guides/retries/"
    with UvicornThread(create_app(instance)) as server:
        asked = [
            httpx.post(server.url + "/api/ask", json=body, timeout=30)
            for body in (
                {"question": question, "stream": False, "lang": "fr"},
                {"question": question, "stream": False, "lang": "en"},
                {"question": question, "stream": False, "lang": 7},
            )
        ]
        searched = httpx.get(server.url + "/api/search", params={"q": question, "lang": "fr"})
    french, english, wrong = asked
    assert french.json()["citations"][0]["url"].startswith("https://lumen.example.com/fr/")
    assert "/fr/" not in english.json()["citations"][0]["url"]
    assert wrong.status_code == 422 and "lang must be a language tag" in wrong.text
    assert searched.json()["hits"][0]["url"].startswith("https://lumen.example.com/fr/")


def test_index_on_build_keeps_each_page_at_its_own_language_url(
    make_vault: Callable[..., Path], tmp_path: Path, cli_env: Callable[..., dict[str, str]]
) -> None:
    """mkdocs-static-i18n builds the site again for French, the untranslated page included
    (at fr/install/, in English): ``index_on_build`` indexed each language's build in turn,
    the last one winning, so an English page was cited at the French site's copy of it."""
    pytest.importorskip("mkdocs_static_i18n")
    files = dict(SUFFIX_SITE)
    files["mkdocs.yml"] = files["mkdocs.yml"].replace(
        "  - kb-qa\n", "  - kb-qa:\n      index_on_build: true\n"
    )
    vault = make_vault(files)
    env = cli_env(KBQA_INDEX_DIR=str(tmp_path / "idx"))
    result = mkdocs_build(vault, tmp_path / "site", env)
    assert result.returncode == 0, result.stderr
    # Indexed once, after the last language's build
    assert result.stderr.count("kb-qa: indexed") == 1, result.stderr
    with KnowledgeBase(vault, embed_model="hash", index_dir=tmp_path / "idx") as instance:
        urls = {c.path: c.url for c in instance.store.chunks()}
    assert urls == {
        "docs/index.md": "",
        "docs/index.fr.md": "fr/",
        "docs/guides/retries.md": "guides/retries/",
        "docs/guides/retries.fr.md": "fr/guides/retries/",
        "docs/install.md": "install/",
    }


def widget_options(page: Path) -> dict[str, object]:
    [raw] = re.findall(r'data-kb-qa-options="([^"]*)"', page.read_text(encoding="utf-8"))
    return dict(json.loads(html.unescape(raw)))


@pytest.mark.parametrize(
    ("versioning", "prefix"),
    [
        # `mike deploy` puts its plugin first when mkdocs.yml does not list it
        ("plugins:\n  - mike\n  - search\n  - kb-qa\n", "https://lumen.example.com/"),
        (
            "plugins:\n  - mike\n  - search\n  - kb-qa\nextra:\n  version:\n"
            "    provider: mike\n    default: latest\n",
            "https://lumen.example.com/latest/",
        ),
        (
            "plugins:\n  - mike:\n      canonical_version: latest\n  - search\n  - kb-qa\n",
            "https://lumen.example.com/latest/",
        ),
    ],
    ids=["no-default", "extra.version.default", "canonical_version"],
)
def test_a_mike_version_maps_citations_onto_its_own_folder(
    versioning: str,
    prefix: str,
    make_vault: Callable[..., Path],
    kb: KB,
    tmp_path: Path,
    cli_env: Callable[..., dict[str, str]],
) -> None:
    """``mike deploy 2.0`` builds with site_url rewritten to ``…/2.0``: the widget was told
    that prefix, the index's citations carry the site_url of mkdocs.yml, so no citation
    matched and each opened ``https://lumen.example.com/guides/retries/``, outside any
    version (a 404 on a mike site; the live site from a local ``mike serve``). And a mike
    site's root has no pages (it redirects its home page to the default version): the
    links ``kb-qa ask``, ``search``, the MCP tools and the insights report print open the
    version the site names, when it names one, and the widget is told that same prefix."""
    pytest.importorskip("mike")
    vault = make_vault(
        {
            "mkdocs.yml": "site_name: Lumen\nsite_url: https://lumen.example.com/\n" + versioning,
            "docs/index.md": HOME_EN,
            "docs/guides/retries.md": RETRIES_EN,
        }
    )
    site = tmp_path / "site"
    result = mkdocs_build(vault, site, cli_env(MIKE_DOCS_VERSION="2.0"), "--quiet")
    assert result.returncode == 0, result.stderr
    instance = kb(vault)
    instance.index()
    [chunk] = [c for c in instance.store.chunks() if c.anchor == "default-policy"]
    assert instance.url(chunk) == prefix + "guides/retries/#default-policy"
    options = widget_options(site / "guides" / "retries" / "index.html")
    # The widget opens a citation under its site_url at the page's root (`../..`, which is
    # /2.0/ or /latest/ where mike publishes the build): the prefix must be the index's.
    assert str(options["site_url"]).rstrip("/") + "/" == prefix, options
    assert options["root"] == "../.."


def test_what_the_plugin_says_of_a_translated_site_is_said_once(
    make_vault: Callable[..., Path], tmp_path: Path, cli_env: Callable[..., dict[str, str]]
) -> None:
    """mkdocs-static-i18n builds each further language with the config again: the plugin's
    "no endpoint is set" line was logged once per language."""
    pytest.importorskip("mkdocs_static_i18n")
    vault = make_vault(dict(SUFFIX_SITE))
    result = mkdocs_build(vault, tmp_path / "site", cli_env())
    assert result.returncode == 0, result.stderr
    assert result.stderr.count("kb-qa: no endpoint is set") == 1, result.stderr
