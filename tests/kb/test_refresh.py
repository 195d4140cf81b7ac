"""The vendor-fact refresher: its parsers (property tests), its comparison, and a live re-derivation.

The network tests read PyPI: the JSON simple index, wheel METADATA and one header out of NVIDIA's
nvcc/crt wheels (byte ranges, never whole wheels). One client serves the whole run, so every range
is fetched once.
"""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from cuenv.knowledge import derive, refresh
from cuenv.knowledge.pypi import Client

# ---- parsers never raise and never guess --------------------------------------------------------


@given(st.text())
def test_host_limits_reads_any_text(text: str) -> None:
    lim = derive.host_limits(text)
    assert lim.gcc_max is None or lim.gcc_max >= 0


@given(st.lists(st.text(max_size=80), max_size=8), st.sampled_from(["3.10", "3.12", "3.14"]))
def test_needs_reads_any_requirement_lines(lines: list[str], python: str) -> None:
    n = derive.needs(lines, python=python, extras=("and-cuda",))
    assert n.cuda_major is None or n.cuda_major > 0


@given(st.text(max_size=120))
def test_wheel_name_is_none_or_complete(name: str) -> None:
    w = derive.wheel_name(name)
    assert w is None or (w.version and w.pythons and w.platforms)


@given(st.lists(st.from_regex(r"[0-9]{1,2}\.[0-9]{1,2}(\.[0-9]{1,3})?(rc1|\.post1|\.dev2)?", fullmatch=True), max_size=12))
def test_newest_per_minor_keeps_one_final_release_per_minor(versions: list[str]) -> None:
    per = derive.newest_per_minor(versions)
    finals = derive.final_versions(versions)
    assert set(per.values()) <= set(finals)
    for mm, newest in per.items():
        assert derive.minor(newest) == mm
        assert all(derive.minor(v) != mm or derive.Version(v) <= derive.Version(newest) for v in finals)


@given(st.text(max_size=300))
def test_build_arch_reads_any_text(text: str) -> None:
    arch = derive.build_arch(text)
    assert arch is None or all(cc.count(".") == 1 and cc.replace(".", "").isdigit() for cc in arch[0] + arch[1])


def test_build_arch_reads_tensorflows_build_info() -> None:
    # The line as it is in tensorflow-2.17.1-cp312-cp312-manylinux_2_17_x86_64 (tensorflow/python/platform/build_info.py).
    line = ("build_info = collections.OrderedDict([('cpu_compiler', '/usr/lib/llvm-17/bin/clang'), "
            "('cuda_compute_capabilities', ['sm_60', 'sm_70', 'sm_80', 'sm_89', 'compute_90']), "
            "('cuda_version', '12.3'), ('cudnn_version', '8'), ('is_cuda_build', True)])")
    assert derive.build_arch(line) == (["6.0", "7.0", "8.0", "8.9"], ["9.0"])
    assert derive.build_arch("('cuda_compute_capabilities', ['sm_100a', 'sm_120', 'compute_120'])") == (["10.0", "12.0"], ["12.0"])
    assert derive.build_arch("('is_cuda_build', False)") is None  # a CPU wheel names no targets


def test_requires_dist_lines_as_torch_and_tensorflow_write_them() -> None:
    # Lines as they appear in torch 2.15.0's and tensorflow 2.21.0's METADATA.
    torch = derive.needs([
        'cuda-toolkit[cublas,cudart,cufft,cufile,cupti,cusolver,cusparse,nvjitlink,nvrtc,nvtx]==13.2.2; platform_system == "Linux"',
        'nvidia-cudnn-cu13==9.26.0.51; platform_system == "Linux"',
        'nvidia-nccl-cu13==2.30.7; platform_system == "Linux"',
        'optree>=0.13.0; extra == "optree"',
    ])
    assert (torch.toolkit, torch.cuda, torch.cudnn and torch.cudnn.exact, torch.nccl and torch.nccl.exact) == (
        "13.2.2", "13.2", "9.26.0.51", "2.30.7")
    tf = derive.needs(['nvidia-cuda-runtime-cu12<13.0,>=12.5.82; extra == "and-cuda"',
                       'nvidia-cudnn-cu12<10.0,>=9.3.0.75; extra == "and-cuda"'], extras=("and-cuda",))
    assert (tf.cuda, tf.cudnn and tf.cudnn.lowest, tf.cuda_major) == ("12.5", "9.3.0.75", 12)
    assert derive.needs(['nvidia-cudnn-cu12<10.0,>=9.3.0.75; extra == "and-cuda"']).cudnn is None  # no extra asked


