"""The question log and the insights report, over a real server, real Chroma and MiniLM.

Readers' questions are scripted against a real uvicorn server (on-topic, off-topic in two
themes, a follow-up, thumbs up and down, a failing model); the report must group the
off-topic ones into topics, link the feedback, count the citations and the error, and be
served at /insights only to the admin token.
"""

from __future__ import annotations

import csv
import io
import json
import sqlite3
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import numpy as np
import pytest
from api_helpers import parse_sse
from browser import CHROMIUM, CHROMIUM_ARGS
from conftest import write_files
from llm_server import LLMServer, Reply
from uvicorn_thread import UvicornThread

from kb_qa.index.embeddings import HashEmbedder
from kb_qa.kb.knowledge_base import KnowledgeBase
from kb_qa.owners import insights, insights_html, insights_render
from kb_qa.owners.feedback import Feedback, FeedbackStore
from kb_qa.owners.forget import forget
from kb_qa.owners.questionlog import Cited, Entry, QuestionLog, new_ref
from kb_qa.serve.app import create_app

ROOT = Path(__file__).resolve().parents[1]
ARTIFACTS = ROOT / "test-artifacts"
ADMIN = "admin-" + "t" * 16
API = "api-" + "t" * 16
ORIGIN = "https://docs.example.com"
HOSTILE = '<script>window.__pwned=1</script><img src=x onerror="window.__pwned=2"> love?'

NOTES = {
    "install.md": "# Installing Widgetron\n\nInstall Widgetron with `pip install widgetron`; "
    "it needs Python 3.10 or newer.\n\n## On Windows\n\nRun the installer from the "
    "releases page, then add Widgetron to your PATH.\n",
    "retries.md": "# Retries\n\nA failing Widgetron job is attempted five times by default, "
    "waiting longer after each failure (exponential backoff).\n\n## Changing the retry "
    "count\n\nSet `retries: 3` in widgetron.yml to change how many times a job runs.\n",
    "tokens.md": "# API tokens\n\nWidgetron API tokens rotate every 30 days, with a grace "
    "period of one day for the old token.\n",
    "changelog.md": "# Changelog\n\n## 1.0.0\n\nFirst release of Widgetron.\n",
}
ON_TOPIC = ["How do I install Widgetron?", "How many times is a failing job retried?"]
FRANCE = [
    "What is the capital of France?",
    "Which city is the capital of France?",
    "what is the capital city of france",
    "Tell me the capital of France",
]
BREAD = ["How do I bake sourdough bread?", "What is a good sourdough bread recipe?"]
STRAY = "Never asked here?"  # answered while the question log was off, then rated


@dataclass
class Scripted:
    url: str  # the extractive server, with admin_token
    kb: KnowledgeBase
    vault: Path
    index: Path
    ids: dict[str, str]  # question -> question_id from its done event


def ask(url: str, question: str, history: list[dict[str, str]] | None = None) -> dict[str, Any]:
    body = {"question": question, "history": history or [], "stream": False}
    return httpx.post(url + "/api/ask", json=body, timeout=30).json()


def rate(url: str, question: str, answer_id: str, rating: str, reason: str = "") -> None:
    body = {"question": question, "rating": rating, "reason": reason}  # the answer left out
    body["answer_id"] = answer_id  # what the answer's done event carried
    response = httpx.post(url + "/api/feedback", json=body, timeout=10)
    assert response.status_code == 201, response.text


@pytest.fixture(scope="module")
def scripted(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Scripted]:
    root = tmp_path_factory.mktemp("insights")
    vault = write_files(root / "vault", NOTES)
    kb = KnowledgeBase(vault, index_dir=root / "index", embed_model="minilm", rate_limit=0)
    kb.index()
    settings = kb.settings.replace(admin_token=ADMIN, cors_origins=ORIGIN)
    ids: dict[str, str] = {}
    answers: dict[str, str] = {}  # question -> the answer_id of its (last) answer
    # Answers given while the question log was off: their ratings link by their text alone.
    with UvicornThread(create_app(kb, settings.replace(question_log=False))) as unlogged:
        unlogged_ids = {q: ask(unlogged.url, q)["answer_id"] for q in (BREAD[0], STRAY)}
    with UvicornThread(create_app(kb, settings)) as server:
        for question in ON_TOPIC + FRANCE + BREAD + [HOSTILE]:
            given = ask(server.url, question)
            ids[question], answers[question] = given["question_id"], given["answer_id"]
        history = [{"role": "user", "content": ON_TOPIC[1]}, {"role": "assistant", "content": "5"}]
        ids["follow-up"] = ask(server.url, "How do I change it?", history)["question_id"]
        # The streamed answer carries its id in the done event too.
        body = {"question": ON_TOPIC[0]}
        with httpx.stream("POST", server.url + "/api/ask", json=body, timeout=30) as response:
            events = parse_sse(list(response.iter_lines()))
        done = next(data for name, data in events if name == "done")
        assert done["question_id"] and done["question_id"] != ids[ON_TOPIC[0]]
        rate(server.url, ON_TOPIC[1], answers[ON_TOPIC[1]], "down", "Too vague")
        rate(server.url, BREAD[0], unlogged_ids[BREAD[0]], "down")  # linked by its text
        rate(server.url, ON_TOPIC[0], answers[ON_TOPIC[0]], "up", "")
        rate(server.url, STRAY, unlogged_ids[STRAY], "down", "odd")  # links to nothing
    # A model that cannot be reached: the reader gets quotes, and the error is logged with
    # the question.
    failing = settings.replace(model="openai/test", api_base="http://127.0.0.1:9/v1")
    with UvicornThread(create_app(kb, failing.replace(llm_timeout=1.0))) as broken:
        answer = httpx.post(
            broken.url + "/api/ask", json={"question": ON_TOPIC[0], "stream": False}, timeout=30
        )
        assert answer.status_code == 200 and answer.json()["fallback"] == "llm_error"
    with UvicornThread(create_app(kb, settings)) as server:
        yield Scripted(server.url, kb, vault, root / "index", ids)
    kb.close()


@pytest.fixture(scope="module")
def report(scripted: Scripted) -> dict[str, Any]:
    response = httpx.get(
        scripted.url + "/insights?format=json",
        headers={"Authorization": f"Bearer {ADMIN}"},
        timeout=60,
    )
    assert response.status_code == 200, response.text
    return dict(response.json())


