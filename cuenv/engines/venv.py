"""The venv engine: uv resolves NVIDIA's CUDA wheels from PyPI into a lock, then installs it.

solve   = ``uv pip compile --format pylock.toml`` (every wheel's URL and sha256), for the target's
          Python and platform, never downloading a Python;
install = ``uv venv`` with a local interpreter, then ``uv pip sync --require-hashes`` of exactly the
          locked URLs; uv's cache (``CACHE/uv``) hardlinks files into every venv;
layout  = the venv's bin plus ``site-packages/nvidia/*/{bin,lib,include}`` (CUDA 11/12 wheels) or
          ``nvidia/cu13/...`` (CUDA 13), and a CUDA_HOME of symlinks in ``PREFIX/.cuenv/cuda``.
"""

from __future__ import annotations

import functools
import json
import os
import re
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, Callable, Final, Iterable, Mapping

from cuenv import runner
from cuenv.activation.target import CudaLayout
from cuenv.engines import cudahome
from cuenv.engines.base import (
    DownloadFailed,
    Engine,
    HashMismatch,
    MixedCudaMajors,
    Package,
    PackagesNotFound,
    Request,
    Solution,
    SolveError,
    Target,
    Unsatisfiable,
    check_requested_hashes,
    check_solution_engine,
    emit,
    total_size,
)
from cuenv.engines.events import Download, Downloaded, Output, Progress, Step, Tick, package_count
from cuenv.engines.mirrors import PYPI_SIMPLE, Mirrors, uv_index_env
from cuenv.envs import folder
from cuenv.errors import CuenvError, ToolError, UsageError
from cuenv.knowledge.packages import canonical, nvidia_major

SOLVE_TIMEOUT: Final = 600.0
INSTALL_TIMEOUT: Final = 3600.0  # a framework stack is several GB
# The environment's own installer (issue 26 §2): seeded into every venv so that `pip` and `python -m pip`
# inside `cuenv use`/`run` install into the environment, never into the base interpreter. A tool of the
# environment, not one of its packages: left out of what it holds unless a solution names it.
INSTALLER: Final = "pip"
INSTALLER_PIN_DAYS: Final = 30  # how long the pip wheel solved for seeding is reused (cuenv's cache/solves)

# uv --python-platform knows these manylinux levels (uv 0.13); a target's glibc picks the highest <= it.
_MANYLINUX: Final = (17, 28, 31, 32, 33, 34, 35, 36, 37, 38, 39, 40)
_ARCH: Final = {"linux-64": "x86_64", "linux-aarch64": "aarch64"}
_OTHER_PLATFORMS: Final = {
    "win-64": "x86_64-pc-windows-msvc",
    "osx-64": "x86_64-apple-darwin",
    "osx-arm64": "aarch64-apple-darwin",
}
# NVIDIA's CUDA 13 wheels dropped the -cuXX suffix; these unsuffixed names carry the CUDA major
# in their version instead. cuFFT, cuSOLVER, cuSPARSE, cuRAND and cuFile keep their own numbering
# (nvidia-cufft 12.0 and nvidia-curand 10.4 ship with CUDA 13), so they say nothing of the CUDA major.
_UNSUFFIXED_CUDA: Final = re.compile(r"^nvidia-(cuda-[a-z-]+|cublas|npp|nvjitlink|nvjpeg|nvvm|nvtx)$")
_UNSUFFIXED_LIBRARY: Final = re.compile(r"^nvidia-(cufft|cufile|curand|cusolver|cusparse|cusparselt)$")


@functools.cache
def _uv_bin() -> str:
    """Where the uv package's binary is, found once per process (each search reads sysconfig); a failure
    (ImportError, FileNotFoundError) is not kept."""
    from uv import find_uv_bin

    return find_uv_bin()


# -- pure helpers -----------------------------------------------------------------------------
def uv_python_platform(platform: str, glibc: str | None) -> str:
    """conda-style platform + target glibc -> uv's --python-platform value."""
    if platform in _OTHER_PLATFORMS:
        return _OTHER_PLATFORMS[platform]
    arch = _ARCH.get(platform)
    if arch is None:
        raise UsageError(
            f"The venv engine cannot solve for platform {platform!r}.",
            hint=f"Use one of: {', '.join(sorted([*_ARCH, *_OTHER_PLATFORMS]))}.",
        )
    if not glibc:
        return f"{arch}-unknown-linux-gnu"
    try:
        minor = int(glibc.split(".")[1])
    except (IndexError, ValueError):
        raise UsageError(f"{glibc!r} is not a glibc version.", hint="Write it like 2.35.") from None
    levels = [m for m in _MANYLINUX if m <= minor]
    return f"{arch}-manylinux_2_{levels[-1]}" if levels else f"{arch}-unknown-linux-gnu"


def cuda_major_of(name: str, version: str) -> int | None:
    """The CUDA major an NVIDIA wheel belongs to, or None for anything else."""
    major = nvidia_major(name)
    if major is not None:
        return major
    if _UNSUFFIXED_LIBRARY.match(name):
        return None
    if _UNSUFFIXED_CUDA.match(name):
        try:
            return int(version.split(".")[0])
        except ValueError:
            return None
    return None