def test_toolkit_pins_read_the_wildcard_pins_of_cuda_toolkit() -> None:
    pins = derive.toolkit_pins([
        "nvidia-cuda-runtime==13.0.96.*; (sys_platform == 'linux' or sys_platform == 'win32') and extra == 'cudart'",
        "nvidia-cuda-nvcc==13.0.88.*; (sys_platform == 'linux' or sys_platform == 'win32') and extra == 'nvcc'",
    ])
    assert pins == {"cudart": "13.0.96", "nvcc": "13.0.88"}


# ---- comparison ---------------------------------------------------------------------------------


def test_diff_names_each_changed_field_and_row() -> None:
    old = {"torch": [{"torch": "2.14.1", "cudnn": "==9.24.0.43", "source": "a"}], "releases": {"torch": {"2.14": "2.14.1"}}}
    new = {"torch": [{"torch": "2.14.1", "cudnn": "==9.24.1.1", "source": "b"}, {"torch": "2.15.0", "source": "c"}],
           "releases": {"torch": {"2.14": "2.14.1", "2.15": "2.15.0"}}}
    assert refresh.diff(old, new) == [
        refresh.Difference("releases torch 2.15: absent -> 2.15.0", behind=True),
        refresh.Difference("torch 2.14.1: cudnn '==9.24.0.43' -> '==9.24.1.1'", behind=False),
        refresh.Difference("torch 2.15.0: new row", behind=True),
    ]
    assert refresh.diff(new, new) == []


def test_diff_tells_a_release_shipped_since_from_a_fact_pypi_contradicts() -> None:
    """The differences of 2026-12-03 (the vendors shipped): behind; a release gone or moved back: contradicted."""
    row = {"plugin": "jax-cuda13-plugin", "cuda": "13.0", "source": "s"}
    old = {"jax": [{**row, "version": "0.11.2"}, {**row, "version": "0.12.0.1"}],
           "releases": {"nvidia-nccl-cu13": {"2.31": "2.31.2", "2.32": "2.32.3"}}}
    new = {"jax": [{**row, "version": "0.11.2"}, {**row, "version": "0.12.1"}],
           "releases": {"nvidia-nccl-cu13": {"2.31": "2.31.2", "2.32": "2.32.6"}}}
    assert [d.behind for d in refresh.diff(old, new)] == [True, True, True]
    backwards = {d.text: d.behind for d in refresh.diff(new, old)}
    assert backwards["jax jax-cuda13-plugin 0.12.1: no longer derived"] is False  # an older patch does not replace it
    assert backwards["releases nvidia-nccl-cu13 2.32: 2.32.6 -> 2.32.3"] is False
    wider = {"jax": [{**row, "version": "0.11.2", "python": ["3.12", "3.13"]}]}  # wheels added to a release since
    narrower = {"jax": [{**row, "version": "0.11.2", "python": ["3.12", "3.14"]}]}
    assert [d.behind for d in refresh.diff(narrower, wider) + refresh.diff(wider, narrower)] == [False, False]
    assert refresh.diff({"jax": [{**row, "version": "0.11.2", "python": ["3.12"]}]}, wider) == [
        refresh.Difference("jax jax-cuda13-plugin 0.11.2: python ['3.12'] -> ['3.12', '3.13']", behind=True)]
    gone = {"jax": [{**row, "version": "0.11.2"}], "releases": {"nvidia-nccl-cu13": {"2.31": "2.31.2"}}}
    assert refresh.diff(old, gone) == [refresh.Difference("jax jax-cuda13-plugin 0.12.0.1: no longer derived", False),
                                       refresh.Difference("releases nvidia-nccl-cu13 2.32: 2.32.3 -> gone", False)]


