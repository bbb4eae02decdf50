"""The widget on a Zensical-built site, in headless Chromium.

sample_site as a Zensical project (``tests/sites/sample_site.zensical.toml``: ``.html`` URLs,
its own slugify), wired with ``kb-qa init`` and built by a real ``zensical build`` with
instant navigation on; a live kb-qa API answers from the scripted test LLM. Zensical ignores
MkDocs plugins: the widget arrives through extra_javascript only.
"""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest
import tomlkit
from llm_server import Reply
from parity import zensical_sample_site
from processes import stop, wait_for
from uvicorn_thread import UvicornThread
from widget_stack import (
    MARK_IN_VIEW,
    MARKS,
    MARKS_TEXT,
    ScriptedLLM,
    ask,
    loopback_context,
    open_page,
    serve_folder,
    sync_api,
)

from kb_qa.kb.knowledge_base import KnowledgeBase
from kb_qa.serve.app import create_app
from kb_qa.wiring import plan as wiring

ROOT = Path(__file__).resolve().parents[1]
ZENSICAL = Path(sys.executable).with_name("zensical")
if not ZENSICAL.is_file():
    pytest.skip("zensical is not installed (pip install -e '.[test]')", allow_module_level=True)


@dataclass
class ZensicalStack:
    site: str
    llm: ScriptedLLM
    kb: KnowledgeBase


@pytest.fixture(scope="module")
def zensical_stack(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ZensicalStack]:
    tmp = tmp_path_factory.mktemp("zensical-widget")
    vault = tmp / "vault"
    shutil.copytree(ROOT / "sample_site" / "docs", vault / "docs")
    site_dir = vault / "site"
    site_dir.mkdir()
    origin, files = serve_folder(site_dir)
    # Built for where it is served: instant navigation handles the sitemap's URLs only.
    config = tomlkit.parse(
        (ROOT / "tests" / "sites" / "sample_site.zensical.toml").read_text(encoding="utf-8")
    )
    config["project"]["site_url"] = origin + "/"
    (vault / "zensical.toml").write_text(tomlkit.dumps(config), encoding="utf-8")

    llm = ScriptedLLM(Reply(chunk_size=6, chunk_delay=0.01))
    llm.missing = []
    llm.start()
    kb = KnowledgeBase(
        vault,
        embed_model="hash",
        index_dir=tmp / "index",
        model="openai/test",
        api_base=llm.url,
        cors_origins=(origin,),
        rate_limit=0,
    )
    kb.index()
    api = UvicornThread(create_app(kb))
    try:
        with api:
            wiring.plan(
                vault,
                endpoint=api.url,
                title="Ask Lumen",
                suggested_questions=["How do retries back off?"],
            ).apply()
            subprocess.run(
                [str(ZENSICAL), "build", "--clean"],
                cwd=vault,
                check=True,
                capture_output=True,
                timeout=300,
            )
            yield ZensicalStack(site=origin, llm=llm, kb=kb)
    finally:
        llm.stop()
        kb.close()
        files.shutdown()
        files.server_close()


@pytest.fixture
def zpage(browser: Any, zensical_stack: ZensicalStack) -> Iterator[Any]:
    context = loopback_context(browser)
    zensical_stack.llm.template = ""
    zensical_stack.llm.missing = []
    zensical_stack.llm.reset()
    yield context.new_page()
    context.close()
    assert not zensical_stack.llm.missing, f"no excerpt for {zensical_stack.llm.missing}"


def test_citation_urls_are_zensicals_page_urls(zensical_stack: ZensicalStack) -> None:
    for chunk in zensical_stack.kb.store.chunks():
        url = zensical_stack.kb.url(chunk)
        assert url.startswith(zensical_stack.site + "/"), url
        page = url.removeprefix(zensical_stack.site + "/").split("#", 1)[0]
        assert page.endswith(".html"), url  # use_directory_urls = false


