"""What doctor knows (Facts) and what it concludes (Check). Frozen records, no I/O.

Facts come either from this machine (``cuenv.doctor.gather``) or from pasted text
(``cuenv.doctor.report``). A section that is ``None`` was not observed at all (a report that
says nothing about nvcc); an observed absence is a section with empty values (no nvcc on PATH).
Checks skip what was not observed and say so in ``Facts.missing``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, cast

from cuenv.activation.target import CudaLayout
from cuenv.binaries.scan import ScanReport
from cuenv.knowledge.findings import Finding
from cuenv.knowledge.stack import Stack
from cuenv.machine.model import Machine

if TYPE_CHECKING:
    from cuenv.machine.toolkits import SystemToolkit
    from cuenv.result import JSON


@dataclass(frozen=True)
class Check:
    name: str  # driver | toolkits | libraries | cudnn | compiler | container | framework | machine | errors
    status: str  # ok | warning | error
    detail: tuple[str, ...] = ()  # what was seen, one line each
    findings: tuple[Finding, ...] = ()

    def to_json(self) -> dict[str, object]:
        return {"name": self.name, "status": self.status, "detail": list(self.detail),
                "findings": [f.to_json() for f in self.findings]}


@dataclass(frozen=True)
class Diagnosis:
    """`cuenv doctor`'s result: every check, and where its facts came from. ``missing`` (what a pasted
    report did not show) is None for this machine, where nothing is missing by construction."""

    origin: str  # "this machine" | "report"
    environment: str | None  # the environment looked inside, if any
    missing: tuple[str, ...] | None
    checks: tuple[Check, ...]

    @property
    def ok(self) -> bool:
        return all(c.status != "error" for c in self.checks)

    def to_json(self) -> dict[str, JSON]:
        data: dict[str, JSON] = {"ok": self.ok, "origin": self.origin, "checks": [cast("JSON", c.to_json()) for c in self.checks]}
        if self.environment is not None:
            data["environment"] = self.environment
        if self.missing is not None:
            data["missing"] = list(self.missing)
        return data


def make_check(name: str, detail: list[str] | tuple[str, ...], findings: list[Finding] | tuple[Finding, ...]) -> Check:
    """A check whose status is the worst severity among its findings (info counts as ok)."""
    findings = tuple(dict.fromkeys(findings))  # identical GPUs give identical findings: say each once
    sev = {f.severity for f in findings}
    status = "error" if "error" in sev else "warning" if "warning" in sev else "ok"
    return Check(name, status, tuple(detail), tuple(findings))


# --------------------------------------------------------------------------- sections


@dataclass(frozen=True)
class DeviceNode:
    path: str  # /dev/nvidia0
    readable: bool
    writable: bool


@dataclass(frozen=True)
class Resolution:
    """Where the dynamic loader would find one library, and why."""

    soname: str  # libcudart.so.12
    path: str | None  # None: not found
    via: str  # "LD_LIBRARY_PATH", "RUNPATH of .../libtorch_cuda.so", "linker cache", "default directory", "not found"
    version: str | None = None  # the library's CUDA (or cuDNN) release, "12.1.105"
    real_path: str | None = None


@dataclass(frozen=True)
class DriverFacts:
    kernel_module: str | None = None  # version of the loaded nvidia.ko
    kernel_module_source: str | None = None  # /proc/driver/nvidia/version | /sys/module/nvidia/version
    library: str | None = None  # version of the user-space driver library
    library_source: str | None = None  # "NVML", "libnvidia-ml.so.535.104.05", "report"
    nvml_error: str | None = None  # why NVML did not initialise
    device_nodes: tuple[DeviceNode, ...] | None = None  # None: not looked at (reports)
    libcuda: Resolution | None = None  # where libcuda.so.1 comes from (a toolkit stub is a classic)


@dataclass(frozen=True)
class CudaTool:
    """An nvcc (or ptxas) that PATH reaches, with the CUDA release it belongs to."""

    path: str
    version: str | None  # "13.0"
    tool: str = "nvcc"


@dataclass(frozen=True)
class ToolkitFacts:
    toolkits: tuple[SystemToolkit, ...] = ()
    nvcc: CudaTool | None = None  # the nvcc PATH finds first; None: no nvcc on PATH
    on_path: tuple[CudaTool, ...] = ()  # the nvcc/ptxas that run by name, in PATH order (one per folder)
    cuda_vars: tuple[tuple[str, str, str | None], ...] = ()  # (CUDA_HOME, value, its CUDA release)
    shims: tuple[str, ...] = ()  # cuenv shims on PATH that stand in for a missing tool (and run no other release)
    shadowed: tuple[CudaTool, ...] = ()  # later on PATH than a tool (or shim) of the same name: never run by name


@dataclass(frozen=True)
class LdEntry:
    path: str
    exists: bool
    cudart: tuple[str, ...] = ()  # CUDA releases of the libcudart files in it


@dataclass(frozen=True)
class LibraryFacts:
    ld_library_path: tuple[LdEntry, ...] = ()
    cache_source: str | None = None  # "ldconfig -p", "ldconfig -p -C FILE"; None: no cache read
    requester: str | None = None  # the library whose RPATH/RUNPATH was followed (libtorch_cuda.so)
    cudart: tuple[Resolution, ...] = ()  # every libcudart soname visible, resolved
    required: tuple[Resolution, ...] = ()  # what the environment/framework needs, resolved
    wanted_cuda: str | None = None  # the environment's CUDA release, when one is diagnosed


@dataclass(frozen=True)
class CudnnFacts:
    headers: tuple[tuple[str, str], ...] = ()  # (cudnn_version.h path, version)
    libraries: tuple[tuple[str, str | None], ...] = ()  # (real path of libcudnn.so.N, version)
    loaded: Resolution | None = None  # the libcudnn the loader would pick


@dataclass(frozen=True)
class CompilerFacts:
    gcc: str | None = None  # "12.2.0"; None: no gcc
    gcc_path: str | None = None
    host_compiler_var: tuple[str, str] | None = None  # ("CUDAHOSTCXX", "/usr/bin/g++-12")
    nvcc_version: str | None = None  # the nvcc it would be used with


@dataclass(frozen=True)
class ContainerFacts:
    engines: tuple[tuple[str, str], ...] = ()  # (docker, /usr/bin/docker)
    toolkit: tuple[tuple[str, str], ...] = ()  # (nvidia-ctk, path), (nvidia-container-cli, path)
    docker_runtimes: tuple[str, ...] = ()  # from /etc/docker/daemon.json
    daemon_json: str | None = None  # its path when it exists
    cdi_specs: tuple[str, ...] = ()


@dataclass(frozen=True)
class FrameworkProbe:
    name: str  # torch | paddle | tensorflow | jax
    version: str | None = None
    cuda: str | None = None  # what it was built with
    cudnn: str | None = None
    available: bool | None = None  # torch.cuda.is_available() and its peers
    device_count: int | None = None
    arch_list: tuple[str, ...] = ()  # sm_80, compute_90
    error: str | None = None  # import or query failure
    messages: tuple[str, ...] = ()  # warnings and errors it printed
    stack: Stack | None = None  # what `cuenv check` knows of this build (reports: from the version)


@dataclass(frozen=True)
class FrameworkFacts:
    python: str | None = None  # the interpreter asked; None: no environment to ask
    probes: tuple[FrameworkProbe, ...] = ()
    error: str | None = None  # the probe itself failed (timeout, no python)


@dataclass(frozen=True)
class EnvFacts:
    name: str
    active: bool  # from CUENV_ACTIVE rather than named
    stack: Stack | None = None
    layout: CudaLayout | None = None
    # how it is active: "shell" (use, run, .cuenv), "module" (Lmod/Tcl), or "simulated" (doctor applied it)
    route: str = "simulated"
    recipe: str | None = None
    tools_recorded: bool = True  # False: made before cuenv recorded and shimmed its CUDA tools
    compiler_hint: str | None = None  # the `cuenv create` that builds its recipe with nvcc, recorded at create


@dataclass(frozen=True)
class ErrorHit:
    """A well-known error message found in a report or in a framework's output."""

    text: str  # the line as found
    code: str
    severity: str
    message: str
    fix: str


@dataclass(frozen=True)
class Facts:
    origin: str  # "this machine" | "report"
    machine: Machine | None = None
    driver: DriverFacts | None = None
    toolkits: ToolkitFacts | None = None
    libraries: LibraryFacts | None = None
    cudnn: CudnnFacts | None = None
    compiler: CompilerFacts | None = None
    container: ContainerFacts | None = None
    framework: FrameworkFacts | None = None
    disk: tuple[str, int] | None = None  # (CUENV_HOME or its nearest existing parent, free bytes)
    env: EnvFacts | None = None
    kernels: ScanReport | None = None  # the fat binaries in the environment's shared objects (issue 20)
    errors: tuple[ErrorHit, ...] = ()
    missing: tuple[str, ...] = field(default=())
