"""benchmarks/gpu_acceptance.sh against the gcc-built fake driver (issues 19 §4, 30 §3).

The script is meant for a real GPU; here the fake libnvidia-ml/libcuda and a fake nvidia-smi stand
in, so what is proved is the script's logic: the four detection sources are read and compared, a
disagreement fails, the machine's own environment is adopted and checked, and a real environment
(NVIDIA's CUDA 12.1 runtime and ptxas wheels, carried in a folder as on a machine without network)
is created from a package index on 127.0.0.1 alone, activated with the real bash hook, its ptxas
builds the kernel, and it is deactivated. Running the kernel needs the real driver: here it fails.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.machine import fakedriver

REPO = Path(__file__).resolve().parents[2]
SCRIPT = REPO / "benchmarks" / "gpu_acceptance.sh"
GPU = ("NVIDIA H100 80GB HBM3", "9.0", 81559)


def run_script(tmp_path: Path, libs: Path | None, *, smi_csv: str | None, extra: dict[str, str] | None = None,
               timeout: float = 300) -> tuple[int, str]:
    bin_dir = tmp_path / "bin"
    if smi_csv is not None:
        fakedriver.fake_smi(bin_dir, table="smi-table-580-a100x2.txt", csv_text=smi_csv)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("FAKE_", "CUENV_", "ACCEPT_", "CONDA_OVERRIDE"))}
    env.pop("LD_LIBRARY_PATH", None)
    env.update(fakedriver.driver_env(libs, version="550.54.15", cuda=12040, gpus=[GPU]))
    env.update(
        PATH=os.pathsep.join([str(bin_dir), str(Path(sys.executable).parent), "/usr/bin", "/bin"]),
        PYTHONPATH=str(REPO),
        CUENV=f"{sys.executable} -m cuenv",
        ACCEPT_PYTHON=sys.executable,
        CUENV_HOME=str(tmp_path / "home"),
        CUENV_CONFIG=str(tmp_path / "config.yaml"),
        CUENV_CACHE_DIR=os.environ["CUENV_CACHE_DIR"],  # the suite's shared cache: wheels stay warm
        TMPDIR=str(tmp_path),
    )
    env.update(extra or {})
    proc = subprocess.run(["bash", str(SCRIPT)], env=env, capture_output=True, text=True, timeout=timeout, check=False)
    return proc.returncode, proc.stdout + proc.stderr


def lines(out: str) -> dict[str, str]:
    """{step: status} from the script's result lines."""
    found = {}
    for line in out.splitlines():
        parts = line.split(None, 1)
        if len(parts) == 2 and parts[0] in ("PASS", "FAIL", "SKIP"):
            found[parts[1][:22].strip()] = parts[0]
    return found


