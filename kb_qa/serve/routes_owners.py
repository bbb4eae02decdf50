"""The site owner's routes: POST /api/feedback and /insights with its sign-in and sign-out.

A rating is stored only with the answer id /api/ask gave the answer it rates
(``kb_qa.owners.answer_ids``), one per answer: scripts cannot fill the log with made-up
ratings, nor push readers' ratings out of it (``feedback_max``).

/insights answers only the admin token (``Authorization: Bearer``) or a browser signed in
with it (``kb_qa.serve.admin``); without a token configured it is the same 404 as any
unknown path.
"""

from __future__ import annotations

import dataclasses
import io
import logging
import math
import sqlite3
import time
from functools import partial
from typing import TYPE_CHECKING, Any
from urllib.parse import quote

import anyio
import anyio.to_thread
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import (
    HTMLResponse,
    JSONResponse,
    PlainTextResponse,
    RedirectResponse,
    Response,
)

from kb_qa.errors import ConfigError
from kb_qa.owners import answer_ids, feedback, insights, insights_csv, insights_html
from kb_qa.serve import admin
from kb_qa.serve.guard import bearer_given, bearer_matches
from kb_qa.serve.protocol import read_json, reject

if TYPE_CHECKING:
    from kb_qa.kb.knowledge_base import KnowledgeBase
    from kb_qa.owners.answer_ids import AnswerIds
    from kb_qa.owners.feedback import Feedback, FeedbackStore
    from kb_qa.owners.questionlog import QuestionLog
    from kb_qa.serve.guard import RateLimiter
    from kb_qa.settings import Settings

log = logging.getLogger(__name__)


