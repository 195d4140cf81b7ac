"""`cuenv create --from-lock` and `cuenv check` on other tools' lockfiles: real installs, no solve.

Conda lockfiles are written here in conda-lock's and pixi's formats, pointing at the local test
channel (NVIDIA's real libcudart, repackaged; tests/engines/channel.py), and installed for real.
pylock.toml installs NVIDIA's real wheel (from the test cache, and from PyPI). The public
lockfiles of tests/lockfiles/foreign/fixtures (conda.anaconda.org URLs, unreachable here) are
checked and dry-run: the stack and contract they derive, before any download.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from cuenv.engines import get_engine
from cuenv.lock import foreign
from tests.engines import channel as _channel

HERE = Path(__file__).resolve().parent
FIXTURES = HERE / "foreign" / "fixtures"

CU121 = ("linux-64/cuda-cudart-12.1.105-h0_0.conda", "noarch/cuda-version-12.1-h0_0.tar.bz2",
         "linux-64/python-3.11.9-h0_cuenv.tar.bz2")
WHEEL = "nvidia-cuda-runtime-cu12==12.1.105"


def records(lock_channel: Path, files: tuple[str, ...] = CU121) -> list[dict]:
    """The repodata records of ``files`` (subdir/filename) with their file:// URLs."""
    out = []
    for item in files:
        subdir, filename = item.split("/")
        data = json.loads((lock_channel / subdir / "repodata.json").read_text())
        record = {**data.get("packages", {}), **data.get("packages.conda", {})}[filename]
        out.append({**record, "subdir": subdir, "fn": filename, "url": (lock_channel / subdir / filename).as_uri()})
    return out


def conda_lock_text(lock_channel: Path, files: tuple[str, ...] = CU121, **changes: dict) -> str:
    packages = []
    for r in records(lock_channel, files):
        deps = dict(spec.split(" ", 1) if " " in spec else (spec, "") for spec in r.get("depends", ()))
        entry = {"name": r["name"], "version": r["version"], "manager": "conda", "platform": "linux-64",
                 "dependencies": deps, "url": r["url"], "hash": {"md5": r["md5"], "sha256": r["sha256"]},
                 "category": "main", "optional": False}
        entry.update(changes.get(r["name"], {}))
        packages.append(entry)
    doc = {"version": 1, "metadata": {"content_hash": {"linux-64": "0" * 64},
                                      "channels": [{"url": lock_channel.as_uri(), "used_env_vars": []}],
                                      "platforms": ["linux-64"], "sources": ["environment.yml"]}, "package": packages}
    return yaml.safe_dump(doc, sort_keys=False)


def pixi_lock_text(lock_channel: Path, version: int) -> str:
    recs = records(lock_channel)
    urls = [{"conda": r["url"]} for r in recs]
    # pixi writes the subdir of a package whose URL is not a channel's (a file:// channel here)
    packages = [{"conda": r["url"], "subdir": r["subdir"], "sha256": r["sha256"], "md5": r["md5"],
                 "depends": list(r.get("depends", ())), "constrains": list(r.get("constrains", ()))} for r in recs]
    env = {"channels": [{"url": lock_channel.as_uri() + "/"}]}
    if version == 7:
        return yaml.safe_dump({"version": 7, "platforms": [{"name": "cuda", "subdir": "linux-64",
                                                            "virtual-packages": ["__cuda=12"]}],
                               "environments": {"default": {**env, "packages": {"cuda": urls}}},
                               "packages": packages}, sort_keys=False)
    return yaml.safe_dump({"version": 6, "environments": {"gpu": {**env, "packages": {"linux-64": urls}}},
                           "packages": packages}, sort_keys=False)


def installed(envs: Path, name: str, engine: str) -> set[tuple]:
    return {(p.name, p.version, p.build, p.url) for p in get_engine(engine, os.environ).installed(envs / name)}


