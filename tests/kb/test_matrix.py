"""The knowledge base against every row of the reference (tests/kb/reference/cuda-facts.yaml)."""

from __future__ import annotations

import re

import pytest

from cuenv.knowledge import matrix
from tests.kb.kbref import reference

REF = reference()
DRIVER_ROWS = [r for r in REF["driver"]["toolkit_min_driver"] if r.get("linux")]


def _release(label: str) -> str:
    """Reference labels "12.2.0 GA", "11.0.1 RC" -> "12.2.0"."""
    return label.split()[0]


# ---- driver ----------------------------------------------------------------------------------


# Re-checked after the reference (issue 27): an R580 Windows driver (581.57) reports CUDA 13.0 (cuda.yaml
# WIN581), so 13.0's Windows minimum and the 13.x Windows floor are the R580 branch, not unknown.
WINDOWS_RECHECKED = {"13.0.0": "580"}


def _windows(release: str, reference: str | None) -> str | None:
    return WINDOWS_RECHECKED.get(release, reference)


def test_windows_rechecks_cite_their_source() -> None:
    for release in WINDOWS_RECHECKED:
        row = next(r for r in matrix.kb()["driver"]["releases"] if r["cuda"] == release)
        assert "WIN581" in row["sources"]
    assert "WIN581" in next(f for f in matrix.kb()["driver"]["families"] if f["major"] == 13)["sources"]


@pytest.mark.parametrize("row", DRIVER_ROWS, ids=lambda r: r["cuda"])
def test_driver_row_matches_reference(row: dict) -> None:
    kb = {r.cuda: r for r in matrix.driver_rows()}
    got = kb[_release(row["cuda"])]
    assert (got.linux, got.windows) == (row["linux"], _windows(got.cuda, row["windows"]))


@pytest.mark.parametrize("row", [r for r in DRIVER_ROWS if "RC" not in r["cuda"]], ids=lambda r: r["cuda"])
def test_min_driver_of_a_full_release_is_its_row(row: dict) -> None:
    release = _release(row["cuda"])
    assert matrix.min_driver(release) == row["linux"]
    assert matrix.min_driver(release, "windows") == _windows(release, row["windows"])


@pytest.mark.parametrize("row", [r for r in REF["driver"]["toolkit_min_driver"] if not r.get("linux")], ids=lambda r: r["cuda"])
def test_reference_gaps_stay_gaps_or_cite_their_source(row: dict) -> None:
    """What the reference left unconfirmed is None in the KB unless re-checked at the source."""
    mm = matrix.mm_str(_release(row["cuda"]))
    kb = [r for r in matrix.driver_rows() if matrix.mm_str(r.cuda) == mm]
    assert kb, mm
    for r in kb:
        row = next(x for x in matrix.kb()["driver"]["releases"] if x["cuda"] == r.cuda)
        assert r.linux is None or (r.status == "confirmed" and row["sources"]), r


@pytest.mark.parametrize(("cuda", "linux", "windows"), [
    ("12.2", "535.54.03", "536.25"),  # major.minor -> the GA row
    ("12.2.2", "535.104.05", "537.13"),  # a full release -> its own row
    ("12.1.105", "530.30.02", "531.14"),  # a cudart version -> newest row not after it
    ("11.0", "450.51.05", "451.48"),  # the RC row is never the answer
    ("13.1", "590.44.01", None),  # Table 3 of the 13.2 Update 2 notes
    ("13.2.2", "595.71.05", None),
    ("13.4", "615", None),  # branch-only rows answer with the branch
    ("13.5", None, None),  # unpublished
    ("12.7", None, None),  # never released
])
def test_min_driver_semantics(cuda: str, linux: str | None, windows: str | None) -> None:
    assert (matrix.min_driver(cuda), matrix.min_driver(cuda, "windows")) == (linux, windows)


@pytest.mark.parametrize("family", ["11.x", "12.x", "13.x"])
def test_family_floor_matches_reference(family: str) -> None:
    row = REF["driver"]["minor_version_compatibility"][family]
    major = int(family.split(".")[0])
    assert matrix.family_floor(major) == row["linux_min"]
    assert matrix.family_floor(major, "windows") == (row["windows_min"] if major != 13 else "580")


def test_no_floor_before_cuda_11() -> None:
    assert matrix.family_floor(10) is None


