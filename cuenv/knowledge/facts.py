"""Three-valued facts: every lookup of the knowledge base answers yes, no or unknown, with its source.

A table that lists some builds of a release is not a listing of all of them: a build it does not
name is *unknown*, not absent. Only a source that rules a build out (no such CUDA release, a
vendor table that says so) makes it *no*. Pure; no I/O.
"""

from __future__ import annotations

from cuenv.plain import Plain

TYPE_CHECKING = False  # no `typing` at run time: `check` builds facts at start-up (issue 29)
if TYPE_CHECKING:
    from typing import Final, Literal

    State = Literal["yes", "no", "unknown"]

STATES: Final = ("yes", "no", "unknown")


class Fact(Plain):
    __slots__ = ("state", "why", "source")

    def __init__(self, state: State, why: str, source: str | None = None) -> None:
        if state not in STATES:
            raise ValueError(f"state must be one of {STATES}, not {state!r}")
        if state != "unknown" and not source:
            raise ValueError("a known fact names its source")
        self.state = state
        self.why = why  # one sentence a user can read: what cuenv knows, or what it does not
        self.source = source  # where the yes or the no was read; None for unknown

    @property
    def known(self) -> bool:
        return self.state != "unknown"


def yes(why: str, source: str) -> Fact:
    return Fact("yes", why, source)


def no(why: str, source: str) -> Fact:
    return Fact("no", why, source)


def unknown(why: str) -> Fact:
    return Fact("unknown", why)
