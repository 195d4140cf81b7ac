"""The engine interface: records, the lock's JSON, and the auto choice."""

from __future__ import annotations

import json
import stat
from pathlib import Path

import pytest

from cuenv.engines import get_engine, resolve_engine
from cuenv.engines.base import Package, Solution, Target, trim_explanation
from cuenv.errors import UsageError
from cuenv.machine.model import Driver, Machine

RT = Package(name="nvidia-cuda-runtime-cu12", version="12.1.105", kind="pypi",
             url="https://files.example/nvidia_cuda_runtime_cu12-12.1.105-py3-none-manylinux1_x86_64.whl",
             sha256="6e258468ddf5796e25f1dc591a31029fa317d97a0a94ed93468fc86301d61e40", index_url="https://pypi.org/simple")
CV = Package(name="cuda-version", version="12.1", kind="conda", url="file:///c/noarch/cuda-version-12.1-h0_0.tar.bz2",
             sha256="42" * 32, md5="7b" * 16, build="h0_0", channel="file:///c", subdir="noarch",
             filename="cuda-version-12.1-h0_0.tar.bz2")


def test_solution_json_round_trip_is_sorted_and_deterministic() -> None:
    a = Solution(engine="rattler", platform="linux-64", python="3.11", packages=(RT, CV))
    b = Solution(engine="rattler", platform="linux-64", python="3.11", packages=(CV, RT))
    assert a == b
    assert [p.name for p in a.packages] == ["cuda-version", "nvidia-cuda-runtime-cu12"]
    text = json.dumps(a.to_json(), sort_keys=True)
    assert text == json.dumps(b.to_json(), sort_keys=True)
    assert Solution.from_json(json.loads(text)) == a
    assert a.to_json()["packages"][0] == {
        "name": "cuda-version", "version": "12.1", "kind": "conda", "url": CV.url, "sha256": CV.sha256,
        "md5": CV.md5, "build": "h0_0", "channel": "file:///c", "subdir": "noarch", "filename": CV.filename,
    }


@pytest.mark.parametrize("data", [
    {"version": 99, "engine": "venv", "platform": "linux-64", "python": None, "packages": []},
    {"version": 1, "engine": "venv", "platform": "linux-64", "python": None, "packages": [{"name": "x", "bogus": 1}]},
    {"version": 1, "engine": "venv", "platform": "linux-64", "python": None,
     "packages": [{"name": "x", "version": "1", "kind": "npm", "url": "u", "sha256": None}]},
])
def test_broken_solution_json_is_a_usage_error(data: dict) -> None:
    with pytest.raises(UsageError):
        Solution.from_json(data)


def test_target_from_machine() -> None:
    machine = Machine(driver=Driver(version="535.104.05", max_cuda="12.2", source="nvml"), glibc="2.36")
    assert Target.from_machine(machine) == Target(cuda="12.2", glibc="2.36")
    assert Target.from_machine(Machine(driver=None)) == Target(cuda=None, glibc=None)


def test_trim_explanation_drops_noise_and_caps_length() -> None:
    text = "warning  libmamba x\n\nThe following packages are incompatible\n" + "\n".join(f"├─ p{i}" for i in range(30))
    out = trim_explanation(text, limit=5).splitlines()
    assert out[0] == "  The following packages are incompatible"
    assert len(out) == 6 and out[-1] == "  ... (26 more lines)"


def _exe(folder: Path, name: str) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / name
    path.write_text("#!/bin/sh\nexit 0\n")
    path.chmod(path.stat().st_mode | stat.S_IEXEC)
    return path


def test_auto_prefers_micromamba_then_mamba_then_conda_else_venv(tmp_path: Path) -> None:
    a, b = tmp_path / "a", tmp_path / "b"
    env = {"PATH": f"{a}:{b}"}
    assert resolve_engine("auto", env) == ("venv", "auto (requested): no micromamba, mamba, conda on PATH, so venv (uv, PyPI wheels)")
    _exe(b, "conda")
    assert resolve_engine("auto", env)[0] == "conda"
    _exe(a, "mamba")
    assert resolve_engine("auto", env)[0] == "mamba"
    mm = _exe(b, "micromamba")
    assert resolve_engine(None, env, default="auto") == ("micromamba", f"auto (the configured default): found micromamba at {mm}")


def test_auto_finds_the_binary_a_shell_hook_exported(tmp_path: Path) -> None:
    exe = _exe(tmp_path / "hidden", "micromamba")
    assert resolve_engine("auto", {"PATH": str(tmp_path / "empty"), "MAMBA_EXE": str(exe)})[0] == "micromamba"


def test_explicit_engines_and_unknown_names() -> None:
    assert resolve_engine("rattler", {}) == ("rattler", "rattler: requested")
    assert resolve_engine(None, {}, default="venv") == ("venv", "venv: the configured default")
    with pytest.raises(UsageError, match="Unknown engine 'pip'"):
        resolve_engine("pip", {})
    with pytest.raises(UsageError):
        get_engine("auto", {})
    assert get_engine("micromamba", {}).name == "micromamba"
    assert get_engine("venv", {}).family == "venv" and get_engine("rattler", {}).family == "conda"
