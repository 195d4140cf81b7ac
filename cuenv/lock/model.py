"""The cuenv lockfile: exact packages per platform plus the hardware contract (issue 6). Pure.

A lock says *what* to install (every artifact by URL and hash, one list per platform) and *where it
can run* (CUDA runtime, cuDNN, the minimum driver per OS, the compute capabilities covered). The
file is YAML with ``version: 1``; see docs/reference/lockfile.md for every key.

Determinism: ``dump(lock)`` is a function of the lock alone (no timestamps; fixed key order where
order means something, sorted lists where it does not; one package per block), so the same
environment always gives a byte-identical file. ``made_on`` is information only: it is left out of
``content_hash``, the hash an environment records as ``lock_hash``.

No I/O here: the command edge (cuenv/commands/lock.py) reads files and detects machines.
"""

from __future__ import annotations

import hashlib
import re
import urllib.parse

from cuenv.errors import UsageError
from cuenv.knowledge.findings import Finding
from cuenv.knowledge.stack import Stack
from cuenv.plain import Plain

TYPE_CHECKING = False  # no `typing` at run time: `create --from-lock` reads a lock here (issue 29)

if TYPE_CHECKING:
    from collections.abc import Iterable, Mapping, Sequence
    from pathlib import Path
    from typing import Any, Final

    from cuenv.engines.base import Package, Solution
    from cuenv.machine.model import Machine

LOCK_VERSION: Final = 1
PYPI_SIMPLE: Final = "https://pypi.org/simple"  # uv's default index, when a recipe names none
HEADER: Final = (
    "# cuenv lockfile: exact packages and the hardware contract they need.\n"
    "# Made by `cuenv lock`; install it with `cuenv create --from-lock` or `cuenv sync`.\n"
)
PLATFORMS: Final = ("linux-64", "linux-aarch64", "win-64", "osx-64", "osx-arm64")
_OS_OF_PLATFORM: Final = {"linux-64": "linux", "linux-aarch64": "linux", "win-64": "windows",
                          "osx-64": "osx", "osx-arm64": "osx"}
# Where an index serves its files when that is another host than the index's own.
_FILE_HOSTS: Final = {"pypi.org": ("files.pythonhosted.org",)}
# What a word may not hold: a space or a control character (C0, DEL, C1). A set, not a regex: a character
# class up to U+10FFFF took a tenth of `create --from-lock`'s imports to compile (issue 29).
_NOT_IN_A_WORD: Final = frozenset(map(chr, (*range(0x21), *range(0x7F, 0xA0))))
_NAME: Final = re.compile(r"[A-Za-z0-9_][A-Za-z0-9._-]{0,200}")
_HEX: Final = {"sha256": re.compile(r"^[0-9a-f]{64}$"), "md5": re.compile(r"^[0-9a-f]{32}$")}
_TOP_KEYS: Final = ("version", "recipe", "engine", "python", "platforms", "sources", "contract", "made_on", "packages")
_PACKAGE_KEYS: Final = ("name", "version", "build", "kind", "channel", "subdir", "index_url", "url", "filename",
                        "sha256", "md5")


class LockError(UsageError):
    """A lockfile that cannot be used as it is: one line naming the problem (exit 2)."""

    def __init__(self, message: str, *, hint: str | None = None, file: str | None = None) -> None:
        where = f"{file}: " if file else ""
        super().__init__(where + message, hint=hint or "Regenerate it with `cuenv lock`, or restore it from version control.")


class MinDriver(Plain):
    """The driver a stack needs on one OS: ``full`` for every feature of its CUDA release (None if
    unpublished), ``floor`` for minor-version compatibility within its major (None before CUDA 11)."""

    __slots__ = ("os", "full", "floor")

    def __init__(self, os: str, full: str | None, floor: str | None) -> None:
        self.os, self.full, self.floor = os, full, floor


