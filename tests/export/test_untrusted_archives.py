"""An archive from someone else never runs its own code, and is proven against its lock (issue 14 §2).

Each test packs a real environment, alters the archive as an attacker would, and unpacks it under
another CUENV_HOME: refused in one or two lines, nothing run, nothing usable-looking left."""

from __future__ import annotations

import gzip
import io
import json
import subprocess
import tarfile
from pathlib import Path
from typing import Callable

import pytest
from exportkit import cuenv

pytestmark = pytest.mark.network
Members = dict[str, tuple[tarfile.TarInfo, bytes | None]]


def _members(tar: tarfile.TarFile) -> Members:
    out: Members = {}
    for info in tar.getmembers():
        data = tar.extractfile(info).read() if info.isfile() else None  # type: ignore[union-attr]  # a regular member
        out[info.name] = (info, data)
    return out


def _write(members: Members, fileobj: io.BytesIO | Path, mode: str) -> None:
    with tarfile.open(fileobj=fileobj if isinstance(fileobj, io.BytesIO) else None,
                      name=None if isinstance(fileobj, io.BytesIO) else fileobj, mode=mode) as tar:
        for info, data in members.values():
            if data is not None:
                info.size = len(data)
            tar.addfile(info, io.BytesIO(data) if data is not None else None)


def _altered(archive: Path, out: Path, *, manifest: Callable[[dict], None] | None = None,
             payload: Callable[[Members], None] | None = None) -> Path:
    with tarfile.open(archive, "r:") as tar:
        outer = _members(tar)
    if manifest is not None:
        info, raw = outer["cuenv-pack.json"]
        data = json.loads(raw or b"{}")
        manifest(data)
        outer["cuenv-pack.json"] = (info, json.dumps(data).encode())
    if payload is not None:
        info, raw = outer["env.tar.gz"]
        with tarfile.open(fileobj=io.BytesIO(gzip.decompress(raw or b"")), mode="r:") as inner_tar:
            inner = _members(inner_tar)
        payload(inner)
        buf = io.BytesIO()
        _write(inner, buf, "w")
        outer["env.tar.gz"] = (info, gzip.compress(buf.getvalue()))
    _write(outer, out, "w")
    return out


def _file(members: Members, name: str, data: bytes, mode: int = 0o644) -> None:
    info = tarfile.TarInfo(name)
    info.mode = mode
    members[name] = (info, data)


@pytest.fixture
def conda_archive(conda_env: str, tmp_path: Path) -> Path:
    archive = tmp_path / "conda.cuenv.tar"
    cuenv("pack", conda_env, "-o", str(archive))
    return archive


def _unpack(archive: Path, tmp_path: Path, *extra: str) -> tuple[subprocess.CompletedProcess, Path]:
    home = tmp_path / "victim home"
    done = cuenv("unpack", str(archive), *extra, env={"CUENV_HOME": str(home)}, check=False)
    return done, home


def _refused(done: subprocess.CompletedProcess, home: Path, message: str) -> None:
    assert done.returncode in (1, 2), done.stderr
    assert message in done.stderr, done.stderr
    assert "Traceback" not in done.stderr and "internal error" not in done.stderr
    assert done.stderr.count("\n") <= 2
    envs = home / "envs"
    assert not envs.exists() or not [p for p in envs.iterdir() if not p.name.startswith(".")]


def test_conda_unpack_from_the_archive_never_runs(conda_archive: Path, tmp_path: Path) -> None:
    marker = tmp_path / "ran"
    script = f"#!/bin/sh\ntouch '{marker}'\n".encode()
    archive = _altered(conda_archive, tmp_path / "a.tar",
                       payload=lambda m: _file(m, "bin/conda-unpack", script, 0o755))
    done, home = _unpack(archive, tmp_path)
    assert done.returncode == 0, done.stderr
    assert not marker.exists()
    env = home / "envs" / "conda-12.1"
    assert not (env / "bin" / "conda-unpack").exists()  # conda-pack's helper is deleted, not run
    assert (env / "etc/cuenv-hello.txt").read_text() == f"prefix={env}\n"  # cuenv's own relocation
    meta = json.loads((env / ".cuenv" / "meta.json").read_text())
    proven, total = meta["unpacked_from"]["proven_packages"]
    assert proven == total > 0  # every package held to the package itself: the channel is at hand
    assert "checked against their records in the archive only" not in done.stderr


def test_a_changed_file_is_refused(conda_archive: Path, tmp_path: Path) -> None:
    def edit(m: Members) -> None:
        info, _ = m["etc/cuenv-hello.txt"]
        m["etc/cuenv-hello.txt"] = (info, b"prefix=/opt/anaconda1anaconda2anaconda3\nrm -rf ~\n")

    done, home = _unpack(_altered(conda_archive, tmp_path / "a.tar", payload=edit), tmp_path)
    _refused(done, home, "etc/cuenv-hello.txt differs from its package (sha256 mismatch).")


@pytest.mark.parametrize("name", ["lib/python3.11/site-packages/evil.pth", "bin/python3", "etc/profile.d/x.sh"])
def test_a_file_in_no_package_is_refused(conda_archive: Path, tmp_path: Path, name: str) -> None:
    archive = _altered(conda_archive, tmp_path / "a.tar", payload=lambda m: _file(m, name, b"import os\n"))
    done, home = _unpack(archive, tmp_path)
    _refused(done, home, f"{name} is in no package of the archive's lock.")


