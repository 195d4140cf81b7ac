"""Issue 26's 'Done when', as a new user runs it: create, `cuenv use`, `pip install numpy` inside it,
`cuenv lock`, a teammate's `cuenv sync`; numpy is in the lock, in the teammate's environment and in the
export; an add that would break the CUDA contract is refused before any download, with a way forward that
runs as written. The recipe is cuda-12.1 (NVIDIA's real wheels from PyPI): torch-cu121's wheels live on
download.pytorch.org, which the test machines cannot reach; torch from PyPI stands in as the breaking add."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.network


def test_use_pip_lock_sync_export_and_a_refused_add(cli, envs: Path, work: Path, tmp_path: Path) -> None:
    bash = shutil.which("bash")
    if bash is None:
        pytest.skip("no bash here")
    assert cli("create", "cuda-12.1", "--engine", "venv", "-n", "live")[0] == 0
    bindir = tmp_path / "bin"  # `cuenv` on PATH as a user has it
    bindir.mkdir()
    (bindir / "cuenv").write_text(f"#!/bin/sh\nexec {sys.executable} -m cuenv \"$@\"\n")
    (bindir / "cuenv").chmod(0o755)
    script = ('eval "$(cuenv shell-init bash)"; cuenv use live >/dev/null 2>&1 || exit 9; '
              'pip install -q --no-cache-dir numpy || exit 8; cuenv lock || exit 7')
    done = subprocess.run([bash, "--norc", "--noprofile", "-c", script], capture_output=True, text=True, timeout=600,
                          env={**os.environ, "PATH": f"{bindir}:/usr/bin:/bin"}, cwd=work)
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout.startswith("Installed outside cuenv, locked from their index: numpy "), done.stdout
    assert "name: numpy" in (work / "cuenv.lock").read_text()

    code, out, err = cli("sync")  # the teammate: cuenv.lock, into an environment named after its recipe
    assert code == 0 and out.startswith("Created 'cuda-12.1' from cuenv.lock"), err
    probe = subprocess.run([sys.executable, "-m", "cuenv", "run", "cuda-12.1", "--", "python", "-c",
                            "import numpy; print(numpy.__file__)"], capture_output=True, text=True, timeout=120)
    assert probe.stdout.startswith(str(envs / "cuda-12.1")), probe.stderr
    code, out, err = cli("export", "cuda-12.1", "--format", "requirements")
    assert code == 0 and "numpy @ https://" in out and err == "", err
    assert cli("lock", "--check", "cuda-12.1")[0] == 0

    # torch from PyPI is built for another CUDA major: refused from its metadata alone, nothing downloaded
    fresh = tmp_path / "fresh-cache"
    code, out, err = cli("add", "-n", "live", "torch", environ={**os.environ, "CUENV_CACHE_DIR": str(fresh)})
    assert code == 1 and err.startswith("error: torch would pull CUDA 13 wheels"), err
    fetched = sum(p.stat().st_size for p in fresh.rglob("*") if p.is_file())
    assert fetched < 20_000_000, f"{fetched} bytes fetched for a refused add"  # metadata only: torch's wheel is ~800 MB
    hinted = [cmd for cmd in err.split("`")[1::2] if cmd.startswith("cuenv ")]
    assert hinted[0] == "cuenv create torch-cu121 -n live-torch", err  # torch built for the environment's CUDA 12.1
    for cmd in hinted[1:]:  # the rest runs as written here (the create downloads from download.pytorch.org)
        assert cli(*cmd.split()[1:])[0] == 0, cmd
    assert "torch" not in (envs / "live" / ".cuenv" / "solution.json").read_text()
