"""Bounded reads and bounded parsers for every file cuenv reads (issue 14 §5).

Every read has a size limit: ``doctor --report /dev/zero`` grew to 24 GB and ``CUENV_CONFIG=/dev/zero``
hung before. Text is strict UTF-8 without NUL bytes (a binary file is named as such). YAML is
scanned as an event stream before it is built: more than ``MAX_DEPTH`` levels of nesting (libyaml's
composer recurses in C and crashed the process at 100,000 brackets) or more than ``MAX_NODES``
nodes once aliases are expanded (an alias bomb hung `cuenv recipes`) is refused, and the scan stops
at the first level or node too many, so refusing costs little. JSON is depth-checked the same way.
Integers too long to convert (``v: 1111...`` with 5,000 digits) and every other parser failure end
in one ``Untrusted`` line naming the file and the fix.
"""

from __future__ import annotations

import errno
import fcntl
import os
import stat
from pathlib import Path

from cuenv.errors import NotFound
from cuenv.trust import Untrusted

TYPE_CHECKING = False  # no `typing` at run time: the start-up path does without it (issue 29)
if TYPE_CHECKING:
    from typing import Any, Final

    import yaml

KiB: Final = 1024
MiB: Final = 1024 * KiB
# One limit per kind of file, far above any real one: the largest built-in recipe is ~2 KiB, a torch
# lock for three platforms ~150 KiB, a doctor report ~50 KiB, a .cuenv pin two lines.
CONFIG: Final = 1 * MiB
RECIPE: Final = 1 * MiB
REQUEST_FILE: Final = 4 * MiB
LOCK: Final = 32 * MiB
MANIFEST: Final = 32 * MiB
REPORT: Final = 32 * MiB
META: Final = 4 * MiB
ENV_STATE: Final = 1 * MiB  # an environment's own meta.json, solution.json, verdict cache (real ones: a few KiB)
PIN: Final = 64 * KiB
MAX_DEPTH: Final = 64
MAX_NODES: Final = 500_000


def size_text(n: int) -> str:
    return f"{n // MiB} MiB" if n >= MiB and n % MiB == 0 else f"{n // KiB} KiB" if n >= KiB else f"{n} bytes"


def read_bytes(path: Path | str, *, what: str, limit: int, hint: str | None = None) -> bytes:
    """At most ``limit`` bytes of ``path``; a larger (or endless) file is refused without reading it all.

    ``what`` names the file for messages ("Config file", "Lockfile"). A missing file is ``NotFound``."""
    path = Path(path)
    try:
        # O_NONBLOCK: opening a FIFO nobody writes to must not hang; reads are blocking again below.
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    except FileNotFoundError:
        raise NotFound(f"{what} {path} does not exist.", hint=hint) from None
    except OSError as exc:
        kind = regular_file_problem(path)  # a socket cannot even be opened (ENXIO): say what it is
        if kind is not None and "not a regular file" in kind:
            raise Untrusted(f"{what} {path} {kind}; cuenv reads only regular files.",
                            hint=hint or "Check that the path names the right file.") from None
        raise Untrusted(f"Cannot read {what.lower()} {path}: {_why(exc)}.", hint=hint) from None
    try:
        # Only a regular file is read (issue 31 §8): a FIFO a writer keeps open blocked forever, /dev/zero
        # never ends, a socket or a folder is no file. /dev/null reads as empty, as everywhere.
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            if stat.S_ISCHR(st.st_mode) and _is_devnull(st):
                return b""
            raise Untrusted(f"{what} {path} is {file_kind(st.st_mode)}, not a regular file; cuenv reads only regular files.",
                            hint=hint or "Check that the path names the right file.")
        flags = fcntl.fcntl(fd, fcntl.F_GETFL)
        fcntl.fcntl(fd, fcntl.F_SETFL, flags & ~os.O_NONBLOCK)
        chunks: list[bytes] = []
        got = 0
        while got <= limit:
            chunk = os.read(fd, min(limit + 1 - got, MiB))
            if not chunk:
                break
            chunks.append(chunk)
            got += len(chunk)
    except OSError as exc:
        raise Untrusted(f"Cannot read {what.lower()} {path}: {_why(exc)}.", hint=hint) from None
    finally:
        os.close(fd)
    if got > limit:
        raise Untrusted(f"{what} {path} is larger than {size_text(limit)}, more than cuenv reads from such a file.",
                        hint=hint or "Check that the path names the right file.")
    return b"".join(chunks)


