"""`cuenv doctor` on machines the tests build: a real venv environment with NVIDIA's CUDA 12.1
wheels next to a conflicting system CUDA (this machine's 13.0 nvcc, an 11.8 tree from the cu11
wheel) on PATH, on LD_LIBRARY_PATH and in a custom linker cache written by ldconfig."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.doctor.doctorkit import build_ld_cache

SYSTEM13 = Path("/usr/local/cuda-13.0")
needs_system13 = pytest.mark.skipif(not (SYSTEM13 / "lib" / "libcudart.so.13").exists() or shutil.which("nvcc") is None,
                                    reason="needs this machine's system CUDA 13.0 toolkit")


def _environ(isolated: Path, **extra: str) -> dict[str, str]:
    return {"PATH": "/usr/local/bin:/usr/bin:/bin", "HOME": str(isolated), "CUENV_HOME": str(isolated / "home"),
            "CUENV_CONFIG": str(isolated / "config.yaml"), "CUENV_CACHE_DIR": str(isolated / "cache"), **extra}


def _run(cli, *args: str, environ: dict[str, str]) -> tuple[int, dict]:
    import json

    code, out, err = cli("doctor", *args, "--json", environ=environ)
    assert err == "", err
    return code, json.loads(out)


def _summary(data: dict) -> list[tuple[str, str, list[str]]]:
    return [(c["name"], c["status"], [f["code"] for f in c["findings"]]) for c in data["checks"]]


def _finding(data: dict, code: str) -> dict:
    return next(f for c in data["checks"] for f in c["findings"] if f["code"] == code)


@needs_system13
def test_conflicting_system_cuda_next_to_an_environment(cli, isolated, cuda_env, cuda11_tree, tmp_path):
    cache = build_ld_cache(tmp_path / "etc" / "ld.so.cache", SYSTEM13 / "lib", cuda11_tree / "lib64")
    gone = tmp_path / "gone"
    env = _environ(isolated, LD_LIBRARY_PATH=f"{cuda11_tree}/lib64:{gone}")
    code, data = _run(cli, "cuda-12.1", "--ld-cache", str(cache), environ=env)
    assert code == 1 and data["ok"] is False and data["environment"] == "cuda-12.1"
    summary = dict((n, (s, codes)) for n, s, codes in _summary(data))
    # the 13.0 nvcc and ptxas in /usr/local/bin cannot be stripped, but the environment's shim and ptxas stand in
    # front of them (issue 17): they never run by name, so neither multiple-cuda-on-path (whose fix would be the
    # `cuenv use` already done) nor nvcc-runtime-mismatch
    assert summary["toolkits"] == ("ok", [])
    assert summary["libraries"] == ("warning", ["ld-library-path-stale", "ld-library-path-stale", "multiple-cuda-on-path"])
    tools = next(c for c in data["checks"] if c["name"] == "toolkits")
    assert any(line.startswith(f"nvcc on PATH: {cuda_env.shims_dir}/nvcc: cuenv's stand-in") for line in tools["detail"])
    assert "behind another nvcc on PATH, never run by name: /usr/local/bin/nvcc (CUDA 13.0)" in tools["detail"]
    compiler = next(c for c in data["checks"] if c["name"] == "compiler")
    assert "nvcc on PATH is cuenv's stand-in (no compiler): the host compiler is not checked against one" in compiler["detail"]
    assert summary["framework"] == ("ok", [])
    assert summary["cudnn"] == ("ok", [])
    libs = next(c for c in data["checks"] if c["name"] == "libraries")
    site = Path(cuda_env.layout.lib_dirs[0]).parent.parent.parent  # site-packages
    assert libs["detail"][1:] == [
        f"linker cache: read with `ldconfig -p -C {cache}`",
        f"libcudart.so.11.0 -> {cuda11_tree}/lib64/libcudart.so.11.0  [CUDA 11.8; via LD_LIBRARY_PATH]",
        f"libcudart.so.12 -> {site}/nvidia/cuda_runtime/lib/libcudart.so.12  [CUDA 12.1.105; via LD_LIBRARY_PATH]",
        f"libcudart.so.13 -> {SYSTEM13}/lib/libcudart.so.13  [CUDA 13.0; via linker cache]",
    ]
    # an environment made before cuenv shimmed its tools: the mismatch, and a fix that is not `cuenv use`
    import json

    meta_file = Path(cuda_env.layout.prefix) / ".cuenv" / "meta.json"
    meta = json.loads(meta_file.read_text())
    del meta["tools"]
    meta_file.write_text(json.dumps(meta))
    shutil.rmtree(cuda_env.shims_dir)
    code, data = _run(cli, "cuda-12.1", "--ld-cache", str(cache), environ=env)
    summary = dict((n, (s, codes)) for n, s, codes in _summary(data))
    assert summary["libraries"] == ("error", ["ld-library-path-stale", "ld-library-path-stale",
                                              "multiple-cuda-on-path", "nvcc-runtime-mismatch"])
    mismatch = _finding(data, "nvcc-runtime-mismatch")
    assert "recreate cuda-12.1 so that cuenv records and shims its CUDA tools: `cuenv create cuda-12.1 -n cuda-12.1 --force`" \
        in mismatch["fix"]
    assert mismatch["severity"] == "error"
    assert "nvcc on PATH is CUDA 13.0" in mismatch["message"] and "CUDA 12.1.105 runtime" in mismatch["message"]
    stale = [f["message"] for c in data["checks"] for f in c["findings"] if f["code"] == "ld-library-path-stale"]
    assert stale == [f"LD_LIBRARY_PATH entry {cuda11_tree}/lib64 holds the CUDA 11.8 runtime, but cuda-12.1 is CUDA 12.1.",
                     f"LD_LIBRARY_PATH names {gone}, which does not exist."]
    on_path = _finding(data, "multiple-cuda-on-path")["message"]
    assert "ptxas" in on_path and "(CUDA 12.1)" in on_path and "nvcc /usr/local/bin/nvcc (CUDA 13.0)" in on_path


@needs_system13
def test_machine_without_an_environment_uses_the_cache_and_agrees(cli, isolated, tmp_path):
    cache = build_ld_cache(tmp_path / "ld.so.cache", SYSTEM13 / "lib")
    code, data = _run(cli, "--ld-cache", str(cache), environ=_environ(isolated))
    libs = next(c for c in data["checks"] if c["name"] == "libraries")
    assert libs == {"name": "libraries", "status": "ok", "findings": [], "detail": [
        "LD_LIBRARY_PATH: unset", f"linker cache: read with `ldconfig -p -C {cache}`",
        f"libcudart.so.13 -> {SYSTEM13}/lib/libcudart.so.13  [CUDA 13.0; via linker cache]"]}


def test_missing_runtime_is_library_not_found(cli, isolated, cuda_env, tmp_path):
    """The environment's own runtime deleted: nothing else provides libcudart.so.12."""
    (Path(cuda_env.layout.lib_dirs[-1]) / "libcudart.so.12").unlink()
    cache = build_ld_cache(tmp_path / "ld.so.cache")  # trusted folders only
    env = _environ(isolated, PATH="/usr/bin:/bin")
    code, data = _run(cli, "cuda-12.1", "--ld-cache", str(cache), environ=env)
    found = _finding(data, "library-not-found")
    assert found["severity"] == "error" and code == 1
    assert found["message"].startswith("libcudart.so.12, needed by cuda-12.1 (CUDA 12.1), cannot be found")
    assert "nvidia-cuda-runtime-cu12" in found["fix"]


