"""The ``kb-qa`` MkDocs plugin in a real ``mkdocs build`` of a copy of sample_site."""

from __future__ import annotations

import gzip
import html
import json
import re
import shutil
import socket
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any
from urllib.parse import urljoin

import httpx
import pytest
import yaml
from kb_qa_widget import ASSETS, FILES, version
from processes import stop, wait_for
from widget_stack import mkdocs_build

from kb_qa.kb.knowledge_base import KnowledgeBase

ROOT = Path(__file__).resolve().parents[1]
SAMPLE_SITE = ROOT / "sample_site"
# 30 KB for the widget, and 10 KB for its words in other languages (widget/src/lang/: 7.6 KB
# gzipped for eight, when they came; Arabic since). The bundle's whitespace is minified
# (widget/build.mjs): 40,956 -> 38,101 bytes, which made room for fixes.
MAX_WIDGET_GZIP = 40 * 1024

Build = Callable[..., subprocess.CompletedProcess[str]]


def copy_sample_site(vault: Path, plugin: dict[str, Any] | None = None) -> Path:
    """sample_site copied to ``vault`` (unless there already) with ``kb-qa`` and these options
    in its plugins."""
    if not vault.exists():
        shutil.copytree(SAMPLE_SITE, vault, ignore=shutil.ignore_patterns(".kb-qa", "site"))
    config_file = vault / "mkdocs.yml"
    config = yaml.safe_load(config_file.read_text(encoding="utf-8"))
    config["plugins"] = ["search", {"kb-qa": plugin or {}}]
    config_file.write_text(yaml.safe_dump(config, allow_unicode=True), encoding="utf-8")
    return vault


def build_site(
    vault: Path, plugin: dict[str, Any] | None, env: dict[str, str], quiet: bool = True
) -> Any:
    """Copy sample_site to ``vault`` with ``kb-qa`` (and these options) in its plugins; build it."""
    copy_sample_site(vault, plugin)
    flags = ["--quiet", "--strict"] if quiet else ["--strict"]
    return mkdocs_build(vault, vault / "site", env, *flags)


@pytest.fixture(name="build")
def build_fixture(tmp_path: Path, cli_env: Callable[..., dict[str, str]]) -> Build:
    def run(plugin: dict[str, Any] | None = None, name: str = "vault") -> Any:
        return build_site(tmp_path / name, plugin, cli_env())

    return run


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory, cli_env: Callable[..., dict[str, str]]) -> Path:
    """sample_site built once with endpoint, suggestions and index_on_build (hash embedder)."""
    vault = tmp_path_factory.mktemp("plugin") / "vault"
    options = {
        "endpoint": "https://api.example.com/",
        "title": "Ask Lumen",
        "suggested_questions": ["How do retries work?", "如何轮换令牌？"],
        "index_on_build": True,
    }
    result = build_site(vault, options, cli_env())
    assert result.returncode == 0, result.stderr
    return vault


def pages(site: Path) -> list[Path]:
    return sorted(site.rglob("*.html"))


def widget_tags(page: Path) -> tuple[list[str], list[dict[str, Any]], list[str]]:
    """(stylesheet hrefs, script options, script srcs) of the kb-qa tags in a page's <head>."""
    text = page.read_text(encoding="utf-8")
    head = text[: text.index("</head>")]
    links = re.findall(r'<link rel="stylesheet" href="([^"]+)" data-kb-qa>', head)
    scripts = re.findall(
        r'<script src="([^"]+)" defer data-kb-qa-options="([^"]*)"></script>', head
    )
    options = [json.loads(html.unescape(raw)) for _, raw in scripts]
    return links, options, [src for src, _ in scripts]


def test_every_page_gets_the_widget_once(built: Path) -> None:
    site = built / "site"
    found = pages(site)
    assert len(found) >= 18
    for page in found:
        links, options, srcs = widget_tags(page)
        assert len(links) == 1 and len(srcs) == 1, page
        # The 404 page is served at any path: its links start from the site_url's path.
        base = "http://host/" + page.relative_to(site).as_posix()
        if page.name == "404.html":
            base = "http://host/any/missing/page/"
        # Relative URLs from each page reach the copied assets and the site root.
        # ... at this widget's version: a cached older one is not used after an upgrade
        v = f"?v={version()}"
        assert urljoin(base, srcs[0]) == f"http://host/kb-qa/kb-qa.js{v}", page
        assert urljoin(base, links[0]) == f"http://host/kb-qa/kb-qa.css{v}", page
        opts = options[0]
        assert urljoin(base, opts["root"]) == "http://host/", page
        assert opts["endpoint"] == "https://api.example.com"
        assert opts["title"] == "Ask Lumen"
        assert opts["suggested"] == ["How do retries work?", "如何轮换令牌？"]
        assert opts["shortcut"] == "mod+k"
        assert opts["site_url"] == "https://lumen.example.com/"


