"""A lockfile's YAML parse kept by its text's sha256 (cuenv.keptparse): the same as parsing, every check still run."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from cuenv import keptparse
from cuenv.lock import model as lockfile
from tests.lockfiles.test_lockfile_core import _lock

REPO = Path(__file__).resolve().parents[2]


def test_the_second_read_of_the_same_text_needs_no_yaml_and_gives_the_same_lock(tmp_path: Path) -> None:
    text = lockfile.dump(_lock())
    (tmp_path / "cuenv.lock").write_text(text)
    first = lockfile.parse(text, cache_dir=tmp_path / "cache")
    assert first == lockfile.parse(text) and len(list((tmp_path / "cache" / keptparse.FOLDER).iterdir())) == 1
    probe = ("import sys\nfrom cuenv.lock.io import read_lock\n"
             f"lock = read_lock({str(tmp_path / 'cuenv.lock')!r}, cache_dir=__import__('pathlib').Path({str(tmp_path / 'cache')!r}))\n"
             "print(lock.recipe.name, 'yaml' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, cwd=REPO, timeout=120, check=True)
    assert out.stdout.split() == ["demo", "False"], out.stderr


def test_a_kept_parse_is_checked_again_on_every_read(tmp_path: Path) -> None:
    """A variable the user trusted once is refused on a read that does not trust it: the checks are not kept."""
    text = lockfile.dump(_lock()).replace("    CUDA_MODULE_LOADING: '1'\n", "    FOO_BAR: '1'\n")
    cache = tmp_path / "cache"
    assert lockfile.parse(text, cache_dir=cache, trusted_env=("FOO_BAR",)).recipe.env["FOO_BAR"] == "1"
    assert len(list((cache / keptparse.FOLDER).iterdir())) == 1  # the parse is kept now
    with pytest.raises(lockfile.LockError, match="recipe.env.FOO_BAR: FOO_BAR is not on the list"):
        lockfile.parse(text, cache_dir=cache)
    assert len(list((cache / keptparse.FOLDER).iterdir())) == 1  # read from it, and refused


def test_an_entry_someone_else_could_write_is_not_used(tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    text = lockfile.dump(_lock())
    lockfile.parse(text, cache_dir=cache)
    folder = cache / keptparse.FOLDER
    assert folder.stat().st_mode & 0o777 == 0o700
    (entry,) = folder.iterdir()
    assert entry.stat().st_mode & 0o777 == 0o600
    planted = lockfile.parse(text.replace("NCCL_DEBUG: '2'", "NCCL_DEBUG: '9'"))
    import marshal

    from cuenv.lock.model import _load_yaml

    entry.write_bytes(marshal.dumps(_load_yaml(text.replace("NCCL_DEBUG: '2'", "NCCL_DEBUG: '9'"), None)))
    entry.chmod(0o666)  # writable by anyone: not trusted, parsed anew
    assert lockfile.parse(text, cache_dir=cache).recipe.env["NCCL_DEBUG"] == "2" != planted.recipe.env["NCCL_DEBUG"]


def test_a_fifo_or_a_link_in_place_of_an_entry_is_parsed_anew_without_waiting(tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    text = lockfile.dump(_lock())
    lockfile.parse(text, cache_dir=cache)
    (entry,) = (cache / keptparse.FOLDER).iterdir()
    entry.unlink()
    os.mkfifo(entry)  # nobody writes to it: a blocking open would hang here
    assert lockfile.parse(text, cache_dir=cache) == lockfile.parse(text)
    entry.unlink()
    (tmp_path / "elsewhere").write_bytes(b"")
    entry.symlink_to(tmp_path / "elsewhere")
    assert lockfile.parse(text, cache_dir=cache) == lockfile.parse(text)


def test_a_changed_reader_is_another_key(tmp_path: Path) -> None:
    code = tmp_path / "reader.py"
    code.write_text("v1")
    assert keptparse.load("a: 1\n", yaml.safe_load, cache_dir=tmp_path, kind="t", code=(code,)) == {"a": 1}
    code.write_text("v2, longer")  # an upgraded reader: its stamp changes
    assert keptparse.load("a: 1\n", lambda t: {"a": 2}, cache_dir=tmp_path, kind="t", code=(code,)) == {"a": 2}
    assert keptparse.load("a: 1\n", lambda t: {"a": 3}, cache_dir=tmp_path, kind="other", code=(code,)) == {"a": 3}


def test_a_changed_text_a_damaged_entry_and_broken_yaml(tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    text = lockfile.dump(_lock())
    lockfile.parse(text, cache_dir=cache)
    changed = text.replace("NCCL_DEBUG: '2'", "NCCL_DEBUG: '3'")
    assert lockfile.parse(changed, cache_dir=cache).recipe.env["NCCL_DEBUG"] == "3"
    for entry in (cache / keptparse.FOLDER).iterdir():
        entry.write_bytes(b"\x00damaged")
    assert lockfile.parse(changed, cache_dir=cache) == lockfile.parse(changed)
    broken = text + "  - [unclosed\n"
    for _ in range(2):  # a refusal is not kept: the second read refuses alike
        with pytest.raises(lockfile.LockError, match=r"is not valid YAML: .* \(line \d+\)"):
            lockfile.parse(broken, cache_dir=cache)
    assert len(list((cache / keptparse.FOLDER).iterdir())) == 2


def test_the_entries_read_least_lately_go(tmp_path: Path) -> None:
    def read(i: int, parse=yaml.safe_load) -> object:
        return keptparse.load(f"a: {i}\n", parse, cache_dir=tmp_path, kind="t")

    def never(text: str) -> object:
        raise AssertionError(f"parsed again: {text!r}")

    read(0)
    for i in range(1, keptparse.KEEP + 5):
        for entry in (tmp_path / keptparse.FOLDER).iterdir():
            os.utime(entry, ns=(1, 1))  # coarse clocks: every entry as old
        read(0, never)  # read lately: kept
        read(i)  # just written: kept, even among entries of one mtime
        read(i, never)
    assert len(list((tmp_path / keptparse.FOLDER).iterdir())) == keptparse.KEEP
    assert read(0, never) == {"a": 0}


yaml_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=20),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4), max_leaves=20)


@settings(max_examples=60, deadline=None)
@given(value=yaml_values)
def test_kept_equals_parsed(tmp_path_factory: pytest.TempPathFactory, value: object) -> None:
    text = yaml.safe_dump(value)
    cache = tmp_path_factory.mktemp("kept")
    assert keptparse.load(text, yaml.safe_load, cache_dir=cache, kind="t") == yaml.safe_load(text)
    assert keptparse.load(text, yaml.safe_load, cache_dir=cache, kind="t") == yaml.safe_load(text)  # from the kept entry