def test_the_report_counts_what_happened(report: dict[str, Any]) -> None:
    t = report["totals"]
    assert t["questions"] == 2 + 4 + 2 + 1 + 1 + 1 + 1  # + follow-up, streamed, failed
    assert t["not_covered"] >= len(FRANCE) + len(BREAD)
    # The failed model's question was answered with quotes: extractive, not a model answer
    assert t["errors"] == 1 and t["llm"] == 0
    assert t["follow_ups"] == 1
    assert (t["thumbs_up"], t["thumbs_down"]) == (1, 3)
    feedback = report["feedback"]
    assert feedback["linked"] == 3  # by id twice, by text once; the stray one links nowhere
    assert {"rating": "down", "reason": "Too vague", "count": 1} in feedback["reasons"]
    errors = report["errors"]
    assert errors["by_code"][0]["code"] == "llm_error"
    assert errors["recent"][0]["question"] == ON_TOPIC[0]
    # Why it failed, not only that it did (an unreachable service here; a wrong key, a rate
    # limit or a context too long each say so)
    assert "Could not reach the language model" in errors["recent"][0]["message"], errors
    assert "answered with quotes" in errors["recent"][0]["message"]
    buckets = report["volume"]["buckets"]
    assert sum(b["questions"] for b in buckets) == t["questions"]
    outcomes = ("answered", "not_covered", "errors", "left")
    assert sum(b[k] for b in buckets for k in outcomes) == t["questions"]
    assert report["latency"]["first_token_ms"]["p50"] is not None


def test_gaps_are_grouped_into_topics_largest_first(report: dict[str, Any]) -> None:
    topics = report["gaps"]["topics"]
    france, bread = topics[0], topics[1]
    assert france["size"] == len(FRANCE) and france["not_covered"] == len(FRANCE)
    assert all("france" in q.lower() for q in france["questions"])
    assert len(france["questions"]) == 3  # the most representative ones
    assert bread["size"] == 3 and bread["thumbs_down"] == 1  # two asked, one thumbs down
    # Shown as the questions it holds, not as its not-covered answers plus thumbs down.
    assert bread["distinct"] == 2
    text = insights_render.text(report, str)
    assert f"{bread['distinct']} question(s) (2 not covered, 1 thumbs down)" in text
    assert all("sourdough" in q for q in bread["questions"])
    retries = next(t for t in topics if ON_TOPIC[1] in t["questions"])
    assert retries["thumbs_down"] == 1
    assert retries["sections"][0]["path"] == "retries.md"  # its nearest existing section
    assert any(HOSTILE in t["questions"] for t in topics)


def row(report: dict[str, Any], question: str) -> dict[str, Any]:
    """The top-questions row a question was counted in (under any of its wordings)."""
    for found in report["questions"]["top"]:
        if question == found["question"] or question in found["also_asked_as"]:
            return dict(found)
    raise AssertionError(f"{question!r} is not in the top questions")


def test_top_questions_rank_what_readers_asked(report: dict[str, Any]) -> None:
    asked = report["questions"]
    top = asked["top"]
    assert asked["distinct"] == 2 + 4 + 2 + 1 + 1  # the streamed and failed ones repeat
    # The four wordings of the capital of France are one question, asked most.
    france = top[0]
    assert france["asked"] == 4 and france["wordings"] == 4
    assert {france["question"], *france["also_asked_as"]} <= set(FRANCE)
    assert len(france["also_asked_as"]) == 3
    assert france["outcome"] == "not_covered"
    assert france["outcomes"] == {"answered": 0, "not_covered": 4, "errors": 0, "left": 0}
    # Asked three times: answered twice (once streamed), failed once; rated up by its id.
    install = top[1]
    assert install["question"] == ON_TOPIC[0] and install["asked"] == 3
    assert install["wordings"] == 1 and install["also_asked_as"] == []
    assert install["outcome"] == "answered"
    assert install["outcomes"] == {"answered": 2, "not_covered": 0, "errors": 1, "left": 0}
    assert (install["thumbs_up"], install["thumbs_down"]) == (1, 0)
    cited = install["sections"]
    # Cited by the two answers and by the quotes the reader got when the model failed
    assert cited[0]["path"] == "install.md" and cited[0]["citations"] == 3
    assert cited[0]["url"] and cited[0]["heading_path"][0] == "Installing Widgetron"
    retried = row(report, ON_TOPIC[1])
    assert (retried["thumbs_up"], retried["thumbs_down"]) == (0, 1)
    assert retried["reasons"] == [{"reason": "Too vague", "count": 1}]
    assert retried["sections"][0]["path"] == "retries.md"
    # Two questions about one loaf are not the same question: not merged.
    assert row(report, BREAD[0]) != row(report, BREAD[1])
    assert row(report, BREAD[0])["thumbs_down"] == 1  # linked by its text
    assert row(report, "How do I change it?")["asked"] == 1
    assert row(report, HOSTILE)["asked"] == 1
    assert all(q["question"] != "Never asked here?" for q in top)  # feedback only
    assert [q["asked"] for q in top] == sorted((q["asked"] for q in top), reverse=True)
    assert sum(q["asked"] for q in top) == report["totals"]["questions"]


def test_gap_topics_list_what_their_readers_were_shown(tmp_path: Path) -> None:
    vault = write_files(tmp_path / "vault", NOTES)
    kb = KnowledgeBase(vault, index_dir=tmp_path / "index", embed_model="hash")
    kb.index()
    log = QuestionLog(kb.settings.index_path)
    now = time.time()
    shown = {"tokens.md": ("API tokens",), "changelog.md": ("Changelog", "1.0.0")}
    anchors = {c.path: c.anchor for c in kb.store.chunks()}
    for n, (path, heading) in enumerate([*shown.items(), ("tokens.md", ("API tokens",))]):
        cited = (Cited(path, anchors[path], heading),)
        log.record(Entry(new_ref(), now - 10 + n, FRANCE[0], 1, "extractive", "", False, cited))
    log.close()
    FeedbackStore(kb.settings.index_path).add(
        Feedback("down", BREAD[0], "…", "", ({"path": "retries.md", "anchor": "retries"},), now)
    )
    report = insights.build(kb, kb.settings, log=QuestionLog(kb.settings.index_path))
    topics = {t["questions"][0]: t for t in report["gaps"]["topics"]}
    # Most shown first; what a fresh search would rank plays no part.
    sections = topics[FRANCE[0]]["sections"]
    assert [s["path"] for s in sections] == ["tokens.md", "changelog.md"]
    assert sections[0]["url"] and sections[0]["heading_path"] == ["API tokens"]
    # Rated down with no logged question: nothing says what its reader was shown.
    assert topics[BREAD[0]]["sections"] == []
    kb.close()


