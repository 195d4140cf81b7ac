"""Relocatable archives: `cuenv pack` and `cuenv unpack` (issue 7 §4).

One uncompressed tar, manifest first::

    cuenv-pack.json     format, name, kind, method, the environment's meta.json and its lock
    env.tar.gz          conda prefix: conda-pack's archive of the packages' files
    wheels/*.whl        venv: every locked wheel, each checked against the lock's sha256

An archive is shared input (issue 14 §2): the manifest, its lock and its metadata are validated in
full before anything is written, and nothing from the archive ever runs. A conda prefix embeds its
path in text and binaries: conda-pack packs the packages' own files with their prefix placeholders,
``cuenv.export.payload`` proves every file against the packages of the archive's lock, and cuenv's
own relocation (cuenv.export.relocate) replaces the placeholders; conda-pack's ``conda-unpack``
script is deleted, never run. A venv embeds its path and its interpreter's path everywhere (venv-pack, unmaintained
since 2018, needs the same interpreter at the same path), so it is re-created from its lock on
the target instead: the same install as `cuenv create` (uv, --require-hashes), from the wheels in
the archive, with no network, under any Python of the locked version. Either way the environment
is validated against the target machine first, built in place, registered with its metadata
moved to the new prefix and its activation scripts rendered again, and marked complete last.
"""

from __future__ import annotations

import io
import json
import os
import shutil
import tarfile
import tempfile
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any, Final, Iterable, Mapping

from cuenv.envs import folder
from cuenv.errors import CuenvError, ToolError, UsageError

if TYPE_CHECKING:
    from cuenv.config import Settings
    from cuenv.engines.base import Package, Solution
    from cuenv.engines.events import Progress
    from cuenv.envs.meta import EnvMeta, UnpackedFrom
    from cuenv.envs.store import EnvRecord
    from cuenv.export.payload import Proof
    from cuenv.knowledge.findings import Finding
    from cuenv.machine.model import Machine
    from cuenv.trust.archives import Member, Slice

FORMAT: Final = 1
MANIFEST: Final = "cuenv-pack.json"
CONDA_PAYLOAD: Final = "env.tar.gz"
WHEELS: Final = "wheels"


class NotAPack(UsageError):
    HINT: Final = "Make one with `cuenv pack NAME -o FILE` on the machine that has the environment."

    def __init__(self, path: Path, why: str) -> None:
        super().__init__(f"{path} is not an archive made by `cuenv pack` ({why}).", hint=self.HINT)


# -- pack ------------------------------------------------------------------------------------
def _add_bytes(tar: tarfile.TarFile, name: str, data: bytes) -> None:
    info = tarfile.TarInfo(name)
    info.size, info.mode = len(data), 0o644
    tar.addfile(info, io.BytesIO(data))


def _conda_pack(prefix: Path, dest: Path) -> list[str]:
    """conda-pack's archive of ``prefix`` (cuenv's own .cuenv/ left out); returns the names it added."""
    try:
        import conda_pack
    except ImportError:
        from cuenv.selfinstall import detect

        raise ToolError("Packing a conda prefix needs conda-pack.", hint=detect().hint_for("conda-pack>=0.7")) from None
    try:
        conda_pack.pack(prefix=str(prefix), output=str(dest), format="tar.gz", force=True,
                        filters=[("exclude", f"{folder.META_DIR}/*")], n_threads=min(4, os.cpu_count() or 1))
    except conda_pack.CondaPackException as exc:
        raise ToolError(f"conda-pack failed: {exc}") from None
    with tarfile.open(dest, "r:gz") as tar:
        names = tar.getnames()
    return [n for n in names if not (prefix / n).exists() and not (prefix / n).is_symlink()]


