"""What a no-key answer quotes of a section: pymdown-extensions' inline marks, entities and
a ``<pre>`` block as the page shows them (what it highlights is still the docs' own bytes),
and a problem with the remedy the docs give next."""

from __future__ import annotations

from kb_qa.answer.blocks import passages, reading_text
from kb_qa.answer.extractive import quote
from kb_qa.types import Chunk, Hit


def _section(text: str) -> Chunk:
    return Chunk(
        "c", "docs/sensors.md", "sensors/", "setup", "Setup", ("Sensors", "Setup"), 2, text,
        0, len(text), 1, 1 + text.count("\n"), "h",
    )  # fmt: skip


def _answer(question: str, text: str) -> tuple[str, str]:
    """What the answer to ``question`` highlights of ``text``, and what it shows."""
    result = quote(question, [(1, Hit(_section(text), 1.0))])
    a, b = result.quoted[1]
    return text[a:b], "".join(result.pieces)


def test_a_pre_block_is_quoted_as_the_code_it_shows() -> None:
    """copier's docs show what its questionnaire looks like in a ``<pre>`` block: the
    answer quoted only "Will result in a questionnaire similar to." (its colon a period)."""
    text = (
        "Running copier asks the questions of the template.\n\n"
        "The questionnaire looks like this:\n\n"
        "<pre>\n🎤 project_name\n  My &amp; project\n</pre>\n"
    )
    highlighted, shown = _answer("What does the questionnaire look like?", text)
    assert highlighted.endswith("</pre>")
    assert "looks like this:" in shown
    assert "```\n🎤 project_name\n  My & project\n```" in shown
    assert "<pre>" not in shown


def test_other_raw_html_is_still_no_answer() -> None:
    assert [b.kind for b in passages('<div class="grid">\nCards\n</div>\n')] == []


def test_pymdown_marks_read_as_the_page_shows_them() -> None:
    """A Material site's chat showed ``++ctrl+c++``, ``:material-check:``, critic braces,
    ``[^hum]``, ``{ target=_blank }`` and ``&plusmn;0.5&nbsp;&deg;C &amp;`` as typed."""
    assert reading_text("Press ++ctrl+shift+p++ to copy.") == "Press Ctrl+Shift+P to copy."
    assert reading_text("A :material-check: green check") == "A green check"
    assert reading_text("Night mode {--dims--}{++turns off++} the LEDs.") == (
        "Night mode turns off the LEDs."
    )
    assert reading_text("every {~~ten~>thirty~~} seconds{>>was 10<<}") == "every thirty seconds"
    assert reading_text("every thirty seconds[^hum].") == "every thirty seconds."
    assert reading_text("[^hum]: Older sensors report hourly.").startswith("[^hum]: Older")
    link = "Open a [ticket](https://example.com){ target=_blank } for faults."
    assert reading_text(link) == "Open a ticket for faults."
    image = '![Board](board.png){ width="300" }\n\nThe board has two relays.'
    assert [b.text for b in passages(image)] == ["The board has two relays."]
    entities = "Accurate to &plusmn;0.5&nbsp;&deg;C &amp; stable."
    assert reading_text(entities) == "Accurate to ±0.5 °C & stable."


def test_code_keeps_its_bytes_but_not_inlinehilites_language_prefix() -> None:
    """copier's docs name a file `#!jinja {{ answers_file }}.jinja`: the page shows it
    without ``#!jinja``, and a reader copying the name from the chat got a wrong one."""
    text = "It must be called `#!jinja {{ answers_file }}.jinja`, run `#!/bin/sh` and `a &amp; b`."
    assert reading_text(text) == (
        "It must be called `{{ answers_file }}.jinja`, run `#!/bin/sh` and `a &amp; b`."
    )
    fenced = "```python\nx = '&amp; ++ctrl++ :material-check:'\n```"
    assert [b.text for b in passages(fenced)] == [fenced]