# -- conda: conda-lock.yml and pixi.lock, real installs from the local channel ------------------------
def test_conda_lock_installs_exactly_and_round_trips(cli, work: Path, envs: Path, lock_channel: Path) -> None:
    (work / "conda-lock.yml").write_text(conda_lock_text(lock_channel))
    code, out, err = cli("create", "--from-lock", "conda-lock.yml", "-n", "fromlock", "--engine", "rattler")
    assert code == 0, err
    assert "Created 'fromlock'" in out
    want = {(r["name"], r["version"], r["build"], r["url"]) for r in records(lock_channel)}
    assert installed(envs, "fromlock", "rattler") == want
    meta = json.loads((envs / "fromlock" / ".cuenv" / "meta.json").read_text())
    assert (meta["cuda"], meta["engine"], meta["platform"]) == ("12.1", "rattler", "linux-64")
    assert (envs / "fromlock" / "lib" / "libcudart.so.12").exists()

    # a normal cuenv environment: it locks, exports and activates like any other
    code, out, err = cli("lock", "fromlock", "-o", "cuenv.lock")
    assert code == 0, err
    assert yaml.safe_load((work / "cuenv.lock").read_text())["contract"]["cuda"] == "12.1"
    code, out, err = cli("check", "cuenv.lock", "--driver", "470.57.02")  # cuenv's own lockfile checks alike
    assert code == 1 and "cuenv.lock: does not run" in out and "Contract: CUDA 12.1" in out
    code, out, err = cli("shell-env", "bash", "use", "fromlock")
    assert code == 0 and "CUENV_ACTIVE" in out

    # export --format conda-lock reads back to the same packages, and installs the same environment
    code, exported, err = cli("export", "fromlock", "--format", "conda-lock")
    assert code == 0, err
    (work / "exported.conda-lock.yml").write_text(exported)
    back = foreign.parse(exported, kind="conda-lock", file="exported.conda-lock.yml", platform="linux-64", python="3.11")
    assert {(p.name, p.version, p.build, p.url, p.md5, p.sha256) for p in back.packages} == {
        (r["name"], r["version"], r["build"], r["url"], r["md5"], r["sha256"]) for r in records(lock_channel)}
    code, out, err = cli("create", "--from-lock", "exported.conda-lock.yml", "-n", "again", "--engine", "rattler")
    assert code == 0, err
    assert installed(envs, "again", "rattler") == want


def test_conda_lock_export_is_read_by_conda_lock_itself(cli, work: Path, lock_channel: Path) -> None:
    conda_lock = os.environ.get("CUENV_TEST_CONDA_LOCK") or shutil.which("conda-lock")
    if not conda_lock:
        pytest.skip("conda-lock is not installed (pip install conda-lock; or set CUENV_TEST_CONDA_LOCK)")
    (work / "conda-lock.yml").write_text(conda_lock_text(lock_channel))
    assert cli("create", "--from-lock", "conda-lock.yml", "-n", "fromlock", "--engine", "rattler")[0] == 0
    code, exported, err = cli("export", "fromlock", "--format", "conda-lock")
    (work / "exported.conda-lock.yml").write_text(exported)
    # conda-lock's own parser (pydantic models of its schema) and its offline renderer
    check = ("import sys, pathlib; from conda_lock.lockfile import parse_conda_lock_file; "
             "lock = parse_conda_lock_file(pathlib.Path(sys.argv[1])); print(len(lock.package))")
    python = Path(conda_lock).parent / "python"
    done = subprocess.run([str(python), "-c", check, "exported.conda-lock.yml"], cwd=work, capture_output=True,
                          text=True, check=True)
    assert done.stdout.strip() == "3"
    subprocess.run([conda_lock, "render", "--kind", "explicit", "-p", "linux-64", "exported.conda-lock.yml"],
                   cwd=work, capture_output=True, check=True)
    rendered = (work / "conda-linux-64.lock").read_text()
    assert "@EXPLICIT" in rendered and all(r["url"] in rendered for r in records(lock_channel))


