"""Vendor metadata from PyPI without downloading wheels.

A project's files come from the JSON simple index (PEP 691). A wheel's METADATA comes from its
PEP 658 ``.metadata`` file where the index offers one, else from the wheel itself read with HTTP
range requests (the central directory and one member, as pip's lazy wheel does); the same way
reads one header out of NVIDIA's wheels. Every response is kept for the life of a ``Client``, and
in ``cache_dir`` when one is given, so one run fetches each byte range once.
"""

from __future__ import annotations

import hashlib
import io
import json
import threading
import urllib.error
import urllib.parse
import urllib.request
import zipfile
from dataclasses import dataclass
from email.message import Message
from email.parser import BytesParser
from pathlib import Path
from typing import Final

from cuenv import netopen
from cuenv.knowledge.packages import canonical

INDEX: Final = "https://pypi.org"
TIMEOUT: Final = 60.0
_BLOCK: Final = 256 * 1024  # smallest range fetched: a wheel's tail holds the directory and METADATA


class FetchError(Exception):
    """A vendor source could not be read (network, HTTP status, or an unreadable wheel)."""


@dataclass(frozen=True)
class File:
    """One file of a project as the simple index lists it."""

    filename: str
    url: str
    size: int
    requires_python: str | None
    yanked: bool
    upload_time: str
    has_metadata: bool  # PEP 658/714: a .metadata file sits next to the wheel


class Client:
    def __init__(self, index: str = INDEX, cache_dir: Path | None = None) -> None:
        self.index = index.rstrip("/")
        self.cache_dir = cache_dir
        self._memo: dict[tuple[str, str], bytes] = {}
        self.requests = 0  # how many went to the network
        self.largest_range = 0  # the most bytes one byte range brought: a wheel's directory or a member, not all of it

    # -- HTTP ---------------------------------------------------------------------------------

    def get(self, url: str, *, byte_range: str = "", accept: str = "") -> bytes:
        key = (url, byte_range)
        if key in self._memo:
            return self._memo[key]
        disk = self._disk_path(url, byte_range)
        if disk is not None and disk.is_file():
            data = disk.read_bytes()
        else:
            data = self._fetch(url, byte_range, accept)
            if disk is not None:
                disk.parent.mkdir(parents=True, exist_ok=True)
                tmp = disk.with_suffix(f".part{threading.get_ident()}")  # sections fetch side by side
                tmp.write_bytes(data)
                tmp.replace(disk)
        self._memo[key] = data
        return data

    def _disk_path(self, url: str, byte_range: str) -> Path | None:
        if self.cache_dir is None:
            return None
        return self.cache_dir / hashlib.sha256(f"{url}\n{byte_range}".encode()).hexdigest()[:32]

    def _fetch(self, url: str, byte_range: str, accept: str) -> bytes:
        headers = {"User-Agent": "cuenv-knowledge-refresh"}
        if byte_range:
            headers["Range"] = f"bytes={byte_range}"
        if accept:
            headers["Accept"] = accept
        self.requests += 1
        try:
            with netopen.urlopen(urllib.request.Request(url, headers=headers), timeout=TIMEOUT) as resp:
                if byte_range and resp.status != 206:
                    raise FetchError(f"{url}: the server ignored the byte range (HTTP {resp.status})")
                data: bytes = resp.read()
                if byte_range:
                    self.largest_range = max(self.largest_range, len(data))
                return data
        except urllib.error.HTTPError as exc:
            raise FetchError(f"{url}: HTTP {exc.code}") from None
        except (urllib.error.URLError, OSError) as exc:
            raise FetchError(f"{url}: {getattr(exc, 'reason', exc)}") from None

    # -- index --------------------------------------------------------------------------------

    def files(self, project: str) -> tuple[File, ...]:
        """Every file of ``project`` (PEP 691 JSON); () when PyPI has no such project."""
        url = f"{self.index}/simple/{canonical(project)}/"
        try:
            raw = self.get(url, accept="application/vnd.pypi.simple.v1+json")
        except FetchError as exc:
            if "HTTP 404" in str(exc):
                return ()
            raise
        doc = json.loads(raw)
        return tuple(
            File(
                filename=f["filename"],
                url=urllib.parse.urljoin(url, f["url"]),
                size=int(f.get("size") or 0),
                requires_python=f.get("requires-python"),
                yanked=bool(f.get("yanked")),
                upload_time=f.get("upload-time") or "",
                has_metadata=bool(f.get("core-metadata") or f.get("dist-info-metadata")),
            )
            for f in doc.get("files", ())
        )

    # -- wheels -------------------------------------------------------------------------------

    def metadata(self, wheel: File) -> Message:
        """The wheel's METADATA headers (Requires-Dist, Requires-Python, ...)."""
        if wheel.has_metadata:
            raw = self.get(wheel.url.split("#", 1)[0] + ".metadata")
        else:
            with self._open(wheel) as zf:
                name = next((n for n in zf.namelist() if n.count("/") == 1 and n.endswith(".dist-info/METADATA")), None)
                if name is None:
                    raise FetchError(f"{wheel.filename}: no .dist-info/METADATA in the wheel")
                raw = zf.read(name)
        return BytesParser().parsebytes(raw, headersonly=True)

    def names(self, wheel: File) -> tuple[str, ...]:
        """Every path inside a wheel (its central directory only)."""
        with self._open(wheel) as zf:
            return tuple(zf.namelist())

    def member(self, wheel: File, suffix: str) -> bytes | None:
        """The first file inside the wheel whose path ends with ``suffix``; None when there is none."""
        with self._open(wheel) as zf:
            name = next((n for n in zf.namelist() if n.endswith(suffix)), None)
            return zf.read(name) if name else None

    def _open(self, wheel: File) -> zipfile.ZipFile:
        if not wheel.size:
            raise FetchError(f"{wheel.filename}: the index gives no size, so it cannot be read in ranges")
        try:
            return zipfile.ZipFile(_RemoteFile(self, wheel.url.split("#", 1)[0], wheel.size))
        except zipfile.BadZipFile as exc:
            raise FetchError(f"{wheel.filename}: not a readable wheel ({exc})") from None