@pytest.mark.parametrize(("driver", "cuda"), [
    ("470.82.01", "11.4"),  # the example
    ("470.42.01", "11.4"),
    ("470.42.00", "11.3"),
    ("535.104.05", "12.2"),  # nvidia-smi says "CUDA Version: 12.2"
    ("535.54.03", "12.2"),
    ("570.26", "12.8"),
    ("575.57.08", "12.9"),
    ("580.65.06", "13.0"),
    ("590.44.01", "13.1"),
    ("600.10", "13.2"),
    ("700.0", "13.4"),  # 13.5's minimum is unpublished: never overshoot
    ("440.33", "10.2"),
    ("400.0", "9.2"),  # the old world (issue 27): CUDA 7.0-10.1 rows from the release notes' table
    ("410.48", "10.0"),
    ("340.0", None),
])
def test_max_cuda_for_driver(driver: str, cuda: str | None) -> None:
    assert matrix.max_cuda_for_driver(driver) == cuda


def test_max_cuda_for_driver_agrees_with_min_driver_for_every_release() -> None:
    for mm in matrix.cuda_releases():
        need = matrix.min_driver(mm)
        if need:
            assert matrix.max_cuda_for_driver(need) == mm


# ---- compute capabilities ------------------------------------------------------------------------

NVCC = {k: v for k, v in REF["nvcc_targets"].items() if isinstance(v, dict) and "sm" in v}


def _plain(sms: list[str]) -> list[str]:
    """["sm_90", "sm_90a", "sm_100f"] -> ["9.0", "10.0"] (arch-specific variants dropped)."""
    out = []
    for sm in sms:
        m = re.fullmatch(r"sm_(\d+)(\d)", sm)
        if m:
            out.append(f"{int(m.group(1))}.{m.group(2)}")
    return out


@pytest.mark.parametrize("cuda", sorted(NVCC))
def test_confirmed_nvcc_targets_match_reference(cuda: str) -> None:
    assert matrix.nvcc_targets(cuda) == tuple(_plain(NVCC[cuda]["sm"]))
    assert matrix.nvcc_status(cuda) == "confirmed"


def _ref_first_last(text: str) -> tuple[str, str | None]:
    """ "10.0 (<=11.8; removed in 12.0)", "<=10.0 (last: 12.9)", "12.8 to 12.9 only" -> (first, last)."""
    first = re.match(r"(?:<=)?(\d+\.\d+)", text).group(1)
    last = re.search(r"\(<=(\d+\.\d+);|last: (\d+\.\d+)|to (\d+\.\d+) only", text)
    return first, next((g for g in last.groups() if g), None) if last else None


@pytest.mark.parametrize("cc", sorted(REF["nvcc_targets"]["first_cuda_for_arch"]))
def test_first_cuda_for_cc_matches_reference(cc: str) -> None:
    first, last = _ref_first_last(REF["nvcc_targets"]["first_cuda_for_arch"][cc])
    if cc == "10.7":  # the reference ran nvcc 13.5 only; nvcc 13.4 from its wheel lists compute_107 too
        first = "13.4"
    assert matrix.cc_first_last(cc) == (first, last)


@pytest.mark.parametrize("row", matrix.kb()["nvcc_targets"]["releases"], ids=lambda r: r["cuda"])
def test_derived_nvcc_rows_follow_the_first_last_rule(row: dict) -> None:
    if row["status"] != "derived":
        return
    cuda = matrix.mm_str(row["cuda"])
    want = []
    for cc, span in matrix.kb()["nvcc_targets"]["first_cuda_for_cc"].items():
        first, last = span.get("first"), span.get("last")
        if matrix._mm(first) <= matrix._mm(cuda) and (last is None or matrix._mm(cuda) <= matrix._mm(last)):
            want.append(cc)
    # 13.1-13.4 leave out 10.7 (first seen in nvcc 13.5, not run for 13.1-13.4)
    assert sorted(matrix.nvcc_targets(cuda), key=matrix.cc_key) == sorted(want, key=matrix.cc_key)


def _span(text: str) -> list[str]:
    """ "11.1-11.6" -> every KB release in that span."""
    lo, _, hi = text.partition("-")
    hi = hi or lo
    return [mm for mm in matrix.cuda_releases() if matrix._mm(lo) <= matrix._mm(mm) <= matrix._mm(hi) and matrix.nvcc_targets(mm)]


@pytest.mark.parametrize("span", sorted(REF["nvcc_targets"]["per_release_max_cc"]))
def test_per_release_max_cc(span: str) -> None:
    want = REF["nvcc_targets"]["per_release_max_cc"][span].split()[0]
    for mm in _span(span):
        got = max(matrix.nvcc_targets(mm), key=matrix.cc_key)
        if got != want:
            # the one documented disagreement: sm_87 from 11.4 (first-CUDA table) vs 11.7 (arrayfire)
            assert (mm, got) in {("11.4", "8.7"), ("11.5", "8.7"), ("11.6", "8.7")}
            assert "8.7" in matrix.kb()["nvcc_targets"]["disagreement"]


