"""Request guards of the HTTP API: per-client rate limit and optional bearer token.

A plain ASGI middleware (no BaseHTTPMiddleware), so streamed answers pass through untouched.
Every ``/api/`` request is rate limited (but the health and readiness checks) and, when a
token is configured, must carry ``Authorization: Bearer <token>`` (but the readiness check).
The rate limit runs first, so guessing the token is as slow as everything else.
"""

from __future__ import annotations

import hmac
import ipaddress
import json
import math
import threading
import time
from collections.abc import Callable
from typing import Any

Scope = dict[str, Any]
Receive = Callable[[], Any]
Send = Callable[[dict[str, Any]], Any]
ASGIApp = Callable[[Scope, Receive, Send], Any]

MAX_CLIENTS = 10_000  # buckets kept before full (idle) ones are forgotten
UNLIMITED_PATHS = frozenset({"/api/health", "/api/ready"})
# Answered without the token too: a load balancer's readiness probe often cannot send a
# header (the route then says only whether the server is ready, nothing of why).
OPEN_PATHS = frozenset({"/api/ready"})


def client_key(address: str) -> str:
    """Whose bucket a client address spends from: an IPv4 address its own, an IPv6 address
    its /64 network (one client holds all of it, 2^64 addresses to pick a new one from for
    every request), an IPv4-mapped IPv6 address (``::ffff:198.51.100.7``) its IPv4 address.
    Anything else (a Unix socket's name, "unknown") as given."""
    try:
        ip = ipaddress.ip_address(address.split("%", 1)[0])  # fe80::1%eth0: no zone
    except ValueError:
        return address
    if ip.version == 6 and ip.ipv4_mapped is not None:
        return str(ip.ipv4_mapped)
    if ip.version == 6:
        return str(ipaddress.ip_network(f"{ip}/64", strict=False))
    return str(ip)


class RateLimiter:
    """A token bucket per client: ``per_minute`` sustained, bursts of up to ``burst``."""

    def __init__(self, per_minute: float, burst: int, clock: Callable[[], float] = time.monotonic):
        self.rate = per_minute / 60.0
        self.burst = max(1, burst)
        self.clock = clock
        self._buckets: dict[str, tuple[float, float]] = {}  # client -> (tokens, updated)
        self._lock = threading.Lock()

    def take(self, client: str) -> float:
        """Spend one token of ``client``'s bucket (its IPv6 network: :func:`client_key`);
        0.0 if allowed, else the seconds until a token is available."""
        client = client_key(client)
        now = self.clock()
        with self._lock:
            tokens = self._tokens(client, now)
            if tokens >= 1:
                self._buckets[client] = (tokens - 1, now)
                if len(self._buckets) > MAX_CLIENTS:
                    self._forget_idle(now)
                return 0.0
            self._buckets[client] = (tokens, now)
            return (1 - tokens) / self.rate

    def waiting(self, client: str) -> float:
        """The seconds until ``client`` has a token (0.0: it has one), spending none."""
        client = client_key(client)
        with self._lock:
            tokens = self._tokens(client, self.clock())
        return 0.0 if tokens >= 1 else (1 - tokens) / self.rate

    def _tokens(self, client: str, now: float) -> float:
        """The tokens in ``client``'s bucket at ``now``: what it held, refilled since."""
        tokens, updated = self._buckets.get(client, (float(self.burst), now))
        return min(self.burst, tokens + (now - updated) * self.rate)

    def _forget_idle(self, now: float) -> None:
        full = [c for c in self._buckets if self._tokens(c, now) >= self.burst]
        for client in full:
            del self._buckets[client]


