"""The insights report (kb_qa.owners.insights) as one self-contained HTML file.

The HTML inlines Chart.js (MIT, vendored in kb_qa/data, 210 KB; the charts and their tables
are in insights_parts) and the report's data, so it
opens offline and makes no request at all. Every string from the log (questions, reasons,
headings, URLs) is escaped; the data block cannot close its script element; and a Content
Security Policy lets only this page's own inline scripts run, so even a question written as
HTML stays text.
"""

from __future__ import annotations

import base64
import hashlib
import json
from typing import Any

from kb_qa.owners.insights_parts import SCRIPT, chart_js, charts
from kb_qa.owners.insights_parts import escaped as _e
from kb_qa.owners.insights_parts import table as _table
from kb_qa.owners.insights_render import (
    LOG_OFF,
    ms_text,
    named,
    outcome_counts,
    pct_text,
    rating_text,
    section_label,
    when_text,
    window_text,
)

_ALL_MOST = "Nothing beyond the most cited list."


_STYLE = """
:root { --fg: #1f2328; --muted: #59636e; --line: #d1d9e0; --bg: #f6f8fa; --accent: #0969da; }
* { box-sizing: border-box; }
body { margin: 0; font: 15px/1.5 system-ui, -apple-system, "Segoe UI", sans-serif;
       color: var(--fg); background: #fff; }
header { padding: 24px 32px 8px; }
h1 { font-size: 22px; margin: 0 0 4px; }
h2 { font-size: 18px; margin: 32px 0 12px; }
main { padding: 0 32px 48px; max-width: 1200px; }
.muted { color: var(--muted); }
.cards { display: grid; grid-template-columns: repeat(auto-fit, minmax(150px, 1fr)); gap: 12px; }
.card { border: 1px solid var(--line); border-radius: 8px; padding: 12px 16px;
        background: var(--bg); }
.card b { display: block; font-size: 26px; }
.grid { display: grid; grid-template-columns: repeat(auto-fit, minmax(min(100%, 420px), 1fr));
        gap: 24px; }
.grid > div { min-width: 0; }
.scroll { max-width: 100%; overflow-x: auto; }
.chart { position: relative; height: 280px; }
table { border-collapse: collapse; width: 100%; font-size: 14px; }
/* A cell breaks between words, never inside one ("as/ke/d"), and a column of text keeps
   room for a few words: a narrow screen scrolls the table in its .scroll box instead of
   squeezing each column to a letter. Only text cells break a word wider than the column. */
th, td { text-align: left; padding: 6px 8px; border-bottom: 1px solid var(--line);
         vertical-align: top; overflow-wrap: normal; }
td.t { overflow-wrap: anywhere; min-width: 12em; }
td.s { white-space: nowrap; }
.said { overflow-wrap: anywhere; min-width: 10em; }
th { color: var(--muted); font-weight: 600; }
td.n { text-align: right; font-variant-numeric: tabular-nums; white-space: nowrap; }
.topic { border: 1px solid var(--line); border-radius: 8px; padding: 12px 16px; margin: 0 0 12px; }
.topic h3 { font-size: 15px; margin: 0 0 6px; }
.topic ul { margin: 4px 0; padding-left: 20px; overflow-wrap: anywhere; }
.q { font-style: italic; }
td ul { margin: 0; padding-left: 16px; }
/* A long question must not squeeze the sections cited into a column one word wide */
#top-questions th:nth-child(2) { width: 42%; }
#top-questions th:nth-child(6) { width: 36%; min-width: 240px; }
header form { float: right; margin: 0; }
button { font: inherit; padding: 4px 12px; border: 1px solid var(--line); border-radius: 6px;
         background: var(--bg); cursor: pointer; }
a { color: var(--accent); }
.notice { border-left: 4px solid #9a6700; background: #fff8c5; padding: 8px 12px; margin: 8px 0 0; }
@media (max-width: 600px) { header { padding: 16px 12px 8px; } main { padding: 0 12px 32px; } }
"""


def _hash(source: str) -> str:
    digest = hashlib.sha256(source.encode()).digest()
    return "'sha256-" + base64.b64encode(digest).decode() + "'"


def csp(forms: bool = False) -> str:
    """The page's Content Security Policy: nothing but its own inline script and style (and,
    with ``forms``, the sign-out form posting to its own server)."""
    scripts = " ".join(_hash(s) for s in (chart_js(), SCRIPT))
    action = "'self'" if forms else "'none'"
    return (
        f"default-src 'none'; script-src {scripts}; style-src {_hash(_STYLE)}; img-src data:; "
        f"base-uri 'none'; form-action {action}"
    )


def _link(url: str, label: str) -> str:
    """A link for http(s) and relative URLs; anything else (javascript:, data:) as text."""
    scheme = url.split(":", 1)[0].lower() if ":" in url.split("/", 1)[0] else ""
    if not url or scheme not in ("", "http", "https"):
        return _e(label)
    return f'<a href="{_e(url)}">{_e(label)}</a>'


