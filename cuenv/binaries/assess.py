"""A scan, judged for a machine: per library the SASS and PTX it carries, and findings. Pure.

For each GPU with a known compute capability every library with GPU code runs natively, only by
PTX JIT, or not at all (``coverage``); JIT also needs a driver whose CUDA level reaches the PTX ISA
version (``matrix.ptx_isa_cuda``). The architectures a recipe declares for its framework are held
against what the framework's own files carry. Every code is documented in docs/reference/findings.md.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Final

from cuenv.binaries import coverage
from cuenv.binaries.scan import FileReport, ScanReport
from cuenv.knowledge import compat, matrix, versions
from cuenv.knowledge.findings import SEVERITIES, Finding
from cuenv.knowledge.packages import kernel_packages
from cuenv.knowledge.stack import Stack
from cuenv.machine.model import Gpu, Machine

CODES: Final = ("kernels-missing", "kernels-ptx-too-new", "kernels-ptx-jit", "kernels-arch-mismatch",
                "kernels-unreadable", "kernels-not-checked", "kernels-none-found")

@dataclass(frozen=True)
class Run:
    cc: str
    status: str  # native | jit | none
    ptx_version: str | None = None  # the newest PTX ISA JIT compiles here
    jit_modules: int = 0  # modules that reach this GPU only by JIT
    missing_modules: int = 0  # modules without code for it (built for other GPUs)


@dataclass(frozen=True)
class Library:
    path: str  # relative to what was scanned
    owner: str | None  # "torch==2.5.1", "cuda-cudart 12.1.105 (conda)"
    sass: tuple[str, ...]  # nvcc names: sm_75, sm_90a
    ptx: tuple[str, ...]  # compute_90
    ptx_isa: str | None  # newest PTX ISA version carried
    modules: int  # fat binaries: one per translation unit
    runs: tuple[Run, ...] = ()  # one per distinct compute capability of the machine
    problems: tuple[str, ...] = ()

    def to_json(self) -> dict[str, object]:
        return {"path": self.path, "owner": self.owner, "sass": list(self.sass), "ptx": list(self.ptx),
                "ptx_isa": self.ptx_isa, "modules": self.modules, "problems": list(self.problems),
                "runs": [asdict(r) for r in self.runs]}


@dataclass(frozen=True)
class Assessment:
    target: str
    libraries: tuple[Library, ...]
    findings: tuple[Finding, ...]
    scanned: int  # binary-looking files looked at
    cached: int

    def to_json(self) -> dict[str, object]:
        return {"target": self.target, "scanned": self.scanned, "cached": self.cached,
                "libraries": [lib.to_json() for lib in self.libraries]}


def assess(report: ScanReport, machine: Machine, *, declared: Stack | None = None) -> Assessment:
    """Rows and findings for ``report`` on ``machine``; ``declared`` is the recipe's stack, if any."""
    ccs = _ccs(machine.gpus)
    libraries = tuple(_library(report.target, f, ccs) for f in report.files)
    findings: list[Finding] = [Finding("kernels-unreadable", "warning", p, "Give a wheel, a shared object or a folder.")
                               for p in report.problems]
    for f, lib in zip(report.files, libraries):
        if f.problems:
            findings.append(Finding("kernels-unreadable", "warning",
                                    f"{_who(lib)} could not be read completely: {'; '.join(f.problems)}.",
                                    "Reinstall the package that owns it; a truncated or damaged file fails when loaded."))
    with_code = [lib for lib in libraries if lib.modules]
    if not with_code and not findings:
        findings.append(Finding("kernels-none-found", "info",
                                f"No CUDA kernels (fat binaries) in the {report.scanned} shared objects of {report.target}."))
    elif not ccs and with_code:
        import shlex

        findings.append(Finding("kernels-not-checked", "info",
                                "No GPU with a known compute capability is given or detected; the kernels are listed, not checked.",
                                f"Name the GPU by its compute capability, e.g. `cuenv check {shlex.quote(report.target)} --cc 8.9` for an "
                                "RTX 4090 (or by its name with --gpu)."))
    # Libraries of a package whose other libraries run natively on a GPU are likely components the
    # package uses only on other GPUs (cuSPARSELt inside torch on a Pascal card): a warning, not an error.
    native = {(lib.owner, r.cc) for lib in with_code if lib.owner for r in lib.runs if r.status == coverage.NATIVE}
    for lib in with_code:
        for run in lib.runs:
            for found in _gpu_findings(lib, run, ccs[run.cc], machine):
                if found.severity == "error" and (lib.owner, run.cc) in native:
                    found = Finding(found.code, "warning", found.message + f" Other libraries of {lib.owner} run on it"
                                    " natively, so the package may use this one only on other GPUs.", found.fix)
                findings.append(found)
    if declared is not None:
        findings += _declared(declared, report.files, report.target)
    findings.sort(key=lambda f: SEVERITIES.index(f.severity))
    return Assessment(report.target, libraries, tuple(findings), report.scanned, report.cached)


def _ccs(gpus: tuple[Gpu, ...]) -> dict[str, str]:
    """Distinct compute capability -> how to name the GPUs that have it ("RTX 4090 (8.9)")."""
    out: dict[str, list[str]] = {}
    for gpu in gpus:
        if gpu.compute_capability:
            out.setdefault(gpu.compute_capability, []).append(gpu.name)
    return {cc: " and ".join(dict.fromkeys(names)) + f" ({cc})" for cc, names in out.items()}


