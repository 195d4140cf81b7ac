"""The error tree. Each error carries its message, a hint and an exit code.

Only ``cli.main`` prints them (STYLE.md §6): ``error: <message>`` then ``hint: <hint>``.
Exit codes: 1 = an operation or check failed, 2 = bad usage or bad input, 130 = interrupted.
"""

from __future__ import annotations

TYPE_CHECKING = False  # no `typing` at run time: the start-up path does without it (issue 29)
if TYPE_CHECKING:
    from typing import Final


EXIT_OK: Final = 0
EXIT_PROBLEMS: Final = 1
EXIT_USAGE: Final = 2
EXIT_INTERRUPTED: Final = 130


class CuenvError(Exception):
    """A foreseeable failure: said to the user in one or two lines, never as a traceback."""

    exit_code: int = EXIT_PROBLEMS

    def __init__(self, message: str, *, hint: str | None = None, exit_code: int | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.hint = hint
        if exit_code is not None:
            self.exit_code = exit_code


class UsageError(CuenvError):
    """Bad input: an unknown name, an unparseable version, a broken file. Exit 2."""

    exit_code = EXIT_USAGE


class NotFound(UsageError):
    """A named thing (recipe, environment, file) does not exist."""


class ToolError(CuenvError):
    """An external tool (uv, conda, a compiler) failed or is missing."""


class EnvironmentBusy(CuenvError):
    """Another cuenv process holds the lock of an environment."""
