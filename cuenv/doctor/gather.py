"""Gather doctor's facts from this machine: the thin I/O edge under the pure checks.

Everything is read through a ``Host``: the environment variables, a ``root`` under which
/proc, /sys, /dev and /etc are read (tests build a tree), an optional custom linker cache, and
cuenv.runner for the few programs asked (nvcc/ptxas --version, ldconfig -p, gcc). No framework
is imported here; frameworks are probed in child processes only for a named or active environment.
"""

from __future__ import annotations

import json
import os
import platform
import re
import shutil
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Final, Mapping, Sequence

from cuenv.doctor import ldso
from cuenv.doctor.model import (
    CompilerFacts,
    ContainerFacts,
    CudaTool,
    CudnnFacts,
    DeviceNode,
    DriverFacts,
    EnvFacts,
    Facts,
    FrameworkFacts,
    LdEntry,
    LibraryFacts,
    Resolution,
    ToolkitFacts,
)
from cuenv.errors import CuenvError, NotFound, ToolError, UsageError
from cuenv.trust import limits

if TYPE_CHECKING:
    from cuenv.binaries.scan import ScanReport
    from cuenv.config import Settings
    from cuenv.envs.store import EnvRecord
    from cuenv.machine.model import Machine
    from cuenv.runner import Completed

TOOL_TIMEOUT: Final = 15.0
_RELEASE: Final = re.compile(r"release\s+(\d+\.\d+)")
_CUDART: Final = r"libcudart\.so\.\d+(?:\.\d+)*"
_CUDNN: Final = r"libcudnn\.so\.\d+(?:\.\d+)*"
# Libraries inside an environment whose RUNPATH decides where its CUDA libraries come from.
REQUESTERS: Final = ("torch/lib/libtorch_cuda.so", "paddle/base/libpaddle.so", "paddle/fluid/libpaddle.so",
                     "jax_plugins/xla_cuda12/xla_cuda_plugin.so", "jax_plugins/xla_cuda13/xla_cuda_plugin.so",
                     "tensorflow/libtensorflow_framework.so.2")


@dataclass
class Host:
    environ: Mapping[str, str]
    root: Path = Path("/")
    ld_cache: Path | None = None  # a linker cache file other than /etc/ld.so.cache
    arch: str = field(default_factory=lambda: platform.machine() or "x86_64")
    _cache: tuple[tuple[str, str], ...] | None = field(default=None, repr=False)
    cache_source: str | None = None

    def under(self, path: str) -> Path:
        return self.root / path.lstrip("/")

    def which(self, name: str, extra: Sequence[str] = ()) -> str | None:
        path = os.pathsep.join([self.environ.get("PATH", ""), *extra])
        return shutil.which(name, path=path)

    def run(self, argv: Sequence[str | Path], timeout: float = TOOL_TIMEOUT) -> Completed | None:
        from cuenv import runner

        try:
            return runner.run(argv, timeout=timeout, env=self.environ, check=False)
        except ToolError:
            return None

    def cache(self) -> tuple[tuple[str, str], ...]:
        """The linker cache as ``ldconfig -p`` lists it (``-C FILE`` for a custom one)."""
        if self._cache is None:
            self._cache = ()
            ldconfig = self.which("ldconfig", ("/sbin", "/usr/sbin"))
            custom = self.ld_cache or (self.under("etc/ld.so.cache") if self.root != Path("/") else None)
            if ldconfig and (custom is None or custom.is_file()):
                argv = [ldconfig, "-p"] + (["-C", str(custom)] if custom else [])
                done = self.run(argv)
                if done is not None and done.returncode == 0:
                    self._cache = ldso.parse_ldconfig_p(done.stdout, self.arch)
                    self.cache_source = " ".join(["ldconfig -p"] + ([f"-C {custom}"] if custom else []))
        return self._cache

    def defaults(self) -> tuple[str, ...]:
        return tuple(str(self.under(d)) for d in ldso.default_dirs(self.arch))

    def resolve(self, soname: str, *, requester: str | None = None, dynamic: ldso.Dynamic | None = None,
                ld_library_path: Sequence[str] | None = None) -> Resolution:
        lib_path = ldso.env_lib_path(self.environ) if ld_library_path is None else tuple(ld_library_path)
        path, why = ldso.resolve(soname, ld_library_path=lib_path, requester=requester, dynamic=dynamic,
                                 cache=self.cache(), defaults=self.defaults())
        real = os.path.realpath(path) if path else None
        return Resolution(soname, path, why, library_version(Path(path)) if path else None, real)