@pytest.mark.parametrize(("text", "sass", "ptx"), [
    ("5.0;6.0;7.0;7.5;8.0;8.6;9.0", ("5.0", "6.0", "7.0", "7.5", "8.0", "8.6", "9.0"), ()),
    ("7.5;8.0;8.6;9.0;10.0;12.0+PTX", ("7.5", "8.0", "8.6", "9.0", "10.0", "12.0"), ("12.0",)),
    ("5.0;6.0;3.7;9.0", ("3.7", "5.0", "6.0", "9.0"), ()),
])
def test_parse_arch_list(text: str, sass: tuple, ptx: tuple) -> None:
    assert matrix.parse_arch_list(text) == (sass, ptx)


# ---- cuDNN -----------------------------------------------------------------------------------------


def _cudnn_cases() -> list[tuple[str, str, bool]]:
    cases = []
    for row in REF["cudnn"]["releases"]:
        first = re.match(r"\d+\.\d+(?:\.\d+)?", row["cudnn"]).group(0)
        for text in row["cuda"]:
            if "recalled" in text:
                continue  # not re-checked: the KB does not claim it
            m = re.match(r"(\d+)\.(\d+|x)(?:-(\d+\.\d+))?", text)
            if m.group(2) == "x":
                cases.append((first, f"{m.group(1)}.0", False))
                continue
            lo = f"{m.group(1)}.{m.group(2)}"
            if "U2" in text:  # "10.1U2 (8.0.2+)": 10.1 is outside the KB's range rows
                continue
            for cuda in (lo, m.group(3) or lo):
                cases.append((first, cuda, True))
    return cases


@pytest.mark.parametrize(("cudnn", "cuda", "strict"), _cudnn_cases())
def test_cudnn_supports_every_listed_cuda(cudnn: str, cuda: str, strict: bool) -> None:
    assert matrix.cudnn_supports(cudnn, cuda, strict=strict) is True


@pytest.mark.parametrize(("cudnn", "cuda", "ok"), [
    ("8.5.0.96", "12.1", False),  # no CUDA 12 build of cuDNN 8.5
    ("8.9.2.26", "12.1", True),  # torch 2.1's pin
    ("8.9.7.29", "12.3", True),  # TensorFlow 2.16: later minor of the same major
    ("9.10.2.21", "13.0", False),
    ("9.19.0.56", "13.0", True),
    ("9.19.0.56", "11.8", False),
])
def test_cudnn_supports_by_major(cudnn: str, cuda: str, ok: bool) -> None:
    assert matrix.cudnn_supports(cudnn, cuda) is ok


def test_unknown_cudnn_is_none() -> None:
    assert matrix.cudnn_supports("7.5.1", "10.2") is None
    assert matrix.cudnn_cudas("7.5.1") == ()


def test_cudnn_7_6_for_pasted_reports() -> None:
    assert matrix.cudnn_supports("7.6.5", "10.2") is True
    assert matrix.cudnn_supports("7.6.5", "11.0") is False


# ---- host compilers ----------------------------------------------------------------------------------


@pytest.mark.parametrize("row", [r for r in REF["host_compilers"]["rows"] if "gcc_max" in r], ids=lambda r: r["cuda"])
def test_max_gcc_matches_reference(row: dict) -> None:
    assert matrix.max_gcc(row["cuda"]) == row["gcc_max"]


@pytest.mark.parametrize("cuda", ["12.7", "10.2"])
def test_max_gcc_unknown(cuda: str) -> None:
    assert matrix.max_gcc(cuda) is None


# ---- PyTorch ----------------------------------------------------------------------------------------------

TORCH = REF["pytorch"]["releases"]


@pytest.mark.parametrize("row", [r for r in TORCH if isinstance(r["cuda_variants"], list)], ids=lambda r: r["torch"])
def test_torch_variants_and_pypi_default(row: dict) -> None:
    assert matrix.torch_variants(row["torch"]) == tuple(row["cuda_variants"])
    default = row["pypi_default"]
    assert matrix.torch_pypi_default(row["torch"] + ".0") == "cu" + default["cuda"].replace(".", "")
    build = matrix.torch_build(row["torch"] + ".0")
    assert build is not None and build.cuda == default["cuda"] and build.pypi_default
    assert build.cudnn == default["cudnn"].split()[-1]


def _arch_cases() -> list[tuple[str, str, str]]:
    cases = []
    rows = {r["torch"]: r for r in REF["pytorch"]["arch_lists"]}
    for key, row in rows.items():
        src = rows[row["same_as"]] if "same_as" in row else row
        lo, _, hi = key.partition("-")
        releases = [r for r in matrix.torch_releases() if matrix._mm(lo) <= matrix._mm(r) <= matrix._mm(hi or lo)]
        for rel in releases:
            for variant, text in src.items():
                if re.fullmatch(r"cu\d+", variant):
                    cases.append((rel, variant, text.split(" (")[0]))
    return cases


