"""Per-project pinning: a ``.cuenv`` file names the environment of a directory tree (issue 5 §6).

Format (the shell hook parses the same rules, see shell/cuenv.sh)::

    # comments and blank lines are ignored; spaces do not matter
    env: torch-cu121        # or just the bare name on a line
    lock: cuenv.lock        # optional, relative to the file

The first line that is not a ``lock:`` line names the environment.

A ``.cuenv`` file comes with every clone, so it is shared input (issue 14 §4): it is read within
64 KiB, and it acts only once the user allowed its exact content at its path (cuenv.trust.consent;
`cuenv allow`). The shell hook does not read it: it asks `cuenv shell-env SHELL pin FILE`.
"""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass, field
from pathlib import Path
from typing import Final

from cuenv.errors import CuenvError, NotFound, UsageError

PROJECT_FILE: Final = ".cuenv"
_HOLDS: Final = "Write one line in it: `env: ` then an environment's name (`cuenv list` names them)."
_ENV_NAME: Final = re.compile(r"[A-Za-z0-9][A-Za-z0-9._:-]{0,80}")  # an environment, or system:X.Y


@dataclass(frozen=True)
class ProjectPin:
    file: Path
    env: str
    lock: Path | None = None
    content: bytes = field(default=b"", compare=False, repr=False)  # what an approval is keyed on


class PinNotAllowed(CuenvError):
    """A `.cuenv` file the user has not approved (or denied): said once, nothing activated."""

    def __init__(self, pin: ProjectPin, status: str) -> None:
        where = shlex.quote(str(pin.file))
        if status == "denied":
            super().__init__(f"{pin.file} is denied: not activating {pin.env}.",
                             hint=f"Run `cuenv allow {where}` to allow it.")
        else:
            super().__init__(f"{pin.file} is not allowed yet: it would activate {pin.env}.",
                             hint=f"Read it, then run `cuenv allow {where}` (or `cuenv deny {where}` to stop asking).")
        self.status = status


def parse(text: str, file: Path) -> ProjectPin:
    env: str | None = None
    lock: Path | None = None
    for raw in text.split("\n"):  # as the shell reads it, line by line
        line = raw.split("#", 1)[0]
        squeezed = re.sub(r"\s+", "", line)
        if not squeezed:
            continue
        if squeezed.startswith("lock:"):
            lock = lock or file.parent / line.split(":", 1)[1].strip()
        elif env is None:
            env = squeezed[4:] if squeezed.startswith("env:") else squeezed
    if not env:
        raise UsageError(f"{file} does not name an environment.", hint=_HOLDS)
    if not _ENV_NAME.fullmatch(env):
        raise UsageError(f"{file} names {env[:40]!r}, which is not an environment name.",
                         hint=_HOLDS)
    return ProjectPin(file=file, env=env, lock=lock)


def read(file: Path) -> ProjectPin:
    """The pin in ``file``: at most 64 KiB of UTF-8 (a multi-megabyte line blocked `cd` for minutes)."""
    from dataclasses import replace

    from cuenv.trust import limits

    data = limits.read_bytes(file, what="Project file", limit=limits.PIN, hint=_HOLDS)
    text = limits.decode(data, what="Project file", path=file, hint=_HOLDS)
    return replace(parse(text, file), content=data)


def nearest(start: Path) -> Path | None:
    """The nearest .cuenv file in ``start`` or a parent directory (not read)."""
    for folder in (start, *start.parents):
        candidate = folder / PROJECT_FILE
        if candidate.is_file():
            return candidate
    return None


def find(start: Path) -> ProjectPin | None:
    """The pin of the nearest .cuenv file, read (not yet approved: see ``approved``)."""
    file = nearest(start)
    return read(file) if file is not None else None


def locate(path: Path | None, *, cwd: Path) -> ProjectPin:
    """The pin `cuenv allow/deny [PATH]` acts on: a .cuenv file, a folder holding one, or the nearest."""
    if path is None:
        file = nearest(cwd)
        if file is None:
            raise NotFound(f"No {PROJECT_FILE} file in {cwd} or above.",
                           hint="Run it in the project's folder, or give `cuenv allow` the file's path.")
    else:
        file = path / PROJECT_FILE if path.is_dir() else path
        if not file.is_file():
            raise NotFound(f"{file} is not a {PROJECT_FILE} file.", hint="Name a .cuenv file or the folder holding it.")
    return read(Path(file).absolute())


def approved(pin: ProjectPin, home: Path) -> ProjectPin:
    """``pin`` when the user allowed this content at this path; else ``PinNotAllowed``."""
    from cuenv.trust import consent

    why = consent.path_problem(pin.file)
    if why is not None:  # never a pin, whatever was approved; the shell hooks do not even ask
        from cuenv.trust import Untrusted

        raise Untrusted(f"Not using the pin {str(pin.file)!r}: {why}.", hint="Rename the folder.")
    status = consent.status(home, pin.file, pin.content)
    if status != consent.ALLOWED:
        raise PinNotAllowed(pin, status)
    return pin