def check_one_cuda_major(packages: Iterable[Package], *,
                         files: Callable[[Package], frozenset[str]] | None = None) -> int | None:
    """Refuse NVIDIA wheels of several CUDA majors in one venv when they write the same files (cu11 and cu12
    wheels share site-packages/nvidia/<component>/). ``files`` lists a wheel's files (cuenv.engines.wheelfiles):
    with it the wheels are judged by what they write, so CUDA 13 wheels (under nvidia/cu13/) beside cu12 ones
    pass; without it, or when a list cannot be read, by their names. Returns the newest major."""
    majors: dict[int, list[Package]] = {}
    for pkg in packages:
        major = cuda_major_of(pkg.name, pkg.version)
        if major is not None:
            majors.setdefault(major, []).append(pkg)
    names = {m: tuple(sorted(p.name for p in group)) for m, group in majors.items()}
    if len(majors) > 1:
        if files is None:
            raise MixedCudaMajors(names)
        from cuenv.engines import wheelfiles  # on use: urllib.request is a tenth of a warm create's start (issue 29)

        try:
            listed = {p.name: files(p) for group in majors.values() for p in group}
        except wheelfiles.Unreadable as exc:
            raise MixedCudaMajors(names, why=f"their file lists could not be read ({exc})") from None
        clash = wheelfiles.clashes(listed)
        if clash is not None:
            path, one, other = clash
            raise MixedCudaMajors(names, why=f"{one} and {other} both write {path}")
    return max(majors, default=None)


def index_args(index_urls: tuple[str, ...]) -> list[str]:
    """Index URLs in priority order -> uv flags. The last is uv's default (lowest priority) index.

    Several indexes resolve like pip (best version across all), as NVIDIA's and PyTorch's install
    instructions assume; one index is searched alone.
    """
    if not index_urls:
        return []
    args = ["--default-index", index_urls[-1]]
    for url in index_urls[:-1]:
        args += ["--index", url]
    if len(index_urls) > 1:
        args += ["--index-strategy", "unsafe-best-match"]
    return args


def pylock_reader() -> tuple[Any, Any]:
    """The modules that read uv's pylock.toml (tomllib, packaging.pylock), imported: ~20 ms, which a solve
    spends while uv waits on the index (runner.run's ``meanwhile``, issue 26)."""
    if sys.version_info >= (3, 11):
        import tomllib
    else:  # the same API on Python 3.10
        import tomli as tomllib
    from packaging import pylock

    return tomllib, pylock


def parse_pylock(text: str, *, index_urls: tuple[str, ...] = ()) -> tuple[Package, ...]:
    """The pylock.toml `uv pip compile --format pylock.toml` writes -> one Package per entry, its wheel
    first. Read by ``packaging.pylock`` (PEP 751's own validation), as the lockfile readers do (issue 25)."""
    tomllib, pylock = pylock_reader()
    Pylock, PylockUnsupportedVersionError, PylockValidationError = (  # noqa: N806 - packaging's class names
        pylock.Pylock, pylock.PylockUnsupportedVersionError, pylock.PylockValidationError)
    try:
        lock = Pylock.from_dict(tomllib.loads(text))
    except (tomllib.TOMLDecodeError, PylockValidationError, PylockUnsupportedVersionError) as exc:
        raise SolveError(f"uv wrote a pylock.toml that is not valid PEP 751: {exc}",
                         hint="Run again with -v to see uv's command, and report it if it repeats.") from None
    default_index = index_urls[0] if len(index_urls) == 1 else None
    packages = []
    for entry in lock.packages:
        name, version = canonical(entry.name), str(entry.version or "")
        artifact = (entry.wheels[0] if entry.wheels else None) or entry.sdist or entry.archive
        if artifact is None or not artifact.url:
            raise SolveError(
                f"{name} resolved to a source the lock cannot pin by URL and hash (a path or VCS checkout).",
                hint="Require a released version from an index instead of a path or VCS checkout.",
            )
        url = artifact.url
        packages.append(
            Package(
                name=name,
                version=version,
                kind="pypi",
                url=url,
                sha256=artifact.hashes.get("sha256"),
                index_url=entry.index or default_index,
                filename=url.rsplit("/", 1)[-1].split("#")[0],
                size=artifact.size,
            )
        )
    return tuple(packages)


_EXACT = re.compile(r"^\s*([A-Za-z0-9][A-Za-z0-9._-]*)\s*==\s*([A-Za-z0-9][A-Za-z0-9.+!_-]*)\s*$")


def exact_pins(requirements: Iterable[str]) -> dict[str, str] | None:
    """{name: version} when every requirement is ``name==version`` (no extras, markers or wildcards)."""
    pins = {}
    for req in requirements:
        m = _EXACT.match(req)
        if m is None:
            return None
        pins[canonical(m.group(1))] = m.group(2)
    return pins or None


def _pinned_solve_file(cache_dir: Path, question: list[str]) -> Path:
    """Where the answer to one exactly pinned solve is kept: named by the requirements and every
    option uv was given (Python, platform, indexes, find-links), temporary paths left out. The answer is
    the packages uv's pylock.toml named, as cuenv's own JSON (``Package.to_json``): read again without
    TOML or PEP 751 parsers (a fifth of a warm create's imports, issue 29)."""
    import hashlib

    key = hashlib.sha256(json.dumps(question).encode()).hexdigest()[:32]
    return cache_dir / "solves" / f"{key}.json"


