"""Will this stack run on that machine? Pure: (Stack, Machine) -> findings. No I/O, no printing.

Two axes (docs/concepts/compatibility.md):
  driver -> CUDA: the driver must reach the build's CUDA major family floor (minor-version
      compatibility); below the release's own minimum it runs with a reduced feature set.
  GPU -> arch list: the build needs SASS of the GPU's major with a minor <= the GPU's, or PTX
      for a compute capability <= the GPU's that the driver can JIT.
Every code is documented in docs/reference/findings.md.
"""

from __future__ import annotations

import re

from cuenv.knowledge import builds, gpus, matrix, versions
from cuenv.knowledge.findings import Finding, no_gpu_here
from cuenv.knowledge.stack import Stack

TYPE_CHECKING = False  # no `typing` at run time: `check` starts here (issue 29)
if TYPE_CHECKING:  # knowledge sits below machine: the records are only named here (issue 24 §5)
    from typing import Final, Sequence

    from cuenv.machine.model import Driver, Gpu, Machine

CODES: Final = (
    "no-driver", "driver-unknown", "driver-too-old", "driver-minor-compat", "no-gpu",
    "gpu-unknown-cc", "arch-unsupported", "arch-ptx-jit", "arch-unknown", "cpu-only-build",
    "cudnn-mismatch", "compiler-too-new", "compiler-unknown", "os-unsupported", "build-unknown",
    "gpu-ignored-by-driver",
)
PLATFORMS: Final = ("linux-x86_64", "linux-sbsa", "jetson", "windows")


def platform_of(machine: Machine) -> str:
    """linux-x86_64, linux-sbsa (aarch64 with a discrete or Grace GPU), jetson (an L4T board) or windows.

    A GPU name implies its platform where the part only exists there: "NVIDIA Thor" and "Orin" are
    Jetson boards, GH200/GB200/GB10 sit beside an Arm CPU (gpus.yaml ``platform``).
    """
    if machine.os == "windows":
        return "windows"
    implied = {m.platform for g in machine.gpus if (m := gpus.lookup(g.name)) is not None and m.platform}
    if "jetson" in implied:
        return "jetson"
    if "sbsa" in implied or machine.arch in ("aarch64", "arm64"):
        return "linux-sbsa"
    return "linux-x86_64"


def verdict(findings: Sequence[Finding]) -> bool:
    """True (runs) when no finding is an error."""
    return not any(f.severity == "error" for f in findings)


# Findings that leave the verdict open: cuenv cannot confirm a pairing the answer rests on (issue 25 §3).
UNKNOWN_CODES: Final = frozenset({"build-unknown"})
# What leaves the check of a file or folder open, where its kernels are all there is to judge by: no GPU
# code in it, or no GPU with a known compute capability to hold the code against (an environment's check
# says what its recipe's stack says, with these as information).
NO_KERNEL_EVIDENCE: Final = frozenset({"kernels-none-found", "kernels-not-checked"})


def state_of(findings: Sequence[Finding], ok: bool, *, kernels_only: bool = False) -> str:
    """runs | does-not-run | unknown: the three-valued verdict. Unknown where a build cannot be
    confirmed, where the only errors say this machine has no driver or GPU to judge by (issue 30 §4),
    or, for a file judged by its kernels alone (``kernels_only``), where they give nothing to judge by."""
    if not ok:
        return "unknown" if no_gpu_here(findings) else "does-not-run"
    open_codes = UNKNOWN_CODES | NO_KERNEL_EVIDENCE if kernels_only else UNKNOWN_CODES
    return "unknown" if any(f.code in open_codes for f in findings) else "runs"


def check(stack: Stack, machine: Machine, *, gcc: str | None = None) -> list[Finding]:
    """Every finding about running ``stack`` on ``machine``, errors first; fixes name real builds."""
    return _Checker(stack, machine, gcc, fixes=True).run()


