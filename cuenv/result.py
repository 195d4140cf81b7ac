"""What a command hands back to the CLI edge: data for --json, text for people, an exit code.

A plain class rather than a dataclass: every command's start-up imports this module, and importing
``dataclasses`` (which imports ``inspect``) costs more than a bare interpreter's start (issue 29).
"""

from __future__ import annotations

TYPE_CHECKING = False  # no `typing` at run time: the start-up path does without it (issue 29)
if TYPE_CHECKING:
    from typing import Any


class Result:
    __slots__ = ("data", "exit_code", "report", "text", "warnings")

    def __init__(self, data: Any = None, text: str = "", exit_code: int = 0, warnings: list[str] | None = None,
                 report: bool = False) -> None:
        self.data = data
        self.text = text
        self.exit_code = exit_code
        self.warnings: list[str] = [] if warnings is None else warnings  # printed to stderr as "warning: ..."; not with -q
        # True when ``text`` only reports what was done ("Created ...", "Removed ..."): -q leaves it out.
        # Output the user asked for (a list, a lockfile on stdout) is printed with -q too.
        self.report = report

    def __repr__(self) -> str:
        return f"Result(exit_code={self.exit_code!r}, text={self.text!r}, data={self.data!r}, warnings={self.warnings!r})"

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Result):
            return NotImplemented
        return all(getattr(self, k) == getattr(other, k) for k in self.__slots__)

    __hash__ = None  # type: ignore[assignment]  # mutable, as the dataclass it replaces was