# --------------------------------------------------------------------------- versions of files


def _dist_version(site: Path, component: str) -> str | None:
    """Version of NVIDIA's wheel that owns site-packages/nvidia/<component> (cu11/cu12 layout or cu13)."""
    names = {
        "cuda_runtime": ("nvidia_cuda_runtime_cu*", "nvidia_cuda_runtime"),
        "cudnn": ("nvidia_cudnn_cu*",),
        "cuda_nvcc": ("nvidia_cuda_nvcc_cu*", "nvidia_cuda_nvcc"),
        "cu13": ("nvidia_cuda_runtime", "nvidia_cuda_nvcc"),
    }.get(component, ())
    for stem in names:
        for info in sorted(site.glob(f"{stem}-*.dist-info")):
            return info.name[len(info.name.split("-")[0]) + 1:-len(".dist-info")]
    return None


def library_version(path: Path) -> str | None:
    """The release of a libcudart/libcudnn file: from its versioned name, its wheel, its conda
    package, its toolkit or the header beside it; None when nothing says."""
    real = Path(os.path.realpath(path))
    # "libcudart.so.12.1.105" names its version; "libcudart.so.11.0" is only CUDA 11's soname
    m = re.search(r"\.so\.(\d+\.\d+\.\d+(?:\.\d+)*)$", real.name)
    if m:
        return m.group(1)
    parts = real.parts
    if "nvidia" in parts:  # site-packages/nvidia/<component>/lib/...
        i = len(parts) - 1 - parts[::-1].index("nvidia")
        if i + 1 < len(parts):
            found = _dist_version(Path(*parts[:i]), parts[i + 1])
            if found:
                return found
    kind = "cudnn" if "cudnn" in real.name else "cudart"
    for up in (real.parent.parent, real.parent.parent.parent):
        meta = up / "conda-meta"
        if meta.is_dir():
            stems = ("cudnn-",) if kind == "cudnn" else ("cuda-cudart-", "cudatoolkit-")
            for stem in stems:
                for rec in sorted(meta.glob(f"{stem}[0-9]*.json")):
                    return rec.name[len(stem):].split("-")[0]
    for up in (real.parent.parent, real.parent.parent.parent):
        if kind == "cudart":
            from cuenv.machine.toolkits import version_from_files

            found = version_from_files(up)
            if found:
                return found
        else:
            header = cudnn_header_version(up / "include")
            if header:
                return header
    return None


def cudnn_header_version(include: Path) -> str | None:
    for name in ("cudnn_version.h", "cudnn.h"):
        try:
            text = limits.read_small(include / name, errors="replace")
        except OSError:
            continue
        found = parse_cudnn_header(text)
        if found:
            return found
    return None


def parse_cudnn_header(text: str) -> str | None:
    """ "#define CUDNN_MAJOR 9" ... -> "9.1.0"."""
    parts = []
    for key in ("MAJOR", "MINOR", "PATCHLEVEL"):
        m = re.search(rf"#define\s+CUDNN_{key}\s+(\d+)", text)
        if not m:
            return None
        parts.append(m.group(1))
    return ".".join(parts)


