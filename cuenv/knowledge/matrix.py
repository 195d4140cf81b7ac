"""The compatibility knowledge base (cuenv/knowledge/data/cuda.yaml) behind pure lookup functions.

The YAML is read once, on first use (C loader when PyYAML has it). Every function is pure:
same arguments, same answer; no I/O after the first load, no printing.

Version strings follow cuenv.knowledge.versions: drivers "535.104.05", CUDA "12.1" or "12.1.1", compute
capabilities "8.6". Unknown facts come back as None (or an empty tuple), never as a guess.
"""

from __future__ import annotations

import re
from functools import cache, lru_cache
from pathlib import Path

from cuenv.knowledge import facts, versions
from cuenv.plain import Plain

TYPE_CHECKING = False  # no `typing` at run time: `check` reads these tables at start-up (issue 29)
if TYPE_CHECKING:
    from typing import Any, Final

DATA_FILE: Final = Path(__file__).with_name("data") / "cuda.yaml"
OSES: Final = ("linux", "windows")


@lru_cache(maxsize=1)
def kb() -> dict[str, Any]:
    """The whole knowledge base as loaded from YAML (parsed once per change: cuenv.shipped)."""
    from cuenv import shipped

    return shipped.load(DATA_FILE, shipped.parse_yaml)


def _os(os_name: str) -> str:
    if os_name not in OSES:
        raise ValueError(f"os must be one of {OSES}, not {os_name!r}")
    return os_name


@versions.memo
def _mm(cuda: str) -> tuple[int, int]:
    v = versions.cuda(cuda)
    return (v.major, v.minor)


@versions.memo
def mm_str(cuda: str) -> str:
    """ "12.1.105" -> "12.1"."""
    major, minor = _mm(cuda)
    return f"{major}.{minor}"


# ---------------------------------------------------------------------------------------------
# Driver
# ---------------------------------------------------------------------------------------------


class DriverRow(Plain):
    __slots__ = ("cuda", "kind", "linux", "windows", "status")

    def __init__(self, cuda: str, kind: str, linux: str | None, windows: str | None, status: str) -> None:
        self.cuda = cuda  # toolkit release "12.2.0"
        self.kind = kind  # ga | update | rc | branch
        self.linux = linux
        self.windows = windows
        self.status = status


@lru_cache(maxsize=1)
def driver_rows() -> tuple[DriverRow, ...]:
    return tuple(
        DriverRow(r["cuda"], r["kind"], r.get("linux"), r.get("windows"), r["status"])
        for r in kb()["driver"]["releases"]
    )


def driver_on_branch(branch: int, os: str = "linux") -> str | None:
    """The first driver version of branch ``branch`` the release table names (580 -> "580.65.06"), for
    a hint that runs as written; None when the table names none on that branch."""
    os_name = _os(os)
    for row in driver_rows():
        value = _row_value(row, os_name)
        if row.kind != "rc" and value and "." in value and value.split(".", 1)[0] == str(branch):
            return value
    return None


def _row_value(row: DriverRow, os_name: str) -> str | None:
    return row.linux if os_name == "linux" else row.windows


def pytorch_index(variant: str) -> str:
    """PyTorch's package index of one build variant (``cu118``, ``cpu``): ``https://download.pytorch.org/whl/cu118``."""
    return str(kb()["pytorch"]["index_url"]).format(variant=variant)


@versions.memo
def min_driver(cuda: str, os: str = "linux") -> str | None:
    """Driver needed for the full feature set of a CUDA release, or None when not published.

    "12.2" (major.minor) answers with the GA row of 12.2: the level a driver reports as its
    CUDA version (535.54.03 says "CUDA 12.2"), so min_driver and max_cuda_for_driver agree.
    "12.2.2" (a full release, or a cudart version such as "12.1.105") answers with the newest
    row of that minor not after it: 12.2 Update 2 -> 535.104.05. Release candidates are ignored.
    A "branch" row answers with the branch number ("590" = any R590 driver or later).
    """
    os_name = _os(os)
    want = versions.cuda(cuda)
    same_minor = _rows_by_minor().get((want.major, want.minor), ())
    if not same_minor:
        return None
    if len(want.parts) < 3:
        row = same_minor[0]  # rows are in release order: the first is the GA (or branch) row
    else:
        earlier = [r for r in same_minor if versions.cuda(r.cuda) <= want]
        row = earlier[-1] if earlier else same_minor[0]
    return _row_value(row, os_name)


