"""Scan files, folders and wheels for CUDA fat binaries; cache per file; name the package owning each.

The edge around the pure readers (``elf``, ``fatbin``): it opens and memory-maps files, reads
wheel members one at a time (never unpacking a whole wheel), and keeps a per-file cache keyed by
size and modification time, so a second scan of a multi-gigabyte environment only stats files.
Nothing here raises for a bad file: an unreadable or corrupt file is a report with a problem.
"""

from __future__ import annotations

import csv
import io
import json
import mmap
import os
import shutil
import stat
import tempfile
import zipfile
import zlib
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Final

from cuenv.binaries import elf, fatbin
from cuenv.binaries.fatbin import Entry, Fatbin
from cuenv.binaries.names import looks_binary
from cuenv.knowledge.packages import canonical
from cuenv.trust import limits
from cuenv.trust.archives import zip_member_problem

# What reading a damaged wheel can raise: a bad CRC or header (BadZipFile), a broken deflate stream
# (zlib.error), a cut stream (EOFError), a version or method zipfile lacks (NotImplementedError),
# an encrypted member (RuntimeError), an impossible size or offset (ValueError).
_ZIP_ERRORS: Final = (OSError, zipfile.BadZipFile, zlib.error, EOFError, NotImplementedError, RuntimeError, ValueError)
CACHE_FORMAT: Final = 2  # bump when FileReport's stored shape or the readers' results change
CACHE_FILE: Final = "fatbin-scan.json"  # inside the folder the caller gives (cuenv's cache dir)


@dataclass(frozen=True)
class Owner:
    name: str
    version: str
    source: str  # pip | conda | wheel

    @property
    def label(self) -> str:
        return f"{self.name}=={self.version}" if self.source != "conda" else f"{self.name} {self.version} (conda)"


@dataclass(frozen=True)
class FileReport:
    path: str  # as found: absolute, or "WHEEL!member" inside a wheel
    size: int
    fatbins: tuple[Fatbin, ...] = ()
    problems: tuple[str, ...] = ()
    owner: Owner | None = None

    @property
    def entries(self) -> tuple[Entry, ...]:
        return tuple(e for fb in self.fatbins for e in fb.entries)

    @property
    def has_gpu_code(self) -> bool:
        return any(e.loadable for e in self.entries)

    def archs(self, kind: str) -> tuple[str, ...]:
        """Distinct architectures of one kind, oldest first: ("sm_75", "sm_86")."""
        found = {(e.arch, e.variant): e.name for e in self.entries if e.kind == kind}
        return tuple(found[k] for k in sorted(found))


@dataclass(frozen=True)
class ScanReport:
    target: str
    files: tuple[FileReport, ...]  # files with GPU code or problems; others are only counted
    scanned: int  # binary-looking files looked at
    cached: int  # of those, answered from the cache
    problems: tuple[str, ...] = field(default=())  # about the target as a whole


# -- one file ------------------------------------------------------------------------------
def read_buffer(data: elf.Buffer, path: str) -> FileReport:
    """The report for one file's bytes: an ELF file, a standalone fat binary, or neither (no GPU code)."""
    size = len(data)
    if elf.is_elf(data):
        try:
            parsed = elf.read(data)
        except elf.ElfError as exc:
            return FileReport(path, size, problems=(f"not a valid ELF file: {exc}",))
        if parsed.machine == elf.EM_CUDA:  # a bare cubin given by name: device code, but no fat binary to judge
            return FileReport(path, size)
        fatbins: list[Fatbin] = []
        problems: list[str] = []
        for section in parsed.fatbin_regions():
            found = fatbin.parse_region(data, section.offset, section.offset + section.size)
            fatbins += found.fatbins
            problems += found.problems
        return FileReport(path, size, tuple(fatbins), tuple(problems))
    if data[0:4] == fatbin.MAGIC_BYTES:
        found = fatbin.parse(data)
        return FileReport(path, size, found.fatbins, found.problems)
    return FileReport(path, size)


SPARSE_MIN = 64 << 20  # below this a file is scanned whatever it holds


def scan_file(path: Path) -> FileReport:
    try:
        with open(path, "rb") as fh:
            st = os.fstat(fh.fileno())
            size = st.st_size
            if size == 0:
                return FileReport(str(path), 0)
            held = st.st_blocks * 512
            if size > SPARSE_MIN and held < size // 2:
                # Offsets and counts are bounded by the file's size; a sparse file's size is a claim (issue 31
                # §8: a 64 GB "fat binary" of holes grew `check` to 2.9 GB). No shared library is sparse.
                return FileReport(str(path), size, problems=(
                    f"a sparse file: it claims {size} bytes but holds {held}; not scanned",))
            with mmap.mmap(fh.fileno(), 0, access=mmap.ACCESS_READ) as data:
                return read_buffer(data, str(path))
    except (OSError, ValueError) as exc:
        return FileReport(str(path), 0, problems=(f"cannot read: {exc}",))