def pack(record: EnvRecord, out: Path, *, cache_dir: Path, progress: Progress | None = None) -> dict[str, Any]:
    """Write ``out`` (atomically: a half-written archive never has the final name); returns the manifest."""
    from cuenv import __version__
    from cuenv.engines import Solution
    from cuenv.engines.fetch import verified_archive

    meta = record.meta.to_json()
    meta.pop("validation", None)  # about this machine; the target checks itself
    kind = record.meta.layout.kind
    solution = Solution.from_json(folder.own_solution(record.path, record.name))
    raw_lock = folder.read_solution_text(record.path)
    manifest: dict[str, Any] = {
        "format": FORMAT, "name": record.name, "kind": kind, "source_prefix": str(record.prefix),
        "cuenv_version": __version__, "meta": meta, "lock": raw_lock,
    }
    if kind == "conda" and any(p.kind == "pypi" for p in solution.packages):
        raise UsageError(f"{record.name} has pip packages on top of its conda packages; `cuenv pack` cannot carry "
                         "them yet (their files are in no conda package, and `cuenv unpack` proves every file).",
                         hint=f"Write its lockfile with `cuenv lock {record.name} -o {record.name}.lock`, then build "
                         f"it on the other machine with `cuenv sync {record.name}.lock`.")
    out.parent.mkdir(parents=True, exist_ok=True)
    part = out.with_name(f".{out.name}.part{os.getpid()}")
    try:
        with tempfile.TemporaryDirectory(prefix="cuenv-pack-", dir=out.parent) as tmp:
            if kind == "conda":
                payload = Path(tmp) / CONDA_PAYLOAD
                manifest["method"] = "conda-pack"
                manifest["added"] = _conda_pack(record.prefix, payload)
                files = [(CONDA_PAYLOAD, payload)]
            elif kind == "venv":
                manifest["method"] = "wheels"
                files = []
                for pkg in solution.packages:  # every wheel proven against the lock before it goes in
                    wheel = verified_archive(pkg, Path(cache_dir) / "wheels", progress=progress)
                    files.append((f"{WHEELS}/{pkg.filename or wheel.name}", wheel))
            else:
                raise UsageError(f"Environment {record.name!r} ({kind}) cannot be packed.")
            with tarfile.open(part, "w", format=tarfile.PAX_FORMAT) as tar:
                _add_bytes(tar, MANIFEST, json.dumps(manifest, indent=1, sort_keys=True).encode())
                for name, path in files:
                    tar.add(path, arcname=name, recursive=False)
        os.replace(part, out)
    except BaseException:
        part.unlink(missing_ok=True)
        raise
    return manifest


# -- unpack ------------------------------------------------------------------------------------
def _outer(archive: Path) -> tuple[IO[bytes], dict[str, Member]]:
    """The archive opened (a regular file, else refused without blocking) and its members by name,
    each checked by cuenv's extractor: plain files only, plain names, within the limits."""
    from cuenv.trust import archives

    fh = archives.open_regular(archive)
    try:
        listing = archives.members(lambda: _rewound(fh), compression="", what=f"archive {archive}",
                                   limits=archives.Limits(members=100_000), allowed=("file",))
    except archives.ArchiveDamaged as exc:
        fh.close()
        raise NotAPack(archive, exc.message.removesuffix(".")) from None
    except BaseException:
        fh.close()
        raise
    if not listing or listing[0].name != MANIFEST:
        fh.close()
        raise NotAPack(archive, f"its first member is not {MANIFEST}")
    return fh, {m.name: m for m in listing}


def _rewound(fh: IO[bytes]) -> IO[bytes]:
    fh.seek(0)
    return fh


def _member_stream(fh: IO[bytes], member: Member) -> Slice:
    from cuenv.trust.archives import Slice

    return Slice(fh, member.offset, member.size)


