"""What every foreign lockfile reader shares: the result, the refusal, and the checks on untrusted values.

A foreign lockfile (conda-lock.yml, pixi.lock, pylock.toml, uv.lock) is someone else's file: every
name, version, URL, hash and size in it is checked here before cuenv downloads anything, and a
problem is one :class:`ForeignLockError` naming the file, the line (where the format gives one)
and the key, what is wrong, and the nearest supported way. Pure: no I/O, no network.
"""

from __future__ import annotations

import re
import urllib.parse
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Final

from cuenv.engines.base import Package
from cuenv.errors import UsageError
from cuenv.lock.model import LockError

MAX_URL: Final = 4096
MAX_SIZE: Final = 1 << 40  # 1 TiB: larger is a broken or hostile size field
CONDA_ARCHIVES: Final = (".conda", ".tar.bz2")
# conda package names: lower-case letters, digits, and _ . - (conda's own MatchSpec rules).
_CONDA_NAME: Final = re.compile(r"^[a-z0-9_][a-z0-9_.\-]*$")
_CONDA_VERSION: Final = re.compile(r"^[A-Za-z0-9_.+!]+$")
_BUILD: Final = re.compile(r"^[A-Za-z0-9_.+]+$")
_PYPI_NAME: Final = re.compile(r"^([A-Za-z0-9]|[A-Za-z0-9][A-Za-z0-9._-]*[A-Za-z0-9])$")
_HEX: Final = {"sha256": re.compile(r"^[0-9a-fA-F]{64}$"), "md5": re.compile(r"^[0-9a-fA-F]{32}$")}
_BAD_CHARS: Final = re.compile(r"[\s\x00-\x1f\x7f]")
# An anchor or alias starts a node: after "key: ", "- ", or "[", "{", "," in flow style. Inside a plain
# scalar ("libtorch 2.8.0.* *_102") a * is text.
_ALIAS: Final = re.compile(r"(?:^\s*-\s+|:\s+|[\[{,]\s*|^)[&*][^\s,\]}]", re.MULTILINE)
_CONTROL: Final = re.compile(r"[\x00-\x1f\x7f\u2028\u2029\x85]")


class ForeignLockError(LockError):
    """A foreign lockfile cuenv will not use: names where, says why, and the nearest supported way (exit 2)."""

    def __init__(self, message: str, *, file: str, hint: str, line: int | None = None, key: str | None = None) -> None:
        where = file + (f", line {line}" if line else "") + (f" ({key})" if key else "")
        # Names quoted from the file may hold control characters: shown escaped, the refusal stays one line.
        UsageError.__init__(self, _one_line(f"{where}: {message}"), hint=_one_line(hint))
        self.line, self.key = line, key


class NoWheelForTarget(ForeignLockError):
    """A locked package has no wheel (and no sdist) for the Python and platform asked for: another
    Python the lock supports may have one (cuenv.lock.io tries them, as uv picks an interpreter)."""


@dataclass(frozen=True)
class Where:
    """A place in a foreign lockfile, for refusals: the file, the line (None when unknown) and the key.
    ``fields`` are the lines of the entry's own keys (YAML), so a bad ``url`` names the url's line."""

    file: str
    line: int | None = None
    key: str | None = None
    fields: Mapping[str, int] = field(default_factory=dict, compare=False)

    def at(self, key: str, line: int | None = None, data: object = None) -> Where:
        lines = dict(getattr(data, "key_lines", {}) or {})
        return Where(self.file, line or self.line, key, lines)

    def part(self, name: str) -> Where:
        """The place of one key of this entry: ``package[3].url`` at the url's line."""
        return Where(self.file, self.fields.get(name, self.line), f"{self.key}.{name}" if self.key else name)

    def fail(self, message: str, hint: str, *, kind: type[ForeignLockError] = ForeignLockError) -> ForeignLockError:
        return kind(message, file=self.file, line=self.line, key=self.key, hint=hint)