class Guard:
    """ASGI middleware: rate limit and bearer token on ``/api/``; ``nosniff`` on everything."""

    def __init__(self, app: ASGIApp, token: str = "", rate: RateLimiter | None = None) -> None:
        self.app = app
        self.token = token.encode()
        self.rate = rate

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return

        async def send_nosniff(message: dict[str, Any]) -> None:
            if message["type"] == "http.response.start":
                headers = list(message.get("headers", []))
                headers.append((b"x-content-type-options", b"nosniff"))
                message = {**message, "headers": headers}
            await send(message)

        path = scope.get("path", "")
        if scope.get("method") != "OPTIONS":
            # Every route is limited (pages too: a big note is slow to render), except
            # health checks and the widget's static files.
            limited = path not in UNLIMITED_PATHS and not path.startswith("/kb-qa/")
            if self.rate is not None and limited:
                client = (scope.get("client") or ("unknown", 0))[0]
                wait = self.rate.take(client)
                if wait > 0:
                    seconds = max(1, math.ceil(wait))
                    await _error(
                        send_nosniff,
                        429,
                        f"Too many requests from {client}; try again in {seconds} s.",
                        [(b"retry-after", str(seconds).encode())],
                    )
                    return
            guarded = path.startswith("/api/") and path not in OPEN_PATHS
            if guarded and self.token and not self._authorized(scope):
                await _error(
                    send_nosniff,
                    401,
                    "This API needs a token: send the header 'Authorization: Bearer <token>'.",
                    [(b"www-authenticate", b"Bearer")],
                )
                return
        await self.app(scope, receive, send_nosniff)

    def _authorized(self, scope: Scope) -> bool:
        return bearer_matches(scope.get("headers", []), self.token)


LOOPBACK_NAMES = frozenset({"localhost", "127.0.0.1", "::1"})


def host_name(header: str) -> str:
    """The name in a Host header, lowercased, without port or IPv6 brackets."""
    value = header.strip().lower()
    if value.startswith("["):  # [::1]:8321
        return value[1 : value.find("]")] if "]" in value else value
    name, colon, port = value.rpartition(":")
    return (name if colon and port.isdigit() else value).rstrip(".")


def host_allowed(name: str, allowed: tuple[str, ...]) -> bool:
    """Whether a Host name is served: loopback names, IP addresses, or ``allowed``
    (exact names, ``*.example.com`` for its subdomains, ``*`` for any name).

    An IP address cannot be rebound to another machine by DNS, so it is always allowed."""
    if name in LOOPBACK_NAMES or "*" in allowed:
        return True
    try:
        ipaddress.ip_address(name)
        return True
    except ValueError:
        pass
    for pattern in allowed:
        pattern = host_name(pattern)
        if name == pattern or (pattern.startswith("*.") and name.endswith(pattern[1:])):
            return True
    return False


class RequestCheck:
    """ASGI middleware, outermost: refuse requests with more than ``max_headers`` header
    lines (431) or a ``Host`` the server does not answer to (400: DNS rebinding)."""

    def __init__(self, app: ASGIApp, allowed_hosts: tuple[str, ...], max_headers: int) -> None:
        self.app = app
        self.allowed = tuple(allowed_hosts)
        self.max_headers = max_headers

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        headers = scope.get("headers", [])
        if self.max_headers and len(headers) > self.max_headers:
            await _error(
                send,
                431,
                f"The request has {len(headers):,} header lines; the limit is "
                f"{self.max_headers} (max_headers).",
                [(b"connection", b"close")],
            )
            return
        host = next((v for k, v in headers if k == b"host"), None)
        name = host_name(host.decode("latin-1")) if host is not None else ""
        if host is not None and not host_allowed(name, self.allowed):
            shown = name[:100].encode("ascii", "replace").decode()
            await _error(
                send,
                400,
                f"This server does not answer to the host name {shown!r}. Use 127.0.0.1 or "
                "localhost, or add the name to allowed_hosts (KBQA_ALLOWED_HOSTS).",
                [],
            )
            return
        await self.app(scope, receive, send)


def bearer_given(headers: list[tuple[bytes, bytes]]) -> bytes | None:
    """The token of the raw ASGI ``headers``' ``Authorization: Bearer <token>``, or None
    when they carry no Bearer credentials (none, or another scheme such as Basic)."""
    for name, value in headers:
        if name == b"authorization":
            scheme, space, given = value.partition(b" ")
            return given.strip() if space and scheme.lower() == b"bearer" else None
    return None


def bearer_matches(headers: list[tuple[bytes, bytes]], token: bytes) -> bool:
    """Whether the raw ASGI ``headers`` carry ``Authorization: Bearer <token>``."""
    given = bearer_given(headers)
    return given is not None and hmac.compare_digest(given, token)


async def _error(send: Send, status: int, message: str, extra: list[tuple[bytes, bytes]]) -> None:
    body = json.dumps({"error": message}).encode()
    headers = [
        (b"content-type", b"application/json"),
        (b"content-length", str(len(body)).encode()),
        *extra,
    ]
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body})
