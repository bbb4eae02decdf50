"""Lay out fetched documentation sites for training: Markdown and a sanitised mkdocs.yml.

    python training/layout.py REPOS.tsv [REPOS.tsv ...] [--mirror /work/.mirror]
                              [--out training/data/sites]

Each line of a REPOS file is ``owner/name`` (a tab and anything after it is ignored); its
snapshot is read from ``MIRROR/owner+name/repo`` (what the search tool's ``fetch`` brings),
a bare git directory. For every repository the site's config (``mkdocs.yml``,
``mkdocs.yaml``, ``properdocs.yml`` or ``zensical.toml``, at the root or one folder down) is
read with a safe YAML loader and rewritten keeping only what chunking and anchors need
(``site_name``, ``docs_dir``, ``use_directory_urls``, ``markdown_extensions`` by name with
their plain settings): no hook, plugin or python tag of another project ever runs. The
Markdown files under its docs folder are copied as they are. ``OUT/sources.tsv`` records
repository, commit, licence, config and file count; other projects' text stays in the
git-ignored ``training/data/``.
"""

from __future__ import annotations

import argparse
import subprocess
from pathlib import Path, PurePosixPath

import tomllib
import yaml

CONFIGS = ("mkdocs.yml", "mkdocs.yaml", "properdocs.yml", "zensical.yml", "mkdocs.en.yml")
TOML = "zensical.toml"
LICENCES = (  # first match wins: (words in the licence file, SPDX id)
    ("apache license", "Apache-2.0"),
    ("mozilla public license", "MPL-2.0"),
    ("gnu affero", "AGPL-3.0"),
    ("gnu lesser", "LGPL"),
    ("gnu general public license", "GPL"),
    ("creative commons attribution-sharealike", "CC-BY-SA-4.0"),
    ("creative commons", "CC-BY-4.0"),
    ("permission is hereby granted, free of charge", "MIT"),
    ("redistribution and use in source and binary forms", "BSD"),
    ("unlicense", "Unlicense"),
    ("isc license", "ISC"),
)


class _Safe(yaml.SafeLoader):
    """SafeLoader that reads every unknown tag (``!ENV``, ``!!python/name``) as None."""


_Safe.add_multi_constructor("", lambda loader, suffix, node: None)
_Safe.add_multi_constructor("tag:yaml.org,2002:python/", lambda loader, suffix, node: None)


def _git(repo: Path, *args: str) -> bytes:
    return subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True).stdout


def _tree(repo: Path) -> dict[str, tuple[str, str]]:
    """Every entry at HEAD: path -> (mode, object id)."""
    found: dict[str, tuple[str, str]] = {}
    for line in _git(repo, "ls-tree", "-r", "HEAD").decode().splitlines():
        meta, _, path = line.partition("\t")
        mode, _kind, object_id = meta.split()
        found[path] = (mode, object_id)
    return found


def _blobs(repo: Path, blobs: list[str]) -> list[bytes]:
    """The bytes of each blob, read in one ``git cat-file --batch``. Not ``git archive``: it
    leaves out what the repository's ``.gitattributes`` marks ``export-ignore`` (Apache
    Iceberg marks its whole ``docs/`` so), and a docs site is exactly what is wanted."""
    request = "".join(f"{b}\n" for b in blobs).encode()
    out = subprocess.run(
        ["git", "-C", str(repo), "cat-file", "--batch"],
        input=request,
        check=True,
        capture_output=True,
    ).stdout
    contents: list[bytes] = []
    at = 0
    for blob in blobs:
        end = out.index(b"\n", at)
        header = out[at:end].split()
        if header[-1] == b"missing":
            missing = f"{blob} missing from the snapshot".encode()
            raise subprocess.CalledProcessError(1, "git cat-file", stderr=missing)
        size = int(header[2])
        contents.append(out[end + 1 : end + 1 + size])
        at = end + 1 + size + 1  # the content, then a newline
    return contents


def licence_of(repo: Path, names: list[str]) -> str:
    """The SPDX id of the repository's root licence file, by its words ("unknown" if none)."""
    for name in names:
        if "/" in name or not name.lower().startswith(("license", "licence", "copying")):
            continue
        text = _git(repo, "show", f"HEAD:{name}").decode("utf-8", "replace").lower()
        for words, spdx in LICENCES:
            if words in " ".join(text.split()):
                return spdx
    return "unknown"


