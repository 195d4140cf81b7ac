"""What a command hands back to the CLI edge: data for --json, text for people, an exit code."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass
class Result:
    data: Any = None
    text: str = ""
    exit_code: int = 0
    warnings: list[str] = field(default_factory=list)  # printed to stderr as "warning: ..."
