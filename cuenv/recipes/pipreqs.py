"""pip requirements files as pip reads them, parsed into data (issue 15 §2). Pure apart from reading files.

Read the way pip's ``req_file.py`` does: continuation lines joined, comments dropped, options on their
own lines or after a requirement, ``-r``/``-c`` includes resolved relative to the including file.
Nothing here is handed to uv as text: every requirement is parsed with ``packaging.requirements``
and re-serialised, every option becomes a field, so a line can never smuggle an option past the parser
(issue 14). What cuenv cannot honour is refused with the file, the line, the construct, why, and the
nearest supported way (:class:`RequestFileError`).

Supported: PEP 508 requirements with extras, specifiers (``+cu121`` local versions too) and markers;
``name @ URL`` and bare URLs (a wheel, an sdist, ``git+https://...#egg=name``); ``--hash`` (several);
``-r``/``--requirement`` and ``-c``/``--constraint`` (relative, depth- and cycle-limited, regular files
inside the project's folder only, read with the size limit: issue 31);
``-i``/``--index-url``, ``--extra-index-url``, ``--no-index``, ``-f``/``--find-links`` (URLs),
``--pre``, ``--no-binary``, ``--only-binary``, ``--prefer-binary``, ``--require-hashes``;
``--trusted-host`` and ``--use-feature`` are read and ignored (a note says so).
"""

from __future__ import annotations

import os
import re
import shlex
import stat
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Final

from cuenv.errors import UsageError
from cuenv.knowledge.packages import canonical
from cuenv.trust import limits

PYPI: Final = "https://pypi.org/simple"
MAX_DEPTH: Final = 10  # -r inside -r ...: pip has no limit; ten covers every real project seen
MAX_BYTES: Final = limits.REQUEST_FILE  # a requirements file larger than this is not a requirements file

_COMMENT: Final = re.compile(r"(^|\s+)#.*$")
_ENV_VAR: Final = re.compile(r"\$\{[A-Z0-9_]+\}")
_URL: Final = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*://")
_VCS: Final = ("git+", "hg+", "svn+", "bzr+")
_EGG: Final = re.compile(r"[#&]egg=([A-Za-z0-9][A-Za-z0-9._-]*)")
_WHEEL_NAME: Final = re.compile(r"^([A-Za-z0-9][A-Za-z0-9._]*)-[0-9][^-]*(-\d[^-]*)?-[^-]+-[^-]+-[^-]+\.whl$")
_SDIST_NAME: Final = re.compile(r"^([A-Za-z0-9][A-Za-z0-9._-]*?)-[0-9][A-Za-z0-9.+!_-]*\.(?:tar\.gz|zip|tar\.bz2)$")
_HASH: Final = re.compile(r"^(sha256|sha384|sha512):[0-9a-fA-F]+$")

# Options that take a value, by every spelling pip accepts (short forms also glued: -ihttps://...).
_VALUE_OPTIONS: Final = {
    "-i": "index-url", "--index-url": "index-url", "--extra-index-url": "extra-index-url",
    "-f": "find-links", "--find-links": "find-links", "-r": "requirement", "--requirement": "requirement",
    "-c": "constraint", "--constraint": "constraint", "-e": "editable", "--editable": "editable",
    "--no-binary": "no-binary", "--only-binary": "only-binary", "--trusted-host": "trusted-host",
    "--use-feature": "use-feature", "--hash": "hash", "--global-option": "global-option",
    "--config-settings": "config-settings", "--install-option": "install-option",
}
_FLAG_OPTIONS: Final = {"--pre": "pre", "--no-index": "no-index", "--prefer-binary": "prefer-binary",
                        "--require-hashes": "require-hashes"}
_PER_REQUIREMENT: Final = ("hash", "global-option", "config-settings", "install-option")


@dataclass(frozen=True)
class Where:
    """A line of a file, for messages: ``requirements/cuda.txt:12``."""

    file: str
    line: int | None = None

    def __str__(self) -> str:
        return f"{self.file}:{self.line}" if self.line else self.file


