"""Replacing a file atomically: a reader sees the old content or the new one, never half of either."""

from __future__ import annotations

import contextlib
import os
from pathlib import Path


def write_text(path: Path, text: str, *, mode: int | None = None, durable: bool = False) -> None:
    """Write ``text`` (UTF-8) as write_bytes does."""
    write_bytes(path, text.encode("utf-8"), mode=mode, durable=durable)


def write_bytes(path: Path, data: bytes, *, mode: int | None = None, durable: bool = False) -> None:
    """Write ``data`` to a temporary file beside ``path``, then rename it over ``path``.

    ``mode`` sets the new file's permission bits (an rc file keeps its own); ``durable`` fsyncs before
    the rename, for files whose loss after a crash would leave an environment misdescribed.
    Raises OSError, leaving ``path`` as it was and no temporary file behind.
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.tmp{os.getpid()}")
    try:
        with open(tmp, "wb") as fh:
            fh.write(data)
            if durable:
                fh.flush()
                os.fsync(fh.fileno())
        if mode is not None:
            os.chmod(tmp, mode)
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            tmp.unlink()
        raise