SITE = {
    "mkdocs.yml": "site_name: Widgets\nsite_url: https://docs.example.com/widgets/\n",
    "docs/index.md": "# Widgets\n\nWelcome to the widget docs.\n",
    "docs/setup.md": "# Setup\n\nRun the installer.\n",
    "docs/usage.md": "# Usage\n\nPress the button.\n",
}


def test_the_home_page_is_a_link_in_the_citation_tables(tmp_path: Path) -> None:
    vault = write_files(tmp_path / "site", SITE)
    kb = KnowledgeBase(vault, index_dir=tmp_path / "index", embed_model="hash")
    kb.index()
    log = QuestionLog(kb.settings.index_path)
    chunks = {c.path: c for c in kb.store.chunks()}
    for n, path in enumerate(["docs/index.md", "docs/setup.md", "docs/setup.md"]):
        cited = (Cited(path, chunks[path].anchor, chunks[path].heading_path),)
        log.record(Entry(new_ref(), time.time(), f"q{n}?", 1, "extractive", "", True, cited))
    log.close()
    report = insights.build(kb, kb.settings, log=QuestionLog(kb.settings.index_path))
    most = {p["path"]: p for p in report["citations"]["most_pages"]}
    assert most["docs/index.md"]["url"] == "https://docs.example.com/widgets/"
    assert most["docs/setup.md"]["url"] == "https://docs.example.com/widgets/setup/"
    # Two pages cited: both are the most cited, none is listed again as least cited.
    assert report["citations"]["least_pages"] == []
    never = report["citations"]["never_cited"]
    assert [p["url"] for p in never] == ["https://docs.example.com/widgets/usage/"]
    html = insights_html.page(report)
    most_html = html.split("<h3>Most cited pages</h3>", 1)[1].split("</table>", 1)[0]
    assert '<a href="https://docs.example.com/widgets/">Widgets</a>' in most_html
    kb.close()


def test_citations_count_pages_and_sections(report: dict[str, Any]) -> None:
    c = report["citations"]
    assert c["pages_indexed"] == 4
    cited = {p["path"] for p in c["most_pages"]}
    assert {"install.md", "retries.md"} <= cited
    never = {p["path"] for p in c["never_cited"]}
    assert never == {"install.md", "retries.md", "tokens.md", "changelog.md"} - cited
    assert c["most_sections"][0]["heading_path"]


def test_a_second_report_reuses_the_question_vectors(
    scripted: Scripted, report: dict[str, Any]
) -> None:
    log = QuestionLog(scripted.index)
    kept = log.vectors("minilm", FRANCE + BREAD)
    assert set(kept) == set(FRANCE + BREAD)  # kept by the first report
    assert all(v.shape == (384,) for v in kept.values())


def test_insights_needs_the_admin_token(scripted: Scripted) -> None:
    url = scripted.url
    assert httpx.get(url + "/insights").status_code == 401
    for wrong in (f"Bearer {ADMIN}x", f"Basic {ADMIN}", ADMIN, f"Bearer {API}"):
        response = httpx.get(url + "/insights", headers={"Authorization": wrong})
        assert response.status_code == 401, wrong
    ok = httpx.get(url + "/insights", headers={"Authorization": f"Bearer {ADMIN}"}, timeout=60)
    assert ok.status_code == 200 and ok.headers["content-type"].startswith("text/html")
    assert "script-src 'sha256-" in ok.headers["content-security-policy"]
    assert ok.headers["cache-control"] == "no-store"
    bad = httpx.get(url + "/insights?since=yesterday", headers={"Authorization": f"Bearer {ADMIN}"})
    assert bad.status_code == 422 and "7d" in bad.json()["error"]
    # Never offered to other origins, not even the one CORS allows for the API.
    preflight = httpx.options(
        url + "/insights",
        headers={"Origin": ORIGIN, "Access-Control-Request-Method": "GET"},
    )
    assert "access-control-allow-origin" not in preflight.headers
    cross = httpx.get(
        url + "/insights", headers={"Origin": ORIGIN, "Authorization": f"Bearer {ADMIN}"}
    )
    assert "access-control-allow-origin" not in cross.headers
    api = httpx.get(url + "/api/health", headers={"Origin": ORIGIN})
    assert api.headers["access-control-allow-origin"] == ORIGIN


def test_insights_is_not_there_without_an_admin_token(scripted: Scripted) -> None:
    settings = scripted.kb.settings.replace(api_token=API)  # an API token opens nothing
    with UvicornThread(create_app(scripted.kb, settings)) as server:
        for headers in ({}, {"Authorization": f"Bearer {API}"}, {"Authorization": "Bearer x"}):
            response = httpx.get(server.url + "/insights", headers=headers)
            assert response.status_code == 404
            assert response.json() == httpx.get(server.url + "/nothing-here").json()


def test_the_html_escapes_questions(scripted: Scripted) -> None:
    page = httpx.get(
        scripted.url + "/insights", headers={"Authorization": f"Bearer {ADMIN}"}, timeout=60
    ).text
    assert "<script>window.__pwned" not in page and "<img src=x" not in page
    assert "&lt;script&gt;window.__pwned=1&lt;/script&gt;" in page
    assert page.count("<script") == 3  # the data block, Chart.js, the charts


def test_the_chart_colours_differ_in_lightness_not_only_in_hue() -> None:
    """Green and amber, the two largest series, had the same lightness (2.28 and 2.24 to
    white): to a reader who does not tell red from green they were one colour."""
    import itertools
    import re

    from kb_qa.owners.insights_parts import SCRIPT

    def luminance(hex_colour: str) -> float:
        channels = [int(hex_colour[i : i + 2], 16) / 255 for i in (1, 3, 5)]
        linear = [c / 12.92 if c <= 0.04045 else ((c + 0.055) / 1.055) ** 2.4 for c in channels]
        return 0.2126 * linear[0] + 0.7152 * linear[1] + 0.0722 * linear[2]

    colours = dict(re.findall(r"(\w+): \"(#[0-9a-f]{6})\"", SCRIPT))
    series = sorted(luminance(colours[k]) for k in ("answered", "not_covered", "errors", "left"))
    ratios = [(b + 0.05) / (a + 0.05) for a, b in itertools.pairwise(series)]
    assert min(ratios) >= 1.3, ratios


