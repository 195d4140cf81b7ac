"""The checks: pure functions from Facts to one Check each (the pipx ``health`` model, STYLE.md §1).

A check returns None when its facts were not observed (a report that says nothing about it);
cuenv.doctor.diagnose lists what was missing. Codes are stable and documented in
docs/reference/findings-doctor.md (doctor's own) and docs/reference/findings.md (`cuenv check`).
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Callable, Final, Sequence

from cuenv.doctor.model import Check, DriverFacts, EnvFacts, Facts, FrameworkProbe, LibraryFacts, Resolution, make_check
from cuenv.knowledge.findings import Finding
from cuenv.knowledge.stack import Stack
from cuenv.machine.model import Gpu

if TYPE_CHECKING:
    from cuenv.knowledge.gpus import ArchFeatures

GIB: Final = 2**30
LOW_DISK: Final = 10 * GIB  # one CUDA environment with cuDNN and a framework is 5-8 GB
# Findings that the driver check owns; other checks drop them to say each thing once.
DRIVER_CODES: Final = frozenset({"no-driver", "no-gpu", "driver-unknown"})

CODES: Final = (
    "driver-library-mismatch", "device-nodes-missing", "device-permission", "driver-stub-library",
    "nvcc-runtime-mismatch", "multiple-cuda-on-path", "cuda-home-mismatch", "ld-library-path-stale",
    "library-not-found", "multiple-cudnn", "no-container-toolkit", "framework-broken",
    "bf16-unsupported", "low-disk", "installer-corrupt", "container-no-gpu", "macos-no-cuda",
)


def _mm(version: str | None) -> tuple[int, ...]:
    """ "12.1.105" -> (12, 1); () when there is no number."""
    return tuple(int(n) for n in re.findall(r"\d+", version or "")[:2])


def _mm_text(version: str | None) -> str:
    mm = _mm(version)
    return ".".join(map(str, mm)) if mm else "?"


def _where(r: Resolution) -> str:
    if r.path is None:
        return f"{r.soname}: not found"
    version = f"CUDA {r.version}" if r.version and "cudart" in r.soname else (r.version or "version unknown")
    real = f" (-> {r.real_path})" if r.real_path and r.real_path != r.path else ""
    return f"{r.soname} -> {r.path}{real}  [{version}; via {r.via}]"


# --------------------------------------------------------------------------- 1. driver


def driver(f: Facts) -> Check | None:
    d, m = f.driver, f.machine
    if m is None and d is None:
        return None
    detail: list[str] = []
    found: list[Finding] = []
    drv = m.driver if m else None
    if drv is not None:
        newest = f", newest CUDA {drv.max_cuda}" if drv.max_cuda else ""
        detail.append(f"driver {drv.version or 'version unknown'}{newest} (from {drv.source})")
    elif f.origin == "this machine":
        detail.append("no NVIDIA driver found")
        detail += [f"  {n}" for n in (m.notes if m else ())]
    if d is not None and d.kernel_module:
        detail.append(f"kernel module {d.kernel_module} ({d.kernel_module_source})")
    if d is not None and d.library:
        detail.append(f"user-space library {d.library} ({d.library_source})")
    mismatch = _library_mismatch(d)
    if mismatch:
        found.append(mismatch)
    elif drv is None and f.origin == "this machine":
        found.append(Finding(
            "no-driver", "error", "No NVIDIA driver is loaded: NVML, libcuda.so.1, nvidia-smi and "
            "/proc/driver/nvidia/version all say nothing.",
            "Install the NVIDIA driver (distribution package, e.g. `sudo apt install nvidia-driver`, or NVIDIA's "
            "installer) and reboot. Only building or planning environments works without one."))
    if d is not None and d.device_nodes is not None and (drv is not None or d.kernel_module):
        detail.append("device nodes: " + (", ".join(n.path for n in d.device_nodes) or "none"))
        if not any(re.fullmatch(r"/dev/nvidia\d+", n.path) for n in d.device_nodes):
            found.append(Finding(
                "device-nodes-missing", "error",
                "The driver is loaded but there is no /dev/nvidia0: no program can open the GPU.",
                "Run `sudo nvidia-modprobe -u -c=0` (or reboot); in a container, start it with `--gpus all` "
                "or a CDI device so the nodes are passed in."))
        blocked = [n.path for n in d.device_nodes if not (n.readable and n.writable)]
        if blocked:
            found.append(Finding(
                "device-permission", "error", f"This user cannot open {', '.join(blocked)} (read and write needed).",
                "Add the user to the group that owns the nodes (`ls -l /dev/nvidia*`, often `video`), then log in again."))
    if d is not None and d.libcuda is not None and d.libcuda.path:
        detail.append("libcuda: " + _where(d.libcuda))
        if "/stubs/" in d.libcuda.path + "/":
            found.append(Finding(
                "driver-stub-library", "error",
                f"libcuda.so.1 resolves to the toolkit's link-time stub {d.libcuda.path} ({d.libcuda.via}).",
                "Remove the `stubs` folder from LD_LIBRARY_PATH; it is only for linking, the real libcuda comes with the driver."))
    if m is not None and drv is not None and m.gpus == () and f.origin == "this machine":
        found.append(Finding("no-gpu", "error", "The driver is loaded but reports no GPU.",
                             "Check CUDA_VISIBLE_DEVICES, `nvidia-smi -L`, and that the GPU is not bound to vfio or another driver."))
    return make_check("driver", detail, found)


def _library_mismatch(d: DriverFacts | None) -> Finding | None:
    if d is None:
        return None
    fix = ("Reboot, or stop every GPU process and reload the module: `sudo rmmod nvidia_drm nvidia_modeset nvidia_uvm "
           "nvidia && sudo modprobe nvidia`.")
    if d.kernel_module and d.library and d.kernel_module != d.library:
        return Finding("driver-library-mismatch", "error",
                       f"The loaded kernel module is {d.kernel_module} but the user-space driver library is {d.library} "
                       f"({d.library_source}): the driver was upgraded without a reboot "
                       "(\"Failed to initialize NVML: Driver/library version mismatch\").", fix)
    if d.nvml_error and "mismatch" in d.nvml_error.lower():
        module = f" (kernel module {d.kernel_module})" if d.kernel_module else ""
        return Finding("driver-library-mismatch", "error",
                       f"NVML refuses to start: {d.nvml_error}{module}; the loaded kernel module is not the version of "
                       "the installed driver libraries.", fix)
    return None


# --------------------------------------------------------------------------- 2. toolkits and libraries


def toolkits(f: Facts) -> Check | None:
    t = f.toolkits
    if t is None:
        return None
    detail: list[str] = []
    found: list[Finding] = []
    for kit in t.toolkits:
        version = f"CUDA {kit.version}" if kit.version else "CUDA version unknown"
        detail.append(f"toolkit {kit.path}: {version} (found via {kit.source})")
    if f.origin == "this machine" and not t.toolkits:
        detail.append("no CUDA toolkit installed on the system (environments bring their own)")
    if t.nvcc is not None and f.origin != "this machine":
        detail.append(f"nvcc: CUDA {t.nvcc.version or '?'}")
    elif t.nvcc is not None:
        detail.append(f"nvcc on PATH: {t.nvcc.path} (CUDA {t.nvcc.version or '?'})")
    elif t.shims:
        detail.append(f"nvcc on PATH: {t.shims[0]}: cuenv's stand-in, as the environment has no nvcc of its CUDA "
                      "(it names the next nvcc and refuses another release)")
    elif f.origin == "this machine":
        detail.append("no nvcc on PATH (only needed to compile CUDA code)")
    for tool in t.on_path:
        if tool is not t.nvcc:
            detail.append(f"also on PATH: {tool.tool} {tool.path} (CUDA {tool.version or '?'})")
    for tool in t.shadowed:
        detail.append(f"behind another {tool.tool} on PATH, never run by name: {tool.path} (CUDA {tool.version or '?'})")
    releases = {_mm(x.version): x for x in t.on_path if x.version}
    if len(releases) > 1:
        listed = ", ".join(f"{x.tool} {x.path} (CUDA {x.version})" for x in t.on_path if x.version)
        found.append(Finding(
            "multiple-cuda-on-path", "warning",
            f"PATH reaches tools of {len(releases)} CUDA releases: {listed}; which one runs depends on PATH order.",
            f"Keep one CUDA on PATH: {_route_fix(f)}; remove all but one of those folders from PATH in your shell's rc file."))
    for var, value, release in t.cuda_vars:
        detail.append(f"{var}={value} (CUDA {release or '?'})")
        if t.nvcc is not None and t.nvcc.version and release and _mm(release) != _mm(t.nvcc.version):
            found.append(Finding(
                "cuda-home-mismatch", "warning",
                f"{var} points at CUDA {release} ({value}) but the nvcc on PATH is CUDA {t.nvcc.version}: build "
                "tools (CMake, torch.utils.cpp_extension) mix headers of one with the compiler of the other.",
                f"Set {var} to the toolkit of that nvcc, or unset it; {_route_fix(f)}."))
        elif release is None and f.origin == "this machine":
            found.append(Finding("cuda-home-mismatch", "warning", f"{var}={value} is not a CUDA toolkit (no version.json, "
                                 "version.txt or cuda_runtime_api.h).", f"Point {var} at a toolkit root, or unset it."))
    return make_check("toolkits", detail, found)


def _compiler_hint(f: Facts) -> str:
    """The `cuenv create` that gives nvcc of the environment's release: the one recorded at create (its
    engine and a free name), else the general form."""
    if f.env is not None and f.env.compiler_hint:
        return f.env.compiler_hint
    recipe = (f.env.recipe if f.env else None) or "cuda-12.1"
    name = f"{f.env.name}-nvcc" if f.env is not None and getattr(f.env, "name", None) else f"{recipe}-nvcc"
    return f"cuenv create {recipe} --with-nvcc --engine rattler -n {name}"  # real names: it runs as written


def _route_fix(f: Facts) -> str:
    """The command that gives one CUDA, for the route the environment came in by (issue 17 §6):
    `cuenv use` is no fix for a shell that already used it."""
    env = f.env
    if env is None:
        return ("activating one environment strips the others: `cuenv use` it (with the shell hook) or `cuenv run` "
                "in it (`cuenv list` names them)")
    if not env.tools_recorded:
        from cuenv.envs.store import rebuild_hint

        return f"recreate {env.name} so that cuenv records and shims its CUDA tools: {rebuild_hint(env.name, env.recipe)}"
    if env.route == "module":  # loaded already: PATH changed after the load, or the module predates the strip
        return (f"something changed PATH after the module was loaded: `module unload cuenv/{env.name}`, then "
                f"`module load cuenv/{env.name}` again (a module file from before cuenv stripped other CUDA: export it "
                f"again with `cuenv export {env.name} --format lmod -o modules`)")
    if env.route == "shell":
        return (f"something changed PATH after activation: `cuenv deactivate`, then `cuenv use {env.name}` again "
                "(or `cuenv run " + env.name + " -- nvcc --version`)")
    return f"`cuenv use {env.name}` (or `cuenv run {env.name} -- nvcc --version`) strips the others"


def _primary_cudart(lib: LibraryFacts, nvcc_version: str | None) -> Resolution | None:
    cudart_required = [r for r in lib.required if "cudart" in r.soname]
    if cudart_required:
        return cudart_required[0] if cudart_required[0].path else None
    chosen = [r for r in lib.cudart if r.path and r.via not in ("linker cache", "default directory")]
    if chosen:
        return chosen[0]
    same_major = [r for r in lib.cudart if r.path and nvcc_version and _mm(r.version) and
                  _mm(r.version)[0] == _mm(nvcc_version)[0]]
    return same_major[0] if same_major else next((r for r in reversed(lib.cudart) if r.path), None)


def libraries(f: Facts) -> Check | None:
    lib = f.libraries
    if lib is None:
        return None
    detail: list[str] = []
    found: list[Finding] = []
    env_name = f.env.name if f.env else None
    if lib.ld_library_path:
        detail.append("LD_LIBRARY_PATH: " + ":".join(e.path for e in lib.ld_library_path))
    elif f.origin == "this machine":
        detail.append("LD_LIBRARY_PATH: unset")
    if lib.cache_source:
        detail.append(f"linker cache: read with `{lib.cache_source}`")
    if lib.requester:
        detail.append(f"framework library: {lib.requester} (its RPATH/RUNPATH is followed)")
    for r in lib.cudart:
        detail.append(_where(r))
    for r in lib.required:
        if r not in lib.cudart:
            detail.append(_where(r))
    if f.origin == "this machine" and not lib.cudart and not lib.required:
        detail.append("no libcudart visible to the loader")
    # stale LD_LIBRARY_PATH entries
    for e in lib.ld_library_path:
        if not e.exists:
            found.append(Finding("ld-library-path-stale", "warning", f"LD_LIBRARY_PATH names {e.path}, which does not exist.",
                                 "Remove it from LD_LIBRARY_PATH (look in ~/.bashrc, ~/.profile and module files)."))
        elif lib.wanted_cuda and e.cudart and all(_mm(v) != _mm(lib.wanted_cuda) for v in e.cudart):
            found.append(Finding(
                "ld-library-path-stale", "warning",
                f"LD_LIBRARY_PATH entry {e.path} holds the CUDA {', '.join(e.cudart)} runtime, but {env_name} is "
                f"CUDA {lib.wanted_cuda}.",
                f"Remove {e.path} from LD_LIBRARY_PATH; {_route_fix(f)}."))
    runtimes = {_mm(v) for e in lib.ld_library_path for v in e.cudart}
    if len(runtimes) > 1:
        found.append(Finding(
            "multiple-cuda-on-path", "warning",
            "LD_LIBRARY_PATH holds the runtimes of " + ", ".join(f"CUDA {'.'.join(map(str, r))}" for r in sorted(runtimes))
            + ": the first folder wins for each soname.",
            "Keep the folders of one CUDA release on LD_LIBRARY_PATH."))
    # what the environment needs
    for r in lib.required:
        if r.path is None:
            found.append(Finding(
                "library-not-found", "error",
                f"{r.soname}, needed by {env_name} (CUDA {lib.wanted_cuda}), cannot be found: the loader searched "
                + ("the framework's RUNPATH, " if lib.requester else "") + "LD_LIBRARY_PATH, the linker cache and the "
                "default folders.",
                _comes_from(r.soname, f.env)))
        elif "cudart" in r.soname and lib.wanted_cuda and r.version and _mm(r.version) != _mm(lib.wanted_cuda):
            found.append(Finding(
                "ld-library-path-stale" if r.via == "LD_LIBRARY_PATH" else "library-not-found", "error",
                f"{r.soname} resolves to {r.path} (CUDA {r.version}, via {r.via}), not to {env_name}'s CUDA "
                f"{lib.wanted_cuda} runtime.",
                f"Remove that folder from LD_LIBRARY_PATH; {_route_fix(f)}."))
    nvcc = f.toolkits.nvcc if f.toolkits else None
    primary = _primary_cudart(lib, nvcc.version if nvcc else None)
    if nvcc is not None and nvcc.version and primary is not None and primary.version:
        if _mm(primary.version) != _mm(nvcc.version):
            major = _mm(primary.version)[0] != _mm(nvcc.version)[0]
            found.append(Finding(
                "nvcc-runtime-mismatch", "error" if (major and f.env) else "warning",
                f"nvcc on PATH is CUDA {nvcc.version} ({nvcc.path}) but the loader picks the CUDA {primary.version} "
                f"runtime ({primary.path}): code compiled here (CUDA extensions, torch.utils.cpp_extension) targets "
                "one release and runs against another.",
                "Use the nvcc of the runtime's release (an environment with its compiler: "
                f"`{_compiler_hint(f)}`), or pick the environment matching your nvcc; {_route_fix(f)}."))
    return make_check("libraries", detail, found)


def _comes_from(soname: str, env: EnvFacts | None) -> str:
    m = re.match(r"libcudart\.so\.(\d+)", soname)
    where = ""
    if m:
        major = int(m.group(1))
        wheel = "nvidia-cuda-runtime" if major >= 13 else f"nvidia-cuda-runtime-cu{major}"
        where = (f"It comes from the {wheel} wheel (site-packages/nvidia/"
                 f"{'cu13' if major >= 13 else 'cuda_runtime'}/lib), conda's cuda-cudart / cudatoolkit, or a CUDA "
                 f"{major} toolkit's lib64.")
    m = re.match(r"libcudnn(?:_\w+)?\.so\.(\d+)", soname)
    if m:
        where = (f"It comes from cuDNN {m.group(1)}: the nvidia-cudnn-cuXX wheel (site-packages/nvidia/cudnn/lib), "
                 "conda's cudnn, or NVIDIA's cuDNN packages.")
    from cuenv.envs.store import rebuild_hint

    again = f" If the environment lost the file: {rebuild_hint(env.name, env.recipe)}." if env is not None else ""
    return (where + again).strip() or "Install the library and put its folder on LD_LIBRARY_PATH."


# --------------------------------------------------------------------------- 3. cuDNN


def cudnn(f: Facts) -> Check | None:
    c = f.cudnn
    if c is None:
        return None
    detail: list[str] = []
    found: list[Finding] = []
    for path, version in c.headers:
        detail.append(f"header {path}: cuDNN {version}")
    for path, lib_version in c.libraries:
        detail.append(f"library {path}: cuDNN {lib_version or 'version unknown'}")
    if c.loaded is not None:
        detail.append("loaded: " + _where(c.loaded))
    if not c.headers and not c.libraries and f.origin == "this machine":
        detail.append("no cuDNN found (frameworks' wheels bring their own; only needed to build against cuDNN)")
    versions = {_mm(v) for _, v in c.libraries if v} | {_mm(v) for _, v in c.headers}
    if len(versions) > 1:
        found.append(Finding(
            "multiple-cudnn", "warning",
            "More than one cuDNN is visible: " + ", ".join(sorted({f"{v}" for _, v in c.libraries if v} |
                                                                     {v for _, v in c.headers})) + ".",
            "Keep one: remove the other cuDNN folder from LD_LIBRARY_PATH (or the system package) so builds and "
            "frameworks cannot pick the wrong one."))
    loaded = (c.loaded.version if c.loaded else None) or (c.libraries[0][1] if len(c.libraries) == 1 else None) \
        or (c.headers[0][1] if len(c.headers) == 1 and not c.libraries else None)
    cuda = (f.env.stack.cuda if f.env and f.env.stack else None) or (
        f.toolkits.nvcc.version if f.toolkits and f.toolkits.nvcc else None)
    if loaded and cuda:
        supported = _cudnn_supports(loaded, cuda)
        if supported is False:
            found.append(Finding(
                "cudnn-mismatch", "error",
                f"cuDNN {loaded} has no build for CUDA {cuda} (NVIDIA's support matrix).",
                f"Install a cuDNN built for CUDA {cuda.split('.')[0]} (nvidia-cudnn-cu{cuda.split('.')[0]}), or use "
                "the CUDA release this cuDNN was built for."))
        elif supported is None:
            detail.append(f"cuDNN {loaded} vs CUDA {cuda}: not judged (the knowledge base is not available or does not know it)")
    wanted = f.env.stack.cudnn if f.env and f.env.stack else None
    if f.env and wanted and loaded and _mm(loaded)[0] != _mm(wanted)[0]:
        found.append(Finding(
            "cudnn-mismatch", "error", f"{f.env.name} was built for cuDNN {wanted} but the loader picks cuDNN {loaded}.",
            "Remove the other cuDNN from LD_LIBRARY_PATH so the environment's own is loaded."))
    return make_check("cudnn", detail, found)


def _cudnn_supports(cudnn_version: str, cuda: str) -> bool | None:
    from cuenv.knowledge import matrix

    try:
        return matrix.cudnn_supports(cudnn_version, cuda)
    except Exception:  # noqa: BLE001 - an unparseable version is "not judged", never a crash
        return None


# --------------------------------------------------------------------------- 4. host compiler


def compiler(f: Facts) -> Check | None:
    c = f.compiler
    if c is None:
        return None
    detail: list[str] = []
    found: list[Finding] = []
    if c.host_compiler_var:
        detail.append(f"host compiler from {c.host_compiler_var[0]}={c.host_compiler_var[1]}")
    if c.gcc:
        detail.append(f"gcc {c.gcc}" + (f" ({c.gcc_path})" if c.gcc_path else ""))
    elif f.origin == "this machine":
        detail.append("no gcc found (nvcc needs a host compiler to build CUDA code)")
    nvcc = c.nvcc_version
    if not nvcc:
        shim = f.toolkits is not None and bool(f.toolkits.shims) and f.toolkits.nvcc is None
        detail.append(("nvcc on PATH is cuenv's stand-in (no compiler)" if shim else "no nvcc on PATH")
                      + ": the host compiler is not checked against one" if f.origin == "this machine"
                      else "no nvcc version in the report: gcc not checked against one")
        return make_check("compiler", detail, found)
    limit = _max_gcc(nvcc)
    if limit is None:
        detail.append(f"nvcc {nvcc}: newest gcc it accepts is not known")
    else:
        detail.append(f"nvcc {nvcc} accepts gcc up to {limit}")
        if c.gcc and _mm(c.gcc)[0] > limit:
            found.append(Finding(
                "compiler-too-new", "error",
                f"gcc {c.gcc} is newer than CUDA {nvcc}'s nvcc accepts (gcc <= {limit}): nvcc stops with "
                f"\"unsupported GNU version! gcc versions later than {limit} are not supported!\".",
                f"Install g++-{limit} and use it: `nvcc -ccbin g++-{limit}`, or `export CUDAHOSTCXX=/usr/bin/g++-{limit}` "
                "for CMake and PyTorch extensions; or use a newer CUDA toolkit."))
    return make_check("compiler", detail, found)


def _max_gcc(cuda: str) -> int | None:
    from cuenv.knowledge import matrix

    try:
        return matrix.max_gcc(cuda)
    except Exception:  # noqa: BLE001 - unknown release
        return None


# --------------------------------------------------------------------------- 5. containers

_CTK_STEPS: Final = (
    "Install the NVIDIA Container Toolkit (https://docs.nvidia.com/datacenter/cloud-native/container-toolkit/"
    "latest/install-guide.html): add NVIDIA's apt/dnf repository, `sudo apt-get install -y nvidia-container-toolkit`, "
    "then `sudo nvidia-ctk runtime configure --runtime=docker && sudo systemctl restart docker`; for Podman "
    "`sudo nvidia-ctk cdi generate --output=/etc/cdi/nvidia.yaml`. Test: `docker run --rm --gpus all ubuntu nvidia-smi`.")


def container(f: Facts) -> Check | None:
    c = f.container
    if c is None:
        return None
    detail: list[str] = []
    found: list[Finding] = []
    for name, path in c.engines:
        detail.append(f"{name}: {path}")
    for name, path in c.toolkit:
        detail.append(f"{name}: {path}")
    if c.daemon_json:
        detail.append(f"{c.daemon_json}: runtimes " + (", ".join(c.docker_runtimes) or "none"))
    if c.cdi_specs:
        detail.append("CDI specs: " + ", ".join(c.cdi_specs))
    engines = {n for n, _ in c.engines}
    kit = {n for n, _ in c.toolkit}
    if not engines:
        if f.origin == "this machine":
            detail.append("no docker or podman: GPU containers not in use")
        return make_check("container", detail, found)
    docker_ok = "nvidia-container-cli" in kit or "nvidia" in c.docker_runtimes
    podman_ok = bool(c.cdi_specs)
    if not kit and "nvidia" not in c.docker_runtimes and not c.cdi_specs:
        found.append(Finding(
            "no-container-toolkit", "warning",
            f"{' and '.join(sorted(engines))} {'is' if len(engines) == 1 else 'are'} installed but the NVIDIA Container "
            "Toolkit is not (no nvidia-ctk, nvidia-container-cli, `nvidia` runtime or CDI spec): "
            "`--gpus all` fails with 'could not select device driver \"\" with capabilities: [[gpu]]'.",
            _CTK_STEPS))
    elif "docker" in engines and not docker_ok:
        found.append(Finding("no-container-toolkit", "warning",
                             "docker is installed but neither nvidia-container-cli nor an `nvidia` runtime is configured.",
                             "`sudo nvidia-ctk runtime configure --runtime=docker && sudo systemctl restart docker`."))
    elif "podman" in engines and not podman_ok and "docker" not in engines:
        found.append(Finding("no-container-toolkit", "warning",
                             "podman is installed but no CDI spec describes the GPUs (/etc/cdi, /var/run/cdi).",
                             "`sudo nvidia-ctk cdi generate --output=/etc/cdi/nvidia.yaml`, then "
                             "test with `podman run --rm --device nvidia.com/gpu=all ubuntu nvidia-smi`."))
    return make_check("container", detail, found)


# --------------------------------------------------------------------------- 6. frameworks


def probe_stack(p: FrameworkProbe) -> Stack:
    """What a framework says it was built with, as the Stack `cuenv check` judges."""
    from cuenv.knowledge import versions

    sass: list[str] = []
    ptx: list[str] = []
    for arch in p.arch_list:
        m = re.fullmatch(r"(sm|compute)_(\d+)([a-z]?)", arch.strip())
        if not m:
            continue
        cc = versions.cc(m.group(2))
        (sass if m.group(1) == "sm" else ptx).append(f"{cc.major}.{cc.minor}")
    cuda = _mm_text(p.cuda) if p.cuda else None
    return Stack(label=f"{p.name} {p.version or ''}".strip(), cuda=cuda, cudnn=p.cudnn, sass=tuple(sass),
                 ptx=tuple(ptx), framework=p.name, framework_version=p.version,
                 variant=("cu" + cuda.replace(".", "")) if cuda else "cpu")


def _stack_findings(stack: Stack, f: Facts) -> list[Finding]:
    """`cuenv check` on the framework's own build."""
    from cuenv.knowledge.compat import check

    if f.machine is None:
        return []
    return [x for x in check(stack, f.machine) if x.code not in DRIVER_CODES]


