"""A Docusaurus config read without running it: the docs plugin's options where they are
written as literals (``routeBasePath: '/guides'``), and the versions of the docs it builds.

The config is JavaScript: only a value written as a literal, in the options of the docs
plugin whose ``path`` is docs/ (or unset), is read; one written another way is warned about,
with what is assumed instead. Versions (``Versions``) follow Docusaurus' plugin-content-docs
(``lib/versions/version.js`` and ``files.js``, 3.10): ``docusaurus docs:version 1.0`` lists
1.0 in ``versions.json`` (newest first) and copies docs/ to ``versioned_docs/version-1.0/``;
docs/ is the version "current", served at ``/docs/next/``, the last version (``lastVersion``,
else the first one listed) at ``/docs/``, another at ``/docs/1.0/``, and a version's ``path``
in the ``versions`` option wins (https://docusaurus.io/docs/versioning).
"""

from __future__ import annotations

import bisect
import functools
import json
import os
import posixpath
import re
import stat
from dataclasses import dataclass
from pathlib import Path

from kb_qa.errors import ConfigError, VaultError

_ROUTE = re.compile(r"""\brouteBasePath\s*:\s*(?:(['"`])([^'"`\n]*)\1|(\S[^,\n}]*))""")
_PATH = re.compile(r"""\bpath\s*:\s*(['"`])([^'"`\n]*)\1""")
_STRING = re.compile(r"""\s*(['"`])([^'"`\n]*)\1\s*""")
# A key starts where a word does: tried from inside a run of 100,000 letters, it scanned
# the rest of the run from each of them
_KEY = re.compile(r"""(?<![\w$.'"-])(?:(['"])([^'"\n]+)\1|([\w$.-]+))\s*:""")
# A JavaScript comment, or a string (kept: "https://acme.dev" holds no comment). An unclosed
# block comment runs to the end, as JavaScript reads it: looked for a close from each
# of 20,000 "/*", the scan was quadratic (60 KB of them stalled `kb-qa index` for 11 s)
_COMMENT = re.compile(
    r"""(['"])(?:\\.|(?!\1)[^\\\n])*\1|`(?:\\.|[^\\`])*`|(//[^\n]*|/\*.*?(?:\*/|\Z))""",
    re.S,
)
_BLANKS = re.compile(r"\s*")
_BARE = re.compile(r"[^,}\]\n]*")
LISTING_BYTES = 1 << 20  # versions.json lists a few dozen names: a bigger one is no listing
VERSIONS_FILE = "versions.json"  # what `docusaurus docs:version 1.0` writes beside docs/
CURRENT = "current"  # Docusaurus' name of the version in docs/


