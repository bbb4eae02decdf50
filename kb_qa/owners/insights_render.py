"""The insights report (kb_qa.owners.insights) as terminal text, and the formatting the
text and the HTML page (kb_qa.owners.insights_html) share: outcomes, ratings, the time
window, percentages and milliseconds, section labels.
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable
from typing import Any

from kb_qa.text import BIDI_CONTROLS

LOG_OFF = (
    "The question log is off (question_log, KBQA_QUESTION_LOG=false): readers' questions are "
    "not recorded, so this report shows only what was logged before it was switched off, and "
    "readers' ratings."
)


# Every line break a terminal obeys. A reader's, printed, made lines that read as the
# report's own ("  99 × [up] Best docs ever"): each is shown as a mark instead.
_LINE_BREAKS = re.compile(r"\r\n|[\n\r\v\f\x1c-\x1e\x85\u2028\u2029]")


def one_line(value: str) -> str:
    """``value`` on one line, each line break in it shown as " ⏎ "."""
    return _LINE_BREAKS.sub(" ⏎ ", value)


def text(report: dict[str, Any], clean: Callable[[str], str] = str) -> str:
    """The report for a terminal; ``clean`` cleans strings from the log (control characters),
    and each string is kept on its line."""

    def safe(value: str) -> str:
        return clean(one_line(BIDI_CONTROLS.sub("", value)))

    t = report["totals"]
    lines = [f"kb-qa insights: {safe(named(report))} ({window_text(report)})", ""]
    if not t["questions"] and not (t["thumbs_up"] + t["thumbs_down"]):
        state = "on" if report["question_log"] else "off (question_log)"
        return "\n".join(
            [
                *lines,
                f"No questions logged in this window. Question log: {state}; the API (`kb-qa "
                "serve`, or the MkDocs plugin under `mkdocs serve`) records questions as "
                "readers ask them.",
            ]
        )
    lines += [
        f"Questions: {t['questions']:,} ({t['distinct']:,} distinct, {t['follow_ups']:,} "
        f"follow-ups; {t['llm']:,} written by a model, {t['extractive']:,} extractive)",
        f"  answered {t['answered']:,} · not covered {t['not_covered']:,} "
        f"({pct_text(t, 'not_covered')}) · errors {t['errors']:,} · reader left early "
        f"{t['disconnected']:,}",
        f"Feedback: {t['thumbs_up']:,} up, {t['thumbs_down']:,} down",
    ]
    if not report["question_log"]:  # not left as zeros to be read as "nobody asked"
        lines[2:2] = [LOG_OFF, ""]
    fb = report["feedback"]
    for r in fb["reasons"][:5]:
        lines.append(f"  {r['count']:>4} × [{r['rating']}] {safe(r['reason'])}")
    listed = len(fb["reasons"])
    html = f"the {listed} most given" if fb["distinct_reasons"] > listed else "them all"
    where = f"--html shows {html}; kb-qa feedback lists every rating"
    lines += _more(fb["distinct_reasons"] - 5, "reasons", where)
    lines += _questions(report["questions"], safe)
    lines += _gaps(report["gaps"], safe)
    c = report["citations"]
    lines += ["", f"Cited by covered answers: {c['pages_cited']} of {c['pages_indexed']} pages"]
    for p in c["most_pages"][:5]:
        lines.append(f"  {p['citations']:>5}  {safe(p['path'])}")
    lines += _more(c["pages_cited"] - 5, "pages", "--html shows the most and least cited")
    if c["never_cited_count"]:
        names = ", ".join(safe(p["path"]) for p in c["never_cited"][:8])
        left = c["never_cited_count"] - 8
        more = f" … and {left:,} more (--html lists them)" if left > 0 else ""
        lines.append(f"  never cited ({c['never_cited_count']}): {names}{more}")
    lat = report["latency"]
    lines += [
        "",
        f"First text p50 {ms_text(lat['first_token_ms']['p50'])}, p95 "
        f"{ms_text(lat['first_token_ms']['p95'])}; "
        f"retrieval p50 {ms_text(lat['retrieval_ms']['p50'])}; "
        f"{lat['slow']} slower than {lat['slow_over_ms']:g} ms",
    ]
    for e in report["errors"]["by_code"]:
        lines.append(f"  error {safe(e['code'])}: {e['count']} ({safe(e['message'])})")
    return "\n".join(lines)


def _more(left: int, what: str, where: str) -> list[str]:
    """The line ending a list the text cut: how many it left out, and where they are."""
    return [f"  … and {left:,} more {what} ({where})"] if left > 0 else []


def _questions(asked: dict[str, Any], safe: Callable[[str], str]) -> list[str]:
    shown = asked["top"][:10]
    merged = "" if asked["groups"] == asked["distinct"] else f" into {asked['groups']:,}"
    cut = f"; the {len(shown)} most asked shown" if asked["groups"] > len(shown) else ""
    lines = ["", f"Top questions ({asked['distinct']:,} distinct, asked in other words merged"]
    lines[-1] += f"{merged}{cut}):"
    if asked.get("problem"):
        lines.append(f"  {asked['problem']}")
    for n, q in enumerate(shown, 1):
        others = f" (+{q['wordings'] - 1} wording(s))" if q["wordings"] > 1 else ""
        lines.append(f"{n:>3}. {q['asked']:,} × “{safe(q['question'])}”{others}")
        lines.append(f"       {outcome_counts(q)} · {rating_text(q)}")
        for s in q["sections"][:2]:
            lines.append(f"       cited: {safe(section_label(s))}  {safe(s['url'])}")
    listed = len(asked["top"])
    where = (
        f"--html shows the {listed} most asked, --questions-csv all of them"
        if asked["groups"] > listed
        else "--html or --questions-csv shows them all"
    )
    return lines + _more(asked["groups"] - len(shown), "questions", where)


def _gaps(gaps: dict[str, Any], safe: Callable[[str], str]) -> list[str]:
    topics, shown = gaps["topics"], gaps["topics"][:10]
    total = len(topics) + gaps["more_topics"]
    head = f"Coverage gaps ({gaps['questions']:,} not-covered or thumbs-down questions"
    if gaps["clustered"] < gaps["questions"]:
        head += f"; the {gaps['clustered']:,} most asked"
    if total:
        head += f" in {total:,} topics"
        head += f", the {len(shown)} largest shown" if total > len(shown) else ""
    lines = ["", head + "):"]
    if gaps.get("problem"):
        lines.append(f"  {gaps['problem']}")
    for n, topic in enumerate(shown, 1):
        counts = f"{topic['not_covered']} not covered, {topic['thumbs_down']} thumbs down"
        lines.append(f"{n:>3}. {topic['distinct']} question(s) ({counts})")
        lines += [f"       “{safe(q)}”" for q in topic["questions"]]
        for s in topic["sections"][:2]:
            lines.append(f"       shown: {safe(section_label(s))}  {safe(s['url'])}")
    left = topics[len(shown) :]
    counts = (
        f"{sum(t['not_covered'] for t in left):,} not covered, "
        f"{sum(t['thumbs_down'] for t in left):,} thumbs down"
    )
    if gaps["more_topics"]:  # beyond what the report holds: counted, not summed
        counts = f"the next {len(left)}: {counts}"
        where = f"--html shows {len(topics)}"
    else:
        where = "--html shows them"
    return lines + _more(total - len(shown), "topics", f"{counts}; {where}")


_OUTCOMES = {
    "answered": "answered",
    "not_covered": "not covered",
    "errors": "failed",
    "left": "reader left",
}


def outcome_counts(q: dict[str, Any]) -> str:
    """``answered``, or the mix: ``answered 3 · not covered 1``."""
    given = [(k, n) for k, n in q["outcomes"].items() if n]
    if len(given) == 1:
        return _OUTCOMES[given[0][0]]
    return " · ".join(f"{_OUTCOMES[k]} {n:,}" for k, n in given)


def rating_text(q: dict[str, Any]) -> str:
    if not (q["thumbs_up"] or q["thumbs_down"]):
        return "not rated"
    return f"{q['thumbs_up']:,} up, {q['thumbs_down']:,} down"


def named(report: dict[str, Any]) -> str:
    """What the report is of: the site's own name, else the vault folder's."""
    return str(report.get("site_name") or report["vault"])


def window_text(report: dict[str, Any]) -> str:
    since = report["since"]
    start = "everything kept" if since is None else f"since {when_text(since)}"
    return f"{start}, to {when_text(report['generated_at'])}"


def when_text(at: float) -> str:
    return time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime(at))


def pct_text(totals: dict[str, int], key: str) -> str:
    return f"{100 * totals[key] / totals['questions']:.0f}%" if totals["questions"] else "–"


def ms_text(value: float | None) -> str:
    return "–" if value is None else f"{value:,.0f} ms"


def section_label(s: dict[str, Any]) -> str:
    return " › ".join(s["heading_path"]) or s["path"]
