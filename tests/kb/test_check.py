"""check() table-driven from the vendors' own statements (NVIDIA driver table, PyTorch arch lists,
Paddle/TensorFlow tested configurations), covering every code."""

from __future__ import annotations

import pytest

from cuenv.knowledge import builds
from cuenv.knowledge.compat import CODES, check, nearest_build, suggest, verdict
from cuenv.knowledge.specs import parse_spec
from cuenv.knowledge.stack import Stack
from tests.kb.kbref import machine

# (spec, index, machine, gcc, expected {code: severity}, why — the vendor statement it follows)
CASES = [
    # NVIDIA driver table / minor-version compatibility
    ("torch==2.1.0+cu121", None, machine("470.82.01", "8.6"), None, {"driver-too-old": "error"},
     "12.x needs >= 525.60.13; 470 is an 11.4 driver"),
    ("torch==2.8.0+cu128", None, machine("535.104.05", "8.6"), None, {"driver-minor-compat": "warning"},
     "12.8 GA needs 570.26; 535 >= 525.60.13 runs it under minor-version compatibility"),
    ("torch==2.9.0+cu130", None, machine("535.104.05", "8.6"), None, {"driver-too-old": "error"},
     "minor-version compatibility never crosses a major: 13.x needs >= 580"),
    ("torch==2.9.0+cu130", None, machine("580.65.06", "8.6"), None, {},
     "13.0 GA minimum is 580.65.06"),
    ("torch==2.1.0+cu121", None, machine("530.30.02", "8.6"), None, {},
     "12.1 GA minimum is 530.30.02"),
    ("torch==2.1.0+cu118", None, machine("450.80.02", "8.0"), None, {"driver-minor-compat": "warning"},
     "11.x floor 450.80.02 < 11.8's 520.61.05"),
    ("torch==2.1.0+cu118", None, machine("450.51.06", "8.0"), None, {"driver-too-old": "error"},
     "below the 11.x minor-compat floor"),
    ("torch==2.5.1", None, machine("", "8.6", max_cuda="12.2"), None, {"driver-minor-compat": "warning"},
     "CONDA_OVERRIDE_CUDA=12.2: compared by CUDA level; default 2.5.1 wheel is cu124"),
    ("torch==2.9.0+cu130", None, machine("", "8.6", max_cuda="12.8"), None, {"driver-too-old": "error"},
     "CONDA_OVERRIDE_CUDA=12.8 cannot run CUDA 13"),
    ("torch==2.1.0+cu121", None, machine(None), None, {"no-driver": "error"},
     "no driver at all is a normal, reported state"),
    ("torch==2.1.0+cu121", None, machine(None, "8.6"), None, {"no-driver": "error"},
     "a GPU but no driver"),
    ("torch==2.1.0+cu121", None, machine("", "8.6"), None, {"driver-unknown": "info"},
     "--cc without --driver: the driver axis is unknown"),
    ("torch==2.1.0+cu121", None, machine("535.104.05"), None, {"no-gpu": "warning"},
     "driver present, no GPU known"),
    # PyTorch arch lists per release and variant
    ("torch==2.1.0+cu121", None, machine("570.124.06", "12.0"), None, {"arch-unsupported": "error"},
     "RTX 5090 (12.0): cu121 list is 5.0..9.0, no PTX"),
    ("torch==2.7.0+cu128", None, machine("570.124.06", "12.0"), None, {},
     "cu128 carries sm_120"),
    ("torch==2.8.0+cu128", None, machine("570.124.06", "6.0"), None, {"arch-unsupported": "error"},
     "P100 (6.0): 2.8 dropped Maxwell/Pascal from cu128"),
    ("torch==2.8.0+cu126", None, machine("570.124.06", "6.0"), None, {},
     "P100 runs cu126 (5.0..9.0); driver 570 is newer than 12.6"),
    ("torch==2.8.0+cu128", None, machine("570.124.06", "7.0"), None, {},
     "Volta kept in cu128 for 2.8"),
    ("torch==2.11.0+cu128", None, machine("570.124.06", "7.0"), None, {"arch-unsupported": "error", "cudnn-mismatch": "error"},
     "sm_70 dropped from cu128 in 2.11"),
    ("torch==2.5.1", None, machine("570.124.06", "10.0"), None, {"arch-ptx-jit": "warning"},
     "cu124 '9.0+PTX' on B200 (10.0): PTX JIT"),
    ("torch==2.5.1", None, machine("550.54.14", "10.0"), None, {"gpu-ignored-by-driver": "error"},
     "a B200 (10.0) needs R570: CUDA 12.8, whose minimum driver is 570.26, is the first to target it"),
    ("torch==2.5.1", None, machine("550.54.14", "8.9"), None, {},
     "RTX 4090 (8.9) runs sm_86 SASS (same major, lower minor)"),
    ("torch==2.0.0+cu118", None, machine("470.82.01", "3.7"), None, {"driver-minor-compat": "warning"},
     "K80 (3.7) in the cu118 list of 2.0, on R470 (its last branch), an 11.4 driver"),
    ("torch==2.1.0+cu121", None, machine("530.30.02", "3.7"), None, {"gpu-ignored-by-driver": "error"},
     "K80 (3.7): R470 is the last branch for Kepler, so a 530 driver does not see it"),
    ("torch==2.1.0+cu121", None, machine("530.30.02", "5.2"), None, {},
     "M40 (5.2) in cu121 lists, R530 still runs Maxwell"),
    ("torch==2.3.0+cpu", None, machine("535.104.05", "8.6"), None, {"cpu-only-build": "warning"},
     "CPU wheel on a GPU box"),
    ("torch==2.3.0+cpu", None, machine(None), None, {"cpu-only-build": "info"},
     "CPU wheel on a CPU box"),
    ("torch==2.11.0", None, machine("580.65.06", "7.0"), None, {"arch-unsupported": "error", "cudnn-mismatch": "error"},
     "2.11's default wheel is cu130 with cuDNN 9.19 (cc >= 7.5)"),
    # Paddle, TensorFlow and JAX tested configurations
    ("paddlepaddle-gpu==2.6.1.post118", None, machine("520.61.05", "8.6"), None, {"arch-unknown": "info"},
     "CUDA 11.8 build on an 11.8 driver"),
    ("paddlepaddle-gpu==2.6.1.post120", None, machine("520.61.05", "8.6"), None, {"driver-too-old": "error", "arch-unknown": "info"},
     "post120 is CUDA 12.0"),
    ("paddlepaddle-gpu==3.0.0", "cu126", machine("550.54.14", "8.6"), None, {"driver-minor-compat": "warning", "arch-unknown": "info"},
     "cu126 on a 12.4 driver (Paddle says >= 550.54.14; NVIDIA's minor rule says 525.60.13)"),
    ("tensorflow==2.15.0", None, machine("535.104.05", "8.0"), None, {"arch-unknown": "info"},
     "TF 2.15 tested with CUDA 12.2 / cuDNN 8.9"),
    ("tensorflow==2.15.0", None, machine("537.13", "8.0", os="windows"), None, {"os-unsupported": "error", "arch-unknown": "info"},
     "native-Windows GPU support ended with TF 2.10"),
    ("jax[cuda13]==0.7.0", None, machine("580.65.06", "7.0"), None, {"arch-unsupported": "error"},
     "CUDA 13 cannot target below sm_75 (V100)"),
    ("jax[cuda12]==0.4.30", None, machine("470.82.01", "8.0"), None, {"driver-too-old": "error", "arch-unknown": "info"},
     "jax cuda12 needs >= 525"),
    # host compiler (nvcc's host_config.h)
    ("cuda==12.1", None, machine("535.104.05", "8.6"), "13", {"compiler-too-new": "error"},
     "nvcc 12.1 rejects gcc > 12"),
    ("cuda==12.4", None, machine("550.54.14", "8.6"), "13.2.0", {},
     "nvcc 12.4 accepts gcc 13"),
    ("cuda==13.2", None, machine("595.45.04", "8.6"), "15", {},
     "13.2 accepts gcc 15 (its host_config.h)"),
    ("cuda==13.2", None, machine("595.45.04", "8.6"), "16", {"compiler-too-new": "error"},
     "13.2 rejects gcc 16; 13.4 is the first to accept it"),
    ("cuda==11.7", None, machine("515.43.04", "8.6"), "12.1", {"compiler-too-new": "error"},
     "11.7 accepts gcc 11 at most"),
    ("cuda==10.2", None, machine("440.33", "7.5"), "8", {"compiler-unknown": "info"},
     "no host-compiler row before 11.0; nvcc 10.2 targets 7.5"),
    ("cuda==10.2", None, machine("535.104.05", "8.6"), "8", {"compiler-unknown": "info", "arch-ptx-jit": "warning"},
     "CUDA 10.2's newest target is 7.5: sm_86 runs its PTX only"),
    ("torch==2.1.0+cu121", None, machine("535.104.05", "8.6"), "14", {},
     "gcc only matters for stacks with nvcc"),
    ("cuda==12.1", None, machine("570.124.06", "12.0"), None, {"arch-ptx-jit": "warning"},
     "nvcc 12.1 predates sm_120: compile PTX compute_90 and JIT"),
    # issue 27: unknown is neither an error nor a pass
    ("torch==2.9.1+cu129", None, machine("575.51.03", "8.6"), None, {"build-unknown": "info", "arch-unknown": "info"},
     "cu129 of 2.9 is on PyTorch's index but not in the release matrix cuenv read: unknown, judged by CUDA 12.9"),
    ("torch==2.15.0+cu130", None, machine("580.65.06", "9.0"), None, {"build-unknown": "info", "arch-unknown": "info"},
     "2.15's known build is its PyPI wheel (cu132); cu130 is unknown, not absent"),
    ("paddlepaddle-gpu==3.3.1+cu130", None, machine("580.65.06", "9.0"), None, {"build-unknown": "info", "arch-unknown": "info"},
     "Paddle 3.3 cu130: not on the install pages cuenv read; unknown"),
    ("paddlepaddle-gpu==3.3.1", "cu130", machine("575.51.03", "9.0"), None,
     {"build-unknown": "info", "arch-unknown": "info", "driver-too-old": "error"},
     "an unknown build is still judged by its CUDA tag: 13.x needs >= 580"),
    # driver branch <-> GPU architecture
    ("torch==2.8.0+cu126", None, machine("590.44.01", "7.0"), None, {"gpu-ignored-by-driver": "error"},
     "V100 on R590: R580 is the last branch for Maxwell, Pascal and Volta (NVUNIXDEP, NVRM580)"),
    ("torch==2.8.0+cu126", None, machine("580.95.05", "7.0"), None, {},
     "V100 on R580 runs"),
    ("torch==2.8.0+cu126", None, machine("591.44", "6.1", os="windows"), None, {"gpu-ignored-by-driver": "error"},
     "Windows 591.44 is R590: Pascal is gone there too"),
    ("cuda==13.4", None, machine("580.65.06", "10.7"), None, {"gpu-ignored-by-driver": "error", "driver-minor-compat": "warning"},
     "Rubin (10.7) needs R615: CUDA 13.4 is the first to target it"),
    ("cuda==13.4", None, machine("615.00", "10.7"), None, {},
     "Rubin on R615 runs"),
    # platforms
    ("torch==2.11.0+cu130", None, machine("581.57", "8.6", os="windows"), None, {},
     "a Windows R580 driver (581.57) reports CUDA 13.0 (WIN581): not capped at 12.9"),
]


