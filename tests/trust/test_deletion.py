"""Deletion proves ownership (issue 14 §3): `remove` never reaches outside CUENV_HOME, nor into folders
cuenv did not make."""

from __future__ import annotations

import os
from pathlib import Path

import pytest


@pytest.fixture
def envs(isolated: Path) -> Path:
    path = isolated / "home" / "envs"
    path.mkdir(parents=True)
    return path


def _victim(root: Path) -> Path:
    victim = root / "victim" / ".cuenv"
    victim.mkdir(parents=True)
    for name in ("complete", "meta.json", "data"):
        (victim / name).write_text("precious\n")
    return victim


def test_a_symlinked_marker_folder_is_not_followed(cli, envs: Path, tmp_path: Path) -> None:
    victim = _victim(tmp_path)
    (envs / "lnk").mkdir()
    (envs / "lnk" / ".cuenv").symlink_to(victim)
    code, _, err = cli("remove", "lnk", "-y")
    assert code == 1 and "is not a cuenv environment" in err and "Traceback" not in err
    assert sorted(p.name for p in victim.iterdir()) == ["complete", "data", "meta.json"]
    assert (envs / "lnk").is_dir()  # reported, not deleted


def test_a_symlinked_envs_folder_is_refused(cli, envs: Path, tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    victim = _victim(outside / "env")  # outside/env/victim/.cuenv: looks like an environment named "victim"...
    os.rename(victim.parent, outside / "victim")
    envs.rmdir()
    envs.symlink_to(outside)
    code, _, err = cli("remove", "victim", "-y")
    assert code == 1 and "is a symlink" in err
    assert (outside / "victim" / ".cuenv" / "complete").read_text() == "precious\n"


def test_a_folder_cuenv_did_not_make_is_listed_nowhere_and_never_deleted(cli, envs: Path) -> None:
    (envs / "mine").mkdir()
    (envs / "mine" / "thesis.tex").write_text("years of work\n")
    code, out, _ = cli("--json", "list")
    assert code == 0 and '"mine"' not in out
    code, _, err = cli("remove", "mine", "-y")
    assert code == 1 and err.startswith("error: ") and "leaves it alone" in err
    assert (envs / "mine" / "thesis.tex").read_text() == "years of work\n"


def test_a_link_named_like_an_environment_is_dropped_not_followed(cli, envs: Path, tmp_path: Path) -> None:
    victim = _victim(tmp_path)
    (envs / "lnk").symlink_to(victim.parent)
    cli("remove", "lnk", "-y")
    assert (victim / "complete").is_file()


def test_a_claimed_leftover_of_a_killed_create_is_cuenvs(cli, envs: Path) -> None:
    from cuenv.envs.store import Store

    store = Store(envs)
    store.claim("half")
    (envs / "half" / "bin").mkdir(parents=True)  # the engine had started; no .cuenv folder yet (kill -9)
    assert [r.name for r in store.list()] == ["half"] and not store.list()[0].complete
    code, _, err = cli("remove", "half", "-y")
    assert code == 0, err
    assert not (envs / "half").exists() and not list(envs.glob(".claims/*"))


def test_lock_files_do_not_pile_up(envs: Path) -> None:
    from cuenv.envs.store import Store

    store = Store(envs)
    for _ in range(3):
        with store.locked("a"):
            assert (envs / ".locks" / "a.lock").is_file()
    assert not list((envs / ".locks").iterdir())