def framework(f: Facts) -> Check | None:
    fw = f.framework
    if fw is None:
        if f.origin != "this machine":
            return None
        skipped = ["no environment named or active: `cuenv doctor` with a name from `cuenv list` looks inside one"] if f.env is None \
            else ["framework probe skipped"]
        return make_check("framework", skipped, [])
    detail: list[str] = []
    found: list[Finding] = []
    if fw.error:
        found.append(Finding("framework-broken", "error", f"The framework probe failed: {fw.error}",
                             f"Check that the environment is complete: `cuenv info {f.env.name}`, or recreate it." if f.env else
                             "Check that the environment is complete, or recreate it."))
    if not fw.probes and not fw.error:
        where = f" in {f.env.name}" if f.env else ""
        detail.append(f"no framework installed{where} (torch, paddle, tensorflow and jax were looked for)")
    gpus = f.machine.gpus if f.machine else ()
    for p in fw.probes:
        detail.append(_describe_probe(p))
        if p.error:
            found.append(Finding("framework-broken", "error", f"{p.name} fails: {p.error}",
                                 "See the recognised messages below; `cuenv doctor` names the library or driver at fault."))
            continue
        stack = p.stack or probe_stack(p)
        from_check = _stack_findings(stack, f)
        if stack.cuda is None and gpus:  # doctor is asked about CUDA: a CPU-only build there is the fault
            from_check = [x for x in from_check if x.code != "cpu-only-build"]
            found.append(_cpu_only(stack.label, p.name, gpus))
        found += from_check
        nvcc = f.toolkits.nvcc if f.toolkits else None
        if nvcc is not None and nvcc.version and stack.cuda and _mm(nvcc.version) != _mm(stack.cuda):
            found.append(Finding(
                "nvcc-runtime-mismatch", "warning",
                f"nvcc is CUDA {nvcc.version} but {stack.label} was built with CUDA {stack.cuda}: CUDA extensions built "
                "here (torch.utils.cpp_extension, flash-attn, apex) fail or mismatch"
                + (" (a different major: torch refuses to build them)." if _mm(nvcc.version)[0] != _mm(stack.cuda)[0] else "."),
                f"Use an nvcc of CUDA {stack.cuda} for extensions (an environment with nvcc from a cu"
                f"{stack.cuda.replace('.', '')} recipe), or a {p.name} build for CUDA {nvcc.version}."))
        macos = any(h.code == "macos-no-cuda" for h in f.errors)  # no CUDA there at all: not a fault of the build
        if macos and stack.cuda is None:
            found = [x for x in found if x.code != "cpu-only-build"]
        elif p.available is False and not any(x.severity == "error" for x in (*found, *from_check)):
            found.append(_unavailable(p, stack, f, gpus))
        for line in p.messages[:3]:
            detail.append(f"  {p.name} said: {line[:200]}")
    if f.origin == "this machine":  # a report's messages get their own check
        for hit in f.errors:
            found.append(Finding(hit.code, hit.severity, f"{hit.message} (seen: \"{hit.text[:160]}\")", hit.fix))
    return make_check("framework", detail, found)


