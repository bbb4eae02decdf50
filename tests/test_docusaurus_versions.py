"""A Docusaurus site with released versions: each citation opens the URL its build gives
the page quoted, and ``site_version`` names the version a server reads.

A QA tester's site ran ``docusaurus docs:version 1.0``: kb-qa read docs/ and cited it at
``/docs/retries`` ("attempted three times"), but that URL serves versioned_docs/version-1.0/
("five times"); docs/ is served at ``/docs/next/``. The rules pinned here are Docusaurus'
(https://docusaurus.io/docs/versioning, its example tree; the options' table at
https://docusaurus.io/docs/api/plugins/@docusaurus/plugin-content-docs; and
``getVersionPathPart``/``getLastVersionName`` in @docusaurus/plugin-content-docs 3.10's
lib/versions/version.js).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

from kb_qa.errors import ConfigError
from kb_qa.ingest import changes
from kb_qa.ingest.site import load_site
from kb_qa.kb.knowledge_base import KnowledgeBase

CONFIG = (
    "module.exports = { title: 'Acme', url: 'https://acme.dev', baseUrl: '/',\n"
    "  presets: [['classic', { docs: { sidebarPath: './sidebars.js'%s } }]] };\n"
)
NOW = "# Retries\n\nA failing job is attempted three times by default.\n"
THEN = "# Retries\n\nA failing job is attempted five times by default.\n"


def versioned(options: str = "", versions: tuple[str, ...] = ("1.0",)) -> dict[str, str]:
    """The tester's site: docs/ and one folder per released version, ``options`` added to
    the docs plugin's."""
    files = {
        "docusaurus.config.js": CONFIG % options,
        "versions.json": json.dumps(list(versions)),
        "docs/retries.md": NOW,
    }
    for version in versions:
        files[f"versioned_docs/version-{version}/retries.md"] = THEN
    return files


def cited(kb: KnowledgeBase, question: str) -> tuple[str, str, str]:
    """The first hit's page link, file and text."""
    [hit, *_] = kb.search(question, k=1)
    return hit.chunk.link.split("#")[0], hit.chunk.path, hit.chunk.text


def test_docs_are_cited_at_next_and_a_release_is_read_when_named(
    make_vault: Callable[..., Path], kb: Callable[..., KnowledgeBase]
) -> None:
    vault = make_vault(versioned())
    unreleased = kb(vault)
    report = unreleased.index()
    link, path, text = cited(unreleased, "how many times is a failing job attempted")
    assert (link, path) == ("docs/next/retries", "docs/retries.md")  # not docs/retries
    assert "three times" in text
    [said] = [w for _, w in report.warnings if "unreleased" in w]
    assert "/docs/next/" in said and "KBQA_SITE_VERSION=1.0" in said, said
    unreleased.close()

    released = kb(vault, site_version="1.0")
    report = released.index()
    assert report.rebuilt  # another folder, other URLs
    link, path, text = cited(released, "how many times is a failing job attempted")
    assert (link, path) == ("docs/retries", "versioned_docs/version-1.0/retries.md")
    assert "five times" in text
    assert not [w for _, w in report.warnings if "unreleased" in w]
    assert released.pending_rebuild() == ""  # read with the same version as it was built


@pytest.mark.parametrize(
    ("version", "folder", "url"),
    [
        ("", "docs", "docs/next/foo/bar"),
        ("current", "docs", "docs/next/foo/bar"),
        ("1.1.0", "versioned_docs/version-1.1.0", "docs/foo/bar"),
        ("1.0.0", "versioned_docs/version-1.0.0", "docs/1.0.0/foo/bar"),
    ],
)
def test_each_version_at_its_url(
    make_vault: Callable[..., Path], version: str, folder: str, url: str
) -> None:
    # https://docusaurus.io/docs/versioning's example tree: docs/foo/bar.md is served at
    # /docs/next/foo/bar, version-1.1.0's at /docs/foo/bar, version-1.0.0's at
    # /docs/1.0.0/foo/bar (versions.json lists 1.1.0 first: the last release)
    files = versioned(versions=("1.1.0", "1.0.0"))
    for each in ("docs", "versioned_docs/version-1.1.0", "versioned_docs/version-1.0.0"):
        files[f"{each}/foo/bar.md"] = "# Bar\n"
    site = load_site(make_vault(files), version=version)
    assert site.docs_dir == site.root / folder
    assert site.page_url("foo/bar.md", "# Bar\n", "Bar", 0) == url