def test_abbreviation_definitions_are_not_quoted_and_a_table_keeps_its_cells() -> None:
    """The page shows no ``*[URL]: …`` line (only a tooltip), but the last section's quote
    carried them; a "|" written as an entity in a cell is text, not a cell's end."""
    text = "Webhooks post JSON to the URL.\n\n*[URL]: Uniform Resource Locator\n*[JSON]: x\n"
    assert [b.text for b in passages(text)] == ["Webhooks post JSON to the URL."]
    table = "| Mode | Range |\n|---|---|\n| `linear \\| log` | 0 &#124; 1 &deg; |\n"
    [block] = passages(table)
    assert block.text == "| Mode | Range |\n|---|---|\n| `linear \\| log` | 0 &#124; 1 ° |"


def test_a_problem_is_quoted_with_the_remedy_the_docs_give_next() -> None:
    """copier's "How do I recover from a broken update?" quoted the ways an update breaks
    and stopped before "To overcome this, use the `copier recopy` command" (a paragraph
    between them); its credentials question the problem without "To avoid that, …"."""
    text = (
        "Replaying the last generation usually works. Sometimes the replay breaks. Examples:\n\n"
        "- The last update relied on a server that is gone.\n"
        "- The old template needs another version of a Jinja extension.\n\n"
        "Keep templates simple to avoid this. But it can still happen.\n\n"
        "To overcome this, use `relay recopy`, which applies the template again and keeps "
        "your answers.\n\n"
        "Of course, local changes are then overwritten, and a diff tool helps.\n\n"
        "## Elsewhere\n\n" + "Unrelated text about mirrors and caches. " * 20 + "\n"
    )
    highlighted, shown = _answer("How do I recover when the replay breaks?", text)
    assert highlighted.startswith("Replaying the last generation")
    assert "use `relay recopy`" in shown and highlighted.endswith("keeps your answers.")
    # Only a paragraph that points back at what it remedies: a passage is not grown so
    # over one that begins otherwise
    plain = text.replace("To overcome this, use", "Use")
    highlighted, shown = _answer("How do I recover when the replay breaks?", plain)
    assert "relay recopy" not in shown


def test_an_example_admonition_is_quoted_with_the_statement_it_exemplifies() -> None:
    """copier's FAQ answers "How to create computed values?" with one sentence, "Combine
    `default` and `when: false`.", and an `!!! example` under it: the answer quoted the
    example alone (a "For example:" paragraph was already quoted with its statement)."""
    text = (
        "Combine `default` and `when: false`.\n\n"
        '!!! example\n\n    ```yaml title="relay.yaml"\n    next_year:\n'
        '        default: "{{ year + 1 }}"\n        when: false\n    ```\n'
    )
    highlighted, shown = _answer("How do I create a computed value that is not asked?", text)
    assert highlighted.startswith("Combine `default` and `when: false`.")
    assert "when: false" in shown.split("```")[0]


def test_a_readme_s_html_details_and_table_are_quoted_as_they_show() -> None:
    """A README's collapsible FAQ entry written without blank lines is one HTML block:
    "What does error E1042 mean?" quoted the entry after it; an HTML table of minimum
    versions was never quoted. Other HTML (a layout div, a banner) still is not."""
    text = (
        "<details>\n<summary>Error E1042: checksum mismatch</summary>\n"
        "E1042 means the download was truncated; delete ~/.cache/frob and retry.\n"
        "</details>\n\n"
        "<details><summary>Error E2001: spool full</summary>\n\n"
        "Free at least 2 GB in the spool directory.\n</details>\n\n"
        '<p align="center"><img src="banner.png"></p>\n'
    )
    highlighted, shown = _answer("What does error E1042 mean?", text)
    assert "E1042 means the download was truncated" in shown and "<summary>" not in shown
    assert highlighted.startswith("<details>\n<summary>Error E1042")
    table = (
        "<table>\n  <tr><th>Platform</th><th>Minimum version</th></tr>\n"
        "  <tr><td>macOS</td><td>12 Monterey</td></tr>\n</table>\n"
    )
    [block] = passages(table)
    assert block.text.split("\n") == [
        "| Platform | Minimum version |",
        "| -------- | --------------- |",
        "| macOS    | 12 Monterey     |",
    ]
    assert passages('<div class="grid">\nCards\n</div>\n') == []


def test_github_emoji_shortcodes_read_as_their_emoji() -> None:
    assert reading_text("Ship it :rocket: at 12:30:45 :+1:") == "Ship it 🚀 at 12:30:45 👍"