def _kept_pinned_solve(path: Path) -> tuple[Package, ...] | None:
    """The packages kept at ``path`` by an earlier solve, or None (none kept, or unreadable: solve again)."""
    try:
        return tuple(Package.from_json(p) for p in json.loads(path.read_text(encoding="utf-8")))
    except (OSError, ValueError, TypeError, UsageError):
        return None


def _keep_pinned_solve(path: Path, text: str) -> None:
    """Keep (or replace) the answer at ``path``."""
    from cuenv import atomic

    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        atomic.write_text(path, text)
    except OSError:  # a read-only cache: solving again next time is the only cost
        pass


def requirements_lines(packages: Iterable[Package], *, mirrors: Mirrors | None = None) -> str:
    """The exact artifacts as pip requirements, hashes required (pip and uv read the same file).

    ``name @ URL --hash=sha256:...`` where the URL itself can be fetched (rewritten to its mirror);
    ``name==version --hash=sha256:...`` from the (mirrored) index where the lock's index has a
    mirror that does not keep its file paths (PyPI's files live on another host), or where the lock
    names only the project's page. The index lines come first. The hash pins the very file either way.
    """
    mirrors = mirrors or Mirrors()
    lines, indexes = [], []
    for pkg in packages:
        if not pkg.sha256:
            raise HashMismatch(f"{pkg.name} {pkg.version}", expected="a sha256 in the lock", actual="none")
        url = mirrors.to_mirror(pkg.url)
        page = pkg.url.endswith("/")  # the lock names the project's page, not a file
        if page or (url == pkg.url and mirrors.rule_for(pkg.index_url or PYPI_SIMPLE) is not None):
            indexes.append(mirrors.to_mirror(pkg.index_url or PYPI_SIMPLE))
            lines.append(f"{pkg.name}=={pkg.version} --hash=sha256:{pkg.sha256}")
        else:
            lines.append(f"{pkg.name} @ {url} --hash=sha256:{pkg.sha256}")
    found = list(dict.fromkeys(indexes))
    head = [f"--index-url {u}" for u in found[:1]] + [f"--extra-index-url {u}" for u in found[1:]]
    return "".join(line + "\n" for line in head + lines)


_UNITS: Final = {"B": 1, "KiB": 1 << 10, "MiB": 1 << 20, "GiB": 1 << 30, "TiB": 1 << 40}
_UV_DOWNLOADING: Final = re.compile(r"^\s*Downloading (\S+) \(([\d.]+)\s*([KMGT]?i?B)\)\s*$")
_UV_DOWNLOADED: Final = re.compile(r"^\s*Downloaded (\S+)\s*$")


def uv_event(line: str) -> Download | Downloaded | None:
    """A progress event from a line uv prints when its stderr is not a terminal, or None.

    uv 0.8-0.13 prints "Downloading NAME (SIZE)" when a large download starts and " Downloaded
    NAME" when it ends (small ones are not announced); SIZE is binary units (19.1MiB)."""
    match = _UV_DOWNLOADING.match(line)
    if match:
        number, unit = float(match.group(2)), match.group(3)
        return Download(canonical(match.group(1)), int(number * _UNITS.get(unit, 1)))
    match = _UV_DOWNLOADED.match(line)
    if match:
        return Downloaded(canonical(match.group(1)))
    return None


def explain_uv_failure(stderr: str, *, where: str) -> Exception:
    """uv's resolver/installer errors -> typed cuenv errors."""
    if "No space left on device" in stderr:
        return ToolError("The disk is full: uv could not write the environment's files (No space left on device).",
                         hint="Free some space where CUENV_HOME lives, or point CUENV_HOME at a larger disk.")
    missing = re.findall(r"Because ([A-Za-z0-9._-]+) was not found in the package registry", stderr)
    if missing:
        return PackagesNotFound(sorted(set(missing)), where=where)
    missing = re.findall(r"no version of ([A-Za-z0-9._-]+(?:[=<>!~]=?[^\s,]+)?)", stderr)
    if "No solution found" in stderr and missing and "depends on" not in stderr:
        return PackagesNotFound(sorted(set(missing)), where=where)
    if "No solution found" in stderr:
        tail = stderr.split("No solution found", 1)[1].split("\n", 1)[-1]
        # uv wraps long lines: "has no usable wheels" may span two of them
        sdist_only = re.findall(r"Because ([A-Za-z0-9._-]+)(?:==\S+)?\s+has\s+no\s+usable\s+wheels", stderr)
        names = sorted(set(sdist_only))
        hint = (f"{', '.join(names)} publishes no wheel on {where} for this "
                "Python and platform, and cuenv installs only wheels (a source build runs its code). Pin a version "
                "that has a wheel, add the page that serves its wheels (with -f or --extra-index-url), or, for "
                f"`cuenv create -f/-r`, build it from source with {' '.join('--allow-build ' + n for n in names)} "
                "(that runs its build code on this machine)."
                if sdist_only else None)
        return Unsatisfiable(tail.replace("╰─▶", "").replace("×", ""), hint=hint)
    mismatch = re.search(r"Hash mismatch for `([^`]+)`.*?Expected:\s*(\S+).*?Computed:\s*(\S+)", stderr, re.S)
    if mismatch:
        # uv wraps long lines to the terminal's width: one message line again.
        return HashMismatch(" ".join(mismatch.group(1).split()), expected=mismatch.group(2), actual=mismatch.group(3))
    failed = re.search(r"Failed to (?:fetch|download)(?:[^`\n]*`([^`]+)`|:\s*(\S+))", stderr)
    if failed:
        url = failed.group(1) or failed.group(2)
        causes = re.findall(r"cause:\s*(.+)", stderr)
        reason = causes[-1].strip() if causes else runner.stderr_tail(stderr, lines=2)
        return DownloadFailed(url, reason)
    return ToolError(f"uv failed: {runner.stderr_tail(re.sub(r'(?m)^error: ', '', stderr))}")