def _library(root: str, f: FileReport, ccs: dict[str, str]) -> Library:
    runs = tuple(Run(cc, c.status, c.ptx_version, c.jit_modules, c.missing_modules)
                 for cc in ccs if (c := coverage.covers(f, cc)) is not None)
    isas = [e.ptx_version for e in f.entries if e.kind == "ptx" and e.ptx_version]
    modules = sum(any(e.loadable for e in fb.entries) for fb in f.fatbins)
    return Library(_relative(root, f.path), f.owner.label if f.owner else None, f.archs("sass"), f.archs("ptx"),
                   max(isas, key=coverage.cc_key) if isas else None, modules, runs, f.problems)


def _relative(root: str, path: str) -> str:
    if "!" in path:
        return path.split("!", 1)[1]
    prefix = root.rstrip("/") + "/"
    return path.removeprefix(prefix)


def _who(lib: Library) -> str:
    return f"{lib.path} ({lib.owner})" if lib.owner else lib.path


def _carries(lib: Library) -> str:
    parts = [f"SASS {' '.join(lib.sass)}"] if lib.sass else ["no SASS"]
    parts.append(f"PTX {' '.join(lib.ptx)}" if lib.ptx else "no PTX")
    return ", ".join(parts)


def _build_of(lib: Library) -> str:
    """ "a build of myext" when the owner is known, else "a build" """
    name = (lib.owner or "").split("==")[0].split(" ")[0]
    return f"a build of {name}" if name else "a build"


def _gpu_findings(lib: Library, run: Run, gname: str, machine: Machine) -> list[Finding]:
    cc = coverage.cc_key(run.cc)
    sm = f"sm_{cc[0]}{cc[1]}"
    rebuild = (f"rebuild it for this GPU (PyTorch extensions: TORCH_CUDA_ARCH_LIST=\"{run.cc}\";"
               f" nvcc: -gencode arch=compute_{cc[0]}{cc[1]},code={sm})")
    if run.status == coverage.NONE:
        return [Finding("kernels-missing", "error",
                        f"{_who(lib)} has no kernels for the {gname}: it carries {_carries(lib)}"
                        " ('no kernel image is available for execution on the device').",
                        f"Install {_build_of(lib)} with {sm} kernels, or {rebuild};"
                        f" `cuenv suggest --cc {run.cc}` names framework builds that cover it.")]
    if run.status != coverage.JIT:
        return []
    isa = run.ptx_version or "?"
    cuda = matrix.ptx_isa_cuda(isa)
    need = matrix.min_driver(cuda, machine.os) if cuda else None
    level = compat.driver_level(machine.driver, machine.os) if machine.driver else None
    if cuda and level and versions.cuda(level) < versions.cuda(cuda):
        return [Finding("kernels-ptx-too-new", "error",
                        f"{_who(lib)} has no SASS for the {gname}, only PTX (ISA {isa}, from CUDA {cuda}), and this driver"
                        f" supports CUDA {level}: it cannot JIT-compile it ('the provided PTX was compiled with an"
                        " unsupported toolchain').",
                        f"Install an NVIDIA driver >= {need or 'one for CUDA ' + cuda}, or {_build_of(lib)} with {sm} kernels.")]
    driver = (f" It needs a driver for CUDA >= {cuda}" + (f" (>= {need})" if need else "") + ".") if cuda else ""
    return [Finding("kernels-ptx-jit", "warning",
                    f"{_who(lib)} has no SASS for the {gname}; it runs by JIT-compiling its PTX (ISA {isa}) at first"
                    f" launch: a slow first start (cached in ~/.nv/ComputeCache) and possibly slower kernels.{driver}",
                    f"It runs as is; for native kernels install {_build_of(lib)} with {sm} SASS, or {rebuild}.")]


def _declared(stack: Stack, files: tuple[FileReport, ...], root: str) -> list[Finding]:
    """The recipe's arch list against the framework's main kernel library: the file it owns with the
    most modules (libtorch_cuda.so), not vendor libraries some builds bundle with other arch lists."""
    names = kernel_packages(stack.framework or "")  # the packages whose files are "the framework"
    own = [f for f in files if f.owner and f.owner.name.lower() in names and f.has_gpu_code]
    if not own or not (stack.sass or stack.ptx):
        return []
    main = max(own, key=lambda f: sum(any(e.loadable for e in fb.entries) for fb in f.fatbins))
    sass = {e.cc for e in main.entries if e.kind == "sass" and not e.empty}
    ptx = {e.cc for e in main.entries if e.kind == "ptx"}
    wrong = []
    for kind, said, have in (("SASS", set(stack.sass), sass), ("PTX", set(stack.ptx), ptx)):
        missing, extra = sorted(said - have, key=coverage.cc_key), sorted(have - said, key=coverage.cc_key)
        if missing:
            wrong.append(f"declares {kind} {', '.join(missing)} that it lacks")
        if extra:
            wrong.append(f"does not declare {kind} {', '.join(extra)} that it carries")
    if not wrong:
        return []
    who = f"{_relative(root, main.path)} ({main.owner.label})" if main.owner else _relative(root, main.path)
    return [Finding("kernels-arch-mismatch", "warning",
                    f"The recipe of {stack.label}, against {who}: {'; '.join(wrong)}. cuenv's checks follow the files,"
                    " not the declaration.",
                    "Correct the recipe's arch list (or the build table it comes from) to what the files carry.")]
