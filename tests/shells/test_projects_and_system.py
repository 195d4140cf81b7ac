"""Per-project .cuenv files, auto-activation on cd, system toolkits, and `cuenv init`."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from cuenv.envs.project import ProjectPin, find, parse

from .conftest import World, hook_source, read_env0, run_shell, shell_or_skip

pytestmark = pytest.mark.network  # the `world` fixture downloads NVIDIA wheels from PyPI (once)


def test_parse_project_file(tmp_path: Path):
    f = tmp_path / ".cuenv"
    assert parse("# pinned\n\n  env: torch-cu121   # the one\nlock: my lock.yaml\n", f) == ProjectPin(
        file=f, env="torch-cu121", lock=tmp_path / "my lock.yaml")
    assert parse("lock: x\ncuda-12.1\n", f).env == "cuda-12.1"
    f.write_text("cuda-12.4\n")
    (tmp_path / "a" / "b").mkdir(parents=True)
    assert find(tmp_path / "a" / "b") == ProjectPin(file=f, env="cuda-12.4")


def _project(tmp_path: Path, name: str = "cuda-12.4", *, allow_in: World | None = None) -> Path:
    """A project with a .cuenv pin; with ``allow_in``, approved in that world's home (as `cuenv allow` does)."""
    proj = tmp_path / "my project"
    (proj / "src" / "deep").mkdir(parents=True)
    (proj / ".cuenv").write_text(f"# this project's CUDA\nenv: {name}\nlock: cuenv.lock\n")
    if allow_in is not None:
        from cuenv.trust import consent

        consent.allow(allow_in.home, proj / ".cuenv", (proj / ".cuenv").read_bytes())
    return proj


def test_use_without_name_takes_the_nearest_cuenv_file(shell: str, world: World, tmp_path: Path):
    proj = _project(tmp_path, allow_in=world)
    out = run_shell(shell, "; ".join([hook_source(shell, world, tmp_path), "cuenv use", 'echo "$CUENV_ACTIVE"']),
                    world.environ(tmp_path), cwd=proj / "src" / "deep")
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "cuda-12.4"


def test_pinned_env_missing_points_at_the_lockfile(world: World, tmp_path: Path):
    proj = _project(tmp_path, "not-built-yet", allow_in=world)
    out = run_shell("bash", hook_source("bash", world, tmp_path) + "; cuenv use; echo rc=$?", world.environ(tmp_path), cwd=proj)
    assert out.stdout.strip() == "rc=2"
    # the lockfile is not there either: `cuenv sync` of it would fail, so the hint says to create (issue 17 §4)
    assert (f"hint: Its lockfile {proj}/cuenv.lock is missing too: create it from a recipe, with -n not-built-yet: "
            "`cuenv recipes` lists the recipes to create one from, `cuenv suggest` picks one for this machine.") in out.stderr
    (proj / "cuenv.lock").write_text("version: 1\n")
    out = run_shell("bash", hook_source("bash", world, tmp_path) + "; cuenv use; echo rc=$?", world.environ(tmp_path), cwd=proj)
    assert f"hint: Create it from its lockfile: `cuenv sync {proj}/cuenv.lock -n not-built-yet`." in out.stderr