@pytest.mark.parametrize(("spec", "index", "m", "gcc", "expected", "why"), CASES, ids=[f"{c[0]}|{c[-1][:40]}" for c in CASES])
def test_check_table(spec, index, m, gcc, expected, why) -> None:
    findings = check(parse_spec(spec, index), m, gcc=gcc)
    assert {f.code: f.severity for f in findings} == expected, [f.message for f in findings]
    assert verdict(findings) == ("error" not in expected.values())
    for f in findings:
        assert f.code in CODES
        if f.severity == "error":
            assert f.fix, f


def test_every_code_is_covered_by_the_table() -> None:
    seen = {code for case in CASES for code in case[4]} | {"arch-ptx-jit"}
    m = machine("535.104.05", "8.6")
    unknown_cc = check(parse_spec("torch==2.1.0+cu121"), m.__class__(m.driver, (m.gpus[0].__class__(0, "GPU 0", None),)))
    seen |= {f.code for f in unknown_cc}
    seen |= {f.code for f in check(Stack("x", "12.1", cudnn="8.5.0.96", sass=("8.6",)), m)}
    assert seen == set(CODES)


def test_issue_message_names_the_numbers() -> None:
    [f] = check(parse_spec("torch==2.1.0+cu121"), machine("470.82.01", "8.6"))
    assert f.message == ("torch 2.1.0+cu121 needs a driver >= 525.60.13 (CUDA 12.x); this machine has 470.82.01,"
                         " which supports CUDA 11.4.")
    assert "530.30.02" in f.fix and "torch==2.1.0+cu118" in f.fix