def read_manifest(archive: Path) -> dict[str, Any]:
    """The manifest, within cuenv's limits; its lock is checked by ``read_lock``."""
    from cuenv.trust import limits

    fh, index = _outer(archive)
    with fh:
        first = index[MANIFEST]
        if first.size > limits.MANIFEST:
            raise NotAPack(archive, f"its manifest is larger than {limits.size_text(limits.MANIFEST)}")
        raw = _member_stream(fh, first).read()
    data = limits.load_json(raw, what="The manifest of", file=str(archive), hint=NotAPack.HINT)
    if not isinstance(data, dict) or data.get("format") != FORMAT:
        shown = data.get("format") if isinstance(data, dict) else "?"
        raise NotAPack(archive, f"unknown format {str(shown)[:20]!r}")
    if data.get("kind") not in ("conda", "venv") or not isinstance(data.get("meta"), dict) \
            or not isinstance(data.get("lock"), str) or not isinstance(data.get("name"), str):
        raise NotAPack(archive, "its manifest is damaged")
    return data


def read_lock(archive: Path, manifest: Mapping[str, Any]) -> Solution:
    """The archive's lock (a Solution), each package's fields checked as a lockfile's are."""
    from cuenv.engines import Solution
    from cuenv.lock.model import package_fields_problem
    from cuenv.trust import limits

    data = limits.load_json(manifest["lock"], what="The lock in", file=str(archive), hint=NotAPack.HINT)
    try:
        solution = Solution.from_json(data)
    except (KeyError, TypeError, ValueError, AttributeError) as exc:
        raise NotAPack(archive, f"its lock is damaged ({type(exc).__name__}: {str(exc)[:80]})") from None
    if manifest.get("kind") == "conda" and any(p.kind == "pypi" for p in solution.packages):
        raise NotAPack(archive, "a conda environment with pip packages, which `cuenv pack` does not make")
    for pkg in solution.packages:
        fields = pkg.to_json()
        size = fields.pop("size", None)  # bytes of the artifact (issue 18): the one field that is a number
        why = package_fields_problem(fields)
        if why is None and size is not None and (type(size) is not int or size < 0):
            why = f"size: {str(size)[:40]!r} is not a number of bytes."
        if why is not None:
            raise NotAPack(archive, f"its lock is damaged: package {why.rstrip('.')}")
    return solution


def _check_meta(archive: Path, manifest: Mapping[str, Any], trusted_env: Iterable[str]) -> None:
    """The environment's recorded metadata: variables on the allowlist, every recorded path inside its prefix."""
    from cuenv.envs.meta import MetaDamaged, layout_from_json
    from cuenv.trust import Untrusted, envvars

    meta = manifest["meta"]
    envvars.check(meta.get("env_vars") or {}, source=f"archive {archive}", extra=trusted_env)
    try:
        layout = layout_from_json(meta["layout"])
        prefix = str(layout.prefix).rstrip("/")
        paths = [*layout.bin_dirs, *layout.lib_dirs, *layout.include_dirs, *(p for p in [layout.cuda_home] if p),
                 *(Path(p) for p in meta.get("activate_scripts") or ())]
    except MetaDamaged as exc:
        raise NotAPack(archive, f"its metadata is damaged ({exc.detail})") from None
    except (KeyError, TypeError, ValueError, AttributeError) as exc:
        raise NotAPack(archive, f"its metadata is damaged ({type(exc).__name__})") from None
    for path in paths:
        text = str(path)
        if not prefix.startswith("/") or not (text == prefix or text.startswith(prefix + "/")) or "/../" in text + "/":
            raise Untrusted(f"Refusing archive {archive}: it records {text[:80]!r}, outside its environment.",
                            hint=NotAPack.HINT)


def _at_hand(pkg: Package, cache_dir: Path) -> dict[str, str] | None:
    """The package's own file hashes, when the package itself is here (a file:// URL, or cuenv's archive
    cache) with the lock's hash; None otherwise. Nothing is downloaded: unpack works offline."""
    from cuenv.engines.fetch import check, local_path
    from cuenv.export import payload

    name = pkg.filename or pkg.url.rsplit("/", 1)[-1]
    path = local_path(pkg.url) or Path(cache_dir) / "rattler" / "archives" / name
    try:
        if "/" in name or name.startswith(".") or not path.is_file():  # a plain cache entry; never a device or FIFO
            return None
        check(pkg, path)
        return payload.package_files(path)
    except Exception:  # noqa: BLE001 - a damaged or foreign cache entry only means "not at hand"
        return None


