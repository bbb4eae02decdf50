"""Which file is a site's config: the first default name the generators look for, or the one
the ``config_file`` setting names (``mkdocs build -f site.yml``).

A folder whose config has another name was read as a plain notes vault: a QA pass's docs CI
built ``alt/site.yml`` with the plugin's ``index_on_build``, and every citation was the
server's file path (``/tmp/.../content/guides/retries.md:26``), with no warning.
"""

from __future__ import annotations

from pathlib import Path

from kb_qa.errors import ConfigError
from kb_qa.ingest import safe_config, zensical
from kb_qa.settings import GENERATORS

# ProperDocs (a maintained MkDocs 1.6 fork) reads properdocs.yml, then mkdocs.yml.
MKDOCS_FILES = ("mkdocs.yml", "mkdocs.yaml", "properdocs.yml", "properdocs.yaml")
# The order Zensical looks for its configuration in (its main.py).
CONFIG_FILES = (zensical.CONFIG_FILE, *MKDOCS_FILES)
YAML_SUFFIXES = (".yml", ".yaml")
_SETTING = "Setting config_file (KBQA_CONFIG_FILE, --config-file)"
_LOOKED_AT = 50_000  # bytes: a YAML file bigger than that at the top of a vault is no config


def find_config(root: Path, generator: str = "", config_file: str = "") -> Path | None:
    """The site's config file: the one ``config_file`` names (relative to ``root``), else the
    first of zensical.toml, mkdocs.yml, mkdocs.yaml (the order Zensical uses),
    properdocs.yml; without zensical.toml when ``generator`` is "mkdocs"."""
    if generator and generator not in GENERATORS:
        raise ConfigError(
            f"Setting generator (KBQA_GENERATOR) is {generator!r}: use mkdocs, zensical or "
            "leave it empty to decide by the config file."
        )
    if config_file:
        return named_config(root, config_file)
    path = _default_config(root, generator)
    if path is not None:
        _check_inside(root, path)
    return path


def _default_config(root: Path, generator: str = "") -> Path | None:
    names = MKDOCS_FILES if generator == "mkdocs" else CONFIG_FILES
    return next((root / n for n in names if (root / n).is_file()), None)


def _check_inside(root: Path, path: Path) -> None:
    """Refuse a config that is a symlink leading out of the vault, as an ``INHERIT:`` out of
    it is refused (``safe_config.check_inherit``): ``site.yml -> /tmp/outside/site.yml`` put
    the outside file's site_url and site_name in the index, its citations links to another
    site, and the vault's owner had not written them."""
    target = path.resolve()
    if not target.is_relative_to(root.resolve()):
        raise ConfigError(
            f"{path} is a link to {target}, outside the vault: kb-qa does not read a site's "
            "configuration from outside the vault. Copy the file into the vault in the "
            f"link's place (cp --remove-destination {target} {path})."
        )


def named_config(root: Path, name: str) -> Path:
    """The file ``config_file`` names: it must exist, sit in the vault folder itself (MkDocs
    reads docs_dir from its config's folder, and kb-qa from the vault) and be YAML (MkDocs,
    ProperDocs) or TOML (Zensical)."""
    path = root / name  # an absolute name stays as it is
    if not path.is_file():
        raise ConfigError(
            f"{_SETTING} names {path}, which is not a file: give the site's config file "
            f"relative to {root} (such as mkdocs.prod.yml), or leave it empty to read "
            "mkdocs.yml, properdocs.yml or zensical.toml."
        )
    if path.parent.resolve() != root.resolve():
        raise ConfigError(
            f"{_SETTING} names {path}, which is not in the vault folder {root}: docs_dir is "
            f"read from the config's own folder, so give that folder ({path.parent.resolve()}) "
            "as the vault and the file's name alone."
        )
    if path.suffix.lower() not in (*YAML_SUFFIXES, ".toml"):
        raise ConfigError(
            f"{_SETTING} names {path}: a site's config is a YAML file (.yml, for MkDocs and "
            "ProperDocs) or a TOML file (.toml, for Zensical). Name the file `mkdocs build "
            "-f` builds from."
        )
    _check_inside(root, path)
    return Path(root, path.name)


def docs_folder_warning(root: Path) -> str:
    """What ``kb-qa index`` says of the docs folder of a site given in its site's place ("" for
    any other folder): read as notes, its pages cite file paths, not the site's URLs."""
    if root.name != "docs" or (above := _default_config(root.parent)) is None:
        return ""
    return (
        f"{root} is the docs folder of the site at {root.parent} ({above.name}): give "
        f"kb-qa {root.parent} instead, or citations link to file paths, not its pages"
    )


def unnamed_warning(root: Path) -> str:
    """What ``kb-qa index`` says of a folder with no default config, read as notes, that
    holds a YAML file reading like an MkDocs config ("" when none): a server started without
    the ``config_file`` an index was built with re-read its site so, saying nothing."""
    name = unnamed_config(root)
    if not name:
        return ""
    return (
        f"{root} holds no mkdocs.yml, but {name} reads like a site's config (site_name): set "
        f"config_file (KBQA_CONFIG_FILE, --config-file {name}) to index the site it builds, "
        "or citations link to file paths, not its pages"
    )


def unnamed_config(root: Path) -> str:
    """A YAML file at the top of ``root`` that reads like an MkDocs config (it has a
    ``site_name``) although no default name is there ("" when none): the folder is then
    read as notes unless ``config_file`` names it. Read without the environment or any
    Python tag, as ``site_name`` is."""
    try:
        candidates = sorted(p for p in root.iterdir() if p.suffix.lower() in YAML_SUFFIXES)
    except OSError:
        return ""
    for path in candidates:
        try:
            if path.stat().st_size > _LOOKED_AT or not path.is_file():
                continue
            config = safe_config.load_yaml(path, safe_config.NameLoader)
        except (ConfigError, OSError, ValueError):
            continue  # docker-compose.yml with anchors it cannot read is no site either
        if isinstance(config, dict) and config.get("site_name"):
            return path.name
    return ""