def sanitised(config: object) -> dict[str, object]:
    """The parts of a site config that chunking needs, with plain values only."""
    if not isinstance(config, dict):
        return {}
    kept: dict[str, object] = {"site_name": str(config.get("site_name") or "site")}
    if isinstance(config.get("use_directory_urls"), bool):
        kept["use_directory_urls"] = config["use_directory_urls"]
    extensions: list[object] = []
    for entry in config.get("markdown_extensions") or []:
        if isinstance(entry, str):
            extensions.append(entry)
        elif isinstance(entry, dict) and len(entry) == 1:
            name, options = next(iter(entry.items()))
            plain = (
                {
                    k: v
                    for k, v in (options or {}).items()
                    if isinstance(v, (str, int, float, bool)) and k not in ("slugify",)
                }
                if isinstance(options, dict)
                else {}
            )
            extensions.append({str(name): plain} if plain else str(name))
    kept["markdown_extensions"] = extensions
    return kept


def lay_out(repo: Path, target: Path, docs_hint: str = "") -> tuple[str, str, int] | None:
    """Copy one snapshot's site into ``target``: (config path, commit, Markdown files).

    ``docs_hint`` is the docs folder from the repository's root when the config's own
    ``docs_dir`` is not where the Markdown is (a build step copies it there).
    """
    tree = _tree(repo)
    names = list(tree)
    configs = sorted(
        (n for n in names if PurePosixPath(n).name in (*CONFIGS, TOML) and n.count("/") <= 3),
        key=lambda n: (n.count("/"), n),
    )
    if not configs:
        return None
    config_path = configs[0]
    raw = _git(repo, "show", f"HEAD:{config_path}").decode("utf-8", "replace")
    try:
        if config_path.endswith(".toml"):
            config = tomllib.loads(raw).get("project", {})
        else:
            config = yaml.load(raw, Loader=_Safe)  # noqa: S506 - every tag is read as None
    except (yaml.YAMLError, tomllib.TOMLDecodeError):
        return None
    base = PurePosixPath(config_path).parent
    docs_dir = str(config.get("docs_dir") or "docs") if isinstance(config, dict) else "docs"
    docs = PurePosixPath(base, docs_dir) if str(base) != "." else PurePosixPath(docs_dir)
    prefix = f"{docs}/".removeprefix("./")
    if docs_hint and docs_hint != ".":
        prefix = docs_hint.strip("/") + "/"
    elif docs_hint == "." or prefix.startswith("../") or prefix == "/":
        prefix = ""
    files = {  # regular files: a symlink's blob is only the path it points to
        n: blob
        for n, (mode, blob) in tree.items()
        if n.startswith(prefix) and n.endswith(".md") and mode in ("100644", "100755")
    }
    if not files:
        return None
    target.mkdir(parents=True, exist_ok=True)
    for name, data in zip(files, _blobs(repo, list(files.values())), strict=True):
        rel = PurePosixPath(name)
        if prefix:
            rel = rel.relative_to(prefix.rstrip("/"))
        if ".." in rel.parts:
            continue
        out = target / "docs" / rel
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_bytes(data)
    (target / "mkdocs.yml").write_text(
        yaml.safe_dump({**sanitised(config), "docs_dir": "docs"}, sort_keys=False),
        encoding="utf-8",
    )
    commit = _git(repo, "rev-parse", "HEAD").decode().strip()
    return config_path, commit, len(files)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("repos", nargs="+", type=Path)
    parser.add_argument("--mirror", type=Path, default=Path("/work/.mirror"))
    parser.add_argument("--out", type=Path, default=Path(__file__).parent / "data" / "sites")
    args = parser.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    seen: set[str] = set()
    rows = ["repository\tcommit\tlicence\tconfig\tmarkdown_files"]
    for listing in args.repos:
        for line in listing.read_text(encoding="utf-8").splitlines():
            cells = line.split("\t")
            name = cells[0].strip()
            hint = cells[1].strip() if len(cells) > 1 else ""
            if not name or name.startswith("#") or name in seen:
                continue
            seen.add(name)
            repo = args.mirror / name.replace("/", "+") / "repo"
            if not repo.is_dir():
                print(f"skip {name}: no snapshot at {repo}")
                continue
            target = args.out / name.replace("/", "+")
            try:
                found = lay_out(repo, target, hint)
            except subprocess.CalledProcessError as exc:
                print(f"skip {name}: git failed ({exc.stderr.decode(errors='replace')[:200]})")
                continue
            if found is None:
                print(f"skip {name}: no site config with Markdown under its docs_dir")
                continue
            config_path, commit, count = found
            names = _git(repo, "ls-tree", "--name-only", "HEAD").decode().splitlines()
            rows.append(f"{name}\t{commit}\t{licence_of(repo, names)}\t{config_path}\t{count}")
            print(f"{name}: {count} files")
    (args.out / "sources.tsv").write_text("\n".join(rows) + "\n", encoding="utf-8")
    print(f"{len(rows) - 1} sites laid out in {args.out}")


if __name__ == "__main__":
    main()