def test_pinned_env_missing_without_a_lockfile_keeps_the_pinned_name(world: World, tmp_path: Path):
    """A pin with no lock: the hint names the name the pin asks for and the command that lists the recipes (the
    choice is the user's); run as written, it lists them, and the first one creates it (--dry-run: nothing downloaded)."""
    proj = _project(tmp_path, "pinned-name", allow_in=world)
    (proj / ".cuenv").write_text("env: pinned-name\n")
    from cuenv.trust import consent

    consent.allow(world.home, proj / ".cuenv", (proj / ".cuenv").read_bytes())
    out = run_shell("bash", hook_source("bash", world, tmp_path) + "; cuenv use; echo rc=$?", world.environ(tmp_path), cwd=proj)
    assert out.stdout.strip() == "rc=2"
    hint = ("hint: Create it from a recipe, with -n pinned-name: `cuenv recipes` lists the recipes to create one from, "
            "`cuenv suggest` picks one for this machine.")
    assert hint in out.stderr.splitlines(), out.stderr
    env = {**os.environ, **world.environ(tmp_path)}
    listed = subprocess.run([str(world.bin_dir / "cuenv"), *hint.split("`")[1].split()[1:], "--json"], env=env,
                            capture_output=True, text=True, timeout=60, check=True)
    recipe = json.loads(listed.stdout)["recipes"][1]["name"]  # cuda-12.1
    done = subprocess.run([str(world.bin_dir / "cuenv"), "create", recipe, "-n", "pinned-name", "--engine", "venv", "--dry-run"],
                          env={**os.environ, **world.environ(tmp_path)},  # this process's index settings and certificates
                          capture_output=True, text=True, timeout=300, check=False)
    assert done.returncode == 0 and "Would create 'pinned-name'" in done.stdout, done.stderr

AUTO = {
    # bash runs PROMPT_COMMAND only when interactive: feed the commands on stdin to `bash -i`
    "bash": (["bash", "--norc", "--noprofile", "-i"], "\n"),
    "zsh": (["zsh", "-f", "-c"], "\n"),
    "fish": (["fish", "--no-config", "-c"], "\n"),
}


@pytest.mark.parametrize("shell_name", ["bash", "zsh", "fish"])
def test_auto_activation_on_cd(shell_name: str, world: World, tmp_path: Path):
    shell_or_skip(shell_name)
    proj = _project(tmp_path, allow_in=world)
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    before, after = tmp_path / "before", tmp_path / "after"
    env = world.environ(tmp_path, CUENV_AUTO_ACTIVATE="1", PS1="$ ")
    show = 'echo "at=${CUENV_ACTIVE-none}"' if shell_name != "fish" else 'echo "at=$CUENV_ACTIVE"'
    steps = [
        hook_source(shell_name, world, tmp_path),
        f"env -0 > '{before}'",
        f"cd '{proj}/src'", show,
        "cd deep", show,
        f"cd '{outside}'", show,
        f"env -0 > '{after}'",
    ]
    argv, sep = AUTO[shell_name]
    if shell_name == "bash":
        out = run_shell(shell_name, "", env, cwd=outside, argv=argv, stdin=sep.join(steps) + "\nexit\n")
    else:
        out = run_shell(shell_name, sep.join(steps), env, cwd=outside, argv=argv)
    assert out.returncode == 0, out.stderr
    lines = [line for line in out.stdout.splitlines() if line.startswith("at=")]
    assert lines == ["at=cuda-12.4", "at=cuda-12.4", "at=none" if shell_name != "fish" else "at="]
    b, a = read_env0(before), read_env0(after)
    for env_ in (a, b):
        env_.pop("PWD", None), env_.pop("OLDPWD", None)
    assert a == b


@pytest.fixture
def toolkits(tmp_path: Path) -> Path:
    """Two fake system toolkits: bin/ptxas printing their version, lib64/ with a marker library name."""
    root = tmp_path / "usr local"
    for version in ("11.8", "12.2"):
        kit = root / f"cuda-{version}"
        (kit / "bin").mkdir(parents=True)
        (kit / "lib64").mkdir()
        (kit / "lib64" / "libcudart.so").write_text("")
        (kit / "version.json").write_text(json.dumps({"cuda": {"name": "CUDA SDK", "version": f"{version}.0"}}))
        ptxas = kit / "bin" / "ptxas"
        ptxas.write_text(f"#!/bin/sh\necho 'Cuda compilation tools, release {version}'\n")
        ptxas.chmod(0o755)
    return root