def test_a_bidi_override_in_a_question_does_not_reverse_the_report() -> None:
    """A reader's "\u202e" reversed the rest of its cell in the owner's report."""
    from kb_qa.owners.insights_parts import escaped

    assert escaped("\u202eexe.txt <b>") == "exe.txt &lt;b&gt;"
    assert escaped("שלום \u200f!") == "שלום \u200f!"  # a mark only nudges: kept


@pytest.mark.skipif(not CHROMIUM.exists(), reason="Debian's chromium is not installed")
def test_the_html_report_renders_in_chromium(scripted: Scripted, run_cli: Any) -> None:
    sync_api = pytest.importorskip("playwright.sync_api", reason="playwright is missing")
    ARTIFACTS.mkdir(exist_ok=True)
    written = ARTIFACTS / "insights.html"
    where = [str(scripted.vault), "--index-dir", str(scripted.index)]
    result = run_cli("insights", *where, "--html", str(written))
    assert result.returncode == 0 and result.stdout == "", result.stderr
    with sync_api.sync_playwright() as p:
        browser = p.chromium.launch(
            executable_path=str(CHROMIUM), headless=True, args=CHROMIUM_ARGS
        )
        try:
            show_report(browser, "file", written.as_uri(), {})
            served = scripted.url + "/insights"
            show_report(browser, "served", served, {"Authorization": f"Bearer {ADMIN}"})
        finally:
            browser.close()


@pytest.mark.skipif(not CHROMIUM.exists(), reason="Debian's chromium is not installed")
def test_one_long_question_leaves_the_report_readable(
    scripted: Scripted, run_cli: Any, tmp_path: Path
) -> None:
    """A reader's 1,900-character question made the top questions table 18,878 px wide in
    a 1,136 px box: the counts beside every question were off screen. Its ESC and BEL
    showed as boxes."""
    sync_api = pytest.importorskip("playwright.sync_api", reason="playwright is missing")
    import shutil

    index = tmp_path / "index"
    shutil.copytree(scripted.index, index)
    log = QuestionLog(index)
    log.record(Entry(new_ref(), time.time(), "A" * 1900 + "\x1b[2J\x07?", 1, "extractive"))
    log.flush()
    log.close()
    written = tmp_path / "report.html"
    result = run_cli(
        "insights", str(scripted.vault), "--index-dir", str(index), "--html", str(written)
    )
    assert result.returncode == 0, result.stderr
    assert "\x1b" not in written.read_text() and "\x07" not in written.read_text()
    wide = evaluated(
        sync_api,
        written,
        "[...document.querySelectorAll('.scroll')].filter("
        "s => s.scrollWidth > s.clientWidth + 1).map(s => s.getAttribute('aria-label'))",
    )
    assert wide == []


def evaluated(sync_api: Any, written: Path, script: str) -> Any:
    """``script`` evaluated on the report page ``written``, in Chromium at 1280×900."""
    with sync_api.sync_playwright() as p:
        browser = p.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        try:
            page = browser.new_page(viewport={"width": 1280, "height": 900})
            page.goto(written.as_uri())
            return page.evaluate(script)
        finally:
            browser.close()


def show_report(browser: Any, name: str, url: str, headers: dict[str, str]) -> None:
    """Open the report, check it drew and stayed quiet, and screenshot it."""
    context = browser.new_context(
        viewport={"width": 1280, "height": 900}, extra_http_headers=headers
    )
    page = context.new_page()
    problems: list[str] = []
    page.on("console", lambda m: problems.append(f"{m.type}: {m.text}"))
    page.on("pageerror", lambda e: problems.append(f"pageerror: {e}"))
    requests: list[str] = []
    page.on("request", lambda r: requests.append(r.url))
    page.goto(url)
    # Five charts drawn by the inlined Chart.js under the page's own CSP.
    page.wait_for_function(
        "window.Chart && Object.keys(Chart.instances).length === 5", timeout=15_000
    )
    assert problems == [], (name, problems)
    assert requests == [url], name  # nothing fetched: self-contained
    assert page.evaluate("window.__pwned") is None
    assert page.get_by_text(HOSTILE).count() >= 1  # shown as text
    assert page.locator(".topic").count() >= 3
    drawn = page.evaluate(
        "[...document.querySelectorAll('canvas')].every(c => c.width > 0 && "
        "c.getContext('2d').getImageData(0, 0, c.width, c.height).data.some(v => v))"
    )
    assert drawn, name
    # Each chart is an image with a name saying what it shows, and its numbers are a table
    # (they were nowhere but the canvas), in colours that differ in lightness, not hue alone.
    named = page.evaluate(
        "[...document.querySelectorAll('canvas')].map(c => [c.getAttribute('role'), "
        "c.getAttribute('aria-label'), c.closest('.chart').nextElementSibling.tagName])"
    )
    assert all(role == "img" and label and after == "DETAILS" for role, label, after in named)
    assert "Outcomes: " in named[1][1] and "answered" in named[1][1]
    page.screenshot(path=str(ARTIFACTS / f"insights-{name}.png"), full_page=True)
    context.close()