def suggest(candidates: Sequence[Stack], machine: Machine) -> tuple[Stack | None, list[str]]:
    """The newest-CUDA candidate that runs on ``machine`` and covers every GPU, with the reasoning.

    Builds whose arch list cuenv does not know rank below those known to cover every GPU.
    Ties on CUDA go to fewer warnings, then the newer framework release.
    """
    lines = [describe_machine(machine)]
    runnable: list[tuple[tuple[bool, tuple[int, ...], int, tuple[int, ...]], Stack, list[Finding]]] = []
    rejected: dict[str, int] = {}
    for cand in candidates:
        found = _Checker(cand, machine, None, fixes=False).run()
        if verdict(found):
            warnings = sum(f.severity == "warning" for f in found)
            known = _covers(cand, machine, found)
            runnable.append(((known, _vkey(cand.cuda), -warnings, _vkey(cand.framework_version)), cand, found))
        else:
            for code in {f.code for f in found if f.severity == "error"}:
                rejected[code] = rejected.get(code, 0) + 1
    # A reason that rules out every candidate is about the machine (no driver): said once, without
    # the per-build counts it would drown ("32 x no-driver, 2 x cudnn-mismatch", issue 18).
    everywhere = sorted(code for code, n in rejected.items() if n == len(candidates))
    if everywhere:
        lines.append(f"ruled out: all {len(candidates)} candidates ({', '.join(everywhere)})")
    elif rejected:
        lines.append("ruled out: " + ", ".join(f"{n} x {code}" for code, n in sorted(rejected.items(), key=lambda kv: -kv[1]))
                     + f" (of {len(candidates)} candidates)")
    if not runnable:
        lines.append("no candidate runs here")
        return None, lines
    runnable.sort(key=lambda item: item[0], reverse=True)
    key, best, found = runnable[0]
    why = "the newest CUDA this driver runs with a build that covers every GPU"
    if not key[0] and machine.gpus:
        why = "the newest CUDA this driver runs; its arch list is not known to cuenv"
    lines.append(f"picked {best.label}: CUDA {best.cuda or 'none (CPU)'}, {why}")
    lines.extend(f"note ({f.code}): {f.message}" for f in found if f.severity != "info")
    return best, lines


def describe_machine(machine: Machine) -> str:
    d = machine.driver
    if d is None:
        drv = "no NVIDIA driver"
    elif not d.version and not d.max_cuda:
        drv = "driver not given"
    else:
        platform = platform_of(machine)
        level = matrix.jetson_driver_cuda(d.version) if platform == "jetson" and d.version else None
        drv = "driver " + (f"{d.version}, a Jetson (L4T) driver that supports CUDA {level}" if level else _have(d, machine.os))
    names = ", ".join(f"{g.name} ({g.compute_capability or 'cc unknown'})" for g in machine.gpus) or "no GPU"
    platform = platform_of(machine)
    where = machine.os if platform in ("linux-x86_64", "windows") else f"{machine.os} ({platform})"
    return f"machine: {drv}; {names}; {where}"


# ---------------------------------------------------------------------------------------------


def _vkey(text: str | None) -> tuple[int, ...]:
    return tuple(int(p) for p in re.findall(r"\d+", text or ""))


def _name(stack: Stack) -> str:
    if stack.framework == "torch" and stack.framework_version:
        local = stack.variant or (f"cu{stack.cuda.replace('.', '')}" if stack.cuda else None)
        return f"torch {stack.framework_version}" + (f"+{local}" if local else "")
    if stack.framework is None and stack.has_nvcc and stack.cuda:
        return f"CUDA {stack.cuda}"
    return stack.label.replace("==", " ")


def _have(driver: Driver, os_name: str) -> str:
    level = driver_level(driver, os_name)
    if driver.version:
        return driver.version + (f", which supports CUDA {level}" if level else "")
    return f"a driver that supports CUDA {level}" + (" (CONDA_OVERRIDE_CUDA)" if driver.source == "override" else "")


