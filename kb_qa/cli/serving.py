"""The commands that serve: ``kb-qa serve``, ``watch`` and ``mcp``.

``serve`` and ``mcp`` start at once and bring the index up to date beside it (or open a
read-only replica on a Chroma server) and can watch the vault; ``watch`` keeps the index up
to date on its own.
"""

from __future__ import annotations

import argparse
import contextlib
import logging
import os
import signal
import sys
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

from kb_qa.cli.common import open_kb, report_summary, settings_for
from kb_qa.errors import ConfigError, IndexStateError
from kb_qa.settings import Settings
from kb_qa.types import IndexReport

if TYPE_CHECKING:
    import uvicorn

    from kb_qa.ingest.watch import Watcher
    from kb_qa.kb.knowledge_base import KnowledgeBase
    from kb_qa.serve.first_index import FirstIndex


def cmd_serve(args: argparse.Namespace) -> int:
    """kb-qa serve"""
    import uvicorn

    from kb_qa.serve import first_index
    from kb_qa.serve.app import create_app
    from kb_qa.serve.first_index import FirstIndex
    from kb_qa.serve.serving import (
        LOOPBACK,
        STOP_SECONDS,
        PortInUse,
        check_port,
        stop_answers_on_exit,
        uvicorn_options,
    )

    wanted = settings_for(args)
    try:
        check_port(wanted.host, wanted.port)
    except PortInUse as exc:
        raise ConfigError(
            f"Cannot serve on {exc.host}:{exc.port}: another process listens there. "
            "Stop it, or choose another port with --port (KBQA_PORT)."
        ) from exc
    first = None
    if _is_replica(args):
        kb, log, watcher = _open_replica(args), logging.getLogger("kb_qa.serve"), None
        s = kb.settings
    else:  # served at once, indexed beside it (first_index): a big vault takes minutes
        _plain_logs()
        kb, log = open_kb(args), logging.getLogger("kb_qa.serve")
        watcher = _watcher(kb, args).observe() if args.watch else None
        first = FirstIndex(had_pages=first_index.serves_meanwhile(kb))  # not half-rebuilt
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
    app = create_app(kb, watcher=watcher, settings=s, first=first)
    server = uvicorn.Server(
        uvicorn.Config(app, host=s.host, port=s.port, log_config=None, **uvicorn_options(s))
    )
    stop_answers_on_exit(server)  # answers still streaming end in time, with a word
    indexer = None
    if first is not None:
        indexer = threading.Thread(
            target=_first_run, args=(kb, first, log, watcher, server), name="kb-qa-first-index"
        )
        indexer.daemon = True
        indexer.start()
    interrupted = False
    try:
        with _terminated_cleanly():
            server.run()
    except KeyboardInterrupt:  # Ctrl-C: uvicorn shut down, then raised it again
        interrupted = True
    finally:
        if first is not None and indexer is not None:
            first.cancelled.set()  # the run stops after the batch it embeds
            indexer.join(STOP_SECONDS)
        _close(kb, watcher)
    if first is not None and first.failure is not None:
        raise first.failure  # said as any index run's error is
    if interrupted and first is not None and first.report is None:
        raise KeyboardInterrupt  # "stopped before the index was built": the next start catches up
    return 0 if server.started else STARTUP_FAILURE


STARTUP_FAILURE = 3  # uvicorn's exit code when it cannot start (its log says why)


class _Terminated(Exception):
    """SIGTERM, raised again by uvicorn once it has shut down gracefully."""


@contextlib.contextmanager
def _terminated_cleanly() -> Iterator[None]:
    """A SIGTERM that uvicorn raises again after its graceful shutdown ends the serve with
    exit 0, as Ctrl-C does, not as killed by the signal (143): ``systemctl stop``, ``docker
    stop`` and a script's ``kill`` asked for that stop, and it completed."""
    if threading.current_thread() is not threading.main_thread():
        yield  # signals reach the main thread only
        return

    def terminated(signum: int, frame: object) -> None:
        raise _Terminated

    previous = signal.signal(signal.SIGTERM, terminated)
    try:
        yield
    except _Terminated:
        pass
    finally:
        signal.signal(signal.SIGTERM, previous)


