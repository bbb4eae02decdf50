"""The ``kb-qa`` command: index, search and evaluate a Markdown vault.

Errors a user can act on are printed as one message without a traceback (exit 1);
Ctrl-C stops cleanly (exit 130) and leaves a usable index.
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import re
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from kb_qa.errors import ConfigError, IndexStateError, KbQaError
from kb_qa.settings import Settings
from kb_qa.types import Chunk, IndexReport


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the console script."""
    parser = _parser()
    args = parser.parse_args(argv)
    logging.basicConfig(
        level=logging.INFO if getattr(args, "verbose", False) else logging.WARNING,
        format="%(levelname)s %(name)s: %(message)s",
    )
    try:
        return int(args.func(args) or 0)
    except KbQaError as exc:
        print(f"kb-qa: {exc}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print(
            "\nkb-qa: interrupted. The index keeps everything written so far; run the same "
            "command again to finish.",
            file=sys.stderr,
        )
        return 130


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="kb-qa", description="Grounded Q&A over Markdown.")
    sub = parser.add_subparsers(dest="command", required=True)

    p = sub.add_parser("index", help="index (or update the index of) a vault")
    p.add_argument("vault", nargs="?", default=None, help="vault folder (default: KBQA_VAULT or .)")
    _common(p)
    p.add_argument("--quiet", action="store_true", help="no progress bar")
    p.set_defaults(func=cmd_index)

    p = sub.add_parser("search", help="search the index")
    p.add_argument("question")
    p.add_argument("--vault", default=None)
    p.add_argument("--k", type=int, default=None, help="number of results (default 10)")
    p.add_argument("--include", action="append", default=[], help="only these paths/globs")
    p.add_argument("--exclude", action="append", default=[], help="not these paths/globs")
    p.add_argument("--json", action="store_true", help="print JSON")
    _common(p)
    p.set_defaults(func=cmd_search)

    p = sub.add_parser("eval", help="measure retrieval on a JSONL question set")
    p.add_argument("questions", type=Path)
    p.add_argument("--vault", default=None)
    p.add_argument("--json", action="store_true", help="print one JSON object")
    p.add_argument("--misses", action="store_true", help="list questions missed in the top 5")
    _common(p)
    p.set_defaults(func=cmd_eval)

    p = sub.add_parser("ask", help="answer a question from the vault, citing its sources")
    p.add_argument("question")
    p.add_argument("--vault", default=None)
    p.add_argument("--include", action="append", default=[], help="only these paths/globs")
    p.add_argument("--exclude", action="append", default=[], help="not these paths/globs")
    _answering(p)
    _common(p)
    p.set_defaults(func=cmd_ask)

    p = sub.add_parser(
        "serve",
        help="index the vault, then serve the HTTP API (with --chroma-url and --workspace "
        "and no vault: a read-only replica)",
    )
    p.add_argument(
        "vault",
        nargs="?",
        default=None,
        help="vault folder (default: KBQA_VAULT or .; none with --chroma-url and --workspace: "
        "serve that workspace read-only)",
    )
    p.add_argument("--host", default=None, help="address to listen on (default 127.0.0.1)")
    p.add_argument("--port", type=int, default=None, help="port (default 8321)")
    p.add_argument("--watch", action="store_true", help="re-index files as they change")
    _answering(p)
    _common(p)
    p.set_defaults(func=cmd_serve)

    p = sub.add_parser("watch", help="index the vault and keep the index current as files change")
    p.add_argument("vault", nargs="?", default=None, help="vault folder (default: KBQA_VAULT or .)")
    _common(p)
    p.set_defaults(func=cmd_watch)

    p = sub.add_parser("feedback", help="show readers' thumbs up/down on answers")
    p.add_argument("vault", nargs="?", default=None, help="vault folder (default: KBQA_VAULT or .)")
    p.add_argument("--rating", default="", help="only 'up' or only 'down'")
    p.add_argument("--json", action="store_true", help="print JSON lines")
    p.add_argument(
        "--index-dir",
        action="append",
        default=[],
        help="index folder (default <vault>/.kb-qa); repeat it to read several, e.g. each "
        "replica's",
    )
    p.set_defaults(func=cmd_feedback)

    p = sub.add_parser(
        "init", help="wire the chat widget into a site (zensical.toml, mkdocs.yml or HTML pages)"
    )
    p.add_argument("site", nargs="?", default=".", help="site folder (default: .)")
    p.add_argument("--endpoint", default=None, help="URL of the kb-qa API the site will use")
    p.add_argument("--title", default=None, help="the chat's title")
    p.add_argument(
        "--suggested",
        action="append",
        default=None,
        help="a suggested question (repeat for more)",
    )
    p.add_argument(
        "--preview-endpoint",
        default=None,
        help="the API while the site is previewed on this machine (default "
        "http://127.0.0.1:8321, where `kb-qa serve` listens)",
    )
    mode = p.add_mutually_exclusive_group()
    mode.add_argument("--dry-run", action="store_true", help="print the changes, write nothing")
    mode.add_argument("--check", action="store_true", help="exit 1 if the site is not wired up")
    p.set_defaults(func=cmd_init)

    p = sub.add_parser("insights", help="what readers asked: coverage gaps, citations, speed")
    p.add_argument("vault", nargs="?", default=None, help="vault folder (default: KBQA_VAULT or .)")
    p.add_argument(
        "--since", default="", help="only questions this recent: 7d, 24h, 30m, 2w or 2026-11-30"
    )
    p.add_argument("--json", action="store_true", help="print the report as JSON")
    p.add_argument("--html", type=Path, default=None, metavar="FILE", help="write an HTML report")
    p.add_argument("--csv", action="store_true", help="print the raw question log as CSV")
    p.add_argument(
        "--questions-csv",
        action="store_true",
        help="print the top questions (near-duplicates merged) as CSV",
    )
    _common(p)
    p.set_defaults(func=cmd_insights)

    p = sub.add_parser("mcp", help="serve search_docs and ask_docs to AI tools over MCP (stdio)")
    p.add_argument("vault", nargs="?", default=None, help="vault folder (default: KBQA_VAULT or .)")
    p.add_argument("--watch", action="store_true", help="re-index files as they change")
    _answering(p)
    _common(p)
    p.set_defaults(func=cmd_mcp)
    return parser


