"""What `cuenv create` decided before anything is downloaded: recipe, name, engine, verdict, solution."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from cuenv.knowledge.stack import Finding, Stack


@dataclass
class CreatePlan:
    name: str
    recipe: Any
    version: str | None
    engine: str
    engine_reason: str
    stack: Stack
    findings: list[Finding]
    solution: Any = None
    prefix: Path | None = None
    meta: dict[str, Any] = field(default_factory=dict)
    locked: Any = None  # a Solution from a lockfile: replaces the solve step
    lock_hash: str | None = None  # that lockfile's content hash, recorded as meta.lock_hash
    # False when the findings are about another machine (--target-*): then they are not cached as
    # this machine's verdict, and the first `list`/`use` here computes its own.
    checked_here: bool = True
