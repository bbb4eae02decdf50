"""Answer ids: what a reader's rating carries to show it rates an answer this server gave.

When ``POST /api/ask`` finishes an answer, its ``done`` event carries ``answer_id``,
``<ref>.<issued>.<answer>.<signature>``: ``ref`` is the question log's id of the question (a
random one when the log is off), ``issued`` the Unix time in seconds, ``answer`` digests of
the answer's text and of its citations as they were sent (``feedback.answer_digest``) and
``signature`` an HMAC-SHA256 of the three and the question's text, under a secret only the
server knows: the ``feedback_secret`` setting, or else ``<index_dir>/answer-secret``, made
on first use.

``POST /api/feedback`` stores a rating only with an id that verifies for the rating's
question and is at most :data:`MAX_AGE_HOURS` old, so no rating can be made up without
asking first (each one costs an answer, within ``rate_limit``), and one answer keeps one
rating, its latest (``kb_qa.owners.feedback``). The answer text and the citations a rating
carries must be the ones the id was given with (either may be left out): a script could otherwise
store a real rating with a made-up answer and links in the owner's report.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import logging
import os
import re
import secrets
import threading
import time
from pathlib import Path
from typing import Any

log = logging.getLogger(__name__)

KEY_FILE = "answer-secret"
MAX_AGE_HOURS = 24  # an answer may be rated this long after it was given
# Seconds an id may be dated after this server's clock says now: another replica sharing
# feedback_secret may run a little ahead.
CLOCK_SKEW = 300
MIN_SECRET_CHARS = 32
_SHAPE = re.compile(
    r"([A-Za-z0-9_-]{8,64})\.([0-9]{1,12})\.([A-Za-z0-9_-]{22})\.([A-Za-z0-9_-]{43})"
)


class Rejected(ValueError):
    """A rating's answer id is missing, forged, for another question or too old; ``status``
    is the HTTP status the API answers with."""

    def __init__(self, message: str, status: int) -> None:
        super().__init__(message)
        self.status = status


MISSING = (
    "answer_id is required: send the answer_id of the answer's done event with its rating "
    "(a chat widget from before kb-qa signed its answers sends none: reload the page; if "
    "that does not help, the site's widget is older than its kb-qa server, and the site "
    "must be rebuilt with it)."
)
NOT_GIVEN = (
    "This answer_id was not given by this server for this question: a rating is taken only "
    "for an answer /api/ask gave, sent with the question as it was asked."
)
ALTERED = (
    "The answer or citations sent are not the ones this answer_id was given with: send the "
    "done event's text (the delta pieces joined can differ) and the citations event's list, "
    "as they came, or leave them out."
)
TOO_OLD = (
    f"This answer_id is more than {MAX_AGE_HOURS} hours old: an answer may be rated for "
    f"{MAX_AGE_HOURS} hours after it was given."
)


class AnswerIds:
    """Issues and checks the answer ids of one server (the API's ``answer_ids``)."""

    def __init__(self, folder: Path, secret: str = "") -> None:
        self.path = folder / KEY_FILE
        self._key = _derive(secret) if secret else b""
        self._lock = threading.Lock()

    def key(self) -> bytes:
        """The signing key: read from, or first written to, :data:`KEY_FILE` (a file
        that cannot be written or read leaves a key for this process only, said once)."""
        with self._lock:
            if not self._key:
                try:
                    self._key = _derive(_read_or_make(self.path))
                except OSError as exc:
                    log.error(
                        "the answer secret cannot be kept in %s (%s): ratings are taken only "
                        "for answers given until this server stops",
                        self.path,
                        exc,
                    )
                    self._key = secrets.token_bytes(32)
            return self._key

    def issue(self, ref: str, question: str, answer: str, now: float | None = None) -> str:
        """The id of the answer (``answer``: its digest) to ``question`` logged (or not) as
        ``ref``, given now."""
        issued = str(int(time.time() if now is None else now))
        return f"{ref}.{issued}.{answer}.{self._sign(ref, issued, question, answer)}"

    def check(
        self,
        given: Any,
        question: str,
        answer: tuple[str, str] = ("", ""),
        now: float | None = None,
    ) -> str:
        """The ref of ``given``, an answer id this server issued for ``question`` at most
        :data:`MAX_AGE_HOURS` ago, and for the answer the rating says it rates (``answer``:
        the digests of its text and of its citations, "" for one it leaves out); raises
        :class:`Rejected` saying what is wrong."""
        if given is None or given == "":
            raise Rejected(MISSING, 422)
        if not isinstance(given, str):
            raise Rejected("answer_id must be the string the answer's done event carried.", 422)
        shape = _SHAPE.fullmatch(given)
        if shape is None:
            raise Rejected(NOT_GIVEN, 403)
        ref, issued, digest, signature = shape.groups()
        if not hmac.compare_digest(signature, self._sign(ref, issued, question, digest)):
            raise Rejected(NOT_GIVEN, 403)
        age = (time.time() if now is None else now) - int(issued)
        if age < -CLOCK_SKEW:  # signed with this key, yet dated ahead: not by this server
            raise Rejected(NOT_GIVEN, 403)
        if age > MAX_AGE_HOURS * 3600:
            raise Rejected(TOO_OLD, 403)
        text, cited = answer
        if (text and not hmac.compare_digest(text, digest[:11])) or (
            cited and not hmac.compare_digest(cited, digest[11:])
        ):
            raise Rejected(ALTERED, 403)
        return ref

    def _sign(self, ref: str, issued: str, question: str, answer: str) -> str:
        message = "\n".join(("kb-qa answer 2", ref, issued, answer, question.strip()))
        digest = hmac.new(self.key(), message.encode(), hashlib.sha256).digest()
        return base64.urlsafe_b64encode(digest).decode().rstrip("=")


def _derive(secret: str) -> bytes:
    """A key of its own for answer ids, whatever else the configured secret is used for."""
    return hashlib.sha256(b"kb-qa answer ids\n" + secret.encode()).digest()


def _read_or_make(path: Path) -> str:
    """The secret in ``path``, made there first when there is none. Two servers starting
    on one folder at once end up with the same secret: it is written to a file of its own
    and linked into place, so a reader never sees it half written."""
    try:
        return _read(path)
    except FileNotFoundError:
        pass
    path.parent.mkdir(exist_ok=True)  # never the vault holding it (private_files)
    draft = path.with_name(f".{KEY_FILE}.{secrets.token_hex(6)}")
    descriptor = os.open(draft, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    try:
        with os.fdopen(descriptor, "w", encoding="ascii") as out:
            out.write(secrets.token_urlsafe(32) + "\n")
            out.flush()
            os.fsync(out.fileno())
        try:
            os.link(draft, path)
        except FileExistsError:  # another server made it first: its secret counts
            pass
    finally:
        draft.unlink(missing_ok=True)
    return _read(path)


def _read(path: Path) -> str:
    secret = path.read_text(encoding="ascii", errors="replace").strip()
    if len(secret) < MIN_SECRET_CHARS:
        raise OSError(f"{path.name} holds no secret of {MIN_SECRET_CHARS} characters or more")
    return secret