def test_labels_reach_the_widget_and_an_unset_title_is_the_pages_language(
    build: Build, tmp_path: Path
) -> None:
    """The widget's words are in each page's language: with no ``title`` or ``placeholder``
    the plugin passes none (it passed "Ask the docs" to every page), and ``labels`` pass
    through as written."""
    labels = {"send": "Ask", "fr": {"send": "Demander"}}
    result = build({"labels": labels})
    assert result.returncode == 0, result.stderr
    _, options, _ = widget_tags(tmp_path / "vault" / "site" / "index.html")
    assert options[0]["labels"] == labels
    assert options[0]["title"] == "" and options[0]["placeholder"] == ""


def test_a_build_without_an_endpoint_says_where_the_chat_will_ask(
    tmp_path: Path, cli_env: Callable[..., dict[str, str]]
) -> None:
    """Published on a static host without an endpoint, readers got "No kb-qa answer
    service" and the owner no word at build time. Said as information: an API behind the
    site's own host is a setup, and ``--strict`` builds must pass."""
    said = "kb-qa: no endpoint is set: the built pages' chat asks /api/ask on the host"
    result = build_site(tmp_path / "bare", {}, cli_env(), quiet=False)
    assert result.returncode == 0 and said in result.stderr, result.stderr
    endpoint = {"endpoint": "https://api.example.com"}
    result = build_site(tmp_path / "set", endpoint, cli_env(), quiet=False)
    assert result.returncode == 0 and said not in result.stderr, result.stderr


def test_assets_are_copied_into_the_site(built: Path) -> None:
    for name in FILES:
        copied = built / "site" / "kb-qa" / name
        assert copied.read_bytes() == (ASSETS / name).read_bytes()


def test_widget_is_small_and_requests_nothing_else() -> None:
    sizes = {name: len(gzip.compress((ASSETS / name).read_bytes(), 9)) for name in FILES}
    print(f"widget gzipped: {sizes} = {sum(sizes.values())} bytes")
    assert sum(sizes.values()) <= MAX_WIDGET_GZIP
    for name in FILES:
        text = (ASSETS / name).read_text(encoding="utf-8")
        # No fonts, images or scripts from elsewhere: the only URL after the header comment
        # is the SVG namespace.
        code = text.split("*/", 1)[1]
        assert not re.search(r"@import|url\(|https?://(?!www\.w3\.org/2000/svg)", code)


@pytest.mark.skipif(shutil.which("node") is None, reason="node is not installed")
def test_widget_unit_tests_pass() -> None:
    """The widget's own tests (node's test runner): Markdown escaping, SSE, passage matching."""
    result = subprocess.run(
        ["node", "--test", str(ASSETS / "test")],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert result.returncode == 0, result.stdout[-4000:] + result.stderr[-2000:]


@pytest.mark.skipif(shutil.which("node") is None, reason="node is not installed")
def test_widget_bundle_is_what_its_modules_build() -> None:
    """kb-qa.js is esbuild's bundle of widget/src/: a change to a module without a rebuild fails."""
    esbuild = ASSETS / "node_modules" / "esbuild"
    assert esbuild.is_dir(), "esbuild is missing: run `npm ci` in widget/ (scripts/test.sh does)"
    result = subprocess.run(
        ["node", str(ASSETS / "build.mjs"), "--check"],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert result.returncode == 0, result.stderr


def test_index_on_build_uses_the_rendered_ids(built: Path) -> None:
    site = built / "site"
    with KnowledgeBase(built, embed_model="hash") as kb:
        chunks = kb.store.chunks()
        assert len({c.path for c in chunks}) >= 18
        for chunk in chunks:
            page = site / chunk.url / "index.html"
            if not chunk.anchor:
                continue
            ids = set(re.findall(r'\sid="([^"]+)"', page.read_text(encoding="utf-8")))
            assert html.escape(chunk.anchor, quote=True) in ids, (chunk.path, chunk.anchor)
        hits = kb.search("rotate a token with a grace period", 5)
        assert any(h.chunk.anchor == "token-rotation" for h in hits)


def test_disabled_injects_and_copies_nothing(build: Build, tmp_path: Path) -> None:
    result = build({"enabled": False, "endpoint": "ftp://ignored-when-disabled"})
    assert result.returncode == 0, result.stderr
    site = tmp_path / "vault" / "site"
    assert not (site / "kb-qa").exists()
    for page in pages(site):
        assert "data-kb-qa" not in page.read_text(encoding="utf-8"), page


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"endpoint": "ftp://x"}, "kb-qa: endpoint 'ftp://x' must be an absolute http(s) URL"),
        ({"endpoint": "api.example.com"}, "must be an absolute http(s) URL"),
        ({"shortcut": "ctrl+"}, "kb-qa: shortcut 'ctrl+' is not a key combination like 'mod+k'"),
        ({"suggested_questions": "How?"}, "suggested_questions"),
        ({"index_on_build": "yes"}, "index_on_build"),
        ({"labels": {"send": 3}}, "kb-qa: labels: 'send' must be a text (send: Ask)"),
        ({"labels": {"fr": {"send": ["Demander"]}}}, "kb-qa: labels: 'fr' must be a text"),
        ({"labels": "send=Ask"}, "labels"),
    ],
)
def test_bad_config_fails_with_a_clear_message(
    build: Build, options: dict[str, Any], message: str
) -> None:
    result = build(options)
    assert result.returncode != 0
    assert message in result.stderr, result.stderr
    assert "Traceback" not in result.stderr


