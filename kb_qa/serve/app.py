"""The HTTP API: Starlette routes over one KnowledgeBase, served by uvicorn.

    POST /api/ask      {question, history?, include?, exclude?, stream?}
                       -> Server-Sent Events (status, delta, citations, done | error),
                          or one JSON object with "stream": false / Accept: application/json
    GET  /api/search   ?q=&k=&include=&exclude=    ranked hits
    GET  /api/health   index status
    GET  /api/ready    200 when health is ok and the index is loaded, else 503 (readiness)
    GET  /api/sources  the indexed pages
    POST /api/feedback {answer_id, question, answer, citations, rating: up|down, reason?}
                       only for an answer this server gave (kb_qa.owners.answer_ids)
    GET  /insights     the insights report, only to "Authorization: Bearer <admin_token>"
                       or a browser signed in with it (kb_qa.serve.admin); ?format=json|csv
    GET  /insights/sign-in, POST /insights/sign-in, POST /insights/sign-out
    GET  /             the vault's pages with the chat widget (for vaults that are not sites)
    GET  /view/<path>  one indexed note rendered with its anchors (raw HTML shown as text)
    GET  /kb-qa/kb-qa.js, /kb-qa/kb-qa.css   the widget

Every API error is JSON, ``{"error": "..."}``. Paths in a request are only matched against
the index, so nothing outside the vault can be read. Document and model text leave the API
as JSON strings; the /view pages escape raw HTML and forbid any script but the widget.
"""

from __future__ import annotations

import asyncio
import functools
import logging
import sqlite3
import threading
from collections import OrderedDict
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from functools import partial
from typing import TYPE_CHECKING, Any, cast

import anyio
import anyio.to_thread
from starlette.applications import Starlette
from starlette.convertors import PathConvertor, register_url_convertor
from starlette.exceptions import HTTPException
from starlette.middleware import Middleware
from starlette.middleware.cors import CORSMiddleware
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route
from starlette.types import ASGIApp, Receive, Scope, Send

from kb_qa.answer.answering import warm_up
from kb_qa.errors import KbQaError
from kb_qa.ingest.linkgraph import Resolver
from kb_qa.owners import answer_ids, feedback, questionlog
from kb_qa.serve import admin
from kb_qa.serve.first_index import FirstIndex
from kb_qa.serve.guard import Guard, RateLimiter, RequestCheck
from kb_qa.serve.routes_ask import AskRoutes
from kb_qa.serve.routes_index import IndexRoutes
from kb_qa.serve.routes_owners import OwnerRoutes
from kb_qa.serve.routes_pages import PageRoutes
from kb_qa.serve.stopping import Stopping
from kb_qa.settings import Settings

if TYPE_CHECKING:
    from kb_qa.ingest.watch import Watcher
    from kb_qa.kb.knowledge_base import KnowledgeBase
    from kb_qa.serve.replica import Replica

__all__ = ["create_app"]

log = logging.getLogger(__name__)

SEARCH_THREADS = 4  # blocking searches at once; more only queue up on two cores
PAGE_THREADS = 2  # / and /view renders at once; more wait their turn
# Health checks' own threads: a Chroma server that stops answering holds these, never the
# searches' (kb_qa/serve/routes_index.py waits STATUS_SECONDS for its answer).
STATUS_THREADS = 2
# Seconds between looks at the index's generation: another process's finished index run is
# loaded as it ends, not by the first reader after it (who waited for the view)
FOLLOW_SECONDS = 1.0