# -- the cache -------------------------------------------------------------------------------
class Cache:
    """Reports by absolute path, valid while the file keeps its size and mtime. One JSON file."""

    def __init__(self, folder: Path | None) -> None:
        self.file = folder / CACHE_FILE if folder is not None else None
        self.rows: dict[str, dict[str, Any]] = {}  # parsed JSON, checked as it is read
        self.dirty = False
        if self.file is not None:
            try:
                doc = json.loads(limits.read_small(self.file, limit=limits.LOCK))
                if doc.get("format") == CACHE_FORMAT and isinstance(doc.get("files"), dict):
                    self.rows = doc["files"]
            except (OSError, ValueError, KeyError, TypeError, AttributeError):
                self.rows = {}  # a missing or damaged cache is only a slower scan

    def row(self, key: str, st: os.stat_result) -> dict[str, Any] | None:
        """The stored row for ``key`` while the file keeps its size and mtime; None otherwise."""
        row = self.rows.get(key)
        if not isinstance(row, dict) or row.get("size") != st.st_size or row.get("mtime") != st.st_mtime_ns:
            return None
        return row

    def get(self, key: str, st: os.stat_result) -> FileReport | None:
        row = self.row(key, st)
        if row is None:
            return None
        try:
            return _from_json(row["report"])
        except (KeyError, TypeError, ValueError):
            return None

    def put(self, key: str, st: os.stat_result, report: FileReport) -> None:
        self.rows[key] = {"size": st.st_size, "mtime": st.st_mtime_ns, "report": _to_json(report)}
        self.dirty = True

    def forget_under(self, folder: str, keep: set[str]) -> None:
        """Drop the rows of files under ``folder`` that a full scan of it no longer found (removed packages)."""
        prefix = folder.rstrip("/") + "/"
        gone = [key for key in self.rows if key.startswith(prefix) and key not in keep]
        for key in gone:
            del self.rows[key]
        self.dirty = self.dirty or bool(gone)

    def save(self) -> None:
        if self.file is None or not self.dirty:
            return
        try:
            self.file.parent.mkdir(parents=True, exist_ok=True)
            fd, tmp = tempfile.mkstemp(dir=self.file.parent, prefix=".fatbin-scan.")
            with os.fdopen(fd, "w") as fh:
                json.dump({"format": CACHE_FORMAT, "files": self.rows}, fh, separators=(",", ":"))
            os.replace(tmp, self.file)
            self.dirty = False
        except OSError:
            pass  # a read-only cache folder: the next scan is cold, nothing is wrong


def _to_json(report: FileReport) -> dict[str, object]:
    return {
        "size": report.size,
        "problems": list(report.problems),
        "fatbins": [[fb.offset, [[e.kind, e.arch, e.variant, e.compressed, e.ptx_version, e.size, e.empty]
                                 for e in fb.entries]] for fb in report.fatbins],
    }


def _from_json(doc: dict[str, Any]) -> FileReport:
    fatbins = tuple(Fatbin(int(off), tuple(Entry(str(k), int(a), str(v), bool(c), p, int(s), bool(x))
                                           for k, a, v, c, p, s, x in entries))
                    for off, entries in doc["fatbins"])
    return FileReport("", int(doc["size"]), fatbins, tuple(doc["problems"]))


# -- owners ----------------------------------------------------------------------------------
def owners(root: Path) -> dict[str, Owner]:
    """Absolute path -> the package that installed it, from pip's RECORD files and conda-meta."""
    found: dict[str, Owner] = {}
    for meta in sorted(root.glob("conda-meta/*.json")):
        try:
            doc = json.loads(limits.read_small(meta, limit=limits.META))
            owner = Owner(str(doc["name"]), str(doc["version"]), "conda")
            for rel in doc.get("files", []):
                found[os.path.normpath(root / rel)] = owner
        except (OSError, ValueError, KeyError, TypeError):
            continue  # a broken conda-meta record leaves its files unowned, as conda itself would
    for record in _records(root):
        site = record.parent.parent
        name, _, version = record.parent.name[: -len(".dist-info")].partition("-")
        owner = Owner(canonical(name), version, "pip")
        try:
            rows = list(csv.reader(io.StringIO(limits.read_small(record, limit=limits.LOCK, errors="replace"))))
        except (OSError, csv.Error):
            continue
        for row in rows:
            if row and row[0]:
                found[os.path.normpath(site / row[0])] = owner
    return found


def _records(root: Path) -> Iterator[Path]:
    for pattern in ("*.dist-info/RECORD", "lib/python*/site-packages/*.dist-info/RECORD",
                    "lib64/python*/site-packages/*.dist-info/RECORD", "Lib/site-packages/*.dist-info/RECORD"):
        yield from sorted(root.glob(pattern))