def test_recipe_check_flags_a_contradicted_pin_and_proposes_a_new_release() -> None:
    facts = {
        "releases": {"torch": {"2.14": "2.14.1", "2.15": "2.15.0"}},
        "torch": [{"torch": "2.14.1", "cuda": "13.0", "cudnn": "==9.24.0.43", "source": "pypi:torch==2.14.1"},
                  {"torch": "2.15.0", "cuda": "13.2", "cudnn": "==9.26.0.51", "source": "pypi:torch==2.15.0"}],
        "tensorflow": [], "jax": [], "cuda_toolkit": [],
    }
    recipe = {"name": "torch-cu130", "cuda": "13.0", "cudnn": "9.20",
              "framework": {"name": "torch", "version": "2.14.1", "versions": ["2.14.1"]}}
    rep = refresh.check_recipes(facts, [recipe], exists=lambda p, v: True, variants=lambda f, v: None)
    assert rep.problems == ["torch-cu130 2.14.1: cudnn 9.20 but the wheel asks for cuDNN ==9.24.0.43 (pypi:torch==2.14.1)"]
    assert len(rep.proposals) == 1 and "2.15.0" in rep.proposals[0] and "unknown to cuda.yaml" in rep.proposals[0]
    listed = refresh.check_recipes(facts, [recipe], exists=lambda p, v: True, variants=lambda f, v: ("cu130",))
    assert listed.proposals == ["torch-cu130: torch 2.15.0 is out (newest pinned: 2.14.1)"]
    gone = refresh.check_recipes(facts, [recipe], exists=lambda p, v: False, variants=lambda f, v: None)
    assert gone.problems == ["torch-cu130: torch 2.14.1 is not a release on PyPI"]


def test_recipe_check_flags_gpu_targets_the_wheel_was_not_built_for() -> None:
    row = {"tensorflow": "2.17.1", "cuda": "12.3", "cudnn": "==8.9.7.29", "python": ["3.11", "3.12"], "source": "meta",
           "arch": {"sass": ["6.0", "7.0", "8.0", "8.9"], "ptx": ["9.0"]}, "arch_source": "build_info"}
    facts = {"releases": {}, "torch": [], "tensorflow": [row], "jax": [], "cuda_toolkit": []}
    recipe = {"name": "tensorflow-cu123", "cuda": "12.3", "cudnn": "8.9", "python": {"default": "3.11"},
              "arch": {"sass": ["5.0", "6.0", "7.0", "8.0"], "ptx": ["9.0"]},
              "framework": {"name": "tensorflow", "version": "2.17.1", "versions": ["2.17.1"]}}
    rep = refresh.check_recipes(facts, [recipe], exists=lambda p, v: True, variants=lambda f, v: None)
    assert rep.problems == ["tensorflow-cu123 2.17.1: arch sass ['5.0', '6.0', '7.0', '8.0'] "
                            "but the wheel was built for ['6.0', '7.0', '8.0', '8.9'] (build_info)"]
    fixed = {**recipe, "arch": {"sass": ["8.9", "8.0", "7.0", "6.0"], "ptx": ["9.0"]}}  # order does not matter
    assert refresh.check_recipes(facts, [fixed], exists=lambda p, v: True, variants=lambda f, v: None).problems == []


# ---- live: the data file and the recipes against PyPI ------------------------------------------


@pytest.fixture(scope="module")
def live(tmp_path_factory: pytest.TempPathFactory) -> refresh.Outcome:
    client = Client(cache_dir=tmp_path_factory.mktemp("pypi-responses"))  # this run's responses only
    return refresh.run(client)


@pytest.mark.network
def test_pypi_contradicts_no_vendor_fact_and_no_recipe_pin(live: refresh.Outcome) -> None:
    contradicted = [d.text for d in live.differences if not d.behind]
    assert contradicted == [], "run `python -m cuenv.knowledge.refresh --write` and review the diff"
    assert live.recipes.problems == []
    # metadata and byte ranges of wheels, never a whole one (a torch wheel is ~800 MB): the largest range, a wheel's
    # directory, was 3.2 MB on 2026-12-03. The count of requests grows with every release (386), so it is not held down.
    assert live.largest_range < 32_000_000, live.largest_range


@pytest.mark.network
@pytest.mark.freshness
def test_vendor_facts_and_the_catalogue_know_every_release_shipped_since(live: refresh.Outcome) -> None:
    """A vendor's new release leaves the data behind, not wrong: this runs with --run-freshness (a maintainer's
    check before a release), so that a release shipped today does not fail every CI run."""
    assert [d.text for d in live.differences if d.behind] == [], "run `python -m cuenv.knowledge.refresh --write`"
    assert live.recipes.proposals == []