def test_stub_libcuda_on_the_library_path(cli, isolated, fake_libs, tmp_path):
    stubs = tmp_path / "cuda" / "lib64" / "stubs"
    stubs.mkdir(parents=True)
    shutil.copy(fake_libs / "libcuda.so.1", stubs / "libcuda.so.1")
    code, data = _run(cli, environ=_environ(isolated, PATH="/usr/bin:/bin", LD_LIBRARY_PATH=str(stubs)))
    stub = _finding(data, "driver-stub-library")
    assert stub["message"] == f"libcuda.so.1 resolves to the toolkit's link-time stub {stubs}/libcuda.so.1 (LD_LIBRARY_PATH)."


def test_container_toolkit_found_under_root(cli, isolated, tmp_path):
    root = tmp_path / "root"
    (root / "etc" / "docker").mkdir(parents=True)
    (root / "etc" / "docker" / "daemon.json").write_text('{"runtimes": {"nvidia": {"path": "nvidia-container-runtime"}}}')
    (root / "etc" / "cdi").mkdir()
    (root / "etc" / "cdi" / "nvidia.yaml").write_text("cdiVersion: 0.5.0\n")
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    for tool in ("docker", "nvidia-ctk"):
        (bin_dir / tool).write_text("#!/bin/sh\nexit 0\n")
        (bin_dir / tool).chmod(0o755)
    code, data = _run(cli, "--root", str(root), environ=_environ(isolated, PATH=f"{bin_dir}:/usr/bin:/bin"))
    box = next(c for c in data["checks"] if c["name"] == "container")
    assert box == {"name": "container", "status": "ok", "findings": [], "detail": [
        f"docker: {bin_dir}/docker", f"nvidia-ctk: {bin_dir}/nvidia-ctk",
        "/etc/docker/daemon.json: runtimes nvidia", "CDI specs: /etc/cdi/nvidia.yaml"]}
    (bin_dir / "nvidia-ctk").unlink()
    shutil.rmtree(root / "etc")
    _, data = _run(cli, "--root", str(root), environ=_environ(isolated, PATH=f"{bin_dir}:/usr/bin:/bin"))
    assert _finding(data, "no-container-toolkit")["severity"] == "warning"