def tool_version(host: Host, exe: Path) -> str | None:
    """The CUDA release of an nvcc or ptxas: from its toolkit's files, its wheel, else by running it."""
    from cuenv.machine.toolkits import version_from_files

    real = Path(os.path.realpath(exe))
    for up in (real.parent.parent, real.parent.parent.parent):
        found = version_from_files(up)
        if found:
            return found
    if "nvidia" in real.parts:  # site-packages/nvidia/<component>/bin/ptxas: the wheel's version
        i = len(real.parts) - 1 - real.parts[::-1].index("nvidia")
        found = _dist_version(Path(*real.parts[:i]), real.parts[i + 1])
        if found:
            return ".".join(found.split(".")[:2])
    done = host.run([exe, "--version"])
    if done is None:
        return None
    m = _RELEASE.search(done.stdout + done.stderr)
    return m.group(1) if m else None


# --------------------------------------------------------------------------- sections


def driver_facts(host: Host, machine: Machine) -> DriverFacts:
    from cuenv.machine.nvsmi import parse_proc_version

    module = module_source = None
    for rel in ("proc/driver/nvidia/version", "sys/module/nvidia/version"):
        try:
            text = limits.read_small(host.under(rel), errors="replace")
        except OSError:
            continue
        module = parse_proc_version(text)
        if module:
            module_source = "/" + rel
            break
    nvml_error = next((n.split(": ", 1)[1] for n in machine.notes if n.startswith("nvml: ")), None)
    library = library_source = None
    if machine.driver is not None and machine.driver.source == "nvml" and machine.driver.version:
        library, library_source = machine.driver.version, "NVML"
    nvml_lib = host.resolve("libnvidia-ml.so.1")
    if library is None and nvml_lib.real_path:
        m = re.search(r"\.so\.(\d+\.\d+(?:\.\d+)?)$", nvml_lib.real_path)
        if m:
            library, library_source = m.group(1), Path(nvml_lib.real_path).name
    nodes = []
    for path in sorted(host.under("dev").glob("nvidia*")):
        if path.is_dir():
            continue
        nodes.append(DeviceNode("/dev/" + path.name, os.access(path, os.R_OK), os.access(path, os.W_OK)))
    return DriverFacts(module, module_source, library, library_source, nvml_error, tuple(nodes),
                       host.resolve("libcuda.so.1"))


def toolkit_facts(host: Host) -> ToolkitFacts:
    from cuenv.machine import toolkits
    from cuenv.machine.toolkits import version_from_files

    found = toolkits.discover(host.environ, host.root)
    from cuenv.envs.folder import is_shim

    on_path: list[CudaTool] = []
    stand_ins: list[str] = []
    behind: list[CudaTool] = []
    answered: set[str] = set()  # names an earlier folder answers (a tool or a shim): later ones never run by name
    seen: set[str] = set()
    for folder in host.environ.get("PATH", "").split(os.pathsep):
        if not folder:
            continue
        for tool in ("nvcc", "ptxas"):
            exe = Path(folder) / tool
            if not (exe.is_file() and os.access(exe, os.X_OK)):
                continue
            real = os.path.realpath(exe)
            if real in seen:
                break
            seen.add(real)
            version = tool_version(host, exe)
            if tool in answered:  # e.g. /usr/local/bin/ptxas behind an environment's own ptxas (issue 17)
                if version is not None:
                    behind.append(CudaTool(str(exe), version, tool))
                continue
            answered.add(tool)
            if version is None and is_shim(exe):  # refuses to run another release: no tool of any CUDA
                stand_ins.append(str(exe))
                continue
            on_path.append(CudaTool(str(exe), version, tool))
            answered.update(t for t in ("nvcc", "ptxas") if (Path(folder) / t).is_file())
            break  # one tool per folder: nvcc speaks for its toolkit
    nvcc = next((t for t in on_path if t.tool == "nvcc"), None)
    cuda_vars = tuple((var, host.environ[var], version_from_files(Path(host.environ[var])))
                      for var in toolkits.ENV_VARS if host.environ.get(var))
    return ToolkitFacts(tuple(found), nvcc, tuple(on_path), cuda_vars, tuple(stand_ins), tuple(behind))


def _requester(env: EnvFacts | None, sites: Sequence[Path]) -> tuple[str | None, ldso.Dynamic | None]:
    for site in sites:
        for rel in REQUESTERS:
            path = site / rel
            if path.is_file():
                return str(path), ldso.read_dynamic(path)
    return None, None


