"""`cuenv create` end to end, as a user runs it: real wheels from PyPI, a real local conda channel."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from tests.envs.envkit import LOAD_CUDART


@pytest.mark.network
def test_venv_env_wins_over_a_conflicting_system_cuda(cuenv, system_cuda):
    made = cuenv("create", "cuda-12.1", "--engine", "venv")
    assert made.returncode == 0, made.stderr
    assert "Created 'cuda-12.1'" in made.stdout
    # said where it is made (issue 17): no nvcc of its own, and the command that gives one
    assert ("note: cuda-12.1 has no nvcc (CUDA 12.1): `nvcc` in it is a cuenv stand-in that runs no other CUDA release; "
            "for nvcc 12.1: `cuenv create cuda-12.1 --with-nvcc --engine rattler -n cuda-12.1-nvcc` (it downloads from "
            "conda-forge: that channel reachable, or mirrored as docs/guides/mirrors.md shows).") in made.stdout.splitlines()
    # the conflict is real: outside the environment the loader finds CUDA 12.4's runtime first
    outside = subprocess.run([sys.executable, "-c", LOAD_CUDART, "12"], env=system_cuda, capture_output=True, text=True)
    assert outside.stdout.strip() == "12040"
    inside = cuenv("run", "cuda-12.1", "--", "python", "-c", LOAD_CUDART, "12", env=system_cuda)
    assert inside.returncode == 0, inside.stderr
    assert inside.stdout.strip() == "12010"
    ptxas = cuenv("run", "cuda-12.1", "--", "ptxas", "--version", env=system_cuda)
    assert "release 12.1, V12.1.105" in ptxas.stdout
    cuda_home = cuenv("run", "cuda-12.1", "--", "sh", "-c", 'ls "$CUDA_HOME/include/cuda_runtime_api.h" "$CUDA_HOME"/lib64/libcudart.so*', env=system_cuda)
    assert cuda_home.returncode == 0, cuda_home.stderr
    listed = json.loads(cuenv("list", "--json").stdout)["environments"]
    assert [(e["name"], e["engine"], e["cuda"], e["recipe"]) for e in listed] == [("cuda-12.1", "venv", "12.1", "cuda-12.1")]
    assert listed[0]["status"] in ("ok", "warning", "error", "unknown") and listed[0]["size_bytes"] > 1_000_000
    meta = json.loads(cuenv("info", "cuda-12.1", "--json").stdout)
    assert meta["resolved"] == {"libcudart": "12.1.105", "nvcc": "12.1.105"}
    assert meta["recipe"]["hash"].startswith("sha256:") and meta["lock_hash"].startswith("sha256:")
    # what is installed, not what the recipe promised (issue 17 §3): the cu12 nvcc wheel has no nvcc
    assert meta["installed"] == {"cuda": "12.1", "cudnn": "-", "nvcc": "none"}
    assert meta["tools"]["ptxas"]["source"] == "env" and meta["tools"]["nvcc"] == {"source": "shim", "path": None, "toolkit": None}
    assert listed[0]["nvcc"] == "none"
    # info's PATH rows are the folders activation puts first, the shims folder included, in that order
    text = cuenv("info", "cuda-12.1").stdout.splitlines()
    start = next(i for i, line in enumerate(text) if line.startswith("PATH "))
    end = next(i for i, line in enumerate(text) if line.startswith("LD_LIB "))
    rows = [line[11:] for line in text[start:end]]
    assert rows[-1] == f"{meta['shims_dir']}  (cuenv's stand-ins for the CUDA tools it lacks)", text
    assert meta["shims_dir"] == f"{meta['path']}/.cuenv/shims"
    assert rows[:-1] == meta["layout"]["bin_dirs"]
    nvcc = cuenv("run", "cuda-12.1", "--", "nvcc", "--version", env=system_cuda)
    assert nvcc.returncode == 127 and nvcc.stderr.startswith("cuenv: environment cuda-12.1 (CUDA 12.1) has no nvcc")
    assert "`cuenv create cuda-12.1 --with-nvcc --engine rattler -n cuda-12.1-nvcc`" in nvcc.stderr


def test_exit_code_passes_through(cuenv, local_recipes):
    assert cuenv("create", "local-cuda-12.1", "--engine", "rattler", "--recipes", str(local_recipes)).returncode == 0
    assert cuenv("run", "local-cuda-12.1", "--", "sh", "-c", "exit 7").returncode == 7
    missing = cuenv("run", "local-cuda-12.1", "--", "no-such-command-xyz")
    assert missing.returncode == 127 and missing.stderr.startswith("error: Command 'no-such-command-xyz' was not found")


def test_rattler_env_from_the_local_channel(cuenv, local_recipes, system_cuda):
    made = cuenv("create", "local-cuda-12.1", "--engine", "rattler", "--recipes", str(local_recipes))
    assert made.returncode == 0, made.stderr
    inside = cuenv("run", "local-cuda-12.1", "--", "python3", "-c", LOAD_CUDART, "12", env=system_cuda)
    assert inside.stdout.strip() == "12010", inside.stderr
    ptxas = cuenv("run", "local-cuda-12.1", "--", "ptxas", "--version", env=system_cuda)
    assert "release 12.1" in ptxas.stdout
    info = json.loads(cuenv("info", "local-cuda-12.1", "--json").stdout)
    assert info["engine"] == "rattler" and info["layout"]["kind"] == "conda"
    assert info["layout"]["cuda_home"] == info["path"]


def test_with_nvcc_adds_the_compiler_package_or_says_which_engine_has_one(cuenv, local_recipes):
    # conda engines: cuda-nvcc pinned to the recipe's CUDA joins the specs (the recipe names only cuda-nvcc-tools)
    made = cuenv("create", "local-cuda-12.1", "--with-nvcc", "--engine", "rattler", "--recipes", str(local_recipes), "--dry-run")
    assert made.returncode == 0 and "\n  cuda-nvcc 12.1.105 " in made.stdout, made.stdout + made.stderr
    # venv: NVIDIA's CUDA 12 wheels carry no nvcc; the error says what works, before any download
    venv = cuenv("create", "cuda-12.1", "--with-nvcc", "--engine", "venv", "--dry-run")
    assert venv.returncode == 2 and venv.stderr.splitlines() == [
        "error: NVIDIA's CUDA 12 wheels on PyPI carry no nvcc (ptxas only), so the venv engine cannot add one.",
        "hint: Get nvcc 12.1: `cuenv create cuda-12.1 --with-nvcc --engine rattler`."]
    # the name asked for stays in the hint: with cuda-12.1 already there, the hint without it would fail
    named = cuenv("create", "cuda-12.1", "--with-nvcc", "--engine", "venv", "-n", "nvcc-12", "--dry-run")
    assert named.returncode == 2 and named.stderr.splitlines()[-1] == (
        "hint: Get nvcc 12.1: `cuenv create cuda-12.1 --with-nvcc --engine rattler -n nvcc-12`.")
    other = cuenv("create", "-r", "requirements.txt", "--cuda", "12.1", "--with-nvcc")
    assert other.returncode == 2 and "--with-nvcc goes with a RECIPE" in other.stderr


def test_check_refuses_before_any_download(cuenv, local_recipes, tmp_path):
    env = dict(os.environ, CUENV_DRIVER="470.82.01", CUENV_GPUS="Tesla T4", CUENV_CACHE_DIR=str(tmp_path / "empty-cache"))
    out = cuenv("create", "local-cuda-12.1", "--engine", "rattler", "--recipes", str(local_recipes), env=env)
    assert out.returncode == 1
    assert out.stderr.startswith("error: local-cuda-12.1 will not run on this machine: ")
    assert "470.82.01" in out.stderr and "hint: " in out.stderr
    assert not (tmp_path / "empty-cache").exists()  # nothing fetched, nothing solved
    assert json.loads(cuenv("list", "--json").stdout)["environments"] == []


def test_solver_refuses_too_low_cuda_with_force(cuenv, local_recipes):
    """--force skips cuenv's check; the solver still refuses: cuda-version 12.1 needs __cuda >= 12."""
    env = dict(os.environ, CUENV_DRIVER="470.82.01", CUENV_GPUS="Tesla T4")
    out = cuenv("create", "local-cuda-12.1", "--engine", "rattler", "--force", "--recipes", str(local_recipes), env=env)
    assert out.returncode == 1
    errors = [line for line in out.stderr.splitlines() if line.startswith("error: ")]
    assert errors == ["error: The requested packages cannot be installed together:"], out.stderr
    assert "__cuda" in out.stderr
    assert json.loads(cuenv("list", "--json").stdout)["environments"] == []