@cache
def _rows_by_minor() -> dict[tuple[int, int], tuple[DriverRow, ...]]:
    """The driver table's rows (release candidates left out) by CUDA major.minor, in release order."""
    out: dict[tuple[int, int], list[DriverRow]] = {}
    for r in driver_rows():
        if r.kind != "rc":
            out.setdefault(_mm(r.cuda), []).append(r)
    return {k: tuple(v) for k, v in out.items()}


@cache
def _families() -> dict[int, dict[str, Any]]:
    return {f["major"]: f for f in kb()["driver"]["families"]}


def family_floor(major: int, os: str = "linux") -> str | None:
    """Oldest driver that runs any CUDA ``major``.x build under minor-version compatibility.

    None for majors without minor-version compatibility (before 11) or unpublished values (13.x on Windows).
    """
    fam = _families().get(int(major))
    return fam.get(_os(os)) if fam else None


def families() -> tuple[int, ...]:
    return tuple(sorted(_families()))


@cache
def cuda_releases() -> tuple[str, ...]:
    """Every CUDA major.minor the driver table knows, oldest first."""
    seen: dict[str, None] = {}
    for r in driver_rows():
        seen.setdefault(mm_str(r.cuda), None)
    return tuple(seen)


@versions.memo
def max_cuda_for_driver(driver: str, os: str = "linux") -> str | None:
    """Newest CUDA major.minor whose full-feature (GA row) minimum is <= ``driver``; None if none is.

    Releases whose minimum is unpublished are skipped, so the answer may undershoot (never overshoot).
    """
    have = versions.driver(driver)
    best = None
    for mm in cuda_releases():
        need = min_driver(mm, os)
        if need is not None and versions.driver(need) <= have:
            best = mm
    return best


# ---------------------------------------------------------------------------------------------
# Which GPUs a driver runs
# ---------------------------------------------------------------------------------------------


class LegacyBranch(Plain):
    __slots__ = ("architecture", "last_branch", "ignored_from", "sources")

    def __init__(self, architecture: str, last_branch: str, ignored_from: int, sources: str) -> None:
        self.architecture = architecture  # "Volta"
        self.last_branch = last_branch  # "580": the newest branch that still runs it
        self.ignored_from = ignored_from  # 590: drivers of this major and later ignore the GPU
        self.sources = sources


@versions.memo
def legacy_branch(cc: str) -> LegacyBranch | None:
    """The retired architecture a compute capability belongs to, with its last driver branch; None if current."""
    want = _cc(cc)
    for row in kb()["driver_gpus"]["legacy"]:
        if want in row["ccs"]:
            return LegacyBranch(row["architecture"], row["last_branch"], int(row["ignored_from"]),
                                _source_text(row["sources"]))
    return None


@versions.memo
def first_branch(cc: str) -> tuple[str, int] | None:
    """(first CUDA release that targets ``cc``, the major of its minimum Linux driver): (13.4, 615) for Rubin."""
    first, _ = cc_first_last(cc)
    # the table starts at the oldest release it covers: a `first` there means "as far back as it goes"
    floor = min((r["first"] for r in kb()["nvcc_targets"]["first_cuda_for_cc"].values()), key=_mm)
    if first is None or first == floor:
        return None
    need = min_driver(first, "linux")
    return (first, versions.driver(need).major) if need else None


def jetson_driver_cuda(driver: str) -> str | None:
    """The CUDA level a Jetson (L4T) driver reports ("580.00" -> "13.0"); None when no board report gives it."""
    for row in kb().get("jetson_drivers", ()):
        if row["driver"] == driver.strip():
            return str(row["cuda"])
    return None


# ---------------------------------------------------------------------------------------------
# Compute capabilities
# ---------------------------------------------------------------------------------------------


@cache
def _nvcc_rows() -> dict[str, dict[str, Any]]:
    return {r["cuda"]: r for r in kb()["nvcc_targets"]["releases"]}


def nvcc_targets(cuda: str) -> tuple[str, ...]:
    """Compute capabilities ("8.6") nvcc/ptxas of that CUDA release emits SASS for; () if unknown."""
    row = _nvcc_rows().get(mm_str(cuda))
    return tuple(row["targets"]) if row else ()


def nvcc_status(cuda: str) -> str | None:
    row = _nvcc_rows().get(mm_str(cuda))
    return row["status"] if row else None


