"""The engine interface: solve -> lock -> install from the lock (issue 4 §2-4, issue 6).

Every engine turns a :class:`Request` (plain data from a recipe, a lockfile or flags) into a
:class:`Solution` (every package with its URL and hash: the lock), and installs exactly a Solution
into a prefix with no solve, verifying every hash. ``cuenv create`` = solve + install;
``cuenv create --from-lock`` = install alone. Records here are frozen and JSON-round-trippable.
"""

from __future__ import annotations

import abc
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar, Final, Iterable, Mapping

from cuenv.activation.target import CudaLayout
from cuenv.engines.events import Event, Progress
from cuenv.engines.names import CONDA_FAMILY
from cuenv.errors import ToolError, UsageError
from cuenv.plain import Plain

if TYPE_CHECKING:
    from cuenv.engines.mirrors import Mirrors
    from cuenv.machine.model import Machine

KINDS: Final = ("conda", "pypi")
SOLUTION_VERSION: Final = 1




# Plain classes (cuenv.plain), not dataclasses: every create and change makes these, and importing
# ``dataclasses`` and making a class with it was a sixth of a warm `cuenv add` (issue 26's benchmark).
class Package(Plain):
    """One locked package: exactly one artifact, named by URL and verified by hash."""

    __slots__ = ("name", "version", "kind", "url", "sha256", "md5", "build", "channel", "subdir", "index_url", "filename",
                 "size")

    def __init__(self, name: str, version: str, kind: str, url: str, sha256: str | None, md5: str | None = None,
                 build: str | None = None, channel: str | None = None, subdir: str | None = None,
                 index_url: str | None = None, filename: str | None = None, size: int | None = None) -> None:
        if kind not in KINDS:
            raise ValueError(f"package kind {kind!r} is not one of {KINDS}")
        self.name, self.version, self.kind, self.url = name, version, kind, url
        self.sha256 = sha256  # None only where the tool reported no sha256 (then md5 must be set)
        self.md5 = md5
        self.build = build  # conda build string
        self.channel = channel  # conda channel URL
        self.subdir = subdir  # conda subdir: linux-64, noarch
        self.index_url = index_url  # pypi index the artifact was resolved from, when known
        self.filename = filename
        # Bytes of the artifact, when the solver said: for sizes before a download and progress during
        # it (issue 18). Not part of what a package is: equal packages may differ here, and lockfiles
        # leave it out.
        self.size = size

    def _values(self) -> tuple[object, ...]:  # equality and hash leave the size out
        return (self.name, self.version, self.kind, self.url, self.sha256, self.md5, self.build, self.channel, self.subdir,
                self.index_url, self.filename)

    @property
    def key(self) -> tuple[str, str, str, str]:
        return (self.name, self.kind, self.version, self.build or "")

    def to_json(self) -> dict[str, Any]:
        return {k: v for k in self.__slots__ if (v := getattr(self, k)) is not None}

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Package:
        known = set(cls.__slots__)
        unknown = sorted(set(data) - known)
        if unknown:
            raise UsageError(f"Unknown package field(s) {', '.join(unknown)} in {data.get('name', '?')!r}.")
        try:
            return cls(**dict(data))
        except (TypeError, ValueError) as exc:
            raise UsageError(f"Broken package entry {dict(data)!r}: {exc}.") from None


class Request(Plain):
    """What to solve: plain data, whichever recipe format or flag it came from."""

    __slots__ = ("engine", "python", "conda_channels", "conda_specs", "index_urls", "requirements", "platform", "find_links",
                 "prerelease", "constraints", "hashes", "allow_build")

    def __init__(self, engine: str, python: str | None, conda_channels: tuple[str, ...] = (), conda_specs: tuple[str, ...] = (),
                 index_urls: tuple[str, ...] = (), requirements: tuple[str, ...] = (), platform: str = "linux-64",
                 find_links: tuple[str, ...] = (), prerelease: bool = False, constraints: tuple[str, ...] = (),
                 hashes: tuple[tuple[str, tuple[str, ...]], ...] = (), allow_build: tuple[str, ...] = ()) -> None:
        self.engine = engine
        self.python = python  # "3.11"; None = the engine's default (this interpreter for venv)
        self.conda_channels, self.conda_specs = conda_channels, conda_specs
        self.index_urls = index_urls  # pypi indexes in priority order (the first wins)
        self.requirements = requirements  # PEP 508 strings; for a conda engine, the pip layer installed last
        self.platform = platform
        # pip's options from a requirements file (issue 15), as data: never a raw line (issue 14).
        self.find_links = find_links  # http(s) pages of wheel links
        self.prerelease = prerelease  # --pre
        self.constraints = constraints  # PEP 508 strings (-c files)
        self.hashes = hashes  # (canonical name, allowed "sha256:<hex>")
        self.allow_build = allow_build  # canonical names built from their sdist (--allow-build: runs their build code)


