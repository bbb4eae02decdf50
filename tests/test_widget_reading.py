"""Reading answers in the widget: what becomes a citation, tooltips, long and hostile replies.

Each test here failed on the widget before it was split into modules (kb-qa 0.1.0): a
bracketed index became a citation chip, tooltips kept the source's hard line breaks, a
finished long answer was shown from its end, and a 1 MB reply built to be slow to parse
froze the tab for half a minute.
"""

from __future__ import annotations

import time
from typing import Any

from browser import sync_playwright_or_skip
from llm_server import Reply
from widget_stack import MARKS, MARKS_TEXT, Stack, answered, ask, in_shadow, open_page, shot

sync_api = sync_playwright_or_skip()

# Replies built to be slow to parse: each is repeated up to the size asked for.
HOSTILE = ["*a ", "_a ", "**a ", "[", "[a](", "[[[a]]] ", "`" * 7 + " ", "| " * 3, "> ", "- "]


def test_an_index_in_brackets_is_not_a_citation(new_page: Any, stack: Stack) -> None:
    template = (
        "Take the first job with jobs[0] or arr[0] {{Retries and backoff > Default retry policy}}."
    )
    page = answered(new_page, stack, template, "How do I take the first job?")
    answer = page.locator(".kbq-answer").inner_text()
    assert "jobs[0] or arr[0]" in answer
    assert page.locator(".kbq-cite").all_text_contents() == ["1"]


def test_tooltips_join_the_lines_a_writer_wrapped(new_page: Any, stack: Stack) -> None:
    # A sentence from each item: the citation quotes the run of both.
    template = (
        "Clocks jumping forward move a run to the next valid minute {{Daylight saving time}}. "
        "Clocks jumping back fire a time that occurs twice only once {{Daylight saving time}}."
    )
    page = answered(new_page, stack, template, "What happens when clocks change?")
    page.locator("a.kbq-cite").first.hover()
    tip = page.locator(".kbq-tip-text")
    sync_api.expect(tip).to_be_visible()
    lines = tip.inner_text().split("\n")
    # The Markdown wraps each list item over two or three lines; the tooltip shows one per item.
    assert lines[0].startswith("When clocks jump forward, a time that does not exist")
    assert "(for example 02:30 on the spring transition in Europe/Berlin)" in lines[0]
    assert lines[1].startswith("When clocks jump back, a time that occurs twice fires only once")
    shot(page, "20-tooltip-wrapped-lines")


def test_a_sentence_drawn_from_one_list_item_highlights_that_item(
    new_page: Any, stack: Stack
) -> None:
    template = "Clocks jumping forward move a run to the next valid minute {{Daylight saving time}}"
    page = answered(new_page, stack, template, "What happens when clocks jump forward?")
    page.locator("a.kbq-cite").first.click()
    page.wait_for_function(f"{MARKS}.length > 0")
    marked = page.evaluate(MARKS_TEXT)
    assert "a time that does not exist" in marked and "03:00" in marked
    assert "jump back" not in marked and "occurs twice" not in marked  # the other item
    shot(page, "21-list-item-highlighted")


def test_a_long_answer_is_shown_from_its_start(new_page: Any, stack: Stack) -> None:
    # Taller than the log, short enough to stream in about a second.
    paragraphs = [f"Step {i}: wait longer." for i in range(1, 26)]
    template = "\n\n".join(paragraphs) + " {{Retries and backoff > Default retry policy}}"
    page = answered(new_page, stack, template, "Walk me through retries step by step")
    # The question and the first line of the answer are in view, not the answer's end.
    in_log = """el => {
      const log = el.closest('.kbq-log').getBoundingClientRect();
      const r = el.getBoundingClientRect();
      return r.top >= log.top && r.bottom <= log.bottom;
    }"""
    assert page.locator(".kbq-user .kbq-bubble").last.evaluate(in_log)
    assert page.locator(".kbq-answer p").first.evaluate(in_log)
    assert not page.locator(".kbq-actions").evaluate(in_log)
    shot(page, "21-long-answer-start")


