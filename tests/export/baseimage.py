"""A small local base image for container-build tests (no registry is reachable here).

``buildah from scratch`` plus this machine's Debian python3.11 with pip, the shared libraries it
and the CUDA runtime need, busybox for /bin/sh, and the CA bundle pip trusts here. It is what
`--base` points at, standing in for python:3.11-slim; built once per storage and reused.
"""

from __future__ import annotations

import glob
import os
import shutil
import subprocess
from pathlib import Path

TAG = "localhost/cuenv-test-python:3.11"
PYTHON = Path("/usr/bin/python3.11")
TREES = ("/usr/lib/python3.11", "/usr/lib/python3/dist-packages/pip")
EXTRA_LIBS = ("libdl.so.2", "libpthread.so.0", "librt.so.1", "libutil.so.1")  # libcudart's, ptxas's
BUILDAH_ENV = {"STORAGE_DRIVER": "vfs", "BUILDAH_ISOLATION": "chroot"}


def buildah(*args: str, env: dict[str, str] | None = None) -> str:
    done = subprocess.run(["buildah", *args], capture_output=True, text=True, env={**os.environ, **BUILDAH_ENV, **(env or {})})
    if done.returncode != 0:
        raise RuntimeError(f"buildah {' '.join(args)} failed: {done.stderr[-2000:]}")
    return done.stdout.strip()


def usable() -> str | None:
    """Why these tests cannot run here, or None."""
    if shutil.which("buildah") is None:
        return "buildah is not installed"
    if os.geteuid() != 0:
        return "the test base image is built as root (buildah mount)"
    if not PYTHON.is_file() or not Path(TREES[1]).is_dir() or shutil.which("busybox") is None:
        return "needs Debian's python3.11, python3-pip and busybox-static"
    return None


def _libs() -> set[str]:
    found: set[str] = set()
    binaries = [str(PYTHON), *glob.glob("/usr/lib/python3.11/lib-dynload/*.so")]
    for path in binaries:
        out = subprocess.run(["ldd", path], capture_output=True, text=True).stdout
        for line in out.splitlines():
            parts = line.split()
            if "=>" in parts and len(parts) > 2 and parts[2].startswith("/"):
                found.add(parts[2])
            elif parts and parts[0].startswith("/"):
                found.add(parts[0])
    for name in EXTRA_LIBS:
        for cand in (f"/lib/x86_64-linux-gnu/{name}", f"/usr/lib/x86_64-linux-gnu/{name}"):
            if os.path.exists(cand):
                found.add(cand)
    return found


def _copy(src: str, root: Path) -> None:
    dest = root / src.lstrip("/")
    dest.parent.mkdir(parents=True, exist_ok=True)
    if os.path.isdir(src):
        shutil.copytree(src, dest, symlinks=True, dirs_exist_ok=True, ignore=shutil.ignore_patterns("__pycache__", "test"))
    else:
        shutil.copy2(os.path.realpath(src), dest)


def ensure_base() -> str:
    """Build TAG unless this storage has it already; returns the tag."""
    try:
        buildah("inspect", "--type", "image", TAG)
        return TAG
    except RuntimeError:
        pass
    ctr = buildah("from", "scratch")
    try:
        root = Path(buildah("mount", ctr))
        for sub in ("bin", "usr/bin", "tmp", "etc/ssl/certs", "lib64", "root"):
            (root / sub).mkdir(parents=True, exist_ok=True)
        (root / "tmp").chmod(0o1777)
        shutil.copy2(shutil.which("busybox"), root / "bin" / "busybox")
        for tool in ("sh", "ls", "cat", "cp", "mkdir", "ln", "rm", "chmod", "dirname", "echo", "sha256sum", "env", "test", "["):
            (root / "bin" / tool).symlink_to("busybox")
        for path in (*_libs(), str(PYTHON), *TREES, "/etc/ssl/certs/ca-certificates.crt"):
            _copy(path, root)
        (root / "usr/bin/python3").symlink_to("python3.11")
        # pip here trusts the system CA bundle (a TLS-terminating proxy may sit in between).
        (root / "etc/pip.conf").write_text("[global]\ncert = /etc/ssl/certs/ca-certificates.crt\n")
        (root / "etc/passwd").write_text("root:x:0:0:root:/root:/bin/sh\n")
        buildah("config", "--env", "PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin", ctr)
        buildah("commit", "--rm", ctr, TAG)
    except BaseException:
        subprocess.run(["buildah", "rm", ctr], capture_output=True, env={**os.environ, **BUILDAH_ENV})
        raise
    return TAG