class Contract(Plain):
    """What the locked packages ask of a machine: a cuenv.knowledge.stack.Stack plus its driver minimums."""

    __slots__ = ("label", "cuda", "cudnn", "os", "min_driver", "sass", "ptx", "nvcc", "framework", "framework_version",
                 "variant")

    def __init__(self, label: str, cuda: str | None, cudnn: str | None, os: tuple[str, ...],
                 min_driver: tuple[MinDriver, ...], sass: tuple[str, ...], ptx: tuple[str, ...], nvcc: bool,
                 framework: str | None = None, framework_version: str | None = None, variant: str | None = None) -> None:
        self.label, self.cuda, self.cudnn, self.os, self.min_driver = label, cuda, cudnn, os, min_driver
        self.sass, self.ptx, self.nvcc = sass, ptx, nvcc
        self.framework, self.framework_version, self.variant = framework, framework_version, variant

    def stack(self) -> Stack:
        return Stack(label=self.label, cuda=self.cuda, cudnn=self.cudnn, sass=self.sass, ptx=self.ptx,
                     has_nvcc=self.nvcc, os=self.os, framework=self.framework,
                     framework_version=self.framework_version, variant=self.variant)


class LockRecipe(Plain):
    """The recipe a lock was made from: its name, version and content hash, and the variables it sets on activation."""

    __slots__ = ("name", "version", "hash", "env")

    def __init__(self, name: str, version: str | None = None, hash: str | None = None,
                 env: Mapping[str, str] | None = None) -> None:
        self.name, self.version = name, version
        self.hash = hash  # the recipe's content hash (a foreign lockfile's: the file's)
        self.env: Mapping[str, str] = {} if env is None else env

    __hash__ = None  # type: ignore[assignment]  # holds a mapping

    def to_json(self) -> dict[str, Any]:
        return {"name": self.name, "version": self.version, "hash": self.hash, "env": dict(self.env)}


class Lock(Plain):
    """A lockfile as cuenv reads and writes it (plain classes: `create --from-lock` reads one, issue 29)."""

    __slots__ = ("recipe", "engine", "python", "channels", "indexes", "contract", "solutions", "made_on")

    def __init__(self, recipe: LockRecipe, engine: str, python: str | None, channels: tuple[str, ...],
                 indexes: tuple[str, ...], contract: Contract, solutions: tuple[Solution, ...],
                 made_on: Mapping[str, Any] | None = None) -> None:
        self.recipe, self.engine, self.python = recipe, engine, python
        self.channels = channels  # conda channel URLs every conda package must come from
        self.indexes = indexes  # pypi index URLs every pypi package must come from
        self.contract = contract
        self.solutions = solutions  # one per platform, sorted by platform
        self.made_on = made_on  # information only

    __hash__ = None  # type: ignore[assignment]  # holds mappings

    @property
    def platforms(self) -> tuple[str, ...]:
        return tuple(s.platform for s in self.solutions)

    def solution_for(self, platform: str) -> Solution:
        for solution in self.solutions:
            if solution.platform == platform:
                return solution
        raise LockError(
            f"This lock has no packages for {platform} (it holds {', '.join(self.platforms)}).",
            hint=f"Lock it again with --platform {platform} too (`cuenv lock`), on a machine that can solve it.",
        )


# -- building ----------------------------------------------------------------------------------
def platform_of(os_name: str, arch: str) -> str:
    """A machine's conda-style platform: ("linux", "x86_64") -> "linux-64"."""
    arch = {"amd64": "x86_64", "arm64": "aarch64"}.get(arch.lower(), arch.lower())
    table = {("linux", "x86_64"): "linux-64", ("linux", "aarch64"): "linux-aarch64", ("windows", "x86_64"): "win-64",
             ("osx", "x86_64"): "osx-64", ("osx", "aarch64"): "osx-arm64", ("darwin", "x86_64"): "osx-64",
             ("darwin", "aarch64"): "osx-arm64"}
    found = table.get((os_name.lower(), arch))
    if found is None:
        raise UsageError(f"cuenv has no platform name for {os_name} on {arch}.")
    return found


def os_of(platform: str) -> str:
    return _OS_OF_PLATFORM[platform]


def contract_for(stack: Stack, platforms: Iterable[str]) -> Contract:
    """The hardware contract of ``stack`` installed on ``platforms``; driver minimums from cuenv.knowledge.matrix."""
    from cuenv.knowledge import matrix, versions

    oses = tuple(dict.fromkeys(os_of(p) for p in sorted(platforms)))
    mins = []
    for os_name in oses:
        full = floor = None
        if stack.cuda and os_name in matrix.OSES:
            full = matrix.min_driver(stack.cuda, os_name)
            floor = matrix.family_floor(versions.cuda(stack.cuda).major, os_name)
        mins.append(MinDriver(os_name, full, floor))
    return Contract(
        label=stack.label, cuda=stack.cuda, cudnn=stack.cudnn, os=oses, min_driver=tuple(mins),
        sass=_sorted_cc(stack.sass), ptx=_sorted_cc(stack.ptx), nvcc=stack.has_nvcc, framework=stack.framework,
        framework_version=stack.framework_version, variant=stack.variant,
    )