def check_requested_hashes(packages: tuple[Package, ...], hashes: tuple[tuple[str, tuple[str, ...]], ...]) -> None:
    """The solve's artifacts against the ``--hash`` values a requirements file gave, before any download:
    pip's hash-checking mode, applied to the lock."""
    from cuenv.knowledge.packages import canonical

    allowed = dict(hashes)
    for pkg in packages:
        wanted = allowed.get(canonical(pkg.name))
        if wanted and f"sha256:{pkg.sha256}" not in wanted:
            raise HashMismatch(f"{pkg.name} {pkg.version} ({pkg.filename or pkg.url})",
                               expected=" or ".join(wanted), actual=f"sha256:{pkg.sha256}")


class Target(Plain):
    """The machine to solve FOR (this one, or one described by --target-driver/--target-gpu).

    ``cuda`` is the newest CUDA the driver supports (conda's ``__cuda``); None means no driver,
    as on a GPU-less login node: conda then ignores ``__cuda`` constraints, as conda itself does.
    """

    __slots__ = ("cuda", "glibc", "os", "arch")

    def __init__(self, cuda: str | None, glibc: str | None, os: str = "linux", arch: str = "x86_64") -> None:
        self.cuda, self.glibc, self.os, self.arch = cuda, glibc, os, arch

    @classmethod
    def from_machine(cls, machine: Machine) -> Target:
        """From a machine detected, or built from --target-* flags."""
        driver = machine.driver
        return cls(cuda=driver.max_cuda if driver else None, glibc=machine.glibc, os=machine.os, arch=machine.arch)