class Api(AskRoutes, IndexRoutes, OwnerRoutes, PageRoutes):
    """The routes (by area, in the routes_* modules), bound to one knowledge base and its
    settings."""

    def __init__(
        self,
        kb: KnowledgeBase,
        settings: Settings,
        watcher: Watcher | None = None,
        first: FirstIndex | None = None,
    ) -> None:
        self.kb = kb
        self.settings = settings
        self.watcher = watcher  # kb_qa.ingest.watch.Watcher under `kb-qa serve --watch`
        self.first = first  # the first index run, when it goes on while this serves
        self.feedback_store = feedback.FeedbackStore(
            settings.index_path, settings.feedback_days, settings.feedback_max
        )
        # Sign the answers /api/ask gives, so that only they can be rated.
        self.answer_ids = answer_ids.AnswerIds(settings.index_path, settings.feedback_secret)
        self.question_log = (
            questionlog.QuestionLog(
                settings.index_path,
                settings.question_log_days,
                self._embed_questions,
                keep=settings.question_log_max,
            )
            if settings.question_log
            else None
        )
        self.limiter: anyio.CapacityLimiter | None = None  # made in lifespan: needs a loop
        self.page_limiter: anyio.CapacityLimiter | None = None
        self.status_limiter: anyio.CapacityLimiter | None = None
        self.answering = 0  # answers in progress (health shows it; tests watch it)
        self.stopping = Stopping(settings.shutdown_timeout)  # answers end in time at a stop
        self.model_problem = ""  # why written answers cannot work, found at start
        self.health_said: tuple[str, str] | None = None  # changes are logged (routes_index)
        self.views: OrderedDict[tuple[str, str, str], str] = OrderedDict()  # rendered notes
        self.views_lock = threading.Lock()
        # Where a wikilink leads (note, #heading, #^block), for one index generation
        self.links: tuple[str, Resolver | None] = ("", None)
        self.block_refs: tuple[str, dict[str, tuple[str, str]]] = ("", {})
        self.replica = bool(getattr(kb, "replica", False))  # kb_qa.serve.replica.Replica
        # Browsers signed in to /insights, and the sign-in attempts per client address.
        self.sessions = admin.Sessions(settings.admin_session_hours * 3600)
        self.sign_ins = RateLimiter(admin.SIGN_IN_PER_MINUTE, admin.SIGN_IN_BURST)

    @asynccontextmanager
    async def lifespan(self, app: Starlette) -> AsyncIterator[None]:
        """Thread limiter, and a warm start: the first question should not pay for loading."""
        self.limiter = anyio.CapacityLimiter(SEARCH_THREADS)
        self.stopping.attach(asyncio.get_running_loop())
        self.page_limiter = anyio.CapacityLimiter(PAGE_THREADS)
        self.status_limiter = anyio.CapacityLimiter(STATUS_THREADS)
        # Loads the embedding model and the keyword index (a first index run going on
        # loads the model itself, and its runner warms the search up when it ends).
        try:
            if self.first is None or self.first.done.is_set():
                await anyio.to_thread.run_sync(self.kb.search, "warm up", 1)
        except KbQaError as exc:  # serve anyway: health says what is wrong, search says 503
            log.warning("starting without a working index: %s", exc)
        # A model configured without its client: health says so (search still works).
        self.model_problem = await warm_up(self.settings)
        what = (
            f"workspace {cast('Replica', self.kb).workspace} from "
            f"{self.settings.chroma_url} (read-only replica)"
            if self.replica
            else str(self.settings.vault)
        )
        log.info("serving %s (%s)", what, self.settings.answer_mode)
        token = self.settings.admin_token
        if token and len(token) < admin.MIN_TOKEN_CHARS:
            log.warning(
                "admin_token is %d characters: a short token can be guessed, and it opens every "
                "reader's questions at /insights; use %d or more, e.g. from python -c \"import "
                'secrets; print(secrets.token_urlsafe(32))"',
                len(token),
                admin.MIN_TOKEN_CHARS,
            )
        try:
            await anyio.to_thread.run_sync(self.feedback_store.prune)
        except (OSError, sqlite3.Error) as exc:
            log.error("the feedback store cannot be opened: %s", exc)
        if self.question_log is not None:
            try:
                await anyio.to_thread.run_sync(self.question_log.prune)
            except (OSError, sqlite3.Error) as exc:
                log.error("the question log cannot be opened: %s", exc)
            self.question_log.start()  # prunes every hour from now on, questions or not
        else:  # not logging now: what was logged before still ages out
            try:
                await anyio.to_thread.run_sync(
                    functools.partial(
                        questionlog.prune_logged,
                        self.settings.index_path,
                        self.settings.question_log_days,
                        keep=self.settings.question_log_max,
                    )
                )
            except (OSError, sqlite3.Error) as exc:
                log.error("the question log cannot be opened: %s", exc)
        pruning = asyncio.create_task(self._prune_ratings())
        following = None if self.replica else asyncio.create_task(self._follow_index())
        try:
            yield
        finally:
            pruning.cancel()
            if following is not None:
                following.cancel()
            if self.question_log is not None:
                await anyio.to_thread.run_sync(self.question_log.close)

    async def _follow_index(self) -> None:
        """Every FOLLOW_SECONDS, the index's new generation loaded if another process wrote
        one (``KnowledgeBase.follow``), on the status threads."""
        while True:
            await asyncio.sleep(FOLLOW_SECONDS)
            try:
                await anyio.to_thread.run_sync(self.kb.follow, limiter=self.status_limiter)
            except (KbQaError, OSError, sqlite3.Error) as exc:  # health and search say it
                log.debug("could not load the index's new generation: %s", exc)

    async def _prune_ratings(self) -> None:
        """Ratings past feedback_days go every hour (PRUNE_EVERY) while the server runs, as
        questions do: they went only at a start or when a new rating came."""
        while True:
            await asyncio.sleep(questionlog.PRUNE_EVERY)
            try:
                await anyio.to_thread.run_sync(self.feedback_store.prune)
            except (OSError, sqlite3.Error) as exc:
                log.error("the feedback store cannot be opened: %s", exc)

    def _embed_questions(self, texts: list[str]) -> tuple[str, Any]:
        # The index's model, already loaded for answering, at the time of the call.
        embedder = self.kb.embedder
        return embedder.name, embedder.embed_passages(texts)

    async def _thread(self, func: Any, *args: Any) -> Any:
        return await anyio.to_thread.run_sync(partial(func, *args), limiter=self.limiter)


