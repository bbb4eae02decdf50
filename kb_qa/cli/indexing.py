"""The commands over the index: ``kb-qa index``, ``search``, ``eval`` and ``ask``."""

from __future__ import annotations

import argparse
import json
import logging
import os
import shutil
import sys
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from kb_qa.cli.common import (
    check_inputs,
    no_markdown,
    open_index,
    place_of,
    report_summary,
    require_index,
    safe_text,
    settings_for,
    snippet_of,
    terminal_link,
)
from kb_qa.errors import ConfigError, KbQaError

if TYPE_CHECKING:
    from kb_qa.answer.citations import Citation
    from kb_qa.answer.evaluate import Outcome
    from kb_qa.kb.knowledge_base import KnowledgeBase


def cmd_index(args: argparse.Namespace) -> int:
    """kb-qa index"""
    from tqdm import tqdm

    from kb_qa.kb.knowledge_base import KnowledgeBase

    settings = settings_for(args)
    # An index this run creates holds nothing when the folder has no Markdown: it is not
    # left behind (a `.kb-qa/` in a web root of hand-written HTML pages).
    created = not settings.chroma_url and not settings.index_path.exists()
    kb = KnowledgeBase(settings=settings)
    bars: dict[str, tqdm] = {}
    tenths: dict[str, int] = {}

    def show(what: str, unit: str, done: int, total: int) -> None:
        """A bar per step on a terminal; in a log, a line as each step starts and at every
        further tenth of a long one (a 7,745-section site said nothing for minutes)."""
        if args.quiet or total == 0:
            return
        bar = bars.get(what)
        if bar is None:
            for other in bars.values():
                other.close()
            bar = tqdm(total=total, unit=unit, desc=what, file=sys.stderr, disable=None)
            bars[what] = bar
            if bar.disable:
                print(f"{what} {total:,} {unit}s …", file=sys.stderr)
                tenths[what] = 0
        tenth = done * 10 // total if total >= 100 else 0
        if bar.disable and tenth > tenths[what]:
            tenths[what] = tenth
            print(f"{what}: {done:,} of {total:,} {unit}s", file=sys.stderr, flush=True)
        bar.n = done
        bar.refresh()
        if done == total:  # each bar's time is its own step's
            bar.close()

    def progress(done: int, total: int) -> None:
        show("Embedding", "chunk", done, total)

    def steps(step: str, done: int, total: int) -> None:
        show(step.capitalize(), "file" if step == "chunking" else "chunk", done, total)

    print(f"Indexing {kb.settings.vault} …", file=sys.stderr)
    try:
        try:  # said first: a rebuild may embed every section for minutes
            why = kb.pending_rebuild()
        except KbQaError:  # a site config that cannot load: the run says so
            why = ""
        if why:
            print(f"Rebuilding the index: {why} …", file=sys.stderr)
            args.stopped = "rebuild"  # what Ctrl-C leaves (cli._INTERRUPTED)
        report = kb.index(progress=progress, steps=steps)
        kept = kept_model(kb)
        prepare_search(kb, report.chunks, args.quiet)
    finally:
        for bar in bars.values():
            bar.close()
        kb.close()
    print(report_summary(report))
    if kept:
        print(kept, file=sys.stderr)
    if not report.files and not report.skipped:
        if created and not report.chunks:
            shutil.rmtree(settings.index_path, ignore_errors=True)
        print(f"kb-qa: {no_markdown(kb.settings.vault, 'nothing to index')}", file=sys.stderr)
        return 1
    if args.strict and (report.warnings or report.skipped):
        # A CI gate, exit 3 as eval's: a job tells a page to fix from a run that failed (1)
        said = f"{len(report.warnings)} warning(s) and {len(report.skipped)} skipped file(s)"
        print(f"kb-qa: --strict: {said}; fix them (listed above) to pass", file=sys.stderr)
        return 3
    return 0


