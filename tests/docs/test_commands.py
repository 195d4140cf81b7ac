"""Every command shown in a ```console block of the docs runs here, in a real bash (tests/docs/consoledoc.py
has the convention: which lines are commands, how output is compared, how a block says it needs a GPU,
PyPI, a long download or other hosts)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from . import consoledoc

REPO = Path(__file__).resolve().parents[2]
DOCS = REPO / "docs"
PAGES = sorted(p for p in DOCS.rglob("*.md") if consoledoc.parse_page(p).blocks)


def _has_gpu() -> bool:
    """A real driver and GPU here (the device machine), detected without any override."""
    env = {k: v for k, v in os.environ.items() if k not in ("CUENV_DRIVER", "CUENV_GPUS", "CONDA_OVERRIDE_CUDA")}
    done = subprocess.run([sys.executable, "-m", "cuenv", "info", "--json"], capture_output=True, text=True,
                          env=dict(env, PYTHONPATH=str(REPO)), timeout=120)
    if done.returncode != 0:
        return False
    data = json.loads(done.stdout)
    return bool(data.get("driver")) and bool(data.get("gpus"))


def _params():
    for path in PAGES:
        marks = [pytest.mark.network] if "network" in consoledoc.parse_page(path).needs else []
        yield pytest.param(path, id=path.relative_to(DOCS).as_posix(), marks=marks)


def _skipped(block: consoledoc.Block, config: pytest.Config, gpu: bool) -> str | None:
    if "gpu" in block.needs and not gpu:
        return "needs a GPU"
    if "slow" in block.needs and not config.getoption("--run-slow"):
        return "slow (run with --run-slow)"
    if "internet" in block.needs and os.environ.get("CUENV_DOCS_INTERNET") != "1":
        return "needs hosts other than PyPI (set CUENV_DOCS_INTERNET=1)"
    return None


@pytest.fixture(scope="session")
def gpu_here() -> bool:
    return _has_gpu()


def _bin(tmp: Path) -> Path:
    """A `cuenv` on PATH that runs this checkout, as an installed console script would."""
    folder = tmp / "bin"
    folder.mkdir()
    exe = folder / "cuenv"
    exe.write_text(f'#!/bin/sh\nPYTHONPATH={REPO} exec {sys.executable} -m cuenv "$@"\n')
    exe.chmod(0o755)
    return folder


@pytest.mark.parametrize("path", list(_params()))
def test_console_blocks_run(path: Path, tmp_path: Path, request: pytest.FixtureRequest, gpu_here: bool) -> None:
    page = consoledoc.parse_page(path)
    runnable = [b for b in page.blocks if _skipped(b, request.config, gpu_here) is None]
    if not runnable:
        pytest.skip("every block on this page needs something this machine lacks")
    home, work, out = tmp_path / "home", tmp_path / "work", tmp_path / "out"
    for d in (home, work, out):
        d.mkdir()
    env = {k: v for k, v in os.environ.items() if not k.startswith(("CUENV_", "XDG_", "CONDA_OVERRIDE")) and k != "PYTHONPATH"}
    env.update(
        HOME=str(home), PATH=f"{_bin(tmp_path)}:{os.environ['PATH']}", PYTHONUNBUFFERED="1", TERM="dumb",
        COLUMNS="100", REPO_DIR=str(REPO), DOCS_DIR=str(DOCS),
        # the uv / rattler caches stay shared with the rest of the suite (warm downloads); the rest is fresh
        CUENV_CACHE_DIR=os.environ.get("CUENV_CACHE_DIR", str(REPO / ".test-cache")),
    )
    text = consoledoc.script(page, runnable, out)
    done = subprocess.run(["bash", "--norc", "--noprofile", "-c", text], cwd=work, env=env, capture_output=True,
                          text=True, timeout=900)
    problems = []
    commands = [c for b in runnable for c in b.commands]
    for n, command in enumerate(commands):
        where = f"{path.relative_to(REPO)}:{command.line}: $ {command.text.splitlines()[0]}"
        rc_file = out / f"{n}.rc"
        if not rc_file.exists():
            problems.append(f"{where}: did not run (the page's shell ended early: {done.stderr[-400:]})")
            break
        actual = (out / f"{n}.out").read_text(errors="replace")
        rc = int(rc_file.read_text())
        want = consoledoc.expected_status(tuple(commands), n)
        if want is not None and rc != want:
            problems.append(f"{where}: exit status {rc}, the page expects {want}\n{actual[-1500:]}")
            continue
        missing = consoledoc.output_mismatch(command.output, actual)
        if missing is not None:
            problems.append(f"{where}: the page shows {missing.strip()!r}, not printed:\n{actual[-1500:]}")
    assert not problems, "\n\n".join(problems)


def test_pages_with_commands_are_found() -> None:
    names = {p.relative_to(DOCS).as_posix() for p in PAGES}
    assert {"getting-started/index.md", "guides/workstation.md", "guides/ci.md", "reference/configuration.md"} <= names