def test_target_machine_flags_validate_another_machine(cuenv, local_recipes):
    out = cuenv("create", "local-cuda-12.1", "--engine", "rattler", "--recipes", str(local_recipes),
                "--target-driver", "535.104.05", "--target-gpu", "NVIDIA A100-SXM4-80GB", "--dry-run", "--json")
    assert out.returncode == 0, out.stderr
    data = json.loads(out.stdout)
    assert data["dry_run"] is True
    assert {p["name"] for p in data["packages"]} == {"cuda-version", "cuda-cudart", "cuda-nvcc-tools", "python"}
    assert not [f for f in data["findings"] if f["severity"] == "error"]
    # an RTX 5090 (12.0) has no SASS here, only the PTX 9.0 JIT path: a warning, still buildable
    # (on an R570 driver: older branches predate the GPU and do not see it, issue 27)
    jit = cuenv("create", "local-cuda-12.1", "--engine", "rattler", "--recipes", str(local_recipes),
                "--target-driver", "570.124.06", "--target-gpu", "GeForce RTX 5090", "--dry-run")
    assert jit.returncode == 0 and jit.stderr.startswith("warning: local-cuda-12.1 has no SASS for the GeForce RTX 5090 (12.0)")
    # a driver of the CUDA 11 family cannot run it at all
    refused = cuenv("create", "local-cuda-12.1", "--engine", "rattler", "--recipes", str(local_recipes),
                    "--target-driver", "470.82.01", "--target-cc", "8.6", "--dry-run")
    assert refused.returncode == 1 and "470.82.01" in refused.stderr.splitlines()[0]