def cc_first_last(cc: str) -> tuple[str | None, str | None]:
    """(first, last) CUDA release that can target ``cc``; (None, None) when unknown."""
    row = kb()["nvcc_targets"]["first_cuda_for_cc"].get(_cc(cc))
    return (row.get("first"), row.get("last")) if row else (None, None)


@versions.memo
def first_cuda_running_on(cc: str) -> str | None:
    """The oldest CUDA release whose SASS runs on a GPU of compute capability ``cc``: one that targets a cc
    of its major at or below its minor (8.0 SASS runs on 8.6); None when the table knows none, or only its
    own first row (10.0: older releases targeted Volta too, the table does not go back that far)."""
    have = versions.cc(cc)
    rows = kb()["nvcc_targets"]["first_cuda_for_cc"]
    firsts = [row["first"] for key, row in rows.items()
              if (v := versions.cc(key)).major == have.major and v.minor <= have.minor]
    first = min(firsts, key=_mm) if firsts else None
    return None if first is None or first == min((r["first"] for r in rows.values()), key=_mm) else first


@versions.memo
def _cc(text: str) -> str:
    v = versions.cc(text)
    return f"{v.major}.{v.minor}"


@versions.memo
def cc_key(text: str) -> tuple[int, int]:
    v = versions.cc(text)
    return (v.major, v.minor)


def parse_arch_list(text: str) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """TORCH_CUDA_ARCH_LIST "5.0;8.6;9.0+PTX" -> (sass ("5.0", "8.6", "9.0"), ptx ("9.0",))."""
    sass: list[str] = []
    ptx: list[str] = []
    for item in text.replace(" ", ";").split(";"):
        if not item:
            continue
        if item.upper().endswith("+PTX"):
            item = item[: -len("+PTX")]
            ptx.append(_cc(item))
        sass.append(_cc(item))
    return tuple(sorted(set(sass), key=cc_key)), tuple(sorted(set(ptx), key=cc_key))


@cache
def _ptx_rows() -> dict[str, str]:
    return {r["ptx"]: r["cuda"] for r in kb()["ptx_isa"]}


def ptx_isa_cuda(ptx: str) -> str | None:
    """The CUDA release that introduced PTX ISA ``ptx`` ("9.0" -> "13.0"): a driver JITs it from that level; None if unknown."""
    return _ptx_rows().get(ptx)


# ---------------------------------------------------------------------------------------------
# cuDNN and host compilers
# ---------------------------------------------------------------------------------------------


class CudaRange(Plain):
    __slots__ = ("major", "min", "max")

    def __init__(self, major: int, min: str, max: str) -> None:  # noqa: A002 - the table's words
        self.major = major
        self.min = min  # "12.0"
        self.max = max  # "12.9"

    def contains(self, cuda: str) -> bool:
        return _mm(self.min) <= _mm(cuda) <= _mm(self.max)


class CudnnRow(Plain):
    __slots__ = ("cudnn", "first", "last", "builds", "min_cc", "status")

    def __init__(self, cudnn: str, first: str, last: str, builds: tuple[CudaRange, ...], min_cc: str | None,
                 status: str) -> None:
        self.cudnn = cudnn  # the row's name, "9.10"
        self.first = first
        self.last = last
        self.builds = builds
        self.min_cc = min_cc
        self.status = status


@lru_cache(maxsize=1)
def cudnn_rows() -> tuple[CudnnRow, ...]:
    return tuple(
        CudnnRow(
            r["cudnn"], r["from"], r["to"],
            tuple(CudaRange(b["major"], b["min"], b["max"]) for b in r["builds"]),
            r.get("min_cc"), r["status"],
        )
        for r in kb()["cudnn"]
    )


def cudnn_row(cudnn: str) -> CudnnRow | None:
    """The support-matrix row covering a cuDNN version ("9.1.0.70", "8.9"); None if unknown."""
    want = versions.Dotted.parse(cudnn, what="cuDNN version")
    probe = want if len(want.parts) >= 3 else versions.Dotted(tuple(want.parts) + (0,) * (3 - len(want.parts)))
    for row in cudnn_rows():
        last = versions.Dotted.parse(row.last)
        head = versions.Dotted(probe.parts[: len(last.parts)])  # "8.9.7.29" is within "8.9.7"
        if versions.Dotted.parse(row.first) <= probe and head <= last:
            return row
    return None


def cudnn_cudas(cudnn: str) -> tuple[CudaRange, ...]:
    """The CUDA ranges NVIDIA lists for that cuDNN, one per CUDA major; () if unknown."""
    row = cudnn_row(cudnn)
    return row.builds if row else ()


