"""An sdist-only package gets a real route (issue 25 §4): wheels stay the default, and `--allow-build NAME`
on `cuenv create -f/-r` builds NAME from its source distribution, saying that this runs its build code.
gym 0.26.2 is published only as an sdist (PyPI, the one network the suite uses)."""

from __future__ import annotations

import pytest


@pytest.fixture
def gym(work):
    (work / "requirements.txt").write_text("gym==0.26.2\n")
    return "requirements.txt"


FLAGS = ("--cuda", "12.1", "--engine", "venv", "--target-driver", "535.104.05", "--dry-run")


@pytest.mark.network
def test_an_sdist_only_package_is_refused_with_the_flag_that_builds_it(cli, gym):
    code, out, err = cli("create", "-r", gym, "-n", "g", *FLAGS)
    assert code != 0 and "gym publishes no wheel" in err
    assert "--allow-build gym (that runs its build code on this machine)" in err


@pytest.mark.network
def test_allow_build_plans_the_sdist_and_says_it_runs_its_build_code(cli, gym):
    code, out, err = cli("create", "-r", gym, "-n", "g", *FLAGS, "--allow-build", "gym")
    assert code == 0, err
    assert "gym is built from its source distribution (--allow-build): that runs gym's build code" in err + out
    assert "gym 0.26.2" in out and "Would create 'g'" in out


def test_allow_build_goes_with_a_project_file_and_a_package_name(cli, work):
    code, out, err = cli("create", "torch-cu121", "--allow-build", "gym", "--dry-run")
    assert code == 2 and "--allow-build goes with -f or -r." in err
    (work / "requirements.txt").write_text("numpy==2.0.0\n")
    code, out, err = cli("create", "-r", "requirements.txt", "--cuda", "12.1", "--allow-build=../x", "-n", "x", "--dry-run")
    assert code == 2 and "is not a package name" in err


@pytest.mark.slow
@pytest.mark.network
def test_allow_build_really_builds_and_installs_it(cli, gym, envs):
    code, out, err = cli("create", "-r", gym, "-n", "g", *FLAGS[:-1], "--allow-build", "gym")
    assert code == 0, err
    assert next((envs / "g" / "lib").glob("python3.*/site-packages/gym/__init__.py"))