def _first_run(
    kb: KnowledgeBase,
    first: FirstIndex,
    log: logging.Logger,
    watcher: Watcher | None,
    server: uvicorn.Server,
) -> None:
    """``kb-qa serve``'s first index run, beside the server: then the watcher follows edits;
    a run that fails stops the server, and the process exits with its error."""
    from kb_qa.serve import first_index
    from kb_qa.serve.serving import progress_logger

    def ended(first: FirstIndex) -> None:
        if first.failure is not None:
            server.should_exit = True
        elif first.report is not None:
            log.info("%s", report_summary(first.report, kb.settings.vault))
            if watcher is not None and not first.cancelled.is_set():
                watcher.start(initial=False, said=first.report)
                log.info("watching %s for changes", kb.settings.vault)

    log.info("indexing %s", kb.settings.vault)
    first_index.run(
        kb,
        first,
        progress_logger(log),
        ended,
        index=lambda progress: first_index.index_when_free(kb, log, progress),
    )


def _close(kb: KnowledgeBase, watcher: Watcher | None, wait: float | None = 30.0) -> None:
    """Stop the watcher, then close the index. A run that did not end within ``wait`` s (or
    a second Ctrl-C) ends the process at once: closing under it crashed in ONNX Runtime."""
    try:
        if watcher is not None and not watcher.stop(wait):
            print(
                "kb-qa: the index run is still busy; exiting without waiting for it (the next "
                "start catches up with what changed).",
                file=sys.stderr,
                flush=True,
            )
            os._exit(130)
        kb.close()
    except KeyboardInterrupt:
        _stop_now()


def _stop_now(*_signal: object) -> None:
    """End the process at once (exit 130), as a kill would: the index keeps what it wrote
    and the next run finishes it. Also a SIGINT handler."""
    print("\nkb-qa: stopped.", file=sys.stderr, flush=True)
    os._exit(130)


def _with_preview_origins(settings: Settings, log: logging.Logger) -> Settings:
    """On loopback with no cors_origins, allow the site generator's local preview (e.g.
    `zensical serve` at localhost:8000) to call the API: the preview runs on another port."""
    from kb_qa.ingest.site import site_of
    from kb_qa.serve.serving import LOOPBACK, preview_origins

    if settings.cors_origins or settings.host not in LOOPBACK:
        return settings
    site = site_of(settings)
    if not site.dev_addr:
        return settings
    origins = preview_origins(site.dev_addr)
    if not origins:
        return settings
    log.info(
        "allowing the preview of %s at %s to call the API (set cors_origins to choose)",
        site.config_name,
        ", ".join(origins),
    )
    return settings.replace(cors_origins=origins)


def _is_replica(args: argparse.Namespace) -> bool:
    """`serve` with a Chroma server and a workspace but no vault: a read-only replica."""
    settings = settings_for(args)
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
    return Replica(settings_for(args)).start()


def _open_indexed(
    args: argparse.Namespace, name: str
) -> tuple[KnowledgeBase, logging.Logger, Watcher | None]:
    """For long-running commands: plain logs, then the knowledge base brought up to date,
    and with --watch its watcher (recording from before that first run)."""
    from kb_qa.cli.indexing import prepare_search
    from kb_qa.serve import first_index
    from kb_qa.serve.serving import progress_logger

    _plain_logs()
    kb = open_kb(args)
    log = logging.getLogger(name)

    def prepared(report: IndexReport) -> None:
        """The search view of each new generation, saved when another process searches
        this index (`kb-qa search`, `ask`): it reads it instead of building it (tens of
        seconds on a big vault) at every edit."""
        prepare_search(kb, report.chunks, quiet=True)

    watcher = _watcher(kb, args, after=prepared).observe() if args.watch else None
    log.info("indexing %s", kb.settings.vault)
    try:
        report = first_index.index_when_free(kb, log, progress_logger(log))
        log.info("%s", report_summary(report, kb.settings.vault))
        prepared(report)
    except BaseException:
        _close(kb, watcher)
        raise
    if watcher is not None:
        watcher.start(initial=False, said=report)
        log.info("watching %s for changes", kb.settings.vault)
    return kb, log, watcher


