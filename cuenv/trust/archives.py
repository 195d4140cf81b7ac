"""cuenv's own archive extractor: every member checked before anything is written (issue 31 §4).

Archives from someone else (`cuenv unpack`'s pack and its conda payload) are read in two passes over
the same open file. The first writes nothing: it reads every header and, for a compressed stream,
every byte, and refuses

- a member that is not a regular file, a folder, a symlink or a hardlink to an earlier file
  (devices, FIFOs, sockets, sparse files: a FIFO once hung ``unpack``);
- a path that is absolute, has ``..``, a control character or no UTF-8 form, a duplicate, or a path
  under a member that is not a folder (writing through a symlink);
- a symlink whose target, followed through the archive's own symlinks, leaves the destination;
- more than ``Limits.members`` members, a member over ``Limits.member`` bytes, more than
  ``Limits.total`` in all, or more output than ``Limits.ratio`` times the compressed bytes read so far
  (beyond the first ``Limits.free`` bytes): a gzip bomb is refused after a few MiB of reading;
- more than the destination's free space.

The second pass writes, comparing each header with the first pass's list (an archive that changes
between the two is refused). It never calls ``tarfile``'s ``extract``/``extractall`` and needs none of
its filters (``tarfile.data_filter`` is missing from Debian 12's Python 3.11.2, and CVE-2025-4517 is
a bypass of them): folders and files are created by this module with ``O_EXCL | O_NOFOLLOW``, modes
lose setuid, setgid, sticky and group/other write bits. Streams are read with ``r|`` (no
``getmembers()``, which seeks backwards).
"""

from __future__ import annotations

import fcntl
import os
import shutil
import stat
import tarfile
import zipfile
import zlib
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any, Callable, Final, Iterator, Protocol

from cuenv.errors import UsageError
from cuenv.trust import Untrusted

MiB: Final = 1024 * 1024
GiB: Final = 1024 * MiB
_CHUNK: Final = MiB
_MAX_HOPS: Final = 40  # symlinks followed while resolving one target (Linux's own limit)
_MAX_EXTENDED: Final = 1 * MiB  # one pax or GNU long-name header: tarfile reads it whole into memory
_MAX_CHAIN: Final = 8  # extended headers before one member (tarfile recurses through them)
_MAX_NAMES: Final = 64 * MiB  # all names and link targets together (a real environment: ~4 MiB)
_MAX_STEPS: Final = 10_000_000  # path components walked while resolving every symlink of one archive
_TAR_ERRORS: Final = (tarfile.TarError, EOFError, zlib.error, OSError, ValueError)
KINDS: Final = ("file", "dir", "symlink", "hardlink")


@dataclass(frozen=True)
class Limits:
    """What one archive may hold. Far above a real CUDA environment (a torch conda prefix: ~60,000
    files, ~10 GiB, its largest library ~1.5 GiB, compressing 2-4x), far below a bomb."""

    members: int = 1_000_000
    member: int = 8 * GiB
    total: int = 128 * GiB
    ratio: int = 200  # output bytes per compressed byte read
    free: int = 16 * MiB  # output allowed before the ratio applies


@dataclass(frozen=True)
class Member:
    """One checked member: ``name`` is a clean relative path ("" for the root folder itself)."""

    name: str
    kind: str  # one of KINDS
    size: int = 0
    mode: int = 0o644
    mtime: int = 0
    target: str = ""  # a symlink's target as written; a hardlink's clean member name
    offset: int = 0  # where its data starts in the (uncompressed) tar


class _HeaderRefused(Exception):
    """Raised inside tarfile's header parsing; turned into ArchiveRefused with the archive's name."""