def test_use_system_toolkit_switches_cleanly(shell: str, world: World, tmp_path: Path, toolkits: Path):
    env = world.environ(tmp_path, CUENV_TOOLKIT_ROOTS=str(toolkits))
    d = [tmp_path / f"d{i}" for i in range(3)]
    sep = "; "
    ld = 'echo "LD=$LD_LIBRARY_PATH"'
    steps = [hook_source(shell, world, tmp_path), f"env -0 > '{d[0]}'",
             "cuenv use system:11.8", "ptxas", ld,
             "cuenv use system:12.2", "ptxas", ld, 'echo "CUDA_HOME=$CUDA_HOME"', f"env -0 > '{d[1]}'",
             "cuenv use cuda-12.1", "command -v ptxas" if shell != "fish" else "command -s ptxas",
             "cuenv deactivate", f"env -0 > '{d[2]}'"]
    out = run_shell(shell, sep.join(steps), env)
    assert out.returncode == 0, out.stderr
    lines = out.stdout.splitlines()
    site = next((world.envs / "cuda-12.1").glob("lib/python3*/site-packages"))
    assert lines == [
        "Cuda compilation tools, release 11.8", f"LD={toolkits}/cuda-11.8/lib64",
        "Cuda compilation tools, release 12.2", f"LD={toolkits}/cuda-12.2/lib64",
        f"CUDA_HOME={toolkits}/cuda-12.2",
        str(site / "nvidia/cuda_nvcc/bin/ptxas"),
    ]
    mid = read_env0(d[1])
    assert "cuda-11.8" not in mid["PATH"] and str(world.system_cuda) not in mid["PATH"]
    assert read_env0(d[2]) == read_env0(d[0])


def test_init_is_idempotent_and_undoable(cli, tmp_path: Path, monkeypatch):
    import os

    home = tmp_path / "h"
    home.mkdir()
    rc = home / ".bashrc"
    rc.write_text("alias ll='ls -l'\n")
    # Without XDG_CONFIG_HOME fish's file is under HOME; with it, there (the test's own folders either way).
    environ = {**{k: v for k, v in os.environ.items() if k != "XDG_CONFIG_HOME"}, "HOME": str(home), "SHELL": "/bin/bash"}
    code, out, err = cli("init", environ=environ)
    assert code == 0 and f"Added the cuenv hook to {rc}" in out
    once = rc.read_text()
    assert cli("init", "bash", environ=environ)[0] == 0 and rc.read_text() == once
    assert once == (
        "alias ll='ls -l'\n# >>> cuenv initialize >>>\n# Added by `cuenv init`; remove it with `cuenv init --undo`.\n"
        'if command -v cuenv >/dev/null 2>&1; then eval "$(command cuenv shell-init bash)"; fi\n'
        "# <<< cuenv initialize <<<\n"
    )
    code, out, _ = cli("init", "--undo", environ=environ)
    assert code == 0 and rc.read_text() == "alias ll='ls -l'\n"
    code, out, _ = cli("init", "fish", environ=environ)
    assert (home / ".config" / "fish" / "config.fish").read_text().splitlines()[2] == (
        "command -q cuenv; and cuenv shell-init fish | source")
    xdg = tmp_path / "xdg"
    assert cli("init", "fish", environ={**environ, "XDG_CONFIG_HOME": str(xdg)})[0] == 0
    assert (xdg / "fish" / "config.fish").read_text() == (home / ".config" / "fish" / "config.fish").read_text()
    code, _, err = cli("init", environ={**environ, "SHELL": "/bin/tcsh"})
    assert code == 2 and err.startswith("error: Cannot tell which shell")


def test_init_line_works_in_a_real_rc_file(world: World, tmp_path: Path, cli):
    import os

    shell_or_skip("bash")
    environ = {**os.environ, "HOME": str(tmp_path)}
    assert cli("init", "bash", environ=environ)[0] == 0
    env = world.environ(tmp_path)
    out = run_shell("bash", "", env, argv=["bash", "--rcfile", str(tmp_path / ".bashrc"), "-i"],
                    stdin="cuenv use cuda-12.1\necho \"at=$CUENV_ACTIVE\"\nexit\n")
    assert "at=cuda-12.1" in out.stdout, out.stderr
