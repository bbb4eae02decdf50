"""The chat's API under ``mkdocs serve``: started in the same process beside the preview,
its index brought up to date in a thread of its own, and updated on every rebuild.

The site does not wait for the chat's first index run beyond ``READY_WAIT`` (once the pages
are read and rendered): a big site's preview is served while its embedding goes on, and the
chat says how far the index is until it can answer (``kb_qa.serve.first_index``).
"""

from __future__ import annotations

import logging
import time
from pathlib import Path
from typing import TYPE_CHECKING

from mkdocs.exceptions import PluginError

from kb_qa.ingest import render_files

if TYPE_CHECKING:
    from kb_qa.serve.serving import BackgroundServer
    from kb_qa.types import IndexReport

log = logging.getLogger("mkdocs.plugins.kb-qa")

# How long `mkdocs serve` waits for the chat's first index run before serving the site
# without it: a small site's chat is ready with its first page (sample_site: ~5 s cold), a
# big one's preview does not wait for its embedding (bench/preview_start.py: mkdocs-material's
# preview 31 s after start instead of 59 s; its chat ready at 65 s instead of 53 s, the
# site's build sharing the two cores).
READY_WAIT = 15.0


def start_api(
    vault: Path, port: int, port_source: str, dev_addr: str, config_file: str = ""
) -> BackgroundServer | None:
    """The API for the preview's chat on ``port`` (0: a free one), allowing the preview's
    origins at ``dev_addr``, over the site ``config_file`` (in ``vault``) describes; None
    (the chat offline, the site still served) when it cannot start for another reason than
    a taken port, which stops ``mkdocs serve``."""
    from kb_qa.serve.serving import BackgroundServer, PortInUse, preview_origins, progress_logger

    log.info("kb-qa: bringing the chat's index of %s up to date…", vault)
    try:
        api = BackgroundServer.start(
            vault,
            port=port,
            progress=progress_logger(log, "kb-qa: "),
            wait=READY_WAIT,
            ended=_index_ready,
            cors_origins=preview_origins(dev_addr),
            generator="mkdocs",
            config_file=config_file,
        )
    except PortInUse as exc:
        raise PluginError(
            f"kb-qa: cannot serve the chat's API on {exc.host}:{exc.port} ({port_source}): "
            "another process listens there. Stop it, choose another port, or leave the port "
            "unset for a free one."
        ) from exc
    except Exception as exc:  # noqa: BLE001 - the site must still serve without chat
        log.warning("kb-qa: could not start the API (%s); the chat will be offline", exc)
        return None
    first = api.first
    with first.lock:  # the line of a run that ends now comes after this one
        if not first.done.is_set():
            done, total = first.progress
            log.info(
                "kb-qa: API for the chat widget at %s; the site is served now, and the chat "
                "answers once its index is built (%s of %s chunks embedded)",
                api.url,
                f"{done:,}",
                f"{total:,}",
            )
    return api


def _index_ready(api: BackgroundServer) -> None:
    """The API's first index run ended (called from its thread): say so, with where the
    time went, or what stopped it."""
    first = api.first
    if first.cancelled.is_set():
        return  # `mkdocs serve` is stopping
    if first.error:
        log.warning("kb-qa: %s; the chat cannot answer until that is fixed", first.error)
        return
    report = first.report
    assert report is not None
    log.info(
        "kb-qa: %d files, %d chunks indexed (%d embedded; %s), API for the chat widget at "
        "%s (%s), ready in %.1f s",
        report.files,
        report.chunks,
        report.embedded,
        report.spent,
        api.url,
        api.kb.settings.answer_mode,
        time.perf_counter() - first.started,
    )
    log_problems(report)


def refresh(api: BackgroundServer) -> None:
    """After a rebuild (an author's edit), the API's index is updated, so the chat answers
    from the text just saved (after the first run, when that is still going)."""
    from kb_qa import KbQaError
    from kb_qa.serve.serving import progress_logger

    try:  # a long run (a pasted page) says how far it is, as the first one does
        report = api.refresh(progress_logger(log, "kb-qa: "))
    except KbQaError as exc:  # the preview must keep serving
        log.warning("kb-qa: could not update the chat's index: %s", exc)
        return
    if report is not None and (report.changed_files or report.removed_files or report.deleted):
        log_problems(report)  # a rebuild and why first: it is why every file was read again
        log.info(
            "kb-qa: chat index updated: %d file(s) %s%s, %d chunks embedded (%.1f s)",
            report.changed_files,
            "read again" if report.rebuilt else "changed",
            f", {report.removed_files} removed" if report.removed_files else "",
            report.embedded,
            report.seconds,
        )


def log_problems(report: IndexReport) -> None:
    """What ``kb-qa index`` lists: a rebuild and why (news, not a warning: ``--strict``
    must not abort on it), files skipped and warnings, each with its reason."""
    if report.rebuilt:
        log.info("kb-qa: Rebuilt: %s", report.rebuilt)
    for path, reason in report.skipped:
        # A draft left out is what the author asked for: news, not a problem
        level = logging.INFO if reason == render_files.UNPUBLISHED else logging.WARNING
        log.log(level, "kb-qa: skipped %s: %s", path, reason)
    for path, message in report.warnings:
        log.warning("kb-qa: %s: %s", path, message)