def _unpack_conda(archive: Path, manifest: Mapping[str, Any], solution: Solution, prefix: Path, *, cache_dir: Path) -> Proof:
    """Extract, prove every file against the lock, relocate with cuenv's own code; nothing from the archive runs.
    Returns the proof: which packages were held to the package itself."""
    from cuenv.export import payload, relocate
    from cuenv.trust import archives

    fh, index = _outer(archive)
    with fh:
        member = index.get(CONDA_PAYLOAD)
        if member is None:
            raise NotAPack(archive, f"{CONDA_PAYLOAD} is missing")
        try:  # every member checked before anything is written, whatever this Python's tarfile filters
            archives.extract(lambda: _member_stream(fh, member), prefix, compression="gz", what=f"archive {archive}")
        except archives.ArchiveDamaged as exc:
            raise NotAPack(archive, f"its payload is damaged: {exc.message.removesuffix('.')}") from None
    added = [a for a in manifest.get("added") or () if isinstance(a, str)]
    proof = payload.verify(prefix, solution.packages, added=added, package_files=lambda pkg: _at_hand(pkg, cache_dir))
    try:
        relocate.relocate_files(prefix, proof.prefixes)
    except ValueError as exc:
        raise CuenvError(f"Cannot relocate the environment to {prefix}: {exc}.",
                         hint="Use a shorter CUENV_HOME, or create the environment from its lock (`cuenv sync`).") from None
    return proof


SCRIPT_DIRS: Final = ("etc/conda/activate.d", "etc/conda/deactivate.d")


def conda_scripts(prefix: Path) -> list[str]:
    """The prefix's conda activation scripts (any shell), relative to it: what `cuenv use` would source."""
    found = []
    for rel in SCRIPT_DIRS:
        try:
            found += [f"{rel}/{p.name}" for p in (prefix / rel).iterdir()]
        except OSError:
            continue
    return sorted(found)


def _unpacked_from(archive: Path, manifest: Mapping[str, Any], meta: EnvMeta, solution: Any, prefix: Path,
                   proof: Any) -> UnpackedFrom:
    """What from the archive may run later: the activation scripts of packages proven against the package
    itself (the others never run), and its smoke test only after `cuenv test NAME --trust-smoke-test`
    (EnvMeta.runnable_smoke_test)."""
    from cuenv.envs.meta import UnpackedFrom

    scripts = conda_scripts(prefix) if proof is not None else []
    return UnpackedFrom(
        archive=str(archive), source_prefix=str(manifest.get("source_prefix"))[:4096],
        # conda packages held to the package itself, not only to their records
        proven_packages=(proof.proven, sum(p.kind == "conda" for p in solution.packages)) if proof is not None else None,
        proven_scripts=tuple(s for s in scripts if s in proof.proven_paths),
        held_back_scripts=tuple(s for s in scripts if s not in proof.proven_paths),
        smoke_test=meta.smoke_test or meta.archived_smoke_test())


def _archived_meta(archive: Path, manifest: Mapping[str, Any]) -> EnvMeta:
    from cuenv.envs.meta import EnvMeta, MetaDamaged

    try:
        return EnvMeta.from_json(manifest["meta"])
    except MetaDamaged as exc:
        raise NotAPack(archive, f"its metadata is damaged ({exc.detail})") from None


