"""Highlight exactness on real documentation: does the page mark exactly the quoted passage?

    python bench/highlights.py [--sites sample_site mkdocs ...] [--limit 30] [--show]

For ``sample_site`` and each corpus in ``KBQA_CORPORA`` (``tests/parity.py``: mkdocs,
mkdocs-material, pydantic, uv), builds the site offline with the kb-qa plugin (a real
``mkdocs build`` of a copy, ``parity.build_site``'s config), indexes the same copy with a
real kb-qa API (uvicorn, no model: extractive answers, the default embedder) and asks its
questions (``bench/questions/<corpus>.jsonl``; sample_site: the dev split of
``answers.jsonl``), each in a fresh headless Chromium context, as a reader would: open the
home page, open the chat, ask, click the answer's first citation. The highlighted text's
words are then compared with the words a reader sees of the quoted passage
(``tests/passage_words.py``, as ``tests/test_widget_passages.py`` does; a reference link
``[text][label]`` may show its label too: in a build without mkdocstrings' autorefs it does).

Prints per site: n, and the shares of answers whose first citation is highlighted exactly,
where the widget fell back to the section's heading (it could not find the passage), where
something else was marked, and where nothing was marked or the page or anchor was wrong;
also the share of marks not in view (under the sticky header or off the window), and the
time. ``--show`` prints each miss: question, page, quoted passage, what was marked, and the
words that differ.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import sys
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from difflib import SequenceMatcher
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
sys.path.insert(0, str(Path(__file__).resolve().parent))

import parity
from api_helpers import parse_sse
from corpora import QUESTIONS, WORK
from passage_words import reader_words, words
from passages import labelled, split_of
from widget_stack import (
    MARKS,
    ask,
    chromium,
    loopback_context,
    open_page,
    settle,
    site_with_api,
)

KINDS = ("exact", "section", "other", "none")
MARK_WAIT_MS = 8000

# Where the reader landed and what the widget marked there.
LANDED = f"""(anchor) => {{
  const marks = {MARKS};
  const heading = anchor ? document.getElementById(anchor) : null;
  const header = document.querySelector(".md-header, header");
  const below = header && getComputedStyle(header).position !== "static"
    ? header.getBoundingClientRect().bottom : 0;
  const r = marks.length ? marks[0].getBoundingClientRect() : null;
  return {{
    path: location.pathname,
    hash: decodeURIComponent(location.hash.slice(1)),
    marked: marks.map((m) => m.textContent).join(" "),
    heading: !!heading,
    inHeading: !!heading && marks.length > 0 && marks.every((m) => heading.contains(m)),
    inView: !!r && r.top >= below - 1 && r.top < window.innerHeight && r.height > 0,
  }};
}}"""


@dataclass
class Outcome:
    question: str
    kind: str  # one of KINDS
    page: str = ""  # the citation's page and #anchor
    quoted: str = ""
    marked: str = ""
    note: str = ""  # why "none": no citation, another page, no such anchor, nothing marked
    in_view: bool = True


def questions(name: str, limit: int) -> list[str]:
    """The first ``limit`` questions of a site: a corpus's file, sample_site's dev split."""
    if name == "sample_site":
        rows = labelled()
        split = split_of(rows)
        asked = [r["question"] for r in rows if r["vault"] == name]
        return [q for q in asked if split[q] == "dev"][:limit]
    lines = (QUESTIONS / f"{name}.jsonl").read_text(encoding="utf-8").splitlines()
    return [json.loads(line)["question"] for line in lines if line.strip()][:limit]


def check(new_page: Callable[[], Any], origin: str, question: str, base: str = "") -> Outcome:
    """Ask ``question`` on the site's home page, click the first citation, read the marks.
    ``base``: the index's link prefix (a mike site's names its default version, ``/latest/``,
    which the widget maps onto the page's own root, as this build has no version folder)."""
    page = new_page()
    open_page(page, origin + "/")
    page.locator(".kbq-launcher").click()
    with page.expect_response(re.compile(r"/api/ask")) as response:
        ask(page, question)
    events = parse_sse(response.value.text().splitlines())
    cited = [c for name, data in events if name == "citations" for c in data["citations"]]
    if not cited:
        return Outcome(question, "none", note="no citation")
    first = cited[0]
    quoted, anchor = first["text"], first["anchor"]
    outcome = Outcome(question, "none", f"{first['url']}", quoted)
    page.locator("a.kbq-cite").first.click()
    try:
        page.wait_for_function(f"{MARKS}.length > 0", timeout=MARK_WAIT_MS)
        settle(page)
    except Exception:  # noqa: BLE001 - Playwright's TimeoutError: nothing was marked
        page.wait_for_load_state()
    landed = page.evaluate(LANDED, anchor)
    outcome.marked = landed["marked"]
    outcome.in_view = landed["inView"]
    url = first["url"].split("#")[0]
    url = origin + "/" + url[len(base) :] if base and url.startswith(base) else url
    want = re.sub(r"^https?://[^/]+", "", url)
    if landed["path"] != want:
        outcome.note = f"landed on {landed['path']}#{landed['hash']}"
    elif anchor and not landed["heading"]:
        outcome.note = f"no element #{anchor} on the page"
    elif not landed["marked"]:
        outcome.note = "nothing marked"
    elif words(landed["marked"]) in (reader_words(quoted), reader_words(quoted, False)):
        outcome.kind = "exact"
    elif landed["inHeading"]:
        outcome.kind = "section"
    else:
        outcome.kind = "other"
    return outcome


