"""Fixtures for the TUI tests: real environments made with `cuenv create` (venv engine, warm cache),
a fixed fake machine (CUENV_DRIVER/CUENV_GPUS), and a helper that runs the app headless."""

from __future__ import annotations

import os
import shutil
import time
from pathlib import Path

import pytest

pytest.importorskip("textual")

DRIVER = "550.54.14"
GPUS = "NVIDIA A100-SXM4-80GB"
# A CUDA 11.8 toolkit first on PATH: the detail pane shows that `use` drops it.
FIXED_PATH_HEAD = "/usr/local/cuda-11.8/bin"


@pytest.fixture(autouse=True)
def _quick_idle(monkeypatch: pytest.MonkeyPatch) -> None:
    """Textual's Pilot polls for an idle process in 20 ms sleeps: most of a key's time in these tests,
    whose settle() waits on the workers themselves. Polled every 5 ms, with the same idle ratio."""
    from textual import _wait

    monkeypatch.setattr(_wait, "SLEEP_GRANULARITY", 1 / 200)
    monkeypatch.setattr(_wait, "SLEEP_IDLE", 1 / 200 / 20)


@pytest.fixture
def environ(isolated: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, str]:
    monkeypatch.setenv("CUENV_DRIVER", DRIVER)
    monkeypatch.setenv("CUENV_GPUS", GPUS)
    env = dict(os.environ)
    env["PATH"] = FIXED_PATH_HEAD + ":" + env.get("PATH", "/usr/bin:/bin")
    return env


@pytest.fixture
def settings(environ: dict[str, str]):
    from cuenv import config

    return config.resolve({}, environ)


@pytest.fixture
def make_env(environ: dict[str, str]):
    """Create a real environment with `cuenv create` (venv engine: uv and NVIDIA's wheels)."""
    from cuenv.cli.main import main

    def make(name: str, recipe: str = "cuda-12.1") -> Path:
        code = main(["create", recipe, "-n", name, "--engine", "venv", "-q"], environ=environ)
        assert code == 0, f"cuenv create {recipe} -n {name} failed"
        return Path(environ["CUENV_HOME"]) / "envs" / name

    return make


@pytest.fixture
def services(settings, environ):
    from cuenv.tui.services import Services

    return Services(settings, environ)


def make_incomplete(envs: Path, name: str, template: Path) -> Path:
    """What a create killed with -9 leaves: the prefix and metadata, but no completion marker."""
    dest = envs / name
    shutil.copytree(template / ".cuenv", dest / ".cuenv")
    (dest / ".cuenv" / "complete").unlink()
    return dest


async def settle(pilot, app) -> None:
    """Wait until no worker is pending or running and the screen has caught up.

    Waits on the workers themselves, not on a clock, so a loaded machine only makes it slower. A
    worker cancelled by a newer one of its exclusive group (moving the cursor fast) is normal; a
    worker that failed is re-raised (Textual's WorkerFailed).
    """
    from textual.lazy import Lazy
    from textual.worker import WorkerCancelled, WorkerState

    quiet = 0
    for _ in range(10_000):  # each round waits for a worker to end or finds none: never a clock
        await pilot.pause()
        busy = [w for w in app.workers if w.state in (WorkerState.PENDING, WorkerState.RUNNING)]
        if not busy and any(s.query(Lazy) for s in app.screen_stack):  # a tab mounted after the first frame: not yet
            quiet = 0
            continue
        if not busy:
            quiet += 1
            if quiet == 2:  # nothing new was started by the last messages either
                # A scroll is animated: on a loaded machine it is still moving after the messages.
                await pilot.wait_for_scheduled_animations()
                return
            continue
        quiet = 0
        for worker in busy:
            if worker.state is WorkerState.RUNNING:
                try:
                    await worker.wait()
                except WorkerCancelled:
                    pass
    raise AssertionError(f"workers never settled: {[w.name for w in app.workers]}")


async def until(pilot, condition, what: str, *, seconds: float = 600.0) -> None:
    """Wait for ``condition()`` (a create's step, a modal), checking between Textual's messages.

    ``seconds`` only bounds a hang (a condition that never comes fails with ``what``); it is no
    measure of speed, so a loaded machine does not fail the test.
    """
    deadline = time.monotonic() + seconds
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"{what}: not reached in {seconds:.0f} s")
        await pilot.pause(0.05)