class RequestFileError(UsageError):
    """A construct cuenv does not honour: where it is, what it is, why, and the nearest supported way."""

    def __init__(self, where: Where, construct: str, why: str, *, hint: str) -> None:
        said = f"{where}: {why}" if construct == str(where) else f"{where}: {construct}: {why}"  # a whole file: named once
        super().__init__(said, hint=hint)
        self.where = where
        self.construct = construct
        self.why = why


class _NotInstallable(RequestFileError):
    """A well-formed line cuenv cannot install: recorded as :class:`Unsupported` while reading a file."""


@dataclass(frozen=True)
class Unsupported:
    """A line cuenv reads but cannot install (a local project, a build option): kept, so that `check`
    and `suggest` still answer for the rest of the file and `create` can refuse with the line."""

    where: Where
    construct: str
    why: str
    hint: str

    @classmethod
    def of(cls, error: RequestFileError) -> Unsupported:
        return cls(error.where, error.construct, error.why, error.hint or "")

    def error(self) -> RequestFileError:
        return RequestFileError(self.where, self.construct, self.why, hint=self.hint)

    def __str__(self) -> str:
        return f"{self.where}: {self.construct}: {self.why}"


@dataclass(frozen=True)
class PipRequirement:
    """One requirement, parsed. ``text`` is the PEP 508 form re-serialised by ``packaging``: the only
    form of it that is ever passed on (to uv, into a recipe, into a lock)."""

    name: str  # canonical: lower case, runs of -_. as one -
    text: str
    specifier: str = ""
    extras: tuple[str, ...] = ()
    marker: str | None = None
    url: str | None = None
    hashes: tuple[str, ...] = ()  # "sha256:<hex>", as pip writes them
    where: Where = field(default=Where("<requirements>"), compare=False)

    @property
    def vcs(self) -> bool:
        return self.url is not None and self.url.startswith(_VCS)

    def exact_version(self) -> str | None:
        """The version of an ``==X`` pin (``+local`` kept), or of a wheel URL's file name, else None."""
        match = re.fullmatch(r"===?\s*([^,;\s*]+)", self.specifier.strip())
        if match:
            return match.group(1)
        if self.url and not self.vcs:
            from urllib.parse import unquote

            filename = unquote(self.url.split("#", 1)[0].split("?", 1)[0].rsplit("/", 1)[-1])
            wheel = re.match(r"^[A-Za-z0-9_.]+-([0-9][^-]*)-", filename) if filename.endswith(".whl") else None
            return wheel.group(1) if wheel else None
        return None


@dataclass(frozen=True)
class PipOptions:
    """Everything a requirements file (with its includes) says besides its requirements."""

    index_url: str | None = None  # -i; None: PyPI
    extra_index_urls: tuple[str, ...] = ()
    no_index: bool = False
    find_links: tuple[str, ...] = ()
    pre: bool = False
    no_binary: tuple[str, ...] = ()  # package names, or ":all:" / ":none:"
    only_binary: tuple[str, ...] = ()
    prefer_binary: bool = False
    require_hashes: bool = False

    @property
    def index_urls(self) -> tuple[str, ...]:
        """Indexes in cuenv's priority order (recipes' ``index_urls``: the last is the default index):
        the extra indexes, then -i (PyPI when not given). Empty with --no-index."""
        if self.no_index:
            return ()
        urls = self.extra_index_urls + ((self.index_url or PYPI),)
        return tuple(dict.fromkeys(urls))


@dataclass(frozen=True)
class RequirementsFile:
    requirements: tuple[PipRequirement, ...]
    constraints: tuple[PipRequirement, ...] = ()
    options: PipOptions = PipOptions()
    files: tuple[str, ...] = ()  # every file read, the top one first
    notes: tuple[str, ...] = ()  # what was read and deliberately ignored
    unsupported: tuple[Unsupported, ...] = ()  # lines read but not installable, in file order
    option_lines: tuple[tuple[str, Where], ...] = ()  # (option, where it was first given), for messages

    def where_of(self, option: str) -> Where:
        return dict(self.option_lines).get(option) or Where(self.files[0] if self.files else "requirements.txt")

    def requirement_texts(self) -> tuple[str, ...]:
        return tuple(r.text for r in self.requirements)

    def without(self, lines: Iterable[Where]) -> RequirementsFile:
        """This file less the requirements on ``lines`` (those cuenv cannot install)."""
        gone = {(w.file, w.line) for w in lines}
        return replace(self, requirements=tuple(r for r in self.requirements if (r.where.file, r.where.line) not in gone))