def test_ask_cite_highlight_navigate_and_ask_again(
    zpage: Any, zensical_stack: ZensicalStack
) -> None:
    page, stack = zpage, zensical_stack
    stack.llm.template = (
        "Retries back off exponentially {{Retries and backoff > Default retry policy}}."
    )
    open_page(page, stack.site + "/index.html")
    assert page.locator("#kb-qa").count() == 1
    assert page.evaluate("typeof window.document$.subscribe") == "function"  # Zensical's
    # Ctrl+K is Zensical's own search; on a Zensical page the widget listens to Ctrl+/.
    assert page.locator(".kbq-launcher").get_attribute("aria-keyshortcuts") == "Control+/"
    page.keyboard.press("Control+/")
    sync_api.expect(page.locator(".kbq-panel")).to_be_visible()
    assert page.locator(".kbq-chip").all_text_contents() == ["How do retries back off?"]
    ask(page, "How do retries back off?")
    chips = page.locator("a.kbq-cite")
    assert chips.all_text_contents() == ["1"]

    page.evaluate("window.__sameDocument = true")
    chips.first.click()
    # Zensical's own slugify (toc separator "_") and .html page URLs.
    page.wait_for_url(re.compile(r"/guides/retries\.html\?kbqa-hl=[^#]+#default_retry_policy$"))
    page.wait_for_function(f"{MARKS}.length > 0")
    assert page.evaluate("window.__sameDocument") is True  # instant navigation, no reload
    marked = page.evaluate(MARKS_TEXT)
    # The rows the sentence was drawn from (kb_qa/answer/alignment.py), not the section.
    assert marked.startswith("retry.strategy exponential How the delay grows")
    assert "Out of the box" not in marked and "Upper bound for any single delay" not in marked
    page.wait_for_function(MARK_IN_VIEW)
    assert page.locator("#kb-qa").count() == 1

    # Navigate with Zensical's instant navigation, then ask again on the new page.
    stack.llm.template = (
        "Tokens rotate with a grace period {{Authentication and tokens > Rotating tokens}}."
    )
    page.locator('nav a[href$="faq.html"]').first.click()
    page.wait_for_url(re.compile(r"/faq\.html$"))
    page.wait_for_function("/Frequently asked/.test(document.title)")
    assert page.evaluate("window.__sameDocument") is True
    assert page.locator("#kb-qa").count() == 1
    page.evaluate("window.KbQa.open()")
    sync_api.expect(page.locator(".kbq-answer")).to_contain_text("Retries back off")
    ask(page, "How do I rotate a token?")
    sync_api.expect(page.locator(".kbq-answer").last).to_contain_text("Tokens rotate")
    page.locator("a.kbq-cite").last.click()
    page.wait_for_url(re.compile(r"/operations/authentication\.html\?kbqa-hl=[^#]+#"))
    page.wait_for_function(MARK_IN_VIEW)
    assert "grace period" in page.evaluate(MARKS_TEXT)
    assert page.evaluate("window.__sameDocument") is True