def library_facts(host: Host, env: EnvFacts | None, sites: Sequence[Path]) -> LibraryFacts:
    entries = []
    for entry in ldso.env_lib_path(host.environ):
        if not entry:
            continue
        exists = os.path.isdir(entry)
        versions = tuple(dict.fromkeys(
            v for n in ldso.sonames_in(entry, _CUDART) if (v := library_version(Path(entry) / n))))
        entries.append(LdEntry(entry, exists, versions))
    requester, dynamic = _requester(env, sites)
    cache = host.cache()
    names = set(ldso.cache_sonames(cache, r"libcudart\.so\.\d+(?:\.0)?"))
    folders = [*ldso.env_lib_path(host.environ)]
    if dynamic is not None and requester:
        folders += ldso.expand_origin(dynamic.rpath + dynamic.runpath, os.path.dirname(requester))
    for folder in folders:
        names.update(ldso.sonames_in(folder, r"libcudart\.so\.\d+(?:\.0)?") if folder else ())
    cudart = tuple(host.resolve(n, requester=requester, dynamic=dynamic) for n in sorted(names, key=_soname_key))
    required = []
    stack = env.stack if env else None
    if stack is not None and stack.cuda:
        major = int(stack.cuda.split(".")[0])
        required.append(host.resolve(cudart_soname(major), requester=requester, dynamic=dynamic))
        if stack.cudnn:
            required.append(host.resolve(f"libcudnn.so.{stack.cudnn.split('.')[0]}", requester=requester, dynamic=dynamic))
    return LibraryFacts(tuple(entries), host.cache_source, requester, cudart, tuple(required),
                        stack.cuda if stack else None)


def cudart_soname(major: int) -> str:
    """CUDA 10 and 11 name their runtime libcudart.so.X.0; CUDA 12 on libcudart.so.X."""
    return f"libcudart.so.{major}.0" if major <= 11 else f"libcudart.so.{major}"


def _soname_key(name: str) -> tuple[int, ...]:
    return tuple(int(p) for p in re.findall(r"\d+", name.split(".so.", 1)[-1]))


def cudnn_facts(host: Host, env: EnvFacts | None, toolkit: ToolkitFacts, sites: Sequence[Path]) -> CudnnFacts:
    triplet = ldso.default_dirs(host.arch)[0].split("/")[-1]
    includes = [host.under("usr/include"), host.under(f"usr/include/{triplet}")]
    includes += [Path(t.path) / "include" for t in toolkit.toolkits]
    includes += [Path(v) / "include" for _, v, _ in toolkit.cuda_vars]
    if env is not None and env.layout is not None:
        includes += list(env.layout.include_dirs)
    includes += [site / "nvidia" / "cudnn" / "include" for site in sites]
    headers = []
    for inc in dict.fromkeys(Path(os.path.realpath(i)) for i in includes):
        version = cudnn_header_version(inc)
        if version:
            headers.append((str(inc / "cudnn_version.h"), version))
    folders = [e for e in ldso.env_lib_path(host.environ) if e]
    if env is not None and env.layout is not None:
        folders += [str(p) for p in env.layout.lib_dirs]
    folders += [str(site / "nvidia" / "cudnn" / "lib") for site in sites]
    names: dict[str, str] = {}
    for folder in folders:
        for n in ldso.sonames_in(folder, r"libcudnn\.so\.\d+"):
            names.setdefault(os.path.realpath(os.path.join(folder, n)), n)
    for soname, path in host.cache():
        if re.fullmatch(r"libcudnn\.so\.\d+", soname):
            names.setdefault(os.path.realpath(path), soname)
    libraries = []
    for real in names:
        version = library_version(Path(real)) or probe_cudnn(host, real)
        libraries.append((real, version))
    loaded = None
    for soname in sorted(set(names.values()), key=_soname_key, reverse=True):
        loaded = host.resolve(soname)
        if loaded.version is None and loaded.real_path:
            loaded = Resolution(loaded.soname, loaded.path, loaded.via, dict(libraries).get(loaded.real_path),
                                loaded.real_path)
        break
    return CudnnFacts(tuple(headers), tuple(libraries), loaded)


