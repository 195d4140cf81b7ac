"""CUDA tool shims (issue 17 §1): the pure choice, and the shim scripts run by a real /bin/sh.

The "other" toolkits are made by the test: an ``nvcc``/``ptxas`` that prints NVIDIA's version line
for another release, in a toolkit folder and, separately, in a generic bin folder (/usr/local/bin
style) that activation cannot strip from PATH.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

from hypothesis import given
from hypothesis import strategies as st

from cuenv.activation import shims
from cuenv.activation.shims import (
    CUDA_TOOLS,
    ESCAPE_VAR,
    SHIM_EXIT,
    ToolChoice,
    Toolkit,
)
from cuenv.envs import folder


def fake_tool(folder: Path, tool: str, rel: str) -> Path:
    """A CUDA tool that prints the first line NVIDIA's tools print for --version, then its argv."""
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / tool
    path.write_text(
        "#!/bin/sh\n"
        f'if [ "${{1-}}" = --version ]; then echo "Cuda compilation tools, release {rel}, V{rel}.88"; exit 0; fi\n'
        f'echo "{tool} {rel} ran: $*"\n'
    )
    path.chmod(0o755)
    return path


def test_choose_prefers_env_then_same_release_toolkit_then_shim() -> None:
    kits = [
        Toolkit("/usr/local/cuda-13.0", "13.0", {"nvcc": "/usr/local/cuda-13.0/bin/nvcc"}),
        Toolkit("/opt/cuda-12.1", "12.1", {"nvcc": "/opt/cuda-12.1/bin/nvcc", "cuda-gdb": "/opt/cuda-12.1/bin/cuda-gdb"}),
    ]
    got = {c.tool: c for c in shims.choose(env_tools={"ptxas": "/e/bin/ptxas"}, env_release="12.1.105", toolkits=kits)}
    assert [c.tool for c in shims.choose(env_tools={}, env_release=None, toolkits=[])] == list(CUDA_TOOLS)
    assert got["ptxas"] == ToolChoice("ptxas", "env", "/e/bin/ptxas")
    assert got["nvcc"] == ToolChoice("nvcc", "system", "/opt/cuda-12.1/bin/nvcc", "/opt/cuda-12.1")
    assert got["cuda-gdb"].source == "system"
    assert got["nvlink"] == ToolChoice("nvlink", "shim", None)
    assert {c.tool for c in shims.shimmed(got.values())} == set(CUDA_TOOLS) - {"ptxas"}


def test_never_a_toolkit_of_another_release() -> None:
    kits = [Toolkit("/usr/local/cuda-13.0", "13.0", {t: f"/x/{t}" for t in CUDA_TOOLS})]
    for rel in ("12.1", "13.1", None, "garbage"):
        assert all(c.source == "shim" for c in shims.choose(env_tools={}, env_release=rel, toolkits=kits))


@given(st.integers(0, 999), st.integers(0, 999), st.text(max_size=8))
def test_release_parser(major: int, minor: int, tail: str) -> None:
    assert shims.release(f"{major}.{minor}{'.' + tail if tail else ''}") == f"{major}.{minor}"


@given(st.text(max_size=20))
def test_release_never_raises(text: str) -> None:
    got = shims.release(text)
    assert got is None or got.count(".") == 1


def write_env_shims(tmp: Path, choices: tuple[ToolChoice, ...], *, name: str = "cuda-12.1", rel: str = "12.1") -> Path:
    shims_dir = tmp / "envs" / name / ".cuenv" / "shims"
    scripts = {
        c.tool: shims.script(choice=c, env_name=name, env_release=rel, shims_dir=str(shims_dir),
                             remedies=shims.remedy_lines(tool=c.tool, env_name=name, env_release=rel,
                                                         compiler_hint=f"cuenv create {name} --engine rattler -n {name}-nvcc"))
        for c in shims.shimmed(choices)
    }
    folder.write_shims(shims_dir, scripts)
    return shims_dir


def run_by_name(tool: str, path: list[Path | str], *args: str, **extra: str) -> subprocess.CompletedProcess[str]:
    """Run ``tool`` the way a shell does: looked up by name on ``path``."""
    env = {"PATH": ":".join(map(str, path)), "LC_ALL": "C", **extra}
    return subprocess.run(["/bin/sh", "-c", '"$@"', "sh", tool, *args], env=env, capture_output=True, text=True, timeout=30, check=False)


def test_shim_refuses_other_release_and_says_which(tmp_path: Path) -> None:
    generic = tmp_path / "usr-local-bin"
    fake_tool(generic, "nvcc", "13.0")
    shims_dir = write_env_shims(tmp_path, shims.choose(env_tools={}, env_release="12.1", toolkits=[]))
    assert folder.is_shim(shims_dir / "nvcc") and not folder.is_shim(generic / "nvcc")
    r = run_by_name("nvcc", [shims_dir, generic, "/usr/bin", "/bin"], "-c", "x.cu")
    assert r.returncode == SHIM_EXIT and r.stdout == ""
    lines = r.stderr.splitlines()
    assert lines[0] == (f"cuenv: environment cuda-12.1 (CUDA 12.1) has no nvcc; the next nvcc on PATH, {generic}/nvcc, "
                        "is CUDA 13.0, not 12.1's.")
    assert "cuenv create cuda-12.1 --engine rattler -n cuda-12.1-nvcc" in lines[1]
    assert "cuenv use system:12.1" in lines[2]
    assert lines[3] == f"  run the other one anyway: {ESCAPE_VAR}=1 nvcc ..."