# -- the engine ---------------------------------------------------------------------------------
class Begun:
    """An online resolve under way (VenvEngine.begin_resolve): :meth:`result` waits for uv's answer once
    and keeps it (or its error); :meth:`cancel` stops it. Either removes its files."""

    __slots__ = ("_child", "_answer", "_tmp", "_got")

    def __init__(self, child: runner.Started, answer: Callable[[], tuple[Package, ...]],
                 tmp: tempfile.TemporaryDirectory[str]) -> None:
        self._child, self._answer, self._tmp = child, answer, tmp
        self._got: tuple[Package, ...] | BaseException | None = None

    def result(self) -> tuple[Package, ...]:
        if self._got is None:
            try:
                self._got = self._answer()
            except CuenvError as exc:
                self._got = exc
            finally:
                self._tmp.cleanup()
        if isinstance(self._got, BaseException):
            raise self._got
        return self._got

    def cancel(self) -> None:
        """uv stopped and its files removed, unless it has answered (then nothing to do)."""
        if self._got is None:
            self._got = ToolError("The resolve was cancelled.")
            self._child.kill()
            self._tmp.cleanup()


class VenvEngine(Engine):
    name = "venv"
    family = "venv"

    def available(self) -> bool:
        try:
            self._uv()
        except ToolError:
            return False
        return True

    def install_hint(self) -> str:
        from cuenv.selfinstall import detect

        return detect().hint_for("uv>=0.8")

    def _uv(self) -> str:
        try:
            return _uv_bin()
        except ImportError:
            raise ToolError("The uv package is not installed.", hint=self.install_hint()) from None
        except FileNotFoundError:
            raise ToolError("The uv package has no uv binary.", hint=self.install_hint()) from None

    def _env(self, cache_dir: Path) -> dict[str, str]:
        # The indexes come from the request and cuenv's mirrors alone (a user's UV_DEFAULT_INDEX is
        # one of those mirrors, shown by `cuenv config show`), never from uv's own variables too.
        env = {k: v for k, v in uv_index_env(self.environ).items() if k not in ("VIRTUAL_ENV", "CONDA_PREFIX", "UV_PYTHON")}
        env.update(
            UV_CACHE_DIR=str(cache_dir / "uv"),
            UV_PYTHON_DOWNLOADS="never",  # a venv uses a Python that is already here
            UV_NO_CONFIG="1",  # the recipe alone decides indexes: user uv.toml files do not leak in
            UV_LINK_MODE="hardlink",
            NO_COLOR="1",
        )
        return env

    def _wheel_files(self, pkg: Package) -> frozenset[str]:
        """The files a locked wheel installs, read through the mirrors (cuenv.engines.wheelfiles)."""
        from cuenv.engines.wheelfiles import wheel_files

        return wheel_files(self.mirrors.to_mirror(pkg.url))

    def uv_run(self, args: list[str], *, cache_dir: Path, timeout: float, where: str,
               meanwhile: Callable[[], object] | None = None) -> runner.Completed:
        done = runner.run([self._uv(), *args], timeout=timeout, env=self._env(cache_dir), check=False, meanwhile=meanwhile)
        if done.returncode != 0:
            raise explain_uv_failure(done.stderr or done.stdout, where=where)
        return done

    def _uv_stream(self, args: list[str], *, cache_dir: Path, timeout: float, where: str, progress: Progress | None,
                   sizes: Mapping[str, int | None], cached_first: bool = False) -> None:
        """Run uv with its lines as progress events; a cancel (an exception from ``progress``) or
        Ctrl-C ends uv and its workers at once (cuenv.runner.stream). What uv finished stays in its cache.

        ``cached_first``, for installs by URL and hash: uv runs ``--offline`` first, which takes every
        wheel from its cache without asking the server whether the file changed (the hash says it did not;
        that question was half of a warm `cuenv add`, issue 29), and again online only when a wheel is
        missing there. uv prepares every wheel before it installs one, so a miss changes nothing."""
        if cached_first:
            offline = runner.run([self._uv(), *args, "--offline"], timeout=timeout, env=self._env(cache_dir), check=False)
            if offline.returncode == 0:
                for line in (offline.stderr or "").splitlines():
                    emit(progress, Output(line))
                return
            runner.log(__name__, "info", "not all in uv's cache: installing online")

        def on_line(text: str) -> None:
            emit(progress, Output(text))
            found = uv_event(text)
            if found is not None:  # the lock's exact size first
                emit(progress, found.replace(size=sizes.get(found.package) or found.size))

        done = runner.stream([self._uv(), *args], timeout=timeout, env=self._env(cache_dir), on_line=on_line,
                             tick=lambda: emit(progress, Tick()))
        if done.returncode != 0:
            raise explain_uv_failure(done.stderr or done.stdout, where=where)

    # solve ------------------------------------------------------------------------------------
    def solve(self, request: Request, *, target: Target, cache_dir: Path) -> Solution:
        python = request.python or f"{sys.version_info.major}.{sys.version_info.minor}"
        packages = self.resolve_wheels(request, python=python, glibc=target.glibc, cache_dir=cache_dir)
        check_one_cuda_major(packages, files=self._wheel_files)
        return Solution(engine=self.name, platform=request.platform, python=python, packages=packages)

    def resolve_wheels(self, request: Request, *, python: str, glibc: str | None, cache_dir: Path,
                       provided: Mapping[str, str] | None = None, no_deps: bool = False,
                       interpreter: Path | None = None, offline: bool = False,
                       meanwhile: Callable[[], object] | None = None) -> tuple[Package, ...]:
        """``request.requirements`` resolved to exact wheels (URL and sha256) for ``python`` on the request's
        platform, with its indexes (through their mirrors), find-links pages, constraints and --pre; its
        --hash values checked.

        ``provided``: distributions already in the prefix (name -> version): they constrain the resolution
        and are left out of it. ``no_deps``: exactly the requirements, as the pip layer locks its pins.
        ``interpreter``: the interpreter to solve for, as it is: uv reads its Python, platform and glibc
        (``python``, the platform and ``glibc`` are not asked) and skips its search of PATH (0.4 s where PATH
        has pyenv's shims; issue 26's benchmark). ``offline``: uv's cache alone answers (its pages as last
        fetched, however old), or uv fails; such an answer is never kept. ``meanwhile``: work done while uv
        runs, beside loading the reader of its answer (runner.run's).
        """
        if not request.requirements:
            return ()
        from cuenv.trust import requirements as trusted

        # The boundary before uv reads them (issue 14): no option, second line, local path, ${...} or non-https
        # URL, whatever answers; each string is parsed as PEP 508 too where uv is about to read it (_solve).
        trusted.check_pip_request(request, parse=False)
        pinned = not (offline or provided or request.constraints) and all(_EXACT.match(r) for r in request.requirements)
        with tempfile.TemporaryDirectory(prefix="cuenv-solve-") as tmp:
            args, fetch_from, where = self._question(request, Path(tmp), python=python, glibc=glibc, provided=provided,
                                                     no_deps=no_deps, interpreter=interpreter, offline=offline)
            out = Path(tmp) / "pylock.toml"
            # Every requirement pinned exactly: the answer kept in cuenv's cache by an earlier solve of exactly
            # this question (keyed by everything uv was asked) answers again: a second environment of the same
            # pins starts no solver at all (uv's start and interpreter query alone were a third of a warm
            # create, issue 29). Such an answer was kept only after _solve's PEP 508 parse of these very
            # strings, and nothing of the request reaches uv then.
            kept = _pinned_solve_file(cache_dir, [*request.requirements, *(a.replace(tmp, '') for a in args)]) \
                if pinned else None
            found = _kept_pinned_solve(kept) if kept is not None else None
            if found is not None:
                runner.log(__name__, "info", "solve of %d exact pins answered from cuenv's cache (%s)", len(found), kept)
            else:
                pins = exact_pins(request.requirements) if pinned else None
                found = self._solve(args, request, out=out, fetch_from=fetch_from, pins=pins, cache_dir=cache_dir,
                                    where=where, meanwhile=meanwhile)
                if kept is not None and pins == {canonical(p.name): p.version for p in found}:
                    _keep_pinned_solve(kept, json.dumps([p.to_json() for p in found], sort_keys=True))
        return self._answer(found, request)

    def begin_resolve(self, request: Request, *, cache_dir: Path, provided: Mapping[str, str], interpreter: Path,
                      no_deps: bool = False) -> Begun:
        """:meth:`resolve_wheels` of ``request`` for ``interpreter``, online, begun now: uv asks the index
        while the caller goes on (`cuenv add` plans from uv's cache meanwhile, cuenv.envs.change._predicted);
        :meth:`Begun.result` waits for the answer. ``no_deps``: exactly the requirements, which uv answers
        from the index pages alone (one round trip: no wheel's metadata is asked)."""
        from cuenv.trust import requirements as trusted

        trusted.check_pip_request(request)  # the boundary, PEP 508 parse included, before uv reads anything
        tmp = tempfile.TemporaryDirectory(prefix="cuenv-solve-")
        try:
            args, fetch_from, where = self._question(request, Path(tmp.name), python="", glibc=None, provided=provided,
                                                     no_deps=no_deps, interpreter=interpreter, offline=False)
            child = runner.start([self._uv(), *args], timeout=SOLVE_TIMEOUT, env=self._env(cache_dir))
        except BaseException:
            tmp.cleanup()
            raise
        return Begun(child, lambda: self._answer(self._read_answer(child, Path(tmp.name), fetch_from, where), request), tmp)

    def _read_answer(self, child: runner.Started, tmp: Path, fetch_from: tuple[str, ...], where: str) -> tuple[Package, ...]:
        done = child.wait(check=False)
        if done.returncode != 0:
            raise explain_uv_failure(done.stderr or done.stdout, where=where)
        return parse_pylock((tmp / "pylock.toml").read_text(encoding="utf-8"), index_urls=fetch_from)

    def _question(self, request: Request, tmp: Path, *, python: str, glibc: str | None, provided: Mapping[str, str] | None,
                  no_deps: bool, interpreter: Path | None, offline: bool) -> tuple[list[str], tuple[str, ...], str]:
        """uv's arguments for :meth:`resolve_wheels` (its requirement and constraint files written to ``tmp``,
        its answer to be ``tmp/pylock.toml``), the indexes it fetches from (their mirrors), and what to call
        them in an error."""
        provided = dict(provided or {})
        indexes = request.index_urls or (PYPI_SIMPLE,)
        fetch_from = tuple(self.mirrors.to_mirror(u) for u in indexes)
        where = "the package index" + ("es " if len(indexes) > 1 else " ") + ", ".join(
            u + (f" (mirror {m})" if m != u else "") for u, m in zip(indexes, fetch_from))
        reqs = tmp / "requirements.in"
        reqs.write_text("".join(r + "\n" for r in request.requirements), encoding="utf-8")
        args = ["pip", "compile", str(reqs), "--format", "pylock.toml", "-o", str(tmp / "pylock.toml"), "--no-header",
                "--quiet", "--only-binary", ":all:", *index_args(fetch_from)]
        if interpreter is not None:
            args += ["--python", str(interpreter)]
        else:
            args += ["--python-version", python, "--python-platform", uv_python_platform(request.platform, glibc)]
        for url in request.find_links:
            args += ["--find-links", url]
        for name in request.allow_build:  # the user's opt-in: this package from its source distribution
            args += ["--no-binary", name]
        if request.prerelease:
            args += ["--prerelease", "allow"]
        if no_deps:
            args.append("--no-deps")
        if offline:
            args.append("--offline")
        constraints = list(request.constraints) + [f"{n}=={v}" for n, v in sorted(provided.items())]
        if constraints:
            cons = tmp / "constraints.txt"
            cons.write_text("".join(c + "\n" for c in constraints), encoding="utf-8")
            args += ["--constraint", str(cons)]
        for name in sorted(provided):
            args += ["--no-emit-package", name]
        return args, fetch_from, where

    def _answer(self, found: tuple[Package, ...], request: Request) -> tuple[Package, ...]:
        """uv's answer as a lock keeps it (canonical URLs), the request's --hash values checked."""
        packages = self._canonical(found, named=bool(request.index_urls))
        check_requested_hashes(packages, request.hashes)
        return packages

    def _solve(self, args: list[str], request: Request, *, out: Path, fetch_from: tuple[str, ...],
               pins: dict[str, str] | None, cache_dir: Path, where: str,
               meanwhile: Callable[[], object] | None = None) -> tuple[Package, ...]:
        """uv's answer to ``args`` (it writes the pylock.toml ``out``), the request checked first."""
        from cuenv.trust import requirements as trusted

        trusted.check_pip_request(request)  # and each requirement one PEP 508 requirement, before uv reads them
        if pins:
            # uv's cache alone can answer, without asking the index again (0.07 s instead of 0.3 s here).
            # Used only when the answer is exactly the pins, so the result is the one the index would give;
            # anything else asks the index.
            done = runner.run([self._uv(), *args, "--offline"], timeout=SOLVE_TIMEOUT, env=self._env(cache_dir), check=False)
            if done.returncode == 0 and out.is_file():
                found = parse_pylock(out.read_text(encoding="utf-8"), index_urls=fetch_from)
                if pins == {canonical(p.name): p.version for p in found}:
                    return found
        def reading() -> None:
            pylock_reader()
            if meanwhile is not None:
                meanwhile()

        self.uv_run(args, cache_dir=cache_dir, timeout=SOLVE_TIMEOUT, where=where, meanwhile=reading)
        return parse_pylock(out.read_text(encoding="utf-8"), index_urls=fetch_from)

    def _canonical(self, packages: tuple[Package, ...], *, named: bool) -> tuple[Package, ...]:
        """What uv reported through mirrors -> the canonical index and file URLs a lock keeps.
        Where the request named no index (uv's default, PyPI), packages name none either, as before
        mirrors existed: the lock fills in PyPI."""

        out = []
        for pkg in packages:
            if pkg.index_url is None:
                out.append(pkg)
                continue
            url = self.mirrors.pypi_file(pkg.url, index=pkg.index_url, project=pkg.name)
            index = self.mirrors.to_upstream(pkg.index_url).rstrip("/")
            out.append(pkg.replace(url=url, index_url=index if named or index != PYPI_SIMPLE else None))
        return tuple(out)

    # install ----------------------------------------------------------------------------------
    def find_python(self, version: str | None, *, cache_dir: Path) -> str:
        """A local interpreter of ``version`` ("3.11"); this one when it matches or none is asked."""
        here = f"{sys.version_info.major}.{sys.version_info.minor}"
        if version is None or version == here:
            return sys.executable
        done = self.uv_run(
            ["python", "list", "--only-installed", "--output-format", "json"],
            cache_dir=cache_dir, timeout=60, where="local Pythons",
        )
        found = json.loads(done.stdout or "[]")
        for item in found:
            parts = item.get("version_parts", {})
            if item.get("implementation") == "cpython" and f"{parts.get('major')}.{parts.get('minor')}" == version:
                path = item.get("path")
                if isinstance(path, str) and path and os.access(path, os.X_OK):
                    return path
        have = sorted({".".join(i["version"].split(".")[:2]) for i in found if i.get("version")} | {here})
        raise UsageError(
            f"Python {version} is not installed here (found: {', '.join(have)}).",
            hint=f"Install Python {version} (for example `uv python install {version}`), or use --python {here}.",
        )

    def install(self, prefix: Path, solution: Solution, *, cache_dir: Path, progress: Progress | None = None,
                layer: Request | None = None) -> Solution | None:
        check_solution_engine(self, solution)
        check_one_cuda_major(solution.packages, files=self._wheel_files)
        reqs_text = requirements_lines(solution.packages, mirrors=self.mirrors)  # refuses an unhashed package first
        python = self.find_python(solution.python, cache_dir=cache_dir)
        emit(progress, Step("venv", f"{prefix} (Python {solution.python or 'default'})"))
        if python == sys.executable:
            # This interpreter's own venv, made in-process by the standard library (symlinks, no pip: uv seeds
            # it below), the same layout `uv venv` makes; a `uv venv` run was a tenth of a warm create (issue 29).
            import venv

            venv.EnvBuilder(symlinks=True).create(prefix)
        else:
            self.uv_run(
                ["venv", str(prefix), "--python", python, "--allow-existing", "--no-project"],
                cache_dir=cache_dir, timeout=120, where="uv venv",
            )
        emit(progress, Step("install", package_count(len(solution.packages)), total_size(solution.packages)))
        # pip rides along in the same `uv pip sync`, by URL and hash, where its wheel is known (issue 29:
        # a third uv run was a fifth of a warm create); the solution, and so the lock, still leaves it out.
        seed = None if any(p.name == INSTALLER for p in solution.packages) else \
            self.installer_pin(solution.python or f"{sys.version_info.major}.{sys.version_info.minor}", solution.platform,
                               cache_dir=cache_dir)
        if seed is not None:
            reqs_text += requirements_lines((seed,), mirrors=self.mirrors)
        home, key = folder.cuda_home(prefix), _cuda_home_key(prefix, solution.packages)
        predicted = cudahome.remembered(cache_dir, key) if key and not os.path.lexists(home) else None
        planting = runner.meanwhile(cudahome.plant, home, predicted) if predicted is not None else None
        try:
            with tempfile.TemporaryDirectory(prefix="cuenv-install-") as tmp:
                reqs = Path(tmp) / "requirements.txt"
                reqs.write_text(reqs_text, encoding="utf-8")
                self._uv_stream(
                    ["pip", "sync", str(reqs), "--python", str(prefix / "bin" / "python"), "--require-hashes",
                     "--allow-empty-requirements", "--link-mode", "hardlink", "--index-strategy", "unsafe-best-match"],
                    cache_dir=cache_dir, timeout=INSTALL_TIMEOUT, where="the locked URLs", progress=progress,
                    sizes={p.name: p.size for p in solution.packages}, cached_first=True,
                )
        finally:  # the links are planted before anything else (a failed create's removal) touches the prefix
            if planting is not None:
                try:
                    planting()
                except OSError:
                    predicted = None
        if seed is None and not any(p.name == INSTALLER for p in solution.packages):
            self.seed_installer(prefix, cache_dir=cache_dir, progress=progress)
        site = site_packages(prefix)
        if site is not None:
            made = cudahome.build_cuda_home(home, nvidia_components(site), planted=predicted)
            if key and made != predicted:
                cudahome.remember(cache_dir, key, made)
        # the caller records the solution (cuenv.envs.folder.write_solution, atomic): one writer (issue 24 §4)
        emit(progress, Step("done", str(prefix)))
        return None

    def installer_pin(self, python: str, platform: str, *, cache_dir: Path) -> Package | None:
        """pip as one exact wheel (URL and sha256) for ``python`` on ``platform``: solved once and kept in
        cuenv's cache for INSTALLER_PIN_DAYS (then solved again, so a new pip arrives), None where it
        cannot be solved (offline with no pin kept: seed_installer then takes pip from uv's cache)."""
        kept = cache_dir / "solves" / f"installer-{python}-{platform}.json"
        try:
            if time.time() - kept.stat().st_mtime < INSTALLER_PIN_DAYS * 86400:
                return Package.from_json(json.loads(kept.read_text(encoding="utf-8")))
        except (OSError, ValueError, UsageError):
            pass  # none kept, too old or unreadable: solve it
        request = Request(engine=self.name, python=python, platform=platform, requirements=(INSTALLER,))
        try:
            found = [p for p in self.resolve_wheels(request, python=python, glibc=None, cache_dir=cache_dir, no_deps=True)
                     if p.name == INSTALLER and p.sha256]
        except CuenvError as exc:
            runner.log(__name__, "info", "pip not pinned (%s): seeded from uv's cache instead", exc.message)
            return None
        if len(found) != 1:
            return None
        _keep_pinned_solve(kept, json.dumps(found[0].to_json(), sort_keys=True))
        return found[0]

    def seed_installer(self, prefix: Path, *, cache_dir: Path, progress: Progress | None = None) -> None:
        """pip into the venv, from uv's cache when it has it (no index asked), else from the index. Where it
        cannot be had, ``bin/pip`` says so and how to add it instead of falling through to another pip on PATH."""
        python = str(prefix / "bin" / "python")
        args = ["pip", "install", "--python", python, INSTALLER, "--link-mode", "hardlink"]
        for extra in (["--offline"], []):
            done = runner.run([self._uv(), *args, *extra], timeout=300, env=self._env(cache_dir), check=False)
            if done.returncode == 0:
                return
        emit(progress, Output(f"pip could not be installed into {prefix}: {runner.stderr_tail(done.stderr, lines=1)}"))
        shim = prefix / "bin" / "pip"
        shim.write_text("#!/bin/sh\necho 'cuenv: this environment has no pip; add it with `cuenv add -n "
                        f"{prefix.name} pip`' >&2\nexit 127\n", encoding="utf-8")
        shim.chmod(0o755)

    # read a prefix ----------------------------------------------------------------------------
    def layout(self, prefix: Path) -> CudaLayout:
        site = site_packages(prefix)
        comps = nvidia_components(site) if site else ()
        home = folder.cuda_home(prefix)
        return CudaLayout(
            prefix=prefix,
            kind="venv",
            bin_dirs=(prefix / "bin", *[c / "bin" for c in comps if (c / "bin").is_dir()]),
            lib_dirs=tuple(c / "lib" for c in comps if (c / "lib").is_dir()),
            include_dirs=tuple(c / "include" for c in comps if (c / "include").is_dir()),
            cuda_home=home if home.is_dir() else None,
        )

    def installed(self, prefix: Path) -> tuple[Package, ...]:
        site = site_packages(prefix)
        if site is None:
            return ()
        verified = {(p.name, p.version, p.url): p for p in recorded_packages(prefix)}
        by_name = {(p.name, p.version, ""): p for p in recorded_packages(prefix)}
        recorded = {p.name for p in recorded_packages(prefix)}
        found = (p for p in map(dist_info_package, site.glob("*.dist-info"))
                 if p and not (p.name == INSTALLER and p.name not in recorded))
        # A package that is still the verified artifact keeps the hash install checked. One installed
        # by name and hash from an index (through a mirror) has no direct_url.json: its recorded
        # entry is the artifact uv verified.
        return tuple(sorted((verified.get((p.name, p.version, p.url)) or by_name.get((p.name, p.version, p.url), p)
                             for p in found), key=lambda p: p.key))