def cudnn_supports(cudnn: str, cuda: str, *, strict: bool = False) -> bool | None:
    """Does a build of ``cudnn`` exist for ``cuda``? None when the cuDNN release is unknown.

    Default: a build for the CUDA major exists (cuDNN's X.y builds run on later X minors under
    minor-version compatibility; TensorFlow 2.16 ships cuDNN 8.9 with CUDA 12.3). ``strict``:
    the CUDA minor is inside the range the support matrix lists.
    """
    row = cudnn_row(cudnn)
    if row is None:
        return None
    major = _mm(cuda)[0]
    for b in row.builds:
        if b.major == major and (not strict or b.contains(cuda)):
            return True
    return False


@cache
def _gcc_rows() -> dict[str, dict[str, Any]]:
    return {r["cuda"]: r for r in kb()["host_compilers"]}


def max_gcc(cuda: str) -> int | None:
    """Newest gcc major nvcc of that CUDA major.minor accepts; None when not known."""
    row = _gcc_rows().get(mm_str(cuda))
    return int(row["gcc_max"]) if row else None


def gcc_cudas() -> tuple[str, ...]:
    return tuple(_gcc_rows())


# ---------------------------------------------------------------------------------------------
# Frameworks
# ---------------------------------------------------------------------------------------------


def variant_cuda(variant: str) -> str | None:
    """ "cu121" -> "12.1", "cu130" -> "13.0", "post118" -> "11.8"; None for cpu/default."""
    v = variant.lower()
    for prefix in ("cu", "post"):
        if v.startswith(prefix) and v[len(prefix):].isdigit() and len(v) - len(prefix) >= 3:
            digits = v[len(prefix):]
            return f"{int(digits[:-1])}.{int(digits[-1])}"
    return None


def release_key(version: str, known: tuple[str, ...]) -> str | None:
    """The release row a full version belongs to: "2.1.0" -> "2.1", "3.0.0b1" -> "3.0.0b"."""
    text = version.strip().split("+", 1)[0]
    pre = re.search(r"(a|b|rc)\d*$", text)
    if pre:  # "3.0.0rc0" and "3.0.0b1" are listed together as "3.0.0b"
        base = text[: pre.start()]
        if base + "b" in known:
            return base + "b"
        text = base
    for key in sorted(known, key=len, reverse=True):
        if key[-1].isdigit() and (text == key or text.startswith(key + ".")):
            return key
    return None


class TorchBuild(Plain):
    __slots__ = ("torch", "variant", "cuda", "cudnn", "sass", "ptx", "status", "pypi_default", "aarch64")

    def __init__(self, torch: str, variant: str, cuda: str | None, cudnn: str | None, sass: tuple[str, ...],
                 ptx: tuple[str, ...], status: str, pypi_default: bool = False,
                 aarch64: tuple[tuple[str, ...], tuple[str, ...]] | None = None) -> None:
        self.torch = torch  # release "2.1"
        self.variant = variant  # "cu121" | "cpu"
        self.cuda = cuda
        self.cudnn = cudnn
        self.sass = sass
        self.ptx = ptx
        self.status = status
        self.pypi_default = pypi_default
        self.aarch64 = aarch64  # (sass, ptx) of the aarch64 wheel; None = unknown


@cache
def _torch_rows() -> dict[str, dict[str, Any]]:
    return {r["torch"]: r for r in kb()["pytorch"]["releases"]}


def torch_releases() -> tuple[str, ...]:
    return tuple(_torch_rows())


def torch_status(version: str) -> str | None:
    key = torch_release(version)
    return _torch_rows()[key]["status"] if key else None


def torch_release(version: str) -> str | None:
    return release_key(version, torch_releases())


def torch_variants(version: str) -> tuple[str, ...]:
    """CUDA variants of a torch release (cu118, ...), without "cpu"; () if the release is unknown."""
    key = torch_release(version)
    return tuple(_torch_rows()[key]["variants"]) if key else ()


def torch_pypi_default(version: str) -> str | None:
    """The variant the plain PyPI wheel (Linux x86_64) of a torch release is built for: "cu121"."""
    key = torch_release(version)
    default = _torch_rows()[key].get("pypi_default") if key else None  # releases before 1.13: not read
    if default is None:
        return None
    cuda: str = default["cuda"]
    return "cu" + cuda.replace(".", "")