class _BoundedInfo(tarfile.TarInfo):
    """tarfile's header parser, with a bound on what an extended header makes it read and recurse."""

    def _proc_member(self, tarfile_: tarfile.TarFile) -> Any:  # tarfile's own hook
        chain = getattr(tarfile_, "_cuenv_chain", 0)
        if self.type in (tarfile.GNUTYPE_LONGNAME, tarfile.GNUTYPE_LONGLINK, tarfile.XHDTYPE, tarfile.XGLTYPE,
                         tarfile.SOLARIS_XHDTYPE, tarfile.GNUTYPE_SPARSE):
            if self.size > _MAX_EXTENDED or chain >= _MAX_CHAIN:
                raise _HeaderRefused(f"an extended header ({self.size} bytes, {chain + 1} in a row) is larger than "
                                     f"{_MAX_EXTENDED // MiB} MiB or one of more than {_MAX_CHAIN} in a row")
            tarfile_._cuenv_chain = chain + 1  # type: ignore[attr-defined]  # our count on tarfile's object
        else:
            tarfile_._cuenv_chain = 0  # type: ignore[attr-defined]  # a real member ends the chain
        return super()._proc_member(tarfile_)  # type: ignore[misc]  # tarfile's private hook, stable since 3.0


class ArchiveRefused(Untrusted):
    """An archive member refused before anything was written (exit 2)."""


class ArchiveDamaged(UsageError):
    """An archive that cannot be read to its end."""


def open_regular(path: Path) -> IO[bytes]:
    """``path`` opened for reading if it is a regular file; a FIFO, device or folder is refused without blocking."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    except FileNotFoundError:
        raise UsageError(f"{path} does not exist.") from None
    except OSError as exc:
        raise UsageError(f"Cannot read {path}: {exc.strerror or type(exc).__name__}.") from None
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise ArchiveRefused(f"{path} is not a regular file (a folder, FIFO or device is no archive).",
                                 hint="Name the archive file itself.")
        fcntl.fcntl(fd, fcntl.F_SETFL, fcntl.fcntl(fd, fcntl.F_GETFL) & ~os.O_NONBLOCK)
        return os.fdopen(fd, "rb")
    except BaseException:
        os.close(fd)
        raise


class Readable(Protocol):
    def read(self, n: int = -1, /) -> bytes: ...


class Slice:
    """``size`` bytes of ``fh`` from ``start``, as a file object of their own (a member of an uncompressed tar)."""

    def __init__(self, fh: IO[bytes], start: int, size: int) -> None:  # seekable
        self._fh, self._start, self._size, self._pos = fh, start, size, 0

    def read(self, n: int = -1) -> bytes:
        left = self._size - self._pos
        n = left if n is None or n < 0 else min(n, left)
        if n <= 0:
            return b""
        self._fh.seek(self._start + self._pos)
        data = self._fh.read(n)
        self._pos += len(data)
        return data

    def seek(self, offset: int, whence: int = 0) -> int:
        base = {0: 0, 1: self._pos, 2: self._size}[whence]
        self._pos = max(0, min(self._size, base + offset))
        return self._pos

    def tell(self) -> int:
        return self._pos

    def seekable(self) -> bool:
        return True

    def readable(self) -> bool:
        return True

    def close(self) -> None:
        pass


class _Counting:
    """Counts the (compressed) bytes tarfile's stream reader takes from the file."""

    def __init__(self, fh: Readable) -> None:
        self._fh, self.read_bytes = fh, 0

    def read(self, n: int = -1) -> bytes:
        data = self._fh.read(n)
        self.read_bytes += len(data)
        return data

    def tell(self) -> int:
        return self.read_bytes

    def close(self) -> None:
        pass


# -- pure checks ------------------------------------------------------------------------------
def _size(n: int) -> str:
    return f"{n / GiB:.1f} GiB" if n >= GiB else f"{n / MiB:.1f} MiB" if n >= MiB else f"{n} bytes"


def _shown(text: str) -> str:
    shown = repr(text)  # control characters escaped: a name never moves the terminal
    return shown if len(shown) <= 90 else shown[:87] + "..."


def clean_name(name: str) -> str | None:
    """A member's path made relative and plain ("" for the root), or None when it has no safe form."""
    if not name or len(name) > 4096 or any(ord(c) < 32 or ord(c) == 127 for c in name):
        return None
    try:
        name.encode("utf-8")
    except UnicodeEncodeError:  # surrogates: bytes that are not UTF-8
        return None
    if name.startswith("/"):
        return None
    parts = [p for p in name.split("/") if p not in ("", ".")]
    if ".." in parts or any(len(p.encode()) > 255 for p in parts):
        return None
    return "/".join(parts)