def test_the_cli_prints_exports_and_refuses_a_bad_since(scripted: Scripted, run_cli: Any) -> None:
    where = [str(scripted.vault), "--index-dir", str(scripted.index)]
    text = run_cli("insights", *where)
    assert text.returncode == 0, text.stderr
    assert "Coverage gaps" in text.stdout and "capital of France" in text.stdout
    assert "\x1b" not in text.stdout
    data = json.loads(run_cli("insights", *where, "--json", "--since", "7d").stdout)
    assert data["totals"]["questions"] == 12 and data["since"] is not None
    none = json.loads(run_cli("insights", *where, "--json", "--since", "2099-01-01").stdout)
    assert none["totals"]["questions"] == 0
    exported = run_cli("insights", *where, "--csv")
    rows = list(csv.DictReader(io.StringIO(exported.stdout)))
    assert len(rows) == 12
    vague = next(r for r in rows if r["feedback_reason"] == "Too vague")
    assert vague["question"] == ON_TOPIC[1] and vague["feedback"] == "down"
    assert any(r["cited"].startswith("retries.md#") for r in rows)
    assert "Top questions" in text.stdout and "4 × “" in text.stdout
    table = run_cli("insights", *where, "--questions-csv")
    assert table.returncode == 0, table.stderr
    ranked = list(csv.DictReader(io.StringIO(table.stdout)))
    assert [r["rank"] for r in ranked] == [str(n) for n in range(1, len(ranked) + 1)]
    assert ranked[0]["question"] in FRANCE and ranked[0]["asked"] == "4"
    assert ranked[0]["wordings"] == "4" and ranked[0]["outcome"] == "not_covered"
    install = ranked[1]
    assert install["question"] == ON_TOPIC[0] and install["asked"] == "3"
    assert (install["answered"], install["errors"], install["thumbs_up"]) == ("2", "1", "1")
    assert install["sections"].startswith("install.md#")
    assert install["section_urls"].split()[0].startswith(str(scripted.vault))
    for bad in ("yesterday", "7", "-3d", "7 days", "2026-13-45"):
        result = run_cli("insights", *where, f"--since={bad}")
        assert result.returncode == 1 and "Traceback" not in result.stderr
        assert "like 7d" in result.stderr, result.stderr


def test_csv_cells_never_start_a_formula(tmp_path: Path, run_cli: Any) -> None:
    log = QuestionLog(tmp_path / "index")
    log.record(Entry(new_ref(), time.time(), '=HYPERLINK("http://evil","x")', 1, "extractive"))
    log.close()
    vault = write_files(tmp_path / "vault", {"a.md": "# A\n\nText.\n"})
    result = run_cli("insights", str(vault), "--index-dir", str(tmp_path / "index"), "--csv")
    row = next(csv.DictReader(io.StringIO(result.stdout)))
    assert row["question"] == '\'=HYPERLINK("http://evil","x")'


def test_a_report_with_logging_off_creates_no_question_table(tmp_path: Path, run_cli: Any) -> None:
    vault = write_files(tmp_path / "vault", {"a.md": "# A\n\nText.\n"})
    index = tmp_path / "index"
    FeedbackStore(index).add(Feedback("down", "q?", "a", at=time.time()))  # ratings only
    off = {"KBQA_QUESTION_LOG": "false"}
    result = run_cli("insights", str(vault), "--index-dir", str(index), "--csv", env=off)
    assert result.returncode == 0, result.stderr
    with sqlite3.connect(index / "feedback.sqlite3") as conn:
        tables = {r[0] for r in conn.execute("SELECT name FROM sqlite_master")}
    assert "questions" not in tables and "question_vectors" not in tables


def test_retention_deletes_old_rows(tmp_path: Path) -> None:
    now = time.time()
    log = QuestionLog(tmp_path, days=30)
    for age_days in (45, 31, 29, 1):
        log.record(Entry(new_ref(), now - age_days * 86_400, f"{age_days} days ago", 1, "llm"))
    log.flush()
    log.prune(now)  # the writer applies it too, after its first write and every hour
    assert [e.question for e in log.entries()] == ["29 days ago", "1 days ago"]
    # Two days later the 29-day-old row is past 30 days too.
    log.keep_vectors("hash", {"1 days ago": np.ones(4), "29 days ago": np.ones(4)})
    assert log.prune(now + 2 * 86_400) == 1
    assert [e.question for e in log.entries()] == ["1 days ago"]
    # Vectors kept for the coverage-gap topics go with the last question they embed.
    assert set(log.vectors("hash", ["1 days ago", "29 days ago"])) == {"1 days ago"}
    forever = QuestionLog(tmp_path, days=0)
    assert forever.prune(now + 10 * 365 * 86_400) == 0
    log.close()


def test_a_flood_of_questions_keeps_only_the_newest(tmp_path: Path, run_cli: Any) -> None:
    """The log was pruned by age alone: anyone could fill the disk with questions for 90
    days before the first of them went. ``question_log_max`` keeps the newest."""
    now = time.time()
    log = QuestionLog(tmp_path / "index", days=30, keep=3)
    for i in range(6):
        log.record(Entry(new_ref(), now - 60 + i, f"question {i}", 1, "llm"))
    log.flush()
    log.prune(now)  # the writer applies it too, after its first write and every hour
    assert [e.question for e in log.entries()] == ["question 3", "question 4", "question 5"]
    log.close()
    # A report only reads: the retention is the server's. Applied by `kb-qa insights` with
    # its own shell's settings, it deleted what a server told to keep more had kept.
    vault = write_files(tmp_path / "vault", {"a.md": "# A\n\nText.\n"})
    env = {"KBQA_QUESTION_LOG": "false", "KBQA_QUESTION_LOG_MAX": "1"}
    index = str(tmp_path / "index")
    result = run_cli("insights", str(vault), "--index-dir", index, "--csv", env=env)
    assert result.returncode == 0, result.stderr
    kept = QuestionLog(tmp_path / "index", days=30)
    assert [e.question for e in kept.entries()] == ["question 3", "question 4", "question 5"]
    kept.close()


def test_the_writer_embeds_not_covered_questions_as_they_come(tmp_path: Path) -> None:
    model = HashEmbedder()
    embedded: list[list[str]] = []

    def embed(texts: list[str]) -> tuple[str, np.ndarray]:
        embedded.append(texts)
        return model.name, model.embed_passages(texts)

    log = QuestionLog(tmp_path, embed=embed)
    now = time.time()
    log.record(Entry(new_ref(), now, "covered?", 1, "extractive", covered=True))
    log.record(Entry(new_ref(), now, "not covered?", 1, "extractive", covered=False))
    log.record(Entry(new_ref(), now, "failed?", 1, "llm", error="llm_error"))
    log.flush()
    log.close()
    assert embedded == [["not covered?"]]
    kept = log.vectors("hash", ["covered?", "not covered?", "failed?"])
    assert set(kept) == {"not covered?"}
    assert np.allclose(kept["not covered?"], model.embed_passages(["not covered?"])[0])


