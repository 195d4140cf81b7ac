"""A real local PyPI mirror on 127.0.0.1 for tests (issue 19 §1).

:func:`build_mirror` lays real wheels (downloaded once by tests/engines/channel.py's
``ensure_wheels``) out as a PEP 503 simple index, the way bandersnatch mirrors PyPI:
``simple/<project>/index.html`` linking ``packages/<b2[:2]>/<b2[2:4]>/<b2[4:]>/<file>#sha256=...``,
where ``b2`` is the file's blake2b-256, as on files.pythonhosted.org. ``layout="flat"`` puts every
file under ``files/`` instead (a mirror that does not keep PyPI's paths). Each wheel's METADATA is
also served as ``<file>.metadata`` (PEP 658) and announced with ``data-core-metadata``.

:func:`serve` runs ``python -m http.server`` on a free port and yields its base URL; it also serves
a conda channel folder the same way.
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import html
import http.server
import re
import socket
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
import zipfile
from collections.abc import Iterable, Iterator
from pathlib import Path


def _project(wheel: Path) -> str:
    return re.sub(r"[-_.]+", "-", wheel.name.split("-")[0]).lower()


def _metadata(wheel: Path) -> bytes:
    with zipfile.ZipFile(wheel) as zf:
        name = next(n for n in zf.namelist() if n.endswith(".dist-info/METADATA"))
        return zf.read(name)


def build_mirror(root: Path, wheels: Iterable[Path], *, layout: str = "pypi",
                 extra_metadata: dict[str, bytes] | None = None) -> Path:
    """Write the mirror under ``root`` (returned). ``extra_metadata`` maps a wheel file name to the
    METADATA to announce for it without the wheel itself (the route tests read only metadata)."""
    projects: dict[str, list[str]] = {}
    entries: list[tuple[str, bytes, bytes | None]] = [(w.name, w.read_bytes(), None) for w in wheels]
    entries += [(name, b"", meta) for name, meta in (extra_metadata or {}).items()]
    for name, data, meta in entries:
        if layout == "pypi":
            b2 = hashlib.blake2b(data or name.encode(), digest_size=32).hexdigest()
            rel = f"packages/{b2[:2]}/{b2[2:4]}/{b2[4:]}/{name}"
        else:
            rel = f"files/{name}"
        dest = root / rel
        dest.parent.mkdir(parents=True, exist_ok=True)
        if data:
            dest.write_bytes(data)
        metadata = meta if meta is not None else _metadata(root / rel)
        (root / (rel + ".metadata")).write_bytes(metadata)
        sha = hashlib.sha256(data).hexdigest()
        msha = hashlib.sha256(metadata).hexdigest()
        projects.setdefault(re.sub(r"[-_.]+", "-", name.split("-")[0]).lower(), []).append(
            f'<a href="../../{html.escape(rel)}#sha256={sha}" data-core-metadata="sha256={msha}" '
            f'data-dist-info-metadata="sha256={msha}">{html.escape(name)}</a><br/>'
        )
    (root / "simple").mkdir(parents=True, exist_ok=True)
    for project, links in projects.items():
        page = root / "simple" / project / "index.html"
        page.parent.mkdir(parents=True, exist_ok=True)
        page.write_text("<!DOCTYPE html><html><body>\n" + "\n".join(sorted(links)) + "\n</body></html>\n",
                        encoding="utf-8")
    (root / "simple" / "index.html").write_text(
        "<!DOCTYPE html><html><body>\n"
        + "\n".join(f'<a href="{p}/">{p}</a><br/>' for p in sorted(projects)) + "\n</body></html>\n", encoding="utf-8")
    return root


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@contextlib.contextmanager
def serve(folder: Path, *, log: Path | None = None) -> Iterator[str]:
    """``python -m http.server`` for ``folder`` on 127.0.0.1; yields ``http://127.0.0.1:PORT``.
    ``log`` receives the server's request log ("GET /path HTTP/1.1" 200 ...), to prove what was fetched."""
    port = _free_port()
    sink = open(log, "wb") if log else None  # noqa: SIM115 - closed below, after the server
    proc = subprocess.Popen([sys.executable, "-u", "-m", "http.server", str(port), "--bind", "127.0.0.1",
                             "--directory", str(folder)], stdout=sink or subprocess.DEVNULL,
                            stderr=sink or subprocess.DEVNULL)
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 30
        while True:
            try:
                urllib.request.urlopen(base + "/", timeout=2).close()
                break
            except urllib.error.HTTPError:
                break
            except (urllib.error.URLError, OSError):
                if proc.poll() is not None or time.monotonic() > deadline:
                    raise RuntimeError(f"http.server for {folder} did not start") from None
                time.sleep(0.05)
        yield base
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        if sink is not None:
            sink.close()


@contextlib.contextmanager
def serve_with(folder: Path, handler: type[http.server.SimpleHTTPRequestHandler]) -> Iterator[str]:
    """``folder`` served on 127.0.0.1 by ``handler`` (a SimpleHTTPRequestHandler that sets other headers
    or a slower pace) in a thread of this process; yields ``http://127.0.0.1:PORT``."""
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(handler, directory=str(folder)))
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()
