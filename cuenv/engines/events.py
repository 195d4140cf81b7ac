"""Progress events as typed values (issue 24 §5): what an engine, a create or a change reports while it works.

The engines and cuenv.envs emit them through a ``Progress`` callback; cuenv.engines.progress.Transfers keeps
the accounting, and the CLI (cuenv.cli.progress) and the TUI draw them, each in its own words. Plain classes
(cuenv.plain): every create and change imports them, and a dataclass costs about a millisecond to build (issue 29).
"""

from __future__ import annotations

from collections.abc import Callable

from cuenv.plain import Plain


def package_count(count: int) -> str:
    """``count`` packages, as a step's detail says it ("1 package", "3 packages")."""
    return f"{count} package" + ("" if count == 1 else "s")


class Step(Plain):
    """A stage of the work begins, with what it works on: plan, lock, mirror, solve, route, venv, verify, remove,
    install, link, done (the ones a display counts are cuenv.engines.progress.STEPS)."""

    __slots__ = ("name", "detail", "nbytes")

    def __init__(self, name: str, detail: str = "", nbytes: int | None = None) -> None:
        self.name, self.detail = name, detail
        self.nbytes = nbytes  # install: the whole download, when every size is known


class Download(Plain):
    """A package's download began."""

    __slots__ = ("package", "size")

    def __init__(self, package: str, size: int | None = None) -> None:
        self.package, self.size = package, size


class Chunk(Plain):
    """More of a package arrived (cuenv's own downloads; uv reports only start and end)."""

    __slots__ = ("package", "nbytes")

    def __init__(self, package: str, nbytes: int) -> None:
        self.package, self.nbytes = package, nbytes


class Downloaded(Plain):
    """A package's download finished."""

    __slots__ = ("package", "size")

    def __init__(self, package: str, size: int | None = None) -> None:
        self.package, self.size = package, size


class Output(Plain):
    """A line the engine's tool printed (shown with -v)."""

    __slots__ = ("line",)

    def __init__(self, line: str) -> None:
        self.line = line


class Tick(Plain):
    """Nothing new: a moment to cancel (a running tool is polled about once a second)."""

    __slots__ = ()


class Notice(Plain):
    """A warning said before the work starts (what the check found, how a file was read)."""

    __slots__ = ("text",)

    def __init__(self, text: str) -> None:
        self.text = text


Event = Step | Download | Chunk | Downloaded | Output | Tick | Notice
Progress = Callable[[Event], None]
