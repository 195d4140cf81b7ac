"""Issue 27: three-valued build facts, the driver <-> GPU relation and platforms, against fake machines."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from cuenv.errors import UsageError
from cuenv.knowledge import facts, gpus, matrix
from cuenv.knowledge.compat import check, platform_of, verdict
from cuenv.knowledge.specs import parse_spec
from cuenv.machine.model import Driver, Gpu, Machine


def board(driver: str, name: str, *, os: str = "linux", arch: str = "x86_64") -> Machine:
    model = gpus.lookup(name)
    cc = model.compute_capability if model else None
    return Machine(driver=Driver(driver, None, "flag"), gpus=(Gpu(0, name, cc),), os=os, arch=arch)


def codes(spec: str, m: Machine) -> dict[str, str]:
    return {f.code: f.severity for f in check(parse_spec(spec), m)}


def test_thor_with_cu130_runs() -> None:
    """vllm#34470: 'GPU 0: NVIDIA Thor', driver 580.00, torch 2.10.0+cu130 with CUDA available."""
    m = board("580.00", "NVIDIA Thor")
    assert platform_of(m) == "jetson"
    assert codes("torch==2.10.0+cu130", m) == {}


def test_orin_with_the_sbsa_cu126_wheel_does_not_run() -> None:
    """PyTorch's aarch64 cu126 wheel carries SASS 8.0 and 9.0 only; Tegra runs SASS of its own cc only."""
    m = board("540.5.0", "Orin (nvgpu)")
    found = check(parse_spec("torch==2.9.1+cu126"), m)
    assert not verdict(found)
    [err] = [f for f in found if f.severity == "error"]
    assert err.code == "arch-unsupported" and "Tegra" in err.message and "JetPack" in (err.fix or "")


def test_a_discrete_ampere_runs_sass_8_0_where_orin_does_not() -> None:
    assert codes("torch==2.9.1+cu126", board("560.35.03", "NVIDIA GH200 480GB")) == {}
    assert codes("torch==2.9.1+cu126", board("560.35.03", "NVIDIA A10G")) == {}


def test_aarch64_uses_the_aarch64_arch_list() -> None:
    """cu128's x86 list has 7.0 (Volta) in 2.9; the aarch64 one starts at 8.0."""
    x86 = Machine(Driver("580.95.05", None, "flag"), (Gpu(0, "Tesla T4", "7.5"),))
    arm = Machine(Driver("580.95.05", None, "flag"), (Gpu(0, "Tesla T4", "7.5"),), arch="aarch64")
    assert codes("torch==2.9.1+cu128", x86) == {}
    assert codes("torch==2.9.1+cu128", arm) == {"arch-unsupported": "error"}
    # no aarch64 list read for 2.5: unknown, not the x86 answer
    assert codes("torch==2.5.1+cu124", arm) == {"arch-unknown": "info"}


@pytest.mark.parametrize(("machine", "platform"), [
    (board("580.00", "NVIDIA Thor"), "jetson"),
    (board("560.35.03", "NVIDIA GB200"), "linux-sbsa"),
    (board("560.35.03", "NVIDIA H100"), "linux-x86_64"),
    (board("581.57", "NVIDIA GeForce RTX 3070", os="windows"), "windows"),
    (board("560.35.03", "NVIDIA H100", arch="aarch64"), "linux-sbsa"),
])
def test_gpu_names_imply_a_platform(machine: Machine, platform: str) -> None:
    assert platform_of(machine) == platform


@pytest.mark.parametrize(("name", "cc"), [("NVIDIA Thor", "11.0"), ("NVIDIA GeForce RTX 5090 D", "12.0"),
                                          ("Jetson AGX Thor", "11.0")])
def test_new_gpu_names(name: str, cc: str) -> None:
    model = gpus.lookup(name)
    assert model is not None and model.compute_capability == cc


def test_windows_581_reports_cuda_13() -> None:
    assert matrix.max_cuda_for_driver("581.57", "windows") == "13.0"
    assert matrix.max_cuda_for_driver("576.02", "windows") == "12.9"


