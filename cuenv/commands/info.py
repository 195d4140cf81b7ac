"""`cuenv info`: this machine at a glance (driver, newest CUDA, GPUs, system toolkits, engines);
`cuenv info NAME`: one environment."""

from __future__ import annotations

from cuenv.result import Result

TYPE_CHECKING = False  # no `typing` at run time: `cuenv info` starts like a shell tool (issue 29)
if TYPE_CHECKING:
    import argparse  # annotations only: the fast path never imports argparse (issue 29)
    from typing import Mapping, Sequence

    from cuenv.cli.main import Context
    from cuenv.envs.meta import EnvMeta
    from cuenv.envs.store import EnvRecord
    from cuenv.knowledge.findings import Finding
    from cuenv.machine.model import Gpu, Machine
    from cuenv.machine.toolkits import SystemToolkit
    from cuenv.result import JSON, JSONObject


def configure(parser: argparse.ArgumentParser, name: str) -> None:
    parser.add_argument("name", nargs="?", help="an environment to describe (default: this machine)")
    parser.add_argument("--refresh", action="store_true", help="detect the driver again instead of using the cache")


def run(ctx: Context) -> Result[EnvInfo] | Result[MachineInfo]:
    name = getattr(ctx.args, "name", None)
    if name:
        return Result(_env_info(ctx, name), _render_env)
    return _machine_info(ctx)


class EnvInfo:
    """`cuenv info NAME`: the record as stored (its meta: None for one still being made), with its verdict
    here and how its nvcc is provided."""

    __slots__ = ("findings", "installed", "meta", "nvcc", "reason", "record", "shims_dir", "status")

    def __init__(self, record: EnvRecord, *, status: str, reason: str | None, installed: Mapping[str, str], nvcc: str,
                 shims_dir: str | None, findings: Sequence[Finding]) -> None:
        self.record, self.meta, self.status, self.reason, self.installed = record, record.known, status, reason, installed
        self.nvcc, self.shims_dir, self.findings = nvcc, shims_dir, findings

    def to_json(self) -> JSONObject:
        from typing import cast  # `info NAME` only

        recorded = self.meta.to_json() if self.meta is not None else {}
        return {"name": self.record.name, "path": str(self.record.prefix), "status": self.status, "reason": self.reason,
                "installed": dict(self.installed), "nvcc": self.nvcc, "shims_dir": self.shims_dir,
                "findings": [f.to_json() for f in self.findings],
                **{k: cast("JSON", v) for k, v in recorded.items() if k not in ("validation", "name")}}


def _env_info(ctx: Context, name: str) -> EnvInfo:
    """One environment: what it holds, where its CUDA pieces are, and its verdict on this machine."""
    from cuenv.envs import cudatools, folder, verdict
    from cuenv.envs.store import Store

    record = Store.from_settings(ctx.settings).get(name, allow_incomplete=True)
    if record.broken is not None:
        raise record.broken  # what is damaged, and the fix
    meta = record.known
    state, reason = verdict.status(record, ctx.environ, ctx.settings.cache_dir)
    findings = [] if not record.complete else verdict.findings_for(record, ctx.environ, ctx.settings.cache_dir)
    return EnvInfo(record, status=state, reason=reason, installed=cudatools.facts(meta), nvcc=_nvcc_line(meta),
                   shims_dir=str(folder.shims_dir(record.path)) if meta and meta.tools else None, findings=findings)


# meta's "resolved" keys name packages: NVIDIA's cu11/cu12 nvcc package holds ptxas but no nvcc
_PACKAGE_LABELS = {"nvcc": "nvcc-package"}


def _nvcc_line(meta: EnvMeta | None) -> str:
    from cuenv.activation import shims
    from cuenv.envs import cudatools

    tool = meta.tools.get("nvcc") if meta is not None and meta.tools is not None else None
    if meta is None or tool is None:
        return "unknown (made before cuenv recorded its tools; `cuenv create` again with --force records them)"
    choice = shims.ToolChoice("nvcc", tool.source, tool.path, tool.toolkit)
    return shims.describe(choice, cudatools.env_release(meta))


def _render_env(info: EnvInfo) -> str:
    from cuenv.cli.table import human_size

    meta = info.meta
    recipe = meta.recipe if meta is not None else None
    stack = meta.stack if meta is not None else None
    layout = meta.layout if meta is not None else None
    installed = info.installed
    rows = [
        ("Name", info.record.name), ("Path", str(info.record.prefix)),
        ("Status", info.status + (f" ({info.reason})" if info.reason else "")),
        ("Recipe", (recipe.name if recipe else "-") + (f"@{recipe.version}" if recipe and recipe.version else "")),
        ("Engine", f"{meta.engine}  ({meta.engine_reason})" if meta is not None else "-  ()"),
        ("Python", (meta.python if meta is not None else None) or "-"),
        ("CUDA", installed.get("cuda", "-")), ("cuDNN", installed.get("cudnn", "-")), ("nvcc", info.nvcc or "-"),
        ("Framework", (meta.framework if meta is not None else None) or "-"),
        ("Packages", ", ".join(f"{_PACKAGE_LABELS.get(k, k)} {v}" for k, v in (meta.resolved if meta else {}).items()) or "-"),
        ("Nominal", f"CUDA {(stack.cuda if stack else None) or '-'}, cuDNN {(stack.cudnn if stack else None) or '-'}"
                    " (what the recipe names)"),
        ("Size", human_size(meta.size_bytes if meta is not None else None)),
        ("Created", (meta.created if meta is not None else None) or "-"),
        ("CUDA_HOME", str(layout.cuda_home) if layout is not None and layout.cuda_home else "-"),
    ]
    from cuenv.trust.shown import terminal_safe

    lines = [f"{k:<10} {terminal_safe(v)}" for k, v in rows]  # values from an archive's metadata: one line each
    dirs = {"PATH": layout.bin_dirs if layout else (), "LD_LIB": layout.lib_dirs if layout else ()}
    for label, paths in dirs.items():
        extra = [f"{info.shims_dir}  (cuenv's stand-ins for the CUDA tools it lacks)"] if label == "PATH" and info.shims_dir else []
        for i, p in enumerate([*map(str, paths), *extra]):  # in the order activation puts them
            lines.append(f"{label if i == 0 else '':<10} {p}")
    for f in info.findings:
        if f.severity in ("error", "warning"):
            lines.append(f"{f.severity}: {f.message}")
            if f.fix:
                lines.append(f"  fix: {f.fix}")
    return "\n".join(lines)