def _questions_html(asked: dict[str, Any], csv_href: str) -> str:
    rows = []
    for n, q in enumerate(asked["top"], 1):
        question = f'<span class="q">{_e(q["question"])}</span>'
        if q["also_asked_as"]:
            others = ", ".join(f"“{_e(w)}”" for w in q["also_asked_as"])
            more = q["wordings"] - 1 - len(q["also_asked_as"])
            tail = f" and {more:,} more" if more > 0 else ""
            question += f'<div class="muted">also asked as {others}{tail}</div>'
        rating = _e(rating_text(q))
        if q["reasons"]:
            reasons = ", ".join(f"{_e(r['reason'])} ({r['count']})" for r in q["reasons"])
            rating += f'<div class="muted said">{reasons}</div>'
        sections = "".join(
            f"<li>{_link(s['url'], section_label(s))} "
            f'<span class="muted">({s["citations"]:,})</span></li>'
            for s in q["sections"]
        )
        rows.append(
            [
                str(n),
                question,
                f"{q['asked']:,}",
                _e(outcome_counts(q)),
                rating,
                f"<ul>{sections}</ul>" if sections else '<span class="muted">none</span>',
            ]
        )
    shown = len(asked["top"])
    note = (
        f'<p class="muted">{asked["distinct"]:,} distinct question(s); the '
        f"{asked['merged']:,} most asked are merged with the ones saying the same in other "
        f"words (similarity ≥ {asked['similarity']:g}): {asked['groups']:,} question(s), the "
        f"{shown:,} most asked shown"
    )
    if csv_href:
        note += f' · <a href="{_e(csv_href)}" download>all as CSV</a>'
    note += ".</p>"
    if asked.get("problem"):
        note += f"<p>{_e(asked['problem'])}</p>"
    head = ["#", "question", "asked", "outcome", "rating", "sections cited (times)"]
    return note + _table(head, rows, "No questions in this window.", "top-questions")


def _gaps_html(gaps: dict[str, Any]) -> str:
    parts = [
        f'<p class="muted">{gaps["questions"]} not-covered or thumbs-down question(s), '
        f"{gaps['clustered']} grouped by meaning; largest topics first.</p>"
    ]
    if gaps.get("problem"):
        parts.append(f"<p>{_e(gaps['problem'])}</p>")
    if not gaps["topics"]:
        parts.append('<p class="muted">No coverage gaps in this window.</p>')
    for topic in gaps["topics"]:
        questions = "".join(f'<li class="q">{_e(q)}</li>' for q in topic["questions"])
        sections = "".join(
            f"<li>{_link(s['url'], section_label(s))}</li>" for s in topic["sections"]
        )
        near = (
            f"<div class=muted>Sections these readers were shown:</div><ul>{sections}</ul>"
            if sections
            else ""
        )
        parts.append(
            f'<div class="topic"><h3>{topic["distinct"]:,} question(s) · '
            f"{topic['not_covered']:,} not covered · {topic['thumbs_down']} thumbs down</h3>"
            f"<ul>{questions}</ul>{near}</div>"
        )
    if gaps.get("more_topics"):
        parts.append(f'<p class="muted">…and {gaps["more_topics"]} smaller topic(s).</p>')
    return "".join(parts)


def _citations_html(c: dict[str, Any]) -> str:
    def pages(rows: list[dict[str, Any]]) -> list[list[str]]:
        return [
            [_link(p["url"], p["title"] or p["path"]), _e(p["path"]), str(p["citations"])]
            for p in rows
        ]

    def sections(rows: list[dict[str, Any]]) -> list[list[str]]:
        return [[_link(s["url"], section_label(s)), str(s["citations"])] for s in rows]

    never = [[_link(p["url"], p["title"] or p["path"]), _e(p["path"])] for p in c["never_cited"]]
    return (
        f'<p class="muted">{c["answers_citing"]} covered answers cited {c["pages_cited"]} of '
        f"{c['pages_indexed']} indexed pages (not-covered answers, which cite the nearest "
        "sections, do not count).</p>"
        '<div class="grid"><div><h3>Most cited pages</h3>'
        + _table(["page", "path", "#"], pages(c["most_pages"]), "Nothing cited yet.")
        + "</div><div><h3>Least cited pages</h3>"
        + _table(["page", "path", "#"], pages(c["least_pages"]), _ALL_MOST)
        + "</div><div><h3>Most cited sections</h3>"
        + _table(["section", "#"], sections(c["most_sections"]), "Nothing cited yet.")
        + "</div><div><h3>Least cited sections</h3>"
        + _table(["section", "#"], sections(c["least_sections"]), _ALL_MOST)
        + f"</div></div><h3>Pages never cited ({c['never_cited_count']})</h3>"
        + _table(["page", "path"], never, "Every indexed page was cited.")
    )