def resolve(start: str, target: str, links: dict[str, str], steps: list[int] | None = None) -> str | None:
    """Where the symlink target ``target`` in folder ``start`` lands, following the archive's own
    symlinks (``links``: member name -> target); None when it leaves the root or loops.
    ``steps``: a budget of path components shared by many calls (decremented; None when spent)."""
    hops = [0]
    budget = steps if steps is not None else [_MAX_STEPS]

    def walk(stack: list[str], text: str) -> list[str] | None:
        if text.startswith("/"):
            return None
        for comp in text.split("/"):
            budget[0] -= 1
            if budget[0] < 0:
                return None
            if comp in ("", "."):
                continue
            if comp == "..":
                if not stack:
                    return None
                stack.pop()
                continue
            stack.append(comp)
            key = "/".join(stack)
            if key in links:
                hops[0] += 1
                if hops[0] > _MAX_HOPS:
                    return None
                got = walk(stack[:-1], links[key])
                if got is None:
                    return None
                stack = got
        return stack

    got = walk([p for p in start.split("/") if p], target)
    return None if got is None else "/".join(got)


class _Tree:
    """The first pass's bookkeeping: what each path is, and the limits so far."""

    def __init__(self, what: str, limits: Limits, allowed: tuple[str, ...]) -> None:
        self.what, self.limits, self.allowed = what, limits, allowed
        self.kinds: dict[str, str] = {}  # name -> kind (folders implied by deeper members included)
        self.links: dict[str, str] = {}
        self.members: list[Member] = []
        self.total = 0
        self.names = 0  # bytes of names and link targets so far

    def refuse(self, why: str) -> ArchiveRefused:
        return ArchiveRefused(f"Refusing {self.what}: {why}.", hint="Nothing was written. Ask for the archive again "
                              "from its maker, or make it yourself with `cuenv pack`.")

    def add(self, info: tarfile.TarInfo) -> Member:
        if len(self.members) >= self.limits.members:
            raise self.refuse(f"it has more than {self.limits.members} members")
        self.names += len(info.name) + len(info.linkname)
        if self.names > _MAX_NAMES:
            raise self.refuse(f"its names and link targets take more than {_MAX_NAMES // MiB} MiB")
        name = clean_name(info.name)
        if name is None:
            raise self.refuse(f"member {_shown(info.name)} is not a plain path inside the destination")
        kind = ("dir" if info.isdir() else "symlink" if info.issym() else "hardlink" if info.islnk()
                else "file" if info.isreg() and not info.issparse() else "")
        if not kind or kind not in self.allowed:
            what = ("a FIFO" if info.isfifo() else "a device" if info.ischr() or info.isblk()
                    else "a sparse file" if info.issparse() else f"of type {info.type!r}" if not kind else f"a {kind}")
            raise self.refuse(f"member {_shown(info.name)} is {what}, which this archive may not hold")
        if name == "" and kind != "dir":
            raise self.refuse(f"member {_shown(info.name)} is not a plain path inside the destination")
        parts = name.split("/") if name else []
        for i in range(1, len(parts)):
            above = "/".join(parts[:i])
            if self.kinds.setdefault(above, "dir") != "dir":
                raise self.refuse(f"member {_shown(info.name)} is under {_shown(above)}, which is a "
                                  f"{self.kinds[above]}, not a folder")
        if name in self.kinds and not (kind == "dir" and self.kinds[name] == "dir"):
            raise self.refuse(f"member {_shown(info.name)} comes twice (or under another member)")
        target = ""
        if kind == "symlink":
            target = info.linkname
            if not target or target.startswith("/") or len(target) > 4096 or "\0" in target \
                    or any(ord(c) < 32 or ord(c) == 127 for c in target):
                raise self.refuse(f"symlink {_shown(info.name)} points to {_shown(target)}, outside the destination")
            self.links[name] = target
        elif kind == "hardlink":
            target = clean_name(info.linkname) or ""
            if self.kinds.get(target) != "file":
                raise self.refuse(f"hardlink {_shown(info.name)} points to {_shown(info.linkname)}, "
                                  "which is no earlier file of the archive")
        size = info.size if kind == "file" else 0
        if size < 0 or size > self.limits.member:
            raise self.refuse(f"member {_shown(info.name)} is {_size(size)}, more than the "
                              f"{_size(self.limits.member)} cuenv extracts for one file")
        self.total += size
        if self.total > self.limits.total:
            raise self.refuse(f"it holds more than {_size(self.limits.total)}")
        self.kinds[name] = "file" if kind == "hardlink" else kind
        mtime = max(0, min(int(info.mtime), 2**32))  # a hostile header's year 10,000 is not an OverflowError
        member = Member(name, kind, size, info.mode & 0o7777, mtime, target, info.offset_data)
        self.members.append(member)
        return member

    def check_links(self) -> None:
        steps = [_MAX_STEPS]
        for name, target in self.links.items():
            parent = name.rsplit("/", 1)[0] if "/" in name else ""
            if resolve(parent, target, self.links, steps) is None:
                if steps[0] < 0:
                    raise self.refuse(f"its symlinks take more than {_MAX_STEPS} steps to follow")
                raise self.refuse(f"symlink {_shown(name)} points to {_shown(target)}, outside the destination")


