"""Progress events as typed values (issue 24 §5): what an engine, a create or a change reports while it works.

The engines and cuenv.envs emit them through a ``Progress`` callback; cuenv.engines.progress.Transfers keeps
the accounting, and the CLI (cuenv.cli.progress) and the TUI draw them, each in its own words.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable


@dataclass(frozen=True)
class Step:
    """A stage of the work begins, with what it works on: plan, lock, mirror, solve, route, venv, verify, remove,
    install, link, done (the ones a display counts are cuenv.engines.progress.STEPS)."""

    name: str
    detail: str = ""
    nbytes: int | None = None  # install: the whole download, when every size is known


@dataclass(frozen=True)
class Download:
    """A package's download began."""

    package: str
    size: int | None = None


@dataclass(frozen=True)
class Chunk:
    """More of a package arrived (cuenv's own downloads; uv reports only start and end)."""

    package: str
    nbytes: int


@dataclass(frozen=True)
class Downloaded:
    """A package's download finished."""

    package: str
    size: int | None = None


@dataclass(frozen=True)
class Output:
    """A line the engine's tool printed (shown with -v)."""

    line: str


@dataclass(frozen=True)
class Tick:
    """Nothing new: a moment to cancel (a running tool is polled about once a second)."""


@dataclass(frozen=True)
class Notice:
    """A warning said before the work starts (what the check found, how a file was read)."""

    text: str


Event = Step | Download | Chunk | Downloaded | Output | Tick | Notice
Progress = Callable[[Event], None]
