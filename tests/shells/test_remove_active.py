"""Removing the active environment (issue 17 §5): refused as conda does, unless --force, which the
hook turns into deactivate-then-remove; real bash, zsh and fish."""

from __future__ import annotations

import itertools
import subprocess
from pathlib import Path

import pytest

from . import envbuild
from .conftest import World, hook_source, run_shell

pytestmark = pytest.mark.network  # the `world` fixture downloads NVIDIA wheels from PyPI (once)
_names = itertools.count()


def fresh_env(world: World) -> str:
    name = f"doomed-{next(_names)}"
    while (world.envs / name).exists():
        name = f"doomed-{next(_names)}"
    envbuild.build_cuda_env(world.envs, name, "12.1", Path(), template=world.envs / "cuda-12.1")
    return name


def test_remove_active_refuses_then_force_deactivates_first(shell: str, world: World, tmp_path: Path) -> None:
    name = fresh_env(world)
    active = "echo active=$CUENV_ACTIVE" if shell == "fish" else 'echo "active=${CUENV_ACTIVE-}"'
    rc = "echo rc=$status" if shell == "fish" else "echo rc=$?"
    script = "\n".join([
        hook_source(shell, world, tmp_path),
        f"cuenv use {name}",
        f"cuenv remove -y {name}", rc, active,
        f"cuenv remove -y --force {name}", rc, active,
    ])
    env = world.environ(tmp_path)
    before = run_shell(shell, "\n".join([active, "echo PATH=$PATH" if shell != "fish" else "echo PATH=(string join : $PATH)"]), env)
    out = run_shell(shell, script + "\n" + ("echo PATH=(string join : $PATH)" if shell == "fish" else "echo PATH=$PATH"), env)
    lines = out.stdout.splitlines()
    assert lines[:4] == ["rc=2", f"active={name}", f"Removed {name}.", "rc=0"], out.stderr
    assert lines[4:] == before.stdout.splitlines()  # deactivated: the shell is as it was, prompt marker gone
    assert f"error: Environment '{name}' is active in this shell." in out.stderr
    assert not (world.envs / name).exists()


def test_force_without_the_hook_warns(world: World, tmp_path: Path) -> None:
    name = fresh_env(world)
    env = world.environ(tmp_path, CUENV_ACTIVE=name)
    out = subprocess.run([str(world.bin_dir / "cuenv"), "remove", "-y", "--force", name], env=env, capture_output=True,
                         text=True, timeout=60, check=False)
    assert out.returncode == 0 and out.stdout == f"Removed {name}.\n"
    assert out.stderr == f"warning: {name} was active here; run `cuenv deactivate` in this shell.\n"
    # the hint of the refusal is a command that works: run it
    other = fresh_env(world)
    env = world.environ(tmp_path, CUENV_ACTIVE=other)
    out = subprocess.run([str(world.bin_dir / "cuenv"), "remove", "-y", other], env=env, capture_output=True, text=True, timeout=60, check=False)
    assert out.returncode == 2 and f"`cuenv remove {other} --force -y`" in out.stderr
    hinted = out.stderr.split("`")[3].split()
    assert subprocess.run([str(world.bin_dir / "cuenv"), *hinted[1:]], env=env, capture_output=True, text=True,
                          timeout=60, check=False).returncode == 0
    assert not (world.envs / other).exists()


def test_force_that_removes_nothing_leaves_the_shell_in_the_environment(shell: str, world: World, tmp_path: Path) -> None:
    """No -y and no terminal: the program removes nothing, so the hook, which deactivated first (the
    environment's deactivate scripts must still exist), goes back in: nothing changed."""
    name = fresh_env(world)
    rc = "echo rc=$status" if shell == "fish" else "echo rc=$?"
    which = "command -s nvcc" if shell == "fish" else "command -v nvcc"
    script = "\n".join([hook_source(shell, world, tmp_path), f"cuenv use {name}",
                        f"cuenv remove --force {name} </dev/null", rc, "echo active=$CUENV_ACTIVE", which])
    out = run_shell(shell, script, world.environ(tmp_path))
    assert out.stdout.splitlines() == ["rc=2", f"active={name}", str(world.envs / name / ".cuenv" / "shims" / "nvcc")], out.stderr
    assert "error: Refusing to remove without confirmation on a non-interactive input." in out.stderr
    assert (world.envs / name).is_dir()
