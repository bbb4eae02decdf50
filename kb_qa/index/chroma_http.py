"""Reaching a Chroma server: is it one, does it answer, and a bounded wait for each call.

chromadb's HTTP client asks the server who we are as it is made, with no time limit, and
reports whatever answers at the address (a web server's HTML page) as a failure to connect.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING
from urllib.parse import urlparse

from kb_qa.errors import IndexStateError

if TYPE_CHECKING:
    import httpx  # imported where used: the CLI starts without it

log = logging.getLogger(__name__)


# chromadb's HTTP client waits forever (httpx.Client(timeout=None)): a Chroma server that
# stops answering (paused, partitioned, overloaded) would hang every call, the API's health
# check and `kb-qa search` included. Bounded, it is an error that says what to check.
CHROMA_CONNECT_SECONDS = 5.0
CHROMA_READ_SECONDS = 30.0


def answers(chroma_url: str) -> None:
    """Fail in words when the server at ``chroma_url`` accepts connections but does not
    answer (chromadb's client asks it who we are, unbounded, as it is made)."""
    import httpx

    wait = httpx.Timeout(CHROMA_CONNECT_SECONDS)
    # Reached as chromadb's client reaches it (host and port; proxies from the environment).
    url = urlparse(chroma_url)
    base = f"{url.scheme}://{url.netloc}"
    try:
        beat = httpx.get(f"{base}/api/v2/heartbeat", timeout=wait)
        if beat.is_server_error:  # chromadb would call it unreachable, with the error page
            raise IndexStateError(
                f"The server at {chroma_url} answers Chroma's heartbeat with HTTP "
                f"{beat.status_code} {beat.reason_phrase}: a Chroma server that is failing (see "
                "its log), or another server or a proxy's error page at that address. Check "
                "chroma_url (KBQA_CHROMA_URL or --chroma-url)."
            )
        if _heartbeat(beat) is not False:
            return
        if _heartbeat(httpx.get(f"{base}/api/v1/heartbeat", timeout=wait)):
            raise IndexStateError(
                f"The server at {chroma_url} is an older Chroma (0.x, /api/v1 only); this kb-qa "
                f"needs a Chroma 1.x server (its client is chromadb {_client_version()})."
            )
    except httpx.TimeoutException as exc:
        raise IndexStateError(
            f"The Chroma server at {chroma_url} did not answer within "
            f"{CHROMA_CONNECT_SECONDS:.0f} s. Check that it is running and not overloaded "
            "(or unset KBQA_CHROMA_URL to use the embedded index)."
        ) from exc
    except httpx.HTTPError as exc:
        if url.scheme == "https" and _plain_http(url.netloc, wait):
            raise IndexStateError(
                f"The Chroma server at {url.netloc} speaks plain http, not https: give "
                f"http://{url.netloc} as chroma_url (KBQA_CHROMA_URL or --chroma-url), or "
                "put it behind a TLS proxy."
            ) from exc
        return  # refused, reset: chromadb's own first call says so
    raise IndexStateError(
        f"Something answers at {chroma_url}, but it is not a Chroma server (it has no "
        "/api/v2/heartbeat). Check the address and port of chroma_url (KBQA_CHROMA_URL)."
    )


def _plain_http(netloc: str, wait: httpx.Timeout) -> bool:
    """Whether a Chroma server answers plain http at ``netloc`` (given as https)."""
    import httpx

    try:
        return bool(_heartbeat(httpx.get(f"http://{netloc}/api/v2/heartbeat", timeout=wait)))
    except httpx.HTTPError:
        return False


def _heartbeat(response: httpx.Response) -> bool | None:
    """Whether a heartbeat reply is Chroma's; None when it cannot say (an error status of a
    Chroma behind a proxy, say: chromadb's own call then tells)."""
    if response.status_code in (404, 405) or response.is_success:
        try:
            return response.is_success and "nanosecond heartbeat" in response.json()
        except (ValueError, TypeError):
            return False
    return None


def _client_version() -> str:
    import chromadb

    return str(getattr(chromadb, "__version__", "?"))


def bound(client: object) -> None:
    """Give a chromadb HttpClient's HTTP session a timeout (chromadb 0.5-1.x: its server
    API's ``_session``, an ``httpx.Client``)."""
    import httpx

    session = getattr(getattr(client, "_server", None), "_session", None)
    if isinstance(session, httpx.Client):
        session.timeout = httpx.Timeout(CHROMA_READ_SECONDS, connect=CHROMA_CONNECT_SECONDS)
    else:
        log.warning("cannot bound the Chroma client's wait: calls to a hung server may hang")
