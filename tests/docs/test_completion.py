"""`cuenv completion bash|zsh|fish`: loaded into real shells (rc files off) and driven there."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from cuenv.cli.walk import command_tree

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture
def world(tmp_path: Path) -> dict:
    """A home with two environments (one unfinished), a user recipe folder, and tripwires: a `cuenv` and
    a `python` on PATH that record being called, so a TAB that starts Python is caught."""
    home = tmp_path / "home with 'quote' and space"
    for name, complete in (("cuda-12.1", True), ("torch-dev", True), ("half-built", False)):
        meta = home / "envs" / name / ".cuenv"
        meta.mkdir(parents=True)
        if complete:
            (meta / "complete").write_text("")
    recipes = tmp_path / "my recipes"
    recipes.mkdir()
    (recipes / "my-stack.yaml").write_text("name: my-stack\n")
    trip = tmp_path / "trip"
    trip.mkdir()
    calls = tmp_path / "calls"
    for exe in ("cuenv", "python", "python3"):
        (trip / exe).write_text(f"#!/bin/sh\necho {exe} >> '{calls}'\n")
        (trip / exe).chmod(0o755)
    env = {k: v for k, v in os.environ.items() if not k.startswith("CUENV_")}
    config = tmp_path / "config.yaml"
    config.write_text(f"recipe_dirs: [{str(recipes)!r}]\n")  # baked into the scripts
    env.update(CUENV_HOME=str(home), CUENV_CONFIG=str(config), HOME=str(tmp_path))
    scripts = {}
    for shell in ("bash", "zsh", "fish"):
        done = subprocess.run([sys.executable, "-m", "cuenv", "completion", shell], capture_output=True, text=True,
                              env=dict(env, PYTHONPATH=str(REPO)), timeout=60)
        assert done.returncode == 0, done.stderr
        path = tmp_path / ("_cuenv" if shell == "zsh" else f"cuenv.{shell}")
        path.write_text(done.stdout)
        scripts[shell] = path
    env["PATH"] = f"{trip}:{os.environ['PATH']}"
    return {"home": home, "recipes": recipes, "env": env, "scripts": scripts, "calls": calls, "tmp": tmp_path}


def _bash(world: dict, body: str) -> str:
    script = f"""source {shq(world['scripts']['bash'])}