@pytest.mark.parametrize(("version", "flags"), [(6, ("--environment", "gpu")), (7, ("--platform", "cuda"))])
def test_pixi_lock_installs_exactly(cli, work: Path, envs: Path, lock_channel: Path, version: int, flags) -> None:
    (work / "pixi.lock").write_text(pixi_lock_text(lock_channel, version))
    code, out, err = cli("create", "--from-lock", "pixi.lock", "-n", f"pixi{version}", "--engine", "rattler", *flags)
    assert code == 0, err
    assert installed(envs, f"pixi{version}", "rattler") == {
        (r["name"], r["version"], r["build"], r["url"]) for r in records(lock_channel)}


def test_pixi_default_environment_like_pixi(cli, work: Path, lock_channel: Path) -> None:
    (work / "pixi.lock").write_text(pixi_lock_text(lock_channel, 6))
    code, out, err = cli("create", "--from-lock", "pixi.lock", "-n", "x", "--engine", "rattler")
    assert code == 2
    assert "pixi.lock (environments): it has no environment 'default' (it has gpu)." in err
    assert "hint: Choose one with --environment gpu." in err


def test_contract_is_checked_before_any_download(cli, work: Path, envs: Path, lock_channel: Path) -> None:
    gone = {r["name"]: {"url": r["url"].replace(lock_channel.as_uri(), (work / "nowhere").as_uri())}
            for r in records(lock_channel)}
    (work / "conda-lock.yml").write_text(conda_lock_text(lock_channel, **gone))
    code, out, err = cli("create", "--from-lock", "conda-lock.yml", "-n", "old", "--engine", "rattler",
                         "--target-driver", "470.57.02")
    assert code == 1
    assert "will not run on the target machine" in err and "CUDA 12.1" in err
    assert "download" not in err and not (envs / "old").exists()


def test_a_wrong_hash_installs_nothing(cli, work: Path, envs: Path, lock_channel: Path) -> None:
    (work / "conda-lock.yml").write_text(conda_lock_text(lock_channel, **{"cuda-cudart": {"hash": {"sha256": "0" * 64}}}))
    code, out, err = cli("create", "--from-lock", "conda-lock.yml", "-n", "bad", "--engine", "rattler")
    assert code != 0 and "Hash mismatch" in err
    assert not (envs / "bad").exists()


# -- PyPI: pylock.toml with NVIDIA's real wheel ----------------------------------------------------------
def _pylock(wheel_entry: str) -> str:
    return ('lock-version = "1.0"\ncreated-by = "hand"\nrequires-python = ">=3.8"\n\n[[packages]]\n'
            'name = "nvidia-cuda-runtime-cu12"\nversion = "12.1.105"\nindex = "https://pypi.org/simple"\n'
            f"wheels = [{wheel_entry}]\n")


def test_pylock_installs_a_local_wheel(cli, work: Path, envs: Path) -> None:
    wheel = _channel.ensure_wheels(_channel.DEFAULT_CACHE, wanted=(WHEEL,))[WHEEL]
    shutil.copy(wheel, work / wheel.name)
    (work / "pylock.toml").write_text(_pylock(f'{{ path = "{wheel.name}", hashes = {{ sha256 = "{_channel.WHEELS[WHEEL]}" }} }}'))
    code, out, err = cli("create", "--from-lock", "pylock.toml", "-n", "wheels")
    assert code == 0, err
    meta = json.loads((envs / "wheels" / ".cuenv" / "meta.json").read_text())
    assert (meta["engine"], meta["cuda"]) == ("venv", "12.1")
    assert list((envs / "wheels").glob("lib/python3*/site-packages/nvidia/cuda_runtime/lib/libcudart.so.12"))
    assert cli("lock", "wheels", "-o", "cuenv.lock")[0] == 0


