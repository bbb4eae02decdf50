"""Where mkdocs-static-i18n publishes a page, read from its settings alone.

A site indexed as it renders (``render: true``) gets each page's URL from the build. One
indexed from its files (``render: false``) addresses a page by its path, and a translated
site's paths are not its URLs: in the plugin's suffix layout ``guides/retries.fr.md`` is
published at ``fr/guides/retries/``, and in its folder layout ``docs/en/guides/retries.md``
of the default language at ``guides/retries/``. Without this, every translated section
was cited at a page the build does not have (``guides/retries.fr/``).

The index keeps the languages (``Languages.as_json``) to answer a reader in their own:
``translated`` names the pages a reader of one language has in it too, by their URLs.
"""

from __future__ import annotations

import json
import posixpath
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from kb_qa.ingest import zensical

__all__ = [
    "Languages",
    "language_of_url",
    "languages_of",
    "published_path",
    "translated",
    "wanted_locale",
]


@dataclass(frozen=True)
class Languages:
    """The languages mkdocs-static-i18n builds, and how their files are laid out."""

    structure: str  # "suffix" (page.fr.md) or "folder" (fr/page.md)
    default: str  # the locale published at the site's root
    locales: frozenset[str]
    unbuilt: frozenset[str] = frozenset()  # listed with ``build: false``: not published

    def as_json(self) -> str:
        """What the index keeps of it (``Store`` meta ``languages``), for ``from_json``."""
        return json.dumps({"default": self.default, "locales": sorted(self.locales)})

    @classmethod
    def from_json(cls, text: str) -> Languages | None:
        """``as_json``'s result read back (None for "" or anything else)."""
        try:
            data: Any = json.loads(text) if text else None  # None: a TypeError below
            return cls("", str(data["default"]), frozenset(map(str, data["locales"])))
        except (ValueError, TypeError, KeyError):
            return None

    def unbuilt_patterns(self) -> list[str]:
        """gitignore-style patterns of the files of languages the site does not build."""
        if self.structure == "folder":
            return [f"/{locale}/" for locale in sorted(self.unbuilt)]
        suffixes = ("md", "markdown")
        return [f"*.{locale}.{ext}" for locale in sorted(self.unbuilt) for ext in suffixes]


def languages_of(config: dict[str, Any]) -> Languages | None:
    """The i18n plugin's languages in a site's config (None when it lists no such plugin,
    turns it off, or its settings are not the plain ones the plugin documents)."""
    settings = zensical.plugin_options(config, "i18n")  # MkDocs' forms, Zensical's too
    if settings is None:
        return None
    listed = settings.get("languages")
    if not isinstance(listed, list):
        return None
    locales = [
        (str(lang["locale"]), bool(lang.get("default")))
        for lang in listed
        if isinstance(lang, Mapping) and isinstance(lang.get("locale"), str) and lang["locale"]
    ]
    if not locales:
        return None
    default = next((locale for locale, is_default in locales if is_default), locales[0][0])
    structure = settings.get("docs_structure", "suffix")
    if structure not in ("suffix", "folder"):
        return None
    unbuilt = frozenset(
        str(lang["locale"])
        for lang in listed
        if isinstance(lang, Mapping) and lang.get("build") is False and lang.get("locale")
    )
    return Languages(str(structure), default, frozenset(loc for loc, _ in locales), unbuilt)


def published_path(doc_path: str, languages: Languages) -> str:
    """``doc_path`` (relative to ``docs_dir``) where its language's build publishes it:
    ``guides/retries.fr.md`` -> ``fr/guides/retries.md``, ``en/index.md`` (the default
    language, folder layout) -> ``index.md``; a page of no listed language is unchanged."""
    if languages.structure == "folder":
        first, _, rest = doc_path.partition("/")
        if rest and first == languages.default:
            return rest
        return doc_path
    directory, name = posixpath.split(doc_path)
    stem, dot, suffix = name.rpartition(".")
    base, _, locale = stem.rpartition(".")
    if not dot or not base or locale not in languages.locales:
        return doc_path
    unlocalised = posixpath.join(directory, f"{base}.{suffix}")
    return unlocalised if locale == languages.default else f"{locale}/{unlocalised}"


def language_of_url(url: str, languages: Languages) -> str:
    """The locale of the page at ``url`` (a site-relative page URL): the one its first
    folder names, else the default language, published at the site's root."""
    first = url.split("/", 1)[0]
    return first if first in languages.locales and first != languages.default else languages.default


# A language tag as a page's <html lang> gives it: "fr", "pt-BR", "zh-Hant-TW".
_TAG = re.compile(r"[A-Za-z]{2,8}(?:[-_][A-Za-z0-9]{1,8}){0,4}")


def wanted_locale(lang: str, languages: Languages) -> str:
    """The site's locale for a reader's language tag ("" when none fits): the tag itself
    ("pt_BR" for "pt-BR" too), else its primary language ("fr" for "fr-CA")."""
    if not _TAG.fullmatch(lang or ""):
        return ""
    by_folded = {locale.casefold().replace("_", "-"): locale for locale in languages.locales}
    tag = lang.casefold().replace("_", "-")
    return by_folded.get(tag) or by_folded.get(tag.split("-")[0], "")


def translated(pages: Iterable[tuple[str, str]], languages: Languages, wanted: str) -> set[str]:
    """Of ``pages`` ((path, url)), those in another language than ``wanted`` that the site
    has in ``wanted`` too (``fr/guides/retries/`` for ``guides/retries/``): a reader of
    ``wanted`` is answered from their own language's page first. A page not translated
    into ``wanted`` is not among them: it is the only one a reader of ``wanted`` has."""

    def unlocalised(url: str) -> tuple[str, str]:
        lang = language_of_url(url, languages)
        return (url if lang == languages.default else url[len(lang) + 1 :]), lang

    keyed = [(path, *unlocalised(url)) for path, url in pages]
    have = {key for _, key, lang in keyed if lang == wanted}
    return {path for path, key, lang in keyed if lang != wanted and key in have}
