"""A lockfile's YAML parse kept by its text's sha256 (cuenv.keptparse): the same as parsing, every check still run."""

from __future__ import annotations

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
    text = lockfile.dump(_lock()).replace("    CUDA_MODULE_LOADING: '1'\n", "    LD_PRELOAD: /tmp/evil.so\n")
    cache = tmp_path / "cache"
    with pytest.raises(lockfile.LockError, match="recipe.env.LD_PRELOAD"):
        lockfile.parse(text, cache_dir=cache)
    with pytest.raises(lockfile.LockError, match="recipe.env.LD_PRELOAD"):  # the parse is kept now, the refusal stands
        lockfile.parse(text, cache_dir=cache)
    assert len(list((cache / keptparse.FOLDER).iterdir())) == 1


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
        with pytest.raises(lockfile.LockError, match="Broken YAML at line"):
            lockfile.parse(broken, cache_dir=cache)
    assert len(list((cache / keptparse.FOLDER).iterdir())) == 2


def test_the_oldest_entries_go(tmp_path: Path) -> None:
    for i in range(keptparse.KEEP + 5):
        keptparse.load(f"a: {i}\n", yaml.safe_load, cache_dir=tmp_path)
    assert len(list((tmp_path / keptparse.FOLDER).iterdir())) == keptparse.KEEP
    assert keptparse.load("a: 70\n", yaml.safe_load, cache_dir=tmp_path) == {"a": 70}


yaml_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=20),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4), max_leaves=20)


@settings(max_examples=60, deadline=None)
@given(value=yaml_values)
def test_kept_equals_parsed(tmp_path_factory: pytest.TempPathFactory, value: object) -> None:
    text = yaml.safe_dump(value)
    cache = tmp_path_factory.mktemp("kept")
    assert keptparse.load(text, yaml.safe_load, cache_dir=cache) == yaml.safe_load(text)
    assert keptparse.load(text, yaml.safe_load, cache_dir=cache) == yaml.safe_load(text)  # from the kept entry
