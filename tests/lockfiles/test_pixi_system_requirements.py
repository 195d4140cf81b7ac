"""A pixi project's `[system-requirements] cuda` is what pixi requires of the machine's driver before it installs
(held-out-15: CHTC's templates-GPUs asks for CUDA 12.9; driver 535 reports 12.2 and pixi stops there), read
from the manifest beside the lock, for the environment read."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from cuenv.knowledge.compat import system_requirement
from cuenv.lock.foreign.piximanifest import system_cuda
from cuenv.machine.model import Driver, Machine
from tests.lockfiles.test_projects import PIXI_PROJECT

FIXTURES = Path(__file__).resolve().parent / "foreign" / "fixtures"


@pytest.mark.parametrize("text, environment, expected", [
    ('[system-requirements]\ncuda = "12.9"\n', None, "12.9"),
    ('[system-requirements]\ncuda = "12"\n', "gpu", "12"),  # the default feature is in every environment
    ('[feature.gpu.system-requirements]\ncuda = "12.4"\n[environments]\ngpu = ["gpu"]\n', None, None),
    ('[feature.gpu.system-requirements]\ncuda = "12.4"\n[environments]\ngpu = ["gpu"]\n', "gpu", "12.4"),
    ('[system-requirements]\ncuda = "11.8"\n[feature.gpu.system-requirements]\ncuda = "12.4"\n'
     '[environments]\ndefault = {features = ["gpu"]}\n', None, "12.4"),  # the highest of the environment's
    ('[system-requirements]\ncuda = "12.9"\n[environments]\ncpu = {features = [], no-default-feature = true}\n',
     "cpu", None),
    ('[system-requirements]\nlibc = "2.28"\n', None, None),
    ("[system-requirements\n", None, None),  # broken TOML: the lock reader says what is wrong
])
def test_the_cuda_an_environment_requires_of_the_driver(text, environment, expected):
    found = system_cuda(text, name="pixi.toml", environment=environment)
    assert (found[0] if found else None) == expected
    if found:
        assert found[1].startswith("pixi.toml [") and f'cuda = "{expected}"' in found[1]


def test_a_pyproject_says_it_under_tool_pixi():
    text = '[project]\nname = "x"\n[tool.pixi.system-requirements]\ncuda = "12.1"\n'
    assert system_cuda(text, name="pyproject.toml") == ("12.1", 'pyproject.toml [tool.pixi.system-requirements] cuda = "12.1"')


@settings(max_examples=200, deadline=None)
@given(st.text(max_size=400))
def test_any_text_is_read_without_an_exception(text):
    found = system_cuda(text, name="pixi.toml", environment=None)
    assert found is None or found[0].replace(".", "").isdigit()


def _machine(version: str, cuda: str) -> Machine:
    return Machine(Driver(version, cuda, "nvidia-smi"))


def test_an_unmet_requirement_is_a_driver_error_and_a_met_one_is_nothing():
    unmet = system_requirement("12.9", 'pixi.toml [system-requirements] cuda = "12.9"', _machine("535.104.05", "12.2"))
    assert unmet is not None and (unmet.code, unmet.severity) == ("driver-too-old", "error")
    assert "supports CUDA 12.9 or newer" in unmet.message and "535.104.05" in unmet.message
    assert unmet.fix and unmet.fix.startswith("Install an NVIDIA driver >= 575")
    assert system_requirement("12.2", "x", _machine("535.104.05", "12.2")) is None
    assert system_requirement("12", "x", _machine("535.104.05", "12.2")) is None
    assert system_requirement("12.9", "x", Machine(None)) is None  # no driver: the stack's own check says so


def test_check_and_create_stop_where_pixi_would(cli, tmp_path: Path, monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "pixi.toml").write_text(PIXI_PROJECT.replace("tool.pixi.", "") + '\n[system-requirements]\ncuda = "12.8"\n')
    shutil.copy(FIXTURES / "gausstwin-v6.pixi.lock", tmp_path / "pixi.lock")
    code, out, err = cli("check", "pixi.toml", "--driver", "550.54.14", "--gpu", "A100")
    assert code == 1 and out.startswith("pixi.toml: does not run"), err
    assert 'pixi.toml [system-requirements] cuda = "12.8": pixi installs and runs the project only where' in out
    code, out, err = cli("check", "pixi.toml", "--driver", "570.86.10", "--gpu", "A100")  # reports CUDA 12.8
    assert code == 0 and out.startswith("pixi.toml: runs"), out + err
    code, out, err = cli("check", "pixi.lock", "--driver", "550.54.14", "--gpu", "A100")  # the lock alone: its packages
    assert code == 0, out + err
    code, out, err = cli("create", "--from-lock", "pixi.toml", "-n", "g", "--dry-run", "--target-driver", "550.54.14")
    assert code == 1 and "pixi installs and runs the project only where" in err and "--force" in err
    code, out, err = cli("create", "--from-lock", "pixi.toml", "-n", "g", "--dry-run", "--target-driver", "550.54.14",
                         "--force")
    assert code == 0, err
