"""cuenv's own archive extractor (cuenv.trust.archives, issue 31 §4): hostile archives generated as a class.

Every generated archive either extracts with everything inside the destination (plain files, folders,
symlinks that resolve inside), or is refused in one line with nothing written, on any Python
(Debian 12's 3.11.2 has no tarfile filters; .ci/run runs this file there too)."""

from __future__ import annotations

import gzip
import io
import os
import stat
import tarfile
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from cuenv.trust import archives

FUZZ = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
COMPONENTS = st.sampled_from(["a", "b", "lib", "..", ".", "", "x\ny", "\x1b]0;t\x07", "c" * 300, "é", "\udcff"])
PATHS = st.builds(lambda lead, parts: lead + "/".join(parts), st.sampled_from(["", "/", "./", "../"]),
                  st.lists(COMPONENTS, min_size=1, max_size=4))
TYPES = st.sampled_from([tarfile.REGTYPE, tarfile.AREGTYPE, tarfile.DIRTYPE, tarfile.SYMTYPE, tarfile.LNKTYPE,
                         tarfile.FIFOTYPE, tarfile.CHRTYPE, tarfile.BLKTYPE, tarfile.CONTTYPE, b"S"])


def _tar(members: list[tuple[str, bytes, str, bytes, int]], compression: str) -> bytes:
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode=f"w:{compression}" if compression else "w", format=tarfile.PAX_FORMAT) as tar:
        for name, kind, link, data, mode in members:
            info = tarfile.TarInfo(name)
            info.type, info.linkname, info.mode = kind, link, mode
            regular = kind in (tarfile.REGTYPE, tarfile.AREGTYPE, tarfile.CONTTYPE)
            info.size = len(data) if regular else 0
            tar.addfile(info, io.BytesIO(data) if regular else None)
    return buf.getvalue()


MEMBERS = st.lists(st.tuples(PATHS, TYPES, PATHS, st.binary(max_size=64), st.sampled_from([0o644, 0o4755, 0o777, 0o000])),
                   max_size=8)


def _inside(path: Path, root: Path) -> bool:
    real, top = os.path.realpath(path), os.path.realpath(root)
    return real == top or real.startswith(top + os.sep)


def _extract(data: bytes, dest: Path, compression: str, **kw) -> list[archives.Member]:
    return archives.extract(lambda: io.BytesIO(data), dest, compression=compression, what="archive a.tar", **kw)


@FUZZ
@given(members=MEMBERS, compression=st.sampled_from(["", "gz", "bz2", "xz"]))
def test_every_archive_lands_inside_or_is_refused_with_nothing_written(tmp_path_factory, members, compression) -> None:
    try:
        data = _tar(members, compression)
    except (ValueError, UnicodeError):
        return  # tarfile itself cannot write that header
    root = tmp_path_factory.mktemp("x")
    dest = root / "dest"
    try:
        listing = _extract(data, dest, compression)
    except (archives.ArchiveRefused, archives.ArchiveDamaged) as exc:
        assert "\n" not in exc.message and "\x1b" not in exc.message
        assert not dest.exists()
        assert sorted(os.listdir(root)) == []
        return
    assert sorted(os.listdir(root)) == ["dest"]
    for where, dirs, files in os.walk(dest):
        for name in dirs + files:
            path = Path(where, name)
            mode = path.lstat().st_mode
            assert stat.S_ISREG(mode) or stat.S_ISDIR(mode) or stat.S_ISLNK(mode)
            assert _inside(path, dest), path
            if not stat.S_ISLNK(mode):
                assert not mode & (stat.S_ISUID | stat.S_ISGID | stat.S_ISVTX | stat.S_IWGRP | stat.S_IWOTH)
    assert all(".." not in m.name.split("/") and not m.name.startswith("/") for m in listing)


SIMPLE = st.builds(lambda lead, parts: lead + "/".join(parts), st.sampled_from(["", "/"]),
                   st.lists(st.sampled_from(["a", "b", "d", "e", "f", "..", ".", ""]), min_size=1, max_size=6))


@FUZZ
@given(links=st.dictionaries(st.sampled_from(["a", "b", "d/a", "d/b", "d/e/f"]), SIMPLE.filter(bool), max_size=5),
       start=st.sampled_from(["", "d", "d/e"]), target=SIMPLE)