def read_small(path: Path | str, *, limit: int = MiB, errors: str = "strict") -> str:
    """Text of a file whose absence or damage only means "not known" (a cache, a toolkit's version file,
    a /proc file, a tool's own config): a regular file of at most ``limit`` bytes, read without
    blocking. Anything else raises OSError, which such callers already treat as "absent"."""
    from cuenv.errors import CuenvError

    try:
        data = read_bytes(path, what="File", limit=limit)
    except CuenvError as exc:
        raise OSError(errno.EINVAL, exc.message) from None
    return data.decode("utf-8", errors)


def file_kind(mode: int) -> str:
    """What a non-regular file is, as a phrase: "a FIFO", "a device", "a socket", "a folder"."""
    if stat.S_ISFIFO(mode):
        return "a FIFO (named pipe)"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device"
    if stat.S_ISSOCK(mode):
        return "a socket"
    if stat.S_ISDIR(mode):
        return "a folder"
    return "not a regular file"


def _is_devnull(st: os.stat_result) -> bool:
    try:
        return os.path.samestat(st, os.stat(os.devnull))
    except OSError:
        return False


def regular_file_problem(path: Path | str) -> str | None:
    """Why ``path`` is not a regular file one may open and read without blocking (a phrase), or None.
    Follows links; never opens the file. A missing file is "does not exist"."""
    try:
        st = os.stat(path)
    except FileNotFoundError:
        return "does not exist"
    except OSError as exc:
        return f"cannot be read: {_why(exc)}"
    return None if stat.S_ISREG(st.st_mode) else f"is {file_kind(st.st_mode)}, not a regular file"


# Byte-order marks Windows tools write: UTF-8's (Notepad) and UTF-16's (PowerShell 5's `>`). pip and uv read a
# requirements file with either, conda an environment file; UTF-32, or UTF-16 without its mark, none of them.
_MARKS: Final = ((b"\xef\xbb\xbf", "utf-8-sig"), (b"\xff\xfe", "utf-16"), (b"\xfe\xff", "utf-16"))


def utf16_fix(path: Path | str) -> str:
    """How to make a UTF-16 file (PowerShell 5's `>` writes one) UTF-8."""
    import shlex

    return f"Convert it to UTF-8: `iconv -f UTF-16 -t UTF-8 {shlex.quote(str(path))} > {shlex.quote(str(path) + '.utf8')}`."


def codec_of(data: bytes) -> str:
    """The codec that reads ``data``: the one its byte-order mark names, else UTF-8."""
    return next((codec for mark, codec in _MARKS if data.startswith(mark)), "utf-8")


def decode(data: bytes, *, what: str, path: Path | str, hint: str | None = None, marked: bool = False) -> str:
    """Strict UTF-8 text without NUL bytes; anything else is named a binary or non-UTF-8 file. ``marked``: a
    format whose own tools read a byte-order mark (requirements files, environment files) is read past it,
    UTF-16 included; elsewhere UTF-16 text is named as such, with the fix."""
    try:
        return decoded(data, marked=marked)
    except TextProblem as exc:
        raise Untrusted(f"{what} {path} {exc.args[0]}.", hint=utf16_fix(path) if exc.utf16 else hint or exc.fix) from None


class TextProblem(ValueError):
    """Why bytes are not the text a reader takes (a phrase: "is a binary file, not text"); ``utf16``: the fix
    is :func:`utf16_fix`."""

    def __init__(self, phrase: str, fix: str, *, utf16: bool = False) -> None:
        super().__init__(phrase)
        self.fix, self.utf16 = fix, utf16


def decoded(data: bytes, *, marked: bool = False) -> str:
    """``data`` as text (see :func:`decode`), or TextProblem."""
    codec = codec_of(data)
    if codec == "utf-16" and not marked:
        raise TextProblem("is UTF-16 text; its format is read as UTF-8", "", utf16=True)
    binary = TextProblem("is a binary file, not text", "Check that the path names the right file.")
    if codec != "utf-16" and b"\0" in data:
        raise binary
    try:
        text = data.decode(codec if marked else "utf-8")
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        raise TextProblem(f"is not {'UTF-16' if codec == 'utf-16' else 'UTF-8'} text (byte {exc.start + 1}, line {line})",
                          "Save the file as UTF-8.") from None
    if "\0" in text:  # UTF-32's mark begins with UTF-16's
        raise binary
    return text