class OwnerRoutes:
    """Feedback and the insights report of ``kb_qa.serve.app.Api``."""

    # Set by Api.__init__
    kb: KnowledgeBase
    settings: Settings
    feedback_store: FeedbackStore
    answer_ids: AnswerIds
    question_log: QuestionLog | None
    page_limiter: anyio.CapacityLimiter | None
    sessions: admin.Sessions
    sign_ins: RateLimiter

    if TYPE_CHECKING:  # Api's

        async def _thread(self, func: Any, *args: Any) -> Any: ...

    _told_unsigned = 0.0  # when a rating without an answer id may be logged again

    async def feedback(self, request: Request) -> Response:
        """POST /api/feedback: a reader's thumbs up/down, stored for `kb-qa feedback`."""
        if not self.settings.ratings:
            raise reject(404, "This server takes no ratings of its answers (ratings: false).")
        body = await read_json(request, self.settings.max_body_bytes)
        try:
            item = feedback.parse(body, self.settings.max_question_chars)
        except feedback.TooLarge as exc:
            raise reject(413, str(exc)) from None
        except ValueError as exc:
            raise reject(422, str(exc)) from None
        await anyio.to_thread.run_sync(self.answer_ids.key)  # read or made once, off the loop
        try:
            said = feedback.sent_digest(body)  # what the rating says was answered
            answer = self.answer_ids.check(body.get("answer_id"), item.question, said)
        except answer_ids.Rejected as exc:
            if str(exc) == answer_ids.MISSING and time.monotonic() >= self._told_unsigned:
                self._told_unsigned = time.monotonic() + 3600  # once an hour: a log, not a flood
                log.warning(
                    "a rating came without an answer id and was refused: a page's chat widget "
                    "is older than this server. Rebuild and redeploy a site built with the "
                    "kb-qa MkDocs plugin (or run `kb-qa init` on one it wired)."
                )
            raise reject(exc.status, str(exc)) from None
        try:
            replaced = await self._thread(self._store_feedback, item, answer)
        except (OSError, sqlite3.Error) as exc:  # a full disk, a read-only folder
            log.error("could not store feedback: %s", exc)
            return JSONResponse(
                {"error": "Feedback cannot be stored right now; the server log says why."}, 503
            )
        return JSONResponse({"ok": True, "replaced": replaced}, status_code=201)

    def _store_feedback(self, item: Feedback, answer: str) -> bool:
        # Linked to the logged question it rates (the answer's ref is its id when the log
        # was on), so the report can join the two.
        qlog = self.question_log
        ref = qlog.match(item.question, answer, item.at) if qlog is not None else ""
        return self.feedback_store.add(
            dataclasses.replace(item, question_id=ref, answer_ref=answer)
        )

    def _admin_token(self) -> str:
        token = self.settings.admin_token
        if not token:  # the same 404 as any unknown path: nothing says a report exists
            raise reject(404, "Not Found")
        return token

    def _session(self, request: Request) -> str:
        """The request's live session id, or ""."""
        session = request.cookies.get(admin.COOKIE, "")
        return session if self.sessions.valid(session) else ""

    async def insights(self, request: Request) -> Response:
        """GET /insights?since=7d: the insights report, for the admin token only."""
        token = self._admin_token()
        client = (request.scope.get("client") or ("unknown", 0))[0]
        sent = bearer_given(request.scope["headers"]) is not None
        # A token in the header is a guess like one in the sign-in form: the same
        # per-address limit, and a warning that traces each wrong one. While an address
        # waits, every token it sends waits too, the right one as well: answered at once,
        # the one 200 among the 429s told a script which of its guesses was right.
        if sent and (wait := self.sign_ins.waiting(client)) > 0:
            seconds = str(max(1, math.ceil(wait)))
            raise HTTPException(
                429,
                f"Too many attempts with a wrong admin token; try again in {seconds} s.",
                headers={"Retry-After": seconds},
            )
        bearer = bearer_matches(request.scope["headers"], token.encode())
        session = "" if bearer else self._session(request)
        given = request.query_params.get("since", "")
        if not (bearer or session) and sent:
            self.sign_ins.take(client)
            log.warning("insights: a wrong admin token in the Authorization header from %s", client)
        if not (bearer or session):
            browser = "text/html" in request.headers.get("accept", "")
            if browser and "authorization" not in request.headers:
                where = "insights/sign-in" + (f"?since={quote(given)}" if given else "")
                return RedirectResponse(where, 303, headers=_ADMIN_HEADERS)
            raise HTTPException(
                401,
                "The insights report needs the admin token: send 'Authorization: Bearer "
                "<admin_token>', or sign in at /insights/sign-in.",
                headers={"WWW-Authenticate": "Bearer"},
            )
        try:
            since = insights.parse_since(given, time.time()) if given else None
        except ConfigError as exc:
            raise reject(422, str(exc).replace("--since", "since")) from None
        wanted = request.query_params.get("format", "")
        if wanted == "csv":
            rows = await anyio.to_thread.run_sync(
                partial(self._top_questions, since), limiter=self.page_limiter
            )
            # A byte order mark first: without one, Excel reads the file in the system's
            # code page and shows "¿CÃ³mo" for "¿Cómo" (other programs skip it).
            buffer = io.StringIO("\ufeff")
            buffer.seek(0, io.SEEK_END)
            insights_csv.write_questions_csv(rows, buffer)
            disposition = 'attachment; filename="kb-qa-top-questions.csv"'
            return Response(
                buffer.getvalue(),
                media_type="text/csv; charset=utf-8",
                headers={**_ADMIN_HEADERS, "Content-Disposition": disposition},
            )
        report = await anyio.to_thread.run_sync(
            partial(self._report, since), limiter=self.page_limiter
        )
        headers = dict(_ADMIN_HEADERS)
        accept = request.headers.get("accept", "")
        if wanted == "json" or accept.startswith("application/json"):
            return JSONResponse(report, headers=headers)
        sign_out = "insights/sign-out" if session else ""
        csv_href = "insights?" + "&".join(
            [*([f"since={quote(given)}"] if given else []), "format=csv"]
        )
        headers["Content-Security-Policy"] = (
            insights_html.csp(forms=bool(sign_out)) + "; frame-ancestors 'none'"
        )
        return HTMLResponse(insights_html.page(report, sign_out, csv_href), headers=headers)

    def _report(self, since: float | None) -> dict[str, Any]:
        if self.question_log is not None:
            self.question_log.flush()
        return insights.build(self.kb, self.settings, since, self.question_log)

    def _top_questions(self, since: float | None) -> dict[str, Any]:
        if self.question_log is not None:
            self.question_log.flush()
        return insights.top_questions(self.kb, self.settings, since, self.question_log)

    def _sign_in_form(self, status: int, problem: str = "", since: str = "") -> HTMLResponse:
        text = admin.sign_in_page(self.settings.vault.name, problem, since)
        headers = {**_ADMIN_HEADERS, "Content-Security-Policy": admin.page_csp()}
        return HTMLResponse(text, status, headers=headers)

    async def sign_in_form(self, request: Request) -> Response:
        """GET /insights/sign-in: the form (the report, when already signed in)."""
        self._admin_token()
        since = request.query_params.get("since", "")
        if self._session(request):
            return RedirectResponse("../insights", 303, headers=_ADMIN_HEADERS)
        return self._sign_in_form(200, since=since)

    async def sign_in(self, request: Request) -> Response:
        """POST /insights/sign-in: the admin token from the form; a session cookie."""
        token = self._admin_token()
        if not admin.same_origin(request):
            return _cross_site()
        client = (request.scope.get("client") or ("unknown", 0))[0]
        wait = self.sign_ins.take(client)
        if wait > 0:
            seconds = max(1, math.ceil(wait))
            response: Response = self._sign_in_form(
                429, f"Too many sign-in attempts; try again in {seconds} s."
            )
            response.headers["Retry-After"] = str(seconds)
            return response
        form = await admin.read_form(request)
        if form is None:
            return self._sign_in_form(400, "The form could not be read; try again.")
        since = form.get("since", "")
        if not admin.token_matches(form.get("token", ""), token):
            log.warning("insights: a sign-in with a wrong admin token from %s", client)
            return self._sign_in_form(401, "That is not the admin token.", since)
        try:
            keep = bool(since) and insights.parse_since(since, time.time()) is not None
        except ConfigError:
            keep = False
        where = "../insights" + (f"?since={quote(since)}" if keep else "")
        response = RedirectResponse(where, 303, headers=_ADMIN_HEADERS)
        response.set_cookie(
            admin.COOKIE,
            self.sessions.new(),
            max_age=max(1, int(self.settings.admin_session_hours * 3600)),
            **_cookie_scope(request),
        )
        return response

    async def sign_out(self, request: Request) -> Response:
        """POST /insights/sign-out: ends the session here, so its cookie opens nothing."""
        self._admin_token()
        if not admin.same_origin(request):
            return _cross_site()
        self.sessions.end(request.cookies.get(admin.COOKIE, ""))
        response = RedirectResponse("sign-in", 303, headers=_ADMIN_HEADERS)
        response.delete_cookie(admin.COOKIE, **_cookie_scope(request))
        return response


# same-origin, not no-referrer: with no-referrer a browser sends "Origin: null" with the
# sign-out form, which the CSRF check refuses; other sites still get no referrer at all.
_ADMIN_HEADERS = {"Cache-Control": "no-store", "Referrer-Policy": "same-origin"}


def _cookie_scope(request: Request) -> dict[str, Any]:
    """The admin cookie's attributes, the same when it is set and when it is cleared:
    /insights only, HttpOnly, SameSite=Strict, Secure over HTTPS."""
    return {
        "path": str(request.scope.get("root_path", "")).rstrip("/") + "/insights",
        "secure": request.url.scheme == "https",
        "httponly": True,
        "samesite": "strict",
    }


def _cross_site() -> Response:
    """The answer to a sign-in or sign-out POST that did not come from this server's page."""
    return PlainTextResponse(
        "Refused: this form only accepts posts from this server's own sign-in page.",
        403,
        headers=_ADMIN_HEADERS,
    )
