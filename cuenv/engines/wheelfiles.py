"""The files a wheel installs, read from its zip central directory without downloading the wheel
(issue 25 §4): two HTTP range requests at most (the tail, then the directory if it is not in the tail),
bounded; a file:// wheel is read in place. Used to tell whether NVIDIA wheels of two CUDA majors really
write the same files (cu11 and cu12 wheels share ``nvidia/<component>/``; CUDA 13 wheels live under
``nvidia/cu13/``), instead of judging them by their names.
"""

from __future__ import annotations

import struct
import urllib.parse
import urllib.request
import zipfile
from pathlib import Path
from typing import Final

from cuenv import netopen

TAIL: Final = 65_536 + 22  # the end-of-central-directory record and the longest zip comment
MAX_DIRECTORY: Final = 16 * 1024 * 1024  # a central directory larger than this is not read
TIMEOUT: Final = 30.0


class Unreadable(Exception):
    """The wheel's file list could not be read (no range support, not a zip, too large, network)."""


def wheel_files(url: str, *, timeout: float = TIMEOUT) -> frozenset[str]:
    """The paths in the wheel at ``url`` (https or file); Unreadable when they cannot be told."""
    parsed = urllib.parse.urlparse(url)
    if parsed.scheme == "file":
        try:
            with zipfile.ZipFile(Path(urllib.request.url2pathname(parsed.path))) as zf:
                return frozenset(zf.namelist())
        except (OSError, zipfile.BadZipFile) as exc:
            raise Unreadable(str(exc)) from None
    if parsed.scheme not in ("https", "http"):
        raise Unreadable(f"{parsed.scheme or 'no'} scheme")
    tail, size = _range(url, f"bytes=-{TAIL}", timeout)
    start = tail.rfind(b"PK\x05\x06")
    if start < 0 or len(tail) < start + 22:
        raise Unreadable("no end of central directory")
    _, _, _, count, cd_size, cd_offset = struct.unpack("<HHHHII", tail[start + 4:start + 20])
    if cd_offset == 0xFFFFFFFF or count == 0xFFFF:  # zip64: the locator just before says where the record is
        locator = tail.rfind(b"PK\x06\x07", 0, start)
        if locator < 0:
            raise Unreadable("zip64 without a locator")
        (record_offset,) = struct.unpack("<Q", tail[locator + 8:locator + 16])
        tail_start = size - len(tail)
        at = record_offset - tail_start
        if at < 0 or tail[at:at + 4] != b"PK\x06\x06":
            raise Unreadable("zip64 record outside the tail")
        cd_size, cd_offset = struct.unpack("<QQ", tail[at + 40:at + 56])
    if cd_size > MAX_DIRECTORY:
        raise Unreadable(f"a central directory of {cd_size} bytes")
    tail_start = size - len(tail)
    if cd_offset >= tail_start:
        directory = tail[cd_offset - tail_start:cd_offset - tail_start + cd_size]
    else:
        directory, _ = _range(url, f"bytes={cd_offset}-{cd_offset + cd_size - 1}", timeout)
    return frozenset(_names(directory))


def _range(url: str, spec: str, timeout: float) -> tuple[bytes, int]:
    """The bytes of one range request, and the file's whole size (from Content-Range)."""
    request = urllib.request.Request(url, headers={"Range": spec, "User-Agent": "cuenv"})
    try:
        with netopen.urlopen(request, timeout=timeout) as response:  # https/http only, checked above
            if response.status != 206:
                raise Unreadable(f"no range support (HTTP {response.status})")
            total = response.headers.get("Content-Range", "").rpartition("/")[2]
            data = response.read(MAX_DIRECTORY + TAIL + 1)
    except OSError as exc:
        raise Unreadable(str(exc)) from None
    if len(data) > MAX_DIRECTORY + TAIL or not total.isdigit():
        raise Unreadable("an unexpected range answer")
    return data, int(total)


def _names(directory: bytes) -> list[str]:
    out, at = [], 0
    while at + 46 <= len(directory) and directory[at:at + 4] == b"PK\x01\x02":
        name_len, extra_len, comment_len = struct.unpack("<HHH", directory[at + 28:at + 34])
        out.append(directory[at + 46:at + 46 + name_len].decode("utf-8", "replace"))
        at += 46 + name_len + extra_len + comment_len
    if at != len(directory):
        raise Unreadable("a damaged central directory")
    return out


def clashes(files: dict[str, frozenset[str]]) -> tuple[str, str, str] | None:
    """(path, wheel, other wheel) for the first file two wheels both write, ignoring the empty
    namespace ``__init__.py`` files every NVIDIA wheel carries and each wheel's own dist-info."""
    seen: dict[str, str] = {}
    for wheel in sorted(files):
        for path in sorted(files[wheel]):
            if path.endswith("/") or path.endswith("__init__.py") or ".dist-info/" in path or ".data/" in path:
                continue
            if path in seen and seen[path] != wheel:
                return path, seen[path], wheel
            seen.setdefault(path, wheel)
    return None


__all__ = ["Unreadable", "clashes", "wheel_files"]