def test_a_resolved_target_never_leaves_the_root(tmp_path_factory, links, start, target) -> None:
    """Checked against the kernel: the same links made for real, the target resolved by realpath."""
    got = archives.resolve(start, target, links)
    if got is None:
        return
    root = tmp_path_factory.mktemp("r") / "root"
    (root / "d" / "e").mkdir(parents=True)
    for name, to in links.items():
        os.symlink(to, root / name)
    assert _inside(Path(os.path.realpath(root / start / target)), root)


def _bomb(size: int) -> bytes:
    buf = io.BytesIO()
    with gzip.GzipFile(fileobj=buf, mode="wb", compresslevel=9) as gz, tarfile.open(fileobj=gz, mode="w|") as tar:
        info = tarfile.TarInfo("zeros")
        info.size = size
        block = bytes(1 << 20)

        class Zeros(io.RawIOBase):
            left = size

            def readable(self) -> bool:
                return True

            def readinto(self, b) -> int:  # type: ignore[override]  # a buffer of any kind, as io passes it
                n = min(len(b), self.left, len(block))
                b[:n] = block[:n]
                self.left -= n
                return n

        tar.addfile(info, io.BufferedReader(Zeros(), 1 << 20))
    return buf.getvalue()


def test_a_gzip_bomb_is_refused_after_reading_a_little(tmp_path: Path) -> None:
    data = _bomb(64 << 20)
    assert len(data) < 100_000
    with pytest.raises(archives.ArchiveRefused, match="expands to more than 200 times its compressed size"):
        _extract(data, tmp_path / "dest", "gz")
    assert not (tmp_path / "dest").exists()


@pytest.mark.slow
def test_a_3_gib_gzip_bomb_is_refused_before_anything_is_written(tmp_path: Path) -> None:
    data = _bomb(3 << 30)
    with pytest.raises(archives.ArchiveRefused, match="a compression bomb"):
        _extract(data, tmp_path / "dest", "gz")
    assert not (tmp_path / "dest").exists()


def test_a_member_over_the_limits_is_refused_from_its_header(tmp_path: Path) -> None:
    data = _tar([("big", tarfile.REGTYPE, "", b"x" * 100, 0o644)], "")
    with pytest.raises(archives.ArchiveRefused, match="is 100 bytes, more than the 99 bytes cuenv extracts for one file"):
        _extract(data, tmp_path / "d1", "", limits=archives.Limits(member=99))
    many = _tar([(f"f{i}", tarfile.REGTYPE, "", b"", 0o644) for i in range(5)], "gz")
    with pytest.raises(archives.ArchiveRefused, match="more than 4 members"):
        _extract(many, tmp_path / "d2", "gz", limits=archives.Limits(members=4))
    assert not (tmp_path / "d1").exists() and not (tmp_path / "d2").exists()


def test_a_real_tree_extracts_with_links_and_modes(tmp_path: Path) -> None:
    data = _tar([
        ("lib", tarfile.DIRTYPE, "", b"", 0o755),
        ("lib/libcudart.so.12", tarfile.REGTYPE, "", b"\x7fELF", 0o755),
        ("lib/libcudart.so", tarfile.SYMTYPE, "libcudart.so.12", b"", 0o777),
        ("bin/tool", tarfile.REGTYPE, "", b"#!/bin/sh\n", 0o4755),
        ("bin/tool2", tarfile.LNKTYPE, "bin/tool", b"", 0o755),
        ("include", tarfile.SYMTYPE, "lib/../lib", b"", 0o777),
    ], "gz")
    _extract(data, tmp_path / "env", "gz")
    env = tmp_path / "env"
    assert (env / "lib/libcudart.so").read_bytes() == b"\x7fELF"
    assert os.readlink(env / "lib/libcudart.so") == "libcudart.so.12"
    assert (env / "bin/tool").stat().st_mode & 0o7777 == 0o755  # setuid dropped
    assert os.path.samefile(env / "bin/tool", env / "bin/tool2")


