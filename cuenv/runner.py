"""The only subprocess wrapper (STYLE.md §5): timeouts, a clean environment, typed failures."""

from __future__ import annotations

import logging
import os
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Mapping, Sequence

from cuenv.errors import ToolError

_LOGGER = logging.getLogger(__name__)

# Variables that make a child Python or loader pick up the caller's state (pipx does the same).
_DROP = ("PYTHONPATH", "PYTHONHOME", "PYTHONSTARTUP", "PIP_REQUIRE_VIRTUALENV", "__PYVENV_LAUNCHER__")


@dataclass(frozen=True)
class Completed:
    argv: tuple[str, ...]
    returncode: int
    stdout: str
    stderr: str


class ToolNotFound(ToolError):
    def __init__(self, tool: str, hint: str | None = None) -> None:
        super().__init__(f"{tool!r} was not found on PATH.", hint=hint)
        self.tool = tool


class ToolTimedOut(ToolError):
    def __init__(self, argv: Sequence[str], timeout: float) -> None:
        super().__init__(f"{Path(argv[0]).name} did not finish within {timeout:g} s.")
        self.argv = tuple(argv)


class ToolFailed(ToolError):
    def __init__(self, argv: Sequence[str], returncode: int, stdout: str, stderr: str) -> None:
        tail = stderr_tail(stderr or stdout)
        super().__init__(f"{Path(argv[0]).name} failed (exit {returncode}): {tail}")
        self.argv = tuple(argv)
        self.returncode = returncode
        self.stdout = stdout
        self.stderr = stderr


def stderr_tail(text: str, lines: int = 3) -> str:
    kept = [line.strip() for line in text.strip().splitlines() if line.strip()]
    return " | ".join(kept[-lines:]) if kept else "no output"


def clean_env(env: Mapping[str, str] | None = None) -> dict[str, str]:
    base = dict(os.environ if env is None else env)
    for name in _DROP:
        base.pop(name, None)
    return base


def run(
    argv: Sequence[str | Path],
    *,
    timeout: float,
    env: Mapping[str, str] | None = None,
    cwd: Path | None = None,
    check: bool = True,
    input: str | None = None,
) -> Completed:
    """Run ``argv`` and capture its output; raise ToolNotFound, ToolTimedOut or ToolFailed."""
    args = [str(a) for a in argv]
    _LOGGER.debug("run: %s", " ".join(args))
    try:
        proc = subprocess.run(
            args,
            env=clean_env(env),
            cwd=cwd,
            input=input,
            capture_output=True,
            text=True,
            timeout=timeout,
            stdin=None if input is not None else subprocess.DEVNULL,
        )
    except FileNotFoundError:
        raise ToolNotFound(args[0]) from None
    except subprocess.TimeoutExpired:
        raise ToolTimedOut(args, timeout) from None
    done = Completed(tuple(args), proc.returncode, proc.stdout, proc.stderr)
    if check and proc.returncode != 0:
        raise ToolFailed(args, proc.returncode, proc.stdout, proc.stderr)
    return done