# -- reading ----------------------------------------------------------------------------------------

def parse_file(path: Path, *, kind: str = "requirement") -> RequirementsFile:
    """Read ``path`` and everything it includes."""
    state = _State(root=_real_parent(path))
    _read_file(path, state, kind=kind, depth=0, chain=())
    return state.result()


def _real_root(base: Path | None) -> Path | None:
    return None if base is None else Path(os.path.realpath(base))


def _shown(value: object) -> str:
    from cuenv.trust.shown import shown

    return shown(value)


def _real_parent(path: Path) -> Path | None:
    """The project's folder for a file the user named: its folder, or the current folder when the file lies
    under it (``cuenv check requirements/dev.txt`` from the project's root may include ``-r ../base.txt``)."""
    try:
        folder = Path(os.path.realpath(path)).parent
        here = Path(os.path.realpath(os.getcwd()))
    except (OSError, ValueError):
        return None
    return here if folder.is_relative_to(here) and here != Path(here.anchor) else folder


def parse_lines(lines: Iterable[tuple[int | None, str]], *, file: str, base: Path | None) -> RequirementsFile:
    """Requirement lines that are not a file of their own (an environment.yml ``pip:`` list): each with
    the line it came from. ``base`` is the folder relative includes resolve against (conda writes the
    list to a file beside environment.yml, so that folder)."""
    state = _State(root=_real_root(base))
    for number, text in lines:
        if "\n" in text or "\r" in text:
            raise RequestFileError(Where(file, number), repr(text), "one entry spans several lines.",
                                   hint="Write one requirement or option per entry.")
        _logical_line(text.strip(), Where(file, number), state, base=base, kind="requirement", depth=1,
                      chain=())
    return state.result()


def parse_text(text: str, *, file: str = "requirements.txt", base: Path | None = None) -> RequirementsFile:
    """A whole requirements file given as text (tests, stdin); includes resolve against ``base``."""
    state = _State(root=_real_root(base))
    for where, line in _logical_lines(text, file):
        _logical_line(line, where, state, base=base, kind="requirement", depth=1, chain=())
    return state.result()


@dataclass
class _State:
    requirements: list[PipRequirement] = field(default_factory=list)
    constraints: list[PipRequirement] = field(default_factory=list)
    options: PipOptions = PipOptions()
    files: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    unsupported: list[Unsupported] = field(default_factory=list)
    option_lines: dict[str, Where] = field(default_factory=dict)
    root: Path | None = None  # the project's folder: every -r/-c include lies under it (issue 31)

    def result(self) -> RequirementsFile:
        return RequirementsFile(tuple(self.requirements), tuple(self.constraints), self.options,
                                tuple(self.files), tuple(dict.fromkeys(self.notes)), tuple(self.unsupported),
                                tuple(self.option_lines.items()))