@pytest.mark.parametrize(("members", "why"), [
    ([("d", tarfile.DIRTYPE, "", b"", 0o755), ("d/l1", tarfile.SYMTYPE, ".", b"", 0o777),
      ("d/l2", tarfile.SYMTYPE, "l1/../..", b"", 0o777)], "symlink 'd/l2' points to 'l1/../..', outside"),
    ([("l", tarfile.SYMTYPE, ".", b"", 0o777), ("l/x", tarfile.REGTYPE, "", b"x", 0o644)], "under 'l', which is a symlink"),
    ([("loop", tarfile.SYMTYPE, "loop/x", b"", 0o777)], "symlink 'loop' points to"),
    ([("x", tarfile.REGTYPE, "", b"1", 0o644), ("x", tarfile.REGTYPE, "", b"2", 0o644)], "member 'x' comes twice"),
    ([("f", tarfile.FIFOTYPE, "", b"", 0o644)], "member 'f' is a FIFO"),
    ([("t\x1b]0;pwned\x07", tarfile.REGTYPE, "", b"", 0o644)], r"member 't\\x1b]0;pwned\\x07' is not a plain path"),
])
def test_known_escapes_are_refused_by_name(tmp_path: Path, members, why: str) -> None:
    """CVE-2025-4517's class (a link chain that leaves the tree), writing through a link, overwriting."""
    with pytest.raises(archives.ArchiveRefused, match=why.replace("(", r"\(").replace(")", r"\)")):
        _extract(_tar(members, "gz"), tmp_path / "dest", "gz")
    assert not (tmp_path / "dest").exists()


def test_the_destination_must_be_new_or_empty(tmp_path: Path) -> None:
    (tmp_path / "dest").mkdir()
    (tmp_path / "dest" / "old").write_text("x")
    with pytest.raises(archives.UsageError, match="not a new or empty folder"):
        _extract(_tar([("a", tarfile.REGTYPE, "", b"a", 0o644)], ""), tmp_path / "dest", "")


def test_an_archive_that_changes_between_the_passes_is_refused(tmp_path: Path) -> None:
    first = _tar([("a", tarfile.REGTYPE, "", b"a", 0o644)], "")
    second = _tar([("a", tarfile.SYMTYPE, "../../etc", b"", 0o777)], "")
    streams = iter([io.BytesIO(first), io.BytesIO(second)])
    with pytest.raises(archives.ArchiveRefused, match="changed while it was being read"):
        archives.extract(lambda: next(streams), tmp_path / "dest", compression="", what="archive a.tar")
    assert not (tmp_path / "dest").is_symlink() and not (tmp_path / "dest" / "a").is_symlink()