def kept_model(kb: KnowledgeBase) -> str:
    """What to say when ``auto`` keeps a model the index was built with that it would not
    choose for a new index: a user who tried another model and removed the setting found
    the index still on it, every search too (a paid API's, for a litellm model)."""
    from kb_qa.index.embeddings import AUTO_CHOICES, DEFAULT_MODEL, auto_choice_for

    model = kb.store.meta("embed_model")
    if kb.settings.embed_model != "auto" or not model:
        return ""
    if model in AUTO_CHOICES:
        # ... or one auto would not choose now: a German site indexed with MiniLM before auto
        # read a vault's language kept it, silently (its pages, sampled as auto reads them).
        texts = [c.text for c in kb.searchable_chunks()]
        sample = texts[:: max(1, len(texts) // 200)]
        would = auto_choice_for("auto", sample)[0]
        if would == model:
            return ""
        return (
            f"Note: the index keeps the embedding model it was built with, {model}; a new "
            f"index of this vault would use {would} (embed_model is auto). To switch, run "
            f"kb-qa index --embed-model {would} (it embeds every section again)."
        )
    return (
        f"Note: the index keeps the embedding model it was built with, {model} (embed_model "
        f"is auto). To go back to the default, run kb-qa index --embed-model {DEFAULT_MODEL}."
    )


def prepare_search(kb: KnowledgeBase, sections: int, quiet: bool) -> None:
    """Build the search view once here, so that each `kb-qa search` and `ask` reads it:
    when a process that searches (`search`, `ask`, `mcp`, `serve`) saved one before: an
    index nothing else reads costs no view (nor one another process is writing)."""
    from kb_qa.kb import saved_view

    if not sections or kb.store.being_written() or not saved_view.was_read(kb.store.folder):
        return
    if not quiet and not saved_view.is_saved(kb.store.folder, kb.store.meta("generation")):
        print(f"Preparing search over {sections:,} sections …", file=sys.stderr)
    kb.prepare_search()


def cmd_search(args: argparse.Namespace) -> int:
    """kb-qa search"""
    kb = open_index(args)
    try:
        check_inputs(args, kb.settings)
        require_index(kb.stats()["chunks"], kb)
        hits = kb.search(args.question, args.k, include=args.include, exclude=args.exclude)
        if not hits:  # a filter that leaves no page is refused, as the API and MCP do
            from kb_qa.serve.inputs import check_filters

            check_filters(kb, args.include or (), args.exclude or ())
        if args.json:
            from kb_qa.serve.protocol import hit_json

            print(
                json.dumps(
                    [hit_json(kb, n, h) for n, h in enumerate(hits, 1)],
                    ensure_ascii=False,
                    indent=2,
                )
            )
            return 0
        if not hits:
            print("No results.")
        for n, hit in enumerate(hits, 1):
            c = hit.chunk
            snippet = snippet_of(c.text)
            print(f"{n:>2}. {safe_text(' > '.join(c.heading_path))}")
            print(f"    {safe_text(kb.url(c))}  ({safe_text(place_of(c))}, score {hit.score:.4f})")
            print(f"    {safe_text(snippet)}")
    finally:
        kb.close()
    return 0


def cmd_eval(args: argparse.Namespace) -> int:
    """kb-qa eval"""
    from kb_qa.answer import evaluate

    floors = _floors(args.min)  # a mistyped gate is said before anything runs
    kb = open_index(args)
    try:
        chunks = kb.store.chunks()
        stale = require_index(len(chunks), kb)
        questions, warnings = evaluate.read_questions(args.questions, chunks)
        if wrong := evaluate.other_vault(questions, chunks):
            raise ConfigError(f"{args.questions}: {wrong}")
        unknown = evaluate.unknown_gold(questions, chunks)
        warnings += unknown
        for warning in warnings:
            print(f"kb-qa: warning: {args.questions}: {safe_text(warning)}", file=sys.stderr)
        outcomes = evaluate.run(kb, questions, kb.settings)
        result: dict[str, Any] = dict(evaluate.summarize(outcomes))
        settings = evaluate.settings_used(kb)
    finally:
        kb.close()
    # Compared as printed: a figure copied from today's output as the gate passes today.
    failed = [
        f"{key} {result[key]:.3f} < {floor:g}"
        for key, floor in floors
        if round(result[key], 3) < floor
    ]
    if args.strict and unknown:
        failed.append(f"{len(unknown)} gold section(s) not in the index (--strict)")
    args.code = 3 if failed else 0  # said by main if the reader stops before the end
    args.unsaid = [f"kb-qa: eval failed: {why}" for why in failed]
    if args.json:
        result.update(
            warnings=[stale, *warnings] if stale else list(warnings),
            failed=failed,
            settings=settings,
            questions=[_outcome_json(o) for o in outcomes],
        )
        if args.misses:  # as the text lists them (each is in "questions" too)
            result["misses"] = [_outcome_json(o) for o in outcomes if _missed(o)]
        print(json.dumps(result, ensure_ascii=False))
    else:
        _report_eval(args, result, [o for o in outcomes if _missed(o)])
    for why in failed:
        print(f"kb-qa: eval failed: {why}", file=sys.stderr)
    return 3 if failed else 0


def _missed(outcome: Outcome) -> bool:
    """Missed in the top 5."""
    return outcome.rank is None or outcome.rank > 5


def _outcome_json(o: Outcome) -> dict[str, Any]:
    """One question's outcome for ``--json``: its line, the question, its gold, the rank of
    its first gold section and page (null: not in the top 50), whether a model would
    read it, and the first three sections found."""
    return {
        "line": o.question.line,
        "question": o.question.question,
        "gold": [{"path": p, "anchor": a} for p, a in o.question.gold],
        "rank": o.rank,
        "page_rank": o.page_rank,
        "in_prompt": o.in_prompt,
        "got": [
            {"path": h.chunk.path, "anchor": h.chunk.anchor, "heading_path": h.chunk.heading_path}
            for h in o.top
        ],
    }


def _floors(given: Sequence[str]) -> list[tuple[str, float]]:
    """``--min R@5=0.8`` as (metric, floor) pairs; a metric or number misspelt is refused."""
    from kb_qa.answer import evaluate

    known = [f"R@{k}" for k in evaluate.CUTOFFS] + ["MRR@20", "page@5", "in-prompt"]
    floors = []
    for item in given:
        name, _, value = item.partition("=")
        metric = next((k for k in known if k.lower() == name.strip().lower()), None)
        try:
            floor = float(value)
        except ValueError:
            floor = -1.0
        if metric is None or not 0 <= floor <= 1:
            raise ConfigError(
                f"--min {item!r}: write METRIC=VALUE with VALUE from 0 to 1 and METRIC one of "
                f"{', '.join(known)}, e.g. --min R@5=0.8."
            )
        floors.append((metric, floor))
    return floors


def _report_eval(
    args: argparse.Namespace, result: dict[str, Any], misses: Sequence[Outcome]
) -> None:
    """Print eval's figures, and with ``--misses`` each question missed in the top 5."""
    from kb_qa.answer import evaluate

    print(f"{result['n']} questions")
    for key in ("R@1", "R@5", "R@10", "R@20", "R@50", "MRR@20", "page@5", "in-prompt"):
        print(f"  {key:<9} {result[key]:.3f}")
    if args.misses:
        print(f"\n{len(misses)} missed in the top 5:" if misses else "\nNo misses in the top 5.")
        for o in misses:
            gold = ", ".join(evaluate.gold_label(p, a) for p, a in o.question.gold)
            rank = f"rank {o.rank}" if o.rank else f"not in the top {max(evaluate.CUTOFFS)}"
            print(f"- line {o.question.line}: {safe_text(o.question.question)}")
            print(f"    gold {safe_text(gold)} ({rank})")
            for n, h in enumerate(o.top, 1):
                where = f"{h.chunk.path}#{h.chunk.anchor} ({' › '.join(h.chunk.heading_path)})"
                print(f"    got {n}. {safe_text(where)}")


def cmd_ask(args: argparse.Namespace) -> int:
    """kb-qa ask"""
    import asyncio

    kb = open_index(args)
    try:
        check_inputs(args, kb.settings)
        require_index(kb.stats()["chunks"], kb)
        from kb_qa.serve.inputs import check_filters

        check_filters(kb, args.include or (), args.exclude or ())  # else "not covered"
        if kb.settings.model:  # an install without the llm extra says so before searching
            from kb_qa import extras

            extras.litellm(f"The model {kb.settings.model} (KBQA_MODEL or --model)")
        # The answer's own warnings and errors are the server log's; here its error is said
        # once (with -v they are logged as asked).
        if not getattr(args, "verbose", False):
            logging.getLogger("kb_qa.answer").setLevel(logging.CRITICAL)
        if args.json:
            return asyncio.run(_ask_json(kb, args))
        return asyncio.run(_ask(kb, args))
    finally:
        kb.close()


async def _ask_json(kb: KnowledgeBase, args: argparse.Namespace) -> int:
    """``ask --json``: the whole answer as one object, as the library gives it (a script can
    tell "not covered" by ``covered``); a failed answer is said on stderr, exit 1."""
    from kb_qa.answer.events import citation_json
    from kb_qa.answer.library import ask_async

    reply = await ask_async(kb, args.question, include=args.include, exclude=args.exclude)
    whole = {
        "question": args.question,
        "text": reply.text,
        "covered": reply.covered,
        "model": reply.model,
        "citations": [citation_json(c) for c in reply.citations],
    }
    print(json.dumps(whole, ensure_ascii=False, indent=2))
    return 0


def _citation_line(kb: KnowledgeBase, c: Citation, tty: bool) -> str:
    where = " › ".join(c.heading_path) or c.path
    if "://" in c.url:  # a site URL#anchor, or an editor link (link_style)
        place = terminal_link(c.url, c.url, tty)
    else:  # a file (or a site without site_url): link the file, show path:line
        target = (kb.settings.vault / c.path).resolve().as_uri()
        place = terminal_link(target, place_of(c), tty)
    return f"[{c.number}] {safe_text(where)}\n    {place}"


async def _ask(kb: KnowledgeBase, args: argparse.Namespace) -> int:
    from kb_qa.answer.answering import answer
    from kb_qa.answer.events import Citations, Delta, Done, Error, Status
    from kb_qa.answer.uncited import cited_after
    from kb_qa.answer.wording import asked_language

    dumb = os.environ.get("TERM") == "dumb"  # a terminal that shows escapes as text
    tty = sys.stdout.isatty() and not dumb
    colour = sys.stderr.isatty() and not dumb and not os.environ.get("NO_COLOR")  # no-color.org
    dim, plain = ("\033[2m", "\033[0m") if colour else ("", "")
    citations: Sequence[Citation] = ()
    streamed: list[str] = []
    lang = asked_language(args.question)  # what it says around the passages, as it was asked
    asked = answer(kb, args.question, include=args.include, exclude=args.exclude, lang=lang)
    async for event in asked:
        if isinstance(event, Status):
            print(f"{dim}{event.message}{plain}", file=sys.stderr, flush=True)
        elif isinstance(event, Delta):
            streamed.append(event.text)
            if sys.stdout.isatty():  # a pipe or a file gets the finished answer, below
                sys.stdout.write(safe_text(event.text).replace("\r", ""))
                sys.stdout.flush()
        elif isinstance(event, Citations):
            citations = event.citations
        elif isinstance(event, Error):
            if not sys.stdout.isatty():
                sys.stdout.write(safe_text("".join(streamed)).replace("\r", ""))
            print(file=sys.stdout)
            if citations:  # what the part shown cites
                print("\n".join(_citation_line(kb, c, tty) for c in citations))
            detail = f" ({event.detail})" if event.detail else ""
            print(f"kb-qa: {safe_text(event.message + detail)}", file=sys.stderr)
            return 1
        elif isinstance(event, Done):
            if not sys.stdout.isatty():  # as it ended: with the citations added after
                sys.stdout.write(safe_text(event.text).replace("\r", ""))
            if not event.text.endswith("\n"):
                print()
            if citations:
                print()
                print("\n".join(_citation_line(kb, c, tty) for c in citations))
            if sys.stdout.isatty():  # the reply is on screen as it streamed: name what changed
                for sentence in cited_after("".join(streamed), event.text):
                    print(f"{dim}(cited after the reply: {safe_text(sentence)}){plain}")
            how = event.model or "extractive answer"
            print(f"{dim}({how}; {event.timings['total_ms'] / 1000:.1f} s){plain}", file=sys.stderr)
    return 0
