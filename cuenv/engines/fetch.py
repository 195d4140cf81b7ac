"""Get a locked artifact and prove it is the one the lock names, before anything is linked."""

from __future__ import annotations

import hashlib
import os
import urllib.error
import urllib.parse
import urllib.request
from pathlib import Path
from typing import Final

from cuenv import netopen
from cuenv.engines.base import DownloadFailed, HashMismatch, Package, emit
from cuenv.engines.events import Chunk, Download, Downloaded, Progress
from cuenv.engines.mirrors import Mirrors

TIMEOUT: Final = 60.0
_CHUNK: Final = 1 << 18


def digests(path: Path) -> tuple[str, str]:
    sha, md5 = hashlib.sha256(), hashlib.md5()
    with open(path, "rb") as fh:
        for chunk in iter(lambda: fh.read(_CHUNK), b""):
            sha.update(chunk)
            md5.update(chunk)
    return sha.hexdigest(), md5.hexdigest()


def check(pkg: Package, path: Path) -> None:
    """Raise HashMismatch unless ``path`` has the package's sha256 (or, lacking one, its md5)."""
    if not pkg.sha256 and not pkg.md5:
        raise HashMismatch(f"{pkg.name} {pkg.version}", expected="a sha256 or md5 in the lock", actual="none")
    sha, md5 = digests(path)
    if pkg.sha256 and sha != pkg.sha256.lower():
        raise HashMismatch(pkg.filename or pkg.url, expected=f"sha256:{pkg.sha256}", actual=f"sha256:{sha}")
    if pkg.md5 and md5 != pkg.md5.lower():
        raise HashMismatch(pkg.filename or pkg.url, expected=f"md5:{pkg.md5}", actual=f"md5:{md5}")


def local_path(url: str) -> Path | None:
    parsed = urllib.parse.urlparse(url)
    if parsed.scheme == "file":
        return Path(urllib.request.url2pathname(parsed.path))
    if parsed.scheme == "" and url.startswith("/"):
        return Path(url)
    return None


def verified_archive(pkg: Package, archives: Path, *, progress: Progress | None = None,
                     mirrors: Mirrors | None = None) -> Path:
    """A local, hash-checked copy of ``pkg``: the file itself for file:// URLs, else a download
    (from the URL's mirror, if it has one) kept in ``archives`` (reused while its hash still matches)."""
    url = (mirrors or Mirrors()).to_mirror(pkg.url)
    path = local_path(url)
    if path is not None:
        if not path.is_file():
            raise DownloadFailed(url, "no such file")
        check(pkg, path)
        return path
    from cuenv.trust import paths

    name = pkg.filename or pkg.url.rsplit("/", 1)[-1]
    paths.check_file_name(name, source=f"{pkg.name} {pkg.version}")  # read from a lock: checked there too
    dest = paths.inside(archives, name)
    if dest.is_file():
        try:
            check(pkg, dest)
            return dest
        except HashMismatch:
            paths.unlink(archives, name)  # a stale or damaged cache entry: fetch it again
    archives.mkdir(parents=True, exist_ok=True)
    part_name = f".{name}.part{os.getpid()}"
    emit(progress, Download(pkg.name, pkg.size))
    try:
        with netopen.urlopen(url, timeout=TIMEOUT) as resp, paths.open_new(archives, part_name) as out:
            # Small reads: each one is a moment to show progress and to honour a cancel (issue 18).
            for chunk in iter(lambda: resp.read(_CHUNK), b""):
                out.write(chunk)
                emit(progress, Chunk(pkg.name, len(chunk)))
    except (urllib.error.URLError, OSError, ValueError) as exc:
        paths.unlink(archives, part_name)
        raise DownloadFailed(url, str(getattr(exc, "reason", exc))) from None
    except BaseException:  # a cancel or Ctrl-C: no partial file is left; finished archives stay
        paths.unlink(archives, part_name)
        raise
    emit(progress, Downloaded(pkg.name, pkg.size))
    part = paths.inside(archives, part_name)
    try:
        check(pkg, part)
    except HashMismatch:
        paths.unlink(archives, part_name)
        raise
    return paths.replace(part, archives, name)
