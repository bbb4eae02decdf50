"""The widget's browser test stack: the built sample site, a live kb-qa API, headless Chromium.

The site is a real ``mkdocs build`` of sample_site (Material, instant navigation) with the
``kb-qa`` plugin pointing at a real uvicorn server; answers come from the OpenAI-compatible
test LLM server, scripted to cite sections by their heading path. The fixtures are
session-wide (``conftest.py`` re-exports them), so every widget test module shares one
build. Screenshots are written to test-artifacts/ for a person to look at.
"""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from functools import partial
from http.server import BaseHTTPRequestHandler, SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import httpx
import pytest
from browser import CHROMIUM, CHROMIUM_ARGS
from llm_server import Reply, ScriptedLLM
from parity import read_config, write_config
from uvicorn_thread import UvicornThread

from kb_qa.kb.knowledge_base import KnowledgeBase
from kb_qa.serve.app import create_app

try:
    from playwright import sync_api
except ImportError:  # the widget test modules skip themselves
    sync_api: Any = None

AXE = Path(__file__).resolve().parents[1] / "widget" / "node_modules" / "axe-core" / "axe.min.js"

ROOT = Path(__file__).resolve().parents[1]
ARTIFACTS = ROOT / "test-artifacts"

# Records, inside the page, when Enter reaches the widget, when the first status line from the
# server and the first answer text are in the DOM, and every length the answer text had while
# it streamed.
PROBE = """() => {
  const root = document.getElementById("kb-qa").shadowRoot;
  const probe = (window.__probe = { enter: 0, status: 0, text: 0, statusText: "", lengths: [] });
  root.addEventListener("keydown", (e) => {
    if (e.key === "Enter" && !probe.enter) probe.enter = performance.now();
  }, true);
  new MutationObserver(() => {
    const st = root.querySelector(".kbq-status:not([hidden]):not([data-stage=sending])");
    if (st && !probe.status) {
      probe.status = performance.now();
      probe.statusText = st.textContent;
    }
    const answers = root.querySelectorAll(".kbq-answer");
    const n = answers.length ? answers[answers.length - 1].textContent.length : 0;
    if (n && !probe.text) probe.text = performance.now();
    if (n && n !== probe.lengths[probe.lengths.length - 1]) probe.lengths.push(n);
  }).observe(root, { subtree: true, childList: true, characterData: true, attributes: true });
}"""

MARKS = "[...document.querySelectorAll('mark.kb-qa-highlight')]"
MARKS_TEXT = f"{MARKS}.map(m => m.textContent).join(' ')"
MARK_IN_VIEW = f"""() => {{
  const marks = {MARKS};
  if (!marks.length) return false;
  const r = marks[0].getBoundingClientRect();
  return r.top >= 0 && r.bottom <= window.innerHeight && r.height > 0;
}}"""

# True when the heading with this id shows below the sticky header, above the window's end.
HEADING_IN_VIEW = """(id) => {
  const r = document.getElementById(id).getBoundingClientRect();
  const header = document.querySelector(".md-header, header");
  const below = header ? header.getBoundingClientRect().bottom : 0;
  return r.top >= below - 1 && r.bottom <= window.innerHeight;
}"""

# True when the open panel hides part of a highlighted passage, side by side.
PANEL_COVERS_MARKS = f"""() => {{
  const panel = document.getElementById("kb-qa").shadowRoot.querySelector(".kbq-panel");
  if (panel.hidden) return false;
  const p = panel.getBoundingClientRect();
  return {MARKS}.some(m => {{
    const r = m.getBoundingClientRect();
    return r.width > 0 && r.right > p.left && r.left < p.right;
  }});
}}"""


class _QuietFiles(SimpleHTTPRequestHandler):
    headers_to_send: dict[str, str] = {}  # noqa: RUF012 - set per server by serve_folder

    def end_headers(self) -> None:
        for name, value in self.headers_to_send.items():
            self.send_header(name, value)
        super().end_headers()

    def log_message(self, format: str, *args: Any) -> None:
        pass


class _Files(ThreadingHTTPServer):
    daemon_threads = True

    def handle_error(self, request: Any, client_address: Any) -> None:
        pass  # the browser drops connections it no longer needs


