"""The CUDA you asked for is the CUDA you get (issue 17 §Tests), in real bash, zsh and fish.

A test-made toolkit of another release (its ``nvcc``/``ptxas`` print NVIDIA's version line for 13.0)
is first on PATH, once as a toolkit folder (stripped by `use`) and once in a generic bin folder that
cannot be stripped (``/usr/local/bin`` style). After `cuenv use cuda-12.1` (NVIDIA's cu12 wheels:
ptxas, no nvcc) ``nvcc`` is the environment's shim, never the other release; with a same-release
toolkit on the machine it is that toolkit's; `cuenv run` gives the same.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from cuenv.activation.shims import ESCAPE_VAR, SHIM_EXIT

from . import envbuild
from .conftest import World, hook_source, run_shell

pytestmark = pytest.mark.network  # the `world` fixture downloads NVIDIA wheels from PyPI (once)


def make_tool(folder: Path, tool: str, rel: str) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / tool
    path.write_text(f'#!/bin/sh\necho "Cuda compilation tools, release {rel}, V{rel}.88"\n')
    path.chmod(0o755)
    return path


def make_toolkit(root: Path, rel: str) -> Path:
    """A CUDA toolkit tree as cuenv's discovery knows one: version.json, bin/nvcc, bin/ptxas."""
    for tool in ("nvcc", "ptxas"):
        make_tool(root / "bin", tool, rel)
    (root / "version.json").write_text(json.dumps({"cuda": {"name": "CUDA SDK", "version": f"{rel}.0"}}))
    return root


def other_first(world: World, tmp: Path, where: str) -> tuple[dict[str, str], Path]:
    """The shell environment with a CUDA 13.0 nvcc first on PATH; returns (environ, that nvcc)."""
    if where == "toolkit":
        kit = make_toolkit(tmp / "opt" / "cuda-13.0", "13.0")
        env = world.environ(tmp, PATH=f"{world.bin_dir}:{kit}/bin:/usr/bin:/bin", CUDA_HOME=str(kit))
        return env, kit / "bin" / "nvcc"
    generic = tmp / "usr-local-bin"
    make_tool(generic, "nvcc", "13.0")
    return world.environ(tmp, PATH=f"{world.bin_dir}:{generic}:/usr/bin:/bin"), generic / "nvcc"


def which(shell: str, tool: str) -> str:
    return f"command -s {tool}" if shell == "fish" else f"command -v {tool}"


def status(shell: str) -> str:
    return "echo rc=$status" if shell == "fish" else "echo rc=$?"


@pytest.mark.parametrize("where", ["toolkit", "generic"])
def test_nvcc_after_use_is_the_shim_never_the_other_release(shell: str, world: World, tmp_path: Path, where: str) -> None:
    env, other = other_first(world, tmp_path, where)
    shim = world.envs / "cuda-12.1" / ".cuenv" / "shims" / "nvcc"
    script = "\n".join([
        hook_source(shell, world, tmp_path),
        "cuenv use cuda-12.1",
        which(shell, "nvcc"),
        "nvcc --version",
        status(shell),
        which(shell, "ptxas"),
        f"env {ESCAPE_VAR}=1 nvcc --version",
        "cuenv deactivate",
        which(shell, "nvcc"),
    ])
    out = run_shell(shell, script, env)
    lines = out.stdout.splitlines()
    site = next((world.envs / "cuda-12.1").glob("lib/python3*/site-packages"))
    if where == "toolkit":  # `use` took the other toolkit off PATH: nothing else to run, even with the escape
        escape = []
        said = "cuenv: environment cuda-12.1 (CUDA 12.1) has no nvcc, and there is no other nvcc on PATH."
    else:  # /usr/local/bin cannot be stripped: the shim stands in front of it and names it
        escape = ["Cuda compilation tools, release 13.0, V13.0.88"]
        said = f"cuenv: environment cuda-12.1 (CUDA 12.1) has no nvcc; the next nvcc on PATH, {other}, is CUDA 13.0, not 12.1's."
    assert lines == [str(shim), f"rc={SHIM_EXIT}", str(site / "nvidia/cuda_nvcc/bin/ptxas"), *escape, str(other)], out.stderr
    assert said in out.stderr.splitlines()