@pytest.mark.network
def test_pylock_installs_from_pypi(cli, work: Path, envs: Path) -> None:
    url = ("https://files.pythonhosted.org/packages/eb/d5/c68b1d2cdfcc59e72e8a5949a37ddb22ae6cade80cd4a57a84d4c8b55472/"
           "nvidia_cuda_runtime_cu12-12.1.105-py3-none-manylinux1_x86_64.whl")
    (work / "pylock.toml").write_text(_pylock(f'{{ url = "{url}", hashes = {{ sha256 = "{_channel.WHEELS[WHEEL]}" }} }}'))
    code, out, err = cli("create", "wheels", "--from-lock", "pylock.toml")  # NAME as the positional argument
    assert code == 0, err
    assert get_engine("venv", os.environ).installed(envs / "wheels")[0].url == url


# -- the public lockfiles: check and dry-run ------------------------------------------------------------
def test_check_a_public_conda_lock(cli) -> None:
    path = str(FIXTURES / "bertchen.conda-lock.yml")
    code, out, err = cli("check", path, "--driver", "418.87.01", "--gpu", "Tesla V100-SXM2-16GB")
    assert code == 1
    assert "does not run" in out and "error: driver-too-old" in out
    code, out, err = cli("check", path, "--driver", "535.104.05", "--gpu", "NVIDIA A100-SXM4-80GB")
    assert code == 0, out
    assert out.splitlines()[2:7] == [
        "Contract: CUDA 11.8, cuDNN 8.7; linux: driver >= 520.61.05 (450.80.02 with minor-version compatibility); "
        "GPUs sm unknown.",
        "  CUDA 11.8 from cuda-cudart 11.8.89",
        "  cuDNN 8.7 from pytorch 2.1.0 build py3.10_cuda11.8_cudnn8.7.0_0",
        "  torch 2.1.0 (cu118) from pytorch 2.1.0 build py3.10_cuda11.8_cudnn8.7.0_0",
        "Closest recipe: torch-cu118@2.1.2 (`cuenv create torch-cu118@2.1.2`)",
    ]
    assert "warning: cuda-version 12.5 says CUDA 12.5; cuenv goes by CUDA 11.8 from cuda-cudart 11.8.89" in out
    assert "an install would stop here" not in out  # its 7 PyPI wheels are the conda prefix's pip layer
    code, out, err = cli("check", path, "--platform", "win-64", "--driver", "418.96", "--json")  # the lock's OS
    data = json.loads(out)
    assert (code, data["cuda"], data["platform"]) == (1, "11.8", "win-64")


def test_check_a_pixi_environment_and_platform(cli) -> None:
    path = str(FIXTURES / "multi-machine-v7.pixi.lock")
    code, out, err = cli("check", path, "--platform", "p2", "--driver", "535.104.05", "--json")
    data = json.loads(out)
    assert data["ok"] is True and data["cuda"] is None and data["platform"] == "linux-64"
    code, out, err = cli("check", path, "--environment", "gpu")
    assert code == 2 and "it has no environment 'gpu' (it has default)" in err


def test_dry_run_of_a_public_pixi_lock(cli) -> None:
    """A plan that would leave out a locked package is never a success (issue 25 §2): the dry run stops at
    the sdist an install would stop at, naming it; check still says what the lock needs, with that warning."""
    path = str(FIXTURES / "llama-index-v5.pixi.lock")
    code, out, err = cli("create", "--from-lock", path, "-n", "llama", "--dry-run", "--target-driver", "535.104.05")
    assert code == 2 and "llama-cpp-python is a source distribution" in err and "Would create" not in out
    code, out, err = cli("check", path, "--driver", "535.104.05", "--json")
    data = json.loads(out)
    assert data["contract"]["cuda"] == "12.1" and data["contract"]["min_driver"]["linux"]["full"] == "530.30.02"
    assert any("llama-cpp-python is a source distribution" in w for w in data["warnings"])