def test_gpu_without_cc_is_skipped_with_info() -> None:
    m = machine("535.104.05", "8.6")
    gpu = m.gpus[0].__class__(1, "Mystery GPU", None)
    found = check(parse_spec("torch==2.1.0+cu121"), m.__class__(m.driver, m.gpus + (gpu,)))
    assert [(f.code, f.severity) for f in found] == [("gpu-unknown-cc", "info")]


def test_multi_gpu_reports_each_gpu() -> None:
    found = check(parse_spec("torch==2.8.0+cu128"), machine("570.124.06", "6.0", "8.6", "6.1"))
    assert [f.code for f in found] == ["arch-unsupported", "arch-unsupported"]
    assert "GPU 0 (6.0)" in found[0].message and "GPU 2 (6.1)" in found[1].message


def test_arch_fix_names_a_build_that_runs() -> None:
    m = machine("570.124.06", "12.0")
    [f] = check(parse_spec("torch==2.1.0+cu121"), m)
    alt = nearest_build(parse_spec("torch==2.1.0+cu121"), m)
    assert alt is not None and alt.label in f.fix
    assert verdict(check(alt, m))


def test_suggest_picks_newest_cuda_that_covers_every_gpu() -> None:
    # Pascal + Ada on a 12.4 driver: cu128+ drop Pascal, cu13x need R580 -> cu126
    best, lines = suggest(builds.candidates("torch"), machine("550.54.14", "6.1", "8.9"))
    assert best is not None and best.variant == "cu126"
    assert any("ruled out" in line for line in lines) and any(line.startswith("picked") for line in lines)


