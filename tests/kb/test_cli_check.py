"""`cuenv check` and `cuenv suggest` through the CLI: text, the JSON contract, exit codes."""

from __future__ import annotations

import importlib.util
import json

import pytest


def test_check_text_and_exit_1(cli) -> None:
    code, out, err = cli("check", "torch==2.1.0+cu121", "--driver", "470.82.01", "--cc", "8.6")
    assert code == 1 and err == ""
    lines = out.splitlines()
    assert lines[0] == "torch==2.1.0+cu121: does not run"
    assert "error: driver-too-old" in lines
    assert ("  torch 2.1.0+cu121 needs a driver >= 525.60.13 (CUDA 12.x); this machine has 470.82.01,"
            " which supports CUDA 11.4.") in lines
    assert any(line.startswith("  fix: Install an NVIDIA driver >= 530.30.02") for line in lines)


def test_the_closest_build_in_a_fix_is_a_command_that_runs(cli) -> None:
    """The fix names the build with the command that shows it (issue 17 §4: no `use cuda==12.9`, which is no
    command), for the machine the check described (issue 30 §4: the flags are kept); run as written, it
    says the build runs there."""
    machine = ("--driver", "535.104.05", "--gpu", "RTX 3090")
    code, out, _ = cli("check", "cuda-13.0", *machine)
    [fix] = [line for line in out.splitlines() if line.startswith("  fix: ")]
    hinted = [part for i, part in enumerate(fix.split("`")) if i % 2]
    assert hinted == ["cuenv check cuda==12.9 --driver 535.104.05 --cc 8.6"], fix
    code, out, _ = cli(*hinted[0].split()[1:])
    assert code == 0 and out.splitlines()[0].startswith("cuda==12.9: runs")


def test_check_json_contract(cli) -> None:
    code, out, _ = cli("check", "torch==2.8.0+cu128", "--driver", "535.104.05", "--cc", "8.6", "--json")
    data = json.loads(out)
    assert code == 0
    assert list(data) == ["target", "ok", "verdict", "findings"] and data["verdict"] == "runs"
    assert data["target"] == "torch==2.8.0+cu128" and data["ok"] is True
    assert [list(f) for f in data["findings"]] == [["code", "severity", "message", "fix"]]
    assert data["findings"][0]["code"] == "driver-minor-compat"


def test_check_json_error_verdict(cli) -> None:
    code, out, _ = cli("--json", "check", "torch==2.1.0+cu121", "--driver", "570.124.06", "--cc", "12.0")
    data = json.loads(out)
    assert code == 1 and data["ok"] is False
    assert [f["code"] for f in data["findings"]] == ["arch-unsupported"]


def test_check_runs_exit_0(cli) -> None:
    code, out, _ = cli("check", "torch==2.7.1+cu128", "--driver", "570.124.06", "--cc", "12.0")
    assert code == 0 and out.splitlines()[0] == "torch==2.7.1+cu128: runs"


def test_check_gcc_and_index(cli) -> None:
    code, out, _ = cli("check", "cuda==12.1", "--driver", "535.104.05", "--cc", "8.6", "--gcc", "13")
    assert code == 1 and "error: compiler-too-new" in out
    code, out, _ = cli("check", "paddlepaddle-gpu==3.0.0", "--index", "cu126", "--driver", "560.28.03", "--cc", "8.6")
    assert code == 0, out


def test_check_windows(cli) -> None:
    code, out, _ = cli("check", "tensorflow==2.15.0", "--driver", "537.13", "--cc", "8.6", "--os", "windows")
    assert code == 1 and "error: os-unsupported" in out


@pytest.mark.parametrize("argv", [
    ("check", "torch==9.9.0", "--driver", "535.104.05"),
    ("check", "not a spec!", "--driver", "535.104.05"),
    ("check", "torch-cu999", "--driver", "535.104.05"),
    ("check", "torch==2.1.0+cu121", "--driver", "five-three-five"),
    ("check", "torch==2.1.0+cu121", "--cc", "eight"),
    ("check", "cuda==12.1", "--cc", "8.6", "--gcc", "thirteen"),
    ("check", "torch==2.1.0+cu121", "--os", "macos"),
    ("suggest", "caffe", "--driver", "535.104.05"),
])
def test_bad_input_exit_2_two_lines(cli, argv) -> None:
    code, out, err = cli(*argv)
    assert code == 2 and out == ""
    lines = err.splitlines()
    assert lines[0].startswith("error: ") and lines[1].startswith("hint: ") and len(lines) == 2


def test_check_with_gpu_name(cli) -> None:
    if importlib.util.find_spec("cuenv.knowledge.gpus") is None:
        pytest.skip("the GPU catalogue (cuenv.knowledge.gpus) is not on this branch")
    code, out, _ = cli("check", "torch==2.1.0+cu121", "--driver", "570.124.06", "--gpu", "NVIDIA GeForce RTX 5090", "--json")
    data = json.loads(out)
    assert code == 1 and [f["code"] for f in data["findings"]] == ["arch-unsupported"]
    code, out, err = cli("check", "torch==2.1.0+cu121", "--driver", "570.124.06", "--gpu", "No Such GPU 9000")
    assert code == 0 and err == "" and "info: gpu-unknown-cc" in out and "--cc" in out  # a finding, not a dead end