@dataclass(frozen=True)
class Unusable:
    """A locked package cuenv can describe but not install exactly (a source build, a VCS checkout, a path)."""

    name: str
    why: str
    where: Where
    hint: str

    def error(self) -> ForeignLockError:
        return self.where.fail(f"{self.name} {self.why}", self.hint)


@dataclass(frozen=True)
class ForeignLock:
    """One environment and platform of a foreign lockfile, validated: what to install and what it pins."""

    kind: str  # conda-lock | pixi | pylock | uv-lock
    file: str
    platform: str  # the platform chosen (a conda subdir: linux-64, ...)
    platforms: tuple[str, ...]  # every platform the file holds for that environment (the names --platform takes)
    packages: tuple[Package, ...]
    environment: str | None = None  # pixi's environment name; None for one-environment formats
    environments: tuple[str, ...] = ()
    python: str | None = None  # "3.11", when the file says
    channels: tuple[str, ...] = ()
    indexes: tuple[str, ...] = ()
    # conda requirements by package name: `__cuda >=12` in depends is a need of a CUDA driver; in constrains
    # (ffmpeg's NVENC builds) only a bound on one where there is one
    depends: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    constrains: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    virtual_packages: tuple[str, ...] = ()  # pixi 7: what the platform was solved for ("__cuda=12")
    unusable: tuple[Unusable, ...] = ()
    notes: tuple[str, ...] = ()  # what was left out and why (other platforms' markers, optional categories)
    platform_name: str | None = None  # pixi 7's name of the chosen platform (``cuda-linux-64``), when not the subdir

    @property
    def kinds(self) -> frozenset[str]:
        return frozenset(p.kind for p in self.packages)


# -- checks on untrusted values -----------------------------------------------------------------
def seq(value: object, where: Where, what: str, *, hint: str) -> list[Any]:
    """An optional list: [] when absent; anything but a list is refused (never silently dropped)."""
    if value is None:
        return []
    if not isinstance(value, list):
        raise where.fail(f"`{what}` must be a list, not {_show(value)}.", hint)
    return value


def table(value: object, where: Where, what: str, *, hint: str) -> dict[str, Any]:
    """An optional mapping: {} when absent; anything but a mapping is refused."""
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise where.fail(f"`{what}` must be a mapping, not {_show(value)}.", hint)
    return value


def text(value: object, where: Where, what: str, *, hint: str) -> str:
    if not isinstance(value, str) or not value or len(value) > MAX_URL or _BAD_CHARS.search(value):
        raise where.fail(f"{what} must be a non-empty string without spaces or control characters, not {_show(value)}.", hint)
    return value


def conda_name(value: object, where: Where, *, hint: str) -> str:
    name = text(value, where, "a conda package name", hint=hint)
    if not _CONDA_NAME.match(name):
        raise where.fail(f"{name!r} is not a conda package name (lower-case letters, digits, _ . -).", hint)
    return name


def pypi_name(value: object, where: Where, *, hint: str) -> str:
    name = text(value, where, "a Python package name", hint=hint)
    if not _PYPI_NAME.match(name):
        raise where.fail(f"{name!r} is not a Python package name (PEP 508).", hint)
    return name