def test_check_a_pylock_for_another_python(cli) -> None:
    path = str(FIXTURES / "maia3.pylock.toml")
    code, out, err = cli("check", path, "--python", "3.11", "--driver", "580.65.06", "--json")
    data = json.loads(out)
    assert (data["cuda"], data["framework"]) == ("13.0", "torch")
    code, out, err = cli("check", path, "--python", "3.9")
    assert code == 2 and "it needs Python >=3.10, not 3.9" in err


def test_a_uv_lock_for_another_python_is_read_for_the_python_it_allows(cli) -> None:
    """vocalizr's uv.lock says requires-python ==3.12.*: without --python, check reads it for 3.12 (as uv
    would pick a 3.12 interpreter) and says so, instead of refusing this Python."""

    from cuenv.lock import foreign

    path = str(FIXTURES / "vocalizr.uv.lock")
    here = f"{sys.version_info.major}.{sys.version_info.minor}"
    code, out, err = cli("check", path, "--driver", "580.65.06", "--gpu", "A100")
    assert code == 0 and "Contract: CUDA 13.0" in out, err
    if here != "3.12":
        assert ("note: read for Python 3.12: its requires-python (==3.12.*) does not allow "
                f"{here} (this Python); --python picks another") in out
    code, out, err = cli("check", path, "--python", "3.11")
    assert code == 2 and "it needs Python ==3.12.*, not 3.11" in err  # a Python given is a Python kept
    text = 'requires-python = ">=3.10"\n'
    assert foreign.pythons(text, "uv-lock", "3.9")[:2] == [
        ("3.10", "read for Python 3.10: its requires-python (>=3.10) does not allow 3.9 (this Python); "
                 "--python picks another"),
        ("3.11", "read for Python 3.11: its requires-python (>=3.10) does not allow 3.9 (this Python); "
                 "--python picks another")]
    assert [p for p, _ in foreign.pythons(text, "uv-lock", "3.12")][:4] == ["3.12", "3.13", "3.11", "3.14"]
    assert foreign.pythons(text, "conda-lock", "3.9") == [("3.9", None)]
    assert foreign.pythons("requires-python = [", "pylock", "3.9") == [("3.9", None)]  # its parser refuses it


def _torch_only_for(tags: tuple[str, ...]) -> str:
    """A uv.lock whose torch has wheels for the CPython ``tags`` only (issue 25 §2: cp310 and cp312)."""
    wheels = ", ".join(f'{{ url = "https://download.pytorch.org/whl/cu121/torch-2.3.1%2Bcu121-{t}-{t}-linux_x86_64.whl",'
                       f' hash = "sha256:{"a" * 64}" }}' for t in tags)
    return ('version = 1\nrevision = 3\nrequires-python = ">=3.10"\n\n'
            '[[package]]\nname = "app"\nversion = "0.1.0"\nsource = { virtual = "." }\n'
            'dependencies = [{ name = "torch" }]\n\n'
            '[[package]]\nname = "torch"\nversion = "2.3.1+cu121"\n'
            'source = { registry = "https://download.pytorch.org/whl/cu121" }\n'
            f"wheels = [{wheels}]\n")


def test_a_uv_lock_is_read_for_a_python_it_has_wheels_for(cli, work: Path) -> None:
    """torch with wheels for 3.10 and 3.12 only: never a plan without torch. Without --python, the nearest
    Python the lock installs; with --python 3.11, an error that names torch and why."""

    here = f"{sys.version_info.major}.{sys.version_info.minor}"
    (work / "uv.lock").write_text(_torch_only_for(("cp310", "cp312")))
    code, out, err = cli("check", "uv.lock", "--json")
    assert code in (0, 1), err
    data = json.loads(out)
    assert data["framework"] == "torch" and data["cuda"] == "12.1"
    if here not in ("3.10", "3.12"):
        assert any(f"read for Python 3.12, which the lock installs: for {here}, torch has no wheel for Python {here}"
                   in n for n in data["notes"]), data["notes"]
    code, out, err = cli("create", "--from-lock", "uv.lock", "-n", "t", "--dry-run", "--python", "3.11")
    assert code == 2 and "torch has no wheel for Python 3.11 on linux-64 (and no sdist)" in err
    assert "Would create" not in out
    (work / "uv.lock").write_text(_torch_only_for(("cp39",)))
    code, out, err = cli("check", "uv.lock")
    assert code == 2 and "torch has no wheel for Python" in err and "hint: Choose another --python" in err