def probe_cudnn(host: Host, path: str) -> str | None:
    """cudnnGetVersion() in a child process: loading libcudnn.so.9 alone can abort the caller."""
    import sys

    code = ("import ctypes,sys;l=ctypes.CDLL(sys.argv[1]);l.cudnnGetVersion.restype=ctypes.c_size_t;"
            "print(l.cudnnGetVersion())")
    done = host.run([sys.executable, "-c", code, path], timeout=20.0)
    if done is None or done.returncode != 0 or not done.stdout.strip().isdigit():
        return None
    v = int(done.stdout.strip())
    return f"{v // 10000}.{v // 100 % 100}.{v % 100}" if v >= 10000 else f"{v // 1000}.{v // 100 % 10}.{v % 100}"


def compiler_facts(host: Host, toolkit: ToolkitFacts) -> CompilerFacts:
    var = next(((n, host.environ[n]) for n in ("CUDAHOSTCXX", "NVCC_CCBIN") if host.environ.get(n)), None)
    exe = var[1] if var else host.which("gcc")
    version = None
    if exe:
        done = host.run([exe, "-dumpfullversion", "-dumpversion"])
        if done is not None and done.returncode == 0:
            version = done.stdout.strip().splitlines()[0] if done.stdout.strip() else None
    return CompilerFacts(version, exe, var, toolkit.nvcc.version if toolkit.nvcc else None)


def container_facts(host: Host) -> ContainerFacts:
    extra = [str(host.under(d)) for d in ("usr/bin", "usr/local/bin")] if host.root != Path("/") else []
    engines = tuple((n, p) for n in ("docker", "podman") if (p := host.which(n, extra)))
    kit = tuple((n, p) for n in ("nvidia-ctk", "nvidia-container-cli", "nvidia-container-runtime")
                if (p := host.which(n, extra)))
    daemon = host.under("etc/docker/daemon.json")
    runtimes: tuple[str, ...] = ()
    daemon_path = None
    if daemon.is_file():
        daemon_path = "/etc/docker/daemon.json"
        try:
            data = json.loads(limits.read_small(daemon) or "{}")
            runtimes = tuple(sorted((data.get("runtimes") or {}).keys()))
        except (OSError, ValueError, AttributeError):
            runtimes = ()
    specs = []
    for folder in ("etc/cdi", "var/run/cdi"):
        base = host.under(folder)
        specs += ["/" + folder + "/" + p.name for p in sorted(base.glob("*")) if p.suffix in (".yaml", ".yml", ".json")]
    return ContainerFacts(engines, kit, runtimes, daemon_path, tuple(specs))


def disk_facts(home: Path) -> tuple[str, int] | None:
    path = Path(home)
    while not path.exists() and path != path.parent:
        path = path.parent
    try:
        return str(path), shutil.disk_usage(path).free
    except OSError:
        return None


def site_packages(env: EnvFacts | None) -> tuple[Path, ...]:
    if env is None or env.layout is None:
        return ()
    prefix = Path(env.layout.prefix)
    return tuple(sorted(prefix.glob("lib/python3*/site-packages")))


# --------------------------------------------------------------------------- entry point


def activation_route(environ: Mapping[str, str], name: str, active: bool) -> str:
    """How environment ``name`` came into this process (issue 17 §6): a module, the shell, or not at all."""
    if not active:
        return "simulated"
    loaded = environ.get("LOADEDMODULES", "").split(":")
    return "module" if f"cuenv/{name}" in loaded else "shell"


def env_facts(record: EnvRecord, active: bool, environ: Mapping[str, str] | None = None) -> EnvFacts:
    from cuenv.envs.meta import stack_from_meta

    meta = record.known  # a damaged meta.json leaves what it would have said unknown
    return EnvFacts(record.name, active, stack_from_meta(meta) if meta else None, meta.layout if meta else None,
                    route=activation_route(environ or {}, record.name, active),
                    recipe=meta.recipe.name if meta else None, tools_recorded=meta is not None and meta.tools is not None,
                    compiler_hint=meta.compiler_hint if meta else None)