def _cuda_home_key(prefix: Path, packages: Iterable[Package]) -> str | None:
    """The key of the CUDA_HOME links ``packages`` make in ``prefix`` (cudahome.memo_key); None without
    NVIDIA wheels (then there is nearly nothing to link) or a site-packages."""
    site = site_packages(prefix)
    wheels = [(p.name, p.version, p.sha256 or "") for p in packages if p.name.startswith("nvidia-")]
    return cudahome.memo_key(wheels, folder.cuda_home(prefix), site) if wheels and site is not None else None


def recorded_packages(prefix: Path) -> tuple[Package, ...]:
    """The packages of the solution installed into ``prefix`` (its .cuenv/solution.json), none if unreadable.

    What install verified, recorded beside the venv by create: uv's direct_url.json records the URL but not
    the wheel's sha256, and drift checks (issue 6) compare hashes."""
    raw = _read(folder.solution_path(prefix))
    if not raw:
        return ()
    try:
        return Solution.from_json(json.loads(raw)).packages
    except (ValueError, UsageError, KeyError):
        return ()


def site_packages(prefix: Path) -> Path | None:
    found = sorted(prefix.glob("lib/python3*/site-packages"))
    return found[0] if found else None


def nvidia_components(site: Path) -> tuple[Path, ...]:
    """``site-packages/nvidia/<component>`` folders: cu13 first (a whole toolkit), then by name."""
    root = site / "nvidia"
    if not root.is_dir():
        return ()
    comps = sorted(p for p in root.iterdir() if p.is_dir() and not p.name.startswith("__"))
    return tuple(sorted(comps, key=lambda p: (p.name != "cu13", p.name)))