def system_requirement(cuda: str, where: str, machine: Machine) -> Finding | None:
    """A project tool's own requirement of the driver, checked before it installs anything (pixi's
    ``[system-requirements] cuda``, cuenv.lock.foreign.piximanifest): unmet, the tool refuses the machine
    whatever its packages need, so the project does not run there. None where it is met or no driver is known."""
    driver = machine.driver
    level = driver_level(driver, machine.os) if driver is not None else None
    if driver is None or level is None or not _cuda_lt(level, cuda):
        return None
    need = matrix.min_driver(cuda, machine.os)
    driver_for = f"an NVIDIA driver >= {need} (CUDA {cuda})" if need else f"an NVIDIA driver that supports CUDA {cuda}"
    return Finding("driver-too-old", "error",
                   f"{where}: pixi installs and runs the project only where the driver supports CUDA {cuda} or newer "
                   f"(it stops at \"a mismatching virtual package\"); this machine has {_have(driver, machine.os)}.",
                   f"Install {driver_for}, or, where the project's packages run on CUDA {level}, lower that requirement "
                   "in the manifest.")


def driver_level(driver: Driver, os_name: str, jetson: str | None = None) -> str | None:
    """Newest CUDA major.minor the driver supports: what it reported, else what the table says."""
    if jetson:
        return jetson
    if driver.max_cuda:
        return matrix.mm_str(driver.max_cuda)
    if driver.version:
        return matrix.max_cuda_for_driver(driver.version, os_name)
    return None


def _lt(a: str, b: str) -> bool:
    return versions.driver(a) < versions.driver(b)


def _cuda_lt(a: str, b: str) -> bool:
    return versions.cuda(matrix.mm_str(a)) < versions.cuda(matrix.mm_str(b))


