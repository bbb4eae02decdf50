"""Signing in to /insights from a browser: real uvicorn, real Chromium, real sessions.

A site owner opens /insights, is sent to the sign-in form, signs in with the admin token,
reads the top-questions table and signs out. A wrong token, a POST from another site (with
the right token, or to sign the owner out) and the session cookie sent again after signing
out are all refused; Bearer keeps working; attempts are rate limited.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, ClassVar

import httpx
import pytest
from browser import CHROMIUM, CHROMIUM_ARGS
from conftest import write_files
from uvicorn_thread import UvicornThread

from kb_qa.kb.knowledge_base import KnowledgeBase
from kb_qa.serve import admin
from kb_qa.serve.app import create_app
from kb_qa.serve.serving import uvicorn_options

ROOT = Path(__file__).resolve().parents[1]
ARTIFACTS = ROOT / "test-artifacts"
ADMIN = "admin-" + "s" * 24
NOTES = {
    "install.md": "# Installing Widgetron\n\nInstall Widgetron with `pip install widgetron`.\n",
    "retries.md": "# Retries\n\nA failing job is attempted five times by default.\n",
}
ASKED = [
    "How do I install Widgetron?",
    "How do I install Widgetron?",
    "How do I install Widgetron?",
    "How many times is a failing job attempted?",
    "What is the capital of France?",
]


@dataclass
class Served:
    url: str
    kb: KnowledgeBase


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    root = tmp_path_factory.mktemp("signin")
    vault = write_files(root / "vault", NOTES)
    kb = KnowledgeBase(vault, index_dir=root / "index", embed_model="hash", rate_limit=0)
    kb.index()
    settings = kb.settings.replace(admin_token=ADMIN)
    with UvicornThread(create_app(kb, settings)) as server:
        for question in ASKED:
            body = {"question": question, "stream": False}
            assert httpx.post(server.url + "/api/ask", json=body, timeout=30).status_code == 200
        yield Served(server.url, kb)
    kb.close()


class _Attacker(BaseHTTPRequestHandler):
    """Another site: each page posts a form to the kb-qa server as soon as it loads."""

    pages: ClassVar[dict[str, str]] = {}

    def do_GET(self) -> None:
        body = self.pages.get(self.path, "").encode()
        self.send_response(200 if body else 404)
        self.send_header("Content-Type", "text/html; charset=utf-8")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format: str, *args: Any) -> None:
        pass


@pytest.fixture
def attacker(served: Served) -> Iterator[str]:
    """http://localhost:PORT: another origin and another site than http://127.0.0.1:…"""
    form = (
        '<form id="f" method="post" action="{action}">{fields}</form>'
        '<script>document.getElementById("f").submit()</script>'
    )
    _Attacker.pages = {
        "/sign-in": form.format(
            action=served.url + "/insights/sign-in",
            fields=f'<input name="token" value="{ADMIN}">',
        ),
        "/sign-out": form.format(action=served.url + "/insights/sign-out", fields=""),
    }
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Attacker)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://localhost:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


def session_cookie(context: Any) -> dict[str, Any] | None:
    return next((c for c in context.cookies() if c["name"] == admin.COOKIE), None)