def serve_folder(folder: Path, headers: dict[str, str] | None = None) -> tuple[str, _Files]:
    """A static file server for ``folder`` on a free loopback port, sending ``headers`` (read
    at each reply: a Content-Security-Policy, say) with every reply: (origin, server)."""
    handler = type(
        "_Handler", (_QuietFiles,), {"headers_to_send": {} if headers is None else headers}
    )
    files = _Files(("127.0.0.1", 0), partial(handler, directory=str(folder)))
    threading.Thread(target=files.serve_forever, args=(0.05,), daemon=True).start()
    return f"http://127.0.0.1:{files.server_address[1]}", files


@contextmanager
def served_folder(folder: Path, headers: dict[str, str] | None = None) -> Iterator[str]:
    """``serve_folder``'s origin while the block runs; the server is shut down after."""
    origin, files = serve_folder(folder, headers)
    try:
        yield origin
    finally:
        files.shutdown()
        files.server_close()


def mkdocs_build(
    folder: Path, site_dir: Path, env: dict[str, str], *flags: str
) -> subprocess.CompletedProcess[str]:
    """A real ``mkdocs build`` of the site in ``folder`` into ``site_dir`` (not checked)."""
    return subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", *flags, "-d", str(site_dir)],
        cwd=folder,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )


@contextmanager
def site_with_api(
    vault: Path, site_dir: Path, env: dict[str, str], *flags: str, **settings: Any
) -> Iterator[tuple[str, str, KnowledgeBase]]:
    """The MkDocs site in ``vault`` (its ``mkdocs.yml`` has the kb-qa plugin) served from
    ``site_dir`` on a free loopback port and built there with the plugin pointing at a live
    kb-qa API over ``vault`` (a KnowledgeBase with ``settings``; CORS allows the site).

    The site is built for where it is served, as `mkdocs serve` does: Material's instant
    navigation only handles links whose host and port match the sitemap's URLs. Yields
    (the site's origin, the API's URL, the knowledge base).
    """
    site_dir.mkdir(exist_ok=True)
    origin, files = serve_folder(site_dir)
    config_file = vault / "mkdocs.yml"
    config = read_config(config_file)
    config["site_url"] = origin + "/"
    write_config(config_file, config)
    kb = KnowledgeBase(vault, cors_origins=(origin,), **settings)
    try:
        kb.index()
        with UvicornThread(create_app(kb)) as api:
            plugins = config["plugins"]
            for i, plugin in enumerate(plugins):
                if plugin == "kb-qa":
                    plugins[i] = {"kb-qa": {"endpoint": api.url}}
                elif isinstance(plugin, dict) and "kb-qa" in plugin:
                    plugin["kb-qa"] = {**(plugin["kb-qa"] or {}), "endpoint": api.url}
            write_config(config_file, config)
            result = mkdocs_build(vault, site_dir, env, "--quiet", *flags)
            assert result.returncode == 0, result.stderr
            yield origin, api.url, kb
    finally:
        kb.close()
        files.shutdown()
        files.server_close()


@contextmanager
def one_note_site_with_model(work: Path, llm_url: str) -> Iterator[str]:
    """A static page carrying the built widget (a copy of widget/kb-qa.js and .css), its kb-qa
    API over a one-note vault (the ``hash`` embedder) answering through the test LLM at
    ``llm_url`` with no reply cap of its own, so the widget alone copes with what the model
    sends: yields the page's URL."""
    site = work / "site"
    (site / "kb-qa").mkdir(parents=True)
    for name in ("kb-qa.js", "kb-qa.css"):
        shutil.copy(ROOT / "widget" / name, site / "kb-qa" / name)
    vault = work / "vault"
    vault.mkdir()
    (vault / "otters.md").write_text("# Otters\n\n## Sleeping\n\nOtters hold hands.\n")
    origin, files = serve_folder(site)
    kb = KnowledgeBase(
        vault,
        index_dir=work / "idx",
        embed_model="hash",
        model="openai/test",
        api_base=llm_url,
        cors_origins=(origin,),
        rate_limit=0,
        max_reply_chars=0,
    )
    try:
        kb.index()
        with UvicornThread(create_app(kb)) as api:
            (site / "index.html").write_text(
                "<!doctype html><html><head><meta charset=utf-8><title>T</title>"
                '<link rel="stylesheet" href="kb-qa/kb-qa.css"></head><body><h1>Otters</h1>'
                f'<script src="kb-qa/kb-qa.js" defer data-endpoint="{api.url}"></script>'
                "</body></html>",
                encoding="utf-8",
            )
            yield origin + "/index.html"
    finally:
        kb.close()
        files.shutdown()
        files.server_close()