class _Checker:
    def __init__(self, stack: Stack, machine: Machine, gcc: str | None, fixes: bool) -> None:
        self.stack, self.machine, self.gcc, self.fixes = stack, machine, gcc, fixes

    def run(self) -> list[Finding]:
        self.out: list[Finding] = []
        self.minor_compat = False  # the driver is below the release's own minimum
        self.platform = platform_of(self.machine)
        drv = self.machine.driver
        # a Jetson (L4T) driver numbers differently: judged by the CUDA level it reports
        self.jetson_level = (matrix.jetson_driver_cuda(drv.version) if self.platform == "jetson" and drv
                             and drv.version else None)
        self._os()
        self._unknown_build()
        if self.stack.cuda is None:
            self._cpu_only()
        else:
            self._driver()
            self._gpus()
            self._cudnn()
        self._compiler()
        order = {"error": 0, "warning": 1, "info": 2}
        return sorted(self.out, key=lambda f: order[f.severity])

    def add(self, code: str, severity: str, message: str, fix: str | None = None) -> None:
        self.out.append(Finding(code, severity, message, fix))

    # -- OS ----------------------------------------------------------------------------------
    def _os(self) -> None:
        if self.machine.os not in self.stack.os:
            on = " or ".join(self.stack.os)
            fix = "Run it on Linux" + (" (on Windows: inside WSL2)" if "linux" in self.stack.os else "") + "."
            self.add("os-unsupported", "error", f"{_name(self.stack)} is built for {on}, not {self.machine.os}.", fix)

    # -- a build the tables neither list nor rule out ---------------------------------------
    def _unknown_build(self) -> None:
        stack = self.stack
        if stack.unknown is None:
            return
        self.add("build-unknown", "info",
                 f"cuenv does not know whether {_name(stack)} exists: {stack.unknown}. It was judged by its CUDA tag"
                 f" ({stack.cuda or 'none'}) alone; its arch list and cuDNN are unknown.",
                 _confirm_build(stack))

    # -- CPU-only ------------------------------------------------------------------------------
    def _cpu_only(self) -> None:
        gpus = self.machine.gpus
        if not gpus:
            self.add("cpu-only-build", "info", f"{_name(self.stack)} is a CPU-only build: it needs no driver or GPU.")
            return
        names = ", ".join(f"{g.name} ({g.compute_capability or 'cc unknown'})" for g in gpus)
        fix = self._nearest("Install a GPU build instead")
        self.add("cpu-only-build", "warning",
                 f"{_name(self.stack)} is a CPU-only build: it will not use the {names} on this machine.", fix)

    # -- driver -> CUDA ------------------------------------------------------------------------
    def _driver(self) -> None:
        stack, os_name = self.stack, self.machine.os
        cuda = matrix.mm_str(_cuda(stack))
        major = versions.cuda(cuda).major
        floor = matrix.family_floor(major, os_name)
        full = matrix.min_driver(cuda, os_name)
        need = floor or full  # what it takes to run at all
        built = matrix.variant_cuda(stack.variant) if stack.variant and stack.variant.startswith("cu") else None
        # a framework built with an older CUDA beside newer CUDA packages: the driver serves the newest
        name = _name(stack) if built in (None, cuda) else f"CUDA {cuda}"
        driver = self.machine.driver
        if driver is None:
            self.add("no-driver", "error",
                     f"No NVIDIA driver was found; {name} needs a driver >= {need or 'R' + str(major)} (CUDA {major}.x)"
                     + ("" if self.machine.gpus else " and a GPU") + ".",
                     self._driver_fix(cuda, full, floor, none_found=True))
            return
        level = driver_level(driver, os_name, self.jetson_level)
        if not driver.version and not level:
            self.add("driver-unknown", "info",
                     f"No driver version was given; the driver check for {name}"
                     + ("" if name == f"CUDA {cuda}" else f" (CUDA {cuda})") + " was skipped.",
                     "Give the target machine's driver with --driver (its nvidia-smi shows the version).")
            return
        have = _have(driver, os_name)
        if self.jetson_level:
            have = f"{driver.version}, a Jetson (L4T) driver that supports CUDA {self.jetson_level}"
        too_old = False
        by_number = driver.version and not self.jetson_level  # L4T numbers are not on NVIDIA's desktop table
        if by_number and need:
            too_old = _lt(driver.version, need)
        elif level:  # compare by CUDA level only (CONDA_OVERRIDE_CUDA, or unpublished minimums)
            too_old = versions.cuda(level).major < major or (floor is None and _cuda_lt(level, cuda))
        if too_old:
            what = (f"a driver >= {need} (CUDA {major}.x)" if need and floor else f"a driver >= {need} (CUDA {cuda})"
                    if need else f"a driver that supports CUDA {major}.x")
            self.add("driver-too-old", "error", f"{name} needs {what}; this machine has {have}.",
                     self._driver_fix(cuda, full, floor))
            return
        if by_number and full:
            self.minor_compat = _lt(driver.version, full)
        elif level:
            self.minor_compat = _cuda_lt(level, cuda)
        if self.minor_compat:
            self.add("driver-minor-compat", "warning",
                     (f"{name}'s full feature set needs " if name == f"CUDA {cuda}"  # not "CUDA 12.9 is built with CUDA 12.9"
                      else f"{name} is built with CUDA {cuda}, whose full feature set needs ")
                     + (f"a driver >= {full}" if full else f"a CUDA {cuda} driver")
                     + f"; this machine has {have}, so it runs under minor-version compatibility: PTX JIT and APIs newer than"
                     f" CUDA {level or '?'} are unavailable.",
                     f"Most workloads run as is; for the full feature set install an NVIDIA driver >= {full}."
                     if full else "Most workloads run as is; for the full feature set update the NVIDIA driver.")

    def _driver_fix(self, cuda: str, full: str | None, floor: str | None, *, none_found: bool = False) -> str | None:
        if not self.fixes:
            return None
        if full:
            text = f"Install an NVIDIA driver >= {full} (full CUDA {cuda} support"
            text += f"; >= {floor} runs it under minor-version compatibility)" if floor and floor != full else ")"
        elif floor:
            text = f"Install an NVIDIA driver >= {floor}"
        else:
            text = f"Install an NVIDIA driver that supports CUDA {cuda}"
        if none_found:
            # a command that exists and runs as written (issues 17 §4, 30 §4): the stack's CUDA and the
            # driver it needs, not placeholders (`cuda==X.Y` is a target every check accepts)
            need = full or floor
            if need:
                return text + f", or check its CUDA for a machine with that driver: `cuenv check cuda=={cuda} --driver {need}`."
            return text + "."
        return self._nearest(text)

    # -- GPU -> arch list ----------------------------------------------------------------------
    def _gpus(self) -> None:
        driver = self.machine.driver
        if not self.machine.gpus:
            if driver is not None:
                self.add("no-gpu", "warning",
                         "No GPU is known for this machine (none detected, none given with --gpu/--cc);"
                         f" the compute-capability check of {_name(self.stack)} was skipped.",
                         "Check that the GPU is visible (nvidia-smi, CUDA_VISIBLE_DEVICES, a container started"
                         " with GPU access), or name it with --gpu (e.g. --gpu 'RTX 4090') or --cc (e.g. --cc 8.9).")
            return
        for gpu in self.machine.gpus:
            if gpu.compute_capability is None:
                self.add("gpu-unknown-cc", "info",
                         f"GPU {gpu.index} ({gpu.name}) has no known compute capability (cuenv's GPU table does not"
                         " know the name and nothing reported one); it was not checked.",
                         "Give its compute capability, which `nvidia-smi --query-gpu=compute_cap --format=csv` prints on that machine,"
                         f" with --cc (e.g. --cc 8.9), or after its name: --gpu '{gpu.name}=8.9' (CUENV_GPUS the same way,"
                         " for every command).")
                continue
            if self._ignored_by_driver(gpu):
                continue
            self._arch(gpu)

    def _ignored_by_driver(self, gpu: Gpu) -> bool:
        """A driver branch that retired the GPU's architecture, or predates it, does not see the GPU at all."""
        driver = self.machine.driver
        if driver is None or not driver.version or self.platform == "jetson" or driver.source == "override":
            return False
        try:
            major = versions.driver(driver.version).major
        except Exception:  # noqa: BLE001 - an unreadable version was reported elsewhere; nothing to judge here
            return False
        cc = gpu.compute_capability or ""
        gname = f"{gpu.name} ({cc})"
        legacy = matrix.legacy_branch(cc)
        if legacy is not None and major >= legacy.ignored_from:
            self.add("gpu-ignored-by-driver", "error",
                     f"The {driver.version} driver ignores the {gname}: R{legacy.last_branch} is the last driver branch"
                     f" for {legacy.architecture} GPUs, and drivers from R{legacy.ignored_from} on do not see them"
                     " ('The ... NVIDIA driver will ignore this GPU').",
                     f"Install an R{legacy.last_branch} driver ({legacy.last_branch}.xx, NVIDIA's legacy branch for"
                     f" {legacy.architecture})" + self._branch_check(int(legacy.last_branch), cc))
            return True
        first = matrix.first_branch(cc)
        if first is not None and major < first[1]:
            self.add("gpu-ignored-by-driver", "error",
                     f"The {driver.version} driver predates the {gname}: its first driver branch is R{first[1]}"
                     f" (CUDA {first[0]}, the first release that targets {cc}), so this driver does not know it.",
                     f"Install an NVIDIA driver >= {first[1]}" + self._branch_check(first[1], cc))
            return True
        return False

    def _branch_check(self, branch: int, cc: str) -> str:
        """", or check it with such a driver: `cuenv check cuda==X.Y --driver V --cc C`." with a driver
        version the release table names on that branch (so it runs as written, issue 30 §4), else "."."""
        version = matrix.driver_on_branch(branch, self.machine.os)
        if not self.stack.cuda or version is None or not cc:
            return "."
        return f", or check it with such a driver: `cuenv check cuda=={matrix.mm_str(self.stack.cuda)} --driver {version} --cc {cc}`."

    def _lists(self) -> tuple[tuple[str, ...], tuple[str, ...]]:
        """The (sass, ptx) of the wheel this machine's platform installs; ((), ()) when not known."""
        stack = self.stack
        if stack.arch_x86_only and self.platform in ("linux-sbsa", "jetson"):
            return stack.arch_aarch64 or ((), ())
        return stack.sass, stack.ptx

    def _arch(self, gpu: Gpu) -> None:
        stack, name = self.stack, _name(self.stack)
        g = matrix.cc_key(gpu.compute_capability or "")
        gname = f"{gpu.name} ({gpu.compute_capability})"
        sass_list, ptx_list = self._lists()
        sass = [matrix.cc_key(s) for s in sass_list]
        ptx = [matrix.cc_key(p) for p in ptx_list]
        if not sass and not ptx:
            self._arch_unknown(gpu, g, gname)
            return
        model = gpus.lookup(gpu.name)
        exact = model is not None and model.exact_sass and self.platform == "jetson"
        if any(s[0] == g[0] and (s[1] == g[1] if exact else s[1] <= g[1]) for s in sass):
            return
        kernels = _arch_text(stack, sass_list, ptx_list)
        if self.platform in ("linux-sbsa", "jetson") and stack.arch_x86_only:
            kernels += ", the aarch64 wheel's"
        jit = [p for p in ptx if p <= g]
        if jit:
            p = ".".join(map(str, max(jit)))
            if self.minor_compat:
                self.add("arch-ptx-jit", "error",
                         f"{name} has no SASS for the {gname}, only PTX {p} ({kernels}), and PTX from CUDA"
                         f" {stack.cuda} cannot be JIT-compiled by this older driver (minor-version compatibility"
                         " excludes PTX JIT): 'the provided PTX was compiled with an unsupported toolchain'.",
                         self._arch_fix(gpu, f"Install an NVIDIA driver >= {matrix.min_driver(_cuda(stack), self.machine.os)}"))
            else:
                self.add("arch-ptx-jit", "warning",
                         f"{name} has no SASS for the {gname}, only PTX {p} ({kernels}): kernels are JIT-compiled"
                         " at first use (slow start, cached in ~/.nv/ComputeCache) and may run slower.",
                         self._arch_fix(gpu, "It runs as is"))
            return
        want = f"{g[0]}.0-{gpu.compute_capability}" if g[1] and not exact else gpu.compute_capability
        tegra = (" On Jetson (Tegra) SASS runs only on its own compute capability, so "
                 f"{_lower_sass(sass, g)} does not." if exact and _lower_sass(sass, g) else "")
        self.add("arch-unsupported", "error",
                 f"{name} has no kernels for the {gname}: {kernels}; it needs SASS for {want} or PTX <="
                 f" {gpu.compute_capability} ('no kernel image is available for execution on the device').{tegra}",
                 self._arch_fix(gpu, "Use a JetPack build for Jetson (NVIDIA's Jetson wheels)" if exact else None))

    def _arch_unknown(self, gpu: Gpu, g: tuple[int, int], gname: str) -> None:
        stack, name = self.stack, _name(self.stack)
        targets = [matrix.cc_key(t) for t in matrix.nvcc_targets(_cuda(stack))]
        if targets and not any(t <= g for t in targets):
            lowest = ".".join(map(str, min(targets)))
            self.add("arch-unsupported", "error",
                     f"{name} is built with CUDA {stack.cuda}, which cannot compile for the {gname}"
                     f" (its oldest target is {lowest}); no build of it can carry kernels for this GPU.",
                     self._arch_fix(gpu, None))
            return
        torch = "python -c 'import torch; print(torch.cuda.get_arch_list())'" if stack.framework == "torch" else None
        first = matrix.first_cuda_running_on(gpu.compute_capability) if not targets and gpu.compute_capability else None
        older = bool(first and stack.cuda and versions.cuda(str(stack.cuda)) < versions.cuda(first))  # 9.0 < 11.0 (sm_80's first)
        if older or (targets and not any(t[0] == g[0] and t[1] <= g[1] for t in targets)):
            # no SASS of that CUDA runs on this GPU: only PTX would, and whether the build carries any is not known
            self.add("build-unknown", "warning",
                     f"{name} is built with CUDA {stack.cuda}, which predates the {gname}: it runs there only through "
                     "PTX JIT, and cuenv does not know whether it carries PTX.",
                     f"Confirm on the machine: {torch} (a compute_XX entry is PTX)." if torch else
                     "Confirm on the machine: cuobjdump --list-ptx on the package's CUDA libraries lists the PTX they carry.")
            return
        confirm = torch or "cuobjdump --list-elf on the package's CUDA libraries lists the SASS they carry"
        hint = "; cuenv knows this build's x86_64 arch list, not its aarch64 one" \
            if stack.arch_x86_only and self.platform in ("linux-sbsa", "jetson") else ""
        self.add("arch-unknown", "info",
                 f"cuenv does not know which compute capabilities {name} carries; the {gname} was not checked{hint}.",
                 f"Confirm on the machine: {confirm}.")

    def _arch_fix(self, gpu: Gpu, first: str | None) -> str | None:
        if not self.fixes:
            return None
        return self._nearest(first or f"Use a build with kernels for {gpu.compute_capability}")

    # -- cuDNN -----------------------------------------------------------------------------------
    def _cudnn(self) -> None:
        stack = self.stack
        if not stack.cudnn:
            return
        row = matrix.cudnn_row(stack.cudnn)
        if row is None:
            return
        name = _name(stack)
        if not matrix.cudnn_supports(stack.cudnn, _cuda(stack)):
            majors = ", ".join(f"{b.min}-{b.max}" for b in row.builds)
            self.add("cudnn-mismatch", "error",
                     f"{name} pairs cuDNN {stack.cudnn} with CUDA {stack.cuda}, but cuDNN {row.cudnn}.x is built for"
                     f" CUDA {majors} only.",
                     "Use a cuDNN built for CUDA " + str(versions.cuda(_cuda(stack)).major) + ".x (see the cuDNN support matrix).")
        if row.min_cc:
            low = matrix.cc_key(row.min_cc)
            for gpu in self.machine.gpus:
                if gpu.compute_capability and matrix.cc_key(gpu.compute_capability) < low:
                    self.add("cudnn-mismatch", "error",
                             f"cuDNN {stack.cudnn} in {name} supports compute capability >= {row.min_cc}; the"
                             f" {gpu.name} is {gpu.compute_capability}.",
                             self._nearest("Use a cuDNN release that still supports it") if self.fixes else None)

    # -- host compiler -----------------------------------------------------------------------------
    def _compiler(self) -> None:
        if not self.gcc or not self.stack.has_nvcc or not self.stack.cuda:
            return
        major = versions.Dotted.parse(self.gcc, what="gcc version").major
        cuda = matrix.mm_str(self.stack.cuda)
        top = matrix.max_gcc(cuda)
        if top is None:
            self.add("compiler-unknown", "info", f"The newest gcc nvcc {cuda} accepts is not known to cuenv; gcc {major} was not checked.")
            return
        if major > top:
            newer = [c for c in matrix.gcc_cudas() if (matrix.max_gcc(c) or 0) >= major]
            alt = f", or use CUDA {newer[0]} or newer (accepts gcc {major})" if newer else ""
            self.add("compiler-too-new", "error",
                     f"nvcc {cuda} accepts gcc <= {top}; this machine has gcc {self.gcc}"
                     f" ('unsupported GNU version! gcc versions later than {top} are not supported!').",
                     f"Install gcc {top} and point nvcc at it (nvcc -ccbin g++-{top}, or CUDAHOSTCXX=g++-{top}){alt}.")

    # -- nearest alternative -----------------------------------------------------------------------
    def _nearest(self, first: str) -> str | None:
        if not self.fixes:
            return None
        found = _nearest_build(self.stack, self.machine)
        if found is None:
            return first + "."
        alt, covers = found
        # a build, not a recipe name: the command that shows it is `cuenv check` (issue 17 §4), for the
        # machine the check was asked about: a described one keeps its flags (issue 30 §4)
        flags = machine_flags(self.machine)
        if not covers:
            return (f"{first}, or try the build {alt.label}, whose kernels for this GPU cuenv does not know"
                    f" (`cuenv check {alt.label}{flags}`).")
        return f"{first}, or use the build {alt.label}, which runs {'there' if flags else 'here'} (`cuenv check {alt.label}{flags}`)."