def _unpack_venv(archive: Path, solution: Solution, prefix: Path, *, cache_dir: Path, environ: Mapping[str, str],
                 progress: Progress | None) -> None:
    from cuenv.engines import get_engine
    from cuenv.trust import paths

    with tempfile.TemporaryDirectory(prefix="cuenv-unpack-", dir=cache_dir) as tmp:
        local = []
        fh, index = _outer(archive)
        with fh:
            for pkg in solution.packages:
                name = f"{WHEELS}/{pkg.filename}"
                member = index.get(name)
                if member is None:
                    raise NotAPack(archive, f"{name} is missing")
                dest = paths.inside(Path(tmp), Path(name).name)  # the name was checked by read_lock too
                with open(dest, "xb") as out:
                    shutil.copyfileobj(_member_stream(fh, member), out)
                local.append(pkg.replace(url=dest.as_uri()))  # same sha256: uv still verifies it
        engine = get_engine(solution.engine, environ)
        engine.install(prefix, solution.replace(packages=tuple(local)), cache_dir=cache_dir, progress=progress)


def unpack(archive: Path, *, name: str | None, settings: Settings, environ: Mapping[str, str], machine: Machine,
           force: bool, progress: Progress | None = None) -> tuple[EnvRecord, list[Finding]]:
    """Validate, then rebuild the environment under this CUENV_HOME. Returns (record, findings)."""
    from cuenv.envs import cudatools, folder
    from cuenv.envs.create import blocking, prepare_prefix, render_activation
    from cuenv.envs.meta import Validation, stack_from_meta
    from cuenv.envs.store import Store, validate_name
    from cuenv.export.relocate import moved_meta
    from cuenv.knowledge.compat import check
    from cuenv.machine.fingerprint import fingerprint

    manifest = read_manifest(archive)
    env_name = validate_name(manifest["name"] if name is None else name)
    solution = read_lock(archive, manifest)  # everything shared is checked before anything is written
    _check_meta(archive, manifest, settings.trusted_env_vars)
    archived = _archived_meta(archive, manifest)
    stack = stack_from_meta(archived)
    findings = check(stack, machine)
    errors = blocking(findings)
    if errors and not force:
        first = errors[0]
        more = f" (and {len(errors) - 1} more)" if len(errors) > 1 else ""
        raise CuenvError(f"{stack.label} will not run on this machine: {first.message}{more}",
                         hint=(first.fix + " " if first.fix else "") + "Use --force to unpack it anyway.")
    store = Store.from_settings(settings)
    store.envs_dir.mkdir(parents=True, exist_ok=True)
    with store.locked(env_name):
        prepare_prefix(store, env_name, force=force)
        prefix = store.path(env_name)
        try:
            store.claim(env_name)  # before anything is extracted: a half-made environment is still ours
            proof = None
            if manifest["kind"] == "conda":
                proof = _unpack_conda(archive, manifest, solution, prefix, cache_dir=Path(settings.cache_dir))
            else:
                _unpack_venv(archive, solution, prefix, cache_dir=Path(settings.cache_dir), environ=environ, progress=progress)
            lock_hash = folder.write_solution(prefix, solution.to_json())
            if lock_hash != archived.lock_hash:
                raise CuenvError(f"The lock in {archive} does not match its recorded hash.", hint="The archive was altered; pack it again.")
            from cuenv.envs.diskuse import disk_usage

            meta = moved_meta(archived, name=env_name, new=prefix).replace(
                validation=Validation(fingerprint(environ), tuple(findings)), smoke_test=None,
                unpacked_from=_unpacked_from(archive, manifest, archived, solution, prefix, proof),
                size_bytes=disk_usage(prefix))  # what is here, not what the manifest claims
            meta = meta.replace(tools=cudatools.install_here(name=env_name, prefix=prefix, layout=meta.layout, meta=meta,
                                                             environ=environ, compiler_hint=None))
            store.write_meta(env_name, meta)
            render_activation(store, env_name, settings, environ)
            store.mark_complete(env_name)
        except BaseException:
            store.remove(env_name)  # an unpack that did not finish leaves nothing usable-looking
            raise
    return store.get(env_name), findings
