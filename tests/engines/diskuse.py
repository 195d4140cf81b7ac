"""Bytes on disk, each hardlinked inode counted once (what `du` does across several folders)."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Iterable


def inodes(roots: Iterable[Path]) -> dict[tuple[int, int], int]:
    seen: dict[tuple[int, int], int] = {}
    for root in roots:
        for dirpath, dirnames, filenames in os.walk(root):
            for name in filenames + dirnames:
                st = os.lstat(os.path.join(dirpath, name))
                seen.setdefault((st.st_dev, st.st_ino), st.st_blocks * 512)
    return seen


def added_by(second: Path, *, first: Path) -> tuple[int, int]:
    """(bytes of ``first``, bytes ``second`` adds on top of it)."""
    base = inodes([first])
    both = inodes([first, second])
    return sum(base.values()), sum(both.values()) - sum(base.values())