@pytest.mark.parametrize("logging", [True, False], ids=["logging", "logging-switched-off"])
def test_a_starting_server_applies_the_retention(tmp_path: Path, logging: bool) -> None:
    """Switched off, logging records nothing, but what was logged before still ages out;
    a stored question embedding goes with the last question that names it."""
    vault = write_files(tmp_path / "vault", {"a.md": "# A\n\nAlpha text.\n"})
    kb = KnowledgeBase(vault, index_dir=tmp_path / "index", embed_model="hash")
    kb.index()
    log = QuestionLog(kb.settings.index_path)
    log.record(Entry(new_ref(), time.time() - 91 * 86_400, "stale", 1, "extractive"))
    log.record(Entry(new_ref(), time.time() - 89 * 86_400, "kept", 1, "extractive"))
    log.close()
    with sqlite3.connect(kb.settings.index_path / "feedback.sqlite3") as conn:
        conn.execute(
            "INSERT INTO question_vectors (model, question, vector) VALUES ('hash', 'stale', x'00')"
        )
    with UvicornThread(create_app(kb, kb.settings.replace(rate_limit=0, question_log=logging))):
        pass
    assert [e.question for e in QuestionLog(kb.settings.index_path).entries()] == ["kept"]
    with sqlite3.connect(kb.settings.index_path / "feedback.sqlite3") as conn:
        assert conn.execute("SELECT question FROM question_vectors").fetchall() == []
    kb.close()


def test_question_log_off_records_nothing(tmp_path: Path) -> None:
    vault = write_files(tmp_path / "vault", NOTES)
    kb = KnowledgeBase(vault, index_dir=tmp_path / "index", embed_model="hash")
    kb.index()
    settings = kb.settings.replace(question_log=False, rate_limit=0, admin_token=ADMIN)
    with UvicornThread(create_app(kb, settings)) as server:
        answer = ask(server.url, ON_TOPIC[0])
        assert answer["question_id"] == ""
        ask(server.url, FRANCE[0])
        rate(server.url, ON_TOPIC[0], answer["answer_id"], "down", "meh")
        report = httpx.get(
            server.url + "/insights?format=json", headers={"Authorization": f"Bearer {ADMIN}"}
        ).json()
    db = kb.settings.index_path / "feedback.sqlite3"
    with sqlite3.connect(db) as conn:
        tables = {r[0] for r in conn.execute("SELECT name FROM sqlite_master")}
    assert "questions" not in tables  # not even an empty table
    assert [f.question_id for f in FeedbackStore(kb.settings.index_path).all()] == [""]
    assert report["question_log"] is False and report["totals"]["questions"] == 0
    assert report["totals"]["thumbs_down"] == 1  # feedback is still shown
    kb.close()


def test_a_reader_leaving_mid_answer_is_logged(tmp_path: Path, llm: LLMServer) -> None:
    vault = write_files(tmp_path / "vault", NOTES)
    kb = KnowledgeBase(vault, index_dir=tmp_path / "index", embed_model="hash")
    kb.index()
    settings = kb.settings.replace(model="openai/test", api_base=llm.url, rate_limit=0)
    words = " ".join(f"w{i:03}" for i in range(200))
    with UvicornThread(create_app(kb, settings)) as server:
        llm.script(Reply(text="Five [1].", chunk_size=3))
        assert ask(server.url, ON_TOPIC[1])["question_id"]
        llm.script(Reply(text=words, chunk_size=5, chunk_delay=0.03))  # ~6 s in full
        body = {"question": "Leaving early?"}
        with httpx.stream("POST", server.url + "/api/ask", json=body, timeout=20) as response:
            lines = response.iter_lines()
            for line in lines:
                if line.startswith("event: delta"):
                    break
            lines.close()
        deadline = time.monotonic() + 5
        while len(list(QuestionLog(kb.settings.index_path).entries())) < 2:
            assert time.monotonic() < deadline, "the question was not logged"
            time.sleep(0.05)
    done, left = QuestionLog(kb.settings.index_path).entries()
    assert (done.mode, done.model, done.error, done.covered) == ("llm", "openai/test", "", True)
    assert done.first_token_ms and done.retrieval_ms and done.citations
    assert (left.question, left.error, left.covered) == ("Leaving early?", "disconnected", None)
    assert left.total_ms and left.total_ms < 6000
    kb.close()


def test_feedback_from_before_the_log_still_reads(tmp_path: Path) -> None:
    tmp_path.mkdir(exist_ok=True)
    with sqlite3.connect(tmp_path / "feedback.sqlite3") as conn:
        conn.execute(
            "CREATE TABLE feedback (id INTEGER PRIMARY KEY, at REAL NOT NULL, rating TEXT NOT "
            "NULL, question TEXT NOT NULL, answer TEXT NOT NULL, reason TEXT NOT NULL, "
            "citations TEXT NOT NULL)"
        )
        conn.execute("INSERT INTO feedback VALUES (1, 1.0, 'up', 'q', 'a', '', '[]')")
    items = FeedbackStore(tmp_path).all()
    assert [(f.question, f.question_id) for f in items] == [("q", "")]


ASKED_ABROAD = ("¿Cómo instalo Widgetron?", "如何安装 Widgetron？", "=1+1")


def test_the_csv_download_opens_in_a_spreadsheet_as_utf8(tmp_path: Path) -> None:
    """Excel reads a CSV file without a byte order mark in the system's code page: the
    download "all as CSV" showed "¿CÃ³mo instalo Widgetron?" for "¿Cómo instalo Widgetron?"."""
    vault = write_files(tmp_path / "vault", NOTES)
    kb = KnowledgeBase(vault, index_dir=tmp_path / "index", embed_model="hash", rate_limit=0)
    kb.index()
    with UvicornThread(create_app(kb, kb.settings.replace(admin_token=ADMIN))) as server:
        for question in ASKED_ABROAD:
            ask(server.url, question)
        response = httpx.get(
            server.url + "/insights?format=csv",
            headers={"Authorization": f"Bearer {ADMIN}"},
            timeout=60,
        )
    kb.close()
    assert response.status_code == 200
    assert response.headers["content-type"] == "text/csv; charset=utf-8"
    assert response.content.startswith(b"\xef\xbb\xbfrank,question,")  # UTF-8's BOM
    rows = list(csv.DictReader(io.StringIO(response.content.decode("utf-8-sig"))))
    assert {r["question"] for r in rows} == {*ASKED_ABROAD[:2], "'=1+1"}