def test_suggest_blackwell_on_r570_picks_newest_cuda_12() -> None:
    # cu129 (2.8) carries sm_120 and runs on R570 under minor-version compatibility; cu13x need R580
    best, lines = suggest(builds.candidates("torch"), machine("570.124.06", "12.0"))
    assert best is not None and best.label == "torch==2.8.0+cu129"
    assert any("driver-minor-compat" in line for line in lines)


def test_suggest_on_r580_prefers_cuda_13() -> None:
    best, _ = suggest(builds.candidates("torch"), machine("580.65.06", "9.0"))
    assert best is not None and best.cuda.startswith("13.")


def test_suggest_none_without_driver() -> None:
    best, lines = suggest(builds.candidates("torch"), machine(None))
    assert best is None and lines[-1] == "no candidate runs here"


def test_a_framework_build_beside_newer_cuda_packages_is_not_said_to_be_built_with_them():
    """A torch cu121 build in an environment whose newest CUDA packages are 12.8 (held-out-13, TinyXRA): the
    driver warning speaks of CUDA 12.8, never of "torch 2.2.2+cu121 is built with CUDA 12.8"."""
    stack = builds.torch_stack("2.2.2", "cu121").replace(cuda="12.8")
    found = {f.code: f for f in check(stack, machine("535.104.05", "8.6"))}
    said = found["driver-minor-compat"].message
    assert said.startswith("CUDA 12.8's full feature set needs a driver >= 570") and "built with" not in said
    assert "arch-unknown" not in found  # the cu121 build's arch list is known and checked