def _read_file(path: Path, state: _State, *, kind: str, depth: int, chain: tuple[Path, ...],
               where: Where | None = None) -> None:
    try:
        real = path.resolve(strict=True)
    except (OSError, RuntimeError):
        if where is None:
            raise UsageError(f"{path} does not exist.", hint="Give the path of a requirements file.") from None
        raise RequestFileError(where, f"-r {path.name}", f"the included file {path} does not exist.",
                               hint="Fix the path; it is relative to the file that includes it.") from None
    if real in chain:
        loop = " -> ".join(p.name for p in (*chain, real))
        raise RequestFileError(where or Where(str(path)), "-r", f"the includes form a cycle ({loop}).",
                               hint="Remove the -r line that closes the cycle.")
    if depth > MAX_DEPTH:
        raise RequestFileError(where or Where(str(path)), "-r",
                               f"includes nest deeper than {MAX_DEPTH} files.",
                               hint="Flatten the includes into fewer files.")
    if where is not None and (state.root is None or not real.is_relative_to(state.root)):
        # An include travels with the project or is refused: `-r /proc/self/environ` (or a link to it, or
        # `-r ../../secret`) would read a file the project does not hold, and quote it in an error.
        flag = "-c" if kind == "constraint" else "-r"
        raise RequestFileError(where, f"{flag} {_shown(path.name)}", f"includes a file outside the project's folder "
                               f"({_shown(state.root or '?')}); cuenv reads includes only inside it.",
                               hint="Copy the file into the project and include it by a relative path.")
    try:
        mode = real.stat().st_mode
    except OSError as exc:
        raise UsageError(f"Cannot read {path}: {exc.strerror or exc}.") from None
    if not stat.S_ISREG(mode):  # a FIFO, a device or a folder: never opened, never read
        raise RequestFileError(where or Where(str(path)), str(path), "is not a regular file.",
                               hint="Give the path of a requirements file.")
    data = limits.read_bytes(real, what="Requirements file", limit=MAX_BYTES,
                             hint="Check that this is the file you meant.")
    try:  # pip and uv read past a UTF-8 or UTF-16 byte-order mark (a file PowerShell or Notepad wrote)
        text = limits.decoded(data, marked=True)
    except limits.TextProblem as exc:
        raise RequestFileError(where or Where(str(path)), str(path), f"{exc.args[0]}.",
                               hint="Give the path of a requirements file, saved as UTF-8.") from None
    state.files.append(str(path))
    for line_where, line in _logical_lines(text, str(path)):
        _logical_line(line, line_where, state, base=real.parent, kind=kind, depth=depth + 1, chain=(*chain, real))


def _logical_lines(text: str, file: str) -> Iterator[tuple[Where, str]]:
    """pip's preprocessing: join lines ending in a backslash, then drop comments and blank lines."""
    pending: list[str] = []
    start = 0
    for number, raw in enumerate(text.splitlines(), 1):
        if not pending:
            start = number
        if raw.endswith("\\") and not _COMMENT.match(raw):
            pending.append(raw[:-1])
            continue
        pending.append(raw)
        joined = _COMMENT.sub("", "".join(pending)).strip()
        pending = []
        if joined:
            yield Where(file, start), joined
    if pending:
        joined = _COMMENT.sub("", "".join(pending)).strip()
        if joined:
            yield Where(file, start), joined


def _logical_line(line: str, where: Where, state: _State, *, base: Path | None, kind: str, depth: int,
                  chain: tuple[Path, ...]) -> None:
    if not line or line.startswith("#"):
        return
    variable = _ENV_VAR.search(line)
    if variable:
        raise RequestFileError(where, variable.group(0),
                               "pip would fill this in from an environment variable; cuenv reads the file as written, "
                               "so the result would depend on the shell.",
                               hint="Write the value itself in the file.")
    if line.startswith("-"):
        _option_line(line, where, state, base=base, kind=kind, depth=depth, chain=chain)
        return
    requirement, options = _split_options(line, where)
    try:
        _requirement_line(requirement, options, where, state, kind=kind)
    except _NotInstallable as exc:
        state.unsupported.append(Unsupported.of(exc))


def _requirement_line(requirement: str, options: list[tuple[str, str]], where: Where, state: _State, *,
                      kind: str) -> None:
    parsed = parse_requirement(requirement, where)
    hashes: list[str] = []
    for name, value in options:
        if name not in _PER_REQUIREMENT:
            raise RequestFileError(where, f"--{name}", "is a file-wide option and must be on a line of its own.",
                                   hint=f"Move --{name} to its own line.")
        if name == "hash":
            if not _HASH.match(value):
                raise RequestFileError(where, f"--hash={value}", "is not ALGORITHM:HEXDIGEST.",
                                       hint="Write --hash=sha256:<64 hex digits>.")
            hashes.append(value.lower())
        else:
            raise _build_option(where, name)
    parsed = replace(parsed, hashes=tuple(hashes))
    (state.constraints if kind == "constraint" else state.requirements).append(parsed)