@pytest.mark.skipif(not CHROMIUM.exists(), reason="Debian's chromium is not installed")
@pytest.mark.parametrize("logging", [True, False])
def test_an_empty_report_page_says_why_it_is_empty(tmp_path: Path, logging: bool) -> None:
    """An owner opening /insights before any reader asked, or with question_log off, saw
    zeros and blank charts, and nothing saying whether nobody asked or nothing was kept."""
    sync_api = pytest.importorskip("playwright.sync_api", reason="playwright is missing")
    vault = write_files(tmp_path / "vault", NOTES)
    kb = KnowledgeBase(vault, index_dir=tmp_path / "index", embed_model="hash", rate_limit=0)
    kb.index()
    settings = kb.settings.replace(admin_token=ADMIN, question_log=logging)
    with (
        UvicornThread(create_app(kb, settings)) as server,
        sync_api.sync_playwright() as p,
    ):
        browser = p.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        try:
            context = browser.new_context(extra_http_headers={"Authorization": f"Bearer {ADMIN}"})
            page = context.new_page()
            page.goto(server.url + "/insights?since=7d")
            notice = page.get_by_role("status")
            assert notice.count() == 1
            if logging:
                assert "No questions were logged in this window" in notice.inner_text()
                assert "since=" in notice.inner_text()  # a longer window is one way on
            else:
                assert "The question log is off" in notice.inner_text()
                assert "KBQA_QUESTION_LOG" in notice.inner_text()
            assert notice.is_visible()
            ask(server.url, ON_TOPIC[0])
            page.goto(server.url + "/insights?since=7d")
            assert page.get_by_role("status").count() == (0 if logging else 1)
        finally:
            browser.close()
    kb.close()


@pytest.mark.skipif(not CHROMIUM.exists(), reason="Debian's chromium is not installed")
def test_the_top_questions_table_leaves_room_for_the_sections(tmp_path: Path) -> None:
    """One long question took the table's width and left the sections cited a 156 px
    column, one word a line: 36 questions made a page 23,000 px tall."""
    sync_api = pytest.importorskip("playwright.sync_api", reason="playwright is missing")
    vault = write_files(tmp_path / "vault", NOTES)
    kb = KnowledgeBase(vault, index_dir=tmp_path / "index", embed_model="hash")
    kb.index()
    log = QuestionLog(kb.settings.index_path)
    cited = tuple(Cited(c.path, c.anchor, c.heading_path) for c in kb.store.chunks())
    for question in ("How do I retry " + "very " * 300 + "often?", *ON_TOPIC):
        log.record(Entry(new_ref(), time.time(), question, 1, "extractive", "", True, cited))
    log.close()
    report = insights.build(kb, kb.settings, log=QuestionLog(kb.settings.index_path))
    kb.close()
    written = tmp_path / "report.html"
    written.write_text(insights_html.page(report), encoding="utf-8")
    widths = evaluated(
        sync_api,
        written,
        "[...document.querySelectorAll('#top-questions thead th')]"
        ".map(t => t.getBoundingClientRect().width)",
    )
    assert widths[5] >= 300, widths  # "sections cited"
    assert widths[1] <= 0.45 * sum(widths), widths  # "question"


def _keys(value: Any, at: str = "") -> set[str]:
    """Every key of a JSON value, as dotted paths (a list's items under ``[]``)."""
    if isinstance(value, dict):
        found: set[str] = set()
        for key, item in value.items():
            found |= {f"{at}{key}"} | _keys(item, f"{at}{key}.")
        return found
    if isinstance(value, list):
        return set().union(*(_keys(item, at.rstrip(".") + "[].") for item in value))
    return set()


def test_the_json_report_keeps_its_shape_and_is_documented(
    report: dict[str, Any], tmp_path: Path
) -> None:
    """A script reading report["gaps"]["more_topics"] failed on a window with no gaps (the
    key was missing), and no page said what the JSON holds."""
    vault = write_files(tmp_path / "vault", NOTES)
    kb = KnowledgeBase(vault, index_dir=tmp_path / "index", embed_model="hash")
    kb.index()
    empty = insights.build(kb, kb.settings, log=QuestionLog(kb.settings.index_path))
    kb.close()
    assert report["report_version"] == empty["report_version"] == 1
    for part in ("totals", "volume", "feedback", "questions", "gaps", "citations"):
        assert set(empty[part]) <= set(report[part]), part
    assert set(empty["gaps"]) == set(report["gaps"])
    assert empty["gaps"]["more_topics"] == 0
    documented = (ROOT / "docs" / "pages" / "http-api.md").read_text(encoding="utf-8")
    section = documented.split("### The report as JSON", 1)[1].split("\n## ", 1)[0]
    missing = sorted(
        k for k in _keys(report) | _keys(empty) if f"`{k.rsplit('.', 1)[-1]}`" not in section
    )
    assert missing == [], missing


