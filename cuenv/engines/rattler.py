"""The rattler engine: py-rattler (pixi's conda library) solves and installs in-process.

No conda needed. Virtual packages come from the Target (``__cuda`` from the driver, or from
--target-driver), so a lock for a GPU node can be solved on a login node. ``import rattler`` costs
~50 ms and happens only inside methods.

install verifies every archive's sha256 (or md5) itself before rattler links anything: rattler
0.28 does not re-check the hash of a ``file://`` package, and a lock may have been edited.
"""

from __future__ import annotations

import asyncio
import importlib.util
import platform as _platform
import re
from pathlib import Path
from typing import TYPE_CHECKING, Any, Coroutine, Final, TypeVar

from cuenv.activation.target import CudaLayout
from cuenv.engines import fetch, piplayer
from cuenv.engines.base import (
    DownloadFailed,
    Engine,
    Package,
    PackagesNotFound,
    Request,
    Solution,
    SolveError,
    Target,
    Unsatisfiable,
    check_solution_engine,
    cuda_hint,
    emit,
    total_size,
)
from cuenv.engines.condaprefix import (
    canonical,
    channel_sources,
    conda_layout,
    package_from_record,
    read_conda_meta,
    restore_urls,
    specs_with_python,
    with_pip_layer,
)
from cuenv.engines.events import Progress, Step, package_count
from cuenv.errors import ToolError, UsageError
from cuenv.knowledge.versions import parse_dotted

if TYPE_CHECKING:
    from rattler import RepoDataRecord

_NOT_FOUND: Final = re.compile(r"No candidates were found for (.+?)\.?\s*$", re.M)
_MISSING_IN_TREE: Final = re.compile(r"[─ ]([A-Za-z0-9_.\-]+) [^\n]*? does not exist \(perhaps a missing channel\)")


def virtual_packages(target: Target, *, kernel: str | None = None, host_glibc: str | None = None) -> tuple[tuple[str, str, str], ...]:
    """(name, version, build) of conda's virtual packages for ``target``; validates its versions.

    No ``__cuda`` when the target has no driver: conda then ignores ``__cuda`` constraints,
    exactly as it does on a machine without a GPU.
    """
    out: list[tuple[str, str, str]] = []
    if target.os in ("linux", "osx"):
        out.append(("__unix", "0", "0"))
    if target.os == "linux":
        out.append(("__linux", kernel or "0", "0"))
        glibc = target.glibc or host_glibc or "2.17"
        parse_dotted(glibc, what="glibc version")
        out.append(("__glibc", glibc, "0"))
    elif target.os == "windows":
        out.append(("__win", "0", "0"))
    if target.cuda:
        parse_dotted(target.cuda, what="CUDA version")  # a CONDA_OVERRIDE_CUDA-like value, checked here
        out.append(("__cuda", target.cuda, "0"))
    out.append(("__archspec", "1", target.arch))
    return tuple(out)


def _host_kernel() -> str | None:
    match = re.match(r"(\d+(?:\.\d+)*)", _platform.release())
    return match.group(1) if match else None


def _host_glibc() -> str | None:
    lib, version = _platform.libc_ver()
    return version if lib == "glibc" and version else None


def channel_source(channel: str) -> str:
    """A recipe's channel -> what rattler takes: a name, a URL, or a folder as a file:// URL."""
    if "://" in channel:
        return channel
    path = Path(channel).expanduser()
    if channel.startswith((".", "/", "~")) or path.is_dir():
        return path.resolve().as_uri()
    return channel


def explain_solver_error(message: str, *, target: Target, channels: tuple[str, ...]) -> SolveError:
    where = "the channels " + ", ".join(channels) if channels else "the channels"
    missing = [m.strip().removesuffix(" *") for m in _NOT_FOUND.findall(message)] or _MISSING_IN_TREE.findall(message)
    if missing and "The following packages are incompatible" not in message:
        return PackagesNotFound(sorted(set(missing)), where=where)
    body = message.split("because of:", 1)[-1]
    hint = cuda_hint(target.cuda) if "__cuda" in message else None
    return Unsatisfiable(body, hint=hint)


_T = TypeVar("_T")


def _run(coro: Coroutine[Any, Any, _T]) -> _T:
    """Run a rattler coroutine; a Rust panic (a BaseException) becomes a ToolError."""
    try:
        return asyncio.run(coro)
    except (KeyboardInterrupt, SystemExit):
        raise
    except BaseException as exc:  # noqa: BLE001 - pyo3's PanicException derives from BaseException
        if type(exc).__name__ == "PanicException":
            raise ToolError(f"rattler crashed: {str(exc).splitlines()[0] if str(exc) else 'panic'}") from None
        raise


