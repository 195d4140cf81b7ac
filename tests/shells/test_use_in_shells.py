"""`cuenv use` / `cuenv deactivate` in real bash, zsh and fish, with rc files off (issue 5 §Tests)."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest

from cuenv.machine.fingerprint import fingerprint

from .conftest import World, hook_source, read_env0, run_shell

pytestmark = pytest.mark.network  # the `world` fixture downloads NVIDIA wheels from PyPI (once)

CUDART = (
    'import ctypes; l = ctypes.CDLL("libcudart.so.12"); v = ctypes.c_int(); '
    "l.cudaRuntimeGetVersion(ctypes.byref(v)); print(v.value)"
)


def _probe(shell: str, world: World) -> str:
    """Shell code printing where ptxas comes from, its version, LD_LIBRARY_PATH and the loaded runtime."""
    which = "command -v ptxas" if shell != "fish" else "command -s ptxas"
    return (
        f"{which}; ptxas --version | tail -n 1; printf 'LD=%s\\n' \"$LD_LIBRARY_PATH\"; "
        f"'{world.python}' -c '{CUDART}'"
    )


def _dump(shell: str, path: Path) -> str:
    return f"env -0 > '{path}'"


def test_use_then_deactivate(shell: str, world: World, tmp_path: Path):
    env = world.environ(tmp_path)
    before, during, after = (tmp_path / n for n in ("before", "during", "after"))
    sep = "; " if shell == "fish" else " && "
    script = sep.join([
        hook_source(shell, world, tmp_path),
        _probe(shell, world),
        _dump(shell, before),
        "cuenv use cuda-12.1",
        _probe(shell, world),
        _dump(shell, during),
        "cuenv deactivate",
        _dump(shell, after),
    ])
    out = run_shell(shell, script, env)
    assert out.returncode == 0, out.stderr
    lines = out.stdout.splitlines()
    env121 = world.envs / "cuda-12.1"
    site = next(env121.glob("lib/python3*/site-packages"))
    # before: the conflicting system CUDA wins (the conflict is real)
    assert lines[:4] == [str(world.system_cuda / "bin/ptxas"), "Cuda compilation tools, release 13.0, V13.0.88",
                         f"LD={world.system_cuda}/lib64", "12040"]
    # after use: one CUDA, the environment's
    assert lines[4:] == [
        str(site / "nvidia/cuda_nvcc/bin/ptxas"),
        "Build cuda_12.1.r12.1/compiler.32688072_0",
        f"LD={site}/nvidia/cuda_nvcc/lib:{site}/nvidia/cuda_runtime/lib",
        "12010",
    ]
    old, mid = read_env0(before), read_env0(during)
    assert mid["CUENV_ACTIVE"] == "cuda-12.1" and mid["VIRTUAL_ENV"] == str(env121)
    assert "CUDA_HOME" not in mid  # it named the other CUDA
    assert read_env0(after) == old  # byte for byte, unset stays unset


def test_switch_a_to_b_to_off(shell: str, world: World, tmp_path: Path):
    env = world.environ(tmp_path, CUDA_MODULE_LOADING="EAGER")
    d = [tmp_path / f"d{i}" for i in range(4)]
    sep = "; " if shell == "fish" else " && "
    script = sep.join([
        hook_source(shell, world, tmp_path), _dump(shell, d[0]),
        "cuenv use cuda-12.1", _dump(shell, d[1]),
        "cuenv use cuda-12.4", _dump(shell, d[2]),
        "cuenv use --off", _dump(shell, d[3]),
    ])
    out = run_shell(shell, script, env)
    assert out.returncode == 0, out.stderr
    e0, e1, e2, e3 = map(read_env0, d)
    assert e1["CUDA_MODULE_LOADING"] == "EAGER"
    assert e2["CUDA_MODULE_LOADING"] == "LAZY" and e2["CUENV_ACTIVE"] == "cuda-12.4"
    assert "cuda-12.1" not in e2["PATH"] + e2["LD_LIBRARY_PATH"]  # nothing of A left behind
    assert e3 == e0


def test_python_apply_agrees_with_the_shell(shell: str, world: World, tmp_path: Path):
    """The activation in the shell equals `cuenv.activation.plan.apply` on the same environment."""
    from cuenv.activation.plan import apply, plan_for
    from cuenv.envs.store import Store

    before, during = tmp_path / "before", tmp_path / "during"
    sep = "; " if shell == "fish" else " && "
    script = sep.join([hook_source(shell, world, tmp_path), _dump(shell, before), "cuenv use cuda-12.4",
                       _dump(shell, during)])
    out = run_shell(shell, script, world.environ(tmp_path))
    assert out.returncode == 0, out.stderr
    target = Store(world.envs).get("cuda-12.4").target()
    expected, _ = apply(read_env0(before), plan_for(target, envs_dir=world.envs))
    assert read_env0(during) == expected


@pytest.mark.parametrize("shell_name", ["bash", "zsh"])
def test_strict_user_shell_with_hostile_aliases(shell_name: str, world: World, tmp_path: Path):
    """set -euo pipefail, noclobber, and aliases/functions named like the builtins the scripts use."""
    if shutil.which(shell_name) is None:
        pytest.skip(f"{shell_name} missing")
    before, after = tmp_path / "before", tmp_path / "after"
    traps = "\n".join([
        "set -euo pipefail", "set -o noclobber",
        "unset() { echo HIJACKED-unset >&2; }", "export() { echo HIJACKED-export >&2; }",
        "printf() { echo HIJACKED-printf >&2; }", "read() { echo HIJACKED-read >&2; }",
    ])
    aliases = "\n".join(["alias unset='echo HIJACKED'", "alias export='echo HIJACKED'", "alias return='echo HIJACKED'",
                         "alias eval='echo HIJACKED'", "alias .='echo HIJACKED'", "alias read='echo HIJACKED'"])
    prelude = "shopt -s expand_aliases\n" if shell_name == "bash" else ""
    script = "\n".join([
        traps,
        prelude + aliases,
        hook_source(shell_name, world, tmp_path),
        f"env -0 >| '{before}'",
        "cuenv use cuda-12.1",
        'test "$CUENV_ACTIVE" = cuda-12.1',
        "cuenv use cuda-12.4",
        "cuenv deactivate",
        "cuenv deactivate",  # twice: nothing active is not an error
        f"env -0 >| '{after}'",
        "echo survived",
    ])
    out = run_shell(shell_name, script, world.environ(tmp_path))
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip().endswith("survived") and "HIJACKED" not in out.stdout + out.stderr
    assert read_env0(after) == read_env0(before)


def test_eval_shell_init_and_no_python_on_the_common_path(shell: str, world: World, tmp_path: Path):
    log = tmp_path / "starts.log"
    env = world.environ(tmp_path, CUENV_TEST_LOG=str(log))
    init = "cuenv shell-init fish | source" if shell == "fish" else f'eval "$(cuenv shell-init {shell})"'
    sep = "; " if shell == "fish" else " && "
    warm = run_shell(shell, sep.join([init, "cuenv use cuda-12.1", "cuenv deactivate"]), env)
    assert warm.returncode == 0, warm.stderr
    log.unlink()
    steps = [init, "echo > '%s'" % (tmp_path / "mark")]
    steps += ["cuenv use cuda-12.1", "cuenv use cuda-12.4", "cuenv deactivate"] * 3
    out = run_shell(shell, sep.join(steps), env)
    assert out.returncode == 0, out.stderr
    # only `shell-init` started Python: use/deactivate cycles read the cached verdict and sourced scripts
    assert log.read_text().splitlines() == [f"shell-init {shell}"]


def test_verdict_cache_warns_and_strict_refuses(shell: str, world: World, tmp_path: Path, monkeypatch):
    home = tmp_path / "home"
    shutil.copytree(world.home, home, symlinks=True, ignore=shutil.ignore_patterns("lib", "bin"))
    env = world.environ(tmp_path, CUENV_HOME=str(home), CUENV_DRIVER="525.60.13")
    meta = home / "envs" / "cuda-12.1" / ".cuenv"
    fp = fingerprint(env)
    (meta / "verdict").write_text(f"{fp}\nerror: CUDA 12.1 needs driver >= 530; this machine has 525.\nhint: Update the driver.\n")
    sep = "; " if shell == "fish" else " ; "
    script = sep.join([
        hook_source(shell, world, tmp_path),
        "cuenv use --strict cuda-12.1", "echo strict=$status" if shell == "fish" else "echo strict=$?",
        'echo "active=[$CUENV_ACTIVE]"',
        "cuenv use cuda-12.1", "echo plain=$status" if shell == "fish" else "echo plain=$?",
        'echo "active=[$CUENV_ACTIVE]"',
    ])
    out = run_shell(shell, script if shell == "fish" else "set +e; " + script.replace("$CUENV_ACTIVE", "${CUENV_ACTIVE-}"), env)
    assert out.stdout.splitlines() == ["strict=1", "active=[]", "plain=0", "active=[cuda-12.1]"]
    # an error with --strict (it stops activation), a warning without (activation goes on): issue 17 §4
    assert out.stderr.count("error: CUDA 12.1 needs driver >= 530; this machine has 525.") == 1
    assert out.stderr.count("warning: CUDA 12.1 needs driver >= 530; this machine has 525.") == 1
    assert "not activating cuda-12.1" in out.stderr
    # another fingerprint (the driver changed): the cache misses and Python recomputes it
    env2 = dict(env, CUENV_DRIVER="550.54.14")
    out = run_shell(shell, sep.join([hook_source(shell, world, tmp_path), "cuenv use cuda-12.1"]), env2)
    assert out.returncode == 0, out.stderr
    assert (meta / "verdict").read_text().splitlines()[0] == fingerprint(env2)


def test_fingerprint_in_shell_matches_python(shell: str, world: World, tmp_path: Path):
    env = world.environ(tmp_path, CUENV_DRIVER="535.1 x", CUENV_GPUS="8.0,9.0", CONDA_OVERRIDE_CUDA="12.2")
    code = "__cuenv_fingerprint; printf '%s' \"$__cuenv_fp\""
    out = run_shell(shell, f"{hook_source(shell, world, tmp_path)}; {code}", env)
    assert out.stdout == fingerprint(env)


def test_hook_helper_failure_evaluates_nothing(shell: str, world: World, tmp_path: Path):
    sep = "; "
    status = "$status" if shell == "fish" else "$?"
    script = sep.join([hook_source(shell, world, tmp_path), "cuenv use no-such-env", f"echo rc={status}",
                       "cuenv use system:99.9", f"echo rc={status}", "cuenv use", f"echo rc={status}"])
    out = run_shell(shell, script, world.environ(tmp_path), cwd=tmp_path)
    assert out.stdout.splitlines() == ["rc=2", "rc=2", "rc=2"]
    assert out.stderr.count("error: ") == 3 and "Traceback" not in out.stderr
    assert "No environment named 'no-such-env'" in out.stderr
    assert "No system CUDA toolkit '99.9'" in out.stderr
    assert "no .cuenv file" in out.stderr


def test_without_the_hook_use_says_how_to_enable_it(world: World, tmp_path: Path):
    env = world.environ(tmp_path, SHELL="/usr/bin/zsh")
    out = subprocess.run([str(world.bin_dir / "cuenv"), "use", "cuda-12.1"], env=env, capture_output=True, text=True)
    assert out.returncode == 2 and out.stdout == ""
    assert out.stderr.splitlines() == [
        "error: `cuenv use` needs the cuenv shell hook: a program cannot change the shell that started it.",
        'hint: Run `eval "$(cuenv shell-init zsh)"` in this shell, or `cuenv init zsh` to install the hook for new shells.',
    ]


def test_missing_script_falls_back_to_python_and_repairs(shell: str, world: World, tmp_path: Path):
    home = tmp_path / "home"
    shutil.copytree(world.home, home, symlinks=True)
    for f in (home / "envs" / "cuda-12.1" / ".cuenv").glob("activate.*"):
        f.unlink()
    env = world.environ(tmp_path, CUENV_HOME=str(home))
    sep = "; " if shell == "fish" else " && "
    out = run_shell(shell, sep.join([hook_source(shell, world, tmp_path), "cuenv use cuda-12.1", "echo $CUENV_ACTIVE",
                                     "cuenv deactivate"]), env)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "cuda-12.1"
    assert (home / "envs" / "cuda-12.1" / ".cuenv" / f"activate.{shell}").is_file()


def test_prompt_marker_and_opt_out(world: World, tmp_path: Path):
    script = "\n".join([hook_source("bash", world, tmp_path), "PS1='$ '", "cuenv use cuda-12.1", 'echo "[$PS1]"',
                        "cuenv deactivate", 'echo "[$PS1]"', "CUENV_PROMPT=0", "cuenv use cuda-12.1", 'echo "[$PS1]"'])
    out = run_shell("bash", script, world.environ(tmp_path))
    assert out.stdout.splitlines() == ["[(cuda-12.1) $ ]", "[$ ]", "[$ ]"]


def test_fish_prompt_marker_keeps_status(world: World, tmp_path: Path):
    pytest.importorskip("shutil")
    if shutil.which("fish") is None:
        pytest.skip("fish missing")
    script = "; ".join([hook_source("fish", world, tmp_path),
                        "function fish_prompt; printf 'orig[%s]' $status; end",
                        "cuenv use cuda-12.1", "false; fish_prompt; echo",
                        "cuenv deactivate", "fish_prompt; echo"])
    out = run_shell("fish", script, world.environ(tmp_path))
    assert out.stdout.splitlines() == ["(cuda-12.1) orig[1]", "orig[0]"], out.stderr


def test_shellcheck_hook_and_rendered_script(world: World):
    if shutil.which("shellcheck") is None:
        pytest.skip("shellcheck missing")
    from .conftest import REPO

    hook = subprocess.run(["shellcheck", "-s", "bash", str(REPO / "shell" / "cuenv.sh")], capture_output=True, text=True)
    assert hook.returncode == 0, hook.stdout
    rendered = world.envs / "cuda-12.1" / ".cuenv" / "activate.bash"
    # SC2034: the save variables are read by __cuenv_restore, defined in the same file but used later
    out = subprocess.run(["shellcheck", "-s", "bash", "-e", "SC2034", str(rendered)], capture_output=True, text=True)
    assert out.returncode == 0, out.stdout


def test_meta_json_of_the_fixture_is_what_create_writes(world: World):
    meta = json.loads((world.envs / "cuda-12.1" / ".cuenv" / "meta.json").read_text())
    assert set(meta) >= {"layout", "env_vars", "activate_scripts"}


def test_conda_activate_d_scripts_run_as_conda_runs_them(shell: str, world: World, tmp_path: Path):
    from cuenv.activation.target import CudaLayout

    from . import envbuild

    home = tmp_path / "home"
    prefix = home / "envs" / "condaenv"
    for d in ("bin", "lib", "etc/conda/activate.d", "etc/conda/deactivate.d"):
        (prefix / d).mkdir(parents=True)
    act, deact = prefix / "etc/conda/activate.d", prefix / "etc/conda/deactivate.d"
    (act / "10-pkg.sh").write_text('export PKG_HOME="$CONDA_PREFIX/share/pkg"\n')
    (deact / "10-pkg.sh").write_text("unset PKG_HOME\n")
    (act / "10-pkg.fish").write_text('set -gx PKG_HOME "$CONDA_PREFIX/share/pkg"\n')
    (deact / "10-pkg.fish").write_text("set -e PKG_HOME\n")
    layout = CudaLayout(prefix=prefix, kind="conda", bin_dirs=(prefix / "bin",), lib_dirs=(prefix / "lib",),
                        cuda_home=prefix)
    envbuild.register(home / "envs", "condaenv", layout)
    env = world.environ(tmp_path, CUENV_HOME=str(home), VIRTUAL_ENV="/some/venv")
    before, during, after = (tmp_path / n for n in ("before", "during", "after"))
    sep = "; " if shell == "fish" else " && "
    out = run_shell(shell, sep.join([hook_source(shell, world, tmp_path), _dump(shell, before), "cuenv use condaenv",
                                     _dump(shell, during), "cuenv deactivate", _dump(shell, after)]), env)
    assert out.returncode == 0, out.stderr
    mid = read_env0(during)
    assert mid["PKG_HOME"] == f"{prefix}/share/pkg"
    assert mid["CONDA_PREFIX"] == str(prefix) and mid["CUDA_HOME"] == str(prefix) and "VIRTUAL_ENV" not in mid
    assert read_env0(after) == read_env0(before)
