"""What a command hands back to the CLI edge: data for --json, text for people, an exit code."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass
class Result:
    data: Any = None
    text: str = ""
    exit_code: int = 0
    warnings: list[str] = field(default_factory=list)  # printed to stderr as "warning: ..."; not with -q
    # True when ``text`` only reports what was done ("Created ...", "Removed ..."): -q leaves it out.
    # Output the user asked for (a list, a lockfile on stdout) is printed with -q too.
    report: bool = False
