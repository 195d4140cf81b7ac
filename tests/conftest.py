"""Shared fixtures: every test gets its own CUENV_HOME, cache and config (STYLE.md §10)."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

from tests import sealing

_WATCH: dict[str, list[Path]] = {}  # "paths", "canary": what the run watches
_BEFORE: dict[str, tuple[int, int, int]] = {}
_SESSION: list[tuple[pytest.MonkeyPatch, Path]] = []  # the whole run's seal, undone at the end


def pytest_configure(config: pytest.Config) -> None:
    """Before any test: a picture of the user's real files (and a fresh canary folder) to compare at the end;
    then the whole run is sealed, so that what runs outside a test (a module or session fixture, a
    plugin) reads and writes under a folder of the run's too, never the user's HOME or XDG folders."""
    import tempfile

    if not hasattr(config, "workerinput"):  # an xdist worker: the controller watches the whole run
        canary = Path(tempfile.mkdtemp(prefix="cuenv-canary-"))
        sealing.make_canary(canary)
        paths = [*sealing.watched(Path(os.path.expanduser("~")), os.environ), canary]
        _WATCH.update(paths=paths, canary=[canary])
        _BEFORE.update(sealing.fingerprint(paths))
    root = Path(tempfile.mkdtemp(prefix="cuenv-session-"))
    monkeypatch = pytest.MonkeyPatch()
    sealing.seal(monkeypatch, root)
    _SESSION.append((monkeypatch, root))


def pytest_unconfigure(config: pytest.Config) -> None:
    import shutil

    while _SESSION:
        monkeypatch, root = _SESSION.pop()
        monkeypatch.undo()
        shutil.rmtree(root, ignore_errors=True)


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    """Fail the run when anything outside the tests' temporary folders changed (issue 31 §10)."""
    if "paths" not in _WATCH:
        return
    import shutil

    found = sealing.changes(_BEFORE, sealing.fingerprint(_WATCH["paths"]))
    shutil.rmtree(_WATCH["canary"][0], ignore_errors=True)
    _WATCH.clear()
    _BEFORE.clear()
    if found:
        reporter = session.config.pluginmanager.get_plugin("terminalreporter")
        lines = ["The tests changed files outside their temporary folders:", *found[:50],
                 "(On a shared machine another process may have written them; CUENV_TEST_SEAL=warn reports without failing.)"]
        if reporter is not None:
            reporter.write_sep("!", "files outside the tests' folders changed", red=True)
            for line in lines:
                reporter.write_line(line)
        else:
            print("\n".join(lines), file=sys.stderr)
        if os.environ.get("CUENV_TEST_SEAL") != "warn":
            session.exitstatus = pytest.ExitCode.TESTS_FAILED


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption("--run-slow", action="store_true", help="run tests marked slow (full framework installs)")
    parser.addoption("--run-freshness", action="store_true", help="run tests marked freshness (PyPI shipped nothing new)")


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    for marker, option in (("slow", "--run-slow"), ("freshness", "--run-freshness")):
        if config.getoption(option):
            continue
        skip = pytest.mark.skip(reason=f"{marker}: run with {option}")
        for item in items:
            if marker in item.keywords:
                item.add_marker(skip)


@pytest.fixture(autouse=True)
def isolated(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Point every cuenv location at a fresh folder and drop machine overrides from the caller.

    HOME, every XDG_* variable and uv's, pip's and conda's cache and config variables point into the
    test's folder (or the run's shared package cache): tests/sealing.py lists them."""
    root = tmp_path_factory.mktemp("cuenv")
    sealing.seal(monkeypatch, root)
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
