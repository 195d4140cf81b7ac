"""A real terminal: `cuenv tui` run through the bash hook inside tmux, driven with send-keys.

Navigate, create two environments with the real pipeline, remove one, then `u`: the app exits and
the hook activates the choice in the calling shell. capture-pane reads the screen at each step.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
pytestmark = pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed")


class Tmux:
    def __init__(self, name: str, socket: Path) -> None:
        self.name, self.base = name, ["tmux", "-S", str(socket)]

    def __call__(self, *args: str) -> str:
        return subprocess.run(self.base + list(args), capture_output=True, text=True, check=True).stdout

    def keys(self, *keys: str) -> None:
        self("send-keys", "-t", self.name, *keys)

    def screen(self) -> str:
        return self("capture-pane", "-p", "-t", self.name)

    def wait(self, *texts: str, gone: str | None = None, row: str | None = None, no_row: str | None = None,
             timeout: float = 60) -> str:
        """Poll the screen until it shows every text (and not ``gone``); ``row``/``no_row``: a table
        row starting with that name is there / is not (a log line that names it does not count)."""
        end = time.monotonic() + timeout
        while True:
            screen = self.screen()
            rows = {w[0] for w in map(str.split, screen.splitlines()) if len(w) > 2 and w[2] != "|"}  # not the pane's
            if (all(t in screen for t in texts) and (gone is None or gone not in screen)
                    and (row is None or row in rows) and (no_row is None or no_row not in rows)):
                return screen
            if time.monotonic() > end:
                raise AssertionError(f"waited for {texts} (gone: {gone}, row: {row}, no row: {no_row}); "
                                     f"the screen is:\n{screen}")
            time.sleep(0.1)


@pytest.fixture
def tmux(environ: dict[str, str], tmp_path: Path):
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "cuenv").write_text(f'#!/bin/sh\nPYTHONPATH={REPO} exec {sys.executable} -m cuenv "$@"\n')
    (bin_dir / "cuenv").chmod(0o755)
    env = {k: v for k, v in environ.items() if not k.startswith(("TMUX", "PYTEST"))}
    env.update(PATH=f"{bin_dir}:{environ['PATH']}", TERM="xterm-256color", HOME=str(tmp_path), PS1="$ ",
               TMPDIR=str(tmp_path))
    t = Tmux("tui", tmp_path / "tmux.sock")
    subprocess.run(t.base + ["new-session", "-d", "-s", t.name, "-x", "100", "-y", "30",
                             "bash --norc --noprofile"], env=env, check=True)
    try:
        yield t
    finally:
        subprocess.run(t.base + ["kill-server"], capture_output=True)


def _create(tmux: Tmux, name: str | None) -> None:
    tmux.keys("c")
    tmux.wait("Create an environment from cuda-12.1")
    if name:
        tmux.keys(name)  # the name field starts selected: typing replaces it
    tmux.keys("Enter")
    tmux.wait(f"created {name or 'cuda-12.1'}", timeout=120)


def test_navigate_create_remove_and_use_through_the_hook(tmux: Tmux, environ: dict[str, str]):
    tmux.keys('eval "$(cuenv shell-init bash)"', "Enter")
    tmux.keys("cuenv tui", "Enter")
    # Readiness: the first frame is painted. The keys are the table's from that frame on (one `2`,
    # never retried: a key that misses is a bug of the app, not slowness of the test).
    tmux.wait("1 Environments", "q Quit", "? Help")
    tmux.keys("2")
    screen = tmux.wait("This machine", "warning (minor-compat)")  # cuda-12.8 on driver 550 (the 13.x rows are below)
    assert "driver 550.54.14 | CUDA <= 12.4" in screen
    tmux.keys("Down")
    tmux.wait("cuda-12.1: CUDA 12.1 runtime")
    _create(tmux, None)
    _create(tmux, "scratch")
    tmux.keys("1")
    tmux.wait(row="scratch")  # the refreshed table: before it, Down has nowhere to go
    tmux.keys("Down")
    tmux.wait("scratch  cuda-12.1 | venv")  # the detail pane follows the cursor
    tmux.keys("x")
    tmux.wait("Remove environment scratch")
    tmux.keys("Left", "Enter")  # the Remove button: no letter says yes
    tmux.wait("Removed scratch.", no_row="scratch")
    envs = Path(environ["CUENV_HOME"]) / "envs"
    assert not (envs / "scratch").exists() and (envs / "cuda-12.1" / ".cuenv" / "complete").exists()
    tmux.keys("Enter")  # use: on enter, never on a letter
    tmux.wait("(cuda-12.1) ", gone="q Quit")  # the prompt marker of the activated environment
    tmux.keys("clear; echo \"ACTIVE=$CUENV_ACTIVE ptxas=$(command -v ptxas)\"", "Enter")
    screen = tmux.wait("ACTIVE=cuda-12.1 ptxas=")
    assert "/envs/cuda-12.1/" in screen.split("ACTIVE=cuda-12.1 ptxas=")[1]