def activated(environ: Mapping[str, str], record: EnvRecord, home: Path) -> dict[str, str]:
    """The variables a command sees inside the environment: the same plan as `cuenv use`."""
    from cuenv.activation.plan import activated_env

    return activated_env(environ, record.target(), Path(home))


def gather(environ: Mapping[str, str], *, home: Path, record: EnvRecord | None = None, active: bool = False,
           root: Path = Path("/"), ld_cache: Path | None = None, frameworks: bool = True,
           framework_timeout: float | None = None, cache_dir: Path | None = None) -> Facts:
    """Every fact doctor needs about this machine (and the environment ``record``, if any).

    ``cache_dir`` keeps the per-file results of the kernel scan of the environment's shared objects.
    """
    from cuenv.machine.driver import detect

    env = env_facts(record, active, environ) if record is not None else None
    if record is not None and not active:
        environ = activated(environ, record, home)
    host = Host(environ, Path(root), ld_cache)
    machine = detect(environ, root=host.root)
    sites = site_packages(env)
    toolkit = toolkit_facts(host)
    framework = None
    if env is not None and frameworks:
        from cuenv.doctor import frameworks as fw

        python = Path(env.layout.prefix) / "bin" / "python" if env.layout else Path("-")
        if not sites or not fw.installed(sites):
            framework = FrameworkFacts(python=str(python))
        else:
            framework = fw.probe(python, sites, environ, **({"timeout": framework_timeout} if framework_timeout else {}))
    from cuenv.doctor import signatures

    messages = [m for p in (framework.probes if framework else ()) for m in (*p.messages, p.error or "")]
    return Facts(
        origin="this machine",
        machine=machine,
        driver=driver_facts(host, machine),
        toolkits=toolkit,
        libraries=library_facts(host, env, sites),
        cudnn=cudnn_facts(host, env, toolkit, sites),
        compiler=compiler_facts(host, toolkit),
        container=container_facts(host),
        framework=framework,
        disk=disk_facts(home),
        env=env,
        kernels=_kernels(record, cache_dir),
        errors=signatures.scan(messages),
    )


def examine(settings: Settings, environ: Mapping[str, str], *, name: str | None = None, root: Path = Path("/"),
            ld_cache: Path | None = None, frameworks: bool = True, framework_timeout: float | None = None) -> Facts:
    """Doctor's facts for this machine and environment ``name`` (default: the active one, if any).

    An active environment that is gone, or a system toolkit (``system:13.0``), has nothing inside to
    probe: its checks run on the machine alone.
    """
    from cuenv.envs.store import Store

    active = False
    if not name and environ.get("CUENV_ACTIVE"):
        name, active = environ["CUENV_ACTIVE"], True
    record = None
    if name:
        store = Store.from_settings(settings)
        if active:
            try:
                record = store.get(name) if store.path(name).is_dir() else None
            except CuenvError:
                record = None
        else:
            record = store.get(name)
    if not root.is_dir():
        raise UsageError(f"--root {str(root)!r} is not a folder.")
    if ld_cache is not None and not ld_cache.is_file():
        import shlex

        write = f"/sbin/ldconfig -X -C {shlex.quote(str(ld_cache))}"
        raise NotFound(f"No linker cache file {str(ld_cache)!r}.",
                       hint=f"Write one of this machine's libraries with `{write}`, or leave out --ld-cache.")
    return gather(environ, home=settings.home, record=record, active=active, root=root, ld_cache=ld_cache,
                  frameworks=frameworks, framework_timeout=framework_timeout, cache_dir=settings.cache_dir)


def _kernels(record: EnvRecord | None, cache_dir: Path | None) -> ScanReport | None:
    if record is None or not Path(record.prefix).is_dir():
        return None
    from cuenv.binaries.scan import scan

    return scan(Path(record.prefix), cache_dir=cache_dir)
