"""Every read is bounded (issue 31 §8): only regular files are read, without blocking, within a size limit.

The class is "a file cuenv reads is not a regular file, or is endless": a FIFO with a writer that never
closes it (a blocking read waits forever), /dev/zero (a read never ends), a socket, a folder. Before, a
FIFO as an environment's meta.json hung `list`, `info`, `run`, `lock` and `remove`, and /dev/zero there
grew them to 12-24 GB. The commands run as real processes, each under a timeout and a 1 GiB address-space
limit, so a hang or a runaway read fails the test instead of the machine."""

from __future__ import annotations

import os
import resource
import socket
import subprocess
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from cuenv.trust import Untrusted, limits

MEMORY = 1 << 30  # the address-space limit of each command (Python and cuenv need ~300 MB of it)


def _limited() -> None:
    resource.setrlimit(resource.RLIMIT_AS, (MEMORY, MEMORY))


def make(kind: str, path: Path, keep: list) -> None:
    """``path`` as a file of ``kind``; ``keep`` holds what must stay open (a FIFO's writer, a socket)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    if kind == "fifo":
        os.mkfifo(path)
        keep.append(os.open(path, os.O_RDWR))  # a writer that never closes: a blocking read never ends
    elif kind == "devzero":
        path.symlink_to("/dev/zero")
    elif kind == "socket":
        sock = socket.socket(socket.AF_UNIX)
        sock.bind(str(path))
        keep.append(sock)
    elif kind == "folder":
        path.mkdir()
    elif kind == "huge":
        with open(path, "wb") as fh:  # sparse: 64 GiB of NUL bytes claimed, no disk used
            fh.truncate(64 << 30)
    else:
        raise AssertionError(kind)


def _close(keep: list) -> None:
    for item in keep:
        if isinstance(item, int):
            os.close(item)
        else:
            item.close()


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(kind=st.sampled_from(["fifo", "devzero", "socket", "folder", "huge"]), limit=st.integers(1, 1 << 20))
def test_read_bytes_refuses_what_is_not_a_bounded_regular_file(tmp_path_factory, kind: str, limit: int) -> None:
    path = tmp_path_factory.mktemp("r") / "meta.json"
    keep: list = []
    make(kind, path, keep)
    try:
        with pytest.raises(Untrusted) as got:
            limits.read_bytes(path, what="Environment metadata", limit=limit)
        assert "\n" not in got.value.message and str(path) in got.value.message
        expected = {"fifo": "a FIFO", "devzero": "a device", "socket": "a socket", "folder": "a folder", "huge": "larger than"}[kind]
        assert expected in got.value.message
    finally:
        _close(keep)


def test_dev_null_reads_empty_and_a_regular_file_whole(tmp_path: Path) -> None:
    assert limits.read_bytes(os.devnull, what="Config file", limit=10) == b""
    (tmp_path / "f").write_bytes(b"x" * 10)
    assert limits.read_bytes(tmp_path / "f", what="File", limit=10) == b"x" * 10
    assert limits.regular_file_problem(tmp_path / "f") is None
    assert limits.regular_file_problem(tmp_path) == "is a folder, not a regular file"


def _env(envs: Path, name: str) -> Path:
    meta = envs / name / ".cuenv"
    meta.mkdir(parents=True)
    (meta / "complete").write_text("")
    return meta / "meta.json"


COMMANDS = [["list"], ["info", "bad"], ["run", "bad", "--", "true"], ["lock", "bad"], ["list", "--json"],
            ["remove", "bad", "--yes"]]


@pytest.mark.parametrize("kind", ["fifo", "devzero", "huge"])
def test_a_broken_meta_json_never_hangs_or_grows_a_command(kind: str, envs: Path, cuenv_exe: list[str], work: Path) -> None:
    keep: list = []
    make(kind, _env(envs, "bad"), keep)
    try:
        # the FIFO hung every command; /dev/zero and the huge file grew list, run and remove
        for argv in COMMANDS if kind == "fifo" else [["list"], ["run", "bad", "--", "true"], ["remove", "bad", "--yes"]]:
            done = subprocess.run([*cuenv_exe, *argv], capture_output=True, text=True, timeout=60, preexec_fn=_limited,
                                  env={**os.environ, "CUENV_DRIVER": "550.54.15"})
            assert "Traceback" not in done.stderr and "internal error" not in done.stderr, (argv, done.stderr)
            assert done.returncode in (0, 1, 2), (argv, done.returncode, done.stderr)
            if argv == ["list"]:
                assert "bad" in done.stdout and "incomplete" in done.stdout
    finally:
        _close(keep)
    assert not (envs / "bad").exists()  # `remove` still removes it


def test_fifty_broken_environments_keep_list_small(envs: Path, cuenv_exe: list[str]) -> None:
    for i in range(50):
        with open(_env(envs, f"broken{i:02d}"), "wb") as fh:
            fh.truncate(64 << 20)  # 64 MiB each (sparse): read whole, 50 of them were gigabytes
    done = subprocess.run([*cuenv_exe, "list"], capture_output=True, text=True, timeout=120, preexec_fn=_limited,
                          env={**os.environ, "CUENV_DRIVER": "550.54.15"})
    assert done.returncode == 0, done.stderr
    assert sum("incomplete" in line for line in done.stdout.splitlines()) == 50


@pytest.mark.parametrize("kind", ["fifo", "devzero", "folder"])
def test_optional_files_that_are_not_regular_read_as_absent(kind: str, tmp_path: Path) -> None:
    """Caches, a toolkit's version files, a tool's config: a FIFO or device there is "not known", at once."""
    from cuenv.engines import mirrors
    from cuenv.machine import toolkits

    keep: list = []
    root = tmp_path / "cuda"
    make(kind, root / "version.json", keep)
    make(kind, root / "version.txt", keep)
    conf = tmp_path / "uv" / "uv.toml"
    make(kind, conf, keep)
    try:
        with pytest.raises(OSError):
            limits.read_small(root / "version.json")
        assert toolkits.version_from_files(root) is None
        assert mirrors._condarc(conf) == {}
    finally:
        _close(keep)
