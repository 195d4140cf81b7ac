"""Three-valued facts: every lookup of the knowledge base answers yes, no or unknown, with its source.

A table that lists some builds of a release is not a listing of all of them: a build it does not
name is *unknown*, not absent. Only a source that rules a build out (no such CUDA release, a
vendor table that says so) makes it *no*. Pure; no I/O.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final, Literal

State = Literal["yes", "no", "unknown"]
STATES: Final = ("yes", "no", "unknown")


@dataclass(frozen=True)
class Fact:
    state: State
    why: str  # one sentence a user can read: what cuenv knows, or what it does not
    source: str | None = None  # where the yes or the no was read; None for unknown

    def __post_init__(self) -> None:
        if self.state not in STATES:
            raise ValueError(f"state must be one of {STATES}, not {self.state!r}")
        if self.state != "unknown" and not self.source:
            raise ValueError("a known fact names its source")

    @property
    def known(self) -> bool:
        return self.state != "unknown"


def yes(why: str, source: str) -> Fact:
    return Fact("yes", why, source)


def no(why: str, source: str) -> Fact:
    return Fact("no", why, source)


def unknown(why: str) -> Fact:
    return Fact("unknown", why)
