"""Facts from pasted text: how maintainers triage "CUDA not available" reports (issue 8, --report).

Any mix of: the plain ``nvidia-smi`` table, ``nvidia-smi -q``, ``-q -x``, the query CSV (with its
header), ``python -m torch.utils.collect_env``, ``nvcc --version``, /proc/driver/nvidia/version,
``pip list`` / ``pip freeze`` / ``conda list`` lines, gcc's banner, and error messages or
tracebacks. Pure: text in, Facts out; nvidia-smi sections go through cuenv.machine.driver's parsers.
What the text does not say is listed in ``Facts.missing``.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Final

from cuenv.doctor import signatures
from cuenv.doctor.model import (
    CompilerFacts,
    CudaTool,
    CudnnFacts,
    DriverFacts,
    Facts,
    FrameworkFacts,
    FrameworkProbe,
    ToolkitFacts,
)
from cuenv.knowledge import packages
from cuenv.machine.model import Driver, Gpu, Machine

if TYPE_CHECKING:
    from cuenv.knowledge.stack import Stack
    from cuenv.machine.nvsmi import SmiReport

_QUOTE: Final = re.compile(r"^\s*(?:>\s?)+")  # markdown quotes around pasted output
# The packages a pasted `pip list`, `pip freeze` or `conda list` is read for (cuenv.knowledge.packages).
_NAMES: Final = sorted({*packages.framework_packages(), *packages.JAX_CUDA_WHEELS, *packages.cuda_package_names("libcudart"),
                        *packages.cuda_package_names("cudnn"), *packages.CONDA_CUDA_META}, key=lambda n: (-len(n), n))
_PKG: Final = re.compile(
    r"^\s*(?:\[(?:pip3?|conda)\]\s*)?(?P<name>" + "|".join(map(re.escape, _NAMES)) +
    r")\s*(?:==|\s)\s*(?P<version>\d[\w.+!-]*)(?:\s+(?P<build>\S+))?",
    re.IGNORECASE,
)


# A line of a real report is short (nvidia-smi's widest is ~120 characters, a pip line a few hundred). Longer
# lines are cut here, so no pattern below ever meets an unbounded line (issue 31 §8: one 300 kB line of
# capitals or spaces ran past 60 s); the patterns on the joined text are linear themselves.
MAX_LINE: Final = 2000


def _clean(text: str) -> list[str]:
    return [_QUOTE.sub("", line[:MAX_LINE].rstrip("\r")) for line in text.replace("\t", "    ").splitlines()]


def _smi_table(lines: list[str]) -> SmiReport | None:
    from cuenv.machine.nvsmi import parse_smi_table

    for i, line in enumerate(lines):
        if "NVIDIA-SMI" in line and re.search(r"(Driver|KMD) Version", line):
            start = i - 1 if i > 0 and lines[i - 1].lstrip().startswith("+") else i
            block = []
            for row in lines[start:]:
                stripped = row.strip()
                if stripped and stripped[0] not in "|+":
                    break
                block.append(stripped)
            report = parse_smi_table("\n".join(block))
            if report.driver_version or report.gpus:
                return report
    return None


def _smi_xml(text: str) -> SmiReport | None:
    from cuenv.machine.nvsmi import parse_smi_xml

    m = re.search(r"<nvidia_smi_log>.*?</nvidia_smi_log>", text, re.DOTALL)
    if not m:
        return None
    try:
        return parse_smi_xml(m.group(0))
    except ValueError:
        return None


def _smi_csv(lines: list[str]) -> SmiReport | None:
    from cuenv.machine.nvsmi import parse_smi_csv

    for i, line in enumerate(lines):
        low = line.strip().lower()
        if "," in low and ("driver_version" in low or "compute_cap" in low or low.startswith("index, name")):
            fields = [re.sub(r"\s*\[[^\]]*\]$", "", f.strip()) for f in line.split(",")]
            body = [line]
            for row in lines[i + 1:]:
                if row.count(",") != line.count(","):
                    break
                body.append(row)
            report = parse_smi_csv("\n".join(body), fields)
            if report.gpus:
                return report
    return None


def _smi_q(lines: list[str]) -> tuple[str | None, str | None, tuple[Gpu, ...]]:
    """``nvidia-smi -q``: "Driver Version : 535.104.05", "Product Name : ...", FB Memory Usage/Total."""
    driver = cuda = None
    gpus: list[Gpu] = []
    in_fb = False
    for line in lines:
        m = re.match(r"^\s*(Driver Version|CUDA Version|Product Name|Total)\s*:\s*(.+?)\s*$", line)
        if re.match(r"^\s*FB Memory Usage\s*$", line):
            in_fb = True
            continue
        if not m:
            continue
        key, value = m.groups()
        if key == "Driver Version":
            driver = driver or value
        elif key == "CUDA Version":
            cuda = cuda or value
        elif key == "Product Name":
            gpus.append(Gpu(index=len(gpus), name=value, compute_capability=None))
        elif key == "Total" and in_fb and gpus:
            mm = re.match(r"(\d+)\s*MiB", value)
            if mm:
                gpus[-1] = gpus[-1].replace(memory_mib=int(mm.group(1)))
            in_fb = False
    return driver, cuda, tuple(gpus)


def _raw_field(text: str, label: str) -> str | None:
    """``label: value`` on a line of its own (case-insensitive), without a pattern: linear in the text."""
    want = label.lower()
    for line in text.split("\n"):
        head = line.strip()
        if not head[: len(want)].lower() == want:
            continue
        rest = head[len(want):].lstrip()
        if rest.startswith(":") and rest[1:].strip():
            return rest[1:].strip()
    return None


_GCC: Final = re.compile(r"[ \t]*(?:[-*][ \t]+)?(?:GCC version:[ \t]*)?(?:gcc|g\+\+|cc)?[ \t]*\((?:[^()]|\([^()]*\))*\)"
                         r"[ \t]+(\d+\.\d+(?:\.\d+)?)(?:[ \t]+\d{8}.*)?[ \t]*$")
_CAPABILITY: Final = re.compile(r" with CUDA capability sm_(\d+)(\d) is not compatible")


def _capability_warning(text: str) -> tuple[str, str, str] | None:
    """torch's "NVIDIA H100 with CUDA capability sm_90 is not compatible": (the GPU's name, major, minor).
    The name is the line from its first capital letter up to the phrase; found from the phrase, not by a
    pattern that tries every capital of a long line."""
    for m in _CAPABILITY.finditer(text):
        head = text[text.rfind("\n", 0, m.start()) + 1: m.start()]
        first = next((i for i, c in enumerate(head) if "A" <= c <= "Z"), None)
        if first is not None and len(head) - first >= 2:
            return head[first:], m.group(1), m.group(2)
    return None


def _field(text: str, label: str) -> str | None:
    """A collect_env field, None when absent or empty ("Could not collect", "N/A", "None", Mac's "No CUDA")."""
    value = _raw_field(text, label)
    if value is None or re.match(r"(could not collect|n/a|none|no cuda)$", value, re.IGNORECASE):
        return None
    return value


def _smi_header(text: str) -> tuple[str | None, str | None]:
    """The nvidia-smi header line pasted on its own, without the table border:
    "NVIDIA-SMI 450.51.05    Driver Version: 450.51.05    CUDA Version: 11.0"."""
    m = re.search(r"NVIDIA-SMI\s+[\d.]+\s+(?:Driver|KMD) Version:\s*(\d+\.\d+(?:\.\d+)?)"
                  r"(?:\s+CUDA(?: UMD)? Version:\s*(\d+\.\d+))?", text)
    return (m.group(1), m.group(2)) if m else (None, None)


def _collect_env_gpus(lines: list[str]) -> tuple[Gpu, ...]:
    gpus: list[Gpu] = []
    for i, line in enumerate(lines):
        m = re.match(r"^\s*GPU models and configuration\s*:\s*(.*)$", line)
        if not m:
            continue
        rows = [m.group(1)] + lines[i + 1:i + 17]
        for row in rows:
            g = re.match(r"^\s*GPU (\d+)\s*:\s*(.+?)\s*(?:\(UUID:.*)?$", row)
            if g:
                gpus.append(Gpu(int(g.group(1)), g.group(2), None))
            elif row is rows[0] and row.strip() and not re.match(r"(could not collect|no cuda|$)", row.strip(), re.I):
                gpus.append(Gpu(0, row.strip(), None))
            elif row is not rows[0]:
                break
        break
    return tuple(gpus)


_Packages = dict[str, tuple[str, str | None]]  # pip's name -> (version, ...) as the report lists them


def _packages(lines: list[str]) -> _Packages:
    found: dict[str, tuple[str, str | None]] = {}
    for line in lines:
        m = _PKG.match(line)
        if m:
            found.setdefault(m.group("name").lower(), (m.group("version"), m.group("build")))
    return found


def _cuda_of_tag(text: str | None) -> str | None:
    """ "+cu121" / "post118" / "cuda12.1" (conda build strings) -> "12.1"."""
    if not text:
        return None
    m = re.search(r"(?:\+cu|post|cuda_?)(\d{2,3})(?!\d|\.\d)", text)
    if m:
        d = m.group(1)
        return f"{int(d[:-1])}.{d[-1]}"
    m = re.search(r"cuda(\d+)\.(\d+)", text)
    return f"{m.group(1)}.{m.group(2)}" if m else None


def _mm_digits(cuda: str) -> str:
    """ "12.1.105" -> "121"."""
    return "".join(cuda.split(".")[:2])


def _spec_stack(spec: str) -> Stack | None:
    from cuenv.knowledge.specs import parse_spec

    try:
        return parse_spec(spec)
    except Exception:  # noqa: BLE001 - a release the knowledge base does not know
        return None


def _torch(text: str, lines: list[str], pkgs: _Packages) -> FrameworkProbe | None:
    version = _field(text, "PyTorch version")
    built = _field(text, "CUDA used to build PyTorch")
    # torch.version.cuda is None in a CPU-only build: collect_env prints "None" (older: "Could not collect")
    built_raw = _raw_field(text, "CUDA used to build PyTorch")
    cpu_build = built is None and built_raw is not None and _cuda_of_tag(version) is None
    available = _field(text, "Is CUDA available")
    if available is None:  # a pasted session: torch.cuda.is_available() and, a few lines on, False
        said = re.search(r"torch\.cuda\.is_available\(\)[^\n]*\n(?:[^\n]*\n){0,3}?\s*(?:>>>\s*|return\s+)?(True|False)\s*$",
                         text, re.MULTILINE)
        available = said.group(1) if said else None
    pkg = pkgs.get("torch") or pkgs.get("pytorch")
    if version is None and pkg:
        version = pkg[0]
    if version is None and built is None:  # "pip install torch==1.8.1+cu102 ..." in the text
        pinned = re.search(r"(?<![\w-])torch==(\d[\w.+]*)", text)
        version = pinned.group(1) if pinned else None
    if version is None and built is None:
        return None
    cuda = built or _cuda_of_tag(version) or _cuda_of_tag(pkg[1] if pkg and pkg[1] else None)
    cpu = cpu_build or bool(re.search(r"\+cpu\b", version or "")) or \
        (pkg is not None and bool(re.search(r"(^|_)cpu(_|$)", pkg[1] or "")))
    if cpu:
        cuda = None
    arch = ()
    m = re.search(r"current PyTorch install supports CUDA capabilities ((?:sm_\d+\s*)+)", text)
    if m:
        arch = tuple(m.group(1).split())
    stack = None
    if version:  # the knowledge base knows the build's arch list and cuDNN
        base = re.sub(r"\+.*$", "", version)
        tag = "cpu" if cpu else (f"cu{_mm_digits(cuda)}" if cuda else None)
        stack = _spec_stack(f"torch=={base}" + (f"+{tag}" if tag else ""))
    if stack is not None:
        cuda = cuda or stack.cuda
        if arch:  # what the installed build says it carries beats the knowledge base
            stack = stack.replace(sass=tuple(f"{a[3:-1]}.{a[-1]}" for a in arch), ptx=())
    probe = FrameworkProbe(
        name="torch", version=version, cuda=None if cpu else cuda,
        available=None if available is None else available.strip().lower() in ("true", "yes"),
        arch_list=arch, stack=stack,
    )
    return probe


def _jax(pkgs: _Packages) -> FrameworkProbe | None:
    """jaxlib from pip list / freeze: a +cudaNN local tag (JAX's own index) or a CUDA plugin beside it."""
    if "jaxlib" not in pkgs:
        return None
    version = pkgs["jaxlib"][0]
    plugin = next((f"cuda{n}" for n in ("13", "12") if f"jax-cuda{n}-plugin" in pkgs), None)
    spec = f"jaxlib=={version}" if "+cuda" in version or plugin is None else f"jax[{plugin}]=={version.partition('+')[0]}"
    stack = _spec_stack(spec)
    return FrameworkProbe(name="jax", version=version, cuda=stack.cuda if stack else None, stack=stack)


def _other_frameworks(pkgs: _Packages) -> list[FrameworkProbe]:
    found: list[FrameworkProbe] = [p for p in (_jax(pkgs),) if p]
    for name, dist in [*(("paddle", d) for d in packages.FRAMEWORKS["paddle"]), ("tensorflow", "tensorflow")]:
        if dist in pkgs and not any(p.name == name for p in found):
            version = pkgs[dist][0]
            cuda = _cuda_of_tag(version) if dist != "tensorflow" else None
            stack = _spec_stack(f"{dist}=={version}")
            found.append(FrameworkProbe(name=name, version=version, cuda=cuda or (stack.cuda if stack else None),
                                        stack=stack))
    return found


def parse(text: str) -> Facts:
    """Everything the text says, as Facts; what it does not say goes to ``missing``."""
    from cuenv.knowledge.matrix import max_cuda_for_driver
    from cuenv.machine.nvsmi import parse_proc_version
    from cuenv.machine.toolkits import parse_nvcc_version

    lines = _clean(text)
    joined = "\n".join(lines)
    missing: list[str] = []

    # -- driver and GPUs: nvidia-smi (table, -q -x, CSV, -q), collect_env, /proc
    table, xml, csv = _smi_table(lines), _smi_xml(joined), _smi_csv(lines)
    q_driver, q_cuda, q_gpus = _smi_q(lines)
    head_driver, head_cuda = _smi_header(joined)
    smi_driver = next((r.driver_version for r in (table, xml, csv) if r and r.driver_version), None) or q_driver \
        or head_driver
    smi_cuda = next((r.cuda_version for r in (table, xml) if r and r.cuda_version), None) or q_cuda or head_cuda
    gpus = next((r.gpus for r in (table, xml, csv) if r and r.gpus), ()) or q_gpus or _collect_env_gpus(lines)
    driver_version = smi_driver or _field(joined, "Nvidia driver version")
    module = None
    m = re.search(r"^.*NVRM version:.*$", joined, re.MULTILINE)
    if m:
        module = parse_proc_version(m.group(0))
    warn = _capability_warning(joined)
    if warn and not gpus:
        gpus = (Gpu(0, warn[0].strip(), f"{warn[1]}.{warn[2]}"),)
    paddle = re.search(r"GPU Compute Capability: (\d+\.\d+), Driver API Version: (\d+\.\d+)", joined)
    if paddle and not gpus:
        gpus = (Gpu(0, f"GPU with compute capability {paddle.group(1)}", paddle.group(1)),)
    driver_version = driver_version or module
    driver = None
    if driver_version or smi_cuda:
        level = re.match(r"\d+\.\d+", smi_cuda or "")
        # "CUDA Version: N/A" (Jetson's nvgpu driver): NVIDIA's dGPU table says nothing about that driver
        said_na = re.search(r"CUDA(?: UMD)? Version:\s*N/A", joined) is not None
        max_cuda = level.group(0) if level else (
            max_cuda_for_driver(driver_version) if driver_version and not said_na else None)
        jetson = _jetson_level(driver_version, gpus) if not level else None
        driver = Driver(driver_version or "", jetson or max_cuda, "report")
    elif paddle:  # Paddle's "Driver API Version" is the newest CUDA the driver supports
        driver = Driver("", paddle.group(2), "report")
    gpus = tuple(_complete(g) for g in gpus)
    machine = Machine(driver=driver, gpus=gpus) if (driver or gpus) else None
    if driver is None:
        missing.append("no driver version in the report (paste `nvidia-smi` or /proc/driver/nvidia/version)")
    if not gpus:
        missing.append("no GPU model in the report (paste `nvidia-smi` or `nvidia-smi -L`)")
    nvml_lib = re.search(r"NVML library version:\s*([\d.]+)", joined)
    nvml_error = re.search(r"Failed to initialize NVML:\s*(.+)", joined)
    driver_facts = None
    if module or nvml_lib or nvml_error:
        driver_facts = DriverFacts(
            kernel_module=module, kernel_module_source="/proc/driver/nvidia/version" if module else None,
            library=nvml_lib.group(1) if nvml_lib else None, library_source="NVML library version" if nvml_lib else None,
            nvml_error=nvml_error.group(1).strip() if nvml_error else None,
        )

    # -- toolkit: nvcc --version, or collect_env's "CUDA runtime version" (which is nvcc's)
    nvcc = parse_nvcc_version(joined)
    if nvcc is None:
        runtime = _field(joined, "CUDA runtime version")
        mm = re.match(r"\d+\.\d+", runtime or "")
        if mm:
            nvcc = mm.group(0)
    toolkit = ToolkitFacts(nvcc=CudaTool("nvcc (from the report)", nvcc)) if nvcc else None
    if toolkit is None:
        missing.append("no nvcc version in the report (paste `nvcc --version`)")

    # -- packages, frameworks, cuDNN, compiler
    pkgs = _packages(lines)
    probes = [p for p in (_torch(joined, lines, pkgs),) if p] + _other_frameworks(pkgs)
    framework = FrameworkFacts(python="report", probes=tuple(probes)) if probes else None
    if framework is None:
        missing.append("no framework version in the report (paste `python -m torch.utils.collect_env` or `pip list`)")
    cudnn_libs = []
    for m in re.finditer(r"(/\S*libcudnn\.so\.(\d+\.\d+\.\d+))", joined):
        cudnn_libs.append((m.group(1), m.group(2)))
    for dist in packages.cuda_package_names("cudnn"):
        if dist in pkgs:
            cudnn_libs.append((f"{dist} (package)", pkgs[dist][0]))
    cudnn_field = _field(joined, "cuDNN version")
    if cudnn_field and re.fullmatch(r"\d+(\.\d+)*", cudnn_field):
        cudnn_libs.append(("cuDNN version (collect_env)", cudnn_field))
    cudnn = CudnnFacts(libraries=tuple(dict.fromkeys(cudnn_libs))) if cudnn_libs else None
    if cudnn is None:
        missing.append("no cuDNN version in the report")
    gcc = None
    for line in lines:  # one line at a time: the pattern's runs of \s* met an unbounded line before
        m = _GCC.match(line) if "(" in line else None
        if m:
            gcc = m.group(1)
            break
    unsupported = re.search(r"gcc versions later than (\d+) are not supported", joined)
    compiler = CompilerFacts(gcc=gcc, nvcc_version=nvcc) if gcc else None
    if compiler is None and not unsupported:
        missing.append("no gcc version in the report")

    errors = signatures.scan(lines) + signatures.context(joined)
    if not errors:
        missing.append("no error message recognised in the report")
    return Facts(origin="report", machine=machine, driver=driver_facts, toolkits=toolkit, cudnn=cudnn,
                 compiler=compiler, framework=framework, errors=errors, missing=tuple(missing))


def _jetson_level(driver_version: str | None, gpus: tuple[Gpu, ...]) -> str | None:
    """A Jetson board's L4T driver (580.00 on a Thor) numbers differently: the CUDA level boards report."""
    from cuenv.knowledge import gpus as catalogue
    from cuenv.knowledge.matrix import jetson_driver_cuda

    if not driver_version or not any((m := catalogue.lookup(g.name)) and m.platform == "jetson" for g in gpus):
        return None
    return jetson_driver_cuda(driver_version)


def _complete(gpu: Gpu) -> Gpu:
    from cuenv.knowledge import gpus as catalogue

    model = catalogue.lookup(gpu.name) if gpu.name else None
    cc = gpu.compute_capability or (model.compute_capability if model else None)
    memory = gpu.memory_mib if gpu.memory_mib is not None else (model.memory_mib if model else None)
    return gpu.replace(compute_capability=cc, memory_mib=memory,
                       architecture=catalogue.architecture_for(cc) if cc else gpu.architecture)
