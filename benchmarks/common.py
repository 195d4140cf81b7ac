"""Helpers shared by the benchmarks: median wall time of a command, run side by side."""

from __future__ import annotations

import os
import statistics
import subprocess
import time
from typing import Mapping, Sequence


def as_users_run(env: Mapping[str, str]) -> dict[str, str]:
    """``env`` as a user's shell has it: Python writes its bytecode (and cuenv its parsed data files,
    cuenv.shipped) on the first run. With PYTHONDONTWRITEBYTECODE set, as on some build machines,
    every changed module is compiled again on every run and the figures measure that instead."""
    return {k: v for k, v in env.items() if k != "PYTHONDONTWRITEBYTECODE"}


def median_ms(argv: Sequence[str], *, runs: int = 21, env: Mapping[str, str] | None = None, warmup: int = 3) -> float:
    """Median wall time of ``argv`` after ``warmup`` runs (which write the bytecode, as a first run does)."""
    env = as_users_run(os.environ if env is None else env)
    for _ in range(warmup):
        subprocess.run(argv, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)
    times = []
    for _ in range(runs):
        t0 = time.perf_counter()
        subprocess.run(argv, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)
        times.append((time.perf_counter() - t0) * 1000)
    return statistics.median(times)


def report(title: str, rows: Sequence[tuple[str, float]], baseline: str) -> str:
    base = dict(rows)[baseline]
    lines = [title, f"{'command':<44} {'median ms':>10} {'ratio':>7}"]
    for label, ms in rows:
        lines.append(f"{label:<44} {ms:>10.1f} {ms / base:>7.2f}x")
    return "\n".join(lines)
