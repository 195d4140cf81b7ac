"""The accounting behind progress displays: what is being downloaded, how much, how fast, how long.

Pure: it reads the engines' progress events (cuenv.engines.events) and a clock; the CLI
(cuenv.cli.progress) and the TUI draw from it. uv reports a package when its download starts and
ends, with its size; cuenv's own downloads (rattler's archives) report every chunk. The rate counts
finished packages and arrived chunks since the first download began, so it is honest for both.
"""

from __future__ import annotations

import time
from typing import Callable, Final

from cuenv.engines.events import Chunk, Download, Downloaded, Event, Step

STEPS: Final = ("plan", "lock", "solve", "venv", "verify", "install", "link", "done")


# Plain classes (issue 26): every change and create draws progress, and a dataclass costs ~1 ms to make.
class Item:
    __slots__ = ("name", "size", "started", "arrived", "finished")

    def __init__(self, name: str, size: int | None, started: float, arrived: int = 0, finished: bool = False) -> None:
        self.name, self.size, self.started = name, size, started
        self.arrived = arrived  # bytes seen in chunks (0 for uv, which reports only start and end)
        self.finished = finished

    @property
    def done_bytes(self) -> int:
        return (self.size or self.arrived) if self.finished else self.arrived


class Transfers:
    def __init__(self, clock: Callable[[], float] = time.monotonic, started: float = 0.0) -> None:
        self.clock = clock
        self.started = started or clock()
        self.step = ""
        self.step_detail = ""
        self.expected: int | None = None  # the whole download of the solution, when every size is known
        self.packages = 0
        self.items: dict[str, Item] = {}
        self.first_download: float | None = None

    def update(self, event: Event) -> None:
        now = self.clock()
        if isinstance(event, (Download, Chunk, Downloaded)):
            item = self.items.get(event.package)
            if item is None:
                item = self.items[event.package] = Item(event.package, None if isinstance(event, Chunk) else event.size, now)
                self.first_download = self.first_download or now
            if isinstance(event, Download) and event.size:
                item.size = event.size
            elif isinstance(event, Chunk) and event.nbytes:
                item.arrived += event.nbytes
            elif isinstance(event, Downloaded):
                item.finished = True
                item.size = item.size or event.size or item.arrived or None
        elif isinstance(event, Step) and event.name in STEPS:
            self.step, self.step_detail = event.name, event.detail
            if event.name == "install":
                self.expected = event.nbytes
                self.packages = _count(event.detail)

    # -- what a display shows ------------------------------------------------------------------
    @property
    def elapsed(self) -> float:
        return self.clock() - self.started

    @property
    def done_bytes(self) -> int:
        return sum(i.done_bytes for i in self.items.values())

    @property
    def active(self) -> list[Item]:
        return [i for i in self.items.values() if not i.finished]

    @property
    def finished(self) -> list[Item]:
        return [i for i in self.items.values() if i.finished]

    def rate(self) -> float | None:
        """Bytes per second since the first download began; None before a second has passed."""
        if self.first_download is None:
            return None
        spent = self.clock() - self.first_download
        return self.done_bytes / spent if spent >= 1.0 and self.done_bytes else None

    def remaining(self) -> int | None:
        """Bytes still to come: the announced downloads not yet finished (uv announces each one)."""
        pending = [i.size - i.arrived for i in self.active if i.size]
        return sum(pending) if pending else None

    def eta(self) -> float | None:
        rate, left = self.rate(), self.remaining()
        return left / rate if rate and left else None


def _count(detail: str) -> int:
    head = detail.split(" ", 1)[0]
    return int(head) if head.isdigit() else 0


def human_bytes(n: int | float | None) -> str:
    """1536 -> '1.5 KiB'; binary units, like uv and pip."""
    if n is None:
        return "?"
    value = float(n)
    for unit in ("B", "KiB", "MiB", "GiB"):
        if value < 1024 or unit == "GiB":
            return f"{value:.0f} {unit}" if unit == "B" else f"{value:.1f} {unit}"
        value /= 1024
    return f"{value:.1f} GiB"  # pragma: no cover


def clock(seconds: float | None) -> str:
    """83.4 -> '1:23'; 3725 -> '1:02:05'."""
    if seconds is None:
        return "-:--"
    total = int(seconds)
    hours, rest = divmod(total, 3600)
    minutes, secs = divmod(rest, 60)
    return f"{hours}:{minutes:02d}:{secs:02d}" if hours else f"{minutes}:{secs:02d}"


def summary(t: Transfers) -> str:
    """'1.2 GiB of up to 5.8 GiB, 45.0 MiB/s, about 1:40 left' (the parts that are known)."""
    parts = [human_bytes(t.done_bytes) + (f" of up to {human_bytes(t.expected)}" if t.expected else "")]
    rate = t.rate()
    if rate:
        parts.append(f"{human_bytes(rate)}/s")
    eta = t.eta()
    if eta is not None:
        parts.append(f"about {clock(eta)} left")
    return ", ".join(parts)