def _cpu_only(label: str, name: str, gpus: tuple[Gpu, ...]) -> Finding:
    return Finding("cpu-only-build", "error",
                   f"{label} is a CPU-only build: it cannot use the {len(gpus)} GPU(s) of this machine"
                   " (on Windows and macOS the plain PyPI torch wheel is CPU-only).",
                   f"Install a CUDA build: `cuenv suggest {name}` names the one for this driver and GPU.")


def _unavailable(p: FrameworkProbe, stack: Stack, f: Facts, gpus: tuple[Gpu, ...]) -> Finding:
    """The framework says CUDA is not usable and no other finding explains why: never "all passed"."""
    if stack.cuda is None:
        return Finding("cpu-only-build", "error", f"{stack.label} is a CPU-only build: CUDA is never available to it.",
                       f"Install a CUDA build (`cuenv suggest {p.name}` on the machine with the GPU).")
    drv = f.machine.driver if f.machine else None
    if drv is None:
        return Finding("no-driver", "error",
                       f"{p.name} is a CUDA build but reports CUDA unavailable, and no NVIDIA driver is in sight"
                       " (none reported, or none loaded).",
                       "Install the NVIDIA driver and reboot, then check with `nvidia-smi`; in a container, start it"
                       " with `--gpus all`. If this is a report, paste `nvidia-smi` too.")
    seen = f"the driver sees {len(gpus)} GPU(s)" if gpus else f"driver {drv.version or '?'} is present"
    return Finding("framework-broken", "error",
                   f"{p.name} is a CUDA build and {seen}, yet it reports no usable GPU.",
                   "Read the messages it printed (below); check CUDA_VISIBLE_DEVICES and `cuenv doctor` libraries.")