def test_dry_run_changes_nothing(cuenv, local_recipes, isolated):
    out = cuenv("create", "local-cuda-12.1", "--engine", "rattler", "--recipes", str(local_recipes), "--dry-run")
    assert out.returncode == 0, out.stderr
    assert out.stdout.startswith("Would create 'local-cuda-12.1' from local-cuda-12.1 with rattler")
    assert not (isolated / "home" / "envs" / "local-cuda-12.1").exists()


def test_existing_name_needs_force(cuenv, local_recipes):
    base = ("create", "local-cuda-12.1", "--engine", "rattler", "--recipes", str(local_recipes), "-n", "mine")
    assert cuenv(*base).returncode == 0
    again = cuenv(*base)
    assert again.returncode == 2 and again.stderr.startswith("error: Environment 'mine' already exists.")
    forced = cuenv(*base, "--force")
    assert forced.returncode == 0, forced.stderr
    assert [e["name"] for e in json.loads(cuenv("list", "--json").stdout)["environments"]] == ["mine"]


@pytest.mark.parametrize(("argv", "needle"), [
    (("create", "torch-cu12"), "error: Unknown recipe 'torch-cu12'"),
    (("create", "cuda-12.1", "-n", "../evil"), "error: '../evil' is not a valid environment name."),
    (("create", "torch-cu121@9.9.9"), "9.9.9"),
    (("create", "cuda-12.1", "--python", "three"), "not a valid Python version"),
])
def test_bad_input_is_one_clear_error(cuenv, argv, needle, isolated):
    out = cuenv(*argv)
    assert out.returncode == 2, out.stderr
    lines = out.stderr.splitlines()
    assert lines[0].startswith(needle) or needle in lines[0], out.stderr
    assert len(lines) <= 2 and "Traceback" not in out.stderr
    assert not (isolated / "home" / "envs").exists() or not any((isolated / "home" / "envs").iterdir())


def test_remove(cuenv, local_recipes, isolated):
    assert cuenv("create", "local-cuda-12.1", "--engine", "rattler", "--recipes", str(local_recipes)).returncode == 0
    no_tty = cuenv("remove", "local-cuda-12.1", stdin=subprocess.DEVNULL)
    assert no_tty.returncode == 2 and "-y" in no_tty.stderr
    gone = cuenv("remove", "local-cuda-12.1", "-y")
    assert gone.returncode == 0 and gone.stdout.strip() == "Removed local-cuda-12.1."
    assert not (isolated / "home" / "envs" / "local-cuda-12.1").exists()
    assert cuenv("remove", "local-cuda-12.1", "-y").returncode == 2


def test_meanwhile_hands_back_the_result_or_the_error_of_its_thread() -> None:
    """create finds the system toolkits in a thread while uv installs: the caller gets the value, or the
    very exception the work raised, when it asks."""
    import threading

    from cuenv.runner import meanwhile

    names: list[str] = []
    got = meanwhile(lambda a, b: names.append(threading.current_thread().name) or a + b, 2, 3)
    assert got() == 5 and names and names[0] != threading.current_thread().name

    def fails() -> None:
        raise KeyError("toolkit")

    failed = meanwhile(fails)
    with pytest.raises(KeyError, match="toolkit"):
        failed()