@dataclass(frozen=True)
class Versions:
    """The versions a Docusaurus site builds of its docs (newest first, ``current`` the
    docs/ folder), the last released one (served at the route base itself) and the paths
    its config gives versions."""

    listed: tuple[str, ...] = ()  # versions.json
    built: tuple[str, ...] = (CURRENT,)
    last: str = CURRENT
    paths: tuple[tuple[str, str], ...] = ()

    @classmethod
    def of(cls, root: Path, config: str, name: str, warnings: list[str]) -> Versions:
        """As Docusaurus reads them (``readVersionNames``, ``filterVersions``,
        ``getLastVersionName``): versions.json's list, ``current`` first unless
        ``includeCurrentVersion: false``, none of it with ``disableVersioning: true``, only
        ``onlyIncludeVersions`` when set; each option read where written as a literal."""
        listed = _listed(root, warnings)
        if not listed and "versions" not in config:
            return cls()  # an unversioned site, read as always
        said = _Said(config, name, warnings)
        names = [] if said.flag("disableVersioning", False) else list(listed)
        if said.flag("includeCurrentVersion", True) and CURRENT not in names:
            names.insert(0, CURRENT)
        if not names:
            raise ConfigError(
                f"{name} builds no version of the docs: includeCurrentVersion is false and "
                f"{VERSIONS_FILE} lists none. Docusaurus refuses that too: fix the config."
            )
        only = said.names("onlyIncludeVersions")
        built = tuple(n for n in names if n in only) if only else tuple(names)
        first = next((n for n in built if n != CURRENT), CURRENT)
        last = said.string("lastVersion", f"the first version built ({first})") or first
        return cls(tuple(listed), built, last, said.paths())

    def to_read(self, wanted: str) -> str:
        """The version a server reads: ``wanted`` (the ``site_version`` setting), else docs/,
        else (``includeCurrentVersion: false``) the last release, served at the base."""
        wanted = wanted.strip("/ ") or (CURRENT if CURRENT in self.built else self.last)
        if wanted in self.built:
            return wanted
        listed = ", ".join(self.listed) or f"none (no {VERSIONS_FILE})"
        raise ConfigError(
            f"Setting site_version (KBQA_SITE_VERSION) is {wanted!r}, a version this Docusaurus "
            f"site does not build: {VERSIONS_FILE} lists {listed}, and it builds "
            f"{', '.join(self.built)}. Name one of those, or leave it empty for docs/."
        )

    def folder(self, root: Path, version: str) -> Path:
        """The folder ``version``'s pages are read from."""
        if version == CURRENT:
            return root / "docs"
        folder = root / "versioned_docs" / f"version-{version}"
        if not folder.is_dir():
            raise ConfigError(
                f"{VERSIONS_FILE} lists version {version}, but {folder} is no folder: "
                f"`docusaurus docs:version {version}` writes it. Restore it, or name another "
                "version in site_version (KBQA_SITE_VERSION)."
            )
        return folder

    def url_base(self, route: str, version: str) -> str:
        """Where ``version`` is served: below the route base ``route`` ("docs"), at its
        path (``getVersionPathPart``)."""
        written = dict(self.paths).get(version)
        if written is None:
            written = "" if version == self.last else "next" if version == CURRENT else version
        return "/".join(part for part in (route, written.strip("/")) if part)

    def unreleased_note(self, version: str, route: str) -> list[str]:
        """What a server of docs/ tells its operator when docs/ is not what the site shows
        first: readers of the release at /docs/ got answers quoting docs/ (three attempts)
        under the link of a page saying five."""
        if version != CURRENT or self.last == CURRENT:
            return []
        return [
            f"docs/ is this Docusaurus site's unreleased version, served at "
            f"/{self.url_base(route, CURRENT)}/, and kb-qa answers from it; readers of the "
            f"released {self.last} at /{self.url_base(route, self.last)}/ "
            f"get answers quoting docs/: serve them with KBQA_SITE_VERSION={self.last}, which "
            f"reads versioned_docs/version-{self.last}/ (one kb-qa serve per version)"
        ]


def _listed(root: Path, warnings: list[str]) -> list[str]:
    """The version names ``versions.json`` lists ([] without one)."""
    unversioned = "the site is read as unversioned: docs/ at /docs/"
    try:
        data = read_listing(root, VERSIONS_FILE)
    except VaultError as exc:
        warnings.append(
            f"{VERSIONS_FILE} is not read: {exc}; {unversioned}. Replace it with the file "
            "`docusaurus docs:version` writes"
        )
        return []
    if data is None:
        return []
    try:
        listed = json.loads(data)
    except ValueError as exc:
        listed = exc
    if isinstance(listed, list) and all(_valid_name(n) for n in listed):
        return listed
    warnings.append(
        f"{VERSIONS_FILE} is not a list of version names ({listed!s:.80}); {unversioned}. "
        "Docusaurus refuses it too: fix it"
    )
    return []


def read_listing(root: Path, name: str) -> bytes | None:
    """The file ``name`` at the top of ``root`` (None when there is none), read under the
    rules of the vault's ``Boundary.read_bytes`` (which this module cannot import: the vault
    reads Docusaurus pages through it): a regular file, checked once opened, inside ``root``
    and in no hidden folder once its links are followed, at most ``LISTING_BYTES``;
    ``VaultError`` saying why when it is refused. Opened as it was named, a versions.json
    that was a pipe hung `kb-qa index` for good, and one linked to a file outside the
    vault had that file quoted in the warning saying it was no list."""
    path = root / name
    if not os.path.lexists(path):
        return None
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
    except OSError as exc:
        raise VaultError(f"cannot read it ({exc.strerror or exc})") from None
    with os.fdopen(fd, "rb") as opened:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise VaultError("not a regular file (a folder, pipe, device or socket)")
        try:  # where the open file is (Linux), not where its name leads now
            real = Path(os.readlink(f"/proc/self/fd/{fd}"))
        except OSError:
            real = path.resolve()
        top = root.resolve()
        if not real.is_relative_to(top):
            raise VaultError("symlink that leads outside the vault (only files inside it are read)")
        if any(part.startswith(".") for part in real.relative_to(top).parts):
            raise VaultError("symlink that leads to a hidden file or folder, which is never read")
        data = opened.read(LISTING_BYTES + 1)
    if len(data) > LISTING_BYTES:
        raise VaultError(f"it is bigger than {LISTING_BYTES:,} bytes, which no listing is")
    return data


