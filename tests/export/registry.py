"""A real OCI registry (Debian's docker-registry, distribution 2.8) on 127.0.0.1 for push tests,
and a tiny real OCI image layout to push (one layer holding one file), built byte for byte here."""

from __future__ import annotations

import contextlib
import gzip
import hashlib
import io
import json
import shutil
import socket
import subprocess
import tarfile
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@contextlib.contextmanager
def registry(root: Path, *, htpasswd: Path | None = None) -> Iterator[str]:
    """``docker-registry serve`` with a temporary config; yields ``127.0.0.1:PORT``."""
    exe = shutil.which("docker-registry")
    if exe is None:
        import pytest

        pytest.skip("docker-registry is not installed (Debian: apt-get install docker-registry)")
    root.mkdir(parents=True, exist_ok=True)
    port = free_port()
    auth = ""
    if htpasswd is not None:
        auth = f"auth:\n  htpasswd:\n    realm: cuenv-test\n    path: {htpasswd}\n"
    config = root / "registry.yml"
    config.write_text(
        "version: 0.1\nlog:\n  level: error\nstorage:\n  filesystem:\n"
        f"    rootdirectory: {root / 'data'}\n  delete:\n    enabled: true\n"
        f"http:\n  addr: 127.0.0.1:{port}\n{auth}",
        encoding="utf-8",
    )
    with open(root / "registry.log", "wb") as log:
        proc = subprocess.Popen([exe, "serve", str(config)], stdout=log, stderr=subprocess.STDOUT)
        try:
            deadline = time.monotonic() + 30
            while True:
                try:
                    urllib.request.urlopen(f"http://127.0.0.1:{port}/v2/", timeout=2).close()
                    break
                except urllib.error.HTTPError:
                    break  # 401 with auth on: it answers
                except (urllib.error.URLError, OSError):
                    if proc.poll() is not None or time.monotonic() > deadline:
                        raise RuntimeError(f"docker-registry did not start: {(root / 'registry.log').read_text()[-500:]}") from None
                    time.sleep(0.1)
            yield f"127.0.0.1:{port}"
        finally:
            proc.terminate()
            try:
                proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()


def _blob(root: Path, data: bytes) -> dict[str, object]:
    digest = hashlib.sha256(data).hexdigest()
    (root / "blobs" / "sha256").mkdir(parents=True, exist_ok=True)
    (root / "blobs" / "sha256" / digest).write_bytes(data)
    return {"digest": f"sha256:{digest}", "size": len(data)}


def oci_layout(root: Path, *, text: str = "hello from cuenv\n", tag: str = "latest") -> Path:
    """An OCI image layout (image-spec 1.0): one gzip layer with etc/cuenv.txt, deterministic."""
    raw = io.BytesIO()
    with tarfile.open(fileobj=raw, mode="w", format=tarfile.PAX_FORMAT) as tar:
        body = text.encode()
        info = tarfile.TarInfo("etc/cuenv.txt")
        info.size, info.mtime, info.mode = len(body), 0, 0o644
        tar.addfile(info, io.BytesIO(body))
    diff_id = "sha256:" + hashlib.sha256(raw.getvalue()).hexdigest()
    layer = _blob(root, gzip.compress(raw.getvalue(), mtime=0))
    config = _blob(root, json.dumps({
        "architecture": "amd64", "os": "linux", "config": {"Env": ["CUENV_TEST=1"]},
        "rootfs": {"type": "layers", "diff_ids": [diff_id]},
    }, sort_keys=True).encode())
    manifest = _blob(root, json.dumps({
        "schemaVersion": 2, "mediaType": "application/vnd.oci.image.manifest.v1+json",
        "config": {"mediaType": "application/vnd.oci.image.config.v1+json", **config},
        "layers": [{"mediaType": "application/vnd.oci.image.layer.v1.tar+gzip", **layer}],
    }, sort_keys=True).encode())
    (root / "oci-layout").write_text('{"imageLayoutVersion": "1.0.0"}', encoding="utf-8")
    (root / "index.json").write_text(json.dumps({"schemaVersion": 2, "manifests": [{
        "mediaType": "application/vnd.oci.image.manifest.v1+json", **manifest,
        "annotations": {"org.opencontainers.image.ref.name": tag}}]}), encoding="utf-8")
    return root


def oci_archive(layout: Path, dest: Path) -> Path:
    """The layout as one tar file: skopeo's and buildah's ``oci-archive:`` format."""
    with tarfile.open(dest, "w") as tar:
        for path in sorted(layout.rglob("*")):
            tar.add(path, arcname=str(path.relative_to(layout)), recursive=False)
    return dest
