"""Shared fixtures: every test gets its own CUENV_HOME, cache and config (STYLE.md §10)."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption("--run-slow", action="store_true", help="run tests marked slow (full framework installs)")


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    if config.getoption("--run-slow"):
        return
    skip = pytest.mark.skip(reason="slow: run with --run-slow")
    for item in items:
        if "slow" in item.keywords:
            item.add_marker(skip)


@pytest.fixture(autouse=True)
def isolated(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Point every cuenv location at a fresh folder and drop machine overrides from the caller."""
    root = tmp_path_factory.mktemp("cuenv")
    monkeypatch.setenv("CUENV_HOME", str(root / "home"))
    monkeypatch.setenv("CUENV_CONFIG", str(root / "config.yaml"))
    # One shared cache for the whole run keeps real downloads (uv, rattler) warm across tests.
    monkeypatch.setenv("CUENV_CACHE_DIR", os.environ.get("CUENV_TEST_CACHE", str(REPO / ".test-cache")))
    for name in ("CUENV_DRIVER", "CUENV_GPUS", "CONDA_OVERRIDE_CUDA", "CUENV_ACTIVE", "CUENV_ENGINE", "CUENV_RECIPES",
                 "CUENV_MIRRORS", "CUENV_FRAMEWORK_INDEX"):
        monkeypatch.delenv(name, raising=False)
    # The machine's own uv/pip/conda mirrors stay out of tests (tests that want them pass them in).
    monkeypatch.setenv("CUENV_MIRRORS_FROM_TOOLS", "0")
    return root


@pytest.fixture
def cli(capsys: pytest.CaptureFixture[str]):
    """Run cuenv in-process: returns (exit code, stdout, stderr)."""
    from cuenv.cli.main import main

    def invoke(*argv: str, environ: dict[str, str] | None = None) -> tuple[int, str, str]:
        code = main(list(argv), environ=dict(os.environ) if environ is None else environ)
        out, err = capsys.readouterr()
        return code, out, err

    return invoke


@pytest.fixture
def cuenv_exe() -> list[str]:
    """The real command line, for tests that need a separate process."""
    return [sys.executable, "-m", "cuenv"]


@pytest.fixture
def work(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A project folder as the current directory (where cuenv.lock lands)."""
    path = tmp_path / "project"
    path.mkdir()
    monkeypatch.chdir(path)
    return path


@pytest.fixture
def envs() -> Path:
    """The environments folder of the test's CUENV_HOME."""
    return Path(os.environ["CUENV_HOME"]) / "envs"