def _answering(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--model",
        default=None,
        help="litellm model, e.g. gpt-4o-mini or "
        "openai/NAME for an OpenAI-compatible server (default: extractive answers)",
    )
    p.add_argument("--api-base", default=None, help="API base URL of the model's server")


def _common(p: argparse.ArgumentParser) -> None:
    p.add_argument("--index-dir", default=None, help="index folder (default <vault>/.kb-qa)")
    p.add_argument(
        "--chroma-url", default=None, help="use a Chroma server, e.g. http://127.0.0.1:8000"
    )
    p.add_argument(
        "--workspace",
        default=None,
        help="name of the index on Chroma (default: site_name, else the vault folder's name)",
    )
    p.add_argument(
        "--embed-model",
        default=None,
        help="auto, minilm, e5-multilingual, hash, or a litellm model",
    )
    p.add_argument("--chunk-chars", type=int, default=None, help="maximum characters per chunk")
    p.add_argument("-v", "--verbose", action="store_true", help="log what happens")


def _settings(args: argparse.Namespace) -> Settings:
    return Settings.from_env(
        args.vault,
        index_dir=args.index_dir,
        chroma_url=args.chroma_url,
        workspace=args.workspace,
        embed_model=args.embed_model,
        chunk_chars=args.chunk_chars,
        model=getattr(args, "model", None),
        api_base=getattr(args, "api_base", None),
        host=getattr(args, "host", None),
        port=getattr(args, "port", None),
    )


def _open(args: argparse.Namespace) -> Any:
    from kb_qa.kb.knowledge_base import KnowledgeBase

    return KnowledgeBase(settings=_settings(args))


