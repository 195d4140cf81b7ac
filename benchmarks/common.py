"""Helpers shared by the benchmarks: paired timing of whole commands (issue 29).

A baseline measured at another moment than the command it is compared with inflates or flatters
every ratio on a shared machine. So each comparison here runs its two sides as interleaved pairs
(A B A B ...), takes the ratio within each pair, and reports the median of those ratios with its
minimum and maximum, and the machine's load average before and after.
"""

from __future__ import annotations

import os
import statistics
import subprocess
import time
from dataclasses import dataclass
from typing import Callable, Mapping, Sequence


def as_users_run(env: Mapping[str, str]) -> dict[str, str]:
    """``env`` as a user's shell has it: Python writes its bytecode (and cuenv its parsed data files,
    cuenv.shipped) on the first run. With PYTHONDONTWRITEBYTECODE set, as on some build machines,
    every changed module is compiled again on every run and the figures measure that instead."""
    return {k: v for k, v in env.items() if k != "PYTHONDONTWRITEBYTECODE"}


def with_pip(requirements: str, cache_dir: str) -> str | None:
    """``requirements`` plus the pip wheel cuenv seeds every venv with (by URL and hash, as cuenv's cache
    keeps it), for a yardstick that installs pip too; None where no pin is kept yet."""
    import glob
    import json

    kept = sorted(glob.glob(os.path.join(cache_dir, "solves", "installer-*.json")))
    if not kept:
        return None
    with open(kept[0], encoding="utf-8") as fh:
        pin = json.load(fh)
    return requirements + f"pip @ {pin['url']} --hash=sha256:{pin['sha256']}\n"


def load() -> str:
    """The 1-, 5- and 15-minute load averages, as the docs' tables record them."""
    try:
        one, five, fifteen = os.getloadavg()
    except OSError:  # not every platform has it
        return "n/a"
    return f"{one:.2f} {five:.2f} {fifteen:.2f}"


class Ms(float):
    """A wall time in milliseconds that also carries the run's CPU time (``cpu``: user + sys of the
    process and every child it waited for, in ms). On a busy shared machine wall time waits for a core;
    CPU time much less so, so the tables give both ratios."""

    cpu: float | None = None


def time_command(argv: Sequence[str], env: Mapping[str, str] | None = None) -> Ms:
    """Wall (and CPU) time of one run of ``argv`` in milliseconds, its output discarded."""
    t0 = time.perf_counter()
    proc = subprocess.Popen(argv, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    _, _, usage = os.wait4(proc.pid, 0)
    out = Ms((time.perf_counter() - t0) * 1000)
    out.cpu = (usage.ru_utime + usage.ru_stime) * 1000
    proc.returncode = 0  # reaped above: Popen must not wait for it again
    return out


@dataclass(frozen=True)
class Paired:
    """A against B over interleaved pairs: medians of each side and of the per-pair ratio A/B."""

    label: str
    baseline: str
    a_ms: tuple[float, ...]
    b_ms: tuple[float, ...]
    load_before: str
    load_after: str
    a_cpu: tuple[float, ...] = ()  # CPU ms of each run, where the sides measured it (time_command does)
    b_cpu: tuple[float, ...] = ()

    @property
    def ratios(self) -> list[float]:
        return [a / b for a, b in zip(self.a_ms, self.b_ms)]

    @property
    def cpu_ratios(self) -> list[float]:
        return [a / b for a, b in zip(self.a_cpu, self.b_cpu) if b > 0]

    @property
    def ratio(self) -> float:
        return statistics.median(self.ratios)

    def line(self) -> str:
        r, c = self.ratios, self.cpu_ratios
        cpu = f"  cpu {statistics.median(c):.2f}x [{min(c):.2f}-{max(c):.2f}]" if c else ""
        return (f"{self.label:<40} {statistics.median(self.a_ms):>9.1f} {statistics.median(self.b_ms):>9.1f}"
                f"  {self.ratio:>5.2f}x [{min(r):.2f}-{max(r):.2f}]{cpu}  n={len(r)} load {self.load_before} -> {self.load_after}")


HEADER = f"{'A (against B)':<40} {'A ms':>9} {'B ms':>9}  {'median A/B':>10} [min-max]  cpu median A/B [min-max]"


def paired(label: str, a: Callable[[], float], b: Callable[[], float], *, pairs: int, baseline: str, warmup: int = 2) -> Paired:
    """Run ``a`` and ``b`` as ``pairs`` interleaved pairs, alternating which goes first (so neither
    always runs on a cache the other just warmed); each returns its own wall time in ms."""
    for _ in range(warmup):
        a(), b()
    before = load()
    a_ms: list[float] = []
    b_ms: list[float] = []
    a_cpu: list[float | None] = []
    b_cpu: list[float | None] = []
    for i in range(pairs):
        if i % 2:
            tb = b()
            ta = a()
        else:
            ta = a()
            tb = b()
        a_ms.append(ta)
        b_ms.append(tb)
        a_cpu.append(getattr(ta, "cpu", None))
        b_cpu.append(getattr(tb, "cpu", None))
    cpus = all(x is not None for x in a_cpu + b_cpu)
    return Paired(label, baseline, tuple(a_ms), tuple(b_ms), before, load(),
                  tuple(a_cpu) if cpus else (), tuple(b_cpu) if cpus else ())  # type: ignore[arg-type]  # None-free when cpus


def paired_commands(label: str, a: Sequence[str], b: Sequence[str], *, pairs: int, env: Mapping[str, str] | None = None,
                    baseline: str = "") -> Paired:
    """Two whole commands timed as interleaved pairs, as a user's shell runs them."""
    run_env = as_users_run(os.environ if env is None else env)
    return paired(label, lambda: time_command(a, run_env), lambda: time_command(b, run_env), pairs=pairs,
                  baseline=baseline or " ".join(b))