def read_text(path: Path | str, *, what: str, limit: int, hint: str | None = None, marked: bool = False) -> str:
    """``read_bytes`` then ``decode``: the one way cuenv reads a text file someone else may have written."""
    return decode(read_bytes(path, what=what, limit=limit, hint=hint), what=what, path=path, hint=hint, marked=marked)


def _why(exc: OSError) -> str:
    if exc.errno == errno.EISDIR:
        return "it is a folder"
    return exc.strerror or type(exc).__name__


# -- YAML ----------------------------------------------------------------------------------------
def safe_loader() -> type[yaml.SafeLoader | yaml.CSafeLoader]:
    """libyaml's safe loader where PyYAML was built with it (several times faster), else the pure one."""
    import yaml

    return getattr(yaml, "CSafeLoader", yaml.SafeLoader)


def yaml_shape_problem(text: str, *, max_depth: int = MAX_DEPTH, max_nodes: int = MAX_NODES) -> str | None:
    """Why ``text`` is too deep or too big once aliases are expanded (a phrase: "is nested ..."), or None.

    Scans the event stream (no recursion) and stops at the first level or node too many."""
    import yaml

    starts = (yaml.SequenceStartEvent, yaml.MappingStartEvent)
    ends = (yaml.SequenceEndEvent, yaml.MappingEndEvent)
    # A stack of open collections: [anchor, expanded nodes inside, deepest level inside (relative)].
    stack: list[list[Any]] = [[None, 0, 0]]
    sizes: dict[str | None, tuple[int, int]] = {}  # anchor -> (expanded nodes, depth)
    total = 0

    def add(nodes: int, depth: int) -> str | None:
        nonlocal total
        total += nodes
        top = stack[-1]
        top[1] += nodes
        top[2] = max(top[2], depth)
        if total > max_nodes:
            return f"expands to more than {max_nodes} YAML nodes (an alias bomb?)"
        if len(stack) - 1 + depth > max_depth:
            return f"is nested more than {max_depth} levels deep"
        return None

    try:
        for event in yaml.parse(text, Loader=safe_loader()):
            why = None
            if isinstance(event, starts):
                stack.append([event.anchor, 0, 0])
                if len(stack) - 1 > max_depth:
                    return f"is nested more than {max_depth} levels deep"
            elif isinstance(event, ends):
                anchor, nodes, depth = stack.pop()
                if anchor is not None:
                    sizes[anchor] = (nodes + 1, depth + 1)
                why = add(nodes + 1, depth + 1)
            elif isinstance(event, yaml.AliasEvent):
                why = add(*sizes.get(event.anchor, (1, 1)))
            elif isinstance(event, yaml.ScalarEvent):
                if event.anchor is not None:
                    sizes[event.anchor] = (1, 1)
                why = add(1, 1)
            if why is not None:
                return why
    except yaml.YAMLError as exc:
        if "nesting depth" in str(getattr(exc, "problem", "")):  # libyaml >= 0.2.6 stops at 1,000 levels itself
            return f"is nested more than {max_depth} levels deep"
        return None  # the caller's own parse reports it, with its line
    return None


class YamlUnreadable(ValueError):
    """Why a YAML text cannot be read, as a phrase that follows the file's name ("is not valid YAML: ...");
    ``line`` where the parser knows it, ``shape`` when it is too deep or too big (the limits above)."""

    def __init__(self, problem: str, *, line: int | None = None, shape: bool = False) -> None:
        super().__init__(problem)
        self.problem, self.line, self.shape = problem, line, shape