def test_framework_probe_reports_an_import_failure(tmp_path):
    """The real probe script in a child: a framework folder that does not import is framework-broken."""
    from cuenv.doctor import frameworks
    from tests.shells import envbuild

    prefix = tmp_path / "venv"
    subprocess.run([envbuild.uv(), "venv", "-q", "--python", sys.executable, str(prefix)], check=True,
                   capture_output=True, env={**os.environ, "UV_NO_CONFIG": "1", "UV_OFFLINE": "1"})
    site = next((prefix / "lib").glob("python3*/site-packages"))
    (site / "torch").mkdir()
    (site / "torch" / "__init__.py").write_text("raise ImportError('libcudart.so.12: cannot open shared object file')\n")
    facts = frameworks.probe(prefix / "bin" / "python", (site,), dict(os.environ), timeout=60)
    assert facts.python == str(prefix / "bin" / "python") and [p.name for p in facts.probes] == ["torch"]
    assert facts.probes[0].error == "ImportError: libcudart.so.12: cannot open shared object file"


@needs_system13
def test_this_machine_without_importing_a_framework(tmp_path):
    """The acceptance account of this machine: no driver, system CUDA 13, no cuDNN; no framework import
    (what kept it under two seconds; the time itself is benchmarks/bench_guards.py's)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("CUENV_", "FAKE_"))}
    env.update(PYTHONPATH=str(Path(__file__).resolve().parents[2]), CUENV_HOME=str(tmp_path / "home"),
               CUENV_CONFIG=str(tmp_path / "c.yaml"), PATH="/usr/local/bin:/usr/bin:/bin")
    env.pop("LD_LIBRARY_PATH", None)
    proc = subprocess.run([sys.executable, "-X", "importtime", "-m", "cuenv", "doctor"], env=env, capture_output=True,
                          text=True, timeout=120)
    assert proc.returncode == 1  # no driver is an error of the checklist
    imported = {line.split("|")[-1].strip().split(".")[0] for line in proc.stderr.splitlines() if "|" in line}
    assert not imported & {"torch", "tensorflow", "paddle", "jax", "rattler", "textual"}
    out = proc.stdout
    assert "error    driver\n         no NVIDIA driver found" in out
    assert "error[no-driver]" in out and "fix: Install the NVIDIA driver" in out
    assert f"toolkit {SYSTEM13}: CUDA 13.0" in out
    assert f"libcudart.so.13 -> {SYSTEM13}/lib/libcudart.so.13  [CUDA 13.0; via linker cache]" in out
    assert "no cuDNN found" in out
    low_disk = int("fix: Free space" in out)  # a full disk is a warning of its own (this shared machine reached 95%)
    assert any(out.rstrip().endswith(f"failed, {n + low_disk} with warnings.") for n in (0, 1))