@pytest.mark.parametrize(("torch", "variant", "arch"), _arch_cases())
def test_torch_arch_lists_match_reference(torch: str, variant: str, arch: str) -> None:
    build = matrix.torch_build(torch, variant)
    assert build is not None
    assert (build.sass, build.ptx) == matrix.parse_arch_list(arch)


def test_torch_1x_releases_are_known_by_their_builds_alone() -> None:
    """1.0-1.12: which CUDA each release was built for (TORCHPREV, TORCHCONDA); not the PyPI wheel's CUDA nor
    any arch list, so a plain torch==1.x is not read as some CUDA, and no 1.x build is recommended."""
    from cuenv.knowledge import builds

    assert matrix.torch_variants("1.7.1") == ("cu101", "cu102", "cu110")
    assert matrix.torch_variants("1.11.0") == ("cu102", "cu111", "cu113", "cu115")
    assert matrix.torch_pypi_default("1.7.1") is None and matrix.torch_build("1.7.1") is None
    build = matrix.torch_build("1.7.1", "cu110")
    assert build is not None and build.cuda == "11.0" and (build.sass, build.ptx) == ((), ())
    assert matrix.torch_release("1.1.0") == "1.1" and matrix.torch_release("1.10.2") == "1.10"
    assert not any(s.framework_version.startswith("1.") and not s.framework_version.startswith("1.13")
                   for s in builds.candidates("torch"))


def test_torch_cpu_and_unknown() -> None:
    cpu = matrix.torch_build("2.3.0", "cpu")
    assert cpu is not None and cpu.cuda is None and cpu.sass == ()
    assert matrix.torch_build("2.3.0", "cu130") is None
    assert matrix.torch_build("9.9.0") is None


# ---- PaddlePaddle, TensorFlow, JAX ---------------------------------------------------------------------------


def _paddle_cases() -> list[tuple[str, str, str]]:
    cases = []
    for row in REF["paddlepaddle"]["releases"]:
        rel = re.split(r"[ -]", row["paddle"])[0].replace(".x", ".0")
        variants = row["variants"]
        if isinstance(variants, str):
            continue  # 3.1-3.3: partial list in prose, tested below
        if isinstance(variants, list):
            cases += [(rel, v, matrix.variant_cuda(v)) for v in variants]
            continue
        for name, text in variants.items():
            variant = "default" if name.startswith("default") else name
            cuda = matrix.variant_cuda(name) or re.search(r"(\d+\.\d+)", text).group(1)
            cases.append((rel, variant, cuda))
    return cases


@pytest.mark.parametrize(("release", "variant", "cuda"), _paddle_cases())
def test_paddle_variants_match_reference(release: str, variant: str, cuda: str) -> None:
    build = matrix.paddle_build(release, variant)
    assert build is not None and build.cuda == cuda


def test_paddle_3x_cu126_and_post118() -> None:
    for rel in ("3.1.0", "3.2.0", "3.2.2", "3.3.1"):
        assert matrix.paddle_build(rel, "cu126").cuda == "12.6"
    assert matrix.paddle_build("2.6.1", "post118").cuda == "11.8"


@pytest.mark.parametrize("row", REF["tensorflow"]["tested_gpu_configs"], ids=lambda r: r["tf"])
def test_tensorflow_tested_configs(row: dict) -> None:
    build = matrix.tf_build(row["tf"])
    assert (build.cuda, build.cudnn) == (row["cuda"], row["cudnn"])


@pytest.mark.parametrize("extra", ["cuda12", "cuda13"])
def test_jax_plugins(extra: str) -> None:
    ref = REF["jax"]["wheels"][extra]
    plugin = matrix.jax_plugin(extra)
    assert plugin.cuda == re.search(r"CUDA (\d+\.\d+)", ref["built_with"]).group(1)
    assert plugin.min_cc == ((ref.get("min_cc") or "").split() or [None])[0]


# ---- the file itself -------------------------------------------------------------------------------------------


def _rows():
    data = matrix.kb()
    yield from data["driver"]["releases"]
    yield from data["driver"]["families"]
    yield from data["nvcc_targets"]["releases"]
    yield from data["cudnn"]
    yield from data["host_compilers"]
    yield from data["pytorch"]["releases"]
    yield from data["paddlepaddle"]["releases"]
    yield from data["tensorflow"]["releases"]
    yield from data["jax"]["plugins"]


def test_every_row_has_a_status_and_its_sources() -> None:
    keys = set(matrix.kb()["sources"])
    for row in _rows():
        assert row["status"] in {"confirmed", "corroborated", "derived", "unconfirmed"}, row  # never "recalled"
        if row["status"] in {"confirmed", "corroborated"}:
            assert row.get("sources"), row
        for src in row.get("sources", ()):
            assert src in keys or " " in src, src  # a key of `sources`, or a literal citation
