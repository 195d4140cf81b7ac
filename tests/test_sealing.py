"""The tests are sealed (issue 31 §10): every test's HOME, XDG_* and tool cache/config variables point into
its own folder, and a run that changes the user's real files fails."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests import sealing

HERE = Path(__file__).resolve().parent


def test_every_test_gets_its_own_home_xdg_and_tool_folders(isolated: Path):
    import pwd

    real_home = Path(pwd.getpwuid(os.getuid()).pw_dir)
    assert Path(os.environ["HOME"]) != real_home
    assert Path(os.environ["HOME"]).is_dir() and Path(os.environ["HOME"]).is_relative_to(isolated)
    for name in ("XDG_CONFIG_HOME", "XDG_CACHE_HOME", "XDG_DATA_HOME", "XDG_STATE_HOME", "XDG_RUNTIME_DIR", "XDG_CONFIG_DIRS"):
        assert Path(os.environ[name]).is_relative_to(isolated), name
    assert all(k in sealing.XDG_HOMES or k in ("XDG_RUNTIME_DIR", "XDG_CONFIG_DIRS", "XDG_DATA_DIRS")
               for k in os.environ if k.startswith("XDG_"))
    assert os.environ["UV_NO_CONFIG"] == "1" and "UV_CONFIG_FILE" not in os.environ
    assert os.environ["PIP_CONFIG_FILE"] == os.devnull
    for name in ("UV_CACHE_DIR", "PIP_CACHE_DIR", "CONDA_PKGS_DIRS", "CONDARC", "RATTLER_CACHE_DIR", "UV_PYTHON_INSTALL_DIR"):
        assert not Path(os.environ[name]).is_relative_to(real_home) or real_home == Path("/"), name


@pytest.fixture(scope="module")
def environ_outside_a_test() -> dict[str, str]:
    """What a module fixture sees: it runs before any test's own seal."""
    return dict(os.environ)


def test_module_and_session_fixtures_run_sealed_too(environ_outside_a_test: dict[str, str]):
    import pwd

    real_home = Path(pwd.getpwuid(os.getuid()).pw_dir)
    for name in ("HOME", *sealing.XDG_HOMES):
        path = Path(environ_outside_a_test[name])
        assert not path.is_relative_to(real_home) and "cuenv-session-" in str(path), (name, path)
    assert environ_outside_a_test["CUENV_HOME"] != os.environ["CUENV_HOME"]  # a test gets its own again


def test_init_fish_writes_into_the_tests_xdg_config(cli, isolated: Path):
    assert cli("init", "fish")[0] == 0
    assert (Path(os.environ["XDG_CONFIG_HOME"]) / "fish" / "config.fish").read_text().count("cuenv shell-init fish") == 1


def test_fingerprint_sees_added_changed_and_removed_files(tmp_path: Path):
    (tmp_path / "a").mkdir()
    (tmp_path / "a" / "f").write_text("1")
    (tmp_path / "gone").write_text("x")
    before = sealing.fingerprint([tmp_path / "a", tmp_path / "gone", tmp_path / "missing"])
    (tmp_path / "a" / "f").write_text("22")
    (tmp_path / "a" / "new").write_text("")
    (tmp_path / "gone").unlink()
    found = sealing.changes(before, sealing.fingerprint([tmp_path / "a", tmp_path / "gone", tmp_path / "missing"]))
    assert [line.split()[0] for line in found if not line.endswith(str(tmp_path / "a"))] == ["changed", "added", "removed"]
    assert f"added   {tmp_path / 'a' / 'new'}" in found and f"removed {tmp_path / 'gone'}" in found


def test_a_run_that_writes_into_the_real_home_fails(tmp_path: Path):
    """A child pytest run with this conftest, whose one test writes into the (stand-in) real ~/.config/fish."""
    suite = tmp_path / "suite"
    (suite / "tests").mkdir(parents=True)
    for name in ("__init__.py", "conftest.py", "sealing.py"):  # the package the conftest imports sealing from
        shutil.copy(HERE / name, suite / "tests" / name)
    real = tmp_path / "realhome"
    (real / ".config" / "fish").mkdir(parents=True)
    (real / ".config" / "fish" / "config.fish").write_text("set -x A 1\n")
    (suite / "tests" / "test_leak.py").write_text(
        "import os\n"
        "def test_clean(): open(os.path.join(os.environ['HOME'], 'ok'), 'w').close()\n"
        "def test_leak(): open(os.environ['LEAK_TO'], 'a').write('oops\\n')\n")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("XDG_", "PYTEST")) and k != "CUENV_TEST_SEAL"}
    env.update(HOME=str(real), PYTHONDONTWRITEBYTECODE="1")

    def run(leak_to: Path) -> subprocess.CompletedProcess[str]:
        return subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "--rootdir", str(suite),
                               "-c", os.devnull, "--basetemp", str(tmp_path / "base"), str(suite)],
                              env={**env, "LEAK_TO": str(leak_to)}, capture_output=True, text=True, timeout=120, cwd=suite)

    clean = run(tmp_path / "elsewhere.txt")
    assert clean.returncode == 0, clean.stdout + clean.stderr
    leaked = run(real / ".config" / "fish" / "config.fish")
    assert leaked.returncode == 1, leaked.stdout
    assert "The tests changed files outside their temporary folders:" in leaked.stdout
    assert f"changed {real / '.config' / 'fish' / 'config.fish'}" in leaked.stdout
