"""cuenv.envs.snapshot: a conda prefix's hard-linked copy before a change, and every state a kill -9 can
leave it in (the engines' own tests kill a real install: tests/engines/test_change_conda.py)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from cuenv.envs import snapshot
from cuenv.envs.store import Store


def _tree(root: Path) -> dict[str, str]:
    out = {}
    for path in sorted(root.rglob("*")):
        rel = str(path.relative_to(root))
        out[rel] = f"-> {os.readlink(path)}" if path.is_symlink() else path.read_text() if path.is_file() else "/"
    return out


@pytest.fixture
def prefix(tmp_path: Path) -> Path:
    p = tmp_path / "envs" / "e"
    (p / "lib").mkdir(parents=True)
    (p / "lib" / "libx.so.1").write_text("old library")
    (p / "lib" / "libx.so").symlink_to("libx.so.1")
    (p / "conda-meta").mkdir()
    (p / "conda-meta" / "history").write_text("==> 1 <==\n")
    (p / ".cuenv").mkdir()
    (p / ".cuenv" / "meta.json").write_text("{}")
    (p / ".cuenv" / "complete").write_text("")
    return p


def _change(p: Path) -> None:
    """What conda or rattler do: unlink and write anew, append to history, add files."""
    (p / "lib" / "libx.so.1").unlink()
    (p / "lib" / "libx.so.1").write_text("new library")
    with open(p / "conda-meta" / "history", "a") as fh:  # appended in place
        fh.write("==> 2 <==\n")
    (p / "share").mkdir()
    (p / "share" / "new.txt").write_text("new")


def test_a_change_taken_back_leaves_the_prefix_file_for_file(prefix: Path) -> None:
    before = _tree(prefix)
    copy = snapshot.before_path(prefix.parent, "e")
    snapshot.take(prefix, copy)
    assert os.stat(copy / "lib" / "libx.so.1").st_ino == os.stat(prefix / "lib" / "libx.so.1").st_ino  # linked, not copied
    snapshot.begin(prefix, copy, {"verb": "add"})
    _change(prefix)
    assert snapshot.needs_recovery(prefix.parent, "e") and snapshot.pending(prefix)
    assert snapshot.recover(prefix.parent, "e") is True  # as after a kill -9
    assert _tree(prefix) == before
    assert not (prefix.parent / snapshot.CHANGES_DIR).exists()


def test_a_kill_between_the_two_renames_is_finished_by_recover(prefix: Path) -> None:
    before = _tree(prefix)
    copy = snapshot.before_path(prefix.parent, "e")
    snapshot.take(prefix, copy)
    snapshot.begin(prefix, copy, {"verb": "add"})
    _change(prefix)
    os.rename(prefix, copy.with_name("e.undone"))  # restore's first rename, then the kill
    assert snapshot.recover(prefix.parent, "e") is True
    assert _tree(prefix) == before and not (prefix.parent / snapshot.CHANGES_DIR).exists()


def test_a_copy_whose_change_never_began_or_was_committed_is_dropped(prefix: Path) -> None:
    copy = snapshot.before_path(prefix.parent, "e")
    snapshot.take(prefix, copy)  # killed before begin(): no journal in the prefix
    _change(prefix)
    changed = _tree(prefix)
    assert snapshot.recover(prefix.parent, "e") is False
    assert _tree(prefix) == changed and not copy.exists()
    snapshot.take(prefix, copy)
    snapshot.begin(prefix, copy, {"verb": "add"})
    snapshot.commit(prefix, copy)
    assert _tree(prefix) == changed and not (prefix.parent / snapshot.CHANGES_DIR).exists()


def test_removing_the_environment_drops_its_copy_so_it_never_comes_back(prefix: Path) -> None:
    copy = snapshot.before_path(prefix.parent, "e")
    snapshot.take(prefix, copy)
    snapshot.begin(prefix, copy, {"verb": "add"})
    Store(prefix.parent).remove("e")
    assert snapshot.recover(prefix.parent, "e") is False
    assert not prefix.exists() and not (prefix.parent / snapshot.CHANGES_DIR).exists()