def test_preview_kb_qa_serve_watch_next_to_zensical_serve(
    browser: Any, tmp_path: Path, cli_env: Callable[..., dict[str, str]]
) -> None:
    """`zensical serve` plus `kb-qa serve SITE --watch`: the Zensical equivalent of the API
    under `mkdocs serve`. CORS for the preview's origin comes from zensical.toml's dev_addr
    without configuring it; an edit is answered from the new text."""
    from kb_qa.serve.serving import free_port

    site = zensical_sample_site(tmp_path)
    api_port, preview_port = free_port(), free_port()
    config = tomlkit.parse((site / "zensical.toml").read_text(encoding="utf-8"))
    config["project"]["dev_addr"] = f"localhost:{preview_port}"
    (site / "zensical.toml").write_text(tomlkit.dumps(config), encoding="utf-8")
    env = cli_env()
    api = f"http://127.0.0.1:{api_port}"
    init = [sys.executable, "-m", "kb_qa.cli", "init", str(site), "--preview-endpoint", api]
    subprocess.run(init, env=env, check=True, capture_output=True, timeout=120)
    kbqa = subprocess.Popen(
        [sys.executable, "-m", "kb_qa.cli", "serve", str(site), "--watch", "--port", str(api_port)],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    preview = subprocess.Popen(
        [str(ZENSICAL), "serve", "-a", f"127.0.0.1:{preview_port}"],
        cwd=site,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        origin = f"http://localhost:{preview_port}"
        assert "kb-qa/kb-qa-options.js" in wait_for(origin + "/index.html", preview).text
        wait_for(api + "/api/ready", kbqa)  # kb-qa serve indexes beside the server
        health = wait_for(api + "/api/health", kbqa)
        assert health.status_code == 200 and health.json()["chunks"] > 0
        for allowed in (origin, f"http://127.0.0.1:{preview_port}"):
            response = httpx.get(api + "/api/health", headers={"Origin": allowed}, timeout=10)
            assert response.headers.get("access-control-allow-origin") == allowed
        other = httpx.get(api + "/api/health", headers={"Origin": "http://evil.test"}, timeout=10)
        assert "access-control-allow-origin" not in other.headers

        context = browser.new_context(viewport={"width": 1280, "height": 800})
        context.set_default_timeout(20_000)
        context.route(
            re.compile(r"^https?://(?!(127\.0\.0\.1|localhost)[:/])"), lambda r: r.abort()
        )
        page = context.new_page()
        open_page(page, origin + "/guides/retries.html")
        assert page.evaluate("window.KbQa.options.endpoint") == api
        page.keyboard.press("Control+/")  # Ctrl+K is Zensical's search
        ask(page, "What is the default retry backoff?")
        sync_api.expect(page.locator(".kbq-answer").last).to_contain_text("retry")
        assert page.locator("a.kbq-cite").count() >= 1

        retries = site / "docs" / "guides" / "retries.md"
        retries.write_text(
            retries.read_text(encoding="utf-8")
            + "\n\n## Quokka clause\n\nThe quokka clause resets every retry counter at noon.\n",
            encoding="utf-8",
        )
        deadline = time.monotonic() + 60
        found = False
        while time.monotonic() < deadline and not found:
            time.sleep(0.5)
            hits = httpx.get(api + "/api/search", params={"q": "quokka clause"}, timeout=10)
            found = any("quokka clause" in h["text"] for h in hits.json()["hits"])
        assert found, "the edit never reached the index of kb-qa serve --watch"
        ask(page, "What does the quokka clause do?")
        sync_api.expect(page.locator(".kbq-answer").last).to_contain_text("resets every retry")
        context.close()
    finally:
        stop(preview)
        stop(kbqa)


def test_a_folder_of_html_pages_previewed_here_calls_kb_qa_serve(
    browser: Any, tmp_path: Path, cli_env: Callable[..., dict[str, str]]
) -> None:
    """`kb-qa init` on built pages with no endpoint: served from this machine, the drop-in
    widget calls `kb-qa serve` at the preview endpoint; where nothing answers questions it
    says so instead of "try again"."""
    sources = tmp_path / "src"
    sources.mkdir()
    (sources / "faq.md").write_text(
        "# FAQ\n\n## Token rotation\n\nRotate a token with `lumen token rotate`; the old "
        "secret keeps working for one hour.\n",
        encoding="utf-8",
    )
    pages = tmp_path / "site"
    pages.mkdir()
    for name in ("index", "faq"):
        (pages / f"{name}.html").write_text(
            f"<!doctype html><html><head><title>{name}</title></head><body><h1>{name}</h1>"
            "</body></html>",
            encoding="utf-8",
        )
    origin, files = serve_folder(pages)
    kb = KnowledgeBase(sources, cors_origins=(origin,), index_dir=tmp_path / "idx")
    kb.index()
    try:
        with UvicornThread(create_app(kb)) as api:
            wire = [sys.executable, "-m", "kb_qa.cli", "init", str(pages)]
            subprocess.run(
                [*wire, "--preview-endpoint", api.url],
                env=cli_env(),
                check=True,
                capture_output=True,
                timeout=120,
            )
            context = loopback_context(browser)
            page = context.new_page()
            open_page(page, origin + "/faq.html")
            assert page.evaluate("window.KbQa.options.endpoint") == api.url
            page.keyboard.press("Control+k")
            ask(page, "How do I rotate a token?")
            sync_api.expect(page.locator(".kbq-answer").last).to_contain_text("lumen token rotate")
            # Wired to call its own origin (a static server): the reader is told why.
            subprocess.run(
                [*wire, "--preview-endpoint", origin],
                env=cli_env(),
                check=True,
                capture_output=True,
                timeout=120,
            )
            open_page(page, origin + "/faq.html")
            assert page.evaluate("window.KbQa.options.endpoint") == ""
            page.keyboard.press("Control+k")
            ask(page, "How do I rotate a token?")
            sync_api.expect(page.locator(".kbq-bot").last).to_contain_text(
                "No kb-qa answer service at " + origin + "/api/ask"
            )
            context.close()
    finally:
        kb.close()
        files.shutdown()