def cmd_index(args: argparse.Namespace) -> int:
    """kb-qa index"""
    from tqdm import tqdm

    kb = _open(args)
    bar: tqdm | None = None

    def progress(done: int, total: int) -> None:
        nonlocal bar
        if args.quiet or total == 0:
            return
        if bar is None:
            bar = tqdm(total=total, unit="chunk", desc="Embedding", file=sys.stderr)
        bar.n = done
        bar.refresh()

    print(f"Indexing {kb.settings.vault} …", file=sys.stderr)
    try:
        report = kb.index(progress=progress)
    finally:
        if bar is not None:
            bar.close()
        kb.close()
    print(_summary(report))
    return 0


def _summary(report: IndexReport) -> str:
    lines = []
    if report.rebuilt:
        lines.append(f"Rebuilt: {report.rebuilt}")
    if report.repaired:
        lines.append(f"Repaired: {report.repaired}")
    lines.append(
        f"Indexed {report.files} files, {report.chunks} chunks in {report.seconds:.1f} s "
        f"({report.changed_files} files changed; {report.embedded} chunks embedded, "
        f"{report.reused} reused, {report.deleted} deleted)."
    )
    if report.embedded:  # a run that did real work says where its time went
        lines.append(f"Time: {report.spent}.")
    if report.warnings:
        lines.append(f"{len(report.warnings)} warning(s):")
        lines += [f"  {_safe(path)}: {message}" for path, message in report.warnings]
    if report.skipped:
        lines.append(f"Skipped {len(report.skipped)} file(s):")
        lines += [f"  {_safe(path)}: {reason}" for path, reason in report.skipped]
    return "\n".join(lines)


def _require_index(chunks: int) -> None:
    if not chunks:
        raise IndexStateError("the index is empty. Run `kb-qa index` on the vault first.")


def cmd_search(args: argparse.Namespace) -> int:
    """kb-qa search"""
    kb = _open(args)
    try:
        _check_inputs(args, kb.settings)
        _require_index(kb.stats()["chunks"])
        hits = kb.search(args.question, args.k, include=args.include, exclude=args.exclude)
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
            snippet = _snippet(c.text)
            print(f"{n:>2}. {_safe(' > '.join(c.heading_path))}")
            print(f"    {_safe(kb.url(c))}  ({_safe(_place(c))}, score {hit.score:.4f})")
            print(f"    {_safe(snippet)}")
    finally:
        kb.close()
    return 0


def cmd_eval(args: argparse.Namespace) -> int:
    """kb-qa eval"""
    from kb_qa.answer import evaluate

    kb = _open(args)
    try:
        chunks = kb.store.chunks()
        _require_index(len(chunks))
        questions = evaluate.load_questions(args.questions, chunks)
        for warning in evaluate.unknown_gold(questions, chunks):
            print(f"kb-qa: warning: {args.questions}: {_safe(warning)}", file=sys.stderr)
        outcomes = evaluate.run(kb, questions, kb.settings)
        result = evaluate.summarize(outcomes)
    finally:
        kb.close()
    if args.json:
        print(json.dumps(result))
        return 0
    print(f"{result['n']} questions")
    for key in ("R@1", "R@5", "R@10", "R@20", "R@50", "MRR@20", "page@5", "in-prompt"):
        print(f"  {key:<9} {result[key]:.3f}")
    if args.misses:
        misses = [o for o in outcomes if o.rank is None or o.rank > 5]
        print(f"\n{len(misses)} missed in the top 5:" if misses else "\nNo misses in the top 5.")
        for o in misses:
            gold = ", ".join(evaluate.gold_label(p, a) for p, a in o.question.gold)
            rank = f"rank {o.rank}" if o.rank else f"not in the top {max(evaluate.CUTOFFS)}"
            print(f"- {_safe(o.question.question)}\n    gold {_safe(gold)} ({rank})")
            for n, h in enumerate(o.top, 1):
                print(f"    got {n}. {_safe(h.chunk.path)}#{_safe(h.chunk.anchor)}")
    return 0


def cmd_ask(args: argparse.Namespace) -> int:
    """kb-qa ask"""
    import asyncio

    kb = _open(args)
    try:
        _check_inputs(args, kb.settings)
        _require_index(kb.stats()["chunks"])
        return asyncio.run(_ask(kb, args))
    finally:
        kb.close()


