"""Take the README's screenshot: the kb-qa chat answering on kb-qa's own docs site.

    .venv/bin/python scripts/docs_screenshot.py [QUESTION]

Builds a copy of docs/ with the kb-qa plugin pointing at a live kb-qa API over the same
pages (the default embedding model, extractive answers: no API key), opens it in headless
Chromium (/usr/bin/chromium), asks QUESTION and writes docs/pages/assets/widget-answer.png.
It reuses the browser tests' helpers (tests/widget_stack.py).
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))

from widget_stack import ask, chromium, loopback_context, site_with_api  # noqa: E402

OUT = ROOT / "docs" / "pages" / "assets" / "widget-answer.png"
QUESTION = "How do I run several API replicas behind a load balancer?"


def main(question: str) -> None:
    with tempfile.TemporaryDirectory(prefix="kbqa-docs-shot-") as tmp_name:
        tmp = Path(tmp_name)
        docs = tmp / "docs"
        shutil.copytree(ROOT / "docs", docs, ignore=shutil.ignore_patterns(".kb-qa", "site"))
        env = dict(os.environ)
        with site_with_api(docs, tmp / "site", env, index_dir=tmp / "index") as (origin, _, _):
            with chromium() as browser:
                page = loopback_context(browser).new_page()
                page.goto(origin + "/site-generators/")
                page.wait_for_function("window.KbQa && window.KbQa.mounted")
                page.keyboard.press("Control+k")
                ask(page, question)
                page.wait_for_timeout(500)
                OUT.parent.mkdir(parents=True, exist_ok=True)
                page.screenshot(path=str(OUT))
    print(f"wrote {OUT.relative_to(ROOT)}")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("question", nargs="*", help=f"what to ask (default: {QUESTION!r})")
    main(" ".join(parser.parse_args().question) or QUESTION)
