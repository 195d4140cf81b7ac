"""`cuenv check` on an environment, a wheel, a shared object or a folder: the kernels in the files (issue 20)."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest

from tests.binaries import binkit
from tests.shells import envbuild


@pytest.fixture(scope="module")
def wrong_gpu_ext(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A CUDA extension wheel built here by nvcc for sm_75 and sm_86 with PTX 9.0: wrong for an A100 (8.0)."""
    nvcc = binkit.nvcc()
    if nvcc is None:
        pytest.skip("no nvcc on this machine")
    lib = binkit.build(nvcc, binkit.BUILDS[0]).read_bytes()
    return binkit.make_wheel(tmp_path_factory.mktemp("wheels"), "myext", "0.1", {"myext/_C.so": lib, "myext/__init__.py": b""})


@pytest.fixture
def env_with_ext(wrong_gpu_ext: Path, nvjpeg_wheel: Path) -> str:
    """A real environment (a uv venv registered as `cuenv create` does) with nvjpeg and the extension."""
    envs = Path(os.environ["CUENV_HOME"]) / "envs"
    prefix = envs / "cuda-12.1"
    site = envbuild.make_venv(prefix, [nvjpeg_wheel, wrong_gpu_ext], binkit.CACHE / "uv")
    envbuild.register(envs, "cuda-12.1", envbuild.venv_layout(prefix, site))
    return "cuda-12.1"


def test_environment_with_an_extension_for_the_wrong_gpu_names_it(cli, env_with_ext: str) -> None:
    code, out, err = cli("check", env_with_ext, "--driver", "580.65.06", "--gpu", "A100")
    assert code == 1, out + err
    assert "cuda-12.1: does not run" in out
    assert "kernels: 2 of " in out
    row = next(line.split() for line in out.splitlines() if line.strip().startswith("myext/_C.so"))
    assert row == ["myext/_C.so", "myext==0.1", "7.5", "8.6", "9.0", "none"]
    assert "error: kernels-missing" in out
    assert ("lib/python3.11/site-packages/myext/_C.so (myext==0.1) has no kernels for the" in out
            or "(myext==0.1) has no kernels for the" in out)
    assert "nvjpeg" not in out.split("error: kernels-missing", 1)[1]  # libnvjpeg has sm_80: it runs
    code, out, _ = cli("check", env_with_ext, "--cc", "8.0")  # the words: `cuenv check NAME --cc X.Y`
    assert code == 1 and "error: kernels-missing" in out and "(myext==0.1) has no kernels for the GPU 0 (8.0)" in out
    code, out, _ = cli("check", env_with_ext, "--driver", "580.65.06", "--cc", "8.6")
    assert code == 0 and "cuda-12.1: runs" in out


def test_an_environment_without_gpu_code_is_judged_by_its_stack(cli, tmp_path: Path) -> None:
    """Unlike a bare folder's, an environment's verdict rests on its recipe's stack: no kernels is information."""
    envs = Path(os.environ["CUENV_HOME"]) / "envs"
    prefix = envs / "cuda-12.1"
    plain = binkit.make_wheel(tmp_path, "plain", "0.1", {"plain/__init__.py": b""})
    site = envbuild.make_venv(prefix, [plain], binkit.CACHE / "uv")
    envbuild.register(envs, "cuda-12.1", envbuild.venv_layout(prefix, site))
    code, out, _ = cli("check", "cuda-12.1", "--driver", "580.65.06", "--cc", "8.6")
    assert code == 0 and out.splitlines()[0] == "cuda-12.1: runs" and "info: kernels-none-found" in out, out
    code, out, _ = cli("--json", "check", "cuda-12.1", "--driver", "580.65.06", "--cc", "8.6")
    assert code == 0 and json.loads(out)["verdict"] == "runs"