def _split_options(line: str, where: Where) -> tuple[str, list[tuple[str, str]]]:
    """``req --hash=a --hash b`` -> ("req", [("hash", "a"), ("hash", "b")]): options start at the first
    word that starts with a dash, as in pip's break_args_options."""
    tokens = line.split()
    for i, token in enumerate(tokens):
        if token.startswith("-"):
            return " ".join(tokens[:i]), _options(" ".join(tokens[i:]), where)
    return line, []


def _options(text: str, where: Where) -> list[tuple[str, str]]:
    try:
        tokens = shlex.split(text, posix=True)
    except ValueError as exc:
        raise RequestFileError(where, text, f"cannot be split into options ({exc}).",
                               hint="Balance the quotes.") from None
    out: list[tuple[str, str]] = []
    i = 0
    while i < len(tokens):
        token = tokens[i]
        name, value = _option_name(token)
        if name is None:
            raise RequestFileError(where, token, "is not a pip option cuenv knows.",
                                   hint="Supported: -r, -c, -i, --extra-index-url, --no-index, -f, --pre, "
                                   "--no-binary, --only-binary, --prefer-binary, --require-hashes, --hash.")
        if name in _FLAG_OPTIONS.values():
            if value is not None:
                raise RequestFileError(where, token, "takes no value.", hint=f"Write --{name} alone.")
            out.append((name, ""))
            i += 1
            continue
        if value is None:
            if i + 1 >= len(tokens):
                raise RequestFileError(where, token, "needs a value.", hint=f"Write {token} and its value on this line.")
            value = tokens[i + 1]
            i += 1
        i += 1
        out.append((name, value))
    return out


def _option_name(token: str) -> tuple[str | None, str | None]:
    if token in _FLAG_OPTIONS:
        return _FLAG_OPTIONS[token], None
    if token.startswith("--"):
        key, eq, value = token.partition("=")
        if key in _FLAG_OPTIONS:
            return _FLAG_OPTIONS[key], value if eq else None
        return _VALUE_OPTIONS.get(key), (value if eq else None)
    for short in ("-i", "-f", "-r", "-c", "-e"):
        if token == short:
            return _VALUE_OPTIONS[short], None
        if token.startswith(short):
            return _VALUE_OPTIONS[short], token[len(short):].lstrip("=")
    return None, None


def _option_line(line: str, where: Where, state: _State, *, base: Path | None, kind: str, depth: int,
                 chain: tuple[Path, ...]) -> None:
    opts = state.options
    for name, value in _options(line, where):
        state.option_lines.setdefault(name, where)
        if name in ("requirement", "constraint"):
            state.options = opts
            _include(value, where, state, base=base, kind="constraint" if name == "constraint" or kind == "constraint"
                     else "requirement", depth=depth, chain=chain)
            opts = state.options
        elif name == "editable":
            try:
                _editable(value, where, state, kind=kind)
            except _NotInstallable as exc:
                state.unsupported.append(Unsupported.of(exc))
        elif name == "index-url":
            opts = replace(opts, index_url=_index(value, where, "-i/--index-url"))
        elif name == "extra-index-url":
            opts = replace(opts, extra_index_urls=(*opts.extra_index_urls, _index(value, where, "--extra-index-url")))
        elif name == "find-links":
            opts = replace(opts, find_links=(*opts.find_links, _find_links(value, where)))
        elif name == "no-index":
            opts = replace(opts, no_index=True)
        elif name == "pre":
            opts = replace(opts, pre=True)
        elif name == "prefer-binary":
            opts = replace(opts, prefer_binary=True)
        elif name == "require-hashes":
            opts = replace(opts, require_hashes=True)
        elif name in ("no-binary", "only-binary"):
            names = tuple(_binary_names(value, where, name))
            if name == "no-binary":
                opts = replace(opts, no_binary=(*opts.no_binary, *names))
            else:
                opts = replace(opts, only_binary=(*opts.only_binary, *names))
        elif name in ("trusted-host", "use-feature"):
            state.notes.append(f"{where}: --{name} {value} is ignored (cuenv's installer decides that itself).")
        elif name == "hash":
            raise RequestFileError(where, "--hash", "belongs after a requirement on the same line.",
                                   hint="Write it after the pin it checks, e.g. `numpy==1.26.4 --hash=sha256:` and the file's hash.")
        else:
            raise _build_option(where, name)
    state.options = opts