def _headers(tar: tarfile.TarFile) -> Iterator[tarfile.TarInfo]:
    while True:
        info = tar.next()
        if info is None:
            return
        tar.members = []  # type: ignore[attr-defined]  # a stream's list would grow with every member; cuenv keeps its own
        yield info


def _open_tar(fh: Readable, compression: str) -> tarfile.TarFile:
    fileobj: Any = fh  # tarfile needs read() (and seek() for a plain tar), nothing else
    if compression == "":  # uncompressed and seekable: headers only, data is skipped by seeking
        return tarfile.open(fileobj=fileobj, mode="r:", tarinfo=_BoundedInfo)
    mode: Any = f"r|{compression}"
    return tarfile.open(fileobj=fileobj, mode=mode, tarinfo=_BoundedInfo)


def members(open_stream: Callable[[], Readable], *, compression: str, what: str, limits: Limits = Limits(),
            allowed: tuple[str, ...] = KINDS) -> list[Member]:
    """The first pass: every member checked, nothing written. ``compression``: "" (a seekable plain tar,
    whose data is not read), or "gz", "bz2", "xz" (read to the end, the ratio checked as it goes)."""
    tree = _Tree(what, limits, allowed)
    counting = _Counting(open_stream())
    try:
        with _open_tar(counting if compression else counting._fh, compression) as tar:
            out = 0
            for info in _headers(tar):
                member = tree.add(info)
                if not compression or member.kind != "file" or not member.size:
                    continue
                src = tar.extractfile(info)
                assert src is not None  # a regular member
                while chunk := src.read(_CHUNK):
                    out += len(chunk)
                    if out > limits.free + limits.ratio * counting.read_bytes:
                        raise tree.refuse(f"it expands to more than {limits.ratio} times its compressed size "
                                          f"(a compression bomb?) at member {_shown(info.name)}")
    except (ArchiveRefused, UsageError):
        raise
    except _HeaderRefused as exc:
        raise tree.refuse(str(exc)) from None
    except _TAR_ERRORS as exc:
        raise ArchiveDamaged(f"{what} is damaged: {str(exc)[:120] or type(exc).__name__}.",
                             hint="Copy the archive again; it may be cut short.") from None
    tree.check_links()
    return tree.members


def zip_member_problem(info: zipfile.ZipInfo, limits: Limits = Limits()) -> str | None:
    """Why one zip member (a wheel's) must not be read out, from the central directory alone, or None:
    a symlink, device or FIFO (by its Unix mode), a path that is not plain, more than ``limits.member``
    bytes, or more than ``limits.ratio`` times its compressed size (beyond ``limits.free``)."""
    kind = stat.S_IFMT(info.external_attr >> 16)
    if kind not in (0, stat.S_IFREG, stat.S_IFDIR):
        return f"member {_shown(info.filename)} is not a regular file"
    if clean_name(info.filename) is None:
        return f"member {_shown(info.filename)} is not a plain path"
    if info.file_size > limits.member:
        return f"member {_shown(info.filename)} is {_size(info.file_size)}, more than the {_size(limits.member)} cuenv reads"
    if info.file_size > limits.free + limits.ratio * info.compress_size:
        return (f"member {_shown(info.filename)} expands to more than {limits.ratio} times its compressed size "
                "(a compression bomb?)")
    return None