def conda_version(value: object, where: Where, *, hint: str) -> str:
    version = text(str(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else value,
                   where, "a version", hint=hint)
    if not _CONDA_VERSION.match(version):
        raise where.fail(f"{version!r} is not a conda version.", hint)
    return version


def pypi_version(value: object, where: Where, *, hint: str) -> str:
    from packaging.version import InvalidVersion, Version

    version = text(value, where, "a version", hint=hint)
    try:
        Version(version)
    except InvalidVersion:
        raise where.fail(f"{version!r} is not a Python package version (PEP 440).", hint) from None
    return version


def build_string(value: object, where: Where, *, hint: str) -> str:
    build = text(str(value) if isinstance(value, int) and not isinstance(value, bool) else value,
                 where, "a build string", hint=hint)
    if not _BUILD.match(build):
        raise where.fail(f"{build!r} is not a conda build string.", hint)
    return build


def digest(value: object, algo: str, where: Where, *, hint: str) -> str | None:
    """A hex digest, lower-cased; None when absent."""
    if value is None:
        return None
    if not isinstance(value, str) or not _HEX[algo].match(value):
        raise where.fail(f"{algo} {_show(value)} is not a {algo} hex digest.", hint)
    return value.lower()


def size(value: object, where: Where, *, hint: str) -> int | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value < MAX_SIZE:
        raise where.fail(f"size {_show(value)} is not a byte count.", hint)
    return value


def url(value: object, where: Where, *, hint: str) -> tuple[str, str]:
    """A download URL -> (url, file name). Only http(s) and file URLs; no credentials, no templates,
    no ``..``; the last path segment is the artifact's file name."""
    raw = text(value, where, "a URL", hint=hint)
    if "$" in raw or "{" in raw:
        raise where.fail(f"URL {raw} holds a template (${{VAR}}); cuenv expands nothing from a lockfile.",
                         "Write the URL out in full, or install with the tool that wrote the file.")
    parsed = urllib.parse.urlsplit(raw)
    scheme = parsed.scheme.lower()
    if scheme not in ("http", "https", "file"):
        raise where.fail(f"URL {raw} is not http(s) or file; cuenv downloads nothing else.",
                         "Lock artifacts from a package index or channel (http/https), or a local file:// path.")
    if scheme != "file" and not parsed.hostname:
        raise where.fail(f"URL {raw} names no host.", hint)
    from cuenv.trust.requirements import loopback_http

    if scheme == "http" and not loopback_http(raw):  # the same rule as cuenv.lock's (cuenv.trust.paths)
        raise where.fail(f"URL {raw} uses http://, which lets anyone on the network path swap the packages.",
                         "Lock artifacts from https:// URLs (plain http only on this machine's loopback).")
    if parsed.username or parsed.password:
        raise where.fail(f"URL {raw.split('@')[-1]} carries credentials; cuenv sends none from a lockfile.",
                         "Remove the user and password from the URL and give them to the index another way.")
    segments = [urllib.parse.unquote(s) for s in parsed.path.split("/")]
    if any(s in ("..", ".") for s in segments):
        raise where.fail(f"URL {raw} climbs out of its folder (..).", hint)
    filename = segments[-1] if segments else ""
    if not filename or any(c in filename for c in "/\\\x00") or parsed.query or parsed.fragment:
        raise where.fail(f"URL {raw} does not end in a file name.", "Lock artifacts by their file URL.")
    from cuenv.trust.paths import file_name_problem, quoted

    why = file_name_problem(filename)  # cuenv joins it to its cache folder: one plain name (issue 31)
    if why is not None:
        raise where.fail(f"the file name {quoted(filename)} of URL {raw} {why}.", "Lock artifacts by their file URL.")
    return raw, filename


def _is_subdir(name: str) -> bool:
    """Whether ``name`` is a conda subdir (``linux-64``, ``noarch``): one of those rattler knows."""
    from rattler import Subdir

    try:
        Subdir(name)
    except Exception:  # noqa: BLE001 - rattler's parse errors have no common base class
        return False
    return True


def split_conda_filename(filename: str) -> tuple[str, str, str] | None:
    """``name-version-build.conda`` -> (name, version, build); None for anything else."""
    for ext in CONDA_ARCHIVES:
        if filename.endswith(ext):
            parts = filename[: -len(ext)].rsplit("-", 2)
            if len(parts) == 3 and all(parts):
                return parts[0], parts[1], parts[2]
    return None


def conda_package(*, name: str | None, version: str | None, build: str | None, location: object, sha256: object, md5: object,
                  subdir: str | None, where: Where, hint: str, unverified: bool = False) -> Package:
    """A validated conda artifact. Name, version and build default to the file name's (pixi 6 writes
    only the URL); when given, they must agree with it, so the file installed is the one named.
    ``unverified``: no hash is allowed (an @EXPLICIT line without one; its hash comes from the channel's
    repodata before any install, cuenv.lock.foreign.repodata)."""
    link, filename = url(location, where.part("url"), hint=hint)
    parts = split_conda_filename(filename)
    if parts is None:
        raise where.part("url").fail(f"{filename} is not a conda package archive (.conda or .tar.bz2).", hint)
    name = conda_name(name if name is not None else parts[0], where.part("name"), hint=hint)
    version = conda_version(version if version is not None else parts[1], where.part("version"), hint=hint)
    build = build_string(build if build is not None else parts[2], where.part("build"), hint=hint)
    if (name, version, build) != parts:
        raise where.part("url").fail(f"the file {filename} is not {name}-{version}-{build}.", hint)
    sha, md = digest(sha256, "sha256", where.part("hash"), hint=hint), digest(md5, "md5", where.part("hash"), hint=hint)
    if not (sha or md) and not unverified:
        raise where.part("hash").fail(f"{name} has no sha256 or md5, so its download cannot be verified.", hint)
    path_dirs = link.rsplit("/", 2)
    # a channel serves a file from its subdir's folder; a local file:///home/me/Downloads/x.tar.bz2 (held-out-16's
    # STPOTR) is in no subdir: its folder is one only where it is a subdir rattler knows
    sub = subdir or (path_dirs[-2] if len(path_dirs) == 3 and _is_subdir(path_dirs[-2]) else None)
    if sub is not None:
        text(sub, where, "a subdir", hint=hint)
    channel = path_dirs[0] if len(path_dirs) == 3 and sub == path_dirs[-2] else link.rsplit("/", 1)[0]
    return Package(name=name, version=version, kind="conda", url=link, sha256=sha, md5=md, build=build,
                   channel=channel, subdir=sub, filename=filename)


def wheel_package(*, name: object, version: object, location: object, sha256: object, index: str | None, where: Where,
                  hint: str) -> Package:
    """A validated wheel. Only wheels: an sdist would run its build code."""
    from packaging.utils import InvalidWheelFilename, parse_wheel_filename

    from cuenv.knowledge.packages import canonical

    name = pypi_name(name, where.part("name"), hint=hint)
    link, filename = url(location, where.part("url"), hint=hint)
    try:
        wheel_name, wheel_version, _, _ = parse_wheel_filename(filename)
    except InvalidWheelFilename:
        raise where.part("url").fail(f"{filename} is not a wheel file name.", hint) from None
    if version is None:
        version = str(wheel_version)
    version = pypi_version(version, where.part("version"), hint=hint)
    from packaging.version import Version

    if canonical(name) != wheel_name or Version(version) != wheel_version:
        raise where.part("url").fail(f"the file {filename} is not {name} {version}.", hint)
    sha = digest(sha256, "sha256", where.part("hash"), hint=hint)
    if not sha:
        raise where.part("hash").fail(f"{name} has no sha256, so its download cannot be verified.", hint)
    return Package(name=name, version=version, kind="pypi", url=link, sha256=sha, index_url=index, filename=filename)


def index_for(link: str, indexes: tuple[str, ...]) -> str | None:
    """The index a wheel URL came from: one of ``indexes`` serving it, PyPI for its file host, else None."""
    from cuenv.lock.model import PYPI_SIMPLE, served_by

    for index in indexes:
        if served_by(link, index.rstrip("/")):
            return index.rstrip("/")
    if urllib.parse.urlsplit(link).hostname == "files.pythonhosted.org":
        return PYPI_SIMPLE
    return None


def python_patch(requires: Any, python: str, where: Where) -> int:
    """The patch release of Python ``python`` (X.Y) a lock's markers are judged for: the first its requires-python
    (packaging's SpecifierSet, or None for any) admits, as ``==3.12.8`` admits 3.12 from 3.12.8 on; refused where
    it admits none."""
    from cuenv.knowledge.versions import admitted_patch

    patch = 0 if requires is None else admitted_patch(requires, python)
    if patch is None:
        raise where.at("requires-python").fail(f"it needs Python {requires}, not {python}.",
                                               f"Choose a Python it allows ({requires}) with --python.")
    return patch


def python_of(packages: tuple[Package, ...]) -> str | None:
    """X.Y of the locked conda ``python`` package."""
    for pkg in packages:
        if pkg.kind == "conda" and pkg.name == "python":
            return ".".join(pkg.version.split(".")[:2])
    return None


def _one_line(message: str) -> str:
    return _CONTROL.sub(lambda m: repr(m.group())[1:-1], message)


def _show(value: object) -> str:
    shown = repr(value)
    return shown if len(shown) <= 60 else shown[:57] + "..."


# -- YAML with line numbers ---------------------------------------------------------------------
class LineDict(dict[str, Any]):
    """A YAML mapping that remembers its line and each key's line (1-based)."""

    line: int = 0
    key_lines: dict[str, int]

    def line_of(self, key: str) -> int:
        lines: dict[str, int] = getattr(self, "key_lines", {})
        return lines.get(key, self.line)


class LineList(list[Any]):
    line: int = 0
    item_lines: list[int]

    def line_of(self, index: int) -> int:
        lines = getattr(self, "item_lines", [])
        return lines[index] if index < len(lines) else self.line


def load_yaml(source: str, file: str, *, hint: str) -> Any:
    """Safe YAML (no tags, no objects) whose mappings and lists know their line numbers.

    Anchors and aliases are refused: no lockfile writer uses them, and they are how a small hostile
    file expands into a huge one."""
    import yaml

    alias = _ALIAS.search(source)
    if alias:
        line = source.count("\n", 0, alias.start()) + 1
        raise ForeignLockError("YAML anchors and aliases (&name, *name) are not read in a lockfile.", file=file,
                               line=line, hint=hint)

    base = getattr(yaml, "CSafeLoader", yaml.SafeLoader)

    class Loader(base):  # type: ignore[valid-type,misc]  # the loader class is picked at run time (C or Python)
        pass

    def mapping(loader: Any, node: Any) -> LineDict:
        out = LineDict(loader.construct_mapping(node, deep=True))
        out.line = node.start_mark.line + 1
        out.key_lines = {str(k.value): k.start_mark.line + 1 for k, _ in node.value}
        return out

    def sequence(loader: Any, node: Any) -> LineList:
        out = LineList(loader.construct_sequence(node, deep=True))
        out.line = node.start_mark.line + 1
        out.item_lines = [n.start_mark.line + 1 for n in node.value]
        return out

    Loader.add_constructor("tag:yaml.org,2002:map", mapping)
    Loader.add_constructor("tag:yaml.org,2002:seq", sequence)
    try:
        return yaml.load(source, Loader=Loader)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
        raise ForeignLockError(f"broken YAML: {problem}.", file=file, line=mark.line + 1 if mark else None,
                               hint=hint) from None
    except (TypeError, ValueError, RecursionError) as exc:  # unhashable keys, bad dates, deep nesting
        raise ForeignLockError(f"unreadable YAML: {str(exc).splitlines()[0] if str(exc) else type(exc).__name__}.",
                               file=file, hint=hint) from None


def load_toml(source: str, file: str, *, hint: str) -> dict[str, Any]:
    import sys

    if sys.version_info >= (3, 11):
        import tomllib
    else:  # the same API on Python 3.10 (a dependency there)
        import tomli as tomllib

    try:
        data: dict[str, Any] = tomllib.loads(source)
        return data
    except tomllib.TOMLDecodeError as exc:
        found = re.search(r"\(at line (\d+)", str(exc))  # tomllib before 3.14 puts the line in the text only
        line = getattr(exc, "lineno", None) or (int(found.group(1)) if found else None)
        message = str(exc).split(" (at ")[0]
        raise ForeignLockError(f"broken TOML: {message}.", file=file, line=line, hint=hint) from None
    except RecursionError:
        raise ForeignLockError("broken TOML: nested too deeply.", file=file, hint=hint) from None


def table_lines(source: str, header: str) -> list[int]:
    """Line numbers (1-based) of every ``[[header]]`` array-of-tables entry, in order."""
    pattern = re.compile(r"^\s*\[\[\s*" + re.escape(header) + r"\s*\]\]\s*(#.*)?$")
    return [i + 1 for i, ln in enumerate(source.splitlines()) if pattern.match(ln)]