def test_a_pylock_for_another_platform_names_the_target_its_wheels_are_for(cli, work: Path) -> None:
    """A pylock.toml written on Windows (held-out-4: only cp312 win_amd64 wheels): the refusal says which
    target its wheels are for, and the command in its hint reads the lock for that target, as written."""
    import shlex

    wheels = ", ".join(f'{{ url = "https://files.pythonhosted.org/packages/aa/numpy-2.1.0-cp312-cp312-{tag}.whl", '
                       f'hashes = {{ sha256 = "{"a" * 64}" }} }}' for tag in ("win_amd64", "win32"))
    (work / "pylock.toml").write_text('lock-version = "1.0"\ncreated-by = "pip"\n\n[[packages]]\nname = "numpy"\n'
                                      f'version = "2.1.0"\nwheels = [{wheels}]\n')
    code, out, err = cli("check", "pylock.toml", "--python", "3.11")
    assert code == 2 and "numpy has no wheel for Python 3.11 on linux-64 (and no sdist)" in err
    hint = err.split("hint: ", 1)[1]
    assert hint.startswith("Its wheels are for Python 3.12 on win-64: `cuenv check pylock.toml --platform win-64 --python 3.12`")
    command = shlex.split(hint.split("`")[1])
    code, out, err = cli(*command[1:])
    assert code == 0 and "pylock.toml: runs" in out and "windows" in out, err


def test_sync_and_drift_check_take_a_foreign_lockfile(cli, work: Path, envs: Path, lock_channel: Path) -> None:
    (work / "conda-lock.yml").write_text(conda_lock_text(lock_channel))
    code, out, err = cli("sync", "conda-lock.yml", "-n", "synced", "--engine", "rattler")
    assert code == 0, err
    assert "Created 'synced' from conda-lock.yml (3 packages, no solve)." in out
    assert cli("sync", "conda-lock.yml", "-n", "synced")[1] == "'synced' already matches conda-lock.yml.\n"
    code, out, err = cli("lock", "--check", "synced", "conda-lock.yml")
    assert code == 0 and "'synced' matches conda-lock.yml (3 packages)." in out
    (work / "other.conda-lock.yml").write_text(conda_lock_text(lock_channel, CU121[:2]))
    code, out, err = cli("lock", "--check", "synced", "other.conda-lock.yml")
    assert code == 1 and "+ python 3.11.9-h0_cuenv (not in the lock)" in out


@pytest.mark.network
def test_uv_lock_installs_the_project_dependencies(cli, work: Path, envs: Path) -> None:
    url = ("https://files.pythonhosted.org/packages/eb/d5/c68b1d2cdfcc59e72e8a5949a37ddb22ae6cade80cd4a57a84d4c8b55472/"
           "nvidia_cuda_runtime_cu12-12.1.105-py3-none-manylinux1_x86_64.whl")
    (work / "uv.lock").write_text(
        'version = 1\nrevision = 3\nrequires-python = ">=3.8"\n\n'
        '[[package]]\nname = "app"\nversion = "0.1.0"\nsource = { virtual = "." }\n'
        'dependencies = [{ name = "nvidia-cuda-runtime-cu12", marker = "sys_platform == \'linux\'" }]\n\n'
        '[[package]]\nname = "nvidia-cuda-runtime-cu12"\nversion = "12.1.105"\n'
        'source = { registry = "https://pypi.org/simple" }\n'
        f'wheels = [{{ url = "{url}", hash = "sha256:{_channel.WHEELS[WHEEL]}", size = 823596 }}]\n')
    code, out, err = cli("create", "app", "--from-lock", "uv.lock")
    assert code == 0, err
    assert "note: the project itself (app) is not installed" in err
    assert [(p.name, p.url) for p in get_engine("venv", os.environ).installed(envs / "app")] == [
        ("nvidia-cuda-runtime-cu12", url)]