def _notice(report: dict[str, Any]) -> str:
    """Why the report holds nothing, or holds only the past: the question log is off, or
    no reader asked in this window."""
    t = report["totals"]
    if not report["question_log"]:
        said = LOG_OFF
    elif not t["questions"] and not (t["thumbs_up"] + t["thumbs_down"]):
        said = (
            "No questions were logged in this window. The API (kb-qa serve, or the MkDocs "
            "plugin under mkdocs serve) records each question as a reader asks it"
            + (
                "; a longer window (?since=30d here, --since 30d for kb-qa insights, or none for "
                "everything kept) may hold some."
                if report["since"] is not None
                else "."
            )
        )
    else:
        return ""
    return f'<p class="notice" role="status">{_e(said)}</p>'


def page(report: dict[str, Any], sign_out: str = "", csv_href: str = "") -> str:
    """The report as one HTML document that needs nothing else to display.

    Served by ``kb-qa serve`` to a signed-in browser, ``sign_out`` is where its sign-out
    form posts and ``csv_href`` where the top questions download as CSV.
    """
    t, fb, lat, err = report["totals"], report["feedback"], report["latency"], report["errors"]
    data = json.dumps(report, ensure_ascii=False)
    # Inside <script>, only "</" could end the element early; escaped, JSON reads the same.
    data = data.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")
    cards = "".join(
        f'<div class="card"><b>{value}</b><span class="muted">{_e(label)}</span></div>'
        for value, label in (
            (f"{t['questions']:,}", "questions"),
            (f"{t['answered']:,}", "answered"),
            (f"{t['not_covered']:,}", f"not covered ({pct_text(t, 'not_covered')})"),
            (f"{t['errors']:,}", "errors"),
            (f"{t['thumbs_up']:,}", "thumbs up"),
            (f"{t['thumbs_down']:,}", "thumbs down"),
            (ms_text(lat["first_token_ms"]["p50"]), "first text p50"),
        )
    )
    reasons = [[_e(r["rating"]), _e(r["reason"]), str(r["count"])] for r in fb["reasons"]]
    down = [
        [
            _e(when_text(r["at"])),
            f'<span class="q">{_e(r["question"])}</span>',
            _e(r["reason"]),
        ]
        for r in fb["recent_down"]
    ]
    slowest = [
        [
            _e(when_text(e["at"])),
            f'<span class="q">{_e(e["question"])}</span>',
            _e(e["mode"]),
            _e(ms_text(e["first_token_ms"])),
            _e(ms_text(e["total_ms"])),
        ]
        for e in lat["slowest"]
    ]
    errors = [
        [
            _e(when_text(e["at"])),
            f'<span class="q">{_e(e["question"])}</span>',
            _e(e["code"]),
            _e(e["message"]),
        ]
        for e in err["recent"]
    ]
    drawn = charts(report)
    policy = _e(csp(forms=bool(sign_out)))
    out = (
        f'<form method="post" action="{_e(sign_out)}"><button type="submit">Sign out</button>'
        "</form>"
        if sign_out
        else ""
    )
    return f"""<!doctype html>
<html lang="en"><head><meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="{policy}">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="{"same-origin" if sign_out else "no-referrer"}">
<title>kb-qa insights: {_e(named(report))}</title>
<style>{_STYLE}</style></head><body>
<header>{out}<h1>What readers asked: {_e(named(report))}</h1>
<div class="muted">{_e(window_text(report))} · {t["distinct"]:,} distinct questions,
{t["follow_ups"]:,} follow-ups · {t["llm"]:,} model answers, {t["extractive"]:,} extractive</div>
{_notice(report)}</header><main>
<div class="cards">{cards}</div>
<h2>Questions over time (per {_e(report["volume"]["unit"])}, UTC)</h2>
{drawn["volume"]}
<div class="grid"><div><h2>Outcomes</h2>
{drawn["outcomes"]}</div>
<div><h2>Feedback</h2>{drawn["feedback"]}</div></div>
<h2>Top questions</h2>{_questions_html(report["questions"], csv_href)}
<h2>Coverage gaps</h2>{_gaps_html(report["gaps"])}
<div class="grid"><div><h3>Feedback reasons</h3>
{_table(["rating", "reason", "#"], reasons, "No reasons given.")}</div>
<div><h3>Recent thumbs down</h3>
{_table(["when", "question", "reason"], down, "No thumbs down.")}</div></div>
<h2>Citations</h2>
{drawn["cited"]}
{_citations_html(report["citations"])}
<h2>Speed</h2>
<p class="muted">First text p50 {ms_text(lat["first_token_ms"]["p50"])}, p95
{ms_text(lat["first_token_ms"]["p95"])}; retrieval p50 {ms_text(lat["retrieval_ms"]["p50"])}, p95
{ms_text(lat["retrieval_ms"]["p95"])}; {lat["slow"]} answer(s) slower than
{lat["slow_over_ms"]:g} ms to first text.</p>
{drawn["latency"]}
<h3>Slowest answers</h3>
{_table(["when", "question", "mode", "first text ms", "total ms"], slowest, "No answers.")}
<h2>Errors</h2>
{_table(["when", "question", "code", "message"], errors, "No errors.")}
</main>
<script type="application/json" id="kbqa-data">{data}</script>
<script>{chart_js()}</script>
<script>{SCRIPT}</script>
</body></html>
"""