def test_a_file_changed_together_with_its_record_is_caught_by_the_package_itself(conda_archive: Path, tmp_path: Path) -> None:
    """The records travel inside the archive; where the package is at hand (here: its file:// channel),
    each record is held to the package's own info/paths.json."""
    import hashlib

    evil = b"prefix=/opt/anaconda1anaconda2anaconda3\nrm -rf ~\n"

    def edit(m: Members) -> None:
        info, _ = m["etc/cuenv-hello.txt"]
        m["etc/cuenv-hello.txt"] = (info, evil)
        name = next(n for n in m if n.startswith("conda-meta/cuenv-hello"))
        info, raw = m[name]
        record = json.loads(raw or b"{}")
        for entry in record["paths_data"]["paths"]:
            if entry["_path"] == "etc/cuenv-hello.txt":
                entry["sha256"] = hashlib.sha256(evil).hexdigest()
        m[name] = (info, json.dumps(record).encode())

    done, home = _unpack(_altered(conda_archive, tmp_path / "a.tar", payload=edit), tmp_path)
    _refused(done, home, "etc/cuenv-hello.txt is not the file of cuenv-hello 1.0: the package itself lists another")


def test_packages_not_at_hand_are_named_in_a_warning(conda_archive: Path, export_channel: Path, tmp_path: Path) -> None:
    """Offline, with the packages nowhere here, unpack still works and says what it could not prove."""
    hidden = tmp_path / "hidden"
    hidden.mkdir()
    moved = [p for p in export_channel.rglob("cuenv-hello-*") if p.is_file()]
    assert moved
    try:
        for p in moved:
            p.rename(hidden / p.name)
        done, home = _unpack(conda_archive, tmp_path)
    finally:
        for p in moved:
            (hidden / p.name).rename(p)
    assert done.returncode == 0, done.stderr
    assert "1 of " in done.stderr and "packages were checked against their records in the archive only" in done.stderr


def test_a_package_record_with_another_hash_is_refused(conda_archive: Path, tmp_path: Path) -> None:
    def edit(m: Members) -> None:
        name = next(n for n in m if n.startswith("conda-meta/cuenv-hello"))
        info, raw = m[name]
        record = json.loads(raw or b"{}")
        record["sha256"] = "0" * 64
        m[name] = (info, json.dumps(record).encode())

    done, home = _unpack(_altered(conda_archive, tmp_path / "a.tar", payload=edit), tmp_path)
    _refused(done, home, "does not hold cuenv-hello 1.0 as its lock says")


@pytest.mark.parametrize(("name", "message"), [
    ("../../escaped", "Refusing archive {archive}: '../../escaped' would be extracted to"),
    ("/tmp/absolute-escape", "tmp/absolute-escape is in no package"),  # tar's filter made it relative
])
def test_tar_slip_is_a_clear_refusal(conda_archive: Path, tmp_path: Path, name: str, message: str) -> None:
    archive = _altered(conda_archive, tmp_path / "a.tar", payload=lambda m: _file(m, name, b"x"))
    done, home = _unpack(archive, tmp_path)
    _refused(done, home, message.format(archive=archive))
    assert not (tmp_path / "escaped").exists() and not Path(name).exists()


@pytest.mark.parametrize(("edit", "message"), [
    (lambda d: d.update(lock="not json"), "is not valid JSON"),
    (lambda d: d.update(lock="[" * 100_000 + "]" * 100_000), "nested more than 64 levels"),
    (lambda d: d["meta"].update(env_vars={"PROMPT_COMMAND": "touch /tmp/pwned"}), "PROMPT_COMMAND bash runs it"),
    (lambda d: d["meta"].update(env_vars={"LD_PRELOAD": "/tmp/x.so"}), "LD_PRELOAD changes how"),
    (lambda d: d["meta"]["layout"].update(bin_dirs=["/tmp"]), "it records '/tmp', outside its environment"),
    (lambda d: d["meta"].pop("layout"), "its metadata is damaged"),
    (lambda d: d.update(lock=json.dumps({"version": 1, "engine": "rattler", "platform": "linux-64", "packages": [
        {"name": "x\n-e /tmp", "version": "1", "kind": "conda", "url": "https://e.org/x", "sha256": "a" * 64}]})),
     "is not a single word"),
    (lambda d: d.update(lock=json.dumps({"version": 1, "engine": "rattler", "platform": "linux-64", "packages": [
        {"name": "x", "version": "1", "kind": "conda", "url": "https://e.org/x", "sha256": "a" * 64, "size": "9e99"}]})),
     "size: '9e99' is not a number of bytes"),
    (lambda d: d.update(lock=json.dumps({"version": 1, "engine": "rattler", "platform": "linux-64", "packages": [
        {"name": "x", "version": "1", "kind": "pypi", "url": "https://e.org/x-1-py3-none-any.whl", "sha256": "a" * 64}]})),
     "a conda environment with pip packages, which `cuenv pack` does not make"),
])
def test_a_hostile_manifest_is_refused_before_anything_is_written(conda_archive: Path, tmp_path: Path, edit, message) -> None:
    done, home = _unpack(_altered(conda_archive, tmp_path / "a.tar", manifest=edit), tmp_path, "--force")
    _refused(done, home, message)
    assert not (home / "envs").exists()