def _check_inputs(args: argparse.Namespace, settings: Settings) -> None:
    """The HTTP API's rules for a question, k and path filters (kb_qa.serve.inputs)."""
    from kb_qa.serve import inputs

    args.question = inputs.question(args.question, settings)
    if getattr(args, "k", None) is not None:
        inputs.count(args.k)
    inputs.patterns(args.include, "--include")
    inputs.patterns(args.exclude, "--exclude")


# Control characters (ESC above all) from a document or the model must not drive the terminal.
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")


def _safe(text: str) -> str:
    return _CONTROL.sub("", text)


def _link(target: str, text: str, tty: bool) -> str:
    """An OSC 8 hyperlink: clickable in most terminals, plain text elsewhere."""
    if not tty:
        return text
    return f"\033]8;;{_safe(target)}\033\\{_safe(text)}\033]8;;\033\\"


def _citation_line(kb: Any, c: Any, tty: bool) -> str:
    where = " › ".join(c.heading_path) or c.path
    if "://" in c.url:  # a site URL#anchor, or an editor link (link_style)
        place = _link(c.url, c.url, tty)
    else:  # a file (or a site without site_url): link the file, show path:line
        target = (kb.settings.vault / c.path).resolve().as_uri()
        place = _link(target, _place(c), tty)
    return f"[{c.number}] {_safe(where)}\n    {place}"


async def _ask(kb: Any, args: argparse.Namespace) -> int:
    from kb_qa.answer.answering import answer

    tty = sys.stdout.isatty() and os.environ.get("TERM") != "dumb"
    dim, plain = ("\033[2m", "\033[0m") if sys.stderr.isatty() else ("", "")
    citations: Sequence[Any] = ()
    async for event in answer(kb, args.question, include=args.include, exclude=args.exclude):
        if event.name == "status":
            print(f"{dim}{event.message}{plain}", file=sys.stderr, flush=True)
        elif event.name == "delta":
            sys.stdout.write(_safe(event.text).replace("\r", ""))
            sys.stdout.flush()
        elif event.name == "citations":
            citations = event.citations
        elif event.name == "error":
            print(file=sys.stdout)
            detail = f" ({event.detail})" if event.detail else ""
            print(f"kb-qa: {_safe(event.message + detail)}", file=sys.stderr)
            return 1
        elif event.name == "done":
            if not event.text.endswith("\n"):
                print()
            if citations:
                print()
                print("\n".join(_citation_line(kb, c, tty) for c in citations))
            how = event.model or "extractive answer"
            print(f"{dim}({how}; {event.timings['total_ms'] / 1000:.1f} s){plain}", file=sys.stderr)
    return 0


def cmd_serve(args: argparse.Namespace) -> int:
    """kb-qa serve"""
    import uvicorn

    from kb_qa.serve.app import create_app
    from kb_qa.serve.serving import LOOPBACK, uvicorn_options

    if _is_replica(args):
        kb, log, watcher = _open_replica(args), logging.getLogger("kb_qa.serve"), None
        s = kb.settings
    else:
        kb, log = _open_indexed(args, "kb_qa.serve")
        watcher = _start_watcher(kb, log) if args.watch else None
        s = _with_preview_origins(kb.settings, log)
    if s.host not in LOOPBACK and not s.api_token:
        log.warning(
            "listening on %s without api_token (KBQA_API_TOKEN): anyone who can reach this "
            "address can use the API",
            s.host,
        )
    if s.host not in LOOPBACK and not s.allowed_hosts:
        log.warning(
            "listening on %s: requests are answered only for loopback names and IP addresses "
            "in their Host header; set allowed_hosts (KBQA_ALLOWED_HOSTS) to the names this "
            "server is reached by",
            s.host,
        )
    try:
        uvicorn.run(
            create_app(kb, watcher=watcher, settings=s),
            host=s.host,
            port=s.port,
            log_config=None,
            **uvicorn_options(s),
        )
    finally:
        if watcher is not None:
            watcher.stop()
        kb.close()
    return 0