def test_hostile_markdown_renders_in_linear_time_in_chromium(new_page: Any, stack: Stack) -> None:
    """Each pattern at 10 KB and 1 MB, rendered by the widget's renderer in the page."""
    page = new_page()
    open_page(page, stack.site + "/")
    timings = page.evaluate(
        """(patterns) => patterns.map((p) => {
          const out = { pattern: p };
          for (const size of [10000, 1000000]) {
            const md = p.repeat(Math.ceil(size / p.length)).slice(0, size);
            const box = document.createElement('div');
            const start = performance.now();
            box.appendChild(KbQa._test.renderMarkdown(md, document, {}));
            out['ms' + size] = performance.now() - start;
            out.chars = box.textContent.length;
          }
          return out;
        })""",
        HOSTILE,
    )
    print("\nhostile Markdown in Chromium, ms per KB at 10 KB / 1 MB:")
    for t in timings:
        per_kb = f"{t['ms10000'] / 10:.3f} / {t['ms1000000'] / 1000:.3f}"
        print(f"  {t['pattern']!r:>12}: {per_kb} ({t['chars']} characters of text shown)")
    # "- - - …" is one thematic break; every other pattern shows its text.
    assert all(t["chars"] > 0 for t in timings if t["pattern"] != "- ")


def test_a_one_megabyte_hostile_reply_streams_and_renders(new_page: Any, stack: Stack) -> None:
    reply = ("*a " * 350_000)[:1_000_000]
    stack.llm.script(Reply(text=reply, chunk_size=65_536))
    page = new_page()
    open_page(page, stack.site + "/")
    page.keyboard.press("Control+k")
    started = time.perf_counter()
    ask(page, "Say something long")
    shown = page.evaluate(
        "document.getElementById('kb-qa').shadowRoot.querySelector('.kbq-answer')"
        ".textContent.length"
    )
    timing = page.evaluate("KbQa.timing")
    print(
        f"\n1 MB hostile reply: done {timing['done'] - timing['submitted']:.0f} ms after submit "
        f"(page waited {time.perf_counter() - started:.1f} s)"
    )
    # The server streams max_reply_chars (20,000) of it and says where it cut.
    text = page.evaluate(
        "document.getElementById('kb-qa').shadowRoot.querySelector('.kbq-answer').textContent"
    )
    assert 20_000 <= shown < 20_200 and text.startswith(reply[:1000])
    assert "max_reply_chars" in text
    # The tab stayed responsive: a click still opens and closes the panel.
    page.locator(".kbq-panel button[aria-label='Close']").click()
    sync_api.expect(page.locator(".kbq-launcher")).to_be_visible()


def test_tab_reaches_everything_after_a_code_block_that_scrolls(
    new_page: Any, stack: Stack
) -> None:
    """A code block wider than the panel is a stop of the browser's own Tab order (it
    scrolls with the keyboard): Tab goes on past it to the answer's other controls, and
    never out of the panel."""
    wide = "lumen jobs enqueue --queue default --payload " + "'{\"n\": 1}' " * 20
    template = (
        "Enqueue it so {{Retries and backoff > Default retry policy}}:\n\n```bash\n"
        f"{wide}\n```\n\nThen check it {{{{Retries and backoff > What counts as a failure}}}}."
    )
    page = answered(new_page, stack, template, "How do I enqueue a job?")
    seen = []
    for _ in range(30):
        page.keyboard.press("Tab")
        assert page.evaluate("document.activeElement.id") == "kb-qa"
        seen.append(
            page.evaluate(
                "(() => { const a = document.getElementById('kb-qa').shadowRoot.activeElement;"
                " return a ? a.className || a.tagName : ''; })()"
            )
        )
    assert any("kbq-copy-code" in s for s in seen), seen  # past the code block
    assert sum("kbq-cite" in s for s in seen) >= 2, seen  # both citations, not only the first
    assert any("kbq-input" in s for s in seen), seen


def test_the_period_after_a_citation_stays_on_its_line(new_page: Any, stack: Stack) -> None:
    # Sentences one word longer each time, so that chips fall at the ends of lines.
    reply = " ".join("It waits" + " a" * n + " [1]." for n in range(40))
    stack.llm.script(Reply(text=reply, chunk_size=256))
    page = new_page()
    open_page(page, stack.site + "/")
    page.keyboard.press("Control+k")
    ask(page, "How long does it wait?")
    apart = in_shadow(
        page,
        """
        const out = [];
        for (const sup of root.querySelectorAll('.kbq-answer .kbq-sup')) {
          let node = sup.nextSibling;
          while (node && node.nodeType === 3 && !/[.]/.test(node.data)) node = node.nextSibling;
          if (!node || node.nodeType !== 3) continue;
          const range = document.createRange();
          const at = node.data.indexOf('.');
          range.setStart(node, at); range.setEnd(node, at + 1);
          const dot = range.getBoundingClientRect(), chip = sup.getBoundingClientRect();
          if (dot.top >= chip.bottom) out.push(Math.round(dot.top - chip.top));
        }
        return out;
        """,
    )
    assert page.locator(".kbq-answer .kbq-sup").count() == 40
    assert apart == []