class _RemoteFile(io.RawIOBase):
    """A read-only, seekable view of a remote file made of aligned, cached byte ranges."""

    def __init__(self, client: Client, url: str, size: int) -> None:
        self.client, self.url, self.size, self.pos = client, url, size, 0

    def readable(self) -> bool:
        return True

    def seekable(self) -> bool:
        return True

    def tell(self) -> int:
        return self.pos

    def seek(self, offset: int, whence: int = io.SEEK_SET) -> int:
        base = {io.SEEK_SET: 0, io.SEEK_CUR: self.pos, io.SEEK_END: self.size}[whence]
        self.pos = max(0, base + offset)
        return self.pos

    def readinto(self, buffer: bytearray | memoryview) -> int:  # type: ignore[override]  # RawIOBase: WriteableBuffer
        want = min(len(buffer), self.size - self.pos)
        if want <= 0:
            return 0
        data = self._read(self.pos, want)
        buffer[: len(data)] = data
        self.pos += len(data)
        return len(data)

    def _read(self, start: int, length: int) -> bytes:
        if length > _BLOCK:  # the central directory: one request for all of it
            return self.client.get(self.url, byte_range=f"{start}-{start + length - 1}")
        out = bytearray()
        first = start - start % _BLOCK
        # blocks are aligned from the end, so the tail (directory, dist-info) is one request
        tail_start = max(0, self.size - _BLOCK)
        if start >= tail_start:
            first = tail_start
        block = first
        while block < start + length:
            end = min(self.size, block + _BLOCK) - 1 if block != tail_start else self.size - 1
            out += self.client.get(self.url, byte_range=f"{block}-{end}")
            block = end + 1
        offset = start - first
        return bytes(out[offset: offset + length])


