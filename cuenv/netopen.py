"""Opening a URL as uv and pip do: a transient failure is tried again, twice, after a short wait.

Transient: a name lookup that says "try again" (EAI_AGAIN), a connection reset by the peer, and HTTP 429,
502, 503 and 504. Anything else (a refused connection, a 404, a certificate, a timeout that already waited
its full time) fails at once, so that a wrong URL or an unreachable mirror says so without delay.
"""

from __future__ import annotations

import socket
import time
import urllib.error
import urllib.request

TYPE_CHECKING = False  # no `typing` at run time (issue 29)
if TYPE_CHECKING:
    from http.client import HTTPResponse
    from typing import Final

ATTEMPTS: Final = 3
WAIT: Final = 0.5  # seconds before the second attempt; twice that before the third
_AGAIN_HTTP: Final = frozenset({429, 502, 503, 504})


def transient(exc: BaseException) -> bool:
    """Whether ``exc`` (from urlopen) is a failure that trying again may cure."""
    if isinstance(exc, urllib.error.HTTPError):
        return exc.code in _AGAIN_HTTP
    reason = getattr(exc, "reason", exc)
    if isinstance(reason, socket.gaierror):
        return reason.errno == socket.EAI_AGAIN
    return isinstance(reason, ConnectionResetError)


def urlopen(request: str | urllib.request.Request, *, timeout: float) -> HTTPResponse:
    """``urllib.request.urlopen``, a transient failure tried again (ATTEMPTS in all); the last one raised."""
    attempt = 1
    while True:
        try:
            response: HTTPResponse = urllib.request.urlopen(request, timeout=timeout)  # noqa: S310 - callers check the scheme
            return response
        except OSError as exc:  # URLError and HTTPError are OSErrors
            if attempt == ATTEMPTS or not transient(exc):
                raise
        time.sleep(WAIT * attempt)
        attempt += 1
