"""A machine without a GPU is a first-class place to use cuenv (issue 30 §4): it says once that it
cannot judge, names the target machine to judge for, and every hint it prints runs as written."""

from __future__ import annotations

import json
import shlex

import pytest

from cuenv.envs import verdict
from cuenv.knowledge.findings import Finding
from cuenv.machine.model import Driver, Gpu, Machine
from cuenv.machine.overrides import for_target

NO_DRIVER = Finding("no-driver", "error", "No NVIDIA driver was found; x needs a driver >= 525.60.13.", "Install ...")
TOO_OLD = Finding("driver-too-old", "error", "x needs a driver >= 525.60.13.", "Install ...")
JIT = Finding("arch-ptx-jit", "warning", "JIT", None)


@pytest.fixture
def no_driver(monkeypatch):
    monkeypatch.setenv("CUENV_DRIVER", "none")
    monkeypatch.setenv("CUENV_GPUS", "none")


def _hinted(text: str) -> list[str]:
    """The commands a line names in backquotes."""
    return [part for i, part in enumerate(text.split("`")) if i % 2]


def test_no_gpu_here_is_one_line_and_still_an_error_for_strict() -> None:
    assert verdict.no_gpu_here([NO_DRIVER])
    assert verdict.no_gpu_here([NO_DRIVER, Finding("no-gpu", "error", "m")])
    assert not verdict.no_gpu_here([NO_DRIVER, TOO_OLD]) and not verdict.no_gpu_here([JIT]) and not verdict.no_gpu_here([])
    lines = verdict.lines_for([NO_DRIVER])
    said = verdict.notices([NO_DRIVER])
    assert len(lines) == 1 and lines[0].startswith("error: no NVIDIA driver here") and verdict.has_error(said)
    assert len(verdict.lines_for([TOO_OLD])) == 2  # a real problem keeps its error and its hint


def test_the_target_machine_applies_only_where_no_driver_is_found() -> None:
    target = {"CUENV_TARGET_DRIVER": "550.54.14", "CUENV_TARGET_GPUS": "NVIDIA A100-SXM4-80GB"}
    bare = Machine(driver=None)
    judged = for_target(bare, target)
    assert judged.driver is not None and judged.driver.version == "550.54.14" and judged.driver.source == "target"
    assert [g.compute_capability for g in judged.gpus] == ["8.0"]
    assert "no GPU here: judged for the target machine" in judged.notes[-1]
    gpu_node = Machine(driver=Driver("535.104.05", "12.2", "nvml"), gpus=(Gpu(0, "H100", "9.0"),))
    assert for_target(gpu_node, target) == gpu_node  # a GPU node judges itself, with the same rc file
    assert for_target(bare, {**target, "CUENV_DRIVER": "none"}) == bare  # planning without a driver is explicit
    assert for_target(bare, {}) == bare


def test_a_bad_target_is_a_clear_error() -> None:
    from cuenv.errors import UsageError
    from cuenv.machine.overrides import read_target

    with pytest.raises(UsageError, match="CUENV_TARGET_DRIVER='five-fifty' is not a driver version"):
        read_target({"CUENV_TARGET_DRIVER": "five-fifty"})


def test_check_says_unknown_and_its_hint_runs_as_written(cli, no_driver) -> None:
    code, out, _ = cli("check", "cuda-12.1")
    assert code == 1
    assert out.splitlines()[0] == "cuda-12.1: unknown: no NVIDIA driver here (describe the target machine with --driver and --gpu)"
    [fix] = [line for line in out.splitlines() if line.startswith("  fix: ")]
    [command] = _hinted(fix)
    assert command == "cuenv check cuda==12.1 --driver 530.30.02"
    code, out, _ = cli(*shlex.split(command)[1:])
    assert code == 0 and out.startswith("cuda==12.1: runs")


def test_suggest_says_what_it_cannot_tell_and_how_to_ask(cli, no_driver) -> None:
    code, out, _ = cli("suggest", "torch")
    assert code == 1 and out.startswith("no NVIDIA driver here, so no torch build can be confirmed on this machine")
    [command] = [c for c in _hinted(out) if c.startswith("cuenv suggest")]
    code, out, _ = cli(*shlex.split(command)[1:])
    assert code == 0 and out.startswith("best torch build: ")


def test_a_hint_for_a_described_machine_keeps_its_flags(cli) -> None:
    code, out, _ = cli("check", "cuda==12.9", "--driver", "470.82.01", "--cc", "8.0")
    assert code == 1
    [fix] = [line for line in out.splitlines() if line.startswith("  fix: ")]
    [command] = _hinted(fix)
    assert command.endswith(" --driver 470.82.01 --cc 8.0")
    code, out, _ = cli(*shlex.split(command)[1:])
    assert code == 0 and ": runs" in out.splitlines()[0]


def test_check_all_with_no_environments_says_how_to_get_some(cli) -> None:
    code, out, _ = cli("check", "--all", "--driver", "550.54.14", "--cc", "8.0")
    assert code == 0 and "`cuenv adopt --scan .` finds ones you have" in out
    code, out, _ = cli("check", "--all", "--driver", "550.54.14", "--json")
    assert json.loads(out)["environments"] == []
    code, _, err = cli("check", "--all", "cuda-12.1")
    assert code == 2 and "takes no TARGET" in err
    code, _, err = cli("check")
    assert code == 2 and "`cuenv check --all`" in err


def test_other_tools_words_lead_to_the_command(cli) -> None:
    code, _, err = cli("activate", "x")
    assert code == 2 and "Did you mean use?" in err


def test_lock_of_an_unknown_name_says_both_were_looked_for(cli) -> None:
    code, _, err = cli("lock", "nosuch")
    assert code == 2 and err.startswith("error: No environment or recipe named 'nosuch'.")
    assert "`cuenv list`" in err and "Traceback" not in err


def test_a_bare_cuda_stack_is_not_built_with_itself(cli) -> None:
    code, out, _ = cli("check", "cuda==12.9", "--driver", "535.104.05", "--cc", "8.6")
    assert code == 0 and "CUDA 12.9's full feature set needs a driver >= " in out
    assert "CUDA 12.9 is built with CUDA 12.9" not in out


def test_a_gpu_the_driver_ignores_gets_a_check_that_runs_as_written(cli) -> None:
    code, out, _ = cli("check", "cuda-12.1", "--driver", "590.44.01", "--gpu", "Tesla V100-SXM2-16GB")
    assert code == 1 and "error: gpu-ignored-by-driver" in out
    [fix] = [line for line in out.splitlines() if line.startswith("  fix: ")]
    [command] = _hinted(fix)
    assert command == "cuenv check cuda==12.1 --driver 580.65.06 --cc 7.0"  # a driver the release table names on R580
    code, out, _ = cli(*shlex.split(command)[1:])
    assert code == 0 and out.startswith("cuda==12.1: runs")
