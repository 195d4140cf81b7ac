"""Proof that an unpacked conda payload holds exactly the packages of its archive's lock (issue 14 §2).

`cuenv unpack` never runs a script from the archive (conda-pack ships ``bin/conda-unpack``). Instead,
after extracting the payload into the prefix (not usable yet: the completion marker comes last),
``verify`` checks it file by file:

- every package of the lock has its ``conda-meta`` record, with the lock's sha256 (or md5), and
  there is no record of a package the lock does not list;
- every file a record lists is in the payload with the sha256 of the package's own file (conda-pack
  packs the files from the package cache, before the install rewrote their prefix placeholder;
  a shebang conda-pack rewrote to ``/usr/bin/env`` is put back before hashing);
- nothing else is there: a file in no package is refused (an added ``.pth`` file or library would
  run), conda-pack's helper scripts and compiled ``.pyc`` files are removed (Python rebuilds
  them), and Python entry points must be the generated three-liner that calls one function.

It returns what cuenv's own relocation (cuenv.export.relocate) rewrites: (path, placeholder, mode).
The per-file hashes come from the packages' records in the payload, which travel with the archive.
Where a package itself is at hand (``package_files``: a file:// URL or cuenv's archive cache, its
hash checked against the lock), each record is also held to the package's own ``info/paths.json``,
so a file changed together with its record is caught; ``Proof.proven`` counts those packages.
"""

from __future__ import annotations

import hashlib
import os
import re
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import TYPE_CHECKING, Any, Callable, Final, Iterable, Mapping, Sequence

from cuenv.envs import folder
from cuenv.trust import Untrusted, limits

if TYPE_CHECKING:
    from cuenv.engines.base import Package

HINT: Final = "The archive was altered or damaged; pack the environment again on the machine that has it."
_ENTRY_POINT: Final = re.compile(
    rb"#![^\n]*\n(?:# -\*- coding: utf-8 -\*-\n)?import re\nimport sys\n\n"
    rb"from [A-Za-z_][A-Za-z0-9_.]* import [A-Za-z_][A-Za-z0-9_.]*\n\n"
    rb"if __name__ == ['\"]__main__['\"]:\n"
    rb"    sys\.argv\[0\] = re\.sub\(r['\"][^\n]*['\"], ['\"]['\"], sys\.argv\[0\]\)\n"
    rb"    sys\.exit\([A-Za-z_][A-Za-z0-9_.]*\(\)\)\n?"
)
_SHEBANG_ENV: Final = re.compile(rb"#!/usr/bin/env ([^ \n]+)([^\n]*)\n")
# written by conda/rattler, never run (conda 26.7 also stamps conda-meta/created_at)
_EXTRAS: Final = ("conda-meta/history", "conda-meta/created_at", "CACHEDIR.TAG")


@dataclass(frozen=True)
class PrefixRecord:
    """A file whose recorded prefix placeholder cuenv's relocation replaces."""

    path: str
    placeholder: str
    mode: str  # text | binary


@dataclass(frozen=True)
class Proof:
    """What ``verify`` found: the files to relocate, and how many packages were held to the package itself."""

    prefixes: list[PrefixRecord]
    proven: int
    packages: int
    proven_paths: frozenset[str] = frozenset()  # the files of the packages held to the package itself


PackageFiles = Callable[["Package"], "Mapping[str, str] | None"]  # a locked package -> its path -> sha256, or None


def package_files(archive: Path) -> dict[str, str]:
    """path -> sha256 (hex) of every file a conda package archive lists in its own ``info/paths.json``."""
    from rattler.package import PathsJson

    paths = PathsJson.from_package_archive(archive)
    return {PurePosixPath(e.relative_path).as_posix(): bytes(e.sha256).hex() for e in paths.paths if e.sha256 is not None}


def _in_package(rel: str, files: Mapping[str, str]) -> str | None:
    """The package's sha256 of the installed file ``rel``; a noarch: python package installs its
    ``site-packages/`` under ``lib/pythonX.Y/`` and its ``python-scripts/`` under ``bin/``."""
    if rel in files:
        return files[rel]
    parts = rel.split("/")
    if len(parts) > 3 and parts[0] == "lib" and parts[1].startswith("python") and parts[2] == "site-packages":
        return files.get("/".join(parts[2:]))
    if len(parts) == 2 and parts[0] == "bin":
        return files.get("python-scripts/" + parts[1])
    return None


