"""Reading a file the user named: a missing or unreadable file is one clear line, never a traceback."""

from __future__ import annotations

from pathlib import Path

from cuenv.errors import NotFound, UsageError


def read_text(path: Path, *, what: str = "File") -> str:
    try:
        return path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise NotFound(f"{what} {path} does not exist.") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise UsageError(f"Cannot read {what.lower()} {path}: {getattr(exc, 'strerror', None) or exc}.") from None