def machine_flags(machine: Machine) -> str:
    """` --driver X --cc Y.Z ...` for a machine described by flags (so a hint checks the same one), else ''."""
    import shlex

    if machine.driver is None or machine.driver.source not in ("flag", "target"):
        return ""
    out = f" --driver {shlex.quote(machine.driver.version)}" if machine.driver.version else ""
    return out + "".join(f" --cc {g.compute_capability}" for g in machine.gpus if g.compute_capability)


def nearest_build(stack: Stack, machine: Machine) -> Stack | None:
    """The build closest to ``stack`` that runs on ``machine``: same release first, then the framework's newest.

    Only builds whose arch list is known to cover every GPU count, when the machine has GPUs.
    """
    found = _nearest_build(stack, machine)
    return found[0] if found else None


def _nearest_build(stack: Stack, machine: Machine) -> tuple[Stack, bool] | None:
    """(build, whether it is known to cover every GPU)."""
    groups = [builds.same_release(stack)]
    framework = stack.framework or ("cuda" if stack.has_nvcc else None)
    if framework:
        groups.append(builds.candidates(framework))
    for strict in (True, False):  # second pass: builds that run but whose arch list is unknown
        for group in groups:
            ok = [s for s in group if s.cuda and not _same_build(s, stack) and _runs(s, machine, strict)]
            if ok:
                return max(ok, key=lambda s: (_vkey(s.framework_version), _vkey(s.cuda))), strict or not machine.gpus
    return None


