"""Disk use with hardlinks counted once: environments share files with the engine caches."""

from __future__ import annotations

import os
from pathlib import Path


def disk_usage(path: Path, seen: set[tuple[int, int]] | None = None) -> int:
    """Allocated bytes under ``path``; an inode already in ``seen`` (shared across calls) is not counted again.

    Links are counted, never followed; a folder that cannot be read counts as empty. One ``lstat`` per entry
    through ``os.scandir`` (a create measures its whole environment, pip's thousand files included: issue 29)."""
    seen = set() if seen is None else seen
    total = 0
    folders = [os.fspath(path)]
    while folders:
        try:
            entries = os.scandir(folders.pop())
        except OSError:
            continue
        with entries:
            for entry in entries:
                try:
                    st = entry.stat(follow_symlinks=False)
                    if entry.is_dir(follow_symlinks=False):
                        folders.append(entry.path)
                except OSError:
                    continue
                key = (st.st_dev, st.st_ino)
                if key not in seen:
                    seen.add(key)
                    total += st.st_blocks * 512
    return total
