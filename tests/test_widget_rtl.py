"""The widget on right-to-left pages, in real headless Chromium: on an Arabic page it speaks
Arabic, laid out right to left (the host's ``all: initial`` had made the chat frame left to
right, its full stops at the lines' start); an owner's labels on a right-to-left page read
right to left too; on a page in a language it lacks (Persian) it speaks English, left to right.
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Iterator
from html import escape
from pathlib import Path
from typing import Any

import pytest
from browser import sync_playwright_or_skip
from widget_stack import ROOT, in_shadow, loopback_context, open_page, served_folder

sync_playwright_or_skip()

MIRRORED = "matrix(-1, 0, 0, 1, 0, 0)"  # the send arrow points the way the line is written
FRAME = (
    "const f = root.querySelector('.kbq');"
    " return [f.getAttribute('lang'), getComputedStyle(f).direction,"
    " root.querySelector('.kbq-title').textContent,"
    " root.querySelector('.kbq-send').getAttribute('aria-label'),"
    " getComputedStyle(root.querySelector('.kbq-send svg')).transform];"
)


def page_html(lang: str, labels: dict[str, str] | None = None) -> str:
    tag = f" data-labels='{escape(json.dumps(labels), quote=False)}'" if labels else ""
    return (
        f'<!doctype html><html lang="{lang}" dir="rtl"><head><meta charset=utf-8>'
        "<title>RTL</title></head><body><h1>صفحة</h1><p>نص الصفحة.</p>"
        f'<script src="kb-qa/kb-qa.js" defer data-endpoint="http://127.0.0.1:9"{tag}>'
        "</script></body></html>"
    )


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    folder = tmp_path_factory.mktemp("rtl")
    (folder / "kb-qa").mkdir()
    for name in ("kb-qa.js", "kb-qa.css"):
        shutil.copyfile(ROOT / "widget" / name, folder / "kb-qa" / name)
    (folder / "ar.html").write_text(page_html("ar"), encoding="utf-8")
    (folder / "fa.html").write_text(page_html("fa"), encoding="utf-8")
    labels = {"title": "שאלו את התיעוד", "sendQuestion": "שליחת השאלה"}
    (folder / "he.html").write_text(page_html("he", labels), encoding="utf-8")
    with served_folder(Path(folder)) as origin:
        yield origin


@pytest.mark.parametrize(
    ("page_name", "frame"),
    [
        ("ar", [None, "rtl", "اسأل الوثائق", "إرسال السؤال", MIRRORED]),
        ("he", [None, "rtl", "שאלו את התיעוד", "שליחת השאלה", MIRRORED]),
        ("fa", ["en", "ltr", "Ask the docs", "Send question", "none"]),
    ],
)
def test_the_chat_reads_in_the_direction_of_its_words(
    browser: Any, site: str, page_name: str, frame: list[str | None]
) -> None:
    context = loopback_context(browser)
    try:
        page = context.new_page()
        open_page(page, f"{site}/{page_name}.html")
        page.keyboard.press("Control+k")
        assert in_shadow(page, FRAME) == frame
    finally:
        context.close()