def test_environment_json_carries_the_libraries_and_a_second_run_is_cached(cli, env_with_ext: str) -> None:
    cli("check", env_with_ext, "--cc", "8.9", "--json")
    code, out, _ = cli("check", env_with_ext, "--cc", "8.9", "--json")
    data = json.loads(out)
    assert code == 0 and data["ok"]
    kernels = data["kernels"]
    assert kernels["cached"] == kernels["scanned"] >= 2
    libs = {Path(lib["path"]).name: lib for lib in kernels["libraries"]}
    assert libs["_C.so"]["owner"] == "myext==0.1" and libs["_C.so"]["runs"] == [
        {"cc": "8.9", "status": "native", "ptx_version": None, "jit_modules": 0, "missing_modules": 0}]
    assert libs["libnvjpeg.so.12"]["owner"] == "nvidia-nvjpeg-cu12==12.3.2.81"


def test_a_wheel_before_installing_it(cli, nvjpeg_wheel: Path, tmp_path: Path) -> None:
    wheel = shutil.copy(nvjpeg_wheel, tmp_path)
    code, out, _ = cli("check", str(wheel), "--cc", "7.5", "--cc", "12.0", "--driver", "550.54.14")
    assert code == 1
    lines = out.splitlines()
    assert lines[0] == f"{wheel}: does not run"
    assert lines[3].split() == ["kernels:", "1", "of", "1", "shared", "objects", "carry", "GPU", "code", "(1", "read)"]
    assert lines[5].split() == ["nvidia/nvjpeg/lib/libnvjpeg.so.12", "nvidia-nvjpeg-cu12==12.3.2.81",
                                "5.0", "5.2", "6.0", "6.1", "7.0", "7.5", "8.0", "8.6", "8.9", "9.0", "9.0", "native", "PTX", "JIT"]
    assert "error: kernels-ptx-too-new" in out and "ISA 8.5, from CUDA 12.5" in out
    assert "Install an NVIDIA driver >= 555.42.02" in out
    code, out, _ = cli("check", str(wheel), "--cc", "12.0", "--driver", "570.86.10")
    assert code == 0 and "warning: kernels-ptx-jit" in out


def test_a_shared_object_and_a_folder_without_a_gpu_are_listed(cli, built: dict[str, Path], tmp_path: Path) -> None:
    lib = shutil.copy(built["ptx-only"], tmp_path / "libk.so")
    code, out, _ = cli("check", str(lib))
    assert code == 0, out
    assert out.splitlines()[0] == f"{lib}: unknown: kernels listed, not checked (no GPU to hold them against)"
    assert "info: kernels-not-checked" in out
    (tmp_path / "empty").mkdir()
    import _ctypes  # a shared object of the interpreter's, without GPU code

    shutil.copy(_ctypes.__file__, tmp_path / "empty" / "libplain.so")
    code, out, _ = cli("check", str(tmp_path / "empty"), "--cc", "8.0")
    assert code == 0 and out.splitlines()[0] == f"{tmp_path / 'empty'}: unknown: no CUDA kernels in it to judge by"
    assert "kernels: 0 of 1 shared objects carry GPU code (1 read)" in out
    assert "info: kernels-none-found" in out
    code, out, _ = cli("--json", "check", str(tmp_path / "empty"), "--cc", "8.0")
    assert code == 0 and json.loads(out)["verdict"] == "unknown"  # no GPU code found is no evidence that it runs


