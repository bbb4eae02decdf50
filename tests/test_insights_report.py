"""The owner's report as its reader sees it: the HTML page at phone and desktop widths, the
terminal text (lines a reader cannot forge, lists that say what they leave out), the files it
writes, the site's name, and ``--forget`` finding what readers wrote however it is encoded.

A small MkDocs site (hash embeddings), with its question log and ratings written directly.
"""

from __future__ import annotations

import json
import time
import unicodedata
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from browser import CHROMIUM, CHROMIUM_ARGS
from conftest import write_files

from kb_qa.kb.knowledge_base import KnowledgeBase
from kb_qa.owners.feedback import Feedback, FeedbackStore
from kb_qa.owners.forget import forget
from kb_qa.owners.questionlog import Cited, Entry, QuestionLog, new_ref

SITE = {
    "mkdocs.yml": "site_name: Lumen Documentation\n",
    "docs/index.md": "# Lumen\n\nLumen lights rooms.\n\n## Install\n\nRun `pip install lumen`.\n",
    "docs/retries.md": "# Retries\n\nA failing job is retried five times, waiting longer.\n",
}
# Asked, answered from the docs, each a different number of times: 14 distinct questions.
ASKED = [
    "How do I install Lumen on a Raspberry Pi running the latest Debian release?",
    "How many times is a failing job retried before Lumen gives up on it?",
    "Can Lumen dim every lamp in a building at sunset automatically?",
    "Which firmware versions of the wall switches are supported?",
    "Where are the logs kept on Windows servers?",
    "Does the mobile app work offline?",
    "What port does the bridge listen on?",
    "How is a forgotten admin password reset?",
    "Is there an export to spreadsheets?",
    "Why does my dashboard show yesterday's numbers?",
    "Can two bridges share one licence key?",
    "Who signs the release packages?",
    "What happens to schedules during daylight saving changes?",
    "Are colour temperatures configurable per room?",
]
# Not covered by the docs: 12 gap topics.
GAPS = [
    "sourdough bread recipe",
    "capital of france",
    "football results tonight",
    "weather forecast tomorrow",
    "cheap flights berlin",
    "guitar chords wonderwall",
    "tax return deadline",
    "marathon training plan",
    "vegan lasagne",
    "knitting patterns scarf",
    "chess openings sicilian",
    "volcano eruption news",
]
# Readers' reasons: twelve plain ones and one that tries to write report lines of its own.
FORGED = "ok\n  99 × [up] Best docs ever\n\nTop questions (0 distinct):"
REASONS = [f"reason {word} given" for word in GAPS]


@dataclass
class Site:
    vault: Path
    index: Path


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Site]:
    root = tmp_path_factory.mktemp("report")
    vault = write_files(root / "site", SITE)
    kb = KnowledgeBase(vault, index_dir=root / "index", embed_model="hash")
    kb.index()
    cited = tuple(Cited(c.path, c.anchor, c.heading_path) for c in kb.store.chunks())
    kb.close()
    log = QuestionLog(root / "index")
    now = time.time()
    for n, question in enumerate(ASKED):
        for _ in range(len(ASKED) - n):
            log.record(Entry(new_ref(), now, question, 1, "extractive", "", True, cited, 5.0, 9.0))
    for question in GAPS:
        log.record(Entry(new_ref(), now, question, 1, "extractive", "", False, cited, 5.0, 9.0))
    log.record(Entry(new_ref(), now, "evil?\n  99 × “fake”\n\nCoverage gaps (0):", 1, "extractive"))
    log.close()
    store = FeedbackStore(root / "index")
    for n, reason in enumerate(REASONS):
        store.add(Feedback("down" if n % 2 else "up", ASKED[n], "an answer", reason, (), now))
    store.add(Feedback("down", ASKED[0], "an answer", FORGED, (), now))
    yield Site(vault, root / "index")


def where(site: Site) -> list[str]:
    return [str(site.vault), "--index-dir", str(site.index)]


