"""System toolkit discovery on a built tree, and engine discovery."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from cuenv import engines
from cuenv.machine import toolkits


def _exe(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    path.chmod(0o755)
    return path


def _toolkit(root: Path, rel: str, *, json_version: str | None = None, txt: str | None = None,
             cudart: int | None = None, nvcc_release: str | None = None) -> Path:
    home = root / rel
    (home / "include").mkdir(parents=True)
    if json_version:
        (home / "version.json").write_text(json.dumps({"cuda": {"name": "CUDA SDK", "version": json_version}}))
    if txt:
        (home / "version.txt").write_text(txt)
    if cudart:
        (home / "targets/x86_64-linux/include").mkdir(parents=True)
        (home / "targets/x86_64-linux/include/cuda_runtime_api.h").write_text(f"#define CUDART_VERSION  {cudart}\n")
    if nvcc_release:
        _exe(home / "bin/nvcc", f"#!/bin/sh\necho 'Cuda compilation tools, release {nvcc_release}, V{nvcc_release}.1'\n")
    return home


def test_discover_tree(tmp_path):
    root = tmp_path / "root"
    a = _toolkit(root, "usr/local/cuda-12.1", json_version="12.1.20230417", nvcc_release="12.1")
    _toolkit(root, "usr/local/cuda-10.2", txt="CUDA Version 10.2.89\n")
    _toolkit(root, "opt/cuda", cudart=11080)
    (root / "usr/local/cuda").symlink_to(a)
    (root / "usr/local/cuda-junk").mkdir()  # not a toolkit
    home = _toolkit(tmp_path, "custom", cudart=13000)
    found = toolkits.discover({"CUDA_HOME": str(home), "PATH": ""}, root=root)
    assert [(Path(t.path).name, t.version, t.source) for t in found] == [
        ("custom", "13.0", "CUDA_HOME"),
        ("cuda-12.1", "12.1", "/usr/local/cuda, /usr/local/cuda-12.1"),
        ("cuda-10.2", "10.2", "/usr/local/cuda-10.2"),
        ("cuda", "11.8", "/opt/cuda"),
    ]
    assert found[1].nvcc == str(a / "bin/nvcc") and found[0].nvcc is None


def test_nvcc_on_path_inside_a_toolkit_reads_files_only(tmp_path):
    home = _toolkit(tmp_path, "tk", cudart=12040)
    _exe(home / "bin/nvcc", "#!/bin/sh\nexit 1\n")  # would fail if run
    found = toolkits.discover({"PATH": str(home / "bin")}, root=tmp_path / "empty")
    assert [(t.path, t.version, t.source) for t in found] == [(str(home.resolve()), "12.4", "PATH")]


def test_wrapper_nvcc_is_asked_and_matched_by_version(tmp_path):
    root = tmp_path / "root"
    _toolkit(root, "usr/local/cuda-13.0", cudart=13000, nvcc_release="13.0")
    wrapper = _exe(tmp_path / "bin/nvcc", "#!/bin/sh\necho 'Cuda compilation tools, release 13.0, V13.0.88'\n")
    found = toolkits.discover({"PATH": str(wrapper.parent)}, root=root)
    assert len(found) == 1 and found[0].source == f"/usr/local/cuda-13.0, PATH ({wrapper})"


def test_lone_nvcc_is_its_own_entry(tmp_path):
    wrapper = _exe(tmp_path / "bin/nvcc", "#!/bin/sh\necho 'Cuda compilation tools, release 12.8, V12.8.93'\n")
    found = toolkits.discover({"PATH": str(wrapper.parent)}, root=tmp_path / "empty")
    assert [(t.version, t.nvcc, t.source) for t in found] == [("12.8", str(wrapper), "PATH")]


def test_nothing_found(tmp_path):
    assert toolkits.discover({"PATH": ""}, root=tmp_path) == []


def test_engines(tmp_path):
    _exe(tmp_path / "bin/micromamba", "#!/bin/sh\n")
    found = engines.available({"PATH": str(tmp_path / "bin")})
    assert found["micromamba"] == {"available": True, "path": str(tmp_path / "bin/micromamba")}
    assert found["conda"] == {"available": False, "path": None}
    assert found["uv"]["available"] and Path(found["uv"]["path"]).exists()  # the uv package is a dependency
    assert found["rattler"]["available"]  # py-rattler is a dependency; found without importing it


def test_info_and_auto_find_the_same_conda(tmp_path):
    """`conda activate` may leave only MAMBA_EXE: `info` and `create --engine auto` must both see it."""
    exe = _exe(tmp_path / "hidden/mamba", "#!/bin/sh\n")
    environ = {"PATH": str(tmp_path / "empty"), "MAMBA_EXE": str(exe)}
    assert engines.available(environ)["mamba"] == {"available": True, "path": str(exe)}
    assert engines.resolve_engine(None, environ)[0] == "mamba"


@pytest.mark.skipif(not Path("/usr/local/cuda-13.0/bin/nvcc").exists(), reason="this machine's system toolkit")
def test_this_machines_system_toolkit():
    found = toolkits.discover(os.environ)
    assert any(t.path == "/usr/local/cuda-13.0" and t.version == "13.0" for t in found)