def dist_info_package(dist_info: Path) -> Package | None:
    """A Package from an installed dist-info: name and version from METADATA, URL and hash from
    direct_url.json (PEP 610), which uv writes for requirements installed by URL."""
    meta = _read(dist_info / "METADATA")
    if meta is None:
        return None
    fields: dict[str, str] = {}
    for line in meta.splitlines():
        if not line.strip():
            break
        key, _, value = line.partition(":")
        fields.setdefault(key.strip().lower(), value.strip())
    direct: Mapping[str, object] = {}
    raw = _read(dist_info / "direct_url.json")
    if raw:
        try:
            direct = json.loads(raw)
        except ValueError:
            direct = {}
    info = direct.get("archive_info")
    archive: Mapping[str, object] = info if isinstance(info, dict) else {}
    hashes = archive.get("hashes")
    sha256 = hashes.get("sha256") if isinstance(hashes, dict) else None
    if not sha256 and str(archive.get("hash", "")).startswith("sha256="):
        sha256 = str(archive["hash"]).split("=", 1)[1]
    url = str(direct.get("url", ""))
    return Package(
        name=canonical(fields.get("name", dist_info.name.split("-")[0])),
        version=fields.get("version", ""),
        kind="pypi",
        url=url,
        sha256=sha256,
        filename=url.rsplit("/", 1)[-1] if url else None,
    )


def _read(path: Path) -> str | None:
    """A small file of the environment's (dist-info, its lock): regular, at most limits.LOCK, else None."""
    from cuenv.errors import CuenvError
    from cuenv.trust import limits

    try:
        return limits.read_bytes(path, what="File", limit=limits.LOCK).decode("utf-8", errors="replace")
    except (OSError, CuenvError):
        return None