def _valid_name(name: object) -> bool:
    """A version name Docusaurus accepts (``validateVersionName``): no slash, no "..": it
    names a folder."""
    return (
        isinstance(name, str)
        and bool(name.strip())
        and re.fullmatch(r"(?![.]{1,2}$)[^/\\<>:\"|?*\x00-\x1f]{1,32}", name) is not None
    )


@dataclass
class _Said:
    """The docs plugin's options as a config writes them, read where they are literals;
    another way of writing one is warned about, with what is assumed instead."""

    config: str
    name: str
    warnings: list[str]

    def _written(self, key: str, assumed: str) -> str | None:
        values: set[str] = set()
        for found in _option(self.config, key):
            # Stopped at the second value: 3,000 nested `versions: {` each read to the end
            values.add(_value(self.config, found.end()))
            if len(values) > 1:
                self.warnings.append(f"{self.name}: {key} is set more than once; {assumed}")
                return None
        return values.pop() if values else None

    def _unread(self, key: str, assumed: str) -> None:
        self.warnings.append(
            f"{self.name}: {key} is not written as a literal, and kb-qa never runs the "
            f"config; {assumed} (write it as one to have it read)"
        )

    def flag(self, key: str, default: bool) -> bool:
        assumed = f"citations assume {key} is {str(default).lower()}, Docusaurus' default"
        written = self._written(key, assumed)
        if written in (None, "true", "false"):
            return default if written is None else written == "true"
        self._unread(key, assumed)
        return default

    def string(self, key: str, default: str) -> str:
        assumed = f"citations assume {key} is {default}, Docusaurus' default"
        written = self._written(key, assumed)
        found = _STRING.fullmatch(written or "")
        if written is not None and (found is None or "${" in found[2]):
            self._unread(key, assumed)
        return found[2] if found is not None and "${" not in found[2] else ""

    def names(self, key: str) -> list[str]:
        assumed = f"citations assume every version in {VERSIONS_FILE} is built"
        written = self._written(key, assumed)
        if written is None:
            return []
        items = [i for i in _top_level(written)[1:-1].split(",") if i.strip()]
        found = [_STRING.fullmatch(i) for i in items]
        if written[:1] != "[" or not all(found):
            self._unread(key, assumed)
            return []
        return [f[2] for f in found if f is not None]

    def paths(self) -> tuple[tuple[str, str], ...]:
        """Each version's ``path`` in the ``versions`` option: ``{current: {path: 'dev'}}``."""
        assumed = "citations assume each version's default path (docs/ at /docs/next/)"
        written = self._written("versions", assumed)
        if written is None:
            return ()
        if written[:1] != "{":
            self._unread("versions", assumed)
            return ()
        found = []
        for key in _KEY.finditer(_top_level(written)):
            options = _value(written, key.end())
            path = re.search(r"(?<![\w$])path\s*:", _top_level(options))
            if options[:1] == "{" and path is None:
                continue  # a label or banner only
            value = _STRING.fullmatch(_value(options, path.end())) if path else None
            if value is None:
                self._unread(f"versions.{key[2] or key[3]}.path", assumed)
                continue
            found.append((key[2] or key[3], value[2]))
        return tuple(found)


def _option(config: str, key: str) -> list[re.Match[str]]:
    """Where ``key:`` is set in the options of the docs plugin that reads docs/."""
    found = re.finditer(rf"(?<![\w$.]){key}\s*:", config)
    return [m for m in found if _in_docs_options(config, m.start())]


ASSUMED = (
    "citations assume the docs are served at /docs/ (Docusaurus' default); write "
    "`routeBasePath: '/guides'` as a quoted string in the docs plugin's options if they are not"
)


def route_base(config: str, name: str, warnings: list[str]) -> str:
    """routeBasePath of the docs plugin whose ``path`` is the docs folder (or unset), as
    written in the config's text; "docs" when it is not written, with a warning when it is
    written some way that needs running the config to know."""
    found: set[str] = set()
    for match in _ROUTE.finditer(config):
        if not _in_docs_options(config, match.start()):
            continue  # another docs plugin's (typescript-eslint's rules, at /rules/)
        if match.group(3) is not None:
            warnings.append(f"{name}: routeBasePath is not a quoted string; {ASSUMED}")
            return "docs"
        found.add(match.group(2).strip("/"))
    if len(found) > 1:
        shown = ", ".join(f"'/{f}'" for f in sorted(found))
        warnings.append(f"{name}: routeBasePath is set to {shown} for docs/; {ASSUMED}")
    return found.pop() if len(found) == 1 else "docs"