def run_site(name: str, source: Path, limit: int, browser: Any) -> tuple[list[Outcome], float]:
    """Build, index and ask one site; its outcomes and the seconds it took."""
    started = time.perf_counter()
    work = WORK / "highlights" / name
    shutil.rmtree(work, ignore_errors=True)
    work.mkdir(parents=True)
    build = parity.build_site(source, work)
    parity.with_plugin(build.root)
    outcomes: list[Outcome] = []
    settings = {"index_dir": WORK / "index" / f"highlights-{name}", "rate_limit": 0}
    env = {k: v for k, v in os.environ.items() if not k.startswith("KBQA_")}
    with site_with_api(build.root, work / "site-with-chat", env, **settings) as (origin, _, kb):
        base = kb.store.meta("site_url")
        for question in questions(name, limit):
            context = loopback_context(browser)
            try:
                outcomes.append(check(context.new_page, origin, question, base))
            finally:
                context.close()
    return outcomes, time.perf_counter() - started


def report(name: str, outcomes: list[Outcome], seconds: float) -> str:
    n = len(outcomes)
    counts = Counter(o.kind for o in outcomes)
    shares = [f"{counts[k] / n:>7.3f}" if n else f"{'-':>7}" for k in KINDS]
    hidden = sum(1 for o in outcomes if o.kind != "none" and not o.in_view)
    return f"{name:<16} {n:>3} {' '.join(shares)} {hidden / n if n else 0:>8.3f} {seconds:>7.1f}"


def show(outcomes: list[Outcome]) -> None:
    for o in outcomes:
        if o.kind == "exact" and o.in_view:
            continue
        why = o.note or ("" if o.in_view else "first mark not in view")
        print(f"\n  [{o.kind}] {o.question}\n    page: {o.page} {why}")
        print("    quoted: " + o.quoted.replace("\n", "\n            "))
        print(f"    marked: {o.marked!r}")
        quoted, marked = reader_words(o.quoted), words(o.marked)
        for tag, a, b, c, d in SequenceMatcher(None, quoted, marked, autojunk=False).get_opcodes():
            if tag != "equal":
                print(
                    f"    differ: quoted {' '.join(quoted[a:b])!r}, marked {' '.join(marked[c:d])!r}"
                )


def main() -> None:
    available = parity.sites()
    parser = argparse.ArgumentParser()
    parser.add_argument("--sites", nargs="*", default=list(available))
    parser.add_argument("--limit", type=int, default=30, help="questions per site")
    parser.add_argument("--show", action="store_true", help="print every miss")
    args = parser.parse_args()
    header = f"{'site':<16} {'n':>3} " + " ".join(f"{k:>7}" for k in KINDS)
    print(f"{header} {'unseen':>8} {'seconds':>7}", flush=True)
    with chromium() as browser:
        for name in args.sites:
            outcomes, seconds = run_site(name, available[name], args.limit, browser)
            print(report(name, outcomes, seconds), flush=True)
            if args.show:
                show(outcomes)


if __name__ == "__main__":
    main()