def test_the_plugin_listed_twice_is_a_clear_error(
    tmp_path: Path, cli_env: Callable[..., dict[str, str]]
) -> None:
    """It indexed twice and started two APIs, and each page got two widgets' tags."""
    vault = copy_sample_site(tmp_path / "vault")
    config_file = vault / "mkdocs.yml"
    config = yaml.safe_load(config_file.read_text(encoding="utf-8"))
    config["plugins"].append("kb-qa")
    config_file.write_text(yaml.safe_dump(config, allow_unicode=True), encoding="utf-8")
    result = mkdocs_build(vault, vault / "site", cli_env(), "--quiet")
    assert result.returncode != 0
    assert "kb-qa plugin is listed more than once" in result.stderr
    assert "Traceback" not in result.stderr


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        ({"suggested_questions": "How?"}, "suggested_questions must be a list"),
        ({"endpoint": "docs-api.example.com"}, "extra.kb_qa.endpoint 'docs-api.example.com'"),
    ],
)
def test_a_hand_edited_kb_qa_extra_fails_the_build_in_one_line(
    tmp_path: Path, cli_env: Callable[..., dict[str, str]], extra: dict[str, Any], message: str
) -> None:
    """A site wired by `kb-qa init`: a traceback, or an endpoint without a scheme that the
    widget then called as a path of each page."""
    vault = copy_sample_site(tmp_path / "vault")
    config_file = vault / "mkdocs.yml"
    config = yaml.safe_load(config_file.read_text(encoding="utf-8"))
    config["extra"] = {"kb_qa": extra}
    config["extra_javascript"] = ["kb-qa/kb-qa-options.js"]
    config_file.write_text(yaml.safe_dump(config, allow_unicode=True), encoding="utf-8")
    result = mkdocs_build(vault, vault / "site", cli_env(), "--quiet")
    assert result.returncode != 0
    assert message in result.stderr, result.stderr
    assert "Traceback" not in result.stderr


def assert_progress_and_ready(stderr: str, ready: str = "API for the chat widget at") -> None:
    """A first start is never silent: the embedding's progress at every tenth (sample_site's
    ~200 sections), then the ready line with where the time went."""
    progress = re.findall(r"kb-qa: embedding: (\d+) of (\d+) chunks", stderr)
    assert len(progress) >= 5, stderr
    done = [int(d) for d, _ in progress]
    total = int(progress[0][1])
    assert total >= 100 and done[0] == 0 and done[-1] == total and done == sorted(done)
    assert stderr.index("kb-qa: embedding: 0 of") < stderr.index(ready), stderr
    assert re.search(rf"kb-qa: .*{total} embedded.*embedding \d", stderr), stderr