@dataclass
class Stack:
    site: str  # the static site's origin, e.g. http://127.0.0.1:PORT
    api: str
    llm: ScriptedLLM


@pytest.fixture(scope="session")
def stack(
    tmp_path_factory: pytest.TempPathFactory, cli_env: Callable[..., dict[str, str]]
) -> Iterator[Stack]:
    tmp = tmp_path_factory.mktemp("widget")
    vault = tmp / "vault"
    shutil.copytree(ROOT / "sample_site", vault, ignore=shutil.ignore_patterns(".kb-qa", "site"))
    site_dir = tmp / "site"
    config_file = vault / "mkdocs.yml"
    config = read_config(config_file)
    suggested = ["How do retries back off?", "How do I rotate an API token?"]
    config["plugins"] = ["search", {"kb-qa": {"suggested_questions": suggested}}]
    write_config(config_file, config)

    llm = ScriptedLLM(Reply(chunk_size=6, chunk_delay=0.01))
    llm.missing = []
    llm.start()
    try:
        with site_with_api(
            vault,
            site_dir,
            cli_env(),
            embed_model="hash",
            index_dir=tmp / "index",
            model="openai/test",
            api_base=llm.url,
            rate_limit=0,
        ) as (origin, api_url, _):
            # The drop-in form on a plain page: one script tag, no MkDocs, no Material.
            (site_dir / "plain.html").write_text(
                "<!doctype html><html><head><meta charset=utf-8><title>Plain</title></head>"
                "<body><h1>A plain page</h1><p>No theme here.</p>"
                f'<script src="kb-qa/kb-qa.js" defer data-endpoint="{api_url}" '
                f'data-site-url="{origin}/"></script></body></html>',
                encoding="utf-8",
            )
            # One question first, as any running server has had: the first answer after
            # startup pays one-off costs (~150 ms here) that the Enter -> status timing
            # below is not about.
            httpx.post(api_url + "/api/ask", json={"question": "warm up"}, timeout=60)
            llm.reset()
            yield Stack(site=origin, api=api_url, llm=llm)
    finally:
        llm.stop()


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    # One per test module, not per session (0.7 s each): while it is open the main thread's
    # event loop runs, and a later module's ``asyncio.run`` would fail in any test order.
    with chromium() as instance:
        yield instance


@contextmanager
def chromium() -> Iterator[Any]:
    """Headless Debian Chromium under Playwright's sync API, closed when the block ends.

    While it is open, Playwright keeps an event loop running in the main thread, so code that
    calls ``asyncio.run`` (the MCP tests, among others) cannot run until it is closed.
    """
    # Playwright starts Chromium with a fresh temporary profile (--user-data-dir) of its own.
    with sync_api.sync_playwright() as p:
        instance = p.chromium.launch(
            executable_path=str(CHROMIUM), headless=True, args=CHROMIUM_ARGS
        )
        try:
            yield instance
        finally:
            instance.close()


def loopback_context(
    browser: Any, outside: Callable[[Any], None] | None = None, **options: Any
) -> Any:
    """A browser context as the widget tests use it: 1280×800 unless ``options`` say
    otherwise, 15 s timeouts, and nothing may leave the machine: every request off loopback
    is aborted (by ``outside``, which records it, when given)."""
    options.setdefault("viewport", {"width": 1280, "height": 800})
    context = browser.new_context(**options)
    context.set_default_timeout(15_000)
    context.route(
        re.compile(r"^https?://(?!127\.0\.0\.1[:/])"), outside or (lambda route: route.abort())
    )
    return context


@pytest.fixture
def new_page(browser: Any, stack: Stack) -> Iterator[Callable[..., Any]]:
    contexts: list[Any] = []

    def make(**options: Any) -> Any:
        # The theme's own outside requests (web fonts, the repository's stars) are
        # expected; the widget must add none.
        context = loopback_context(browser, outside, **options)
        contexts.append(context)
        return context.new_page()

    outside_requests: list[str] = []

    def outside(route: Any) -> None:
        outside_requests.append(route.request.url)
        route.abort()

    stack.llm.template = ""
    stack.llm.missing = []
    stack.llm.reset()
    yield make
    for context in contexts:
        context.close()
    theme = re.compile(r"^https://(fonts\.googleapis\.com|fonts\.gstatic\.com|api\.github\.com)/")
    assert [url for url in outside_requests if not theme.match(url)] == []
    assert not stack.llm.missing, f"the prompt had no excerpt for {stack.llm.missing}"


def shot(page: Any, name: str) -> None:
    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / f"widget-{name}.png"))