# -- the second pass: writing -------------------------------------------------------------------
def _file_mode(mode: int) -> int:
    return (mode & 0o755) | 0o600


def _dir_mode(mode: int) -> int:
    return (mode & 0o755) | 0o700


def _mkdirs(dest: Path, rel: str, made: set[str]) -> None:
    parts = rel.split("/") if rel else []
    for i in range(1, len(parts) + 1):
        sub = "/".join(parts[:i])
        if sub not in made:
            os.mkdir(dest / sub, 0o700)  # a folder of its own: never an existing path, never through a link
            made.add(sub)


def extract(open_stream: Callable[[], Readable], dest: Path, *, compression: str, what: str,
            limits: Limits = Limits(), allowed: tuple[str, ...] = KINDS) -> list[Member]:
    """Check every member (``members``), then write them under ``dest``, a new or empty folder.

    ``open_stream`` returns the archive from its start, each time it is called (once per pass)."""
    listing = members(open_stream, compression=compression, what=what, limits=limits, allowed=allowed)
    if dest.is_symlink() or (dest.exists() and (not dest.is_dir() or any(dest.iterdir()))):
        raise UsageError(f"Cannot extract {what} into {dest}: it is not a new or empty folder.")
    dest.mkdir(parents=True, exist_ok=True)
    total = sum(m.size for m in listing)
    free = shutil.disk_usage(dest).free
    if total > free:
        raise ArchiveRefused(f"{what} needs {_size(total)}, more than the {_size(free)} free at {dest}.",
                             hint="Free some space, or set CUENV_HOME to a larger disk.")
    made: set[str] = {""}
    dirs: list[Member] = []
    tree = _Tree(what, limits, allowed)
    try:
        with _open_tar(open_stream(), compression) as tar:
            for i, info in enumerate(_headers(tar)):
                again = tree.add(info)
                if i >= len(listing) or again != listing[i]:
                    raise tree.refuse("it changed while it was being read")
                m = listing[i]
                parent = m.name.rsplit("/", 1)[0] if "/" in m.name else ""
                _mkdirs(dest, parent, made)
                path = dest / m.name
                if m.kind == "dir":
                    if m.name not in made:
                        os.mkdir(path, 0o700)
                        made.add(m.name)
                    dirs.append(m)
                elif m.kind == "symlink":
                    os.symlink(m.target, path)
                elif m.kind == "hardlink":
                    os.link(dest / m.target, path, follow_symlinks=False)
                else:
                    _write_file(tar, info, path, m)
            if len(tree.members) != len(listing):
                raise tree.refuse("it changed while it was being read")
    except (ArchiveRefused, UsageError):
        raise
    except _HeaderRefused as exc:
        raise tree.refuse(str(exc)) from None
    except FileExistsError as exc:
        raise ArchiveRefused(f"Refusing {what}: {_shown(str(exc.filename))} would be written twice.") from None
    except _TAR_ERRORS as exc:
        raise ArchiveDamaged(f"{what} is damaged: {str(exc)[:120] or type(exc).__name__}.",
                             hint="Copy the archive again; it may be cut short.") from None
    for m in reversed(dirs):  # last: a read-only folder would have stopped the files inside it
        os.chmod(dest / m.name, _dir_mode(m.mode))
    return listing


def _write_file(tar: tarfile.TarFile, info: tarfile.TarInfo, path: Path, m: Member) -> None:
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | getattr(os, "O_CLOEXEC", 0)
    fd = os.open(path, flags, 0o600)
    with os.fdopen(fd, "wb") as out:
        written = 0
        if m.size:
            src = tar.extractfile(info)
            assert src is not None  # a regular member
            while chunk := src.read(min(_CHUNK, m.size - written + 1)):
                written += len(chunk)
                if written > m.size:
                    raise ArchiveRefused(f"Refusing archive member {_shown(m.name)}: it is longer than its header says.")
                out.write(chunk)
        os.fchmod(out.fileno(), _file_mode(m.mode))
    os.utime(path, (m.mtime, m.mtime), follow_symlinks=False)