class Solution(Plain):
    """The lock of an environment: engine, platform, Python and every package, sorted by name."""

    __slots__ = ("engine", "platform", "python", "packages")

    def __init__(self, engine: str, platform: str, python: str | None, packages: tuple[Package, ...] = ()) -> None:
        self.engine, self.platform, self.python = engine, platform, python
        self.packages = tuple(sorted(packages, key=lambda p: p.key))

    def find(self, name: str) -> Package | None:
        return next((p for p in self.packages if p.name == name), None)

    def to_json(self) -> dict[str, Any]:
        return {
            "version": SOLUTION_VERSION,
            "engine": self.engine,
            "platform": self.platform,
            "python": self.python,
            "packages": [p.to_json() for p in self.packages],
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Solution:
        if not isinstance(data, Mapping) or data.get("version") != SOLUTION_VERSION:
            raise UsageError(
                f"Unsupported solution format (version {data.get('version') if isinstance(data, Mapping) else '?'!r}).",
                hint=f"This cuenv reads version {SOLUTION_VERSION}.",
            )
        return cls(
            engine=str(data["engine"]),
            platform=str(data["platform"]),
            python=data.get("python"),
            packages=tuple(Package.from_json(p) for p in data.get("packages", ())),
        )


# -- errors ---------------------------------------------------------------------------------
class EngineUnavailable(ToolError):
    """The engine's tool is not installed (no conda on PATH, no py-rattler)."""


class SolveError(ToolError):
    """The engine could not turn the request into a package set."""


class PackagesNotFound(SolveError):
    def __init__(self, names: tuple[str, ...] | list[str], *, where: str, hint: str | None = None) -> None:
        self.names = tuple(names)
        listed = ", ".join(self.names) or "(unnamed)"
        super().__init__(
            f"Not found in {where}: {listed}.",
            hint=hint or "Check the spelling and version, and that the recipe lists the channel or index that has it.",
        )


class Unsatisfiable(SolveError):
    def __init__(self, explanation: str, *, hint: str | None = None) -> None:
        self.explanation = trim_explanation(explanation)
        super().__init__(
            "The requested packages cannot be installed together:\n" + self.explanation,
            hint=hint or "Relax a pin, or pick a recipe for an older CUDA if the driver is too old.",
        )


class HashMismatch(ToolError):
    def __init__(self, what: str, *, expected: str, actual: str) -> None:
        self.what, self.expected, self.actual = what, expected, actual
        super().__init__(
            f"Hash mismatch for {what}: expected {expected}, got {actual}. Nothing was installed.",
            hint="The lock or the download was altered; re-solve (`cuenv create --force`) or fix the lock.",
        )


class DownloadFailed(ToolError):
    def __init__(self, url: str, reason: str) -> None:
        self.url = url
        super().__init__(f"Could not download {url}: {reason}.",
                         hint=tls_hint(reason) or "Check the network or the channel/index URL.")


# What uv (rustls), rattler (reqwest), conda (OpenSSL) and Python say when a certificate is not
# trusted: typically a proxy that re-signs TLS with the company's own authority.
_TLS_WORDS: Final = ("UnknownIssuer", "invalid peer certificate", "CERTIFICATE_VERIFY_FAILED",
                     "certificate verify failed", "self signed certificate", "self-signed certificate",
                     "unable to get local issuer certificate", "SSLError", "certificate")


def tls_hint(text: str) -> str | None:
    """The fix for a download refused over an untrusted certificate, or None for other failures."""
    if not any(word.lower() in text.lower() for word in _TLS_WORDS):
        return None
    return ("The server's certificate is not trusted (a proxy that re-signs TLS?). Point SSL_CERT_FILE at "
            "your organisation's CA bundle, or let uv use the system certificates (UV_NATIVE_TLS=1, "
            "UV_SYSTEM_CERTS=1 in newer uv) after adding the CA to the system store "
            "(Debian: /usr/local/share/ca-certificates, then `update-ca-certificates`).")


class MixedCudaMajors(UsageError):
    def __init__(self, majors: Mapping[int, tuple[str, ...]], *, why: str | None = None) -> None:
        self.majors = dict(majors)
        listed = "; ".join(f"CUDA {m}: {', '.join(names)}" for m, names in sorted(majors.items()))
        super().__init__(
            f"One venv cannot hold NVIDIA wheels of several CUDA majors ({listed})" + (f": {why}." if why else "."),
            hint="They write the same site-packages/nvidia folders; make one environment per CUDA major.",
        )


def cuda_hint(target_cuda: str | None) -> str:
    """The next step when a solve failed on ``__cuda``: the driver of the target is too old."""
    if target_cuda:
        return (
            f"The target driver supports CUDA {target_cuda}; this stack needs a newer one. Update the driver, "
            "pick a recipe for an older CUDA, or solve for another machine with --target-driver."
        )
    return "No NVIDIA driver was given; pass --target-driver for the machine the environment is for."


def trim_explanation(text: str, *, limit: int = 14) -> str:
    """Keep the solver's explanation readable: no blank lines, no log noise, at most ``limit`` lines."""
    noise = ("warning", "info ", "debug", "critical libmamba", "======", "You are seeing this", "Use the following")
    lines = [ln.rstrip() for ln in text.strip().splitlines()]
    kept = [ln for ln in lines if ln.strip() and not ln.strip().startswith(noise)]
    if len(kept) > limit:
        kept = kept[:limit] + [f"... ({len(kept) - limit} more lines)"]
    return "\n".join("  " + ln for ln in kept)


# -- the interface --------------------------------------------------------------------------
class Engine(abc.ABC):
    """One way to build environments. Subclasses keep heavy imports inside methods."""

    name: ClassVar[str]
    family: ClassVar[str]  # conda | venv: which Request fields it reads, and its layout kind

    def __init__(self, environ: Mapping[str, str], *, mirrors: Mirrors | None = None) -> None:
        self.environ = dict(environ)
        # Where each upstream is fetched from (issue 19): engines download through it and report
        # canonical URLs, so a Solution never names a mirror.
        if mirrors is None:  # imported here: `cuenv --help` needs none of it
            from cuenv.engines.mirrors import Mirrors as _Mirrors

            mirrors = _Mirrors()
        self.mirrors = mirrors

    @abc.abstractmethod
    def available(self) -> bool:
        """Whether the engine's tool is here (cheap: no solve, no network)."""

    @abc.abstractmethod
    def solve(self, request: Request, *, target: Target, cache_dir: Path) -> Solution:
        """Resolve ``request`` for ``target`` without installing anything."""

    @abc.abstractmethod
    def install(self, prefix: Path, solution: Solution, *, cache_dir: Path, progress: Progress | None = None,
                layer: Request | None = None) -> Solution | None:
        """Install exactly ``solution`` into ``prefix``: no solve, every hash verified.

        ``layer`` (conda engines): a pip layer to resolve against the installed conda packages and install
        last; the solution with its wheels added is returned (None: ``solution`` is what was installed)."""

    @abc.abstractmethod
    def layout(self, prefix: Path) -> CudaLayout:
        """Where the CUDA pieces of ``prefix`` are (bin, lib, include, CUDA_HOME)."""

    @abc.abstractmethod
    def installed(self, prefix: Path) -> tuple[Package, ...]:
        """What ``prefix`` holds now, sorted like a Solution (for drift checks)."""

    def require(self) -> None:
        if not self.available():
            raise EngineUnavailable(f"The {self.name} engine is not available here.", hint=self.install_hint())

    def install_hint(self) -> str:
        return "Choose another engine with --engine, or `cuenv doctor` to see which ones work here."


def emit(progress: Progress | None, event: Event) -> None:
    """Report ``event`` to ``progress``, if there is one."""
    if progress is not None:
        progress(event)


def total_size(packages: Iterable[Package]) -> int | None:
    """The bytes of all ``packages`` when every size is known, else None."""
    sizes = [p.size for p in packages]
    known = [n for n in sizes if n is not None]
    return sum(known) if sizes and len(known) == len(sizes) else None


def check_solution_engine(engine: Engine, solution: Solution) -> None:
    if solution.engine != engine.name and {solution.engine, engine.name} - set(CONDA_FAMILY + ("rattler",)):
        raise UsageError(
            f"This lock was made by the {solution.engine} engine; the {engine.name} engine cannot install it.",
            hint=f"Use --engine {solution.engine}.",
        )
    if engine.family == "conda":
        return  # conda packages, and a pip layer's wheels installed after them (issue 15)
    strays = sorted({p.name for p in solution.packages if p.kind != "pypi"})
    if strays:
        raise UsageError(f"The {engine.name} engine installs only pypi packages; the lock also has: {', '.join(strays)}.",
                         hint="Install it with a conda engine: --engine rattler.")