def test_what_issue_15_found_refused_is_read(cli) -> None:
    # Before: "Unknown lockfile schema version 6 ... Upgrade cuenv" and "Missing key recipe ... cuenv lock".
    name = "detectron2-v6.pixi.lock"
    code, out, err = cli("create", "--from-lock", str(FIXTURES / name), "-n", "x", "--engine", "rattler")
    assert code == 2 and len(err.splitlines()) == 2 and "schema version" not in err
    assert f"{name} (environments.default.packages.linux-64): antlr4-python3-runtime is a source distribution" in err
    # conda packages with PyPI wheels on top: planned as one conda environment with a pip layer
    code, out, err = cli("create", "--from-lock", str(FIXTURES / "bertchen.conda-lock.yml"), "-n", "x", "--engine",
                         "rattler", "--dry-run", "--target-driver", "535.104.05", "--json")
    assert code == 0 and "Missing key" not in err, err
    data = json.loads(out)
    assert data["engine"] == "rattler" and sum(p["kind"] == "pypi" for p in data["packages"]) == 7


def test_a_conda_only_pixi_lock_dry_runs_and_is_checked_first(cli) -> None:
    path = str(FIXTURES / "foundationpose-v6.pixi.lock")  # conda-forge's CUDA 12.9 toolkit: installable, no PyPI layer
    code, out, err = cli("create", "fp", "--from-lock", path, "--dry-run", "--engine", "rattler", "--json")
    data = json.loads(out)
    assert code == 0 and data["engine"] == "rattler" and len(data["packages"]) == 285 and data["warnings"] == []
    assert data["contract"]["cuda"] == "12.9" and data["contract"]["nvcc"] is True
    code, out, err = cli("create", "fp", "--from-lock", path, "--engine", "rattler", "--target-driver", "470.57.02")
    assert code == 1 and "will not run on the target machine" in err  # before any of conda-forge is reached


def test_a_pytorch_index_wheel_is_read_with_its_local_version(cli) -> None:
    code, out, err = cli("check", str(FIXTURES / "gausstwin-v6.pixi.lock"), "--driver", "550.54.14", "--json")
    data = json.loads(out)
    assert (data["ok"], data["cuda"], data["framework_version"], data["closest_recipe"]) == (True, "12.4", "2.6.0", "torch-cu124")
    assert "torch 2.6.0 (cu124) from the wheel torch 2.6.0+cu124" in data["evidence"]
    assert data["contract"]["arch"]["sass"]  # torch 2.6 cu124's arch list, from the knowledge base


def test_a_lockfile_named_as_the_recipe_is_refused_with_the_command_that_reads_it(cli, work: Path) -> None:
    """`cuenv create pixi.lock` names a file here, not a recipe: the hint is the command, and it runs."""
    shutil.copy(FIXTURES / "foundationpose-v6.pixi.lock", work / "pixi.lock")
    code, _, err = cli("create", "pixi.lock", "-n", "fp")
    assert code == 2 and err.splitlines()[0] == "error: pixi.lock is a file here, not a recipe.", err
    [hinted] = err.split("`")[1::2]
    assert hinted == "cuenv create --from-lock pixi.lock -n fp"
    code, out, err = cli(*hinted.split()[1:], "--dry-run", "--json")  # as written, only not downloading
    assert code == 0 and json.loads(out)["contract"]["cuda"] == "12.9", err