def test_driver_branches_per_architecture() -> None:
    volta = matrix.legacy_branch("7.0")
    assert volta is not None and volta.last_branch == "580"
    assert matrix.legacy_branch("7.5") is None
    assert matrix.first_branch("10.7") == ("13.4", 615)
    assert matrix.first_branch("9.0") == ("11.8", 520)


@pytest.mark.parametrize(("spec", "state"), [
    ("torch==2.9.1+cu129", "unknown"), ("torch==2.10.0+cu129", "unknown"), ("torch==2.11.0+cu129", "unknown"),
    ("torch==2.15.0+cu130", "unknown"), ("torch==2.9.1+cu130", "yes"), ("torch==2.8.0+cu127", "no"),
    ("torch==2.1.0+cu130", "no"),
])
def test_torch_builds_are_three_valued(spec: str, state: str) -> None:
    version, variant = spec.split("==")[1].split("+")
    fact = matrix.torch_variant_fact(version, variant)
    assert fact.state == state
    assert (fact.source is None) == (state == "unknown")
    if state == "no":
        with pytest.raises(UsageError, match="source:"):
            parse_spec(spec)
    else:
        parse_spec(spec)


@pytest.mark.parametrize("version", ["3.2.1", "3.3.0", "3.3.1"])
def test_paddle_cu130_is_unknown_not_absent(version: str) -> None:
    assert matrix.paddle_variant_fact(version, "cu130").state == "unknown"
    assert parse_spec(f"paddlepaddle-gpu=={version}", "cu130").unknown


@given(st.sampled_from(matrix.torch_releases()), st.integers(min_value=0, max_value=2000))
def test_every_torch_lookup_answers_one_of_three(release: str, digits: int) -> None:
    fact = matrix.torch_variant_fact(release, f"cu{digits:03d}")
    assert fact.state in facts.STATES
    assert fact.known == (fact.source is not None)


# ---- PTX ISA from CCCL's header (the refresher's reader; no network) ----------------------------

HEADER = """
// PTX ISA 9.5 is available from CUDA 13.5
#elif _CCCL_CUDACC_AT_LEAST(13, 5)
// PTX ISA 9.0 is available from CUDA 13.0, driver r580
// PTX ISA 8.7 is available from CUDA 12.8, driver r570
"""


def test_ptx_isa_table_reads_the_header_comments() -> None:
    from cuenv.knowledge import derive

    assert derive.ptx_isa_table(HEADER) == [("8.7", "12.8", "570"), ("9.0", "13.0", "580"), ("9.5", "13.5", None)]


@given(st.text(max_size=400))
def test_ptx_isa_table_never_raises(text: str) -> None:
    from cuenv.knowledge import derive

    for ptx, cuda, drv in derive.ptx_isa_table(text):
        assert ptx.count(".") == 1 and cuda.count(".") == 1 and (drv is None or drv.isdigit())


def test_suggest_on_a_thor_picks_a_cuda_13_build_with_sm_110() -> None:
    from cuenv.knowledge import builds
    from cuenv.knowledge.compat import suggest

    best, _ = suggest(builds.candidates("torch"), board("580.00", "NVIDIA Thor"))
    assert best is not None and best.cuda is not None and best.cuda.startswith("13.")
    assert best.arch_aarch64 is not None and "11.0" in best.arch_aarch64[0]


@pytest.mark.parametrize(("spec", "operators", "bound"), [
    (">=9.1.0.70,<10", None, "9.1.0.70"), ("==13.0.96.*", None, "13.0.96"), ("<10,>=9.1", None, "9.1"),
    (">=12.1,>=12.4", None, "12.4"), ("<13", None, None), (">12.8", (">",), "12.8"), ("==12.1", (">=",), None),
])
def test_lower_bound_is_read_by_packaging(spec: str, operators: tuple[str, ...] | None, bound: str | None) -> None:
    from cuenv.knowledge.versions import lower_bound

    assert (lower_bound(spec, operators) if operators else lower_bound(spec)) == bound


@given(st.text(max_size=60))
def test_lower_bound_reads_any_text(text: str) -> None:
    from packaging.version import Version

    from cuenv.knowledge.versions import lower_bound

    found = lower_bound(text)
    assert found is None or str(Version(found)) == found
