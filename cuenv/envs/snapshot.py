"""A conda prefix's state before a change, kept as a hard-link copy beside it (issue 26 §1).

A conda prefix embeds its own path (shebangs, prefix-replaced text files), so a change cannot be built
elsewhere and renamed in. It is made in place, after :func:`take` has hard-linked every file of the
prefix into ``envs/.changes/NAME.before``: the same inodes, so the copy costs no data, only entries.
conda, rattler and uv replace a package's files (unlink, then write a new file), never rewrite one in
place, so the linked copy keeps the old bytes; what conda appends to in place (``conda-meta/history``)
and cuenv's own records (``conda-meta/``, ``.cuenv/``) are copied, not linked.

The change's journal (``.cuenv/change.json`` with ``"snapshot": true``) is written into the prefix only
once the copy is whole. Then:

- the change finished: the journal is removed (the commit), then the copy;
- it failed, or Ctrl-C: :func:`restore` swaps the copy back in (two renames) at once;
- kill -9: the journal is still there, and the next cuenv command that reads the environment (a change,
  lock, sync or run) calls :func:`recover`, which swaps the copy back first. A kill between the two
  renames leaves no prefix and the copy: recover renames the copy back.

What it guarantees: after any interruption the environment is the one before the change, file for
file, once recover has run. Between the kill and that, the prefix may be half-changed on disk.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
from pathlib import Path
from typing import Any, Final

from cuenv.envs import folder

CHANGES_DIR: Final = ".changes"
COPIED: Final = (folder.META_DIR, "conda-meta")  # written in place by cuenv or conda: copied, never linked


def before_path(envs_dir: Path, name: str) -> Path:
    return envs_dir / CHANGES_DIR / f"{name}.before"


def _undone_path(envs_dir: Path, name: str) -> Path:
    return envs_dir / CHANGES_DIR / f"{name}.undone"


def take(prefix: Path, copy: Path) -> None:
    """Hard-link every file of ``prefix`` into ``copy`` (a fresh folder), symlinks as symlinks, each folder
    with its mode; the folders in :data:`COPIED` are copied. Raises OSError (e.g. a filesystem without
    hard links). About a second for 30,000 files on a loaded 2-core machine (as fast as `cp -al`)."""
    if copy.exists():
        shutil.rmtree(copy)
    copy.parent.mkdir(parents=True, exist_ok=True)
    _link_tree(str(prefix), str(copy), skip=COPIED)
    for top in COPIED:
        if (prefix / top).is_dir() and not (prefix / top).is_symlink():
            shutil.copytree(prefix / top, copy / top, symlinks=True)


def _link_tree(src: str, dst: str, *, skip: tuple[str, ...] = ()) -> None:
    os.mkdir(dst, 0o700)  # writable while it fills; its own mode after
    with os.scandir(src) as entries:
        for entry in entries:
            if entry.name in skip:
                continue
            target = os.path.join(dst, entry.name)
            if entry.is_symlink():
                os.symlink(os.readlink(entry.path), target)
            elif entry.is_dir(follow_symlinks=False):
                _link_tree(entry.path, target)
            else:
                os.link(entry.path, target, follow_symlinks=False)
    shutil.copystat(src, dst, follow_symlinks=False)


def begin(prefix: Path, copy: Path, journal: dict[str, object]) -> None:
    """The copy is whole: from now on an interruption swaps it back."""
    folder.write_json(folder.change_journal(prefix), {**journal, "snapshot": True})


def pending(prefix: Path) -> bool:
    """Whether ``prefix`` holds the journal of a change made over a snapshot, not finished."""
    try:
        data = json.loads(folder.change_journal(prefix).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return False
    return isinstance(data, dict) and data.get("snapshot") is True


def commit(prefix: Path, copy: Path) -> None:
    folder.change_journal(prefix).unlink()
    shutil.rmtree(copy, ignore_errors=True)
    _drop_empty(copy.parent)


def restore(prefix: Path, copy: Path) -> None:
    """The copy back where the prefix is; the changed prefix is deleted."""
    undone = copy.with_name(copy.name.removesuffix(".before") + ".undone")
    if prefix.exists():
        if undone.exists():
            shutil.rmtree(undone)
        os.rename(prefix, undone)
    os.rename(copy, prefix)
    shutil.rmtree(undone, ignore_errors=True)
    _drop_empty(copy.parent)


def recover(envs_dir: Path, name: str) -> bool:
    """Finish what an interrupted change left (see the module docstring); True when the environment
    was put back as it was before the change."""
    prefix, copy = envs_dir / name, before_path(envs_dir, name)
    if not copy.parent.is_dir():
        return False
    put_back = False
    if copy.is_dir() and (not prefix.exists() or pending(prefix)):
        restore(prefix, copy)
        put_back = True
    elif copy.exists():  # a copy the change never began with, or one left after its commit
        shutil.rmtree(copy, ignore_errors=True)
    shutil.rmtree(_undone_path(envs_dir, name), ignore_errors=True)
    _drop_empty(copy.parent)
    return put_back


def recover_under_lock(store: Any, name: str) -> None:
    """:func:`recover`, taking the environment's lock, when there is anything to do (readers of a prefix
    that may be half-changed: lock --check, sync)."""
    if needs_recovery(store.envs_dir, name):
        with store.locked(name):
            recover(store.envs_dir, name)


def discard(envs_dir: Path, name: str) -> None:
    """Drop what a change of ``name`` left beside it (the environment is being removed or replaced)."""
    for path in (before_path(envs_dir, name), _undone_path(envs_dir, name)):
        if path.is_dir() and not path.is_symlink():
            shutil.rmtree(path, ignore_errors=True)
    _drop_empty(envs_dir / CHANGES_DIR)


def needs_recovery(envs_dir: Path, name: str) -> bool:
    """Cheap (one stat in the common case): whether :func:`recover` has anything to do for ``name``."""
    return (envs_dir / CHANGES_DIR).is_dir() and (
        before_path(envs_dir, name).exists() or _undone_path(envs_dir, name).exists())


def _drop_empty(path: Path) -> None:
    with contextlib.suppress(OSError):
        path.rmdir()