def _build_option(where: Where, name: str) -> RequestFileError:
    return _NotInstallable(where, f"--{name}", "passes options to a package build; cuenv installs only built "
                            "wheels, so there is no build to pass them to.",
                            hint="Remove the option; if the package needs a custom build, publish the wheel and "
                            "point --find-links at it.")


def _include(target: str, where: Where, state: _State, *, base: Path | None, kind: str, depth: int,
             chain: tuple[Path, ...]) -> None:
    flag = "-c" if kind == "constraint" else "-r"
    if _URL.match(target):
        raise RequestFileError(where, f"{flag} {target}", "includes a file from the network; what it holds could "
                               "change between two reads of this file.",
                               hint="Download it beside this file and include it by its relative path.")
    if Path(target).is_absolute() or target.startswith("~"):
        raise RequestFileError(where, f"{flag} {target}", "includes a file by absolute path: cuenv follows only "
                               "includes relative to the file, which travel with the project.",
                               hint="Copy the file into the project and include it by a relative path.")
    if base is None:
        raise RequestFileError(where, f"{flag} {target}", "has no file to be relative to.",
                               hint="Read the requirements from a file, not from text.")
    _read_file(base / target, state, kind=kind, depth=depth, chain=chain, where=where)


def _editable(value: str, where: Where, state: _State, *, kind: str) -> None:
    """``-e URL#egg=name`` of a VCS repository installs like ``name @ URL`` (not editable: an environment
    cuenv builds has no source checkout to edit); ``-e PATH`` is a local project and refused."""
    if value.startswith(_VCS):
        parsed = parse_requirement(value, where)
        state.notes.append(f"{where}: -e {value} is installed as a regular package, not in editable mode.")
        (state.constraints if kind == "constraint" else state.requirements).append(parsed)
        return
    raise _NotInstallable(where, f"-e {value}", "installs a project from a folder on this machine in editable "
                           "mode; an environment built from this file would depend on that folder.",
                           hint="Build the environment without it, then install the project into it from its "
                           "folder; or publish it as a wheel on an index.")


def _index(value: str, where: Where, flag: str) -> str:
    if not re.match(r"^https?://[^\s/]+", value):
        raise RequestFileError(where, f"{flag} {value}", "is not an http(s) URL.",
                               hint="Give the index URL, e.g. https://download.pytorch.org/whl/cu121.")
    return value.rstrip("/")


def _find_links(value: str, where: Where) -> str:
    from cuenv.trust.requirements import loopback_http

    if re.match(r"^http://", value, re.IGNORECASE) and not loopback_http(value):
        raise RequestFileError(where, f"-f {value}", "uses http://, which lets anyone on the network path swap "
                               "the packages.", hint="Use the page's https:// address.")
    if re.match(r"^https?://[^\s/]+", value, re.IGNORECASE):
        return value
    raise RequestFileError(where, f"-f {value}", "points at a folder on this machine; an environment built from "
                           "this file would depend on that folder.",
                           hint="Serve the wheels from an index or an http(s) --find-links page.")


def _binary_names(value: str, where: Where, flag: str) -> Iterator[str]:
    for item in value.split(","):
        item = item.strip()
        if item in (":all:", ":none:"):
            yield item
        elif re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9._-]*", item):
            yield canonical(item)
        else:
            raise RequestFileError(where, f"--{flag} {value}", f"{item!r} is not a package name.",
                                   hint=f"Write --{flag} with package names separated by commas, or :all: / :none:.")


# -- one requirement --------------------------------------------------------------------------------