def with_index_urls(solution: Solution) -> Solution:
    """Every pypi package names its index (uv's default, PyPI, when the recipe named none); no URL keeps
    a user or password (an index's credentials come from the user's netrc, keyring or mirror settings)."""
    from cuenv.engines import Solution
    from cuenv.trust.shown import strip_credentials

    def bare(url: str) -> str:  # a lock is shared: it names an index, never its user or token
        return strip_credentials(url) if url else url

    packages = tuple(p.replace(index_url=bare(p.index_url or PYPI_SIMPLE), url=bare(p.url)) if p.kind == "pypi"
                     else p.replace(url=bare(p.url), channel=p.channel and bare(p.channel)) for p in solution.packages)
    return Solution(engine=solution.engine, platform=solution.platform, python=solution.python, packages=packages)


def build(*, recipe: LockRecipe, engine: str, stack: Stack, solutions: Sequence[Solution],
          made_on: Mapping[str, Any] | None = None) -> Lock:
    """A Lock from solved (or installed) solutions; sources are the channels/indexes they use."""
    sols = tuple(sorted((with_index_urls(s) for s in solutions), key=lambda s: s.platform))
    pythons = {s.python for s in sols}
    if len(pythons) > 1:
        raise UsageError(f"The platforms were solved for different Pythons ({', '.join(sorted(map(str, pythons)))}).")
    packages = [p for s in sols for p in s.packages]
    for pkg in packages:  # what a lock holds is read back by the same rules: never write what parse refuses
        fields = _package_data(pkg)
        why = package_fields_problem(fields)
        if why is not None:
            raise UsageError(f"Cannot lock package {fields.get('name')!r}: {why}",
                             hint="Rebuild the environment from a clean lock or recipe (`cuenv create`), then lock it.")
    channels = tuple(sorted({_norm(p.channel) for p in packages if p.kind == "conda" and p.channel}))
    indexes = tuple(sorted({_norm(p.index_url) for p in packages if p.kind == "pypi" and p.index_url}))
    return Lock(
        recipe=recipe.replace(env=dict(sorted(recipe.env.items()))),
        engine=engine, python=next(iter(pythons), None), channels=channels, indexes=indexes,
        contract=contract_for(stack, [s.platform for s in sols]), solutions=sols, made_on=made_on,
    )


def made_on(machine: Machine) -> dict[str, Any]:
    """The machine a lock was made on, as information: driver version and GPUs."""
    driver = machine.driver
    return {
        "driver": (driver.version or None) if driver else None,
        "gpus": [f"{g.name} ({g.compute_capability or 'cc unknown'})" for g in machine.gpus],
    }


# -- writing -----------------------------------------------------------------------------------
def to_data(lock: Lock, *, info: bool = True) -> dict[str, Any]:
    c = lock.contract
    data: dict[str, Any] = {
        "version": LOCK_VERSION,
        "recipe": lock.recipe.to_json(),
        "engine": lock.engine,
        "python": lock.python,
        "platforms": list(lock.platforms),
        "sources": {"channels": list(lock.channels), "indexes": list(lock.indexes)},
        "contract": {
            "label": c.label, "cuda": c.cuda, "cudnn": c.cudnn, "os": list(c.os),
            "min_driver": {m.os: {"full": m.full, "floor": m.floor} for m in c.min_driver},
            "arch": {"sass": list(c.sass), "ptx": list(c.ptx)},
            "nvcc": c.nvcc, "framework": c.framework, "framework_version": c.framework_version, "variant": c.variant,
        },
    }
    if info:
        data["made_on"] = dict(lock.made_on) if lock.made_on is not None else None
    data["packages"] = {s.platform: [_package_data(p) for p in s.packages] for s in lock.solutions}
    return data


def _package_data(pkg: Package) -> dict[str, Any]:
    raw = pkg.to_json()
    return {k: raw[k] for k in _PACKAGE_KEYS if raw.get(k) is not None}