async def _http_error(request: Request, exc: Exception) -> Response:
    assert isinstance(exc, HTTPException)
    return JSONResponse({"error": exc.detail}, status_code=exc.status_code, headers=exc.headers)


async def _server_error(request: Request, exc: Exception) -> Response:
    # %r: a "\n" in the path (percent-decoded) cannot forge a line of the log
    log.error("request failed: %s %r", request.method, request.url.path, exc_info=exc)
    return JSONResponse({"error": "Internal server error; the server log has details."}, 500)


# Never offered to other origins
PRIVATE_PATHS = frozenset({"/insights", "/insights/sign-in", "/insights/sign-out"})


class CorsExcept:
    """Starlette's CORS for every path but ``private`` ones, which get no CORS headers at
    all: a browser on another origin can neither preflight them nor read their answers."""

    def __init__(self, app: ASGIApp, private: frozenset[str], **options: Any) -> None:
        self.app = app
        self.cors = CORSMiddleware(app, **options)
        self.private = private

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http" and scope.get("path") in self.private:
            await self.app(scope, receive, send)
        else:
            await self.cors(scope, receive, send)


class _AnyPath(PathConvertor):
    """Starlette's ``path`` with newlines too (``.*`` stops at one): file names may hold them."""

    regex = "[\\s\\S]*"


register_url_convertor("anypath", _AnyPath())


def create_app(
    kb: KnowledgeBase,
    settings: Settings | None = None,
    watcher: Watcher | None = None,
    first: FirstIndex | None = None,
) -> Starlette:
    """The API over ``kb`` (a KnowledgeBase); ``settings`` default to the knowledge base's.

    With a ``watcher`` (kb_qa.ingest.watch.Watcher), health reports index freshness and answers
    asked during a re-index say so first. With ``first``, the first index run goes on while
    this serves: until it ends, an index that was empty answers questions and searches with
    503 and how far the run is, and one that held pages answers from them.
    """
    settings = settings or kb.settings
    api = Api(kb, settings, watcher, first)
    origins = list(settings.cors_origins)
    rate = RateLimiter(settings.rate_limit, settings.rate_burst) if settings.rate_limit else None
    app = Starlette(
        routes=[
            Route("/api/ask", api.ask, methods=["POST"]),
            Route("/api/search", api.search, methods=["GET"]),
            Route("/api/health", api.health, methods=["GET"]),
            Route("/api/ready", api.ready, methods=["GET"]),
            Route("/api/sources", api.sources, methods=["GET"]),
            Route("/api/feedback", api.feedback, methods=["POST"]),
            Route("/insights", api.insights, methods=["GET"]),
            Route("/insights/sign-in", api.sign_in_form, methods=["GET"]),
            Route("/insights/sign-in", api.sign_in, methods=["POST"]),
            Route("/insights/sign-out", api.sign_out, methods=["POST"]),
            Route("/", api.home, methods=["GET"]),
            Route("/view/{path:anypath}", api.view, methods=["GET"]),
            Route("/kb-qa/{name}", api.asset, methods=["GET"]),
        ],
        middleware=[
            # First of all: a request with a foreign Host (DNS rebinding) or too many
            # header lines gets no further, not even to a CORS preflight.
            Middleware(
                RequestCheck,
                allowed_hosts=settings.allowed_hosts,
                max_headers=settings.max_headers,
            ),
            # Then, so preflights are answered before the token check and 401/429
            # responses still carry CORS headers a browser needs to read them.
            Middleware(
                CorsExcept,  # type: ignore[arg-type]  # mypy cannot match **options to a ParamSpec
                private=PRIVATE_PATHS,
                allow_origins=["*"] if "*" in origins else origins,
                allow_methods=["GET", "POST"],
                allow_headers=["Authorization", "Content-Type"],
                # A page on another origin reads when to try again (429, 503 indexing)
                expose_headers=["Retry-After"],
                max_age=600,
            ),
            Middleware(Guard, token=settings.api_token, rate=rate),
        ],
        exception_handlers={HTTPException: _http_error, Exception: _server_error},
        lifespan=api.lifespan,
    )
    app.state.api = api
    return app