def _runs(stack: Stack, machine: Machine, strict: bool) -> bool:
    found = _Checker(stack, machine, None, fixes=False).run()
    return _covers(stack, machine, found) if strict else verdict(found)


def _same_build(a: Stack, b: Stack) -> bool:
    return (a.framework, a.framework_version, a.variant, a.cuda) == (b.framework, b.framework_version, b.variant, b.cuda)


def _covers(stack: Stack, machine: Machine, found: list[Finding] | None = None) -> bool:
    """Runs (no error) and, on a machine with GPUs, is known to carry kernels for each."""
    found = _Checker(stack, machine, None, fixes=False).run() if found is None else found
    return verdict(found) and not any(f.code == "arch-unknown" for f in found)


def _confirm_build(stack: Stack) -> str:
    """A command that asks the build's own index whether it exists (nothing is installed)."""
    version, variant = stack.framework_version or "", stack.variant or ""
    if stack.framework == "torch":
        url = matrix.pytorch_index(variant)
        cmd = f"pip download --no-deps torch=={version} --index-url {url} -d /tmp/probe"
    elif stack.framework == "paddle" and variant.startswith("post"):
        links = matrix.kb()["paddlepaddle"]["find_links_2x"]
        cmd = f"pip download --no-deps paddlepaddle-gpu=={version}.{variant} -f {links} -d /tmp/probe"
    elif stack.framework == "paddle":
        url = matrix.kb()["paddlepaddle"]["index_url"].format(variant=variant)
        cmd = f"pip download --no-deps paddlepaddle-gpu=={version} --index-url {url} -d /tmp/probe"
    else:
        return "Check the installed files instead: `cuenv check` of the environment reads the kernels they carry."
    return f"Ask its index: `{cmd}`; once installed, `cuenv check` of the environment reads the kernels it carries."


def _arch_text(stack: Stack, sass: tuple[str, ...] | None = None, ptx: tuple[str, ...] | None = None) -> str:
    sass = stack.sass if sass is None else sass
    ptx = stack.ptx if ptx is None else ptx
    parts = [f"SASS {', '.join(sass)}"] if sass else []
    if ptx:
        parts.append(f"PTX {', '.join(ptx)}")
    return "; ".join(parts) or "no arch list"


def _lower_sass(sass: list[tuple[int, int]], g: tuple[int, int]) -> str:
    lower = [s for s in sass if s[0] == g[0] and s[1] < g[1]]
    return ", ".join(f"SASS {a}.{b}" for a, b in lower)


def _cuda(stack: Stack) -> str:
    """The stack's CUDA release, for checks that only run on CUDA builds (CPU-only ones return earlier)."""
    assert stack.cuda is not None, "a CPU-only stack reached a CUDA check"
    return stack.cuda
