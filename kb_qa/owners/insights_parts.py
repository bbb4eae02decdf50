"""The pieces of the insights page (kb_qa.owners.insights_html): escaping, tables, and each
chart with its numbers as a table, drawn by the vendored Chart.js and the script here."""

from __future__ import annotations

import html
import re
from collections.abc import Sequence
from importlib import resources
from typing import Any

from kb_qa.text import BIDI_CONTROLS

_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f]")  # ESC, BEL: tofu in a page

CHART_JS = "chart.umd.min.js"

SCRIPT = """
(function () {
  var data = JSON.parse(document.getElementById("kbqa-data").textContent);
  if (typeof Chart === "undefined") return;
  Chart.defaults.animation = false;
  Chart.defaults.maintainAspectRatio = false;
  // Told apart by lightness too, not by hue alone (red and green look alike to many)
  var colors = { answered: "#1a7f37", not_covered: "#d4a72c", errors: "#82071e",
                 left: "#8c959f", up: "#1a7f37", down: "#82071e", bar: "#0969da" };
  function chart(id, config) {
    var canvas = document.getElementById(id);
    if (canvas) new Chart(canvas, config);
  }
  var buckets = data.volume.buckets;
  chart("volume", { type: "bar", data: {
      labels: buckets.map(function (b) { return b.start; }),
      datasets: ["answered", "not_covered", "errors", "left"].map(function (key) {
        var label = key === "left" ? "reader left" : key.replace("_", " ");
        return { label: label, data: buckets.map(function (b) { return b[key]; }),
                 backgroundColor: colors[key], stack: "q" };
      }) },
    options: { scales: { x: { stacked: true }, y: { stacked: true, beginAtZero: true,
               ticks: { precision: 0 } } } } });
  var t = data.totals;
  chart("outcomes", { type: "doughnut", data: {
      labels: ["answered", "not covered", "errors", "reader left"],
      datasets: [{ data: [t.answered, t.not_covered, t.errors, t.disconnected],
                   backgroundColor: [colors.answered, colors.not_covered, colors.errors,
                                     colors.left] }] } });
  chart("feedback", { type: "bar", data: { labels: ["thumbs up", "thumbs down"],
      datasets: [{ label: "ratings", data: [t.thumbs_up, t.thumbs_down],
                   backgroundColor: [colors.up, colors.down] }] },
    options: { plugins: { legend: { display: false } },
               scales: { y: { beginAtZero: true, ticks: { precision: 0 } } } } });
  var pages = data.citations.most_pages;
  chart("cited", { type: "bar", data: {
      labels: pages.map(function (p) { return p.title || p.path; }),
      datasets: [{ label: "answers citing", data: pages.map(function (p) { return p.citations; }),
                   backgroundColor: colors.bar }] },
    options: { indexAxis: "y", plugins: { legend: { display: false } },
               scales: { x: { beginAtZero: true, ticks: { precision: 0 } } } } });
  var bins = data.latency.histogram;
  chart("latency", { type: "bar", data: { labels: bins.map(function (b) { return b.bin; }),
      datasets: [{ label: "answers", data: bins.map(function (b) { return b.count; }),
                   backgroundColor: colors.bar }] },
    options: { plugins: { legend: { display: false } },
               scales: { y: { beginAtZero: true, ticks: { precision: 0 } } } } });
})();
"""


def chart_js() -> str:
    """The vendored Chart.js."""
    return (resources.files("kb_qa") / "data" / CHART_JS).read_text(encoding="utf-8")


def escaped(value: object) -> str:
    """Text from the log as HTML text, shown in the order it was written."""
    return html.escape(_CONTROL.sub("", BIDI_CONTROLS.sub("", str(value))), quote=True)


