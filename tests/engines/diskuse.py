"""Bytes on disk, each hardlinked inode counted once (what `du` does across several folders)."""

from __future__ import annotations

from pathlib import Path

from cuenv.envs.diskuse import disk_usage


def added_by(second: Path, *, first: Path) -> tuple[int, int]:
    """(bytes of ``first``, bytes ``second`` adds on top of it)."""
    seen: set[tuple[int, int]] = set()
    base = disk_usage(first, seen)
    return base, disk_usage(second, seen)