def test_the_script_is_clean_shell() -> None:
    if not SCRIPT.exists():
        pytest.fail("benchmarks/gpu_acceptance.sh is missing")
    import shutil

    if shutil.which("shellcheck") is None:
        pytest.skip("shellcheck is not installed")
    done = subprocess.run(["shellcheck", str(SCRIPT)], capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stdout


def test_detection_sources_agree_on_the_fake_driver(tmp_path: Path, fake_libs: Path) -> None:
    code, out = run_script(tmp_path, fake_libs, smi_csv="550.54.15, NVIDIA H100 80GB HBM3\n",
                           extra={"ACCEPT_SKIP_CREATE": "1"})
    assert code == 1, out  # only the adopted environment's doctor fails: no device nodes here
    found = lines(out)
    assert {k: found.pop(k) for k in ("adopt", "own check", "own doctor")} == {
        "adopt": "PASS", "own check": "PASS", "own doctor": "FAIL"}  # the fake machine has no /dev/nvidia*
    assert found == {"nvml": "PASS", "libcuda": "PASS", "nvidia-smi": "PASS", "cuenv info": "PASS",
                     "agreement": "PASS", "system kernel": "SKIP", "create": "SKIP"}
    assert "driver 550.54.15, CUDA 12.4, 1 GPU(s): NVIDIA H100 80GB HBM3" in out


def test_a_disagreement_fails_and_names_both_sides(tmp_path: Path, fake_libs: Path) -> None:
    code, out = run_script(tmp_path, fake_libs, smi_csv="535.104.05, NVIDIA H100 80GB HBM3\n",
                           extra={"ACCEPT_SKIP_CREATE": "1"})
    assert code == 1
    assert lines(out)["agreement"] == "FAIL"
    assert "driver: NVML 550.54.15 vs nvidia-smi 535.104.05" in out


def test_no_driver_fails_detection_without_a_traceback(tmp_path: Path) -> None:
    code, out = run_script(tmp_path, None, smi_csv=None, extra={"ACCEPT_SKIP_CREATE": "1"})
    assert code == 1
    found = lines(out)
    assert found["nvml"] == "FAIL" and found["libcuda"] == "FAIL" and found["agreement"] == "SKIP"
    assert "Traceback" not in out


@pytest.mark.network  # the carried wheels are downloaded once into the suite's cache
def test_full_run_works_offline_from_carried_wheels(tmp_path: Path, fake_libs: Path) -> None:
    """No network but 127.0.0.1: a proxy that refuses everything stands for the closed network."""
    import shutil

    from tests.engines.channel import ensure_wheels

    carried = tmp_path / "wheels"
    carried.mkdir()
    for wheel in ensure_wheels(wanted=("nvidia-cuda-runtime-cu12==12.1.105", "nvidia-cuda-nvcc-cu12==12.1.105")).values():
        shutil.copy(wheel, carried)
    record = tmp_path / "record.md"
    dead = "http://127.0.0.1:9"
    code, out = run_script(tmp_path, fake_libs, smi_csv="550.54.15, NVIDIA H100 80GB HBM3\n",
                           extra={"ACCEPT_WHEELS": str(carried), "ACCEPT_RECORD": str(record),
                                  "CUENV_CACHE_DIR": str(tmp_path / "cold-cache"),  # nothing from earlier downloads
                                  "HTTPS_PROXY": dead, "HTTP_PROXY": dead, "ALL_PROXY": dead,
                                  "NO_PROXY": "127.0.0.1,localhost"})
    found = lines(out)
    for step in ("agreement", "adopt", "own check", "create", "use", "check nvidia-smi", "ptxas", "deactivate"):
        assert found.get(step) == "PASS", out
    assert "from pypi=http://127.0.0.1:" in out
    assert "the environment's ptxas" in out and "built fill() for sm_90" in out
    assert found.get("kernel") == "FAIL", out  # a fake libcuda runs no kernel: the real driver must
    # The fake driver has no /dev/nvidia0: doctor says so, and the script reports it as a failure.
    assert found.get("doctor") == "FAIL" and "device-nodes-missing" in out
    assert code == 1
    text = record.read_text(encoding="utf-8")
    assert text.startswith("## 20") and "NVIDIA H100 80GB HBM3 (driver 550.54.15)" in text
    assert "| PASS | create |" in text and "| PASS | ptxas |" in text
    assert not (tmp_path / "home" / "envs" / "gpu-accept").exists()  # removed afterwards
    assert not (tmp_path / "home" / "envs" / "gpu-accept-own").exists()  # forgotten, never changed


def test_fetch_wheels_mode_needs_a_folder(tmp_path: Path) -> None:
    done = subprocess.run(["bash", str(SCRIPT), "--fetch-wheels"], capture_output=True, text=True, check=False)
    assert done.returncode != 0 and "usage: gpu_acceptance.sh --fetch-wheels DIR" in done.stderr


def test_a_toolkit_newer_than_the_driver_skips_the_system_kernel(tmp_path: Path, fake_libs: Path) -> None:
    import shutil

    nvcc = shutil.which("nvcc")
    if nvcc is None:
        pytest.skip("no nvcc on this machine")
    code, out = run_script(tmp_path, fake_libs, smi_csv="550.54.15, NVIDIA H100 80GB HBM3\n",
                           extra={"ACCEPT_SKIP_CREATE": "1", "ACCEPT_SKIP_ADOPT": "1",
                                  "PATH": os.pathsep.join([str(tmp_path / "bin"), str(Path(nvcc).parent),
                                                           str(Path(sys.executable).parent), "/usr/bin", "/bin"])})
    # The fake driver says CUDA 12.4; a CUDA 13 toolkit's kernel cannot run on it, and that is no failure of cuenv.
    release = subprocess.run([nvcc, "--version"], capture_output=True, text=True, check=False).stdout
    if "release 12." in release:
        pytest.skip("this nvcc is not newer than the fake driver")
    assert lines(out)["system kernel"] == "SKIP" and "needs a newer driver" in out, out
    assert code == 0