def _held_to_package(file: str, record: Mapping[str, Any], pkg: Package, files: Mapping[str, str]) -> None:
    for entry in (record.get("paths_data") or {}).get("paths") or ():
        if not isinstance(entry, dict) or str(entry.get("path_type") or "hardlink") not in ("hardlink", "softlink_or_hardlink", "copy"):
            continue  # links, generated entry points and .pyc files are checked (or removed) on their own
        rel = _rel(entry.get("_path"), file)
        if _in_package(rel, files) != entry.get("sha256"):
            raise _fail(f"{rel} is not the file of {pkg.name} {pkg.version}: the package itself lists another "
                        f"(or none); {file} in the archive was altered.")


def _fail(message: str) -> Untrusted:
    return Untrusted(message, hint=HINT)


def _rel(value: object, where: str) -> str:
    if not isinstance(value, str) or not value or "\0" in value:
        raise _fail(f"{where}: a path is not text.")
    path = PurePosixPath(value)
    if path.is_absolute() or ".." in path.parts or value != str(path):
        raise _fail(f"{where}: {value!r} is not a plain path inside the environment.")
    return value


def _sha256(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for chunk in iter(lambda: fh.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def _records(prefix: Path) -> dict[str, dict[str, Any]]:
    folder = prefix / "conda-meta"
    out: dict[str, dict[str, Any]] = {}
    try:
        names = sorted(os.listdir(folder))
    except OSError:
        raise _fail("The archive's environment has no conda-meta folder.") from None
    for name in names:
        if not name.endswith(".json"):
            continue
        path = folder / name
        if path.is_symlink() or not path.is_file():
            raise _fail(f"conda-meta/{name} is not a plain file.")
        data = limits.load_json(limits.read_bytes(path, what="Package record", limit=limits.META),
                                what="Package record", file=f"conda-meta/{name}", hint=HINT)
        if not isinstance(data, dict) or not all(isinstance(data.get(k), str) for k in ("name", "version", "build")):
            raise _fail(f"conda-meta/{name} is not a package record.")
        out[f"conda-meta/{name}"] = data
    return out


def _same_package(record: Mapping[str, object], pkg: Package) -> bool:
    if (record["name"], record["version"], record["build"]) != (pkg.name, pkg.version, pkg.build or ""):
        return False
    if pkg.sha256 and record.get("sha256"):
        return record["sha256"] == pkg.sha256
    return bool(pkg.md5) and record.get("md5") == pkg.md5


def _unshebang(data: bytes, placeholder: str | None) -> bytes | None:
    """The file as the package shipped it, when conda-pack rewrote its shebang to /usr/bin/env."""
    match = _SHEBANG_ENV.match(data)
    if not match or not placeholder:
        return None
    name, options = match.groups()
    return b"#!" + placeholder.encode() + b"/bin/" + name + options + b"\n" + data[match.end():]


def verify(prefix: Path, packages: Sequence[Package], *, added: Iterable[str] = (),
           package_files: PackageFiles | None = None) -> Proof:
    """Check the extracted payload in ``prefix`` against the lock's conda ``packages``; see the module doc.

    ``package_files``: a package's own file hashes when it is at hand. Removes conda-pack's helpers
    (``added``), ``.pyc`` files and nothing else. Raises ``Untrusted``."""
    records = _records(prefix)
    wanted = [p for p in packages if p.kind == "conda"]
    unmatched = dict(records)
    proven = 0
    held: list[str] = []  # the records of the packages held to the package itself
    for pkg in wanted:
        hit = next((k for k, r in unmatched.items() if _same_package(r, pkg)), None)
        if hit is None:
            raise _fail(f"The archive's environment does not hold {pkg.name} {pkg.version} as its lock says "
                        f"(no conda-meta record with the locked hash).")
        own = package_files(pkg) if package_files is not None else None
        if own is not None:
            _held_to_package(hit, unmatched[hit], pkg, own)
            proven += 1
            held.append(hit)
        del unmatched[hit]
    if unmatched:
        extra = next(iter(unmatched.values()))
        raise _fail(f"The archive's environment holds {extra['name']} {extra['version']}, which its lock does not list.")

    expected: dict[str, tuple[str, dict[str, Any]]] = {}  # path -> (kind, entry)
    proven_paths: set[str] = set()
    for file, record in records.items():
        paths = (record.get("paths_data") or {}).get("paths") if isinstance(record.get("paths_data"), dict) else None
        if not isinstance(paths, list):
            raise _fail(f"{file} lists no files (no paths_data).")
        for i, entry in enumerate(paths):
            if not isinstance(entry, dict):
                raise _fail(f"{file}: paths_data entry {i} is not a mapping.")
            rel = _rel(entry.get("_path"), file)
            expected[rel] = (str(entry.get("path_type") or "hardlink"), entry)
            if file in held:
                proven_paths.add(rel)
    removable = {_rel(a, "manifest added") for a in added}
    prefixes: list[PrefixRecord] = []
    seen: set[str] = set()
    for root, dirs, files in os.walk(prefix):
        rel_root = os.path.relpath(root, prefix)
        if rel_root == ".":
            dirs[:] = [d for d in dirs if d != folder.META_DIR]  # cuenv's own folder, written after this check
        for name in sorted(files) + sorted(d for d in dirs if os.path.islink(os.path.join(root, d))):
            rel = name if rel_root == "." else f"{rel_root}/{name}"
            full = prefix / rel
            if rel in records or rel in _EXTRAS:
                if full.is_symlink():
                    raise _fail(f"{rel} is a symlink in the archive.")
                continue
            kind, entry = expected.get(rel, ("", {}))
            if kind == "pyc_file" or (not kind and rel in removable) or (not kind and rel.endswith(".pyc")):
                full.unlink()  # compiled code from the archive is never kept; Python compiles it again
                continue
            if not kind:
                raise _fail(f"{rel} is in no package of the archive's lock.")
            seen.add(rel)
            _check_file(full, rel, kind, entry, prefixes)
    missing = sorted(p for p, (kind, _) in expected.items() if p not in seen and kind not in ("pyc_file", "directory"))
    if missing:
        raise _fail(f"{missing[0]} is missing from the archive" + (f" ({len(missing) - 1} more)." if len(missing) > 1 else "."))
    return Proof(prefixes, proven, len(wanted), frozenset(proven_paths))


def _check_file(full: Path, rel: str, kind: str, entry: dict[str, Any], prefixes: list[PrefixRecord]) -> None:
    if kind == "softlink":
        if not full.is_symlink():
            raise _fail(f"{rel} should be a symlink.")
        return  # where it points was checked at extraction: inside the environment
    if full.is_symlink() or not full.is_file():
        raise _fail(f"{rel} should be a plain file.")
    if kind in ("unix_python_entry_point", "windows_python_entry_point_script"):
        data = full.read_bytes()
        if len(data) > 4096 or not _ENTRY_POINT.fullmatch(data):
            raise _fail(f"{rel} is not a generated Python entry point.")
        return
    if kind not in ("hardlink", "softlink_or_hardlink", "copy"):
        raise _fail(f"{rel} has an unknown path type {kind!r}.")
    digest = entry.get("sha256")
    if not isinstance(digest, str):
        raise _fail(f"{rel} has no sha256 in its package record.")
    placeholder = entry.get("prefix_placeholder")
    if _sha256(full) != digest:
        original = _unshebang(full.read_bytes(), placeholder if isinstance(placeholder, str) else None)
        if original is None or hashlib.sha256(original).hexdigest() != digest:
            raise _fail(f"{rel} differs from its package (sha256 mismatch).")
        return  # conda-pack made the shebang relative; nothing left to relocate
    if isinstance(placeholder, str) and placeholder:
        mode = entry.get("file_mode") or "text"
        if mode not in ("text", "binary"):
            raise _fail(f"{rel} has an unknown file mode {mode!r}.")
        prefixes.append(PrefixRecord(rel, placeholder, mode))