def torch_build(version: str, variant: str | None = None) -> TorchBuild | None:
    """What a torch wheel carries. ``variant`` None = the PyPI default wheel; "cpu" = CPU-only.

    None when the release or the variant is unknown. sass/ptx are () when the arch list was not read.
    """
    key = torch_release(version)
    if key is None:
        return None
    row = _torch_rows()[key]
    default = torch_pypi_default(key)
    variant = (variant or default or "").lower()
    if variant == "cpu":
        return TorchBuild(key, "cpu", None, None, (), (), row["status"])
    if variant not in row["variants"] and variant != default:
        return None
    cuda = variant_cuda(variant)
    is_default = variant == default
    # the PyPI wheel's own pin for the default build, else what the release matrix lists for the variant
    cudnn = (row["pypi_default"].get("cudnn") if is_default else None) or (row.get("cudnn") or {}).get(variant)
    arch = (row.get("arch") or {}).get(variant)
    sass, ptx = parse_arch_list(arch) if arch else ((), ())
    arm = (row.get("arch_aarch64") or {}).get(variant)
    return TorchBuild(key, variant, cuda, cudnn, sass, ptx, row["status"], is_default,
                      parse_arch_list(arm) if arm else None)


def _source_text(keys: list[str]) -> str:
    named = kb()["sources"]
    return "; ".join(named.get(k, k) for k in keys) or "cuenv/knowledge/data/cuda.yaml"


def cuda_tag_fact(variant: str) -> facts.Fact | None:
    """No for a cuXYZ tag of a CUDA release that never existed (cu127: there is no CUDA 12.7); None otherwise.

    Only inside the span of the release notes' driver table, which lists every release it covers.
    """
    cuda = variant_cuda(variant)
    if cuda is None:
        return None
    known = cuda_releases()
    if cuda in known or not (_mm(known[0]) <= _mm(cuda) <= _mm(known[-1])):
        return None
    return facts.no(f"there is no CUDA {cuda} release (NVIDIA's release notes list {known[0]} to {known[-1]}"
                    f" without it), so no {variant} build exists", "NVIDIA's CUDA Toolkit release notes, Table 3 (cuda.yaml: RN134, RN1322)")


def _after_next_release(key: str, variant: str) -> facts.Fact | None:
    """No for a CUDA newer than every build of torch's *next* release: PyTorch builds a release's wheels when it
    is cut, so torch 2.1 has no cu130 when even 2.2 stopped at cu121 (derived from the release matrix)."""
    cuda = variant_cuda(variant)
    rows = _torch_rows()
    releases = tuple(rows)
    if cuda is None or key not in releases or releases.index(key) + 1 >= len(releases):
        return None
    nxt_key = releases[releases.index(key) + 1]
    nxt = rows[nxt_key]
    newest = max((c for v in nxt["variants"] if (c := variant_cuda(v))), key=_mm, default=None)
    if newest is None or _mm(cuda) <= _mm(newest):
        return None
    return facts.no(f"CUDA {cuda} is newer than every build of torch {nxt_key} (the next release, newest"
                    f" {newest}), and a release's wheels are built when it is cut",
                    "derived from the release table (cuda.yaml: " + ", ".join(nxt.get("sources", [])) + ")")


def torch_variant_fact(version: str, variant: str) -> facts.Fact:
    """Is there a torch ``version`` build for ``variant`` (cu121, cpu)? Yes with the table that lists it,
    no where a source rules it out, else unknown: the release matrix names the builds it lists, not all of them."""
    key = torch_release(version)
    variant = variant.lower()
    if key is None:
        return facts.unknown(f"cuenv's tables do not know torch {version}")
    row = _torch_rows()[key]
    if variant == "cpu" or variant in row["variants"] or variant == torch_pypi_default(key):
        return facts.yes(f"torch {key} has a {variant} build", _source_text(row.get("sources", [])))
    ruled_out = cuda_tag_fact(variant) or _after_next_release(key, variant)
    if ruled_out is not None:
        return ruled_out
    listed = ", ".join(row["variants"])
    return facts.unknown(f"the release matrix cuenv read for torch {key} lists {listed}, not {variant};"
                         " PyTorch's index may still serve it")


class FrameworkBuild(Plain):
    __slots__ = ("framework", "release", "variant", "cuda", "cudnn", "status", "min_cc")

    def __init__(self, framework: str, release: str, variant: str, cuda: str | None, cudnn: str | None, status: str,
                 min_cc: str | None = None) -> None:
        self.framework = framework  # paddle | tensorflow | jax
        self.release = release
        self.variant = variant
        self.cuda = cuda
        self.cudnn = cudnn
        self.status = status
        self.min_cc = min_cc


