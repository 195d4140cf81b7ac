"""Per-project pinning: a ``.cuenv`` file names the environment of a directory tree (issue 5 §6).

Format (the shell hook parses the same rules, see shell/cuenv.sh)::

    # comments and blank lines are ignored; spaces do not matter
    env: torch-cu121        # or just the bare name on a line
    lock: cuenv.lock        # optional, relative to the file

The first line that is not a ``lock:`` line names the environment.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Final

from cuenv.errors import UsageError

PROJECT_FILE: Final = ".cuenv"


@dataclass(frozen=True)
class ProjectPin:
    file: Path
    env: str
    lock: Path | None = None


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
        raise UsageError(f"{file} does not name an environment.", hint="Write a line `env: NAME` in it.")
    return ProjectPin(file=file, env=env, lock=lock)


def find(start: Path) -> ProjectPin | None:
    """The nearest .cuenv file in ``start`` or a parent directory."""
    for folder in (start, *start.parents):
        candidate = folder / PROJECT_FILE
        if candidate.is_file():
            try:
                return parse(candidate.read_text(encoding="utf-8", errors="replace"), candidate)
            except OSError:
                return None
    return None
