"""A transient network failure is tried again, as uv and pip do (cuenv.netopen); anything else fails at once.
Seen in CI: a DNS lookup of pypi.org failed once ("Temporary failure in name resolution") and a test that
reads PyPI failed with it."""

from __future__ import annotations

import socket
import threading
import urllib.error
from collections.abc import Iterator
from email.message import Message
from http.server import BaseHTTPRequestHandler, HTTPServer

import pytest

from cuenv import netopen


@pytest.mark.parametrize("exc, again", [
    (urllib.error.HTTPError("u", 503, "busy", Message(), None), True),
    (urllib.error.HTTPError("u", 429, "slow down", Message(), None), True),
    (urllib.error.HTTPError("u", 404, "no", Message(), None), False),
    (urllib.error.URLError(socket.gaierror(socket.EAI_AGAIN, "Temporary failure in name resolution")), True),
    (urllib.error.URLError(socket.gaierror(socket.EAI_NONAME, "Name or service not known")), False),
    (urllib.error.URLError(ConnectionResetError(104, "reset")), True),
    (urllib.error.URLError(ConnectionRefusedError(111, "refused")), False),
])
def test_what_counts_as_transient(exc, again):
    assert netopen.transient(exc) is again


@pytest.fixture
def server() -> Iterator[tuple[str, list[int]]]:
    """A real HTTP server on 127.0.0.1: /flaky answers 503 once, then 200; /gone always 404. Lists each status."""
    served: list[int] = []

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:  # noqa: N802 - http.server's name
            status = 404 if self.path == "/gone" else (503 if not served else 200)
            served.append(status)
            self.send_response(status)
            self.end_headers()
            self.wfile.write(b"ok" if status == 200 else b"")

        def log_message(self, *args: object) -> None:
            pass

    httpd = HTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{httpd.server_address[1]}", served
    finally:
        httpd.shutdown()
        httpd.server_close()


def test_a_503_is_tried_again_and_a_404_is_not(server, monkeypatch):
    monkeypatch.setattr(netopen, "WAIT", 0.0)
    base, served = server
    with netopen.urlopen(f"{base}/flaky", timeout=10) as resp:
        assert resp.read() == b"ok"
    assert served == [503, 200]
    served.clear()
    with pytest.raises(urllib.error.HTTPError) as err:
        netopen.urlopen(f"{base}/gone", timeout=10)
    assert err.value.code == 404 and served == [404]
