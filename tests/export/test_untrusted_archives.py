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

from tests import sealing
from tests.export.exportkit import cuenv, recipe_with_env

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
        outer["env.tar.gz"] = (info, gzip.compress(buf.getvalue(), compresslevel=1))  # level 9 took 2.4 s a test
    _write(outer, out, "w")
    return out


def _file(members: Members, name: str, data: bytes, mode: int = 0o644) -> None:
    info = tarfile.TarInfo(name)
    info.mode = mode
    members[name] = (info, data)


@pytest.fixture(scope="module")
def conda_archive(export_channel: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The conftest's conda-12.1 environment, created and packed once for the module: each test unpacks it
    or an altered copy, never changing the archive itself."""
    root = tmp_path_factory.mktemp("packed")
    archive = root / "conda.cuenv.tar"
    with sealing.sealed(root / "sealed"):
        recipes = recipe_with_env(root / "recipes", name="conda-12.1", conda_channel=export_channel)
        cuenv("--recipes", str(recipes), "create", "conda-12.1", "--engine", "rattler")
        cuenv("pack", "conda-12.1", "-o", str(archive))
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
    ("../../escaped", "Refusing archive {archive}: member '../../escaped' is not a plain path inside the destination."),
    ("/tmp/absolute-escape", "Refusing archive {archive}: member '/tmp/absolute-escape' is not a plain path inside"),
])
def test_tar_slip_is_a_clear_refusal(conda_archive: Path, tmp_path: Path, name: str, message: str) -> None:
    archive = _altered(conda_archive, tmp_path / "a.tar", payload=lambda m: _file(m, name, b"x"))
    done, home = _unpack(archive, tmp_path)
    _refused(done, home, message.format(archive=archive))
    assert not (tmp_path / "escaped").exists() and not Path(name).exists()


def _special(name: str, kind: bytes, link: str = "") -> Callable[[Members], None]:
    def edit(m: Members) -> None:
        info = tarfile.TarInfo(name)
        info.type, info.linkname = kind, link
        m[name] = (info, None)
    return edit


@pytest.mark.parametrize(("edit", "message"), [
    (_special("etc/pipe", tarfile.FIFOTYPE), "member 'etc/pipe' is a FIFO, which this archive may not hold."),
    (_special("lib/out", tarfile.SYMTYPE, "../../../../../../etc/passwd"), "symlink 'lib/out' points to"),
])  # every other kind of member: tests/trust/test_archives.py, without packing an environment each time
def test_a_special_member_is_refused_without_hanging_or_writing(conda_archive: Path, tmp_path: Path, edit, message) -> None:
    """A FIFO once hung `unpack`; links out and devices are refused by cuenv's own checks on every Python."""
    done, home = _unpack(_altered(conda_archive, tmp_path / "a.tar", payload=edit), tmp_path)
    _refused(done, home, message)


def test_a_gzip_bomb_is_refused_before_anything_is_written(conda_archive: Path, tmp_path: Path) -> None:
    """256 MiB of zeros in a 250 kB payload: refused by the ratio after a few MiB of reading, nothing written."""
    with tarfile.open(conda_archive, "r:") as tar:
        outer = _members(tar)
    info, _ = outer["env.tar.gz"]
    buf = io.BytesIO()
    with gzip.GzipFile(fileobj=buf, mode="wb", compresslevel=9) as gz, tarfile.open(fileobj=gz, mode="w|") as inner:
        zeros = tarfile.TarInfo("lib/libzeros.so")
        zeros.size = 256 << 20
        inner.addfile(zeros, io.BytesIO(bytes(zeros.size)))
    outer["env.tar.gz"] = (info, buf.getvalue())
    assert len(buf.getvalue()) < 1 << 20
    archive = tmp_path / "bomb.tar"
    _write(outer, archive, "w")
    done, home = _unpack(archive, tmp_path)
    _refused(done, home, "expands to more than 200 times its compressed size (a compression bomb?) at member "
                         "'lib/libzeros.so'")


def test_a_fifo_given_as_the_archive_is_refused_without_blocking(tmp_path: Path) -> None:
    import os

    fifo = tmp_path / "pipe.cuenv.tar"
    os.mkfifo(fifo)
    done, home = _unpack(fifo, tmp_path)
    _refused(done, home, "is not a regular file (a folder, FIFO or device is no archive)")


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


# -- code from an archive: activation scripts and the smoke test (issue 31 §4) --------------------------
def _forged_scripts(marker: Path) -> Callable[[Members], None]:
    """conda activation scripts (every shell, both phases) and a post-link script added to a package's
    record with their own hashes: the archive vouches for them, nothing else does."""
    import hashlib

    scripts = {f"etc/conda/{phase}.d/evil.{ext}": f"touch '{marker}.{phase}.{ext}'\n".encode()
               for phase in ("activate", "deactivate") for ext in ("sh", "fish")}
    scripts["bin/.cuenv-hello-post-link.sh"] = f"touch '{marker}.post-link'\n".encode()

    def edit(m: Members) -> None:
        name = next(n for n in m if n.startswith("conda-meta/cuenv-hello"))
        info, raw = m[name]
        record = json.loads(raw or b"{}")
        for path, data in scripts.items():
            _file(m, path, data, 0o755)
            record["paths_data"]["paths"].append({"_path": path, "path_type": "hardlink",
                                                  "sha256": hashlib.sha256(data).hexdigest(), "size_in_bytes": len(data)})
        m[name] = (info, json.dumps(record).encode())
    return edit


class _Hidden:
    """The channel's cuenv-hello package moved away: unpack cannot hold it to the package itself."""

    def __init__(self, channel: Path, tmp_path: Path) -> None:
        self.moved = [p for p in channel.rglob("cuenv-hello-*") if p.is_file()]
        self.hidden = tmp_path / "hidden"

    def __enter__(self) -> None:
        assert self.moved
        self.hidden.mkdir()
        for p in self.moved:
            p.rename(self.hidden / p.name)

    def __exit__(self, *exc: object) -> None:
        for p in self.moved:
            (self.hidden / p.name).rename(p)


def test_activation_scripts_on_the_archives_word_alone_never_run(conda_archive: Path, export_channel: Path,
                                                                 tmp_path: Path) -> None:
    """The forged record's activate.d/deactivate.d scripts (sh and fish) run in no shell: bash, zsh, fish."""
    import os
    import shutil
    import subprocess
    import sys

    from tests.export.exportkit import REPO

    marker = tmp_path / "ran"
    archive = _altered(conda_archive, tmp_path / "a.tar", payload=_forged_scripts(marker))
    with _Hidden(export_channel, tmp_path):
        done, home = _unpack(archive, tmp_path)
    assert done.returncode == 0, done.stderr
    assert "conda activation scripts of packages checked against the archive only will not run" in done.stderr
    assert "etc/conda/activate.d/evil.sh" in done.stderr
    env = home / "envs" / "conda-12.1"
    assert (env / "etc/conda/activate.d/evil.sh").is_file()  # kept as the package's file, never sourced
    shim = tmp_path / "bin"
    shim.mkdir()
    (shim / "cuenv").write_text(f"#!/bin/sh\nPYTHONPATH='{REPO}' exec '{sys.executable}' -m cuenv \"$@\"\n")
    (shim / "cuenv").chmod(0o755)
    shells = [s for s in ("bash", "zsh", "fish") if shutil.which(s)]
    assert "bash" in shells
    for shell in shells:
        text = cuenv("shell-env", shell, "use", "conda-12.1", env={"CUENV_HOME": str(home)}).stdout
        assert "evil" not in text and "evil" not in (env / ".cuenv" / f"activate.{shell}").read_text()
        script = (f"eval (cuenv shell-env fish use conda-12.1 | string collect); source '{env}/.cuenv/activate.fish'"
                  if shell == "fish" else
                  f"eval \"$(cuenv shell-env {shell} use conda-12.1)\"; . '{env}/.cuenv/activate.{shell}'")
        ran = subprocess.run([shell, "-c", script], capture_output=True, text=True, timeout=60,
                             env={**os.environ, "CUENV_HOME": str(home), "PATH": f"{shim}:{os.environ['PATH']}"})
        assert ran.returncode == 0, (shell, ran.stderr)
        assert not list(tmp_path.glob("ran.*")), f"a script from the archive ran in {shell}"


def test_proven_packages_keep_their_activation_scripts(conda_archive: Path, tmp_path: Path) -> None:
    """With the package at hand its record is held to the package itself: a forged script is refused outright."""
    archive = _altered(conda_archive, tmp_path / "a.tar", payload=_forged_scripts(tmp_path / "ran"))
    done, home = _unpack(archive, tmp_path)
    _refused(done, home, "is not the file of cuenv-hello 1.0: the package itself lists another")


def test_an_archives_smoke_test_runs_only_with_consent(conda_archive: Path, tmp_path: Path) -> None:
    marker = tmp_path / "smoke-ran"
    archive = _altered(conda_archive, tmp_path / "a.tar", manifest=lambda d: d["meta"].update(
        smoke_test={"command": ["sh", "-c", f"touch '{marker}'"]}))
    done, home = _unpack(archive, tmp_path)
    assert done.returncode == 0, done.stderr
    assert "smoke test" in done.stderr and "--trust-smoke-test" in done.stderr
    victim = {"CUENV_HOME": str(home)}
    refused = cuenv("test", "conda-12.1", env=victim, check=False)
    assert refused.returncode == 2 and not marker.exists(), refused.stderr
    assert "came in" in refused.stderr and "touch" in refused.stderr
    assert "`cuenv test conda-12.1 --trust-smoke-test`" in refused.stderr
    out = tmp_path / "docker"
    exported = cuenv("export", "conda-12.1", "--format", "dockerfile", "-o", str(out), env=victim, check=False)
    if exported.returncode == 0:
        assert "HEALTHCHECK" not in (out / "Dockerfile").read_text()
        assert "--trust-smoke-test" in exported.stderr + exported.stdout
    ran = cuenv("test", "conda-12.1", "--trust-smoke-test", env=victim, check=False)
    assert marker.exists(), ran.stderr  # consent given: it runs, and keeps its consent
    marker.unlink()
    assert cuenv("test", "conda-12.1", env=victim, check=False).returncode == 0 and marker.exists()