class RattlerEngine(Engine):
    name = "rattler"
    family = "conda"

    def available(self) -> bool:
        return importlib.util.find_spec("rattler") is not None

    def install_hint(self) -> str:
        from cuenv.selfinstall import detect

        return detect().hint_for("py-rattler>=0.28")

    # solve ------------------------------------------------------------------------------------
    def solve(self, request: Request, *, target: Target, cache_dir: Path) -> Solution:
        self.require()
        if not request.conda_channels:
            raise UsageError("A conda request needs at least one channel.", hint="Add channels to the recipe.")
        from cuenv.trust import requirements as trusted

        trusted.check_conda_request(request.conda_channels, request.conda_specs, source="the request")
        vps = virtual_packages(target, kernel=_host_kernel(), host_glibc=_host_glibc())
        import rattler
        from rattler.exceptions import InvalidMatchSpecError, SolverError

        specs = specs_with_python(request)
        try:
            matchspecs = [rattler.MatchSpec(s) for s in specs]
        except InvalidMatchSpecError as exc:
            raise UsageError(f"Invalid conda spec: {str(exc).splitlines()[0]}.",
                             hint="Write specs like `cuda-version 12.1.*` or `cudnn >=9`.") from None
        generic = [
            rattler.GenericVirtualPackage(rattler.PackageName(n), rattler.Version(v), rattler.BuildString(b)) for n, v, b in vps
        ]
        gateway = rattler.Gateway(cache_dir=cache_dir / "rattler" / "repodata")
        subdirs: list[Any] = [request.platform, "noarch"]  # names; rattler's stubs spell them as a Literal
        sources = [channel_source(c) for c in channel_sources(request.conda_channels, self.mirrors)]
        try:
            records = _run(
                rattler.solve(
                    sources=sources, specs=matchspecs, gateway=gateway, platforms=subdirs,
                    virtual_packages=generic,
                )
            )
        except SolverError as exc:
            raise explain_solver_error(str(exc), target=target, channels=request.conda_channels) from None
        except ToolError:
            raise
        except Exception as exc:  # network and channel errors: rattler raises one class per cause
            first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
            raise DownloadFailed(", ".join(sources), first) from None
        packages = tuple(canonical(_package(r), self.mirrors) for r in records)
        python = next((".".join(p.version.split(".")[:2]) for p in packages if p.name == "python"), request.python)
        return Solution(engine=self.name, platform=request.platform, python=python, packages=packages)

    # install ----------------------------------------------------------------------------------
    def install(self, prefix: Path, solution: Solution, *, cache_dir: Path, progress: Progress | None = None,
                layer: Request | None = None) -> Solution | None:
        self.require()
        check_solution_engine(self, solution)
        import rattler

        emit(progress, Step("install", package_count(len(solution.packages)), total_size(solution.packages)))
        local, records = self._verified_records(tuple(p for p in solution.packages if p.kind == "conda"), cache_dir, progress)
        emit(progress, Step("link", f"{len(records)} packages into {prefix}"))
        prefix.mkdir(parents=True, exist_ok=True)
        _run(rattler.install(records, target_prefix=prefix, cache_dir=cache_dir / "rattler" / "pkgs", show_progress=False))
        restore_urls(prefix, [pkg for pkg, path in local if path.as_uri() != pkg.url])
        installed = with_pip_layer(prefix, solution, layer, environ=self.environ, cache_dir=cache_dir,
                                   mirrors=self.mirrors, progress=progress)
        emit(progress, Step("done", str(prefix)))
        return installed

    def _verified_records(self, packages: tuple[Package, ...], cache_dir: Path,
                          progress: Progress | None) -> tuple[list[tuple[Package, Path]], list[Any]]:
        """Every archive fetched and its hash checked first (nothing is linked unless all match), then
        read as rattler's records, linked from the verified file."""
        import rattler

        archives = cache_dir / "rattler" / "archives"
        local: list[tuple[Package, Path]] = []
        for pkg in packages:
            emit(progress, Step("verify", pkg.filename or pkg.url))
            local.append((pkg, fetch.verified_archive(pkg, archives, progress=progress, mirrors=self.mirrors)))
        records = []
        for pkg, path in local:
            record = _run(rattler.RepoDataRecord.from_package_archive(path))
            found = (record.name.normalized, str(record.version), str(record.build))
            if found != (pkg.name, pkg.version, pkg.build or found[2]):
                raise UsageError(f"{pkg.url} holds {'-'.join(found)}, not {pkg.name}-{pkg.version}-{pkg.build}.")
            record.url = path.as_uri()  # link from the verified file, never a second download
            if pkg.channel:
                record.channel = pkg.channel
            if pkg.md5:  # the archive alone gives only its sha256; keep the verified md5 in conda-meta
                record.md5 = bytes.fromhex(pkg.md5)
            records.append(record)
        return local, records

    def change(self, prefix: Path, *, install: tuple[Package, ...], remove: tuple[str, ...], cache_dir: Path,
               progress: Progress | None = None) -> None:
        """Change the conda packages of an existing ``prefix``: ``install`` (exact artifacts, each replacing the
        package of its name) and take ``remove`` out, as one rattler transaction from what conda-meta holds.
        No solve: cuenv.envs.change planned and checked it."""
        self.require()
        import rattler

        if install:
            emit(progress, Step("install", package_count(len(install)), total_size(install)))
        local, records = self._verified_records(install, cache_dir, progress)
        gone = set(remove) | {p.name for p in install}
        kept = [rattler.PrefixRecord.from_path(path) for path in sorted((prefix / "conda-meta").glob("*.json"))]
        kept = [r for r in kept if r.name.normalized not in gone]
        emit(progress, Step("link", f"{len(records)} packages into {prefix}" if records else f"{', '.join(remove)} out of {prefix}"))
        _run(rattler.install([*kept, *records], target_prefix=prefix, cache_dir=cache_dir / "rattler" / "pkgs",
                             show_progress=False))
        restore_urls(prefix, [pkg for pkg, path in local if path.as_uri() != pkg.url])

    def layout(self, prefix: Path) -> CudaLayout:
        return conda_layout(prefix)

    def installed(self, prefix: Path) -> tuple[Package, ...]:
        return read_conda_meta(prefix) + piplayer.installed(prefix)


def _package(record: RepoDataRecord) -> Package:
    return package_from_record(
        {
            "name": record.name.normalized,
            "version": str(record.version),
            "build": str(record.build),
            "url": record.url,
            "sha256": record.sha256.hex() if record.sha256 else None,
            "md5": record.md5.hex() if record.md5 else None,
            "channel": record.channel,
            "subdir": record.subdir,
            "fn": record.file_name,
            "size": record.size,
        }
    )