def _machine_info(ctx: Context) -> Result[MachineInfo]:
    from cuenv import engines
    from cuenv.machine import driver, toolkits

    machine = driver.detect(ctx.environ, cache_dir=ctx.settings.cache_dir,
                            refresh=bool(getattr(ctx.args, "refresh", False)))
    found = report(machine, toolkits.discover(ctx.environ), engines.available(ctx.environ, cache_dir=ctx.settings.cache_dir))
    return Result(found, render)


class MachineInfo:
    """`cuenv info`: this machine, its system toolkits and the engines found (name -> what cuenv.engines.available says)."""

    __slots__ = ("engines", "machine", "toolkits")

    def __init__(self, machine: Machine, toolkits: Sequence[SystemToolkit], engines: Mapping[str, Mapping[str, JSON]]) -> None:
        self.machine, self.toolkits, self.engines = machine, toolkits, engines

    def features(self, gpu: Gpu) -> dict[str, bool | None]:
        """What each GPU supports, by its compute capability (None: unknown)."""
        from cuenv.knowledge import gpus

        feats = gpus.features(gpu.compute_capability).fields() if gpu.compute_capability else {}
        return {key: feats.get(key) for key in ("fp16_tensor_cores", "bf16", "fp8", "tf32")}

    def to_json(self) -> JSONObject:
        m = self.machine
        return {
            "os": m.os,
            "arch": m.arch,
            "glibc": m.glibc,
            "driver": m.driver.fields() if m.driver else None,
            "gpus": [{**gpu.fields(), **self.features(gpu)} for gpu in m.gpus],
            "toolkits": [t.fields() for t in self.toolkits],
            "engines": {name: dict(e) for name, e in self.engines.items()},
            "notes": list(m.notes),
        }


def report(machine: Machine, found_toolkits: Sequence[SystemToolkit], engines: Mapping[str, Mapping[str, JSON]]) -> MachineInfo:
    """Pure: what `cuenv info` says of a machine, its toolkits and engines."""
    return MachineInfo(machine, found_toolkits, engines)


def _engine_line(name: str, engine: Mapping[str, JSON]) -> str:
    """``conda 26.7.1 (/usr/bin/conda, solver classic)``; the others by name and path."""
    version = f" {engine['version']}" if engine.get("version") else ""
    solver = f", solver {engine['solver']}" if engine.get("solver") else ""
    return f"{name}{version} ({engine['path']}{solver})"


def _yes(value: bool | None) -> str:
    return "?" if value is None else "yes" if value else "no"


def render(info: MachineInfo) -> str:
    """Pure: the text people read."""
    m = info.machine
    lines = [f"OS        {m.os} {m.arch}" + (f" (glibc {m.glibc})" if m.glibc else "")]
    drv = m.driver
    if drv is None:
        lines.append("Driver    no NVIDIA driver found")
    else:
        version = drv.version or "version unknown"
        newest = f"newest CUDA {drv.max_cuda}" if drv.max_cuda else "newest CUDA unknown"
        lines.append(f"Driver    {version}, {newest} (from {drv.source})")
    for note in m.notes:
        lines.append(f"          - {note}")
    if not m.gpus:
        lines.append("GPUs      none")
    for i, g in enumerate(m.gpus):
        label = "GPUs      " if i == 0 else "          "
        cc = f"cc {g.compute_capability}" if g.compute_capability else "cc unknown"
        mem = f"{g.memory_mib / 1024:.0f} GiB" if g.memory_mib else "memory unknown"
        extra = "  MIG on" if g.mig else ""
        feats = info.features(g)
        lines.append(f"{label}{g.index}  {g.name}  {cc}  {g.architecture or '?'}  {mem}  "
                     f"BF16 {_yes(feats['bf16'])}  FP8 {_yes(feats['fp8'])}{extra}")
    if not info.toolkits:
        lines.append("Toolkits  none found")
    for i, t in enumerate(info.toolkits):
        label = "Toolkits  " if i == 0 else "          "
        version = f"CUDA {t.version}" if t.version else "CUDA version unknown"
        nvcc = f"  nvcc {t.nvcc}" if t.nvcc else ""
        lines.append(f"{label}{t.path}  {version}{nvcc}  (found via {t.source})")
    have = [_engine_line(n, e) for n, e in info.engines.items() if e["available"]]
    missing = [n for n, e in info.engines.items() if not e["available"]]
    lines.append("Engines   " + (", ".join(have) if have else "none"))
    if missing:
        lines.append("          not found: " + ", ".join(missing))
    return "\n".join(lines)