def _in_docs_options(config: str, at: int) -> bool:
    """Whether position ``at`` is in the options of the docs plugin that reads docs/: its
    own ``path`` (not one inside its ``versions: {current: {path: 'next'}}``) is docs or
    unset, and it is no navbar item (a ``docsVersionDropdown`` has ``versions`` too)."""
    nesting = _nesting(config)
    options = nesting.object_at(at)
    path = nesting.paths.get(options)
    if path is not None and posixpath.basename(path.rstrip("/")) != "docs":
        return False
    return options not in nesting.typed


@dataclass(frozen=True)
class _Nesting:
    """Where a config's ``{}`` objects are, and which of them have their own ``path`` and
    ``type``: read in one pass. Each key found used to look for its object by scanning the
    file around it, so 3,000 lines of ``versions: {`` stalled `kb-qa index` for 38 s."""

    at: list[int]  # where a bracket is, in order
    objects: list[int]  # the "{" open after it, innermost (-1: none)
    paths: dict[int, str]  # an object's own first ``path`` (an object is where its "{" is)
    typed: set[int]  # the objects with a ``type`` of their own

    def object_at(self, at: int) -> int:
        """The innermost object around position ``at`` (-1: none)."""
        i = bisect.bisect_right(self.at, at) - 1
        return self.objects[i] if i >= 0 else -1


@functools.lru_cache(maxsize=4)
def _nesting(config: str) -> _Nesting:
    at: list[int] = []
    objects: list[int] = []
    owners: list[int] = []  # the bracket ("{" or "[") open after each, innermost
    opened: list[int] = []  # the brackets open, innermost last
    braces: list[int] = []  # the "{" among them
    for bracket in re.finditer(r"[{}\[\]]", config):
        where = bracket.start()
        if bracket[0] in "{[":
            opened.append(where)
            if bracket[0] == "{":
                braces.append(where)
        elif opened and config[opened.pop()] == "{":  # a "]" closes a "{" as depth counts
            braces.pop()
        at.append(where)
        objects.append(braces[-1] if braces else -1)
        owners.append(opened[-1] if opened else -1)

    def owner(position: int) -> int:  # a member of an object: no "[" between them
        i = bisect.bisect_right(at, position) - 1
        inner = owners[i] if i >= 0 else -1
        return inner if inner == -1 or config[inner] == "{" else -2

    paths: dict[int, str] = {}
    for path in _PATH.finditer(config):
        paths.setdefault(owner(path.start()), path.group(2))
    typed = {owner(t.start()) for t in re.finditer(r"(?<![\w$])type\s*:", config)}
    return _Nesting(at, objects, paths, typed)


def _top_level(written: str) -> str:
    """An object or array literal with what its members nest blanked (same length)."""
    depth, kept = 0, []
    for ch in written:
        depth -= ch in "}]"
        kept.append(ch if depth <= 1 or ch == "\n" else " ")
        depth += ch in "{["
    return "".join(kept)


def _value(text: str, at: int) -> str:
    """The value written at ``at`` (after ``key:``): a balanced ``{}``/``[]`` literal, a
    string, or what stands before the next ``,``, ``}`` or line end."""
    # Read from ``at``, never copied from it: 8,000 settings each copied the rest of the file
    blanks = _BLANKS.match(text, at)
    at = blanks.end() if blanks else at
    if text[at : at + 1] in ("{", "["):
        depth = 0
        for end in range(at, len(text)):
            depth += (text[end] in "{[") - (text[end] in "}]")
            if depth == 0:
                return text[at : end + 1]
        return text[at:]
    string = _STRING.match(text, at)
    if string is not None:
        return string.group(0).strip()
    bare = _BARE.match(text, at)
    return bare.group(0).strip() if bare else ""


def without_comments(text: str) -> str:
    """The config with its comments blanked: a template's ``// lastVersion: 'current',``
    is no setting."""
    return _COMMENT.sub(lambda m: re.sub(r"[^\n]", " ", m[0]) if m[2] else m[0], text)
