"""The site owner's commands: ``kb-qa feedback``, ``insights`` and ``init``."""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from urllib.parse import urlsplit

from kb_qa.cli.common import safe_text, settings_for
from kb_qa.errors import ConfigError
from kb_qa.settings import Settings


def cmd_feedback(args: argparse.Namespace) -> int:
    """kb-qa feedback"""
    from dataclasses import asdict

    from kb_qa.owners.feedback import FeedbackStore

    items = []
    read: set[Path] = set()  # a folder named twice (two spellings of it) counts once
    for folder in args.index_dir or [None]:  # replicas each keep their own file
        settings = Settings.from_env(args.vault, index_dir=folder)
        _index_folder(settings)
        if settings.index_path.resolve() not in read:
            read.add(settings.index_path.resolve())
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
        print(f"[{mark}] {when}  {_line(item.question)}")
        if item.reason:
            print(f"    reason: {_line(item.reason)}")
        for c in item.citations[:5]:
            heading = c.get("heading_path")
            where = (
                " > ".join(h for h in heading if isinstance(h, str))
                if isinstance(heading, list)
                else ""
            )
            print(f"    cited: {safe_text(where)}  {safe_text(str(c.get('url', '')))}")
    return 0


def _line(value: str) -> str:
    """What a reader wrote, on one line of the terminal (their line breaks shown as marks, so
    they cannot print lines that pass for the command's own) and without control codes."""
    from kb_qa.owners.insights_render import one_line

    return safe_text(one_line(value))


def _index_folder(settings: Settings) -> None:
    """A report reads an index folder: a mistyped one is said, not made and found empty."""
    if not settings.index_path.is_dir():
        raise ConfigError(
            f"There is no index folder at {settings.index_path}: check --index-dir or "
            "KBQA_INDEX_DIR (the folder `kb-qa serve` was given), or the vault."
        )


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
    if args.check and _plugin_wires(plan.root, plan.kind):
        print(
            f"{plan.root} ({plan.kind}) has the kb-qa MkDocs plugin: built by MkDocs or "
            "ProperDocs it gets the chat from the plugin, and this check does not apply (drop "
            "it from that CI job). Built by Zensical or MkDocs 2.0, which run no plugins, it "
            "is not wired up: run `kb-qa init` on it.",
            file=sys.stderr,
        )
        return 1
    if args.check:
        changed = ", ".join(c.path.relative_to(plan.root).as_posix() for c in plan.changes)
        print(
            f"{plan.root} ({plan.kind}) is not wired up (or is out of date): {changed} would "
            "change. Run `kb-qa init` on it.",
            file=sys.stderr,
        )
        return 1
    sys.stdout.write(safe_text(plan.diff()))
    if args.dry_run:
        print(f"(dry run: nothing written; {len(plan.changes)} file(s) would change)")
        return 0
    plan.apply()
    print(f"Wired {plan.root} ({plan.kind}): {len(plan.changes)} file(s) written.")
    print(_next_step(plan.root, plan.kind, plan.preview))
    return 0


def _plugin_wires(root: Path, kind: str) -> bool:
    """Whether the site's MkDocs or ProperDocs config has the kb-qa plugin (a CI's `init
    --check` on such a site said "not wired up", whichever generator builds it)."""
    from kb_qa.wiring import yaml_edit
    from kb_qa.wiring.options import plugin_options

    if "zensical" in kind:
        return False
    for name in ("mkdocs.yml", "mkdocs.yaml", "properdocs.yml"):
        if (path := root / name).is_file():
            data = yaml_edit.load(path.read_text(encoding="utf-8", errors="replace"), str(path))
            return plugin_options(data) is not None
    return False


def _next_step(root: Path, kind: str, preview: str) -> str:
    """What answers the chat once a site is wired: the pages only ask `kb-qa serve`, the
    preview's chat at ``preview`` (``--preview-endpoint``)."""
    from kb_qa.wiring.plan import MIKE_TREE

    # Without KBQA_SITE_VERSION, a cron `kb-qa index` on 1.0's checkout made every link its
    # server prints open under the default version (/latest/), whose pages say otherwise.
    if kind == MIKE_TREE:
        return (
            "Next: the chat's answers come from one `kb-qa serve` per version, each on the "
            "checkout that version was built from, with KBQA_SITE_VERSION set to the version's "
            "folder (for every `kb-qa index`, `watch` and `serve` there: the index's links are "
            "made with it) and KBQA_CORS_ORIGINS to the site's origin."
        )
    if kind == "html":
        return (
            "Next: the chat's answers come from `kb-qa serve` on the Markdown these pages were "
            "built from, with KBQA_CORS_ORIGINS set to the site's origin."
        )
    from kb_qa.serve.serving import LOOPBACK

    address = urlsplit(preview)
    given = address.port and address.port != Settings.port  # not `kb-qa serve`'s own
    port = f" --port {address.port}" if given else ""
    where = "" if address.hostname in LOOPBACK else f" where {preview} reaches it"
    step = (
        f"Next: the chat's answers come from `kb-qa serve`: run `kb-qa serve {root} --watch"
        f"{port}` beside your preview{where} (the preview's chat asks {preview})."
    )
    if "zensical" not in kind:
        step += " On MkDocs 1.x or ProperDocs, `- kb-qa` under `plugins:` has `mkdocs serve` "
        step += "run it."
    return step


