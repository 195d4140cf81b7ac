"""Disk use with hardlinks counted once: environments share files with the engine caches."""

from __future__ import annotations

import os
from pathlib import Path


def disk_usage(path: Path, seen: set[tuple[int, int]] | None = None) -> int:
    """Allocated bytes under ``path``; an inode already in ``seen`` (shared across calls) is not counted again."""
    seen = set() if seen is None else seen
    total = 0
    for root, dirs, files in os.walk(path):
        for name in files + dirs:
            try:
                st = os.lstat(os.path.join(root, name))
            except OSError:
                continue
            key = (st.st_dev, st.st_ino)
            if key not in seen:
                seen.add(key)
                total += st.st_blocks * 512
    return total