def dump(lock: Lock) -> str:
    """The lockfile text: byte-identical for equal locks."""
    import yaml

    class Dumper(yaml.SafeDumper):
        def increase_indent(self, flow: bool = False, indentless: bool = False) -> None:
            return super().increase_indent(flow, False)  # list items indented under their key

    def short_list(dumper: yaml.SafeDumper, items: list[object]) -> yaml.Node:
        flow = bool(items) and all(isinstance(i, str) and len(i) < 16 for i in items)
        return dumper.represent_sequence("tag:yaml.org,2002:seq", items, flow_style=flow)

    Dumper.add_representer(list, short_list)
    body = yaml.dump(to_data(lock), Dumper=Dumper, sort_keys=False, default_flow_style=False, width=10_000,
                     allow_unicode=True)
    return HEADER + body


def content_hash(lock: Lock) -> str:
    """sha256 of everything but ``made_on``: equal for two locks that install the same thing."""
    import json

    text = json.dumps(to_data(lock, info=False), sort_keys=True, separators=(",", ":"))
    return "sha256:" + hashlib.sha256(text.encode()).hexdigest()


# -- reading -----------------------------------------------------------------------------------
def _load_yaml(text: str, file: str | None) -> Any:
    """The lock's YAML, within the shape limits (cuenv.trust.limits); LockError (one line) where it is broken."""
    from cuenv.trust import limits

    try:
        return limits.parse_yaml(text)
    except limits.YamlUnreadable as exc:
        where = f" (line {exc.line})" if exc.line is not None else ""
        raise LockError(f"The lock {exc.problem}{where}.", file=file) from None


def is_cuenv_lock(source: str) -> bool:
    """A cuenv lockfile's top-level keys (``recipe:`` and ``contract:``): what no other tool writes."""
    return bool(re.search(r"^recipe:", source, re.M) and re.search(r"^contract:", source, re.M))