def cmd_insights(args: argparse.Namespace) -> int:
    """kb-qa insights"""
    from kb_qa.owners import insights, insights_csv, insights_html, insights_render
    from kb_qa.owners.feedback import FeedbackStore
    from kb_qa.owners.private_files import write_private
    from kb_qa.owners.questionlog import QuestionLog

    if args.forget is not None:
        return _forget(args)
    if args.dry_run:
        raise ConfigError("--dry-run goes with --forget TEXT: the report deletes nothing.")
    if args.html and (args.csv or args.questions_csv):
        raise ConfigError(
            "--html writes the report, --csv and --questions-csv print rows of the log: run "
            "them as two commands."
        )
    now = time.time()
    since = insights.parse_since(args.since, now) if args.since else None
    settings = settings_for(args)
    _index_folder(settings)
    # A report only reads: the server applies the retention (at its start, every hour). Run
    # here, it deleted rows by this shell's settings, not the server's (its default 90 days
    # against a server told to keep everything), without a word.
    log = QuestionLog(settings.index_path, settings.question_log_days)
    if args.csv:
        ratings = FeedbackStore(settings.index_path).all(since=since)
        insights_csv.write_csv(log.entries(since), ratings, sys.stdout)
        return 0
    from kb_qa.kb.knowledge_base import (
        KnowledgeBase,  # slow to import (Chroma): not needed for --csv
    )

    kb = KnowledgeBase(settings=settings)
    try:
        if args.questions_csv:
            insights_csv.write_questions_csv(
                insights.top_questions(kb, settings, since, log), sys.stdout
            )
            return 0
        report = insights.build(kb, settings, since, log, now)
    finally:
        kb.close()
    if args.html:
        try:
            write_private(args.html, insights_html.page(report))  # readers' words: 0600
        except OSError as exc:
            raise ConfigError(
                f"Cannot write the report to {args.html}: {exc.strerror}. Give --html a file "
                "in a folder you can write to."
            ) from exc
        print(f"Wrote {args.html}", file=sys.stderr)
    if args.json:
        print(json.dumps(report, ensure_ascii=False, indent=2))
    elif not args.html:
        print(insights_render.text(report, safe_text))
    return 0


def _forget(args: argparse.Namespace) -> int:
    """kb-qa insights --forget TEXT"""
    from kb_qa.owners.forget import forget

    if args.html or args.since:
        raise ConfigError("--forget deletes from the whole log: it takes no --html or --since.")
    settings = settings_for(args)
    _index_folder(settings)
    text = safe_text(args.forget.strip())
    gone = forget(settings.index_path, args.forget, dry_run=args.dry_run)
    if args.dry_run:
        print(
            f"Would delete {gone.questions} logged question(s), {gone.ratings} rating(s) and "
            f"{gone.embeddings} stored embedding(s) holding {text!r} from "
            f"{settings.index_path}; nothing was deleted."
        )
        if gone.examples:
            print("Logged questions it would delete:")
            print("\n".join(f"  {_line(q)}" for q in gone.examples))
            if gone.questions > len(gone.examples):
                print(f"  … and {gone.questions - len(gone.examples)} more")
        if gone.rated:
            print("Ratings it would delete (the question rated, then the reader's reason):")
            for rating, question, reason in gone.rated:
                print(f"  [{rating}] {_line(question)}" + (f" · {_line(reason)}" if reason else ""))
            if gone.ratings > len(gone.rated):
                print(f"  … and {gone.ratings - len(gone.rated)} more")
        return 0
    print(
        f"Deleted {gone.questions} logged question(s), {gone.ratings} rating(s) and "
        f"{gone.embeddings} stored embedding(s) holding {text!r} from {settings.index_path}."
    )
    if not gone.log_emptied:
        print(
            "The database's write-ahead log is in use (a server is reading it): the deleted "
            "text leaves it at the server's next checkpoint, or when it stops.",
            file=sys.stderr,
        )
    return 0
