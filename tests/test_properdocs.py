"""The kb-qa plugin under ProperDocs (the maintained MkDocs 1.6 fork): `properdocs build` puts
the widget on every page, `properdocs serve` runs the API for it, as MkDocs does, also on a
site that `kb-qa init` wired for the generators without plugins."""

from __future__ import annotations

import html
import json
import re
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from urllib.parse import urljoin

import httpx
import pytest
from kb_qa_widget import version
from processes import stop, wait_for
from test_mkdocs_plugin import assert_progress_and_ready, pages, widget_tags

from kb_qa.wiring import plan as wiring
from kb_qa.wiring.options import LOADER

ROOT = Path(__file__).resolve().parents[1]
PROPERDOCS = Path(sys.executable).with_name("properdocs")
if not PROPERDOCS.is_file():
    pytest.skip("properdocs is not installed (pip install -e '.[test]')", allow_module_level=True)


def copy_site(tmp_path: Path) -> Path:
    vault = tmp_path / "vault"
    shutil.copytree(ROOT / "sample_site", vault, ignore=shutil.ignore_patterns(".kb-qa", "site"))
    return vault


def test_properdocs_build_puts_the_widget_on_every_page(
    tmp_path: Path, cli_env: Callable[..., dict[str, str]]
) -> None:
    vault = copy_site(tmp_path)
    site = tmp_path / "site"
    result = subprocess.run(
        [str(PROPERDOCS), "build", "--quiet", "-f", "mkdocs.yml", "-d", str(site)],
        cwd=vault,
        env=cli_env(),
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    found = pages(site)
    assert len(found) >= 18
    for page in found:
        links, options, srcs = widget_tags(page)
        assert len(links) == 1 and len(srcs) == 1, page
        if page.name != "404.html":
            base = "http://host/" + page.relative_to(site).as_posix()
            assert urljoin(base, srcs[0]) == f"http://host/kb-qa/kb-qa.js?v={version()}", page
        assert options[0]["title"] == "Ask the Lumen docs"
    assert (site / "kb-qa" / "kb-qa.js").is_file()


def test_properdocs_serve_runs_the_api(
    tmp_path: Path, cli_env: Callable[..., dict[str, str]]
) -> None:
    from kb_qa.serve.serving import free_port

    vault = copy_site(tmp_path)
    # Wired by `kb-qa init` as well: the plugin still runs the API and injects the widget once.
    wiring.plan(vault).apply()
    port = free_port()
    site = f"http://127.0.0.1:{port}"
    server = subprocess.Popen(
        [str(PROPERDOCS), "serve", "-f", "mkdocs.yml", "-a", f"127.0.0.1:{port}"],
        cwd=vault,
        env=cli_env(),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        page = wait_for(site + "/guides/retries/", server).text
        raw = re.findall(r'data-kb-qa-options="([^"]*)"', page)
        assert len(raw) == 1, "the served page should carry the widget once"
        assert LOADER not in page
        api = json.loads(html.unescape(raw[0]))["endpoint"]
        assert re.fullmatch(r"http://127\.0\.0\.1:\d+", api) and api != site
        wait_for(api + "/api/ready", server)  # its index may still be embedding
        health = httpx.get(api + "/api/health", headers={"Origin": site}, timeout=10)
        assert health.status_code == 200 and health.json()["chunks"] > 0
        assert health.headers["access-control-allow-origin"] == site
    finally:
        stderr = stop(server)
    # ProperDocs shows the plugin's progress while it embeds, then the ready line.
    assert_progress_and_ready(stderr)