def parse_requirement(text: str, where: Where) -> PipRequirement:
    """A requirement as pip accepts it on a line: PEP 508, or a bare URL with a name in it."""
    from packaging.requirements import InvalidRequirement, Requirement

    text = text.strip()
    url_part, marker_part = _split_marker(text)
    if _URL.match(url_part) or url_part.startswith(_VCS):
        if url_part.startswith("file:"):
            raise _local(where, text)
        name = _name_from_url(url_part)
        if name is None and url_part.startswith(_VCS):
            name = _name_from_repository(url_part)
        if name is None:
            raise RequestFileError(where, url_part, "is a URL that does not say which package it is.",
                                   hint=f"Write the package's name and ' @ ' before {url_part} (or add #egg= and the name to a VCS URL).")
        text = f"{name} @ {url_part}" + (f" ; {marker_part}" if marker_part else "")
    elif _looks_local(url_part):
        raise _local(where, text)
    try:
        req = Requirement(text)
    except InvalidRequirement as exc:
        raise RequestFileError(where, repr(text), f"is not a requirement ({str(exc).splitlines()[0]}).",
                               hint="Write it as pip does, e.g. `numpy`, `numpy==1.26.4` or "
                               "`requests[socks]>=2.31; python_version >= '3.9'`.") from None
    if req.url is not None:
        if req.url.startswith("file:") or not (_URL.match(req.url) or req.url.startswith(_VCS)):
            raise _local(where, text)
        if not re.match(r"^(?:(?:git|hg|svn|bzr)\+)?https?://", req.url):
            raise RequestFileError(where, req.url, "uses a scheme cuenv does not fetch.",
                                   hint="Use an https:// URL (git+https:// for a repository).")
    return PipRequirement(
        name=canonical(req.name), text=str(req), specifier=str(req.specifier), extras=tuple(sorted(req.extras)),
        marker=str(req.marker) if req.marker else None, url=req.url, where=where,
    )


def _split_marker(text: str) -> tuple[str, str | None]:
    """A bare URL may carry a marker after ``; `` (pip requires the space, since URLs contain ';')."""
    head, sep, marker = text.partition(" ;")
    if not sep:
        head, sep, marker = text.partition("; ")
    return (head.strip(), marker.strip() or None) if sep else (text, None)


def _name_from_url(url: str) -> str | None:
    egg = _EGG.search(url)
    if egg:
        return egg.group(1)
    filename = url.split("#", 1)[0].split("?", 1)[0].rstrip("/").rsplit("/", 1)[-1]
    for pattern in (_WHEEL_NAME, _SDIST_NAME):
        match = pattern.match(filename)
        if match:
            return match.group(1)
    return None


def _name_from_repository(url: str) -> str | None:
    """``git+https://github.com/huggingface/peft.git@v0.3`` -> "peft". pip learns the name by building the
    checkout; a repository is named after its package nearly always, and uv refuses an install whose
    name does not match (a clear error, never a wrong package)."""
    from urllib.parse import urlsplit

    last = urlsplit(url.split("+", 1)[1].split("#", 1)[0]).path.rstrip("/").rsplit("/", 1)[-1]
    guess = re.sub(r"\.git$", "", last.split("@", 1)[0])
    return guess if re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9._-]*", guess) else None


def _looks_local(text: str) -> bool:
    head = re.split(r"[\s;\[]", text, maxsplit=1)[0]
    return head in (".", "..") or head.startswith(("./", "../", "/", "~")) or ("/" in head and "@" not in text) \
        or head.endswith((".whl", ".tar.gz", ".zip"))


def _local(where: Where, text: str) -> RequestFileError:
    return _NotInstallable(where, text, "is a path on this machine (a local project or archive); an environment "
                            "built from this file would depend on that path.",
                            hint="Build the environment without it, then install the project into it from its folder; "
                            "or publish it as a wheel on an index.")


__all__ = ["MAX_DEPTH", "PYPI", "PipOptions", "PipRequirement", "RequestFileError", "RequirementsFile", "Unsupported",
           "Where", "parse_file", "parse_lines", "parse_requirement", "parse_text"]