def test_escape_runs_the_other_one(tmp_path: Path) -> None:
    generic = tmp_path / "bin"
    fake_tool(generic, "nvcc", "13.0")
    shims_dir = write_env_shims(tmp_path, shims.choose(env_tools={}, env_release="12.1", toolkits=[]))
    r = run_by_name("nvcc", [shims_dir, generic, "/usr/bin", "/bin"], "-c", "a b.cu", **{ESCAPE_VAR: "1"})
    assert (r.returncode, r.stdout, r.stderr) == (0, "nvcc 13.0 ran: -c a b.cu\n", "")
    r = run_by_name("nvcc", [shims_dir, generic, "/usr/bin", "/bin"], **{ESCAPE_VAR: "yes"})
    assert r.returncode == SHIM_EXIT  # only "1" opens it


def test_same_release_toolkit_runs_and_is_named(tmp_path: Path) -> None:
    kit = tmp_path / "cuda-12.1"
    real = fake_tool(kit / "bin", "nvcc", "12.1")
    generic = tmp_path / "bin"
    fake_tool(generic, "nvcc", "13.0")
    choices = shims.choose(env_tools={}, env_release="12.1", toolkits=[Toolkit(str(kit), "12.1", {"nvcc": str(real)})])
    nvcc = next(c for c in choices if c.tool == "nvcc")
    assert shims.describe(nvcc, "12.1") == f"{real} (system toolkit {kit}, CUDA 12.1)"
    shims_dir = write_env_shims(tmp_path, choices)
    r = run_by_name("nvcc", [shims_dir, generic, "/usr/bin", "/bin"], "-o", "x")
    assert (r.returncode, r.stdout) == (0, "nvcc 12.1 ran: -o x\n")
    real.unlink()  # the toolkit went away: the shim explains again
    assert run_by_name("nvcc", [shims_dir, generic, "/usr/bin", "/bin"]).returncode == SHIM_EXIT


def test_a_later_same_release_tool_on_path_runs(tmp_path: Path) -> None:
    later = tmp_path / "opt-cuda-12.1" / "bin"
    fake_tool(later, "ptxas", "12.1")
    shims_dir = write_env_shims(tmp_path, shims.choose(env_tools={}, env_release="12.1", toolkits=[]))
    r = run_by_name("ptxas", [shims_dir, later, "/usr/bin", "/bin"], "--gpu-name", "sm_90")
    assert (r.returncode, r.stdout) == (0, "ptxas 12.1 ran: --gpu-name sm_90\n")


def test_no_other_tool_and_no_loop_between_two_environments(tmp_path: Path) -> None:
    a = write_env_shims(tmp_path, shims.choose(env_tools={}, env_release="12.1", toolkits=[]), name="a")
    b = write_env_shims(tmp_path, shims.choose(env_tools={}, env_release="12.4", toolkits=[]), name="b", rel="12.4")
    r = run_by_name("nvcc", [a, b, "/usr/bin", "/bin"], **{ESCAPE_VAR: "1"})
    assert r.returncode == SHIM_EXIT
    assert r.stderr.splitlines()[0] == "cuenv: environment a (CUDA 12.1) has no nvcc, and there is no other nvcc on PATH."


def test_hostile_path_entries(tmp_path: Path) -> None:
    odd = tmp_path / "it's a \"dir\" $HOME *"
    fake_tool(odd, "nvcc", "13.0")
    shims_dir = write_env_shims(tmp_path, shims.choose(env_tools={}, env_release="12.1", toolkits=[]))
    r = run_by_name("nvcc", ["", shims_dir, odd, "/usr/bin", "/bin"])
    assert r.returncode == SHIM_EXIT and f"{odd}/nvcc, is CUDA 13.0" in r.stderr


def test_scan_tools_skips_shims_and_rewrite_removes_stale(tmp_path: Path) -> None:
    env_bin = tmp_path / "env" / "bin"
    fake_tool(env_bin, "ptxas", "12.1")
    (env_bin / "nvdisasm").write_text("not executable")
    shims_dir = write_env_shims(tmp_path, shims.choose(env_tools={}, env_release="12.1", toolkits=[]))
    assert shims.scan_tools([env_bin, shims_dir]) == {"ptxas": str(env_bin / "ptxas")}
    (shims_dir / "mine").write_text("a user's file")
    folder.write_shims(shims_dir, {"nvcc": (shims_dir / "nvcc").read_text()})
    assert sorted(os.listdir(shims_dir)) == ["mine", "nvcc"]
