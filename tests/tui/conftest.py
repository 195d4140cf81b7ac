"""Fixtures for the TUI tests: real environments made with `cuenv create` (venv engine, warm cache),
a fixed fake machine (CUENV_DRIVER/CUENV_GPUS), and a helper that runs the app headless."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

pytest.importorskip("textual")

DRIVER = "550.54.14"
GPUS = "NVIDIA A100-SXM4-80GB"
# A CUDA 11.8 toolkit first on PATH: the detail pane shows that `use` drops it.
FIXED_PATH_HEAD = "/usr/local/cuda-11.8/bin"


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
    """Wait until every worker is done and the screen has caught up."""
    for _ in range(200):
        await pilot.pause()
        await app.workers.wait_for_complete()
        await pilot.pause()
        if not any(w.is_running for w in app.workers):
            break
    await pilot.pause(0.05)