@pytest.mark.skipif(not CHROMIUM.exists(), reason="Debian's chromium is not installed")
def test_a_browser_signs_in_reads_the_questions_and_signs_out(
    served: Served, attacker: str
) -> None:
    sync_api = pytest.importorskip("playwright.sync_api", reason="playwright is missing")
    ARTIFACTS.mkdir(exist_ok=True)
    report = served.url + "/insights"
    with sync_api.sync_playwright() as p:
        browser = p.chromium.launch(
            executable_path=str(CHROMIUM), headless=True, args=CHROMIUM_ARGS
        )
        try:
            context = browser.new_context(viewport={"width": 1280, "height": 900})
            page = context.new_page()
            problems: list[str] = []
            page.on("pageerror", lambda e: problems.append(f"pageerror: {e}"))
            visited: list[str] = []
            page.on("request", lambda r: visited.append(r.url))

            # Not signed in: the report sends a browser to the form.
            page.goto(report)
            assert page.url == served.url + "/insights/sign-in"
            assert page.get_by_label("Admin token").get_attribute("type") == "password"

            # A wrong token: refused, no cookie.
            page.get_by_label("Admin token").fill(ADMIN + "x")
            with page.expect_response(lambda r: r.request.method == "POST") as wrong:
                page.get_by_role("button", name="Sign in").click()
            assert wrong.value.status == 401
            assert page.get_by_role("alert").inner_text() == "That is not the admin token."
            assert session_cookie(context) is None

            # The right one: the report, with a session cookie scripts cannot read.
            page.get_by_label("Admin token").fill(ADMIN)
            page.get_by_role("button", name="Sign in").click()
            page.wait_for_url(report)
            table = page.locator("#top-questions")
            table.wait_for()
            rows = table.locator("tbody tr")
            first = rows.nth(0).locator("td")
            assert first.nth(1).inner_text() == ASKED[0]
            assert first.nth(2).inner_text() == "3"
            assert first.nth(3).inner_text() == "answered"
            cited = first.nth(5).locator("a")
            assert cited.count() >= 1 and "install.md" in (cited.first.get_attribute("href") or "")
            texts = [rows.nth(i).locator("td").nth(1).inner_text() for i in range(rows.count())]
            assert set(texts) == set(ASKED)
            page.screenshot(path=str(ARTIFACTS / "insights-signed-in.png"), full_page=True)
            cookie = session_cookie(context)
            assert cookie is not None
            assert cookie["httpOnly"] and cookie["sameSite"] == "Strict"
            assert cookie["path"] == "/insights" and not cookie["secure"]  # plain http here
            assert 7.9 * 3600 < cookie["expires"] - time.time() <= 8 * 3600
            assert page.evaluate("document.cookie") == ""
            assert not any(ADMIN in url for url in visited)  # never a token in a URL

            # Another site posts the right token, or tries to sign the owner out: refused.
            other = context.new_page()
            with other.expect_response(lambda r: r.request.method == "POST") as forged:
                other.goto(attacker + "/sign-in")
            assert forged.value.status == 403
            assert "Refused" in other.content()
            with other.expect_response(lambda r: r.request.method == "POST") as forged_out:
                other.goto(attacker + "/sign-out")
            assert forged_out.value.status == 403
            other.close()
            page.goto(report)  # still signed in
            assert page.url == report and page.locator("#top-questions").count() == 1

            # Signing out ends the session on the server.
            page.get_by_role("button", name="Sign out").click()
            page.wait_for_url(served.url + "/insights/sign-in")
            assert session_cookie(context) is None
            context.add_cookies([cookie])  # the old cookie, sent again
            page.goto(report)
            assert page.url == served.url + "/insights/sign-in"
            assert problems == []
            context.close()
        finally:
            browser.close()
    # The replayed cookie opens nothing outside the browser either.
    replayed = httpx.get(report + "?format=json", cookies={admin.COOKIE: cookie["value"]})
    assert replayed.status_code == 401


def test_sign_in_over_http(served: Served) -> None:
    url = served.url
    own = {"Origin": url}
    form = {"token": ADMIN}
    with httpx.Client(base_url=url, timeout=30) as client:
        # No origin at all, a foreign one, "null" or a cross-site fetch: refused.
        for headers in (
            {},
            {"Origin": "http://localhost:1"},
            {"Origin": "null"},
            {"Referer": "http://evil.example/" + url},
            {**own, "Sec-Fetch-Site": "cross-site"},
        ):
            response = client.post("/insights/sign-in", data=form, headers=headers)
            assert response.status_code == 403, headers
            assert admin.COOKIE not in response.cookies
        # A token in the URL counts for nothing.
        assert client.post("/insights/sign-in?token=" + ADMIN, headers=own).status_code == 400
        assert client.get("/insights?token=" + ADMIN).status_code == 401
        # A same-origin Referer is enough when a browser sends no Origin.
        signed = client.post(
            "/insights/sign-in", data={**form, "since": "7d"}, headers={"Referer": url + "/x"}
        )
        assert signed.status_code == 303 and signed.headers["location"] == "../insights?since=7d"
        assert signed.headers["cache-control"] == "no-store"
        header = signed.headers["set-cookie"].lower()
        assert "httponly" in header and "samesite=strict" in header and "path=/insights" in header
        assert "secure" not in header  # set only over HTTPS
        session = signed.cookies[admin.COOKIE]
        assert len(session) >= 40
        data = client.get("/insights?format=json", cookies={admin.COOKIE: session})
        assert data.status_code == 200 and data.json()["questions"]["top"][0]["asked"] == 3
        table = client.get("/insights?format=csv", cookies={admin.COOKIE: session})
        assert table.headers["content-type"].startswith("text/csv")
        assert table.text.splitlines()[1].startswith(f"1,{ASKED[0]},3,")
        page = client.get("/insights", cookies={admin.COOKIE: session})
        assert "form-action 'self'" in page.headers["content-security-policy"]
        assert "frame-ancestors 'none'" in page.headers["content-security-policy"]
        assert 'action="insights/sign-out"' in page.text
        # Bearer still works, and its page carries no sign-out form.
        bearer = client.get("/insights", headers={"Authorization": f"Bearer {ADMIN}"})
        assert bearer.status_code == 200 and "sign-out" not in bearer.text
        assert "form-action 'none'" in bearer.headers["content-security-policy"]
        # Signing out needs the same origin too; then the cookie is dead.
        cookies = {admin.COOKIE: session}
        refused = client.post("/insights/sign-out", cookies=cookies)
        assert refused.status_code == 403
        assert client.get("/insights?format=json", cookies=cookies).status_code == 200
        out = client.post("/insights/sign-out", cookies=cookies, headers=own)
        assert out.status_code == 303 and out.headers["location"] == "sign-in"
        assert client.get("/insights?format=json", cookies=cookies).status_code == 401
        # Browsers are sent to the form; other clients get the 401 as before.
        browser = client.get("/insights?since=7d", headers={"Accept": "text/html"})
        assert browser.status_code == 303
        assert browser.headers["location"] == "insights/sign-in?since=7d"
        form_page = client.get("/insights/sign-in?since=7d")
        assert form_page.status_code == 200 and 'name="since" value="7d"' in form_page.text
        assert "frame-ancestors 'none'" in form_page.headers["content-security-policy"]