def test_build_with_index_on_build_prints_progress(
    tmp_path: Path, cli_env: Callable[..., dict[str, str]]
) -> None:
    result = build_site(tmp_path / "vault", {"index_on_build": True}, cli_env(), quiet=False)
    assert result.returncode == 0, result.stderr
    assert "kb-qa: bringing the index of" in result.stderr
    assert_progress_and_ready(result.stderr, ready="kb-qa: indexed")


def test_serve_starts_the_api_for_the_widget(
    tmp_path: Path, cli_env: Callable[..., dict[str, str]]
) -> None:
    """`mkdocs serve` alone gives a working chat: API on a loopback port, CORS for the site."""
    from kb_qa.serve.serving import free_port

    vault = copy_sample_site(tmp_path / "vault")
    (vault / "docs" / "big.md").write_text("# Big\n\n" + "x " * 60_000, encoding="utf-8")
    (vault / "docs" / "ledger.md").write_text("# Ledger\n\nThe wombat ledger.\n", encoding="utf-8")
    port = free_port()
    site = f"http://127.0.0.1:{port}"
    server = subprocess.Popen(
        [sys.executable, "-m", "mkdocs", "serve", "-a", f"127.0.0.1:{port}"],
        cwd=vault,
        env=cli_env(KBQA_MAX_FILE_BYTES="100000"),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        page = ""
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline and server.poll() is None:
            try:
                page = httpx.get(site + "/guides/retries/", timeout=5).text
                break
            except httpx.TransportError:
                time.sleep(0.2)
        assert page, server.stderr.read() if server.poll() is not None else "no page"
        raw = re.search(r'data-kb-qa-options="([^"]*)"', page)
        assert raw, "the served page has no widget"
        options = json.loads(html.unescape(raw.group(1)))
        api = options["endpoint"]
        assert re.fullmatch(r"http://127\.0\.0\.1:\d+", api) and api != site
        # Citations carry mkdocs.yml's site_url, not the dev address serve put in its place.
        assert options["site_url"] == "https://lumen.example.com/"
        wait_for(api + "/api/ready", server)  # its index may still be embedding
        health = httpx.get(api + "/api/health", headers={"Origin": site}, timeout=10)
        assert health.status_code == 200 and health.json()["chunks"] > 0
        assert health.headers["access-control-allow-origin"] == site
        preflight = httpx.options(
            api + "/api/ask",
            headers={
                "Origin": site,
                "Access-Control-Request-Method": "POST",
                "Access-Control-Request-Headers": "content-type",
            },
            timeout=10,
        )
        assert preflight.status_code == 200
        # An author's edit is answered from the new text after the rebuild.
        page_file = vault / "docs" / "guides" / "retries.md"
        page_file.write_text(
            page_file.read_text(encoding="utf-8") + "\n\nThe quokka clause resets retries.\n",
            encoding="utf-8",
        )
        found = False
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and not found:
            time.sleep(1.0)  # one search a second stays inside the default rate limit
            hits = httpx.get(api + "/api/search", params={"q": "quokka clause"}, timeout=10)
            assert hits.status_code == 200, hits.text
            found = any("quokka clause" in h["text"] for h in hits.json()["hits"])
        assert found, "the edit never reached the chat's index"
        # A page deleted leaves the chat's index, and the update line counts it.
        (vault / "docs" / "ledger.md").unlink()
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and found:
            time.sleep(1.0)
            hits = httpx.get(api + "/api/search", params={"q": "wombat ledger"}, timeout=10)
            found = any("wombat ledger" in h["text"] for h in hits.json()["hits"])
        assert not found, "the deleted page is still in the chat's index"
        # A config edit re-reads every page: the rebuild and why are said before the update.
        generation = httpx.get(api + "/api/health", timeout=10).json()["generation"]
        config = vault / "mkdocs.yml"
        config.write_text(config.read_text(encoding="utf-8") + "\n# edited\n", encoding="utf-8")
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            time.sleep(1.0)
            health = httpx.get(api + "/api/health", timeout=10).json()
            # The run bumps the generation as it writes, and says what it did once it has
            # ended: stopped at the first bump, a slow run had said nothing yet.
            refreshing = (health.get("first_index") or {}).get("refreshing")
            if health["generation"] != generation and not refreshing:
                break
        time.sleep(0.5)  # its log lines, written as the run returns
    finally:
        stderr = stop(server)
    rebuilt = stderr.find("kb-qa: Rebuilt: the site config")
    assert 0 <= rebuilt < stderr.find("file(s) read again, "), stderr
    assert_progress_and_ready(stderr)
    assert re.search(
        r"API for the chat widget at http://127\.0\.0\.1:\d+ \(extractive answers\), ready in",
        stderr,
    )
    assert re.search(r"kb-qa: chat index updated: 0 file\(s\) changed, 1 removed, ", stderr)
    # What `kb-qa index` lists is said here too (an index run's own warnings, prefixed).
    assert "kb-qa: skipped docs/big.md: file is " in stderr, stderr


def serve(vault: Path, env: dict[str, str]) -> tuple[subprocess.Popen[str], str]:
    from kb_qa.serve.serving import free_port

    port = free_port()
    process = subprocess.Popen(
        [sys.executable, "-m", "mkdocs", "serve", "-a", f"127.0.0.1:{port}"],
        cwd=vault,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    return process, f"http://127.0.0.1:{port}"


def test_serve_api_port_is_set_by_the_port_option(
    tmp_path: Path, cli_env: Callable[..., dict[str, str]]
) -> None:
    from kb_qa.serve.serving import free_port

    api_port = free_port()
    vault = copy_sample_site(tmp_path / "vault", {"port": api_port})
    # The option wins over KBQA_PORT.
    server, site = serve(vault, cli_env(KBQA_PORT=str(free_port())))
    try:
        page = wait_for(site + "/guides/retries/", server).text
        raw = re.search(r'data-kb-qa-options="([^"]*)"', page)
        assert raw, "the served page has no widget"
        api = json.loads(html.unescape(raw.group(1)))["endpoint"]
        assert api == f"http://127.0.0.1:{api_port}"
        wait_for(api + "/api/ready", server)  # its index may still be embedding
        assert httpx.get(api + "/api/health", timeout=10).json()["chunks"] > 0
    finally:
        stderr = stop(server)
    assert (
        f"API for the chat widget at http://127.0.0.1:{api_port} (extractive answers), ready in"
        in stderr
    )


@pytest.mark.parametrize("where", ["option", "env"])
def test_serve_api_port_taken_is_a_clear_error(
    tmp_path: Path, cli_env: Callable[..., dict[str, str]], where: str
) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        api_port = taken.getsockname()[1]
        options = {"port": api_port} if where == "option" else {}
        vault = copy_sample_site(tmp_path / "vault", options)
        env = cli_env(**({"KBQA_PORT": str(api_port)} if where == "env" else {}))
        server, _ = serve(vault, env)
        try:
            _, stderr = server.communicate(timeout=120)
        finally:
            if server.poll() is None:
                stop(server)
    assert server.returncode != 0
    assert f"kb-qa: cannot serve the chat's API on 127.0.0.1:{api_port}" in stderr, stderr
    assert ("`port` option" if where == "option" else "(KBQA_PORT)") in stderr
    assert "Traceback" not in stderr
    assert "kb-qa: embedding" not in stderr  # refused before any indexing


def test_serve_api_port_must_be_a_number(
    tmp_path: Path, cli_env: Callable[..., dict[str, str]]
) -> None:
    vault = copy_sample_site(tmp_path / "vault")
    server, _ = serve(vault, cli_env(KBQA_PORT="eighty"))
    _, stderr = server.communicate(timeout=120)
    assert server.returncode != 0
    assert "kb-qa: KBQA_PORT must be a port number, not 'eighty'." in stderr, stderr


def test_a_strict_build_after_a_kb_qa_upgrade_rebuilds_the_index_and_passes(
    tmp_path: Path, cli_env: Callable[..., dict[str, str]]
) -> None:
    """The first `mkdocs build --strict` after upgrading kb-qa (an index an older version
    chunked) logged the expected rebuild as a WARNING, and MkDocs aborted the build ("Aborted
    with 1 warnings in strict mode"): CI failed once per upgrade, and whenever chunk_chars
    changed. The rebuild is said once, as news, and the build passes."""
    vault = tmp_path / "vault"
    assert build_site(vault, {"index_on_build": True}, cli_env()).returncode == 0
    with KnowledgeBase(vault) as kb:  # what an index of an earlier kb-qa holds
        kb.store.set_meta(fingerprint="0" * 40, fingerprint_parts="")
    upgraded = build_site(vault, {"index_on_build": True}, cli_env(), quiet=False)
    assert upgraded.returncode == 0, upgraded.stderr
    said = [line for line in upgraded.stderr.splitlines() if "re-chunking every file" in line]
    assert len(said) == 1 and said[0].startswith("INFO") and "kb-qa: Rebuilt: " in said[0], said
    resized = build_site(vault, {"index_on_build": True}, cli_env(KBQA_CHUNK_CHARS="600"))
    assert resized.returncode == 0, resized.stderr


@pytest.mark.parametrize("serve_api", [True, False])
def test_serve_previews_with_its_own_api_when_an_endpoint_is_set(
    tmp_path: Path, cli_env: Callable[..., dict[str, str]], serve_api: bool
) -> None:
    """A site with its production `endpoint` in mkdocs.yml (as the README shows it): `mkdocs
    serve` started no API and the preview's chat called production, which answers from the
    deployed text, not the page just saved, and refuses the preview's origin (CORS). The
    preview asks the API started in-process and says so; ``serve_api: false`` keeps the
    endpoint."""
    production = "https://docs-api.example.com"
    vault = copy_sample_site(tmp_path / "vault", {"endpoint": production, "serve_api": serve_api})
    server, site = serve(vault, cli_env())
    try:
        page = wait_for(site + "/guides/retries/", server).text
        raw = re.search(r'data-kb-qa-options="([^"]*)"', page)
        assert raw, "the served page has no widget"
        api = json.loads(html.unescape(raw.group(1)))["endpoint"]
        if serve_api:
            assert re.fullmatch(r"http://127\.0\.0\.1:\d+", api), api
            wait_for(api + "/api/ready", server)  # its index may still be embedding
            assert httpx.get(api + "/api/health", timeout=10).json()["chunks"] > 0
        else:
            assert api == production
    finally:
        stderr = stop(server)
    said = f"kb-qa: the preview's chat asks the API started here, not the endpoint {production}"
    assert (said in stderr) == serve_api, stderr


def test_a_theme_without_a_closing_head_tag_keeps_its_doctype_first(
    tmp_path: Path, cli_env: Callable[..., dict[str, str]]
) -> None:
    """HTML may leave out </head> (minifiers do: mkdocs-minify-html-plugin by default). The
    tags were then put before <!doctype html>, and the browser rendered every page of the
    site in quirks mode. They go where the head starts, after the doctype and <html>/<head>."""
    vault = copy_sample_site(tmp_path / "vault")
    theme = vault / "minimal"
    theme.mkdir()
    head = "<!doctype html><html lang=en><head class=h><meta charset=utf-8><title>{{ t }}</title>"
    (theme / "main.html").write_text(
        head.replace("{{ t }}", "{{ page.title }}") + "<body>{{ page.content }}", encoding="utf-8"
    )
    (theme / "404.html").write_text(head + "<body>Not found", encoding="utf-8")
    config_file = vault / "mkdocs.yml"
    config = yaml.safe_load(config_file.read_text(encoding="utf-8"))
    config["theme"] = {"name": None, "custom_dir": "minimal", "static_templates": ["404.html"]}
    config_file.write_text(yaml.safe_dump(config, allow_unicode=True), encoding="utf-8")
    result = mkdocs_build(vault, vault / "site", cli_env(), "--quiet", "--strict")
    assert result.returncode == 0, result.stderr
    found = pages(vault / "site")
    assert any(page.name == "404.html" for page in found)
    for page in found:
        text = page.read_text(encoding="utf-8")
        start = '<!doctype html><html lang=en><head class=h><link rel="stylesheet" href="'
        assert text.startswith(start), (page, text[:200])
        assert text.count("data-kb-qa-options") == 1, page
        assert text.index("data-kb-qa-options") < text.index("<body>"), page


@pytest.mark.parametrize(
    ("endpoint", "blocked"),
    [("http://api.example.com", True), ("http://127.0.0.1:8321", False)],
)
def test_an_http_endpoint_on_an_https_site_is_warned_about(
    tmp_path: Path, cli_env: Callable[..., dict[str, str]], endpoint: str, blocked: bool
) -> None:
    """sample_site's site_url is https: its pages' requests to an http API are blocked by the
    browser (mixed content), so the deployed chat never answered, and the build said nothing.
    A loopback API, which browsers allow, is not warned about."""
    vault = copy_sample_site(tmp_path / "vault", {"endpoint": endpoint})
    result = mkdocs_build(vault, vault / "site", cli_env(), "--strict")
    said = f"kb-qa: endpoint '{endpoint}' is http while site_url is https: browsers block"
    assert (said in result.stderr) == blocked, result.stderr
    assert (result.returncode != 0) == blocked, result.stderr