def parse_yaml(text: str) -> Any:
    """Safe YAML (no tags, no objects) within the shape limits, or :class:`YamlUnreadable`: the one home of
    how cuenv reads a YAML file someone else may have written; callers word the error their own way."""
    import yaml

    why = yaml_shape_problem(text)  # first: libyaml's composer recurses in C (issue 14)
    if why is not None:
        raise YamlUnreadable(why, shape=True)
    try:
        return yaml.load(text, Loader=safe_loader())  # noqa: S506 - a safe loader
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
        raise YamlUnreadable(f"is not valid YAML: {problem}", line=mark.line + 1 if mark is not None else None) from None
    except (ValueError, RecursionError, OverflowError) as exc:  # an integer of 5,000 digits
        raise YamlUnreadable(f"holds a value cuenv cannot read: {_first_line(exc)}") from None


def load_yaml(text: str, *, what: str, file: str, hint: str | None = None) -> Any:
    """:func:`parse_yaml`, its refusal one ``Untrusted`` line naming ``what`` and ``file``."""
    try:
        return parse_yaml(text)
    except YamlUnreadable as exc:
        if exc.shape:
            hint = ("Write the values out instead of repeating anchors (&name / *name)." if "alias" in exc.problem
                    else "Check the file: no cuenv file needs that much nesting.")
        where = f" line {exc.line}" if exc.line is not None else ""
        raise Untrusted(f"{what} {file}{where} {exc.problem}.", hint=hint or "Fix the file.") from None


# -- JSON ----------------------------------------------------------------------------------------
def depth_problem(value: Any, max_depth: int = MAX_DEPTH) -> str | None:
    """Why parsed data is too deep or too big for the recursive code that reads it, or None. Iterative;
    only containers are queued, their scalars counted where they stand (`list` reads a meta.json per
    environment: queueing every scalar was a third of its time per environment, issue 29)."""
    if max_depth < 1:
        return f"is nested more than {max_depth} levels deep"
    todo: list[tuple[Any, int]] = [(value, 1)] if isinstance(value, (dict, list, tuple)) else []
    seen = 1
    while todo:
        item, depth = todo.pop()
        children = item.values() if isinstance(item, dict) else item
        if not children:
            continue
        if depth >= max_depth:  # its values would stand one level deeper
            return f"is nested more than {max_depth} levels deep"
        seen += len(children)
        if seen > MAX_NODES:
            return f"holds more than {MAX_NODES} values"
        todo.extend((v, depth + 1) for v in children if isinstance(v, (dict, list, tuple)))
    return None


def load_json(text: str | bytes, *, what: str, file: str, hint: str | None = None, max_depth: int = MAX_DEPTH) -> Any:
    """JSON within the limits: invalid JSON, deep nesting or a too-long number is one ``Untrusted`` line."""
    import json

    try:
        data = json.loads(text)
    except RecursionError:
        raise Untrusted(f"{what} {file} is nested more than {max_depth} levels deep.",
                        hint=hint or "Check that the path names the right file.") from None
    except UnicodeDecodeError:
        raise Untrusted(f"{what} {file} is not UTF-8 text.", hint=hint or "Check that the path names the right file.") from None
    except ValueError as exc:  # json.JSONDecodeError, and int conversions over the digit limit
        where = f" line {exc.lineno}" if hasattr(exc, "lineno") else ""
        raise Untrusted(f"{what} {file}{where} is not valid JSON: {_first_line(exc)}.",
                        hint=hint or "Check that the path names the right file.") from None
    why = depth_problem(data, max_depth)
    if why is not None:
        raise Untrusted(f"{what} {file} {why}.", hint=hint or "Check that the path names the right file.")
    return data


def _first_line(exc: BaseException) -> str:
    text = str(getattr(exc, "msg", None) or exc).strip()
    return (text.splitlines() or [type(exc).__name__])[0][:200]


# -- values from the command line or a file ------------------------------------------------------------
def short_text(value: object, *, what: str, limit: int = 200) -> str:
    """A one-line value of at most ``limit`` characters (a version, a name, a flag's value)."""
    if not isinstance(value, str):
        raise Untrusted(f"{what} must be text, not {type(value).__name__}.")
    if len(value) > limit:
        raise Untrusted(f"{what} is {len(value)} characters long (at most {limit}).", hint="Check the value.")
    if any(ord(c) < 32 or ord(c) == 127 for c in value):
        raise Untrusted(f"{what} {value[:40]!r} holds a line break or another control character.", hint="Check the value.")
    return value