def _with_preview_origins(settings: Settings, log: logging.Logger) -> Settings:
    """On loopback with no cors_origins, allow the site generator's local preview (e.g.
    `zensical serve` at localhost:8000) to call the API: the preview runs on another port."""
    from kb_qa.ingest.site import load_site
    from kb_qa.serve.serving import LOOPBACK, preview_origins

    if settings.cors_origins or settings.host not in LOOPBACK:
        return settings
    site = load_site(settings.vault, settings.generator, render=settings.render)
    if not site.dev_addr:
        return settings
    origins = preview_origins(site.dev_addr)
    log.info(
        "allowing the preview of %s at %s to call the API (set cors_origins to choose)",
        site.config_name,
        ", ".join(origins),
    )
    return settings.replace(cors_origins=origins)


def _is_replica(args: argparse.Namespace) -> bool:
    """`serve` with a Chroma server and a workspace but no vault: a read-only replica."""
    settings = _settings(args)
    no_vault = args.vault is None and not os.environ.get("KBQA_VAULT")
    return no_vault and bool(settings.chroma_url and settings.workspace)


def _open_replica(args: argparse.Namespace) -> Any:
    from kb_qa.serve.replica import Replica

    _plain_logs()
    if args.watch:
        raise IndexStateError(
            "A read-only replica (no vault, --chroma-url and --workspace) cannot --watch: run "
            "`kb-qa watch VAULT` with the same --chroma-url and --workspace as the writer."
        )
    return Replica(_settings(args)).start()


def _open_indexed(args: argparse.Namespace, name: str) -> tuple[Any, logging.Logger]:
    """For long-running commands: plain logs, then the knowledge base brought up to date."""
    _plain_logs()
    kb = _open(args)
    log = logging.getLogger(name)
    log.info("indexing %s", kb.settings.vault)
    from kb_qa.serve.serving import progress_logger

    log.info("%s", _summary(kb.index(progress=progress_logger(log))))
    return kb, log


def _start_watcher(kb: Any, log: logging.Logger) -> Any:
    from kb_qa.ingest.watch import Watcher

    log.info("watching %s for changes", kb.settings.vault)
    return Watcher(kb).start(initial=False)


def _plain_logs() -> None:
    # Plain, timestamped lines for a long-running process; chatty libraries stay quiet.
    logging.basicConfig(
        level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s: %(message)s", force=True
    )
    for name in ("httpx", "LiteLLM", "chromadb", "mcp"):
        logging.getLogger(name).setLevel(logging.WARNING)


def cmd_watch(args: argparse.Namespace) -> int:
    """kb-qa watch"""
    kb, log = _open_indexed(args, "kb_qa.ingest.watch")
    watcher = _start_watcher(kb, log)
    try:
        while True:
            time.sleep(3600)
    finally:
        watcher.stop()
        kb.close()


def cmd_feedback(args: argparse.Namespace) -> int:
    """kb-qa feedback"""
    from dataclasses import asdict

    from kb_qa.owners.feedback import FeedbackStore

    items = []
    for folder in args.index_dir or [None]:  # replicas each keep their own file
        settings = Settings.from_env(args.vault, index_dir=folder)
        items += FeedbackStore(settings.index_path).all(args.rating)
    items.sort(key=lambda item: item.at, reverse=True)
    if args.json:
        for item in items:
            print(json.dumps(asdict(item), ensure_ascii=False))
        return 0
    if not items:
        print("No feedback yet.")
        return 0
    down = sum(1 for i in items if i.rating == "down")
    print(f"{len(items)} ratings: {len(items) - down} up, {down} down (newest first)\n")
    for item in items:
        when = time.strftime("%Y-%m-%d %H:%M", time.localtime(item.at))
        mark = "+" if item.rating == "up" else "-"
        print(f"[{mark}] {when}  {_safe(item.question)}")
        if item.reason:
            print(f"    reason: {_safe(item.reason)}")
        for c in item.citations[:5]:
            heading = c.get("heading_path")
            where = (
                " > ".join(h for h in heading if isinstance(h, str))
                if isinstance(heading, list)
                else ""
            )
            print(f"    cited: {_safe(where)}  {_safe(str(c.get('url', '')))}")
    return 0