def test_an_unknown_version_names_the_versions_listed(make_vault: Callable[..., Path]) -> None:
    vault = make_vault(versioned(versions=("2.0", "1.0")))
    with pytest.raises(ConfigError, match=r"'3\.0'.*versions\.json lists 2\.0, 1\.0"):
        load_site(vault, version="3.0")
    unversioned = make_vault({"docusaurus.config.js": CONFIG % "", "docs/a.md": "# A\n"}, "u")
    with pytest.raises(ConfigError, match=r"no versions\.json"):
        load_site(unversioned, version="1.0")


@pytest.mark.parametrize(
    ("options", "version", "url"),
    [
        # lastVersion: the version at the route base itself (the plugin's options table)
        (", lastVersion: 'current'", "", "docs/retries"),
        (", lastVersion: 'current'", "1.0", "docs/1.0/retries"),
        # versions.<name>.path wins over the default path
        (", versions: {current: {label: 'Dev', path: 'dev'}}", "", "docs/dev/retries"),
        (", versions: {'1.0': {path: 'one'}}", "1.0", "docs/one/retries"),
        # routeBasePath still read with a path inside versions (it is not the plugin's path)
        (", routeBasePath: '/', versions: {current: {path: 'next'}}", "", "next/retries"),
        # includeCurrentVersion: false builds no docs/: the last release is read by default
        (", includeCurrentVersion: false", "", "docs/retries"),
        # a commented-out option is no option (the URL's "//" is no comment)
        (
            ",\n  // lastVersion: 'current',\n  editUrl: 'https://acme.dev/edit/'",
            "",
            "docs/next/retries",
        ),
    ],
)
def test_the_docs_plugins_versions_options_written_as_literals(
    make_vault: Callable[..., Path], options: str, version: str, url: str
) -> None:
    site = load_site(make_vault(versioned(options)), version=version)
    assert site.page_url("retries.md", NOW, "Retries", 0) == url
    assert not [w for w in site.warnings if "literal" in w or "more than once" in w]


def test_an_option_computed_in_code_is_warned_about(make_vault: Callable[..., Path]) -> None:
    site = load_site(make_vault(versioned(", lastVersion: process.env.DOCS_LAST")))
    assert site.page_url("retries.md", NOW, "Retries", 0) == "docs/next/retries"
    [said] = [w for w in site.warnings if "lastVersion" in w]
    assert "not written as a literal" in said and "first version built (1.0)" in said


def test_only_included_versions_are_read(make_vault: Callable[..., Path]) -> None:
    vault = make_vault(versioned(", onlyIncludeVersions: ['current', '2.0']", ("2.0", "1.0")))
    with pytest.raises(ConfigError, match=r"builds current, 2\.0"):
        load_site(vault, version="1.0")
    assert load_site(vault, version="2.0").docs_dir == vault / "versioned_docs/version-2.0"


def test_a_version_dropdowns_versions_are_not_the_plugins(make_vault: Callable[..., Path]) -> None:
    # A navbar's docsVersionDropdown takes `versions` too: the versions it lists, not paths.
    dropdown = "{type: 'docsVersionDropdown', versions: {current: {label: 'Next', path: 'x'}}}"
    config = (CONFIG % "").replace(
        " };", f",\n  themeConfig: {{navbar: {{items: [{dropdown}]}}}} }};"
    )
    files = versioned() | {"docusaurus.config.js": config}
    site = load_site(make_vault(files))
    assert site.page_url("retries.md", NOW, "Retries", 0) == "docs/next/retries"


def test_a_new_release_is_a_change_the_watcher_follows() -> None:
    # `docusaurus docs:version 2.0` writes versions.json: every page of docs/ moves to
    # /docs/next/, and a watching server kept citing /docs/.
    assert changes.relevant("versions.json", is_directory=False)
