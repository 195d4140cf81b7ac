"""`cuenv image build` with daemonless buildah on a locally made base image, inspected with skopeo
and umoci: the environment variables, the labels and the environment's files in the layers."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from cuenv.export.image import (
    Builder,
    build_argv,
    buildah_flags,
    parse_output,
    save_argv,
)
from cuenv.export.imagespec import image_prefix
from tests.export.baseimage import BUILDAH_ENV, ensure_base, usable
from tests.export.exportkit import HOSTILE, cuenv, have, meta_of

WHY = usable() or (None if have("skopeo", "umoci") else "skopeo and umoci are not installed")


def test_builder_argv() -> None:
    ctx = Path("/ctx")
    b = Builder("buildah", "/usr/bin/buildah", ("--storage-driver", "vfs"), "chroot")
    assert build_argv(b, context=ctx, tag="t:1") == [
        "/usr/bin/buildah", "--storage-driver", "vfs", "bud", "--format", "docker", "--isolation", "chroot",
        "--tag", "t:1", "--file", "/ctx/Dockerfile", "/ctx"]
    out = parse_output("docker-archive:/x/i.tar")
    assert save_argv(b, tag="t:1", output=out) == ["/usr/bin/buildah", "--storage-driver", "vfs", "push", "t:1", "docker-archive:/x/i.tar:t:1"]
    docker = Builder("docker", "docker")
    assert build_argv(docker, context=ctx, tag="t") == ["docker", "build", "--tag", "t", "--file", "/ctx/Dockerfile", "/ctx"]
    podman = Builder("podman", "podman")
    assert save_argv(podman, tag="t", output=parse_output("oci-archive:/i.tar")) == [
        "podman", "save", "--format", "oci-archive", "--output", "/i.tar", "t"]
    assert buildah_flags({}, euid=0, store=Path("/nonexistent")) == (("--storage-driver", "vfs"), "chroot")
    assert buildah_flags({"STORAGE_DRIVER": "overlay", "BUILDAH_ISOLATION": "oci"}, euid=0) == ((), None)


def test_no_builder_is_a_clear_error(venv_env: str, tmp_path: Path) -> None:
    done = cuenv("image", "build", venv_env, env={"PATH": str(tmp_path)}, check=False)
    assert done.returncode == 1
    assert "docker: not installed; podman: not installed; buildah: not installed" in done.stderr
    assert done.stderr.count("\n") == 2 and "Traceback" not in done.stderr


@pytest.mark.network
@pytest.mark.skipif(WHY is not None, reason=WHY or "")
def test_buildah_builds_and_skopeo_umoci_inspect(venv_env: str, tmp_path: Path) -> None:
    base = ensure_base()
    archive = tmp_path / "image.tar"
    tag = "localhost/cuenv-export-test:1"
    env = {**BUILDAH_ENV}
    cuenv("image", "build", venv_env, "-t", tag, "--base", base, "--builder", "buildah",
          "--output", f"oci-archive:{archive}", env=env)
    meta = meta_of(venv_env)
    prefix = image_prefix(venv_env)

    config = json.loads(subprocess.run(["skopeo", "inspect", "--config", f"oci-archive:{archive}"],
                                       capture_output=True, text=True, check=True).stdout)["config"]
    env_vars = dict(e.split("=", 1) for e in config["Env"])
    assert env_vars["NCCL_SOCKET_IFNAME"] == HOSTILE  # Dockerfile quoting survived a real parser
    assert env_vars["NVIDIA_REQUIRE_CUDA"] == "cuda>=12.1" and env_vars["NVIDIA_VISIBLE_DEVICES"] == "all"
    assert env_vars["CUDA_HOME"] == f"{prefix}/.cuenv/cuda" and env_vars["VIRTUAL_ENV"] == prefix
    assert env_vars["PATH"].startswith(f"{prefix}/bin:{prefix}/lib/python3.11/site-packages/nvidia/cuda_nvcc/bin:")
    labels = config["Labels"]
    assert labels["io.cuenv.cuda"] == "12.1" and labels["io.cuenv.lock.hash"] == meta["lock_hash"]
    assert labels["io.cuenv.driver.min"] == "530.30.02" and labels["io.cuenv.recipe"] == "hostile-12.1"

    # the environment's files are in the layers: unpack them with umoci
    layout = tmp_path / "oci"
    subprocess.run(["skopeo", "copy", f"oci-archive:{archive}", f"oci:{layout}:img"], check=True, capture_output=True)
    bundle = tmp_path / "bundle"
    subprocess.run(["umoci", "unpack", "--image", f"{layout}:img", str(bundle)], check=True, capture_output=True)
    root = bundle / "rootfs" / prefix.lstrip("/")
    assert (root / "lib/python3.11/site-packages/nvidia/cuda_runtime/lib/libcudart.so.12").is_file()
    assert (root / "lib/python3.11/site-packages/nvidia/cuda_nvcc/bin/ptxas").is_file()
    assert (root / ".cuenv/cuda/lib64/libcudart.so").resolve().name == "libcudart.so.12"  # CUDA_HOME links, relative
    assert (root / ".cuenv/cuda/lib64/libcudart.so").resolve().is_file()
    assert json.loads((root / ".cuenv/solution.json").read_text()) == json.loads(
        (Path(os.environ["CUENV_HOME"]) / "envs" / venv_env / ".cuenv/solution.json").read_text())

    # and the image runs the environment: its own libcudart and ptxas, found through the baked ENV
    ctr = subprocess.run(["buildah", "from", tag], capture_output=True, text=True, check=True, env={**os.environ, **env}).stdout.strip()
    try:
        probe = ("import ctypes, shutil; r = ctypes.CDLL('libcudart.so.12'); v = ctypes.c_int(); "
                 "r.cudaRuntimeGetVersion(ctypes.byref(v)); print(v.value, shutil.which('ptxas'))")
        out = subprocess.run(["buildah", "run", ctr, "--", "python", "-c", probe], capture_output=True, text=True,
                             check=True, env={**os.environ, **env}).stdout.split()
        assert out == ["12010", f"{prefix}/lib/python3.11/site-packages/nvidia/cuda_nvcc/bin/ptxas"]
    finally:
        subprocess.run(["buildah", "rm", ctr], capture_output=True, env={**os.environ, **env})
        subprocess.run(["buildah", "rmi", tag], capture_output=True, env={**os.environ, **env})


def test_an_unpullable_base_image_says_how_to_build_offline():
    from cuenv.commands.image import _explain
    from cuenv.runner import ToolFailed

    stderr = ('Trying to pull docker.io/library/python:3.11-slim-bookworm...\nError: creating build container: '
              'initializing source docker://python:3.11-slim-bookworm: pinging container registry registry-1.docker.io: '
              'dial tcp: lookup registry-1.docker.io: no such host\n')
    err = _explain(ToolFailed(["buildah", "bud"], 125, "", stderr), "buildah")
    assert err.message.startswith("buildah could not pull the base image")
    assert err.hint == "Without a reachable registry, build on an image you have here (--base; `buildah images` lists them)."
    other = ToolFailed(["buildah", "bud"], 1, "", "Error: COPY failed: no such file\n")
    assert _explain(other, "buildah") is other
