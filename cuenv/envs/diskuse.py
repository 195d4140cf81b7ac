"""Disk use with hardlinks counted once: environments share files with the engine caches."""

from __future__ import annotations

import os

TYPE_CHECKING = False  # no `typing` at run time: `cuenv add` counts only what it installed (issue 26)
if TYPE_CHECKING:
    from pathlib import Path
    from typing import Iterable


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
                total += _counted(st, seen)
    return total


def dists_usage(site: Path, names: Iterable[str]) -> int:
    """Allocated bytes of what the distributions ``names`` (canonical) installed into ``site``: the files their
    RECORDs list and their dist-info folders, each inode once. What a change adds to or takes from an
    environment's size, without a walk of all of it (issue 26's benchmark)."""
    import csv

    from cuenv.knowledge.packages import canonical

    wanted = set(names)
    seen: set[tuple[int, int]] = set()
    total = 0
    for dist in site.glob("*.dist-info") if wanted else ():
        if canonical(dist.name[: -len(".dist-info")].partition("-")[0]) not in wanted:
            continue
        total += _allocated(str(dist), seen)
        try:
            with open(dist / "RECORD", encoding="utf-8", errors="replace", newline="") as fh:
                rows = list(csv.reader(fh))
        except (OSError, csv.Error):
            continue
        total += sum(_allocated(os.path.normpath(os.path.join(site, row[0])), seen) for row in rows if row and row[0])
    return total


def _allocated(path: str, seen: set[tuple[int, int]]) -> int:
    try:
        return _counted(os.lstat(path), seen)
    except OSError:
        return 0


def _counted(st: os.stat_result, seen: set[tuple[int, int]]) -> int:
    """The bytes ``st`` holds on disk, or 0 for an inode already in ``seen`` (which it joins)."""
    key = (st.st_dev, st.st_ino)
    if key in seen:
        return 0
    seen.add(key)
    return st.st_blocks * 512