@cache
def _paddle_rows() -> dict[str, dict[str, Any]]:
    return {r["paddle"]: r for r in kb()["paddlepaddle"]["releases"]}


def paddle_releases() -> tuple[str, ...]:
    return tuple(_paddle_rows())


def paddle_release(version: str) -> str | None:
    return release_key(version, paddle_releases())


def paddle_variants(version: str) -> tuple[str, ...]:
    key = paddle_release(version)
    return tuple(_paddle_rows()[key]["variants"]) if key else ()


def paddle_variant_fact(version: str, variant: str) -> facts.Fact:
    """Like torch_variant_fact, for paddlepaddle-gpu (variant post118 / default for 2.x, cu126 for 3.x)."""
    key = paddle_release(version)
    variant = variant.lower()
    if key is None:
        return facts.unknown(f"cuenv's tables do not know paddlepaddle-gpu {version}")
    row = _paddle_rows()[key]
    if variant in row["variants"]:
        return facts.yes(f"paddlepaddle-gpu {key} has a {variant} build", _source_text(row.get("sources", [])))
    ruled_out = cuda_tag_fact(variant)  # Paddle's per-CUDA indexes add builds of older releases: no next-release rule
    if ruled_out is not None:
        return ruled_out
    return facts.unknown(f"the install pages cuenv read for paddlepaddle-gpu {key} list {', '.join(row['variants'])},"
                         f" not {variant}; Paddle's index may still serve it")


def paddle_build(version: str, variant: str) -> FrameworkBuild | None:
    """paddlepaddle-gpu of a release and variant ("post118", "default" for 2.x; "cu126" for 3.x)."""
    key = paddle_release(version)
    if key is None:
        return None
    row = _paddle_rows()[key]
    v = row["variants"].get(variant.lower())
    if v is None:
        return None
    return FrameworkBuild("paddle", key, variant.lower(), v["cuda"], v.get("cudnn"), v.get("status", row["status"]))


@cache
def _tf_rows() -> dict[str, dict[str, Any]]:
    return {r["tf"]: r for r in kb()["tensorflow"]["releases"]}


def tf_releases() -> tuple[str, ...]:
    return tuple(_tf_rows())


def tf_build(version: str) -> FrameworkBuild | None:
    """The tested GPU configuration of a TensorFlow release: variant ``and-cuda`` where pip brings that CUDA
    (tensorflow[and-cuda] pins it), ``system-cuda`` for a release whose GPU wheel loads it from the system."""
    key = release_key(version, tf_releases())
    if key is None:
        return None
    r = _tf_rows()[key]
    variant = "system-cuda" if r.get("reading_only") else "and-cuda"
    return FrameworkBuild("tensorflow", key, variant, r["cuda"], r["cudnn"], r["status"])


def jax_plugin(extra: str) -> FrameworkBuild | None:
    """jax[cuda12] / jax[cuda13]: the CUDA the plugin is built with, its cuDNN and min cc."""
    for p in kb()["jax"]["plugins"]:
        if p["extra"] == extra.lower():
            return FrameworkBuild("jax", extra.lower(), extra.lower(), p["built_with"], p["cudnn"], p["status"], p.get("min_cc"))
    return None


def companion_torch(project: str, version: str) -> str | None:
    """The torch release PyPI's ``project`` (torchvision, torchaudio) ``version`` requires, None where the table
    does not list it (a local build such as 0.20.0+cu121 is the same release)."""
    base = version.split("+", 1)[0]
    return next((r["torch"] for r in kb()["torch_companions"]["releases"]
                 if r["project"] == project and r["release"] == base), None)


def onnxruntime_gpu_cuda(version: str) -> str | None:
    """The CUDA PyPI's onnxruntime-gpu ``version`` (a final release of a minor the table lists) was built with;
    None for a nightly or release candidate (1.25.0.dev20260210001), which the table does not describe."""
    if not re.fullmatch(r"\d+\.\d+(\.\d+)?", version):
        return None
    minor = ".".join(version.split(".")[:2])
    return next((r["cuda"] for r in kb()["onnxruntime_gpu"]["builds"] if r["release"] == minor), None)


def jax_extras() -> tuple[str, ...]:
    return tuple(p["extra"] for p in kb()["jax"]["plugins"])