def cmd_init(args: argparse.Namespace) -> int:
    """kb-qa init"""
    from kb_qa.wiring import plan as wiring

    root = Path(args.site)
    plan = wiring.plan(
        root,
        endpoint=args.endpoint,
        title=args.title,
        suggested_questions=args.suggested,
        preview_endpoint=args.preview_endpoint,
    )
    if not plan.changes:
        print(f"{plan.root} ({plan.kind}) is wired up already: nothing to change.")
        return 0
    if not args.check:
        plan.check()  # what would stop the writes, said before the diff (--dry-run too)
    if args.check:
        changed = ", ".join(c.path.relative_to(plan.root).as_posix() for c in plan.changes)
        print(
            f"{plan.root} ({plan.kind}) is not wired up (or is out of date): {changed} would "
            "change. Run `kb-qa init` on it.",
            file=sys.stderr,
        )
        return 1
    sys.stdout.write(_safe(plan.diff()))
    if args.dry_run:
        print(f"(dry run: nothing written; {len(plan.changes)} file(s) would change)")
        return 0
    plan.apply()
    print(f"Wired {plan.root} ({plan.kind}): {len(plan.changes)} file(s) written.")


def cmd_insights(args: argparse.Namespace) -> int:
    """kb-qa insights"""
    import sqlite3

    from kb_qa.owners import insights, insights_render
    from kb_qa.owners.feedback import FeedbackStore
    from kb_qa.owners.questionlog import DB_NAME, QuestionLog

    now = time.time()
    since = insights.parse_since(args.since, now) if args.since else None
    settings = _settings(args)
    log = QuestionLog(settings.index_path, settings.question_log_days)
    if (settings.index_path / DB_NAME).exists():
        try:  # a server that has not run for a while has not applied the retention
            log.prune(now)
        except (OSError, sqlite3.Error) as exc:
            logging.getLogger("kb_qa.owners.insights").warning("retention not applied: %s", exc)
    if args.csv:
        ratings = FeedbackStore(settings.index_path).all(since=since)
        insights.write_csv(log.entries(since), ratings, sys.stdout)
        return 0
    from kb_qa.kb.knowledge_base import (
        KnowledgeBase,  # slow to import (Chroma): not needed for --csv
    )

    kb = KnowledgeBase(settings=settings)
    try:
        if args.questions_csv:
            insights.write_questions_csv(
                insights.top_questions(kb, settings, since, log), sys.stdout
            )
            return 0
        report = insights.build(kb, settings, since, log, now)
    finally:
        kb.close()
    if args.html:
        try:
            args.html.write_text(insights_render.page(report), encoding="utf-8")
        except OSError as exc:
            raise ConfigError(
                f"Cannot write the report to {args.html}: {exc.strerror}. Give --html a file "
                "in a folder you can write to."
            ) from exc
        print(f"Wrote {args.html}", file=sys.stderr)
    if args.json:
        print(json.dumps(report, ensure_ascii=False, indent=2))
    elif not args.html:
        print(insights_render.text(report, _safe))
    return 0


def cmd_mcp(args: argparse.Namespace) -> int:
    """kb-qa mcp"""
    from kb_qa.serve.mcp_server import serve_stdio

    # stdout carries the protocol: every log line goes to stderr.
    logging.basicConfig(level=logging.WARNING, stream=sys.stderr, force=True)
    kb = _open(args)
    report = kb.index()
    print(_summary(report), file=sys.stderr)
    watcher = _start_watcher(kb, logging.getLogger("kb_qa.mcp")) if args.watch else None
    try:
        serve_stdio(kb)
    finally:
        if watcher is not None:
            watcher.stop()
        kb.close()
    return 0


def _snippet(markdown: str, limit: int = 200) -> str:
    """A section's opening words as a reader sees them: its heading (printed above it),
    attribute lists such as ``{ #id }`` and setext underlines left out."""
    from kb_qa.answer.extractive import passages

    words = " ".join(" ".join(b.text.split()) for b in passages(markdown))
    return words[:limit]


def _place(chunk: Chunk) -> str:
    """``path:line``, or the path alone for text a site generated (no line in the file)."""
    return f"{chunk.path}:{chunk.line_start}" if chunk.line_start else chunk.path