def test_bad_paths_are_one_clear_line(cli, tmp_path: Path) -> None:
    code, _, err = cli("check", str(tmp_path / "nope.whl"))
    assert code == 2
    assert err.splitlines()[0] == f"error: No file or folder '{tmp_path / 'nope.whl'}'."
    text = tmp_path / "notes"  # no suffix: not read as a requirements file
    text.write_text("not a library\n")
    code, out, err = cli("check", str(text))
    assert (code, out) == (2, "") and err.splitlines()[0] == (
        f"error: {text} is not a wheel, a shared object, a fat binary, a lockfile or a project file cuenv reads.")
    assert "Lockfiles: cuenv.lock, conda-lock.yml, pixi.lock" in err
    fifo = tmp_path / "pipe.so"  # named like a library, but a FIFO: refused, never read (a read would hang)
    os.mkfifo(fifo)
    code, out, err = cli("check", str(fifo))
    assert (code, out) == (2, "") and err.splitlines()[0] == f"error: {fifo} is neither a file nor a folder."
    binary_lock = tmp_path / "pixi.lock"  # a binary file named like a lockfile: refused without reading it whole
    binary_lock.write_bytes(b"\0\1\2" * 1000)
    code, out, err = cli("check", str(binary_lock))
    assert (code, out) == (2, "") and "is not a wheel, a shared object, a fat binary, a lockfile" in err
    broken = tmp_path / "broken-1.0-py3-none-any.whl"
    broken.write_bytes(b"not a zip")
    code, out, err = cli("check", str(broken), "--cc", "8.0")
    assert (code, out) == (2, "")
    assert err.splitlines() == ["error: broken-1.0-py3-none-any.whl is not a readable wheel (zip): File is not a zip file.",
                                "hint: Download or build it again, or give a shared object or a folder."]
    cut = tmp_path / "libcut.so"
    cut.write_bytes(b"\x7fELF\x02\x01\x01" + b"\0" * 9 + b"\0" * 30)
    code, out, err = cli("check", str(cut), "--cc", "8.0")
    assert code == 0 and "warning: kernels-unreadable" in out and "libcut.so could not be read completely" in out


def test_the_hinted_command_exists_and_works(cli) -> None:
    code, out, _ = cli("suggest", "--cc", "8.0", "--driver", "550.54.14")
    assert code == 0 and out


def test_doctor_names_the_extension_too(cli, env_with_ext: str) -> None:
    environ = {**os.environ, "CUENV_DRIVER": "580.65.06", "CUENV_GPUS": "A100"}
    code, out, _ = cli("doctor", env_with_ext, "--no-framework", "--json", environ=environ)
    data = json.loads(out)
    [check] = [c for c in data["checks"] if c["name"] == "kernels"]
    assert check["status"] == "error" and code == 1
    assert [f["code"] for f in check["findings"]] == ["kernels-missing"]
    assert "(myext==0.1) has no kernels for the A100 (8.0)" in check["findings"][0]["message"]
    assert any(d.startswith("lib/python3") and "myext==0.1" in d and "8.0: none" in d for d in check["detail"])


@pytest.mark.parametrize("name", ["uv.lock", "environment.yml", "pixi.lock", "requirements.txt", "pyproject.toml"])
def test_a_folder_named_as_a_file_cuenv_reads_is_refused(cli, tmp_path: Path, monkeypatch, name: str) -> None:
    """A folder (or a link to one) named uv.lock is no lockfile: read for its kernels it said "no CUDA
    kernels", exit 0, of what the user took for a lockfile."""
    (tmp_path / "elsewhere").mkdir()
    (tmp_path / name).symlink_to(tmp_path / "elsewhere", target_is_directory=True)
    monkeypatch.chdir(tmp_path)
    for given in (name, f"./{name}", str(tmp_path / name)):
        code, out, err = cli("check", given)
        assert (code, out) == (2, ""), err
        assert err.splitlines()[0] == f"error: {Path(given)} is a folder, not a file; cuenv reads a file of that name.", err
    (tmp_path / "requirements").mkdir()  # a folder of requirement files, named as folders are
    for folder in ("elsewhere", "requirements"):  # a folder by any other name is read for its kernels, as before
        code, out, _ = cli("check", folder)
        assert code == 0 and "no CUDA kernels in it" in out


@pytest.mark.parametrize("name", ["requirements.txt", "environment.yml", "pixi.lock", "uv.lock"])
def test_a_file_cuenv_reads_that_is_not_here_is_named_missing(cli, tmp_path: Path, monkeypatch, name: str) -> None:
    """`cuenv check requirements.txt` in a folder without one said "does not know the target": it is a missing
    file, said so with the folder looked in, and the same command in the file's folder reads it."""
    monkeypatch.chdir(tmp_path)
    code, out, err = cli("check", name)
    assert (code, out) == (2, "") and err.splitlines()[0] == f"error: No file {name!r} in {tmp_path}.", err
    code, _out, err = cli("check", "torch-cu12")  # not named as a file: still the target cuenv does not know
    assert code == 2 and "does not know the target 'torch-cu12'" in err