def parse(text: str, *, file: str | None = None, platform: str | None = None,
          trusted_env: Iterable[str] = (), cache_dir: Path | None = None) -> Lock:
    """Validate strictly; raise LockError (one line) at the first problem.

    A lock is shared input (issue 14): everything is checked here, before anything is downloaded,
    including the variables it sets (cuenv.trust.envvars; ``trusted_env`` is the user's extension).
    With ``platform``, a lock without packages for it is refused too (the machine's own platform).
    With ``cache_dir``, the YAML parse of this very text is kept there (cuenv.keptparse); the checks run anyway.
    """
    from cuenv import keptparse
    from cuenv.trust import envvars, limits

    data = keptparse.load(text, lambda t: _load_yaml(t, file), cache_dir=cache_dir, kind="cuenv-lock",
                          code=(__file__, limits.__file__))
    r = _Reader(file)
    if not isinstance(data, dict):
        raise LockError("Not a cuenv lockfile (expected a mapping with `version: 1`).", file=file)
    if "version" not in data:
        raise LockError("Not a cuenv lockfile: no `version` key.", file=file)
    if data["version"] != LOCK_VERSION or isinstance(data["version"], bool):
        raise LockError(f"Unknown lockfile schema version {data['version']!r}; this cuenv reads version {LOCK_VERSION}.",
                        hint="Upgrade cuenv, or regenerate the lock with this cuenv (`cuenv lock`).", file=file)
    r.keys(data, "", required=[k for k in _TOP_KEYS if k != "made_on"], allowed=_TOP_KEYS)
    recipe = r.mapping(data, "recipe")
    r.keys(recipe, "recipe", required=("name", "version", "hash", "env"), allowed=("name", "version", "hash", "env"))
    r.string(recipe, "name", "recipe")
    r.string(recipe, "version", "recipe", optional=True)
    r.string(recipe, "hash", "recipe", optional=True)
    env = r.mapping(recipe, "env", "recipe")
    for k, v in env.items():
        if not isinstance(k, str) or not isinstance(v, str):
            raise LockError(f"recipe.env.{str(k)[:40]}: expected a string value.", file=file)
    bad_env = envvars.problems(env, extra=trusted_env)
    if bad_env:
        name, why = bad_env[0]
        raise LockError(f"recipe.env{'.' + name if name else ''}: {why}.", hint=envvars.HINT, file=file)
    engine = r.string(data, "engine")
    python = r.string(data, "python", optional=True)
    platforms = r.strings(data, "platforms")
    for p in platforms:
        if p not in PLATFORMS:
            raise LockError(f"platforms: unknown platform {p!r} (known: {', '.join(PLATFORMS)}).", file=file)
    sources = r.mapping(data, "sources")
    r.keys(sources, "sources", required=("channels", "indexes"), allowed=("channels", "indexes"))
    channels = tuple(_norm(c) for c in r.strings(sources, "channels", "sources"))
    indexes = tuple(_norm(i) for i in r.strings(sources, "indexes", "sources"))
    for key, urls in (("channels", channels), ("indexes", indexes)):
        for source in urls:
            bad = url_problem(source)
            if bad is not None:
                from cuenv.trust.paths import quoted

                raise LockError(f"sources.{key}: {quoted(source)} {bad}.", file=file)
    contract = _contract(r, r.mapping(data, "contract"))
    made = data.get("made_on")
    if made is not None and not isinstance(made, dict):
        raise LockError("made_on: expected a mapping.", file=file)
    by_platform = r.mapping(data, "packages")
    if sorted(by_platform) != sorted(platforms):
        raise LockError(f"packages: has lists for {', '.join(sorted(map(str, by_platform))) or 'no platform'}, "
                        f"but platforms says {', '.join(sorted(platforms))}.", file=file)
    from cuenv.engines import Solution

    solutions = []
    for plat in sorted(platforms):
        entries = by_platform[plat]
        if not isinstance(entries, list):
            raise LockError(f"packages.{plat}: expected a list of packages.", file=file)
        pkgs = tuple(_package(r, e, f"packages.{plat}[{i}]", channels, indexes) for i, e in enumerate(entries))
        seen: set[tuple[str, str]] = set()
        for pkg in pkgs:
            if (pkg.name, pkg.kind) in seen:
                raise LockError(f"packages.{plat}: {pkg.name} is listed twice.", file=file)
            seen.add((pkg.name, pkg.kind))
        solutions.append(Solution(engine=engine, platform=plat, python=python, packages=pkgs))
    lock = Lock(recipe=LockRecipe(recipe["name"], recipe["version"], recipe["hash"], dict(env)),
                engine=engine, python=python, channels=channels, indexes=indexes, contract=contract,
                solutions=tuple(solutions), made_on=made)
    if platform is not None:
        try:
            lock.solution_for(platform)
        except LockError as exc:
            raise LockError(f"This machine is {platform}, which the lock is not made for "
                            f"(it holds {', '.join(lock.platforms)}).", hint=exc.hint, file=file) from None
    return lock


class _Reader:
    """Typed access with one-line errors that name the key."""

    def __init__(self, file: str | None) -> None:
        self.file = file

    def fail(self, message: str) -> LockError:
        return LockError(message, file=self.file)

    def keys(self, data: Mapping[str, Any], where: str, *, required: Iterable[str], allowed: Iterable[str]) -> None:
        prefix = f"{where}." if where else ""
        missing = [k for k in required if k not in data]
        if missing:
            raise self.fail(f"Missing key {prefix}{missing[0]}.")
        unknown = sorted(str(k) for k in data if k not in tuple(allowed))
        if unknown:
            raise self.fail(f"Unknown key {prefix}{unknown[0]}.")

    def mapping(self, data: Mapping[str, Any], key: str, where: str = "") -> dict[str, Any]:
        value = data.get(key)
        if not isinstance(value, dict):
            raise self.fail(f"{where + '.' if where else ''}{key}: expected a mapping, not {_kind(value)}.")
        return value

    def string(self, data: Mapping[str, Any], key: str, where: str = "", *, optional: bool = False) -> Any:
        value = data.get(key)
        if value is None and optional:
            return None
        if not isinstance(value, str) or not value:
            raise self.fail(f"{where + '.' if where else ''}{key}: expected a string, not {_kind(value)}.")
        from cuenv.trust.shown import terminal_safe

        if terminal_safe(value) != value:  # printed by check, list and info: no line break, no escape sequence
            raise self.fail(f"{where + '.' if where else ''}{key}: '{terminal_safe(value)[:60]}' holds a control character.")
        return value

    def strings(self, data: Mapping[str, Any], key: str, where: str = "") -> list[str]:
        value = data.get(key)
        if not isinstance(value, list) or not all(isinstance(v, str) and v for v in value):
            raise self.fail(f"{where + '.' if where else ''}{key}: expected a list of strings.")
        return value