def test_suggest_text_and_json(cli) -> None:
    code, out, _ = cli("suggest", "--driver", "550.54.14", "--cc", "6.1", "--cc", "8.9")
    # recipes are the candidates, so the answer is something `cuenv create` takes
    assert code == 0 and out.splitlines()[0].startswith("best torch build: torch-cu126"), out
    code, out, _ = cli("suggest", "torch", "--driver", "580.65.06", "--cc", "9.0", "--json")
    data = json.loads(out)
    assert code == 0 and data["best"]["cuda"].startswith("13.") and data["reasoning"]


def test_suggest_nothing_runs_exit_1(cli) -> None:
    code, out, _ = cli("suggest", "torch", "--driver", "440.33", "--cc", "8.6")
    assert code == 1 and out.startswith("no torch build runs")


def test_gpu_flag_uses_the_catalogue_lookup(cli, monkeypatch) -> None:
    """The --gpu path against the catalogue's interface (lookup(name) -> record or None), stubbed at the boundary."""
    import sys
    import types
    from dataclasses import dataclass

    @dataclass(frozen=True)
    class Info:
        name: str
        compute_capability: str
        architecture: str
        memory_mib: int

    table = {"rtx 5090": Info("NVIDIA GeForce RTX 5090", "12.0", "Blackwell", 32607)}
    fake = types.ModuleType("cuenv.knowledge.gpus")
    fake.lookup = lambda name: table.get(name.lower())
    monkeypatch.setitem(sys.modules, "cuenv.knowledge.gpus", fake)
    code, out, _ = cli("check", "torch==2.1.0+cu121", "--driver", "570.124.06", "--gpu", "RTX 5090")
    assert code == 1 and "NVIDIA GeForce RTX 5090 (12.0)" in out and "error: arch-unsupported" in out
    code, out, err = cli("check", "torch==2.1.0+cu121", "--driver", "570.124.06", "--gpu", "GTX 9999")
    assert code == 0 and err == "" and "gpu-unknown-cc" in out and "--gpu 'GTX 9999=8.9'" in out
    code, out, _ = cli("check", "torch==2.1.0+cu121", "--driver", "570.124.06", "--gpu", "GTX 9999=8.6")
    assert code == 0 and "GTX 9999 (8.6)" in out and "gpu-unknown-cc" not in out


def test_an_unknown_build_is_neither_a_pass_nor_an_error(cli) -> None:
    """torch 2.9.1+cu129 is on PyTorch's index but not in the matrix cuenv read (issue 27)."""
    code, out, _ = cli("check", "torch==2.9.1+cu129", "--driver", "580.65.06", "--cc", "9.0")
    assert code == 0 and out.startswith("torch==2.9.1+cu129: unknown") and "runs" not in out.splitlines()[0]
    code, out, _ = cli("check", "torch==2.9.1+cu129", "--driver", "580.65.06", "--cc", "9.0", "--json")
    data = json.loads(out)
    assert (data["ok"], data["known"]) == (True, False)
    assert "build-unknown" in {f["code"] for f in data["findings"]}
    code, _, err = cli("check", "torch==2.8.0+cu127")
    assert code == 2 and "no CUDA 12.7 release" in err


def test_a_gpu_the_driver_ignores_names_its_last_branch(cli) -> None:
    code, out, _ = cli("check", "torch==2.8.0+cu126", "--driver", "590.44.01", "--gpu", "Tesla V100-SXM2-16GB")
    assert code == 1 and "gpu-ignored-by-driver" in out and "R580" in out


def test_a_file_in_this_folder_named_without_dot_slash_is_the_file(cli, work) -> None:
    """`cuenv check pixi.lock` reads the file here, never a recipe or an environment of that name; a file cuenv
    cannot read is said to be one, and a folder here that names nothing else is read for its kernels."""
    from pathlib import Path

    fixture = Path(__file__).parents[1] / "lockfiles" / "foreign" / "fixtures" / "multi-machine-v7.pixi.lock"
    (work / "pixi.lock").write_bytes(fixture.read_bytes())
    code, out, _ = cli("check", "pixi.lock", "--driver", "550.54.14", "--cc", "8.9", "--json")
    assert code == 0 and json.loads(out)["target"] == "pixi.lock" and "contract" in json.loads(out), out
    (work / "cuda-12.1").write_bytes(b"\0\1 not a lockfile")  # a recipe's name, but a file here: the file
    code, _, err = cli("check", "cuda-12.1")
    assert code == 2 and err.startswith("error: cuda-12.1 is not a wheel, a shared object"), err
    (work / "build").mkdir()
    code, out, _ = cli("check", "build")
    assert code == 0 and "No CUDA kernels (fat binaries) in the 0 shared objects of build." in out, out
