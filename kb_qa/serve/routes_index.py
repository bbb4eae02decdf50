"""The index's routes: GET /api/search, /api/health, /api/ready and /api/sources."""

from __future__ import annotations

import json
import logging
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import anyio
from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from kb_qa import __version__
from kb_qa.errors import IndexStateError, KbQaError
from kb_qa.kb.staleness import KEPT_AS_BUILT
from kb_qa.serve import inputs
from kb_qa.serve.first_index import RETRY_SECONDS
from kb_qa.serve.guard import bearer_matches
from kb_qa.serve.protocol import (
    WHOLE_NUMBER,
    compressed,
    hit_json,
    language,
    patterns,
    reject,
)

if TYPE_CHECKING:
    from kb_qa.ingest.watch import Watcher
    from kb_qa.kb.knowledge_base import KnowledgeBase
    from kb_qa.serve.first_index import FirstIndex
    from kb_qa.settings import Settings
    from kb_qa.types import IndexReport

log = logging.getLogger(__name__)

STATUS_SECONDS = 5.0  # how long a health check waits for the vector index
NOT_FOLLOWED = "edits are not followed"  # health's problem when the watcher cannot watch


class IndexRoutes:
    """Search, health and the page list of ``kb_qa.serve.app.Api``."""

    # Set by Api.__init__
    kb: KnowledgeBase
    settings: Settings
    watcher: Watcher | None
    first: FirstIndex | None
    status_limiter: anyio.CapacityLimiter | None
    answering: int
    model_problem: str
    replica: bool
    health_said: tuple[str, str] | None  # the last health probes saw (status, problem)

    if TYPE_CHECKING:  # Api's and AskRoutes'

        async def _thread(self, func: Any, *args: Any) -> Any: ...
        def public(self, message: str) -> str: ...

    async def search(self, request: Request) -> Response:
        """GET /api/search?q=&k=&lang="""
        params = request.query_params
        if not params.get("q", "").strip():
            raise reject(422, "q is required: the text to search for.")
        try:
            q = inputs.question(params["q"], self.settings, "q")
        except inputs.InputError as exc:
            raise reject(exc.status, str(exc)) from None
        given = params.get("k", str(self.settings.top_k))
        if not WHOLE_NUMBER.fullmatch(given):  # int() would take " 5 ", "1_0" and "٣"
            raise reject(422, "k must be a whole number written with the digits 0-9.")
        try:
            # "12345678901" is out of range, not malformed (and never a 4,300-digit int())
            k = inputs.count(int(given.lstrip("0")[:7] or "0"))
        except inputs.InputError as exc:
            raise reject(exc.status, str(exc)) from None
        include = patterns({"include": params.getlist("include")}, "include")
        exclude = patterns({"exclude": params.getlist("exclude")}, "exclude")
        lang = language(params.get("lang"))
        if (waiting := self.still_indexing()) is not None:
            return waiting
        try:
            hits = await self._thread(self._search, q, k, include, exclude, lang)
        except inputs.InputError as exc:
            raise reject(exc.status, str(exc)) from None
        except KbQaError as exc:
            return JSONResponse({"error": self.public(str(exc)), "code": "retrieval_error"}, 503)
        return JSONResponse({"query": q, "hits": hits})

    def still_indexing(self) -> Response | None:
        """503 saying why while the first index run of an empty index goes on, or failed."""
        first = self.first
        why = first.unanswerable() if first is not None else ""
        if first is not None and first.done.is_set() and not why:
            # The run ended with nothing to answer from: "No passage in your sources matches
            # this question" read as docs that are silent (a monorepo site indexed no page)
            if self.kb.view_chunks()[1]:  # not copied: asked of every question
                return None
            empty = {"error": self.public(nothing_indexed(first.report)), "code": "index_empty"}
            return JSONResponse(empty, 503, headers={"Retry-After": str(RETRY_SECONDS)})
        if first is None or not why:
            return None
        if first.done.is_set():
            body: dict[str, str | int] = {"error": self.public(why), "code": "index_failed"}
        else:  # how far it is, for a widget that says so while it waits to ask again
            embedded, to_embed = first.progress
            body = {"error": why, "code": "indexing", "embedded": embedded, "to_embed": to_embed}
        return JSONResponse(body, 503, headers={"Retry-After": str(RETRY_SECONDS)})

    def _search(
        self, q: str, k: int, include: Sequence[str], exclude: Sequence[str], lang: str
    ) -> list:
        hits = self.kb.search(q, k, include=include, exclude=exclude, lang=lang)
        if not hits:  # a filter that leaves no page is a 422 saying how paths are written
            inputs.check_filters(self.kb, include, exclude)
        return [hit_json(self.kb, n, h) for n, h in enumerate(hits, 1)]

    def _said_health(self, status: str, problem: str) -> None:
        """A change of health, said once in the log as probes see it: a replica whose Chroma
        server went away answered 503 to every readiness probe and logged nothing, nor when
        it came back."""
        before, self.health_said = self.health_said, (status, problem)
        if before == self.health_said:
            return
        if status == "degraded":
            log.warning("health: degraded: %s", problem)
        elif before is not None and before[0] == "degraded":
            log.info("health: %s again", status)

    async def _status(self) -> dict[str, Any]:
        # On the status threads: a probe must not queue behind searches waiting for a view
        try:
            stats = await anyio.to_thread.run_sync(self._stats, limiter=self.status_limiter)
        except IndexStateError:  # its manifest out of reach (moved away with the vault)
            generation, chunks = self.kb.view_chunks()  # what the index serves meanwhile
            try:
                model = self.kb.embedder.name  # loaded at start: the manifest is not read
            except KbQaError:
                model = self.settings.embed_model
            stats = {
                "files": len({c.path for c in chunks}),
                "chunks": len(chunks),
                "embed_model": model,
                "last_indexed": None,
                "workspace": self.kb.store.workspace,
                "generation": generation,
                "loaded": bool(chunks),
                "kept": "",
                "index_version": None,
            }
        # The vector index is asked on threads of its own, and not waited for long: a
        # Chroma server that stops answering must not hang health checks or searches.
        try:
            with anyio.fail_after(STATUS_SECONDS):
                problem = await anyio.to_thread.run_sync(
                    self.kb.problem, limiter=self.status_limiter, abandon_on_cancel=True
                )
        except TimeoutError:
            problem = f"the vector index did not answer within {STATUS_SECONDS:.0f} s"
        freshness = self.watcher.freshness() if self.watcher else None
        if freshness is not None and freshness.error and not problem:
            # The index serves what it had, but edits are not reaching it.
            problem = f"the last index run failed (retrying): {freshness.error}"
        elif freshness is not None and freshness.unwatched and not problem:
            # Degraded, but serving as well as before: readiness does not hang on it.
            problem = f"{NOT_FOLLOWED}: {freshness.unwatched}"
        if self.first is not None and self.first.error and not problem:
            problem = self.first.error  # the index serves what it held before, if anything
        problem = problem or stats["kept"] or self.model_problem
        status = "degraded" if problem else "ok" if stats["chunks"] else "empty"
        if self.first is not None and not self.first.done.is_set() and not self.first.had_pages:
            status = "indexing"  # what the index holds is not all it will hold yet
        self._said_health(status, problem)
        return {
            "status": status,
            "problem": self.public(problem) or None,
            "files": stats["files"],
            "chunks": stats["chunks"],
            "embed_model": stats["embed_model"],
            # Which kb-qa built the index and which serves it: a server and a site from two
            # builds of a docs pipeline differ here
            "index_version": stats["index_version"],
            "version": __version__,
            "last_indexed": stats["last_indexed"],
            "workspace": stats["workspace"],
            "generation": stats["generation"],
            "loaded": stats["loaded"],
            "load_seconds": stats.get("load_seconds"),  # a replica's last load from Chroma
            "replica": self.replica,
            "model": self.settings.model,
            "mode": "llm" if self.settings.model else "extractive",
            "answering": self.answering,
            "first_index": self.first.as_dict() if self.first is not None else None,
            "freshness": (
                {
                    **freshness.as_dict(),
                    "error": self.public(freshness.error),
                    "unwatched": self.public(freshness.unwatched),
                }
                if freshness is not None
                else None
            ),
        }

    def _stats(self) -> dict[str, Any]:
        """The index's stats, with why it is kept as it was built (this machine cannot render
        the site as the build did: ``staleness.kept_as_built``) and the kb-qa that built it."""
        stats = self.kb.stats()
        if self.replica:  # a workspace read from Chroma alone: no manifest
            return {**stats, "kept": "", "index_version": None}
        meta = self.kb.store.meta
        return {
            **stats,
            "kept": meta("kept_as_built"),
            "index_version": meta("kb_qa_version") or None,
        }

    async def health(self, request: Request) -> Response:
        """GET /api/health"""
        return JSONResponse(await self._status())

    async def ready(self, request: Request) -> Response:
        """GET /api/ready: for a load balancer's readiness check (health ok, index loaded)."""
        status = await self._status()
        # A watcher that cannot follow edits (the limit of watched folders, a re-pointed
        # vault symlink) leaves a server that serves what it has: still ready. So does an
        # index kept as its docs build made it (this machine lacks the site's plugins).
        problem = str(status["problem"] or "")
        serving = status["status"] == "ok" or problem.startswith((NOT_FOLLOWED, KEPT_AS_BUILT))
        ready = serving and status["loaded"]
        body = {"ready": ready, **{k: status[k] for k in ("status", "problem", "generation")}}
        token = self.settings.api_token.encode()
        if token and not bearer_matches(request.scope.get("headers", []), token):
            body = {"ready": ready}  # open to a probe without the token: nothing of why
        return JSONResponse(body, status_code=200 if ready else 503)

    def _updating(self) -> bool:
        if self.first is not None and (not self.first.done.is_set() or self.first.refreshing):
            return True
        if self.watcher is None:
            return False
        fresh = self.watcher.freshness()
        return fresh.indexing or fresh.queue > 0

    async def sources(self, request: Request) -> Response:
        """GET /api/sources"""
        pages = await self._thread(self.kb.pages)
        body = json.dumps({"pages": pages}, ensure_ascii=False).encode()
        return compressed(request, body, "application/json", {})


def nothing_indexed(report: IndexReport | None) -> str:
    """Why an index that finished its run holds nothing, in words, with what to do."""
    skipped = report.skipped if report is not None else []
    first = f" ({len(skipped):,} skipped; {skipped[0][0]}: {skipped[0][1]})" if skipped else ""
    return (
        "Nothing is indexed, so the chat cannot answer yet. For the site's owner: kb-qa found "
        f"no page to answer from{first}; run kb-qa index on the docs to see each file it "
        "skipped and why. Answers start once a page is indexed."
    )
