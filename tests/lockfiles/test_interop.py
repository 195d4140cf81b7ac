"""Exports (explicit, environment-yml, requirements, conda-lock) and the reverse: create -f / -r."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest
import yaml

from cuenv.engines import get_engine


def _installed(envs: Path, name: str, engine: str) -> set[tuple]:
    return {(p.name, p.version, p.build, p.url) for p in get_engine(engine, os.environ).installed(envs / name)}


def test_conda_exports_and_back(cli, recipes, work, envs, lock_channel) -> None:
    assert cli("create", "local-hello", "--engine", "rattler")[0] == 0
    code, out, err = cli("export", "local-hello", "--format", "explicit")
    lines = out.splitlines()
    assert code == 0 and "@EXPLICIT" in lines
    urls = [ln for ln in lines if "://" in ln]
    assert len(urls) == 4 and all(len(u.rsplit("#", 1)[1]) == 64 for u in urls)
    assert {u.split("#")[0] for u in urls} == {p[3] for p in _installed(envs, "local-hello", "rattler")}

    code, out, err = cli("export", "local-hello", "--format", "environment-yml")
    env_yml = yaml.safe_load(out)
    assert env_yml["channels"] == [lock_channel.as_uri()]
    assert "cuda-cudart=12.1.105=h0_0" in env_yml["dependencies"]
    (work / "environment.yml").write_text(out)
    # The reverse: the exported environment.yml builds the same environment (CUDA read from cuda-version).
    code, out, err = cli("create", "-f", "environment.yml", "-n", "from-yml", "--engine", "rattler")
    assert code == 0, err
    assert _installed(envs, "from-yml", "rattler") == _installed(envs, "local-hello", "rattler")

    code, out, err = cli("export", "local-hello", "--format", "conda-lock")
    doc = yaml.safe_load(out)
    assert code == 0 and doc["version"] == 1 and doc["metadata"]["platforms"] == ["linux-64"]
    assert doc["metadata"]["channels"] == [{"url": lock_channel.as_uri(), "used_env_vars": []}]
    assert all(set(p) == {"name", "version", "manager", "platform", "dependencies", "url", "hash", "build", "category",
                          "optional"} and len(p["hash"]["md5"]) == 32 for p in doc["package"])
    conda_lock = os.environ.get("CUENV_TEST_CONDA_LOCK") or shutil.which("conda-lock")
    if conda_lock:  # the real tool reads it (checked with conda-lock 4.0.3)
        (work / "conda-lock.yml").write_text(out)
        subprocess.run([conda_lock, "render", "--kind", "explicit", "-p", "linux-64", "conda-lock.yml"], check=True, cwd=work,
                       capture_output=True)
        assert "@EXPLICIT" in (work / "conda-linux-64.lock").read_text()

    code, out, err = cli("export", "local-hello", "--format", "requirements")
    assert code == 2 and "error: Format 'requirements' holds pypi packages only" in err


def test_explicit_export_reads_back_as_a_lockfile(cli, recipes, work, envs, lock_channel) -> None:
    """cuenv reads its own @EXPLICIT list back (as conda create --file does): checks its stack against a
    described machine before any download, and installs exactly those packages, each hash verified."""
    assert cli("create", "local-hello", "--engine", "rattler")[0] == 0
    code, out, err = cli("export", "local-hello", "--format", "explicit")
    assert code == 0, err
    (work / "explicit.txt").write_text(out)
    code, checked, err = cli("check", "explicit.txt", "--driver", "550.54.14", "--gpu", "A100")
    assert code == 0 and checked.startswith("explicit.txt: runs") and "CUDA 12.1 from cuda-cudart 12.1.105" in checked, err
    code, checked, err = cli("check", "explicit.txt", "--driver", "450.80.02", "--gpu", "A100")
    assert code == 1 and "does not run" in checked
    code, _, err = cli("create", "--from-lock", "explicit.txt", "-n", "from-explicit", "--engine", "rattler")
    assert code == 0, err
    assert _installed(envs, "from-explicit", "rattler") == _installed(envs, "local-hello", "rattler")
    code, _, err = cli("create", "-r", "explicit.txt", "-n", "other", "--cuda", "12.1")
    assert code == 2 and "explicit.txt is a lockfile" in err and "`cuenv create --from-lock explicit.txt`" in err
    code, _, err = cli("create", "--from-lock", "explicit.txt", "-n", "other", "--platform", "linux-aarch64")
    assert code == 2 and "it lists packages for linux-64, not linux-aarch64" in err and "--platform linux-64" in err


@pytest.mark.network
def test_venv_exports_and_back(cli, work, envs) -> None:
    assert cli("create", "cuda-12.1", "--engine", "venv")[0] == 0
    code, out, err = cli("export", "cuda-12.1", "--format", "requirements")
    reqs = [ln for ln in out.splitlines() if not ln.startswith("#")]
    assert code == 0 and len(reqs) == 2
    assert all(" @ https://files.pythonhosted.org/" in r and " --hash=sha256:" in r for r in reqs)
    (work / "requirements.txt").write_text(out)
    code, out, err = cli("create", "-r", "requirements.txt", "--cuda", "12.1", "-n", "from-reqs", "--engine", "venv")
    assert code == 0, err
    assert _installed(envs, "from-reqs", "venv") == _installed(envs, "cuda-12.1", "venv")
    meta = yaml.safe_load((envs / "from-reqs" / ".cuenv" / "meta.json").read_text())
    assert meta["cuda"] == "12.1" and meta["recipe"]["name"] == "from-reqs"

    code, out, err = cli("export", "cuda-12.1", "--format", "environment-yml")
    doc = yaml.safe_load(out)
    assert doc["dependencies"][-1] == {"pip": ["nvidia-cuda-nvcc-cu12==12.1.105", "nvidia-cuda-runtime-cu12==12.1.105"]}
    # The reverse: a pip-only environment.yml is a venv build, and gives the same environment back.
    (work / "environment.yml").write_text(out)
    code, out, err = cli("create", "-f", "environment.yml", "-n", "from-venv-yml", "--json")
    assert code == 0, err
    assert json.loads(out)["engine"] == "venv"
    assert _installed(envs, "from-venv-yml", "venv") == _installed(envs, "cuda-12.1", "venv")
    for fmt in ("explicit", "conda-lock"):
        code, out, err = cli("export", "cuda-12.1", "--format", fmt)
        assert code == 2 and "holds conda packages only" in err


@pytest.mark.network
def test_create_from_plain_requirements(cli, work, envs) -> None:
    (work / "requirements.txt").write_text(
        "# CUDA 12.1 runtime only\n--index-url https://pypi.org/simple\nnvidia-cuda-runtime-cu12==12.1.105  # libcudart\n")
    code, out, err = cli("create", "-r", "requirements.txt", "--cuda", "12.1", "-n", "rt", "--engine", "venv")
    assert code == 0, err
    assert {p[0] for p in _installed(envs, "rt", "venv")} == {"nvidia-cuda-runtime-cu12"}
    assert cli("lock", "rt")[0] == 0  # an environment from -r locks like any other


@pytest.mark.parametrize("name, content, argv, message", [
    ("requirements.txt", "numpy\n", ("-n", "x"),
     "error: requirements.txt needs no CUDA: `uv pip compile requirements.txt "),  # what uv resolves it to says so
    ("requirements.txt", "torch\n", ("-n", "x"),
     "error: requirements.txt:1: torch: a torch whose CUDA depends on the version the resolver picks"),
    ("requirements.txt", "numpy\n-e .\n", ("-n", "x", "--cuda", "12.1"),
     "error: requirements.txt:2: -e .: installs a project from a folder on this machine in editable mode"),
    ("requirements.txt", "numpy==\n", ("-n", "x", "--cuda", "12.1"), "error: requirements.txt:1: 'numpy==': is not a requirement"),
    ("requirements.txt", "numpy\n", ("-n", "x", "--cuda", "twelve"), "error: --cuda 'twelve' is not a CUDA version."),
    ("requirements.txt", "torch==2.1.0+cu118\n", ("-n", "x", "--cuda", "12.1"),
     "error: requirements.txt:1: torch==2.1.0+cu118: needs CUDA 11.8 (+cu118 build), but --cuda 12.1 was given"),
    ("environment.yml", "name: x\nchannels: [conda-forge]\ndependencies: [numpy]\n", (),
     "error: environment.yml needs no CUDA: no pin asks for CUDA."),
    ("environment.yml", "name: x\nchannels: [nodefaults]\ndependencies: [numpy]\n", ("--cuda", "12.1"),
     "error: environment.yml:2: channels: leaves no channel once `nodefaults` removes `defaults`."),
    ("environment.yml", "name: x\nchannels: [conda-forge]\ndependencies:\n  - cuda-version=12.1\n  - pip:\n    - ./src\n", (),
     "error: environment.yml:6: ./src: is a path on this machine"),
    ("environment.yml", "name: x\nchannels: [conda-forge\n", (), "error: environment.yml:3: YAML: is broken"),
    ("environment.yml", "name: 'bad name'\nchannels: [c]\ndependencies: [cuda-version=12.1]\n", (),
     "error: environment.yml does not make a valid recipe: name: \"bad name\" is not a valid recipe name"),
])
def test_bad_files_for_create(cli, work, envs, name, content, argv, message) -> None:
    (work / name).write_text(content)
    flag = "-r" if name.endswith(".txt") else "-f"
    code, out, err = cli("create", flag, name, *argv)
    assert code == 2 and err.splitlines()[0].startswith(message), err
    assert len(err.splitlines()) <= 2 and not (envs / "x").exists()


def test_one_source_only(cli, work) -> None:
    code, out, err = cli("create", "cuda-12.1", "-n", "x", "--from-lock", "x.lock")
    assert code == 2 and err.startswith("error: Give one of a recipe, --from-lock and a lockfile, -f environment.yml or -r requirements.txt "
                                        "(got RECIPE, --from-lock).")
    code, out, err = cli("create", "x", "--from-lock", "x.lock")  # without -n, NAME --from-lock FILE names the environment
    assert code == 2 and err.startswith("error: Lockfile x.lock does not exist.")
    code, out, err = cli("create")
    assert code == 2 and err.startswith("error: Give one of a recipe")
    code, out, err = cli("create", "cuda-12.1", "--cuda", "12.1")
    assert code == 2 and err.startswith("error: --cuda goes with -f or -r.")
    code, out, err = cli("create", "cuda-12.1", "--skip-unsupported")
    assert code == 2 and err.startswith("error: --skip-unsupported goes with -f or -r.")