# Every word of a table cell (up to 20 characters: a longer one may have to break) whose
# letters sit on more than one line; the question column's width; the page's own width.
_LAYOUT = """() => {
  const broken = [];
  for (const cell of document.querySelectorAll('main td, main th')) {
    if (!cell.getClientRects().length) continue;  // in a closed <details>
    const walker = document.createTreeWalker(cell, NodeFilter.SHOW_TEXT);
    for (let node; (node = walker.nextNode()); ) {
      for (const m of node.data.matchAll(/\\S+/g)) {
        if (m[0].length > 20) continue;
        const range = document.createRange();
        range.setStart(node, m.index);
        range.setEnd(node, m.index + m[0].length);
        const lines = new Set([...range.getClientRects()].map(r => Math.round(r.top)));
        if (lines.size > 1) broken.push(m[0]);
      }
    }
  }
  const th = document.querySelector('#top-questions thead th:nth-child(2)');
  return {broken: [...new Set(broken)], question: th.getBoundingClientRect().width,
          page: document.documentElement.scrollWidth};
}"""


@pytest.mark.skipif(not CHROMIUM.exists(), reason="Debian's chromium is not installed")
def test_the_page_reads_at_phone_and_desktop_width(
    site: Site, run_cli: Any, tmp_path: Path
) -> None:
    """At 375 px the top questions' columns got ~30 px each and a question wrapped one
    letter a line (its row 1,882 px tall); at 1280 px "asked" broke as "as/ke/d": every cell
    could break anywhere, so the table never needed its scrolling box."""
    sync_api = pytest.importorskip("playwright.sync_api", reason="playwright is missing")
    written = tmp_path / "report.html"
    result = run_cli("insights", *where(site), "--html", str(written))
    assert result.returncode == 0, result.stderr
    with sync_api.sync_playwright() as p:
        browser = p.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        try:
            for width in (375, 1280):
                page = browser.new_page(viewport={"width": width, "height": 800})
                page.goto(written.as_uri())
                seen = page.evaluate(_LAYOUT)
                assert seen["broken"] == [], (width, seen)
                assert seen["question"] >= 160, (width, seen)
                assert seen["page"] <= width, (width, seen)  # the table's box scrolls, not the page
                page.close()
        finally:
            browser.close()


def test_a_reader_cannot_write_lines_into_the_text_report(site: Site, run_cli: Any) -> None:
    """A reason "ok\\n  99 × [up] Best docs ever\\n\\nTop questions (0 distinct):" printed as
    report lines of its own (and as ratings of its own in `kb-qa feedback`): newlines in what
    readers wrote were kept."""
    result = run_cli("insights", *where(site))
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert [line for line in lines if line.lstrip().startswith("99 ×")] == []
    assert sum(line.startswith("Top questions (") for line in lines) == 1
    assert sum(line.startswith("Coverage gaps (") for line in lines) == 1
    forged = [line for line in lines if "Best docs ever" in line]
    assert len(forged) == 1 and "ok ⏎" in forged[0] and "[down] ok" in forged[0], forged
    listed = run_cli("feedback", *where(site))  # the ratings themselves, newest first
    assert listed.returncode == 0, listed.stderr
    assert [line for line in listed.stdout.splitlines() if "Best docs ever" in line] == [
        "    reason: ok ⏎   99 × [up] Best docs ever ⏎  ⏎ Top questions (0 distinct):"
    ]