def test_run_gives_the_same_nvcc(world: World, tmp_path: Path) -> None:
    env, other = other_first(world, tmp_path, "generic")
    cuenv = str(world.bin_dir / "cuenv")
    out = subprocess.run([cuenv, "run", "cuda-12.1", "--", "nvcc", "--version"], env=env, capture_output=True, text=True, timeout=60, check=False)
    assert out.returncode == SHIM_EXIT and out.stdout == ""
    assert f"the next nvcc on PATH, {other}, is CUDA 13.0" in out.stderr
    out = subprocess.run([cuenv, "run", "cuda-12.1", "--", "sh", "-c", "command -v nvcc"], env=env, capture_output=True,
                         text=True, timeout=60, check=False)
    assert out.stdout.strip() == str(world.envs / "cuda-12.1" / ".cuenv" / "shims" / "nvcc")


@pytest.fixture(scope="module")
def same_release(world: World, tmp_path_factory: pytest.TempPathFactory) -> tuple[str, Path]:
    """Environment cuda-12.1-sys, made where a CUDA 12.1 toolkit (test-made) is installed."""
    roots = tmp_path_factory.mktemp("toolkits")
    kit = make_toolkit(roots / "cuda-12.1", "12.1")
    name = "cuda-12.1-sys"
    envbuild.build_cuda_env(world.envs, name, "12.1", Path(), template=world.envs / "cuda-12.1",
                            toolkits_environ={"CUENV_TOOLKIT_ROOTS": str(roots), "PATH": "/usr/bin:/bin"})
    return name, kit


def test_a_same_release_system_toolkit_is_used_and_named(shell: str, world: World, tmp_path: Path,
                                                          same_release: tuple[str, Path]) -> None:
    name, kit = same_release
    env, _ = other_first(world, tmp_path, "generic")
    out = run_shell(shell, "\n".join([hook_source(shell, world, tmp_path), f"cuenv use {name}", "nvcc --version"]), env)
    assert out.stdout.splitlines() == ["Cuda compilation tools, release 12.1, V12.1.88"], out.stderr
    info = subprocess.run([str(world.bin_dir / "cuenv"), "info", name], env=env, capture_output=True, text=True, timeout=60, check=False)
    assert f"{kit}/bin/nvcc (system toolkit {kit}, CUDA 12.1)" in info.stdout


@pytest.fixture(scope="module")
def with_compiler(world: World, tmp_path_factory: pytest.TempPathFactory, wheel_cache: Path) -> Path:
    """A CUENV_HOME holding cuda-13.0 built by `cuenv create` from NVIDIA's CUDA 13 wheels (a real nvcc)."""
    home = tmp_path_factory.mktemp("home13")
    # this process's environment: the index settings and certificates PyPI needs here
    env = {**os.environ, "CUENV_HOME": str(home), "CUENV_CACHE_DIR": str(wheel_cache.parent)}
    done = subprocess.run([str(world.bin_dir / "cuenv"), "create", "cuda-13.0", "--engine", "venv"], env=env,
                          capture_output=True, text=True, timeout=600, check=False)
    assert done.returncode == 0, done.stderr
    return home


def test_doctor_is_clean_after_use_of_an_environment_with_its_compiler(shell: str, world: World, tmp_path: Path,
                                                                        with_compiler: Path) -> None:
    other = make_toolkit(tmp_path / "opt" / "cuda-12.4", "12.4")
    env = world.environ(tmp_path, CUENV_HOME=str(with_compiler), CUDA_HOME=str(other),
                        PATH=f"{world.bin_dir}:{other}/bin:/usr/local/bin:/usr/bin:/bin",
                        CUENV_DRIVER="580.65.06", CUENV_GPUS="H100")
    script = "\n".join([hook_source(shell, world, tmp_path), "cuenv use cuda-13.0", which(shell, "nvcc"),
                        "cuenv doctor cuda-13.0 --json"])
    out = run_shell(shell, script, env, timeout=120)
    first, _, doc = out.stdout.partition("\n")
    assert first.endswith("/nvidia/cu13/bin/nvcc"), out.stderr
    checks = {c["name"]: c for c in json.loads(doc)["checks"]}
    for name in ("toolkits", "libraries", "compiler"):
        assert checks[name]["status"] == "ok", checks[name]