def settle(page: Any) -> None:
    """Wait until the page stops scrolling (smooth scrolling takes a few hundred ms)."""
    page.wait_for_function(
        "() => { const same = window.__lastY === scrollY; window.__lastY = scrollY; return same; }",
        polling=150,
    )


def search_settled(page: Any) -> None:
    """Wait until Material's search results stop changing.

    Each keystroke re-renders the results; a result focused before the last query's list
    arrives is removed with the old list and focus falls back to ``<body>``.
    """
    page.locator(".md-search-result__link").first.wait_for()
    page.wait_for_function(
        """() => {
            const list = document.querySelector('.md-search-result__list');
            const html = list ? list.innerHTML : '';
            const same = html !== '' && window.__kbqaLastResults === html;
            window.__kbqaLastResults = html;
            return same;
        }""",
        polling=250,
    )


def open_page(page: Any, url: str) -> None:
    page.goto(url)
    page.wait_for_function("window.KbQa && window.KbQa.mounted")


def ask(page: Any, question: str) -> None:
    """Ask in the open widget and wait until the answer has finished (or failed)."""
    answers = page.locator(".kbq-bot")
    before = answers.count()
    page.locator(".kbq-input").fill(question)
    page.locator(".kbq-input").press("Enter")
    sync_api.expect(answers).to_have_count(before + 1)
    sync_api.expect(answers.nth(before)).to_have_attribute("aria-busy", "false")


def asked_for_a_command(new_page: Callable[..., Any], stack: Stack) -> Any:
    """A page whose reader asked how to replay a dead job and got a command in a code block
    (the clipboard allowed, to check what the copy buttons copy)."""
    template = (
        "Replay a dead job with the CLI {{The dead-letter queue > Replaying dead jobs}}:\n\n"
        "```bash\nlumen jobs retry 01HV7R0ZK3Q9M2W8E6T4Y1U5I7\n```\n"
    )
    page = answered(new_page, stack, template, "How do I replay a dead job?")
    page.context.grant_permissions(["clipboard-read", "clipboard-write"])
    return page


def answered(
    new_page: Callable[..., Any],
    stack: Stack,
    template: str,
    question: str,
    at: str = "/",
    **options: Any,
) -> Any:
    """A fresh page of the site (its home, or ``at``; ``options`` for the browser context)
    with the panel open and ``question`` answered from ``template`` (see :class:`ScriptedLLM`)."""
    stack.llm.template = template
    page = new_page(**options)
    open_page(page, stack.site + at)
    page.keyboard.press("Control+k")
    ask(page, question)
    return page


def in_shadow(page: Any, script: str) -> Any:
    """Run ``script`` (a function body) with ``root`` bound to the widget's shadow root."""
    root = "const root = document.getElementById('kb-qa').shadowRoot;"
    return page.evaluate(f"(() => {{ {root} {script} }})()")


def axe_findings(page: Any, where: str) -> list[str]:
    """Serious and critical axe-core findings inside the widget (its shadow tree included)."""
    if not page.evaluate("!!window.axe"):
        page.add_script_tag(path=str(AXE))
    violations = page.evaluate(
        """async () => {
          const result = await axe.run({ include: [["#kb-qa"]] }, { resultTypes: ["violations"] });
          return result.violations.map((v) => ({
            id: v.id, impact: v.impact,
            nodes: v.nodes.map((n) => JSON.stringify(n.target) + " " + n.failureSummary),
          }));
        }"""
    )
    AXE_LOG.append((where, [(v["id"], v["impact"], len(v["nodes"])) for v in violations]))
    return [
        f"{where}: {v['id']} ({v['impact']}): {node}"
        for v in violations
        if v["impact"] in ("serious", "critical")
        for node in v["nodes"]
    ]


AXE_LOG: list[tuple[str, list[tuple[str, str, int]]]] = []  # every finding, printed by tests


class CrossOriginAnswers(BaseHTTPRequestHandler):
    """An answer service on another origin that a test writes itself (one that goes quiet,
    one that breaks off): CORS allowed, preflights answered; subclasses answer POST."""

    protocol_version = "HTTP/1.1"

    def _cors(self) -> None:
        self.send_header("Access-Control-Allow-Origin", "*")
        self.send_header("Access-Control-Allow-Headers", "content-type")

    def do_OPTIONS(self) -> None:
        self.send_response(204)
        self._cors()
        self.send_header("Content-Length", "0")
        self.end_headers()
