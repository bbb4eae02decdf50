"""How long the page's main thread is busy while the widget lays out a hostile model reply.

    python bench/widget_stream.py [--runs 3]

A real kb-qa API (uvicorn, the ``hash`` embedder) answers through the local OpenAI-compatible
test server (``tests/llm_server.py``), which streams each reply below in 16 KB deltas; headless
Chromium asks in the widget, as ``tests/test_widget_model_output.py`` does. A 50 ms timer in
the page records the longest stretch between two of its ticks: the longest time the page
could not answer a click or a scroll. Prints, per reply, the median over ``--runs`` of that
stretch and of the time until the answer is laid out.

Replies: a megabyte and 100 KB of whitespace-only code spans (they froze the tab once:
100 KB 17 s, 1 MB never came back) and 300 ordinary paragraphs. The test keeps only the
hard limits (laid out within 90 s, truncated, a bounded number of code elements); this
prints the figure.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

from llm_server import LLMServer, Reply
from widget_stack import chromium, loopback_context, one_note_site_with_model

WATCH_GAPS = """() => {
  window.__gap = 0;
  let last = performance.now();
  setInterval(() => {
    const now = performance.now();
    window.__gap = Math.max(window.__gap, now - last);
    last = now;
  }, 50);
}"""

REPLIES = {
    "1 MB of ` ` code spans": "` ` " * 250_000,
    "100 KB of ` ` code spans": "` ` " * 25_000,
    "300 ordinary paragraphs": "".join(
        f"Paragraph {i} about *otters* and `code`.\n\n" for i in range(300)
    ),
}


def one_run(browser: object, url: str, llm: LLMServer, text: str) -> tuple[float, float]:
    """(longest main-thread stretch in ms, seconds until the answer was laid out)."""
    llm.script(Reply(text=text, chunk_size=16_384))
    context = loopback_context(browser)
    try:
        page = context.new_page()
        page.goto(url)
        page.wait_for_function("window.KbQa && window.KbQa.mounted")
        page.evaluate(WATCH_GAPS)
        started = time.perf_counter()
        page.keyboard.press("Control+k")
        page.locator(".kbq-input").fill("Do otters sleep?")
        page.locator(".kbq-input").press("Enter")
        answer = page.locator(".kbq-bot").first
        answer.wait_for()
        page.wait_for_function(
            "() => document.getElementById('kb-qa').shadowRoot"
            ".querySelector('.kbq-bot[aria-busy=\"false\"]')",
            timeout=120_000,
        )
        seconds = time.perf_counter() - started
        return float(page.evaluate("() => window.__gap")), seconds
    finally:
        context.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    with (
        tempfile.TemporaryDirectory() as tmp,
        LLMServer() as llm,
        one_note_site_with_model(Path(tmp), llm.url) as url,
        chromium() as browser,
    ):
        print(f"{'reply':28} {'longest busy stretch':>22} {'laid out in':>12}")
        for name, text in REPLIES.items():
            runs = [one_run(browser, url, llm, text) for _ in range(args.runs)]
            gap = statistics.median(g for g, _ in runs)
            seconds = statistics.median(s for _, s in runs)
            print(f"{name:28} {gap:>19.0f} ms {seconds:>10.2f} s")


if __name__ == "__main__":
    main()
