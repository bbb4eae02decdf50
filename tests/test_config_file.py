"""A site whose config has another name than mkdocs.yml (``mkdocs build -f site.yml``).

A QA pass's docs CI built ``alt/site.yml`` (sample_site with ``docs_dir: content``) with the
plugin's ``index_on_build``: ``--strict`` passed, and ``kb-qa serve alt`` cited
``/tmp/.../alt/content/guides/retries.md:26``, the folder read as a notes vault.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import httpx
import pytest
import yaml
from api_helpers import serve_process

from kb_qa.errors import ConfigError
from kb_qa.ingest.site import load_site
from kb_qa.settings import Settings

ROOT = Path(__file__).resolve().parents[1]
SAMPLE_SITE = ROOT / "sample_site"
SITE_URL = "https://lumen.example.com/"


def alt_site(folder: Path) -> Path:
    """sample_site as ``folder/site.yml`` with its pages in ``content/``, indexed on build."""
    shutil.copytree(SAMPLE_SITE / "docs", folder / "content")
    config = yaml.safe_load((SAMPLE_SITE / "mkdocs.yml").read_text(encoding="utf-8"))
    config["docs_dir"] = "content"
    config["plugins"] = ["search", {"kb-qa": {"index_on_build": True}}]
    (folder / "site.yml").write_text(yaml.safe_dump(config), encoding="utf-8")
    return folder


def first_hit(url: str) -> dict[str, object]:
    found = httpx.get(f"{url}/api/search", params={"q": "default retry backoff", "k": 1})
    assert found.status_code == 200, found.text
    hit: dict[str, object] = found.json()["hits"][0]
    return hit


def test_a_build_with_another_config_name_cites_the_sites_pages(
    tmp_path: Path, cli_env: Callable[..., dict[str, str]]
) -> None:
    vault = alt_site(tmp_path / "alt")
    env = cli_env()
    built = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "-f", "site.yml"],
        cwd=vault,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert built.returncode == 0, built.stderr
    assert "holds no mkdocs.yml" not in built.stderr  # read as the site it is
    log = tmp_path / "serve.log"
    with log.open("w") as output:
        served = serve_process(vault, env, "--config-file", "site.yml", output=output)
        url, _ = next(served)
        hit = first_hit(url)
        served.close()
    assert str(hit["url"]).startswith(f"{SITE_URL}guides/retries/#"), hit
    assert hit["path"] == "content/guides/retries.md"
    # The index the build made was current for the server: nothing was read again.
    assert "Rebuilt" not in log.read_text(encoding="utf-8")

    # A server started without the setting says which config the folder holds.
    with log.open("w") as output:
        served = serve_process(vault, env, output=output)
        next(served)
        served.close()
    said = log.read_text(encoding="utf-8")
    assert "holds no mkdocs.yml, but site.yml reads like a site's config" in said
    assert "--config-file site.yml" in said
    # ... and why it read the index again: the build's config is not the one it reads
    assert "the site config is now the default (it was site.yml: the config_file setting" in said


def test_the_setting_picks_one_of_two_configs(tmp_path: Path) -> None:
    """A repo with mkdocs.yml and mkdocs.prod.yml is read with the one named."""
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "index.md").write_text("# Home\n", encoding="utf-8")
    (tmp_path / "mkdocs.yml").write_text("site_name: Dev\n", encoding="utf-8")
    (tmp_path / "mkdocs.prod.yml").write_text(
        "site_name: Prod\nsite_url: https://docs.example.com/\nuse_directory_urls: false\n",
        encoding="utf-8",
    )
    assert load_site(tmp_path).site_url == ""
    site = load_site(tmp_path, config_file="mkdocs.prod.yml")
    assert (site.config_name, site.site_url) == ("mkdocs.prod.yml", "https://docs.example.com/")
    assert site.is_mkdocs and site.url_for("index.md") == "index.html"


def test_the_setting_comes_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("KBQA_CONFIG_FILE", "mkdocs.prod.yml")
    assert Settings.from_env(".").config_file == "mkdocs.prod.yml"


def test_a_named_config_that_is_not_there_stops_the_command(
    tmp_path: Path, cli_env: Callable[..., dict[str, str]]
) -> None:
    vault = alt_site(tmp_path / "alt")
    ran = subprocess.run(
        [sys.executable, "-m", "kb_qa.cli", "index", str(vault), "--config-file", "site.yaml"],
        env=cli_env(),
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert ran.returncode != 0
    assert f"config_file (KBQA_CONFIG_FILE, --config-file) names {vault / 'site.yaml'}" in (
        ran.stderr
    )
    assert "which is not a file" in ran.stderr


def test_a_named_config_outside_the_vault_folder_is_refused(tmp_path: Path) -> None:
    vault = alt_site(tmp_path / "alt")
    (vault / "content" / "site.yml").write_text("site_name: Inner\n", encoding="utf-8")
    with pytest.raises(ConfigError, match="not in the vault folder"):
        load_site(vault, config_file="content/site.yml")
    (vault / "site.json").write_text("{}", encoding="utf-8")
    with pytest.raises(ConfigError, match="YAML file"):
        load_site(vault, config_file="site.json")