# -- folders, files, wheels ------------------------------------------------------------------
def scan(target: Path, *, cache_dir: Path | None = None) -> ScanReport:
    """A folder (an environment prefix, site-packages, a build tree), a wheel, or a single file."""
    cache = Cache(cache_dir)
    try:
        if target.is_dir():
            report = _scan_tree(target, cache)
        elif target.suffix == ".whl":
            report = _scan_wheel(target, cache)
        elif target.exists():
            report = _scan_files(str(target), [target], cache, owners={})
        else:
            report = ScanReport(str(target), (), 0, 0, (f"{target} does not exist",))
    finally:
        cache.save()
    return report


def _scan_tree(root: Path, cache: Cache) -> ScanReport:
    paths: list[Path] = []
    for folder, dirs, files in os.walk(root):
        dirs.sort()
        for name in sorted(files):
            if looks_binary(name):
                path = Path(folder, name)
                if not path.is_symlink():  # libx.so -> libx.so.12 is one file, scanned once
                    paths.append(path)
    report = _scan_files(str(root), paths, cache, owners(root))
    cache.forget_under(os.path.normpath(root.absolute()), keep={os.path.normpath(p.absolute()) for p in paths})
    return report


def _scan_files(target: str, paths: Iterable[Path], cache: Cache, owners: dict[str, Owner]) -> ScanReport:
    kept: list[FileReport] = []
    scanned = cached = 0
    for path in paths:
        key = os.path.normpath(path.absolute())
        try:
            st = path.stat()
        except OSError as exc:
            kept.append(FileReport(key, 0, problems=(f"cannot read: {exc.strerror or exc}",)))
            continue
        if not stat.S_ISREG(st.st_mode):  # a FIFO or a device named like a library: opening it could block
            continue
        scanned += 1
        report = cache.get(key, st)
        if report is None:
            report = scan_file(path)
            cache.put(key, st, report)
        else:
            cached += 1
        if report.has_gpu_code or report.problems:
            kept.append(replace(report, path=key, owner=owners.get(key)))
    return ScanReport(target, tuple(kept), scanned, cached)


def _scan_wheel(wheel: Path, cache: Cache) -> ScanReport:
    """Each shared object in the wheel, streamed to a temporary file and mapped, one at a time."""
    key = os.path.normpath(wheel.absolute())
    owner = _wheel_owner(wheel.name)
    try:
        st = wheel.stat()
    except OSError as exc:
        return ScanReport(str(wheel), (), 0, 0, (f"{wheel.name} cannot be read: {exc.strerror or exc}",))
    row = cache.row(key, st)
    if row is not None:
        try:
            members = [replace(_from_json(doc), path=f"{key}!{name}", owner=owner) for name, doc in row["members"]]
            return ScanReport(str(wheel), tuple(m for m in members if m.has_gpu_code or m.problems),
                              int(row["scanned"]), int(row["scanned"]))
        except (KeyError, TypeError, ValueError):
            pass  # a damaged cache row: read the wheel again
    try:
        reports, scanned = _wheel_members(wheel)
    except _ZIP_ERRORS as exc:
        return ScanReport(str(wheel), (), 0, 0, (f"{wheel.name} is not a readable wheel (zip): {exc}",))
    cache.rows[key] = {"size": st.st_size, "mtime": st.st_mtime_ns, "scanned": scanned,
                       "members": [[name, _to_json(r)] for name, r in reports]}
    cache.dirty = True
    kept = tuple(replace(r, path=f"{key}!{name}", owner=owner) for name, r in reports)
    return ScanReport(str(wheel), kept, scanned, 0)


def _wheel_members(wheel: Path) -> tuple[list[tuple[str, FileReport]], int]:
    reports: list[tuple[str, FileReport]] = []
    scanned = 0
    with zipfile.ZipFile(wheel) as zf, tempfile.TemporaryDirectory(prefix="cuenv-whl-") as tmp:
        for info in zf.infolist():
            # not info.is_dir(): a damaged entry with an empty name makes it raise IndexError
            if info.filename.endswith("/") or not looks_binary(info.filename.rsplit("/", 1)[-1]):
                continue
            scanned += 1
            why = zip_member_problem(info)  # a bomb or a link is never copied out (issue 31 §4)
            if why is not None:
                reports.append((info.filename, FileReport("", info.file_size, problems=(f"not read: {why}",))))
                continue
            part = Path(tmp, "member")
            try:
                with zf.open(info) as src, open(part, "wb") as dst:
                    shutil.copyfileobj(src, dst, 1 << 20)
                report = scan_file(part)
            except _ZIP_ERRORS as exc:  # a damaged member: a finding, go on
                report = FileReport("", info.file_size, problems=(f"cannot read from the wheel: {exc}",))
            if report.has_gpu_code or report.problems:
                reports.append((info.filename, replace(report, path="")))
    return reports, scanned


def _wheel_owner(filename: str) -> Owner | None:
    parts = filename[: -len(".whl")].split("-")
    return Owner(canonical(parts[0]), parts[1], "wheel") if len(parts) >= 5 else None