def test_sign_in_attempts_are_rate_limited(served: Served) -> None:
    settings = served.kb.settings.replace(admin_token=ADMIN)
    with UvicornThread(create_app(served.kb, settings)) as server:
        own = {"Origin": server.url}
        statuses = [
            httpx.post(
                server.url + "/insights/sign-in", data={"token": f"guess-{n}"}, headers=own
            ).status_code
            for n in range(admin.SIGN_IN_BURST + 1)
        ]
        assert statuses == [401] * admin.SIGN_IN_BURST + [429]
        # Even the right token waits its turn.
        limited = httpx.post(server.url + "/insights/sign-in", data={"token": ADMIN}, headers=own)
        assert limited.status_code == 429 and int(limited.headers["retry-after"]) >= 1
        assert "Too many sign-in attempts" in limited.text


def test_guesses_from_one_ipv6_network_are_limited_together(served: Served) -> None:
    # Behind a proxy, a client on IPv6 can send each guess from another address of its /64.
    settings = served.kb.settings.replace(admin_token=ADMIN, forwarded_allow_ips=("127.0.0.1",))
    with UvicornThread(create_app(served.kb, settings), **uvicorn_options(settings)) as server:
        statuses = [
            httpx.post(
                server.url + "/insights/sign-in",
                data={"token": f"guess-{n}"},
                headers={"Origin": server.url, "X-Forwarded-For": f"2001:db8:5:6::{n + 1:x}"},
            ).status_code
            for n in range(admin.SIGN_IN_BURST + 1)
        ]
    assert statuses == [401] * admin.SIGN_IN_BURST + [429]


def test_wrong_tokens_in_the_header_are_limited_and_logged_like_sign_ins(
    served: Served, caplog: pytest.LogCaptureFixture
) -> None:
    settings = served.kb.settings.replace(admin_token=ADMIN)
    with caplog.at_level("WARNING", logger="kb_qa"):
        with UvicornThread(create_app(served.kb, settings)) as server:
            statuses = [
                httpx.get(
                    server.url + "/insights", headers={"Authorization": f"Bearer guess-{n}"}
                ).status_code
                for n in range(admin.SIGN_IN_BURST + 1)
            ]
            limited = httpx.get(
                server.url + "/insights", headers={"Authorization": f"Bearer {ADMIN}x"}
            )
            # The right one waits too: answered at once, the one 200 among the 429s told a
            # script which of its guesses was right (1,500 guesses a second, rate_limit 0).
            right = httpx.get(
                server.url + "/insights", headers={"Authorization": f"Bearer {ADMIN}"}
            )
    assert statuses == [401] * admin.SIGN_IN_BURST + [429]
    assert limited.status_code == 429 and int(limited.headers["retry-after"]) >= 1
    assert right.status_code == 429
    warned = [r for r in caplog.records if "wrong admin token in the Authorization" in r.message]
    assert len(warned) == admin.SIGN_IN_BURST and "127.0.0.1" in warned[0].getMessage()


