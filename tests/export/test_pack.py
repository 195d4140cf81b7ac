"""`cuenv pack` -> `cuenv unpack` under another CUENV_HOME: the environment works there."""

from __future__ import annotations

import json
import os
import tarfile
from pathlib import Path

import pytest

from tests.export.exportkit import HOSTILE, cuenv, meta_of

pytestmark = pytest.mark.network
PROBE = ("import ctypes; r = ctypes.CDLL('libcudart.so.12'); v = ctypes.c_int(); r.cudaRuntimeGetVersion(ctypes.byref(v)); "
         "print(v.value, next(l.split(None, 5)[5].strip() for l in open('/proc/self/maps') if 'libcudart' in l))")


def other_home(tmp_path: Path) -> dict[str, str]:
    return {"CUENV_HOME": str(tmp_path / "elsewhere" / "cuenv home")}  # a space in the new prefix, too


def test_venv_pack_unpack_run(venv_env: str, tmp_path: Path) -> None:
    archive = tmp_path / "env.cuenv.tar"
    done = cuenv("pack", venv_env, "-o", str(archive))
    assert "venv, wheels" in done.stdout
    with tarfile.open(archive) as tar:
        names = tar.getnames()
    assert names[0] == "cuenv-pack.json" and sorted(names[1:]) == sorted(
        f"wheels/{p['filename']}" for p in json.loads((Path(os.environ["CUENV_HOME"]) / "envs" / venv_env / ".cuenv/solution.json").read_text())["packages"])

    env = other_home(tmp_path)
    cuenv("unpack", str(archive), "-n", "moved", env=env)
    new_prefix = Path(env["CUENV_HOME"]) / "envs" / "moved"
    out = cuenv("run", "moved", "--", "python", "-c", PROBE, env=env).stdout.strip().split(" ", 1)
    assert out == ["12010", f"{new_prefix}/lib/python3.11/site-packages/nvidia/cuda_runtime/lib/libcudart.so.12"]
    out = cuenv("run", "moved", "--", "sh", "-c", 'command -v ptxas; printf "%s" "$NCCL_SOCKET_IFNAME"', env=env).stdout
    assert out == f"{new_prefix}/lib/python3.11/site-packages/nvidia/cuda_nvcc/bin/ptxas\n{HOSTILE}"
    meta = json.loads((new_prefix / ".cuenv/meta.json").read_text())
    old = meta_of(venv_env)
    assert meta["name"] == "moved" and meta["lock_hash"] == old["lock_hash"]
    assert meta["layout"]["prefix"] == str(new_prefix) and os.environ["CUENV_HOME"] not in json.dumps(meta["layout"])
    assert (new_prefix / ".cuenv/complete").is_file()
    assert str(new_prefix) in (new_prefix / ".cuenv/activate.bash").read_text()
    listing = cuenv("--json", "list", env=env).stdout
    assert "moved" in listing


def test_conda_pack_unpack_rewrites_prefixes(conda_env: str, tmp_path: Path) -> None:
    archive = tmp_path / "conda.cuenv.tar"
    assert "conda, conda-pack" in cuenv("pack", conda_env, "-o", str(archive)).stdout
    env = other_home(tmp_path)
    cuenv("unpack", str(archive), env=env)
    new_prefix = Path(env["CUENV_HOME"]) / "envs" / conda_env
    # conda-pack's conda-unpack rewrote the placeholder recorded in the package
    assert (new_prefix / "etc/cuenv-hello.txt").read_text() == f"prefix={new_prefix}\n"
    assert sorted(p.name for p in (new_prefix / "bin").iterdir()) == ["ptxas"]  # conda-pack's helper scripts removed
    out = cuenv("run", conda_env, "--", "python3", "-c", PROBE, env=env).stdout.strip().split(" ", 1)
    assert out == ["12010", f"{new_prefix}/targets/x86_64-linux/lib/libcudart.so.12"]
    assert "release 12.1" in cuenv("run", conda_env, "--", "ptxas", "--version", env=env).stdout


def test_unpack_refuses_a_machine_the_stack_cannot_run_on(venv_env: str, tmp_path: Path) -> None:
    archive = tmp_path / "env.cuenv.tar"
    cuenv("pack", venv_env, "-o", str(archive))
    env = {**other_home(tmp_path), "CUENV_DRIVER": "470.82.01", "CUENV_GPUS": "8.0"}  # CUDA 11.4 driver
    done = cuenv("unpack", str(archive), env=env, check=False)
    assert done.returncode == 1 and done.stderr.startswith("error: ") and "driver" in done.stderr
    assert "Use --force to unpack it anyway." in done.stderr
    assert "Traceback" not in done.stderr and done.stderr.count("\n") == 2
    assert not (Path(env["CUENV_HOME"]) / "envs" / venv_env).exists()
    cuenv("unpack", str(archive), "--force", env=env)
    assert (Path(env["CUENV_HOME"]) / "envs" / venv_env / ".cuenv/complete").is_file()


def test_unpack_bad_input(venv_env: str, tmp_path: Path) -> None:
    bogus = tmp_path / "bogus.tar"
    bogus.write_bytes(b"not a tar")
    done = cuenv("unpack", str(bogus), env=other_home(tmp_path), check=False)
    assert done.returncode == 2 and "is not an archive made by `cuenv pack`" in done.stderr
    archive = tmp_path / "env.cuenv.tar"
    cuenv("pack", venv_env, "-o", str(archive))
    done = cuenv("pack", venv_env, "-o", str(archive), check=False)  # no silent overwrite
    assert done.returncode == 2 and "already exists" in done.stderr
    done = cuenv("unpack", str(archive), "-n", venv_env, check=False)  # same home: the name is taken
    assert done.returncode == 2 and "already exists" in done.stderr
    # a folder that cannot take the archive: its own path is named, not a temporary file (issue 30 §4)
    done = cuenv("pack", venv_env, "-o", "/proc/env.cuenv.tar", check=False)
    assert done.returncode == 1 and done.stderr.startswith("error: Cannot write /proc/env.cuenv.tar: "), done.stderr
    assert "cuenv-pack-" not in done.stderr and ".part" not in done.stderr


def test_interrupted_unpack_leaves_nothing_usable(venv_env: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from cuenv.config import resolve
    from cuenv.envs import create
    from cuenv.export import pack as packing
    from cuenv.machine.driver import detect

    archive = tmp_path / "env.cuenv.tar"
    cuenv("pack", venv_env, "-o", str(archive))
    monkeypatch.setenv("CUENV_HOME", other_home(tmp_path)["CUENV_HOME"])

    def interrupted(*args, **kwargs):
        raise KeyboardInterrupt  # Ctrl-C after the install, before the marker

    monkeypatch.setattr(create, "render_activation", interrupted)
    settings = resolve({}, os.environ, None)
    with pytest.raises(KeyboardInterrupt):
        packing.unpack(archive, name=None, settings=settings, environ=os.environ, machine=detect(os.environ), force=False)
    assert not (settings.envs_dir / venv_env).exists()
