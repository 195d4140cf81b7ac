"""Fixtures for the shell tests: real environments built from NVIDIA's wheels, a conflicting
system CUDA made by the test, and a runner for bash/zsh/fish with their rc files off."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

from . import envbuild

REPO = Path(__file__).resolve().parents[2]
SHELL_ARGV = {"bash": ["bash", "--norc", "--noprofile", "-c"], "zsh": ["zsh", "-f", "-c"], "fish": ["fish", "--no-config", "-c"]}


def shell_or_skip(shell: str) -> str:
    if shutil.which(shell) is None:
        pytest.skip(f"{shell} is not installed")
    return shell


@pytest.fixture(params=["bash", "zsh", "fish"])
def shell(request: pytest.FixtureRequest) -> str:
    return shell_or_skip(request.param)


@pytest.fixture(scope="session")
def wheel_cache() -> Path:
    return Path(os.environ.get("CUENV_TEST_CACHE", REPO / ".test-cache")) / "wheels"


@pytest.fixture(scope="session")
def bin_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A `cuenv` executable for the shells: this checkout, logging each start (no-Python checks)."""
    d = tmp_path_factory.mktemp("bin")
    exe = d / "cuenv"
    exe.write_text(
        "#!/bin/sh\n"
        'if [ -n "${CUENV_TEST_LOG-}" ]; then printf "%s\\n" "$*" >>"$CUENV_TEST_LOG"; fi\n'
        f"PYTHONPATH={REPO} exec {sys.executable} -m cuenv \"$@\"\n"
    )
    exe.chmod(0o755)
    return d


@dataclass(frozen=True)
class World:
    home: Path  # CUENV_HOME
    envs: Path
    bin_dir: Path
    system_cuda: Path  # the conflicting toolkit the test made (CUDA 12.4 runtime, ptxas "13.0")
    python: str

    def environ(self, tmp: Path, **extra: str) -> dict[str, str]:
        base = {
            "HOME": str(tmp),
            "PATH": f"{self.bin_dir}:{self.system_cuda}/bin:/usr/local/bin:/usr/bin:/bin",
            "LD_LIBRARY_PATH": f"{self.system_cuda}/lib64",
            "CUDA_HOME": str(self.system_cuda),
            "CUENV_HOME": str(self.home),
            "CUENV_CONFIG": str(tmp / "no-config.yaml"),
            "CUENV_CACHE_DIR": str(tmp / "cache"),
            "LANG": "C.UTF-8",
            "TERM": "dumb",
            "XDG_CONFIG_HOME": str(tmp / "xdg"),
        }
        base.update(extra)
        return base


@pytest.fixture(scope="session")
def world(tmp_path_factory: pytest.TempPathFactory, wheel_cache: Path, bin_dir: Path) -> World:
    root = tmp_path_factory.mktemp("world")
    home = root / "cuenv home"  # a space in CUENV_HOME, as on many real machines
    envs = home / "envs"
    first = envbuild.build_cuda_env(envs, "cuda-12.1", "12.1", wheel_cache)
    envbuild.build_cuda_env(envs, "cuda-12.4", "12.4", wheel_cache, env_vars={"CUDA_MODULE_LOADING": "LAZY"})
    assert first.layout.lib_dirs
    # The conflicting "system" CUDA: ptxas claiming 13.0 and a real libcudart.so.12 of CUDA 12.4.
    system = root / "system-cuda"
    (system / "bin").mkdir(parents=True)
    (system / "lib64").mkdir()
    ptxas = system / "bin" / "ptxas"
    ptxas.write_text("#!/bin/sh\necho 'ptxas: NVIDIA (R) Ptx optimizing assembler'\necho 'Cuda compilation tools, release 13.0, V13.0.88'\n")
    ptxas.chmod(0o755)
    runtime = next((envs / "cuda-12.4").glob("lib/python3*/site-packages/nvidia/cuda_runtime/lib/libcudart.so.12"))
    shutil.copy2(runtime, system / "lib64" / "libcudart.so.12")
    return World(home=home, envs=envs, bin_dir=bin_dir, system_cuda=system, python=sys.executable)


def run_shell(shell: str, script: str, env: dict[str, str], cwd: Path | None = None, timeout: float = 60,
              stdin: str | None = None, argv: list[str] | None = None) -> subprocess.CompletedProcess[str]:
    # a trailing command: zsh execs a script's last command, and its SHLVL drops for that command
    cmd = (argv or SHELL_ARGV[shell]) + ([] if stdin is not None else [script + "\ntrue"])
    return subprocess.run(cmd, env=env, cwd=cwd, capture_output=True, text=True, timeout=timeout,
                          input=stdin if stdin is not None else None)


def read_env0(path: Path) -> dict[str, str]:
    data = path.read_bytes().decode("utf-8", "surrogateescape")
    out = {}
    for item in data.split("\0"):
        if item:
            k, _, v = item.partition("=")
            out[k] = v
    return out


def hook_source(shell: str, world: World, tmp: Path) -> str:
    """The shell-init output, generated once per test (the hook itself is tested with eval elsewhere)."""
    path = tmp / f"hook.{shell}"
    if not path.exists():
        env = world.environ(tmp)
        out = subprocess.run([str(world.bin_dir / "cuenv"), "shell-init", shell], env=env, capture_output=True,
                             text=True, check=True)
        path.write_text(out.stdout)
    return f"source '{path}'" if shell == "fish" else f"\\. '{path}'"