def test_a_cut_archive_is_damaged_not_an_internal_error(tmp_path: Path) -> None:
    data = _tar([("a", tarfile.REGTYPE, "", os.urandom(5000), 0o644)], "gz")
    with pytest.raises(archives.ArchiveDamaged, match="is damaged"):
        _extract(data[: len(data) // 2], tmp_path / "dest", "gz")


def test_only_proven_conda_scripts_are_rendered(tmp_path: Path) -> None:
    """`cuenv use` of an unpacked archive sources only the scripts recorded as proven; none from an older unpack."""
    from cuenv.activation.render import render_target
    from cuenv.activation.target import ActivationTarget, CudaLayout
    from cuenv.envs.meta import UnpackedFrom

    prefix = tmp_path / "env"
    for phase in ("activate", "deactivate"):
        (prefix / "etc/conda" / f"{phase}.d").mkdir(parents=True)
        for name in ("ok", "evil"):
            for ext in ("sh", "fish"):
                (prefix / "etc/conda" / f"{phase}.d" / f"{name}.{ext}").write_text("true\n")
    ok = {f"etc/conda/{p}.d/ok.{e}" for p in ("activate", "deactivate") for e in ("sh", "fish")}
    layout = CudaLayout(prefix=prefix, kind="conda", bin_dirs=(prefix / "bin",))
    for unpacked, runs in [(None, {"ok", "evil"}), (UnpackedFrom("a.tar", proven_scripts=tuple(sorted(ok))), {"ok"}),
                           (UnpackedFrom("a.tar"), set())]:
        meta = _meta(layout=layout, unpacked_from=unpacked)
        target = ActivationTarget(name="e", layout=layout, conda_scripts=meta.proven_scripts())
        for shell in ("bash", "zsh", "fish"):
            text = render_target(target, shell, envs_dir=tmp_path, prompt=False)
            assert {n for n in ("ok", "evil") if f"/{n}." in text} == runs, (unpacked, shell)


def _meta(**fields: Any) -> Any:
    from cuenv.activation.target import CudaLayout
    from cuenv.envs.meta import EnvMeta, RecipeRef
    from cuenv.knowledge.stack import Stack

    base = EnvMeta(name="e", recipe=RecipeRef("cuda-12.1"), engine="rattler", stack=Stack(label="e", cuda="12.1"),
                   layout=CudaLayout(prefix=Path("/e"), kind="conda"))
    return base.replace(**fields)


def test_an_archives_smoke_test_needs_consent() -> None:
    from cuenv.envs.meta import EnvMeta, SmokeTest, UnpackedFrom

    test = SmokeTest(command=("sh", "-c", "true"))
    recipe = _meta(smoke_test=test)
    unpacked = _meta(unpacked_from=UnpackedFrom("/a.tar", smoke_test=test))
    older = EnvMeta.from_json(dict(recipe.to_json(), schema=1, unpacked_from={"archive": "/a.tar"}))  # before issue 31
    assert recipe.runnable_smoke_test() == test and recipe.archived_smoke_test() is None
    for meta in (unpacked, older):
        assert meta.runnable_smoke_test() is None and meta.archived_smoke_test() == test
        consented = meta.trusted()
        assert consented.runnable_smoke_test() == test and consented.archived_smoke_test() is None


def test_a_wheels_bomb_or_link_member_is_a_finding_never_copied_out(tmp_path: Path) -> None:
    """`cuenv check` of a wheel reads its libraries one at a time: a member that is a symlink, or that
    expands past the ratio, is named as not read (before, 64 MiB of zeros went to a temporary file)."""
    import zipfile

    from cuenv.binaries.scan import scan

    wheel = tmp_path / "evil-1.0-py3-none-manylinux_2_17_x86_64.whl"
    with zipfile.ZipFile(wheel, "w", compression=zipfile.ZIP_DEFLATED, compresslevel=9) as zf:
        zf.writestr("evil/libzeros.so", bytes(64 << 20))
        link = zipfile.ZipInfo("evil/liblink.so")
        link.external_attr = (stat.S_IFLNK | 0o777) << 16
        zf.writestr(link, "/etc/passwd")
    report = scan(wheel, cache_dir=tmp_path / "cache")
    problems = {r.path.rsplit("!", 1)[-1]: r.problems for r in report.files}
    assert "a compression bomb" in problems["evil/libzeros.so"][0]
    assert "is not a regular file" in problems["evil/liblink.so"][0]


@pytest.mark.parametrize("kind", [tarfile.SYMTYPE, tarfile.DIRTYPE, tarfile.FIFOTYPE, tarfile.CHRTYPE])
def test_a_pack_whose_wheel_is_not_a_file_is_refused(tmp_path: Path, kind: bytes) -> None:
    """`cuenv unpack` once ended in an internal error on a wheel that was a link, folder, device or FIFO."""
    from cuenv.export import pack

    archive = tmp_path / "a.cuenv.tar"
    data = _tar([(pack.MANIFEST, tarfile.REGTYPE, "", b"{}", 0o644), ("wheels/x-1-py3-none-any.whl", kind, "x", b"", 0o644)], "")
    archive.write_bytes(data)
    with pytest.raises(archives.ArchiveRefused, match="member 'wheels/x-1-py3-none-any.whl' is a"):
        pack.read_manifest(archive)


@pytest.mark.parametrize(("headers", "why"), [
    ([b"x" * (2 << 20)], "an extended header"),  # tarfile would read it whole into memory
    ([b"6 a=b\n"] * 2000, "more than 8 in a row"),  # tarfile recursed through them: RecursionError
])
def test_extended_headers_are_bounded(tmp_path: Path, headers: list[bytes], why: str) -> None:
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz", format=tarfile.GNU_FORMAT) as tar:
        for data in headers:
            info = tarfile.TarInfo("././@PaxHeader")
            info.type, info.size = tarfile.XHDTYPE, len(data)
            tar.addfile(info, io.BytesIO(data))
        tar.addfile(tarfile.TarInfo("a"), io.BytesIO(b""))
    with pytest.raises(archives.ArchiveRefused, match=why):
        _extract(buf.getvalue(), tmp_path / "dest", "gz")


def test_link_resolution_has_a_budget_shared_by_every_link() -> None:
    """40 hops per link bound one resolution; a budget of path components bounds them all together
    (a million links, each hopping 40 times through 4,096-character targets, would take hours)."""
    assert archives.resolve("", "a/" * 100, {}) == "a" * 0 + "/".join(["a"] * 100)
    steps = [50]
    assert archives.resolve("", "a/" * 100, {}, steps) is None and steps[0] < 0
    links = {"l0": "."} | {f"l{i}": f"l{i - 1}/" * 3 + "." for i in range(1, 30)}
    assert archives.resolve("", "l29/x", links) is None  # more than 40 hops: refused like a loop
