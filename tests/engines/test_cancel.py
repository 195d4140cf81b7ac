"""Cancel means stop (issue 18): Ctrl-C and the TUI's cancel end the running download within a
second, keep what the cache completed, and leave no usable-looking environment.

A local package index serves one real wheel (built here) slowly, so uv is still downloading when
the cancel comes; nothing is faked on cuenv's side: the real uv, the real create pipeline.
"""

from __future__ import annotations

import hashlib
import http.server
import io
import os
import signal
import subprocess
import sys
import threading
import time
import zipfile
from pathlib import Path

import pytest

from cuenv.engines import Package, Solution
from cuenv.engines.venv import VenvEngine

WHEEL = "slowpkg-1.0-py3-none-any.whl"
SIZE = 8 << 20  # uv announces downloads above ~1 MiB; served at 256 KiB/s this takes half a minute


def _wheel() -> tuple[bytes, bytes]:
    """(the wheel, its METADATA): a real, installable wheel with a large stored payload."""
    meta = b"Metadata-Version: 2.1\nName: slowpkg\nVersion: 1.0\n"
    files = {
        "slowpkg/__init__.py": b"",
        "slowpkg/payload.bin": os.urandom(SIZE),
        "slowpkg-1.0.dist-info/METADATA": meta,
        "slowpkg-1.0.dist-info/WHEEL": b"Wheel-Version: 1.0\nGenerator: test\nRoot-Is-Purelib: true\nTag: py3-none-any\n",
    }
    record = "".join(f"{n},sha256={hashlib.sha256(d).hexdigest()},{len(d)}\n" for n, d in files.items())
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_STORED) as z:
        for name, data in files.items():
            z.writestr(name, data)
        z.writestr("slowpkg-1.0.dist-info/RECORD", record + "slowpkg-1.0.dist-info/RECORD,,\n")
    return buf.getvalue(), meta


@pytest.fixture(scope="module")
def slow_index():
    wheel, meta = _wheel()
    sha = hashlib.sha256(wheel).hexdigest()
    meta_sha = hashlib.sha256(meta).hexdigest()

    class Handler(http.server.BaseHTTPRequestHandler):
        def log_message(self, *args) -> None:  # quiet
            pass

        def do_GET(self) -> None:  # noqa: N802 - http.server's name
            if self.path.rstrip("/") == "/simple/slowpkg":
                body = (f'<html><body><a href="/{WHEEL}#sha256={sha}" data-dist-info-metadata="sha256={meta_sha}" '
                        f'data-core-metadata="sha256={meta_sha}">{WHEEL}</a></body></html>').encode()
                self._send(body, "text/html")
            elif self.path == f"/{WHEEL}.metadata":
                self._send(meta, "text/plain")
            elif self.path == f"/{WHEEL}":
                self.send_response(200)
                self.send_header("Content-Type", "application/octet-stream")
                self.send_header("Content-Length", str(len(wheel)))
                self.end_headers()
                try:
                    for at in range(0, len(wheel), 64 << 10):
                        self.wfile.write(wheel[at:at + (64 << 10)])
                        time.sleep(0.25)
                except (BrokenPipeError, ConnectionResetError):
                    pass
            else:
                self.send_error(404)

        def do_HEAD(self) -> None:  # noqa: N802 - uv asks whether ranges are served: they are not
            if self.path == f"/{WHEEL}":
                self.send_response(200)
                self.send_header("Content-Length", str(len(wheel)))
                self.end_headers()
            else:
                self.send_error(404)

        def _send(self, body: bytes, kind: str) -> None:
            self.send_response(200)
            self.send_header("Content-Type", kind)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{server.server_port}", sha, len(wheel)
    server.shutdown()


def _running(marker: str) -> list[str]:
    """Command lines of live processes that mention ``marker``."""
    found = []
    for proc in Path("/proc").iterdir():
        if not proc.name.isdigit() or int(proc.name) == os.getpid():
            continue
        try:
            cmd = (proc / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
            state = next((ln for ln in (proc / "status").read_text().splitlines() if ln.startswith("State:")), "")
        except OSError:
            continue
        if marker in cmd and "zombie" not in state:
            found.append(cmd)
    return found


class Stop(BaseException):
    """What the TUI's cancel raises from the progress callback (like CreateCancelled)."""


def test_a_cancel_ends_uv_within_a_second(slow_index, tmp_path: Path):
    url, sha, size = slow_index
    pkg = Package(name="slowpkg", version="1.0", kind="pypi", url=f"{url}/{WHEEL}", sha256=sha, size=size)
    solution = Solution(engine="venv", platform="linux-64", python=None, packages=(pkg,))
    prefix = tmp_path / "env"
    seen: list[str] = []
    asked: list[float] = []

    def progress(event: str, detail: str = "", *, nbytes: int | None = None) -> None:
        seen.append(event)
        if "download" in seen and not asked:
            time.sleep(0.5)  # uv is well into the download
            asked.append(time.monotonic())
            raise Stop()

    with pytest.raises(Stop):
        VenvEngine(dict(os.environ)).install(prefix, solution, cache_dir=tmp_path / "cache", progress=progress)
    assert time.monotonic() - asked[0] < 1.0
    assert not _running(str(prefix)), "uv is still running"
    assert seen.count("download") == 1 and "downloaded" not in seen


def _recipe(folder: Path, index: str) -> None:
    folder.mkdir()
    (folder / "slow.yaml").write_text(
        "name: slow\nsummary: one slow download\nframework: null\ncuda: \"12.1\"\ncudnn: null\n"
        "python:\n  default: \"3.11\"\n  supported: \">=3.8\"\n"
        "arch:\n  sass: [\"8.0\"]\n  ptx: [\"8.0\"]\nplatforms: [\"linux-64\"]\nsmoke_test:\n  python: \"import slowpkg\"\n"
        f"install:\n  venv:\n    index_urls:\n      - \"{index}/simple\"\n    requirements:\n      - \"slowpkg==1.0\"\n"
        "    nvcc: false\n", encoding="utf-8")


def test_ctrl_c_stops_a_create_within_a_second_and_leaves_nothing(slow_index, tmp_path: Path):
    url, _, _ = slow_index
    _recipe(tmp_path / "recipes", url)
    env = {**os.environ, "CUENV_RECIPES": str(tmp_path / "recipes")}  # CUENV_HOME: the isolated one
    proc = subprocess.Popen([sys.executable, "-m", "cuenv", "create", "slow", "--engine", "venv"], env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    lines = []
    for line in proc.stderr:  # not a terminal: one plain line per step and download
        lines.append(line)
        if line.startswith("download: slowpkg"):
            break
    else:
        raise AssertionError("no download started:\n" + "".join(lines))
    time.sleep(0.5)
    sent = time.monotonic()
    proc.send_signal(signal.SIGINT)
    code = proc.wait(timeout=10)
    took = time.monotonic() - sent
    rest = proc.stderr.read()
    assert code == 130, rest
    assert took < 1.0, f"exit took {took:.2f} s"
    assert "interrupted" in rest
    envs = Path(env["CUENV_HOME"]) / "envs"
    assert not (envs / "slow").exists(), "a half-built environment was left"
    assert not _running(str(envs / "slow"))