def _describe_probe(p: FrameworkProbe) -> str:
    parts = [f"{p.name} {p.version or '?'}"]
    parts.append(f"built with CUDA {p.cuda}" if p.cuda else "CPU-only build")
    if p.cudnn:
        parts.append(f"cuDNN {p.cudnn}")
    if p.available is not None:
        parts.append(f"GPU available: {'yes' if p.available else 'no'}")
    if p.device_count is not None:
        parts.append(f"{p.device_count} device(s)")
    if p.arch_list:
        parts.append("arch " + " ".join(p.arch_list))
    return ", ".join(parts)


# --------------------------------------------------------------------------- 7. machine facts


def machine(f: Facts) -> Check | None:
    m = f.machine
    if m is None and f.disk is None:
        return None
    detail: list[str] = []
    found: list[Finding] = []
    if m is not None and f.origin == "this machine":
        detail.append(f"{m.os} {m.arch}" + (f", glibc {m.glibc}" if m.glibc else ""))
    if m is not None and not m.gpus and f.origin == "this machine":
        detail.append("GPUs: none visible")
    for gpu in (m.gpus if m else ()):
        mem = f"{gpu.memory_mib / 1024:.0f} GiB" if gpu.memory_mib else "memory unknown"
        feats = _features(gpu.compute_capability)
        flags = ""
        if feats is not None:
            flags = f", BF16 {'yes' if feats.bf16 else 'no'}, FP8 {'yes' if feats.fp8 else 'no'}"
        detail.append(f"GPU {gpu.index}: {gpu.name}, cc {gpu.compute_capability or '?'}, {mem}{flags}"
                      + (", MIG on" if gpu.mig else ""))
        if feats is not None and not feats.bf16 and not any(x.code == "bf16-unsupported" and gpu.name in x.message
                                                              for x in found):
            found.append(Finding(
                "bf16-unsupported", "warning",
                f"{gpu.name} (compute capability {gpu.compute_capability}) has no BF16 support: bf16 training and "
                "models stored in bf16 fall back to slow paths or fail.",
                "Use FP16 with loss scaling (torch.autocast(dtype=torch.float16) and GradScaler), or FP32."))
    if f.disk is not None:
        path, free = f.disk
        detail.append(f"free disk at {path}: {free / GIB:.1f} GiB")
        if free < LOW_DISK:
            found.append(Finding("low-disk", "warning",
                                 f"Only {free / GIB:.1f} GiB free at {path}; one CUDA environment with cuDNN and a "
                                 "framework takes 5-8 GB.",
                                 "Free space, or point CUENV_HOME (or --home) at a larger disk."))
    return make_check("machine", detail, found)


