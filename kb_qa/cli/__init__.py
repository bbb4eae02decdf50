"""The ``kb-qa`` command: the stages out to the command line.

Takes the command line and gives the commands, by group: over the index (``indexing``:
``index``, ``search``, ``eval``, ``ask``), serving (``serving``: ``serve``, ``watch``,
``mcp``) and the site owner's (``owners``: ``feedback``, ``insights``, ``init``), with what
they share in ``common``. This module holds the argument parser and ``main``, the console
script's entry point (``kb_qa.cli:main``).

Errors a user can act on are printed as one message without a traceback (exit 1), and so
is a file the system refuses (permissions, a full disk); another process writing the index
is exit 75 (try again later); Ctrl-C stops cleanly (exit 130; ``serve`` shuts down as on
SIGTERM, exit 0) and leaves a usable index.
"""

from __future__ import annotations

import argparse
import codecs
import io
import logging
import os
import sqlite3
import sys
from collections.abc import Sequence
from pathlib import Path

from kb_qa import __version__
from kb_qa.cli.common import check_arguments
from kb_qa.cli.indexing import cmd_ask, cmd_eval, cmd_index, cmd_search
from kb_qa.cli.owners import cmd_feedback, cmd_init, cmd_insights
from kb_qa.cli.serving import cmd_mcp, cmd_serve, cmd_watch
from kb_qa.errors import USE_UTF8_LOCALE, IndexBusyError, KbQaError, database_failed

EXIT_BUSY = 75  # sysexits' EX_TEMPFAIL: another process writes the index, try again later

