"""Approval of .cuenv pins (issue 14 §4): keyed by absolute path and content, as direnv does."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from cuenv.trust import Untrusted, consent


def test_unknown_then_allowed_then_edited(tmp_path: Path) -> None:
    home, pin = tmp_path / "home", tmp_path / "proj" / ".cuenv"
    assert consent.status(home, pin, b"env: a\n") == "unknown"
    consent.allow(home, pin, b"env: a\n")
    assert consent.status(home, pin, b"env: a\n") == "allowed"
    assert consent.status(home, pin, b"env: b\n") == "unknown"  # an edit needs a new approval
    assert consent.status(home, tmp_path / "other" / ".cuenv", b"env: a\n") == "unknown"  # so does a copy


def test_deny_drops_every_approval_of_the_path_until_allowed(tmp_path: Path) -> None:
    home, pin = tmp_path / "home", tmp_path / ".cuenv"
    consent.allow(home, pin, b"env: a\n")
    consent.allow(home, pin, b"env: b\n")
    consent.allow(home, tmp_path / "x" / ".cuenv", b"env: a\n")
    assert consent.deny(home, pin) == 2
    assert consent.status(home, pin, b"env: a\n") == "denied"
    assert consent.status(home, pin, b"env: c\n") == "denied"
    assert consent.status(home, tmp_path / "x" / ".cuenv", b"env: a\n") == "allowed"
    consent.allow(home, pin, b"env: c\n")
    assert consent.status(home, pin, b"env: c\n") == "allowed"
    assert consent.status(home, pin, b"env: a\n") == "unknown"


def test_relative_paths_are_made_absolute(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    consent.allow(tmp_path / "home", Path(".cuenv"), b"x")
    assert consent.status(tmp_path / "home", tmp_path / ".cuenv", b"x") == "allowed"


def test_symlinks_are_not_resolved(tmp_path: Path) -> None:
    home = tmp_path / "home"
    real = tmp_path / "a" / ".cuenv"
    consent.allow(home, real, b"x")
    assert consent.status(home, tmp_path / "b" / ".cuenv", b"x") == "unknown"


def test_read_only_home_is_a_clear_error(tmp_path: Path) -> None:
    if os.geteuid() == 0:
        pytest.skip("root writes everywhere")
    home = tmp_path / "home"
    home.mkdir()
    home.chmod(0o500)
    try:
        with pytest.raises(Untrusted, match="Cannot record the decision"):
            consent.allow(home, tmp_path / ".cuenv", b"x")
    finally:
        home.chmod(0o700)


def test_everything_stays_under_home(tmp_path: Path) -> None:
    home = tmp_path / "home"
    consent.allow(home, Path("/etc/.cuenv"), b"x")
    consent.deny(home, Path("/etc/.cuenv"))
    written = [p for p in tmp_path.rglob("*") if p.is_file()]
    assert written and all(home in p.parents for p in written)