def _features(cc: str | None) -> ArchFeatures | None:
    if not cc:
        return None
    from cuenv.knowledge import gpus

    try:
        return gpus.features(cc)
    except Exception:  # noqa: BLE001 - an unparseable cc in a report
        return None


# --------------------------------------------------------------------------- report-only


def errors(f: Facts) -> Check | None:
    """Recognised error messages of a report (on this machine they belong to the framework check)."""
    if f.origin == "this machine" or not f.errors:
        return None
    found = [Finding(h.code, h.severity, f"{h.message} (seen: \"{h.text[:160]}\")", h.fix) for h in f.errors]
    return make_check("errors", [f"{len(f.errors)} well-known error message(s) recognised"], found)


def kernels(f: Facts) -> Check | None:
    """The SASS and PTX the environment's libraries carry, judged for this machine's GPUs (issue 20)."""
    if f.kernels is None or f.machine is None:
        return None
    from cuenv.binaries.assess import assess

    judged = assess(f.kernels, f.machine, declared=f.env.stack if f.env else None)
    detail = [f"{len([lib for lib in judged.libraries if lib.modules])} of {judged.scanned} shared objects carry GPU code"]
    for lib in judged.libraries:
        if not lib.modules:
            continue
        runs = "; ".join(f"{r.cc}: {r.status}" for r in lib.runs)
        detail.append(f"{lib.path}" + (f" ({lib.owner})" if lib.owner else "")
                      + f": SASS {' '.join(lib.sass) or '-'}, PTX {' '.join(lib.ptx) or '-'}" + (f"; {runs}" if runs else ""))
    return make_check("kernels", detail, [x for x in judged.findings if x.code != "kernels-not-checked"])


CHECKS: Final[Sequence[Callable[[Facts], Check | None]]] = (
    driver, toolkits, libraries, cudnn, compiler, container, framework, kernels, machine, errors,
)