def table(
    head: Sequence[str], rows: Sequence[Sequence[str]], empty: str, table_id: str = ""
) -> str:
    """``rows`` hold HTML already escaped; a column named "#", "asked" or ending in "ms" is
    numeric, a column of times is kept on one line, and a column of text (a question, a
    reason, a path) wraps at its spaces, breaking a word only when it is wider than the
    column on its own."""
    if not rows:
        return f'<p class="muted">{escaped(empty)}</p>'
    kinds = [_kind(h) for h in head]
    th = "".join(f"<th>{escaped(h)}</th>" for h in head)
    body = "".join(
        "<tr>" + "".join(f"<td{k}>{c}</td>" for c, k in zip(row, kinds)) + "</tr>" for row in rows
    )
    attr = f' id="{escaped(table_id)}"' if table_id else ""
    # On a narrow screen a wide table scrolls in its own box (focusable, so the keyboard
    # scrolls it too), not the whole page.
    return (
        f'<div class="scroll" tabindex="0" role="region" aria-label="{escaped(head[0])} table">'
        f"<table{attr}><thead><tr>{th}</tr></thead><tbody>{body}</tbody></table></div>"
    )


# Columns of text from the log or the docs, which may hold a word wider than any column (a
# 1,900-letter "question", a path): the only cells that break inside a word (class t).
_TEXT = ("question", "reason", "message", "page", "path", "section", "sections cited (times)")


def _kind(head: str) -> str:
    """The class attribute of a column's cells: n numeric, s kept on one line, t text."""
    if head in ("#", "asked") or head.endswith("ms"):
        return " class=n"
    if head in ("when", "from", "first text", "mode", "code"):
        return " class=s"
    return " class=t" if head in _TEXT else ""


def _chart(chart_id: str, label: str, head: Sequence[str], rows: Sequence[Sequence[str]]) -> str:
    """A chart and its numbers: the canvas is an image named by ``label``, and the table a
    screen reader (or anyone who wants the figures) reads under "The numbers"."""
    return (
        f'<div class="chart"><canvas id="{chart_id}" role="img" aria-label="{escaped(label)}">'
        f"</canvas></div><details><summary>The numbers</summary>"
        f"{table(head, rows, 'Nothing yet.')}</details>"
    )


def charts(report: dict[str, Any]) -> dict[str, str]:
    """Each chart of the page with its table, by canvas id."""
    t, volume = report["totals"], report["volume"]
    outcomes = (
        ("answered", t["answered"]),
        ("not covered", t["not_covered"]),
        ("errors", t["errors"]),
        ("reader left", t["disconnected"]),
    )
    cited = report["citations"]["most_pages"]
    bins = report["latency"]["histogram"]
    head = ["from", "answered", "not covered", "errors", "reader left"]
    return {
        "volume": _chart(
            "volume",
            f"Questions over time, per {volume['unit']}: {t['questions']:,} in all",
            head,
            [
                [escaped(b["start"])]
                + [str(b[k]) for k in ("answered", "not_covered", "errors", "left")]
                for b in volume["buckets"]
            ],
        ),
        "outcomes": _chart(
            "outcomes",
            "Outcomes: " + ", ".join(f"{n:,} {what}" for what, n in outcomes),
            ["outcome", "#"],
            [[what, f"{n:,}"] for what, n in outcomes],
        ),
        "feedback": _chart(
            "feedback",
            f"Feedback: {t['thumbs_up']:,} thumbs up, {t['thumbs_down']:,} thumbs down",
            ["rating", "#"],
            [["thumbs up", f"{t['thumbs_up']:,}"], ["thumbs down", f"{t['thumbs_down']:,}"]],
        ),
        "cited": _chart(
            "cited",
            f"Most cited pages: the {len(cited)} pages answers cite most",
            ["page", "#"],
            [[escaped(p["title"] or p["path"]), str(p["citations"])] for p in cited],
        ),
        "latency": _chart(
            "latency",
            "Time to first text: how many answers took how long",
            ["first text", "#"],
            [[escaped(b["bin"]), str(b["count"])] for b in bins],
        ),
    }