def _contract(r: _Reader, c: dict[str, Any]) -> Contract:
    keys = ("label", "cuda", "cudnn", "os", "min_driver", "arch", "nvcc", "framework", "framework_version", "variant")
    r.keys(c, "contract", required=keys, allowed=keys)
    from cuenv.knowledge import versions

    cuda = r.string(c, "cuda", "contract", optional=True)
    if cuda is not None:
        versions.cuda(cuda)
    oses = tuple(r.strings(c, "os", "contract"))
    for os_name in oses:
        if not re.fullmatch(r"[a-z][a-z0-9_-]{0,31}", os_name):
            raise r.fail(f"contract.os: {os_name[:40]!r} is not an OS name (linux, windows).")
    mins_data = r.mapping(c, "min_driver", "contract")
    mins = []
    for os_name in oses:
        entry = mins_data.get(os_name)
        if not isinstance(entry, dict) or set(entry) != {"full", "floor"}:
            raise r.fail(f"contract.min_driver.{os_name}: expected `full` and `floor`.")
        for k in ("full", "floor"):
            value = entry[k]
            if value is not None and (not isinstance(value, str) or not re.fullmatch(r"\d+(\.\d+)*", value)):
                raise r.fail(f"contract.min_driver.{os_name}.{k}: {value!r} is not a driver version.")
        mins.append(MinDriver(os_name, entry["full"], entry["floor"]))
    arch = r.mapping(c, "arch", "contract")
    r.keys(arch, "contract.arch", required=("sass", "ptx"), allowed=("sass", "ptx"))
    for k in ("sass", "ptx"):
        for cc in r.strings(arch, k, "contract.arch"):
            versions.cc(cc)
    if not isinstance(c["nvcc"], bool):
        raise r.fail("contract.nvcc: expected true or false.")
    return Contract(
        label=r.string(c, "label", "contract"), cuda=cuda, cudnn=r.string(c, "cudnn", "contract", optional=True),
        os=oses, min_driver=tuple(mins), sass=tuple(arch["sass"]), ptx=tuple(arch["ptx"]), nvcc=c["nvcc"],
        framework=r.string(c, "framework", "contract", optional=True),
        framework_version=r.string(c, "framework_version", "contract", optional=True),
        variant=r.string(c, "variant", "contract", optional=True),
    )


def _package(r: _Reader, entry: object, where: str, channels: tuple[str, ...], indexes: tuple[str, ...]) -> Package:
    from cuenv.engines import Package

    if not isinstance(entry, dict):
        raise r.fail(f"{where}: expected a mapping.")
    r.keys(entry, where, required=("name", "version", "kind", "url"), allowed=_PACKAGE_KEYS)
    values = {k: r.string(entry, k, where, optional=k not in ("name", "version", "kind", "url")) for k in _PACKAGE_KEYS}
    why = package_fields_problem(values)
    if why is not None:
        raise r.fail(f"{where}.{why}")
    name = values["name"]
    where = f"{where} ({name})"
    kind = values["kind"]
    if kind not in ("conda", "pypi"):
        raise r.fail(f"{where}: kind must be conda or pypi, not {kind!r}.")
    for algo in ("sha256", "md5"):
        if values[algo] is not None and not _HEX[algo].match(values[algo]):
            raise r.fail(f"{where}: {algo} {values[algo]!r} is not a {algo} hex digest.")
    url = values["url"]
    if kind == "pypi":
        if not values["sha256"]:
            raise r.fail(f"{where}: a pypi package needs a sha256 (uv installs with hashes required).")
        index = _norm(values["index_url"] or "")
        if index not in indexes:
            raise r.fail(f"{where}: index {values['index_url'] or '(none)'} is not one of sources.indexes.")
        if not served_by(url, index):
            raise r.fail(f"{where}: URL {url} is outside its index {index}.")
    else:
        if not (values["sha256"] or values["md5"]):
            raise r.fail(f"{where}: a conda package needs a sha256 or md5.")
        for k in ("build", "channel", "subdir"):
            if values[k] is None:
                raise r.fail(f"Missing key {where.split(' (')[0]}.{k}.")
        channel = _norm(values["channel"])
        if channel not in channels:
            raise r.fail(f"{where}: channel {values['channel']} is not one of sources.channels.")
        if not url.startswith(channel + "/"):
            raise r.fail(f"{where}: URL {url} is outside its channel {channel}.")
    return Package(**values)