def test_a_question_forgotten_before_its_embedding_is_not_written_back(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`kb-qa insights --forget` deleted a not-covered question while it waited for the
    server's next embedding pass (once a minute): the pass then wrote its text back into
    the log's embeddings, where the next --forget found it again."""
    embedder = HashEmbedder()
    log = QuestionLog(tmp_path, embed=lambda texts: (embedder.name, embedder.embed_passages(texts)))
    mine = "Who is Zanele Okonkwo-Brightwater in payroll?"
    for question in ("What is the capital of Peru?", mine):  # the first pass embeds the first
        log.record(Entry(new_ref(), time.time(), question, 1, "extractive", covered=False))
        log.flush()
    assert forget(tmp_path, "Okonkwo-Brightwater").questions == 1
    monkeypatch.setattr("kb_qa.owners.questionlog.EMBED_EVERY", 0.0)  # the next pass, now
    log.record(Entry(new_ref(), time.time(), "How do I install it?", 1, "extractive"))
    log.flush()
    log.close()
    assert forget(tmp_path, "Okonkwo-Brightwater", dry_run=True).embeddings == 0
    assert set(log.vectors(embedder.name, ["What is the capital of Peru?", mine])) == {
        "What is the capital of Peru?"
    }


def test_a_reader_can_be_forgotten(tmp_path: Path, run_cli: Any) -> None:
    """A reader who typed their e-mail address into a question asked to be forgotten: the
    owner had no way to delete it short of editing SQLite by hand (or deleting everything)."""
    vault = write_files(tmp_path / "vault", NOTES)
    index = tmp_path / "index"
    kb = KnowledgeBase(vault, index_dir=index, embed_model="hash", rate_limit=0)
    kb.index()
    mine = "I am Jane.Doe@example.com, how do I install Widgetron?"
    with UvicornThread(create_app(kb, kb.settings.replace(question_log=False))) as unlogged:
        other = ask(unlogged.url, ON_TOPIC[0])["answer_id"]  # rated, not logged
    with UvicornThread(create_app(kb, kb.settings.replace(admin_token=ADMIN))) as server:
        rate(server.url, mine, ask(server.url, mine)["answer_id"], "down", "")
        rate(server.url, ON_TOPIC[0], other, "down", "mail jane.doe@example.com back")
        ask(server.url, ON_TOPIC[1])
        where = [str(vault), "--index-dir", str(index)]
        assert run_cli("insights", *where, "--forget", "ja").returncode == 1  # too short
        # First what it would delete (a short text can match more than meant), deleting none.
        looked = run_cli("insights", *where, "--forget", "jane.doe@", "--dry-run")
        assert looked.returncode == 0, looked.stderr
        assert "Would delete 1 logged question(s), 2 rating(s)" in looked.stdout
        assert f"  {mine}" in looked.stdout and "nothing was deleted" in looked.stdout
        # Forgotten while the server runs (and keeps logging).
        result = run_cli("insights", *where, "--forget", "JANE.DOE@example.com")
        assert result.returncode == 0, result.stderr
        assert "1 logged question(s), 2 rating(s) and " in result.stdout
        ask(server.url, ON_TOPIC[1])
        report = httpx.get(
            server.url + "/insights?format=json",
            headers={"Authorization": f"Bearer {ADMIN}"},
            timeout=60,
        ).json()
    kb.close()
    assert report["totals"]["questions"] == 2 and report["totals"]["thumbs_down"] == 0
    assert "jane" not in json.dumps(report).lower()
    files = b"".join(p.read_bytes() for p in index.glob("feedback.sqlite3*"))
    assert b"jane.doe" not in files.lower()  # overwritten, not only unlinked


def test_csv_cells_carry_no_terminal_or_bidi_controls(tmp_path: Path, run_cli: Any) -> None:
    """`kb-qa insights --csv` printed a reader's "\\x1b[2J" raw: reading it in a terminal
    cleared the screen (escape codes can also retitle it or write the clipboard), and a
    "\\u202e" reversed the cell in a spreadsheet, which the HTML page already prevents."""
    log = QuestionLog(tmp_path / "index")
    asked = ("\x1b[2J\x1b]52;c;ZXZpbA==\x07How do I install?", "\u202etxt.exe", "a\tb\nc")
    for question in asked:
        log.record(Entry(new_ref(), time.time(), question, 1, "extractive", "", False))
    log.close()
    vault = write_files(tmp_path / "vault", {"a.md": "# A\n\nText.\n"})
    where = [str(vault), "--index-dir", str(tmp_path / "index")]
    for export in ("--csv", "--questions-csv"):
        result = run_cli("insights", *where, export)
        assert result.returncode == 0, result.stderr
        questions = {r["question"] for r in csv.DictReader(io.StringIO(result.stdout))}
        assert questions == {"[2J]52;c;ZXZpbA==How do I install?", "txt.exe", "a\tb\nc"}


def test_the_text_report_shows_no_question_reversed(tmp_path: Path, run_cli: Any) -> None:
    """Privacy and security says bidi controls are dropped from every string of the report:
    the terminal report printed a reader's "\\u202e" and showed "txt.exe" as "exe.txt"."""
    log = QuestionLog(tmp_path / "index")
    log.record(Entry(new_ref(), time.time(), "\u202etxt.exe", 1, "extractive", "", False))
    log.close()
    vault = write_files(tmp_path / "vault", {"a.md": "# A\n\nText.\n"})
    result = run_cli("insights", str(vault), "--index-dir", str(tmp_path / "index"))
    assert result.returncode == 0, result.stderr
    assert "“txt.exe”" in result.stdout and "\u202e" not in result.stdout
    # ... and the report as JSON (the CLI's --json, /insights?format=json) kept it.
    result = run_cli("insights", str(vault), "--index-dir", str(tmp_path / "index"), "--json")
    assert result.returncode == 0, result.stderr
    assert "txt.exe" in result.stdout and "\\u202e" not in json.dumps(json.loads(result.stdout))


def test_the_text_report_says_the_question_log_is_off(scripted: Scripted, run_cli: Any) -> None:
    """With ratings but the log off, `kb-qa insights` printed "Questions: 0 … answered 0"
    with no word of why: the page says so, and so does the text now."""
    where = [str(scripted.vault), "--index-dir", str(scripted.index)]
    off = run_cli("insights", *where, env={"KBQA_QUESTION_LOG": "false"})
    assert off.returncode == 0, off.stderr
    assert "The question log is off (question_log, KBQA_QUESTION_LOG=false)" in off.stdout
    on = run_cli("insights", *where)
    assert "The question log is off" not in on.stdout


def test_a_group_is_not_labelled_with_a_readers_address() -> None:
    """Six install questions, each wording asked once, were headed "please contact me at
    jane@example.com about how to install lumen": the first of the tied wordings won."""
    from collections import Counter

    from kb_qa.owners.asked import Asked, question_row

    def once(text: str, outcome: str = "answered") -> Asked:
        return Asked(wordings=Counter([text]), asked=1, last=1.0, outcomes=Counter([outcome]))

    group = [
        once("please contact me at jane@example.com about how to install lumen"),
        once("see https://example.com/x, how do I install it"),
        once("How do I install Lumen?"),
        once("How can Lumen be installed on a fresh server?"),
    ]
    assert question_row(None, {}, group)["question"] == "How do I install Lumen?"
    group.append(once("call +44 20 7946 0958 install lumen"))
    group[0].asked = 2  # asked more often: it still leads
    assert question_row(None, {}, group)["question"].startswith("please contact me")