def test_a_cut_list_says_what_it_leaves_out(site: Site, run_cli: Any) -> None:
    """The text showed 5 reasons of 13, 10 questions of 27 and 10 gap topics of 19 without a
    word, under "19 most asked grouped into topics"; the thumbs-down topics were the ones
    left out."""
    result = run_cli("insights", *where(site))
    assert result.returncode == 0, result.stderr
    report = json.loads(run_cli("insights", *where(site), "--json").stdout)
    text = result.stdout
    reasons = len(report["feedback"]["reasons"])
    groups = report["questions"]["groups"]
    topics = report["gaps"]["topics"]
    assert (reasons, groups, len(topics)) == (13, 27, 19)  # each more than the text shows
    assert f"  … and {reasons - 5} more reasons" in text
    assert f"  … and {groups - 10} more questions" in text
    left = topics[10:]
    down = sum(t["thumbs_down"] for t in left)
    covered = sum(t["not_covered"] for t in left)
    assert f"  … and 9 more topics ({covered} not covered, {down} thumbs down; " in text
    assert down > 0
    head = next(line for line in text.splitlines() if line.startswith("Coverage gaps ("))
    assert head == (
        "Coverage gaps (19 not-covered or thumbs-down questions in 19 topics, the 10 largest "
        "shown):"
    )
    for line in text.splitlines():  # each says where the rest is
        if line.startswith("  … and "):
            assert "--html" in line or "--csv" in line or "--questions-csv" in line, line


def test_the_html_report_is_written_for_its_owner_alone(
    site: Site, run_cli: Any, tmp_path: Path
) -> None:
    """`--html FILE` holds every question, reason and thumbs-down answer, and was written
    0644 (readable by every user of the machine) beside a 0600 feedback.sqlite3."""
    fresh, old = tmp_path / "fresh.html", tmp_path / "old.html"
    old.write_text("an older report")
    old.chmod(0o644)
    for written in (fresh, old):
        result = run_cli("insights", *where(site), "--html", str(written))
        assert result.returncode == 0, result.stderr
        assert written.stat().st_mode & 0o777 == 0o600, written
        assert "Lumen" in written.read_text(encoding="utf-8")


def test_the_page_is_headed_with_the_sites_name(site: Site, run_cli: Any, tmp_path: Path) -> None:
    """The page read "What readers asked: site", the vault folder's name, on a site whose
    mkdocs.yml names it "Lumen Documentation"."""
    written = tmp_path / "report.html"
    assert run_cli("insights", *where(site), "--html", str(written)).returncode == 0
    page = written.read_text(encoding="utf-8")
    assert "<h1>What readers asked: Lumen Documentation</h1>" in page
    assert "<title>kb-qa insights: Lumen Documentation</title>" in page
    text = run_cli("insights", *where(site)).stdout
    assert text.startswith("kb-qa insights: Lumen Documentation (")


def test_forget_finds_either_unicode_form(tmp_path: Path, run_cli: Any) -> None:
    """`--forget` with an NFD "ergänzen" (as some keyboards and macOS file names give it)
    found 0 of an NFC rating; a dry run matching only ratings said "Questions it holds:
    (none)", not what it would delete."""
    vault = write_files(tmp_path / "vault", {"a.md": "# A\n\nText.\n"})
    index = tmp_path / "index"
    nfc = unicodedata.normalize("NFC", "Bitte Jörg Müller ergänzen")
    store = FeedbackStore(index)
    store.add(Feedback("down", "How do I add a user?", "an answer", nfc, (), time.time()))
    store.add(Feedback("up", "Where is the log?", "an answer", "fine", (), time.time()))
    nfd = unicodedata.normalize("NFD", "ERGÄNZEN")
    assert nfd != unicodedata.normalize("NFC", nfd)
    looked = run_cli(
        "insights", str(vault), "--index-dir", str(index), "--forget", nfd, "--dry-run"
    )
    assert looked.returncode == 0, looked.stderr
    assert "Would delete 0 logged question(s), 1 rating(s)" in looked.stdout
    assert "(none)" not in looked.stdout
    assert "[down] How do I add a user?" in looked.stdout and nfc in looked.stdout
    assert "Where is the log?" not in looked.stdout
    gone = forget(index, unicodedata.normalize("NFD", "jörg müller"))
    assert (gone.questions, gone.ratings) == (0, 1)
    assert [r.question for r in FeedbackStore(index).all()] == ["Where is the log?"]