def test_doctor_after_use_does_not_ask_for_the_use_just_done(shell: str, world: World, tmp_path: Path) -> None:
    """/usr/local/bin's CUDA 13.0 nvcc and ptxas cannot be stripped, but after `use cuda-12.1` the shim and the
    environment's ptxas stand in front of them: doctor lists them as never run by name, and does not warn
    multiple-cuda-on-path with `cuenv use cuda-12.1` as the fix."""
    env, other = other_first(world, tmp_path, "generic")
    make_tool(other.parent, "ptxas", "13.0")
    script = "\n".join([hook_source(shell, world, tmp_path), "cuenv use cuda-12.1 2>/dev/null", "cuenv doctor --json"])
    out = run_shell(shell, script, env, timeout=120)
    toolkits = next(c for c in json.loads(out.stdout)["checks"] if c["name"] == "toolkits")
    assert toolkits["findings"] == [], toolkits
    assert f"behind another ptxas on PATH, never run by name: {other.parent}/ptxas (CUDA 13.0)" in toolkits["detail"]


def test_doctor_knows_the_shell_route_when_path_changed_after_use(shell: str, world: World, tmp_path: Path) -> None:
    """A CUDA 13.0 toolkit put first on PATH after `use`: the fix says so and names deactivate, then use again."""
    env, _ = other_first(world, tmp_path, "generic")
    kit = make_toolkit(tmp_path / "late" / "cuda-13.0", "13.0")
    prepend = f"set -x PATH {kit}/bin $PATH" if shell == "fish" else f"export PATH={kit}/bin:$PATH"
    script = "\n".join([hook_source(shell, world, tmp_path), "cuenv use cuda-12.1 2>/dev/null", prepend, "cuenv doctor --json"])
    out = run_shell(shell, script, env, timeout=120)
    fixes = [f["fix"] for c in json.loads(out.stdout)["checks"] for f in c["findings"] if f["code"] == "nvcc-runtime-mismatch"]
    assert fixes and all("something changed PATH after activation: `cuenv deactivate`, then `cuenv use cuda-12.1` again"
                         in fix for fix in fixes), fixes


def test_a_cuenv_file_gives_the_same_nvcc(shell: str, world: World, tmp_path: Path) -> None:
    env, _ = other_first(world, tmp_path, "generic")
    project = tmp_path / "project"
    project.mkdir()
    (project / ".cuenv").write_text("env: cuda-12.1\n")
    script = "\n".join([hook_source(shell, world, tmp_path), f"cd '{project}'", "cuenv allow >/dev/null", "cuenv use",
                        which(shell, "nvcc")])
    out = run_shell(shell, script, env)
    assert out.stdout.splitlines() == [str(world.envs / "cuda-12.1" / ".cuenv" / "shims" / "nvcc")], out.stderr


def test_the_shims_hints_are_commands_that_work(world: World, tmp_path: Path, same_release: tuple[str, Path]) -> None:
    """Every command the shim's message names, run as written (the conda one needs conda-forge: its
    parse and the package it adds are tested in tests/envs/test_create.py)."""
    _, kit = same_release
    env, _ = other_first(world, tmp_path, "generic")
    env["CUENV_TOOLKIT_ROOTS"] = str(kit.parent)
    said = subprocess.run([str(world.bin_dir / "cuenv"), "run", "cuda-12.1", "--", "nvcc"], env=env, capture_output=True,
                          text=True, timeout=60, check=False).stderr
    hinted = [part for i, part in enumerate(said.split("`")) if i % 2]
    assert "cuenv use system:12.1" in hinted and "cuenv list --system" in hinted, said
    listed = subprocess.run([str(world.bin_dir / "cuenv"), "list", "--system"], env=env, capture_output=True, text=True,
                            timeout=60, check=False)
    assert listed.returncode == 0 and [str(kit)] == [line.split()[-1] for line in listed.stdout.splitlines()
                                                     if line.startswith("system:12.1 ")]
    out = run_shell("bash", "\n".join([hook_source("bash", world, tmp_path), "cuenv use system:12.1", "nvcc --version"]), env)
    assert out.stdout.splitlines() == ["Cuda compilation tools, release 12.1, V12.1.88"], out.stderr
