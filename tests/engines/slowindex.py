"""A local package index (PEP 503) that serves a real wheel slowly, so a download is still running when a
cancel comes: tests/engines/test_cancel.py's verdicts and benchmarks/bench_guards.py's cancel figure."""

from __future__ import annotations

import hashlib
import http.server
import io
import os
import ssl
import threading
import time
import zipfile
from pathlib import Path

WHEEL = "slowpkg-1.0-py3-none-any.whl"
SIZE = 8 << 20  # uv announces downloads above ~1 MiB; served at 256 KiB/s this takes half a minute


def wheel(name: str = "slowpkg", size: int = SIZE) -> tuple[bytes, bytes]:
    """(the wheel, its METADATA): a real, installable wheel with a large stored payload."""
    meta = f"Metadata-Version: 2.1\nName: {name}\nVersion: 1.0\n".encode()
    files = {
        f"{name}/__init__.py": b"",
        f"{name}/payload.bin": os.urandom(size),
        f"{name}-1.0.dist-info/METADATA": meta,
        f"{name}-1.0.dist-info/WHEEL": b"Wheel-Version: 1.0\nGenerator: test\nRoot-Is-Purelib: true\nTag: py3-none-any\n",
    }
    record = "".join(f"{n},sha256={hashlib.sha256(d).hexdigest()},{len(d)}\n" for n, d in files.items())
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_STORED) as z:
        for path, data in files.items():
            z.writestr(path, data)
        z.writestr(f"{name}-1.0.dist-info/RECORD", record + f"{name}-1.0.dist-info/RECORD,,\n")
    return buf.getvalue(), meta


def index(wheels: dict[str, tuple[bytes, bytes]], fast: threading.Event, certs: Path | None = None):
    """A running package index (PEP 503) of ``wheels``: slowpkg served at 256 KiB/s until ``fast``
    is set, everything else at once; over TLS with ``certs`` (leaf.pem, leaf.key). Returns the server;
    its ``in_full`` lists the names of the wheels it sent to the last byte."""
    in_full: list[str] = []

    class Handler(http.server.BaseHTTPRequestHandler):
        def log_message(self, *args) -> None:  # quiet
            pass

        def do_GET(self) -> None:  # noqa: N802 - http.server's name
            for name, (wheel, meta) in wheels.items():
                file = f"{name}-1.0-py3-none-any.whl"
                if self.path.rstrip("/") == f"/simple/{name}":
                    digest, meta_digest = hashlib.sha256(wheel).hexdigest(), hashlib.sha256(meta).hexdigest()
                    return self._send(f'<html><body><a href="/{file}#sha256={digest}" data-dist-info-metadata='
                                      f'"sha256={meta_digest}" data-core-metadata="sha256={meta_digest}">{file}</a>'
                                      "</body></html>".encode(), "text/html")
                if self.path == f"/{file}.metadata":
                    return self._send(meta, "text/plain")
                if self.path == f"/{file}" and self.headers.get("Range", "").startswith("bytes="):
                    return self._range(wheel, self.headers["Range"][len("bytes="):])
                if self.path == f"/{file}":
                    self.send_response(200)
                    self.send_header("Content-Type", "application/octet-stream")
                    self.send_header("Content-Length", str(len(wheel)))
                    self.end_headers()
                    try:
                        for at in range(0, len(wheel), 64 << 10):
                            self.wfile.write(wheel[at:at + (64 << 10)])
                            if name == "slowpkg" and not fast.is_set():
                                time.sleep(0.25)
                        self.wfile.flush()
                        in_full.append(name)
                    except (BrokenPipeError, ConnectionResetError, ssl.SSLError):
                        pass
                    return None
            return self.send_error(404)

        def do_HEAD(self) -> None:  # noqa: N802 - uv asks whether ranges are served
            for name, (wheel, _) in wheels.items():
                if self.path == f"/{name}-1.0-py3-none-any.whl":
                    self.send_response(200)
                    self.send_header("Content-Length", str(len(wheel)))
                    self.send_header("Accept-Ranges", "bytes")
                    self.end_headers()
                    return
            self.send_error(404)

        def _range(self, wheel: bytes, spec: str) -> None:
            """One byte range, at once, as PyPI's file host serves them: uv reads a wheel's METADATA
            through ranges, so only the install's download is slow (without ranges uv fetched the
            whole slow wheel to resolve it: 32 s before the download the test cancels began)."""
            first, _, last = spec.partition("-")
            start = len(wheel) - int(last) if not first else int(first)
            end = min(len(wheel) - 1, int(last) if first and last else len(wheel) - 1)
            body = wheel[max(start, 0):end + 1]
            self.send_response(206)
            self.send_header("Content-Range", f"bytes {max(start, 0)}-{end}/{len(wheel)}")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def _send(self, body: bytes, kind: str) -> None:
            self.send_response(200)
            self.send_header("Content-Type", kind)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    server.in_full = in_full  # type: ignore[attr-defined]  # what the tests read back
    if certs is not None:
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        context.load_cert_chain(certs / "leaf.pem", certs / "leaf.key")
        server.socket = context.wrap_socket(server.socket, server_side=True)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server