def _watcher(
    kb: KnowledgeBase,
    args: argparse.Namespace,
    after: Callable[[IndexReport], None] | None = None,
) -> Watcher:
    from kb_qa.ingest.watch import Watcher

    given = Path(args.vault or os.environ.get("KBQA_VAULT") or ".").expanduser()
    return Watcher(kb, given=given, after=after)


def _plain_logs() -> None:
    # Plain, timestamped lines for a long-running process; chatty libraries stay quiet.
    logging.basicConfig(
        level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s: %(message)s", force=True
    )
    for name in ("httpx", "LiteLLM", "chromadb", "mcp"):
        logging.getLogger(name).setLevel(logging.WARNING)


def cmd_watch(args: argparse.Namespace) -> int:
    """kb-qa watch"""
    args.watch = True
    while True:
        kb, log, watcher = _open_indexed(args, "kb_qa.ingest.watch")
        assert watcher is not None  # args.watch
        try:
            # Until stopped, or until the vault's symlink leads elsewhere (git-sync's next
            # revision): then the same index follows it, every unchanged vector reused.
            watcher.repointed.wait()
        except BaseException:
            _close(kb, watcher)
            raise
        _close(kb, watcher, wait=None)  # following the new folder: the run may finish
        log.info("following the vault path to the folder it leads to now")


def cmd_mcp(args: argparse.Namespace) -> int:
    """kb-qa mcp"""
    from kb_qa.serve import first_index
    from kb_qa.serve.first_index import FirstIndex
    from kb_qa.serve.mcp_server import serve_stdio

    # stdout carries the protocol: every log line goes to stderr.
    logging.basicConfig(level=logging.WARNING, stream=sys.stderr, force=True)
    kb = open_kb(args)
    # An index that holds pages answers while the run brings it up to date (a branch
    # switch re-embeds minutes of pages); an empty one, or one the run rebuilds from
    # nothing, makes the tools wait for the run.
    first = FirstIndex(had_pages=first_index.serves_meanwhile(kb))
    watcher = _watcher(kb, args).observe() if args.watch else None
    mcp_log = logging.getLogger("kb_qa.mcp")

    def ended(first: FirstIndex) -> None:
        if first.failure is not None:
            print(f"kb-qa: {first.failure}", file=sys.stderr)
        elif first.report is not None:
            print(report_summary(first.report, kb.settings.vault), file=sys.stderr)
            if watcher is not None:
                watcher.start(initial=False, said=first.report)

    def index_first() -> None:  # while the client connects
        print(f"kb-qa: indexing {kb.settings.vault}", file=sys.stderr)
        first_index.run(
            kb,
            first,
            ended=ended,
            index=lambda note: first_index.index_when_free(kb, mcp_log, note),
        )

    # Ctrl-C in a terminal stops now: the protocol's reader waits on stdin in a thread no
    # cancellation reaches, so a clean exit would wait for Ctrl-D. Set before asyncio's own.
    signal.signal(signal.SIGINT, _stop_now)
    threading.Thread(target=index_first, name="kb-qa-first-index", daemon=True).start()
    left = False
    try:
        serve_stdio(kb, first)
        left = True  # the client closed the stream or died (an error or Ctrl-C is raised)
    finally:
        if left and not first.done.is_set():
            # The client left mid-run: end now, as a kill would (the index keeps what it
            # wrote and the next run finishes it). Python's own exit under the running
            # index thread aborted in ONNX Runtime's teardown (SIGABRT, a "crash" to clients).
            sys.stderr.flush()
            os._exit(0)
        _close(kb, watcher)
    return 0
