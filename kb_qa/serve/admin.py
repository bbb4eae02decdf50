"""Signing in to ``/insights`` from a browser: a form, a session cookie and a sign-out.

A browser cannot send ``Authorization: Bearer`` with a page load, so ``kb-qa serve`` offers
a small form (``GET /insights/sign-in``) that posts the admin token once. What keeps it safe:

- the token is compared in constant time (``hmac.compare_digest`` over SHA-256 digests, so
  neither its content nor its length shows in the timing), never read from a URL, never
  logged, and attempts are rate limited per client address;
- a good token makes a random session id (256 bits), sent as an ``HttpOnly``,
  ``SameSite=Strict`` cookie (``Secure`` when the request came over HTTPS) limited to
  ``/insights`` and to ``admin_session_hours``; the server keeps only a hash of it with its
  expiry, so signing out (``POST /insights/sign-out``) ends the session for good: the same
  cookie sent again is refused;
- every POST must come from the server's own origin (``Origin``, or ``Referer`` when a
  browser sends no ``Origin``; a request with neither is refused, as is a browser's
  ``Sec-Fetch-Site`` other than ``same-origin``), so another site can neither sign a
  browser in nor out; with the same-site cookie no other site can use a session either.

Sessions live in the server's memory: restarting ``kb-qa serve`` signs everyone out.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import html
import secrets
import threading
import time
from collections.abc import Callable
from urllib.parse import parse_qs, urlsplit

from starlette.requests import Request

COOKIE = "kbqa_admin"
MAX_SESSIONS = 200  # signed-in browsers kept at once; the oldest go first
MAX_FORM_BYTES = 4096
SIGN_IN_PER_MINUTE = 6.0  # attempts per client address, after a burst of SIGN_IN_BURST
SIGN_IN_BURST = 5
# Shorter admin tokens are warned about at start: one from a word list falls to the guesses
# the rate limit still lets through (six a minute from each address).
MIN_TOKEN_CHARS = 20


def token_matches(given: str, token: str) -> bool:
    """Whether ``given`` is the admin ``token``, in time that says nothing about either."""
    a = hashlib.sha256(given.encode("utf-8", "surrogatepass")).digest()
    b = hashlib.sha256(token.encode("utf-8", "surrogatepass")).digest()
    return hmac.compare_digest(a, b) and bool(token)


def _digest(session: str) -> bytes:
    return hashlib.sha256(session.encode("utf-8", "surrogatepass")).digest()


class Sessions:
    """Signed-in browsers: the hash of each session id with when it expires."""

    def __init__(self, lifetime: float, clock: Callable[[], float] = time.monotonic) -> None:
        self.lifetime = lifetime  # seconds
        self.clock = clock
        self._live: dict[bytes, float] = {}  # oldest first
        self._lock = threading.Lock()

    def new(self) -> str:
        """A new session; its id goes into the cookie, only its hash stays here."""
        session = secrets.token_urlsafe(32)
        now = self.clock()
        with self._lock:
            for key in [k for k, expires in self._live.items() if expires <= now]:
                del self._live[key]
            while len(self._live) >= MAX_SESSIONS:
                del self._live[next(iter(self._live))]
            self._live[_digest(session)] = now + self.lifetime
        return session

    def valid(self, session: str) -> bool:
        """Whether ``session`` was made here, has not expired and was not ended."""
        if not session:
            return False
        key = _digest(session)
        with self._lock:
            expires = self._live.get(key)
            if expires is None:
                return False
            if expires <= self.clock():
                del self._live[key]
                return False
            return True

    def end(self, session: str) -> bool:
        """Sign ``session`` out; whether it was live."""
        with self._lock:
            return self._live.pop(_digest(session), None) is not None


def own_origin(request: Request) -> str:
    """The origin this request was sent to (scheme, host and port), lower case."""
    return f"{request.url.scheme}://{request.url.netloc}".lower()


def same_origin(request: Request) -> bool:
    """Whether a POST came from a page of this server (the CSRF check)."""
    fetch_site = request.headers.get("sec-fetch-site")
    if fetch_site is not None and fetch_site != "same-origin":
        return False
    own = own_origin(request)
    origin = request.headers.get("origin")
    if origin is not None:  # "null" (a sandboxed or file page) never matches
        return origin.strip().lower() == own
    referer = request.headers.get("referer")
    if not referer:
        return False
    parts = urlsplit(referer.strip())
    return f"{parts.scheme}://{parts.netloc}".lower() == own


async def read_form(request: Request) -> dict[str, str] | None:
    """A small ``application/x-www-form-urlencoded`` body's fields (the first value of each),
    or None when the body is anything else or too big."""
    kind = request.headers.get("content-type", "").split(";", 1)[0].strip().lower()
    if kind != "application/x-www-form-urlencoded":
        return None
    body = b""
    async for piece in request.stream():
        body += piece
        if len(body) > MAX_FORM_BYTES:
            return None
    try:
        fields = parse_qs(body.decode("utf-8"), keep_blank_values=True, max_num_fields=10)
    except (UnicodeDecodeError, ValueError):
        return None
    return {name: values[0] for name, values in fields.items()}


_STYLE = """
body { margin: 0; font: 15px/1.5 system-ui, -apple-system, "Segoe UI", sans-serif;
       color: #1f2328; display: grid; place-items: center; min-height: 100vh; }
form { border: 1px solid #d1d9e0; border-radius: 8px; padding: 24px 28px; box-sizing: border-box;
       width: min(400px, 100% - 24px); }
h1 { font-size: 20px; margin: 0 0 4px; }
p { color: #59636e; margin: 0 0 16px; }
label { display: block; font-weight: 600; margin: 0 0 4px; }
input[type=password] { width: 100%; box-sizing: border-box; font: inherit; padding: 6px 8px;
                       border: 1px solid #818b98; border-radius: 6px; margin: 0 0 16px; }
button { font: inherit; padding: 6px 16px; border: 0; border-radius: 6px; background: #0969da;
         color: #fff; cursor: pointer; }
.problem { color: #cf222e; }
"""


def page_csp() -> str:
    """The sign-in page's Content Security Policy: its own style, a form to its own server."""
    digest = hashlib.sha256(_STYLE.encode()).digest()
    style = "'sha256-" + base64.b64encode(digest).decode() + "'"
    return (
        f"default-src 'none'; style-src {style}; form-action 'self'; base-uri 'none'; "
        "frame-ancestors 'none'"
    )


def sign_in_page(vault: str, problem: str = "", since: str = "") -> str:
    """The sign-in form; ``problem`` says why the last attempt failed."""
    e = html.escape
    said = f'<p class="problem" role="alert">{e(problem)}</p>' if problem else ""
    keep = f'<input type="hidden" name="since" value="{e(since)}">' if since else ""
    return f"""<!doctype html>
<html lang="en"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="same-origin">
<title>Sign in: kb-qa insights</title>
<style>{_STYLE}</style></head><body>
<form method="post" action="sign-in">
<h1>kb-qa insights</h1>
<p>What readers asked of {e(vault)}. Sign in with the server's admin token.</p>
{said}
<label for="token">Admin token</label>
<input type="password" id="token" name="token" autocomplete="current-password" required
 autofocus>
{keep}
<button type="submit">Sign in</button>
</form></body></html>
"""