t() {{ COMP_WORDS=("$@"); COMP_CWORD=$((${{#COMP_WORDS[@]}} - 1)); _cuenv; printf '%s\\n' "${{COMPREPLY[*]}}"; }}
{body}"""
    done = subprocess.run(["bash", "--norc", "--noprofile", "-c", script], capture_output=True, text=True,
                          env=world["env"], cwd=world["tmp"], timeout=60)
    assert done.returncode == 0 and not done.stderr, done.stderr
    return done.stdout


def shq(path: Path) -> str:
    return "'" + str(path).replace("'", "'\\''") + "'"


def test_bash_registers_and_completes(world: dict) -> None:
    out = _bash(world, "complete -p cuenv\n" + "\n".join([
        "t cuenv cr", "t cuenv use ''", "t cuenv create my", "t cuenv create cuda-12.", "t cuenv recipes s",
        "t cuenv recipes show torch-cu12", "t cuenv create --engine m", "t cuenv create --eng",
        "t cuenv remove cuda-12.1 t", "t cuenv shell-init z", "t cuenv completion ''",
        "t cuenv check cu", "t cuenv --home /nowhere use ''", "t cuenv --recipes /nowhere create my",
    ])).splitlines()
    assert out == [
        "complete -F _cuenv cuenv",
        "create",
        "cuda-12.1 torch-dev",  # not half-built: no completion marker
        "my-stack",
        "cuda-12.1 cuda-12.4 cuda-12.6-cudnn cuda-12.6 cuda-12.8 cuda-12.9",
        "show",
        "torch-cu121 torch-cu124 torch-cu126 torch-cu128",
        "mamba micromamba",
        "--engine",
        "torch-dev",
        "zsh",
        "bash zsh fish",
        "cuda-12.1 cuda-11.8 cuda-12.1 cuda-12.4 cuda-12.6-cudnn cuda-12.6 cuda-12.8 cuda-12.9 cuda-13.0 cuda-13.1 "
        "cuda-13.2 cuda-13.3 cuda-13.4 cuda-13.5",
        "",  # a typed --home wins: no environments there
        "my-stack",  # --recipes adds a folder; the configured ones still count
    ]
    assert not world["calls"].exists(), "a TAB started cuenv or Python"


def test_bash_offers_every_option_of_the_parser(world: dict) -> None:
    tree = command_tree()
    for command in tree.walk():
        words = " ".join(["cuenv", *command.path, "--"])
        got = set(_bash(world, f"t {words}").split())
        want = {f for f in command.flags() if f.startswith("--")}
        assert got == want, command.name


def test_exported_variables_win_over_baked_folders(world: dict, tmp_path: Path) -> None:
    other = tmp_path / "other"
    (other / "envs" / "elsewhere" / ".cuenv").mkdir(parents=True)
    (other / "envs" / "elsewhere" / ".cuenv" / "complete").write_text("")
    out = _bash(world, f"CUENV_HOME={shq(other)} t cuenv use ''\nCUENV_RECIPES={shq(tmp_path)} t cuenv create my")
    assert out.splitlines() == ["elsewhere", ""]  # CUENV_RECIPES replaces the configured folders


def test_run_completes_commands_after_the_separator(world: dict) -> None:
    out = _bash(world, "t cuenv run cu\nt cuenv run cuda-12.1 -- bas").splitlines()
    assert out[0] == "cuda-12.1"
    assert "bash" in out[1].split()


@pytest.mark.skipif(shutil.which("zsh") is None, reason="zsh is not installed")
def test_zsh_compinit_autoloads_and_completes(world: dict) -> None:
    folder = world["scripts"]["zsh"].parent
    script = f"""
fpath=({shq(folder)} $fpath)
autoload -U compinit && compinit -u -d {shq(world['tmp'] / 'zcompdump')}
print -r -- "registered: $_comps[cuenv]"
compadd() {{ while (( $# )); do case $1 in -a) shift; print -rl -- ${{(P)1}};; -*) ;; *) print -r -- $1;; esac; shift; done }}
_files() {{ print -r -- "files $*" }}
t() {{ words=("$@"); CURRENT=$#; _cuenv | tr '\\n' ' '; print }}
t cuenv cr
t cuenv use ''
t cuenv recipes ''
t cuenv create --engine ''
t cuenv create --home ''
"""
    done = subprocess.run(["zsh", "-f", "-c", script], capture_output=True, text=True, env=world["env"],
                          cwd=world["tmp"], timeout=60)
    assert done.returncode == 0 and not done.stderr, done.stderr
    lines = [line.strip() for line in done.stdout.splitlines()]
    assert lines[0] == "registered: _cuenv"
    assert lines[1].split()[:5] == ["info", "recipes", "check", "suggest", "create"]  # compadd filters by prefix
    assert lines[2:] == ["cuda-12.1 torch-dev", "list show lint", "auto conda mamba micromamba rattler venv", "files -/"]
    assert not world["calls"].exists()


@pytest.mark.skipif(shutil.which("zsh") is None, reason="zsh is not installed")
def test_zsh_eval_after_compinit_registers(world: dict) -> None:
    script = f"autoload -U compinit && compinit -u -d {shq(world['tmp'] / 'zd')}\n" \
             f"eval \"$(cat {shq(world['scripts']['zsh'])})\"\nprint -r -- $_comps[cuenv]"
    done = subprocess.run(["zsh", "-f", "-c", script], capture_output=True, text=True, env=world["env"], timeout=60)
    assert done.stdout.strip() == "_cuenv", done.stderr
    assert subprocess.run(["zsh", "-n", str(world["scripts"]["zsh"])]).returncode == 0


@pytest.mark.skipif(shutil.which("fish") is None, reason="fish is not installed")
def test_fish_complete(world: dict) -> None:
    queries = ["cuenv cr", "cuenv use ", "cuenv recipes ", "cuenv recipes show torch-cu12", "cuenv create my",
               "cuenv create --engine m", "cuenv shell-init ", "cuenv --home /nowhere use ",
               "cuenv --recipes /nowhere create my"]
    body = "\n".join(f"echo (complete -C {fish_quote(q)} | string replace -r '\\t.*' '')" for q in queries)
    done = subprocess.run(["fish", "--no-config", "-c", f"source {fish_quote(str(world['scripts']['fish']))}\n{body}"],
                          capture_output=True, text=True, env=world["env"], cwd=world["tmp"], timeout=60)
    assert done.returncode == 0 and not done.stderr, done.stderr
    assert done.stdout.splitlines() == [
        "create", "cuda-12.1 torch-dev", "lint list show", "torch-cu121 torch-cu124 torch-cu126 torch-cu128",
        "my-stack", "mamba micromamba", "bash fish zsh", "", "my-stack",
    ]
    assert not world["calls"].exists()


def fish_quote(text: str) -> str:
    return "'" + text.replace("\\", "\\\\").replace("'", "\\'") + "'"


def test_shell_from_SHELL_and_refusal(cli) -> None:
    code, out, _ = cli("completion", environ=dict(os.environ, SHELL="/usr/bin/fish"))
    assert code == 0 and "complete -c cuenv" in out
    code, out, err = cli("completion", environ=dict(os.environ, SHELL="/bin/tcsh"))
    assert code == 2 and out == ""
    assert err.splitlines() == ["error: Cannot tell which shell to complete for (SHELL='/bin/tcsh').",
                                "hint: Name it: `cuenv completion bash`, `cuenv completion zsh` or `cuenv completion fish`."]


def test_shellcheck_is_clean(world: dict) -> None:
    if shutil.which("shellcheck") is None:
        pytest.skip("shellcheck is not installed")
    done = subprocess.run(["shellcheck", "-s", "bash", str(world["scripts"]["bash"])], capture_output=True, text=True)
    assert done.returncode == 0, done.stdout