# What Ctrl-C leaves, by command
_INTERRUPTED = {
    "index": "interrupted. The index keeps everything written so far; run the same command "
    "again to finish.",
    "watch": "stopped. The index keeps everything written so far; the next `kb-qa watch` or "
    "`kb-qa index` catches up with what changed meanwhile.",
    "rebuild": "interrupted during a rebuild: the index holds only what was written so far "
    "(a rebuild begins by emptying it); run the same command again to finish.",
    "serve": "stopped before the index was built. It keeps everything written so far; the next "
    "start catches up.",
}


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the console script."""
    parser = _parser()
    args = parser.parse_args(argv)
    logging.basicConfig(
        level=logging.INFO if getattr(args, "verbose", False) else logging.WARNING,
        format="%(levelname)s %(name)s: %(message)s",
    )
    # A stream closed by the caller (`2>&-`, `>&-`) is None: print(file=None) wrote errors
    # into stdout's JSON, and flushing None was a traceback.
    for name in ("stdout", "stderr"):
        if getattr(sys, name) is None:
            setattr(sys, name, open(os.devnull, "w", encoding="utf-8"))
    if args.command == "mcp" and sys.stdin is None:
        said = "mcp talks to its client over standard input, which is closed."
        print(f"kb-qa: {said}", file=sys.stderr)
        return 1
    # A terminal that is not UTF-8 (cp1252, latin-1) shows what it cannot print as "?"
    # rather than stopping an answer in Chinese with a UnicodeEncodeError; output for
    # scripts (JSON, CSV) is UTF-8 whatever the locale, never "?" in place of a heading.
    machine = any(getattr(args, flag, False) for flag in ("json", "csv", "questions_csv"))
    if isinstance(sys.stdout, io.TextIOWrapper):
        sys.stdout.reconfigure(errors="replace", encoding="utf-8" if machine else None)
    try:
        check_arguments(args)
        code = int(args.func(args) or 0)
        sys.stdout.flush()  # a reader that stopped early is found here, not at exit
        if argv is None and args.command == "serve":
            _exit_now(code)
        return code
    except IndexBusyError as exc:
        print(f"kb-qa: {exc}", file=sys.stderr)
        return EXIT_BUSY
    except KbQaError as exc:
        print(f"kb-qa: {exc}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        said = _INTERRUPTED.get(getattr(args, "stopped", args.command), "interrupted.")
        print(f"\nkb-qa: {said}", file=sys.stderr)
        return 130
    except PermissionError as exc:
        where = f": {exc.filename}" if exc.filename else ""
        print(f"kb-qa: permission denied{where}. Check who owns it and its mode.", file=sys.stderr)
        return 1
    except sqlite3.Error as exc:  # the manifest or Chroma's database, read-only or broken
        print(f"kb-qa: {database_failed(exc)}", file=sys.stderr)
        return 1
    except UnicodeEncodeError:
        # A file name from the index that this locale cannot encode (indexed under UTF-8)
        if codecs.lookup(sys.getfilesystemencoding()).name != "utf-8":
            print(
                f"kb-qa: this locale ({sys.getfilesystemencoding()}) cannot name some of the "
                f"vault's files: {USE_UTF8_LOCALE}.",
                file=sys.stderr,
            )
            return 1
        raise
    except BrokenPipeError:
        # Whoever read the output stopped (`kb-qa insights --csv | head -1`): so do we,
        # quietly. stdout goes to /dev/null so that Python's own flush at exit is silent.
        # What the command had decided stands: a failed eval gate read by `head` exited 0.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        for line in getattr(args, "unsaid", ()):
            print(line, file=sys.stderr)
        return int(getattr(args, "code", 0))


def _exit_now(code: int) -> None:
    """End a process whose command is done and has closed everything it wrote (a stopped
    `serve`), without Python's teardown: freeing Chroma's, ONNX Runtime's and litellm's
    modules took 2-4 s after the server had finished, and with an answer's grace a stop
    then outlasted Docker's 10 s before it kills (`python bench/cli_speed.py --stop`)."""
    logging.shutdown()
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="kb-qa", description="Grounded Q&A over Markdown.")
    parser.add_argument("--version", action="version", version=f"kb-qa {__version__}")
    sub = parser.add_subparsers(dest="command", required=True)

    p = sub.add_parser("index", help="index (or update the index of) a vault")
    p.add_argument("vault", nargs="?", default=None, help="vault folder (default: KBQA_VAULT or .)")
    _common(p)
    p.add_argument("--quiet", action="store_true", help="no progress bar")
    p.add_argument(
        "--strict",
        action="store_true",
        help="exit 3 when the run said warnings or skipped files (a CI gate), after listing them",
    )
    p.set_defaults(func=cmd_index)

    p = sub.add_parser("search", help="search the index")
    p.add_argument("question")
    p.add_argument("--vault", default=None)
    p.add_argument(
        "--k",
        type=int,
        default=None,
        help="number of results (default: top_k, KBQA_TOP_K, 10 unless set)",
    )
    p.add_argument("--include", action="append", default=[], help="only these paths/globs")
    p.add_argument("--exclude", action="append", default=[], help="not these paths/globs")
    p.add_argument("--json", action="store_true", help="print JSON")
    _common(p)
    p.set_defaults(func=cmd_search)

    p = sub.add_parser(
        "eval",
        help="measure retrieval on a JSONL question set",
        description="Recall@k, MRR and page hits of the index on labelled questions.",
        epilog='Each line of QUESTIONS: {"question": "How do I rotate a token?", "gold": '
        '[{"path": "docs/auth.md", "anchor": "rotating-tokens"}]}; a gold section may name '
        'its "heading" instead of its anchor, and its page by vault path, docs path or URL.',
    )
    p.add_argument("questions", type=Path, help="a JSONL file of questions with gold sections")
    p.add_argument("--vault", default=None, help="the vault (default: KBQA_VAULT, or here)")
    p.add_argument("--json", action="store_true", help="print one JSON object")
    p.add_argument("--misses", action="store_true", help="list questions missed in the top 5")
    p.add_argument(
        "--min",
        action="append",
        default=[],
        metavar="METRIC=VALUE",
        help="exit 3 when METRIC (R@1, R@5, R@10, R@20, R@50, MRR@20, page@5, in-prompt) is "
        "below VALUE, e.g. --min R@5=0.8 (a CI gate; repeat it for more)",
    )
    p.add_argument(
        "--strict",
        action="store_true",
        help="exit 3 too when a gold section is not in the index (a heading renamed)",
    )
    _common(p)
    p.set_defaults(func=cmd_eval)

    p = sub.add_parser("ask", help="answer a question from the vault, citing its sources")
    p.add_argument("question")
    p.add_argument("--vault", default=None)
    p.add_argument("--include", action="append", default=[], help="only these paths/globs")
    p.add_argument("--exclude", action="append", default=[], help="not these paths/globs")
    p.add_argument(
        "--json",
        action="store_true",
        help="print the whole answer as one JSON object: text, covered, model, citations",
    )
    _answering(p)
    _common(p)
    p.set_defaults(func=cmd_ask)

    p = sub.add_parser(
        "serve",
        help="serve the HTTP API at once, bringing the vault's index up to date beside it "
        "(with --chroma-url and --workspace and no vault: a read-only replica)",
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
    p.add_argument("--html", type=Path, default=None, metavar="FILE", help="write an HTML report")
    printed = p.add_mutually_exclusive_group()  # one format on stdout
    printed.add_argument("--json", action="store_true", help="print the report as JSON")
    printed.add_argument("--csv", action="store_true", help="print the raw question log as CSV")
    printed.add_argument(
        "--questions-csv",
        action="store_true",
        help="print the top questions (near-duplicates merged) as CSV",
    )
    printed.add_argument(
        "--forget",
        default=None,
        metavar="TEXT",
        help="delete every logged question and rating that contains TEXT (case aside), "
        "e.g. a reader's e-mail address",
    )
    p.add_argument(
        "--dry-run",
        action="store_true",
        help="with --forget: say what it would delete (and the first questions), deleting nothing",
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
    p.add_argument(
        "--config-file",
        default=None,
        help="the site's config in the vault folder when not mkdocs.yml, properdocs.yml or "
        "zensical.toml, e.g. mkdocs.prod.yml (what `mkdocs build -f` builds from)",
    )
    p.add_argument("-v", "--verbose", action="store_true", help="log what happens")