def test_a_proxys_basic_credentials_are_no_admin_token_guess(served: Served) -> None:
    """An auth proxy in front sends its own Authorization header: not a guess."""
    settings = served.kb.settings.replace(admin_token=ADMIN)
    with UvicornThread(create_app(served.kb, settings)) as server:
        basic = {"Authorization": "Basic dXNlcjpwYXNz"}
        statuses = {
            httpx.get(server.url + "/insights", headers=basic).status_code
            for _ in range(admin.SIGN_IN_BURST + 2)
        }
        own = {"Origin": server.url}
        signed = httpx.post(server.url + "/insights/sign-in", data={"token": ADMIN}, headers=own)
    assert statuses == {401}
    assert signed.status_code == 303


def test_no_admin_token_no_sign_in(served: Served) -> None:
    with UvicornThread(create_app(served.kb, served.kb.settings)) as server:
        own = {"Origin": server.url}
        assert httpx.get(server.url + "/insights/sign-in").status_code == 404
        for path in ("/insights/sign-in", "/insights/sign-out"):
            response = httpx.post(server.url + path, data={"token": ""}, headers=own)
            assert response.status_code == 404


def test_sessions_expire_and_end() -> None:
    now = [1000.0]
    sessions = admin.Sessions(60, clock=lambda: now[0])
    first, second = sessions.new(), sessions.new()
    assert first != second and sessions.valid(first) and sessions.valid(second)
    assert not sessions.valid("") and not sessions.valid(first + "x")
    assert sessions.end(first) and not sessions.valid(first) and not sessions.end(first)
    now[0] += 61
    assert not sessions.valid(second)  # past its lifetime
    for _ in range(admin.MAX_SESSIONS + 5):
        sessions.new()
    assert len(sessions._live) == admin.MAX_SESSIONS
    assert admin.token_matches(ADMIN, ADMIN) and not admin.token_matches(ADMIN[:-1], ADMIN)
    assert not admin.token_matches("", "")  # no token configured opens nothing


@pytest.mark.skipif(not CHROMIUM.exists(), reason="Debian's chromium is not installed")
def test_the_sign_in_form_fits_a_320_px_window(served: Served) -> None:
    """The form was 398 px wide whatever the window: at 320 px its left edge lay at -29 px,
    where no scrolling reaches; and the token box's border was 1.4:1 on white."""
    sync_api = pytest.importorskip("playwright.sync_api", reason="playwright is missing")
    with sync_api.sync_playwright() as p:
        browser = p.chromium.launch(
            executable_path=str(CHROMIUM), headless=True, args=CHROMIUM_ARGS
        )
        try:
            page = browser.new_page(viewport={"width": 320, "height": 640})
            page.goto(served.url + "/insights/sign-in")
            box = page.locator("form").bounding_box()
            assert box is not None and box["x"] >= 0 and box["x"] + box["width"] <= 320, box
            assert page.evaluate("document.documentElement.scrollWidth") <= 320
            border = page.get_by_label("Admin token").evaluate(
                "el => getComputedStyle(el).borderTopColor"
            )
            grey = [int(v) for v in border[border.index("(") + 1 : -1].split(",")]
            luminance = sum(
                w * ((c / 255) / 12.92 if c <= 10 else ((c / 255 + 0.055) / 1.055) ** 2.4)
                for w, c in zip((0.2126, 0.7152, 0.0722), grey, strict=True)
            )
            assert 1.05 / (luminance + 0.05) >= 3.0, border  # against the white page
        finally:
            browser.close()


def test_a_short_admin_token_is_warned_about_at_start(
    served: Served, caplog: pytest.LogCaptureFixture
) -> None:
    """An owner who set KBQA_ADMIN_TOKEN=hunter2 was told nothing: six guesses a minute
    from each address find a word from a list, and it opens every reader's questions."""
    with caplog.at_level("WARNING", logger="kb_qa"):
        for token in ("hunter2", ADMIN):
            settings = served.kb.settings.replace(admin_token=token)
            with UvicornThread(create_app(served.kb, settings)) as server:
                assert httpx.get(server.url + "/api/health").status_code == 200
    warned = [r.getMessage() for r in caplog.records if "admin_token" in r.getMessage()]
    assert len(warned) == 1, warned  # the 30-character one is long enough
    assert "7 characters" in warned[0] and "secrets.token_urlsafe" in warned[0]
    assert "hunter2" not in caplog.text