def package_fields_problem(values: Mapping[str, Any]) -> str | None:
    """Why a package's fields cannot go into uv's requirements file or conda's argv ("key: why"), or None.

    Each is one word of printable text (``size``: a count of bytes), and the name is a package name (a
    lock or an archive is shared)."""
    for k, v in values.items():
        if k == "size":
            if v is not None and (type(v) is not int or v < 0):
                return f"size: {str(v)[:60]!r} is not a number of bytes."
            continue
        if v is not None and (not isinstance(v, str) or not v or not _NOT_IN_A_WORD.isdisjoint(v) or len(v) > 2000):
            return f"{k}: {str(v)[:60]!r} is not a single word of printable text."
    if not _NAME.fullmatch(str(values.get("name") or "")):
        return f"name: {values.get('name')!r} is not a package name."
    from cuenv.trust import paths

    if values.get("filename") is not None:
        why = paths.file_name_problem(values["filename"])
        if why is not None:
            return f"filename: {paths.quoted(values['filename'])} {why}."
    for k in ("url", "index_url", "channel"):
        if values.get(k) is not None:
            why = url_problem(values[k])
            if why is not None:
                return f"{k}: {paths.quoted(values[k])} {why}."
    return None


def url_problem(url: str) -> str | None:
    """Why ``url`` cannot be a lock's package URL, channel or index (cuenv.trust.paths rules), or None.
    A ``#sha256=HEX`` fragment (how an index gives a file's hash) is the one fragment accepted."""
    from cuenv.trust import paths

    base, sep, fragment = url.partition("#")
    if sep and re.fullmatch(r"(?:sha256|md5)=[0-9a-fA-F]{32,64}", fragment):
        url = base
    return paths.download_url_problem(url)


def served_by(url: str, index: str) -> bool:
    """Whether ``url`` is a file of ``index``: the same host, a sibling host of the same site
    (download.pytorch.org -> download-r2.pytorch.org), or the index's known file host."""
    u, i = urllib.parse.urlparse(url), urllib.parse.urlparse(index)
    if u.scheme != i.scheme or not u.hostname or not i.hostname:
        return u.scheme == i.scheme == "file" and url.startswith(index + "/")
    if u.hostname == i.hostname or u.hostname in _FILE_HOSTS.get(i.hostname, ()):
        return True
    return _site(u.hostname) == _site(i.hostname) and _site(i.hostname) not in ("pypi.org",)


def _site(host: str) -> str:
    return ".".join(host.split(".")[-2:])


def _norm(url: str) -> str:
    return url.rstrip("/")


def _kind(value: object) -> str:
    return "nothing" if value is None else type(value).__name__


def _sorted_cc(ccs: Iterable[str]) -> tuple[str, ...]:
    from cuenv.knowledge.matrix import cc_key

    return tuple(sorted(set(ccs), key=cc_key))


# -- using -------------------------------------------------------------------------------------
def contract_findings(lock: Lock, machine: Machine) -> list[Finding]:
    """cuenv.knowledge.compat.check on the contract's Stack: the same verdict as `cuenv check`."""
    from cuenv.knowledge.compat import check

    return check(lock.contract.stack(), machine)


def contract_line(lock: Lock) -> str:
    """One line saying what a machine needs to run the lock."""
    c = lock.contract
    if not c.cuda:
        return "Contract: no CUDA (a CPU-only stack)."
    drivers = "; ".join(
        f"{m.os}: driver >= {m.full or '?'}" + (f" ({m.floor} with minor-version compatibility)" if m.floor and m.floor != m.full else "")
        for m in c.min_driver)
    archs = ", ".join(c.sass) + (f" (+PTX {', '.join(c.ptx)})" if c.ptx else "")
    return f"Contract: CUDA {c.cuda}" + (f", cuDNN {c.cudnn}" if c.cudnn else "") + f"; {drivers}; GPUs sm {archs or 'unknown'}."
