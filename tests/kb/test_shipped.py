"""cuenv.shipped: a shipped data file is parsed once per change; the kept parse never outlives an edit."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

from cuenv import shipped
from cuenv.knowledge import matrix


@pytest.fixture
def kept(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    folder = tmp_path / "pycache"
    monkeypatch.setattr(shipped, "cache_file", lambda path: folder / f"{path.name}.marshal")
    monkeypatch.setattr(sys, "dont_write_bytecode", False)
    return folder


def counting(calls: list[Path]):
    def parse(path: Path) -> dict:
        calls.append(path)
        return shipped.parse_yaml(path)

    return parse


def test_parsed_once_then_read_back(tmp_path: Path, kept: Path) -> None:
    data = tmp_path / "facts.yaml"
    data.write_text("a: [1, 2.5, x]\nb: {c: null, d: true}\n")
    calls: list[Path] = []
    first = shipped.load(data, counting(calls))
    second = shipped.load(data, counting(calls))
    assert first == second == {"a": [1, 2.5, "x"], "b": {"c": None, "d": True}}
    assert len(calls) == 1 and (kept / "facts.yaml.marshal").is_file()


def test_an_edit_is_read_again(tmp_path: Path, kept: Path) -> None:
    data = tmp_path / "facts.yaml"
    data.write_text("v: 1\n")
    calls: list[Path] = []
    shipped.load(data, counting(calls))
    data.write_text("v: 22\n")
    os.utime(data, ns=(1, 1))  # even an older time: the stamp must equal, not exceed
    assert shipped.load(data, counting(calls)) == {"v": 22} and len(calls) == 2


def test_salt_and_damage_mean_parse_again(tmp_path: Path, kept: Path) -> None:
    data = tmp_path / "facts.yaml"
    data.write_text("v: 1\n")
    calls: list[Path] = []
    shipped.load(data, counting(calls), salt="a")
    shipped.load(data, counting(calls), salt="b")
    (kept / "facts.yaml.marshal").write_bytes(b"\xff\x00garbage")
    assert shipped.load(data, counting(calls), salt="b") == {"v": 1}
    assert len(calls) == 3


def test_errors_are_not_kept(tmp_path: Path, kept: Path) -> None:
    data = tmp_path / "facts.yaml"
    data.write_text("v: 1\n")

    def broken(path: Path) -> dict:
        raise ValueError("bad file")

    for _ in range(2):
        with pytest.raises(ValueError, match="bad file"):
            shipped.load(data, broken)
    assert not kept.exists()


def test_unwritable_or_no_bytecode_still_answers(tmp_path: Path, kept: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    data = tmp_path / "facts.yaml"
    data.write_text("when: 2024-01-01\n")  # a date: marshal cannot hold it, so it is parsed every time
    assert str(shipped.load(data, shipped.parse_yaml)["when"]) == "2024-01-01"
    assert not kept.exists()
    kept.write_text("a file where the folder should be")  # nowhere to write
    data.write_text("v: 1\n")
    assert shipped.load(data, shipped.parse_yaml) == {"v": 1}
    monkeypatch.setattr(sys, "dont_write_bytecode", True)
    kept.unlink()
    assert shipped.load(data, shipped.parse_yaml) == {"v": 1} and not kept.exists()


def test_the_knowledge_base_is_the_yaml(kept: Path) -> None:
    """The kept copy of cuda.yaml says what the file says, read either way."""
    parsed = shipped.parse_yaml(matrix.DATA_FILE)
    assert shipped.load(matrix.DATA_FILE, shipped.parse_yaml) == parsed
    assert shipped.load(matrix.DATA_FILE, shipped.parse_yaml) == parsed


def test_default_home_is_beside_the_bytecode() -> None:
    from importlib.util import cache_from_source

    where = shipped.cache_file(matrix.DATA_FILE)
    assert where.parent == Path(cache_from_source(shipped.__file__)).parent
    assert sys.implementation.cache_tag in where.name


def test_a_change_to_the_checking_code_checks_again(tmp_path: Path, kept: Path) -> None:
    """A kept parse depends on the code that made it: an updated checkout must not keep an old check."""
    data = tmp_path / "facts.yaml"
    data.write_text("v: 1\n")
    code = tmp_path / "lint.py"
    code.write_text("RULES = 1\n")
    calls: list[Path] = []
    shipped.load(data, counting(calls), depends=[code])
    shipped.load(data, counting(calls), depends=[code])
    code.write_text("RULES = 22\n")
    shipped.load(data, counting(calls), depends=[code])
    assert len(calls) == 2
