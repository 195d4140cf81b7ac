"""`cuenv info`: this machine at a glance (driver, newest CUDA, GPUs, system toolkits, engines);
`cuenv info NAME`: one environment."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Mapping, Sequence

from cuenv.result import Result

if TYPE_CHECKING:
    import argparse  # annotations only: the fast path never imports argparse (issue 29)

    from cuenv.cli.main import Context
    from cuenv.envs.meta import EnvMeta
    from cuenv.machine.model import Machine
    from cuenv.machine.toolkits import SystemToolkit


def configure(parser: argparse.ArgumentParser, name: str) -> None:
    parser.add_argument("name", nargs="?", help="an environment to describe (default: this machine)")
    parser.add_argument("--refresh", action="store_true", help="detect the driver again instead of using the cache")


def run(ctx: Context) -> Result:
    name = getattr(ctx.args, "name", None)
    if name:
        return _env_info(ctx, name)
    return _machine_info(ctx)


def _env_info(ctx: Context, name: str) -> Result:
    """One environment: what it holds, where its CUDA pieces are, and its verdict on this machine."""
    from cuenv.envs import folder, verdict
    from cuenv.envs.store import Store

    record = Store.from_settings(ctx.settings).get(name, allow_incomplete=True)
    if record.broken is not None:
        raise record.broken  # what is damaged, and the fix
    meta = record.known
    state, reason = verdict.status(record, ctx.environ, ctx.settings.cache_dir)
    findings = [] if not record.complete else verdict.findings_for(record, ctx.environ, ctx.settings.cache_dir)
    from cuenv.envs import cudatools

    recorded = meta.to_json() if meta is not None else {}
    data = {"name": name, "path": str(record.prefix), "status": state, "reason": reason, "installed": cudatools.facts(meta),
            "nvcc": _nvcc_line(meta), "shims_dir": str(folder.shims_dir(record.path)) if meta and meta.tools else None,
            "findings": [f.to_json() for f in findings],
            **{k: v for k, v in recorded.items() if k not in ("validation", "name")}}
    return Result(data=data, text=_render_env(data))


# meta's "resolved" keys name packages: NVIDIA's cu11/cu12 nvcc package holds ptxas but no nvcc
_PACKAGE_LABELS = {"nvcc": "nvcc-package"}


def _nvcc_line(meta: EnvMeta | None) -> str:
    from cuenv.activation import shims
    from cuenv.envs import cudatools

    tool = meta.tools.get("nvcc") if meta is not None and meta.tools is not None else None
    if meta is None or tool is None:
        return "unknown (made before cuenv recorded its tools; `cuenv create ... --force` records them)"
    choice = shims.ToolChoice("nvcc", tool.source, tool.path, tool.toolkit)
    return shims.describe(choice, cudatools.env_release(meta))


def _render_env(d: dict) -> str:
    from cuenv.cli.table import human_size

    recipe = d.get("recipe") or {}
    fw = d.get("framework") or {}
    layout = d.get("layout") or {}
    installed = d.get("installed") or {}
    rows = [
        ("Name", d["name"]), ("Path", d["path"]),
        ("Status", d["status"] + (f" ({d['reason']})" if d.get("reason") else "")),
        ("Recipe", f"{recipe.get('name', '-')}" + (f"@{recipe['version']}" if recipe.get("version") else "")),
        ("Engine", f"{d.get('engine', '-')}  ({d.get('engine_reason', '')})"),
        ("Python", d.get("python") or "-"),
        ("CUDA", installed.get("cuda", "-")), ("cuDNN", installed.get("cudnn", "-")), ("nvcc", d.get("nvcc") or "-"),
        ("Framework", f"{fw['name']} {fw['version']}" if fw.get("name") else "-"),
        ("Packages", ", ".join(f"{_PACKAGE_LABELS.get(k, k)} {v}" for k, v in (d.get("resolved") or {}).items()) or "-"),
        ("Nominal", f"CUDA {d.get('cuda') or '-'}, cuDNN {d.get('cudnn') or '-'} (what the recipe names)"),
        ("Size", human_size(d.get("size_bytes"))), ("Created", d.get("created") or "-"),
        ("CUDA_HOME", layout.get("cuda_home") or "-"),
    ]
    from cuenv.trust.shown import terminal_safe

    lines = [f"{k:<10} {terminal_safe(v)}" for k, v in rows]  # values from an archive's metadata: one line each
    for key, label in (("bin_dirs", "PATH"), ("lib_dirs", "LD_LIB")):
        extra = [f"{d['shims_dir']}  (cuenv's stand-ins for the CUDA tools it lacks)"] if key == "bin_dirs" and d.get("shims_dir") else []
        for i, p in enumerate([*(layout.get(key) or ()), *extra]):  # in the order activation puts them
            lines.append(f"{label if i == 0 else '':<10} {p}")
    for f in d.get("findings", []):
        if f["severity"] in ("error", "warning"):
            lines.append(f"{f['severity']}: {f['message']}")
            if f.get("fix"):
                lines.append(f"  fix: {f['fix']}")
    return "\n".join(lines)


def _machine_info(ctx: Context) -> Result:
    from cuenv import engines
    from cuenv.machine import driver, toolkits

    machine = driver.detect(ctx.environ, cache_dir=ctx.settings.cache_dir,
                            refresh=bool(getattr(ctx.args, "refresh", False)))
    data = report(machine, toolkits.discover(ctx.environ), engines.available(ctx.environ, cache_dir=ctx.settings.cache_dir))
    return Result(data=data, text=render(data))


def report(machine: Machine, found_toolkits: Sequence[SystemToolkit], engines: Mapping[str, Any]) -> dict:
    """Pure: the `info --json` document for a machine, its toolkits and engines."""
    from dataclasses import asdict

    from cuenv.knowledge import gpus

    rows = []
    for gpu in machine.gpus:
        row = asdict(gpu)
        feats = asdict(gpus.features(gpu.compute_capability)) if gpu.compute_capability else {}
        for key in ("fp16_tensor_cores", "bf16", "fp8", "tf32"):
            row[key] = feats.get(key)
        rows.append(row)
    return {
        "os": machine.os,
        "arch": machine.arch,
        "glibc": machine.glibc,
        "driver": asdict(machine.driver) if machine.driver else None,
        "gpus": rows,
        "toolkits": [asdict(t) for t in found_toolkits],
        "engines": dict(engines),
        "notes": list(machine.notes),
    }


def _engine_line(name: str, engine: Mapping[str, Any]) -> str:
    """``conda 26.7.1 (/usr/bin/conda, solver classic)``; the others by name and path."""
    version = f" {engine['version']}" if engine.get("version") else ""
    solver = f", solver {engine['solver']}" if engine.get("solver") else ""
    return f"{name}{version} ({engine['path']}{solver})"


def _yes(value: bool | None) -> str:
    return "?" if value is None else "yes" if value else "no"


def render(data: Mapping[str, Any]) -> str:
    """Pure: the text people read."""
    lines = [f"OS        {data['os']} {data['arch']}" + (f" (glibc {data['glibc']})" if data.get("glibc") else "")]
    drv = data["driver"]
    if drv is None:
        lines.append("Driver    no NVIDIA driver found")
    else:
        version = drv["version"] or "version unknown"
        newest = f"newest CUDA {drv['max_cuda']}" if drv["max_cuda"] else "newest CUDA unknown"
        lines.append(f"Driver    {version}, {newest} (from {drv['source']})")
    for note in data["notes"]:
        lines.append(f"          - {note}")
    if not data["gpus"]:
        lines.append("GPUs      none")
    for i, g in enumerate(data["gpus"]):
        label = "GPUs      " if i == 0 else "          "
        cc = f"cc {g['compute_capability']}" if g["compute_capability"] else "cc unknown"
        mem = f"{g['memory_mib'] / 1024:.0f} GiB" if g["memory_mib"] else "memory unknown"
        extra = "  MIG on" if g.get("mig") else ""
        lines.append(f"{label}{g['index']}  {g['name']}  {cc}  {g['architecture'] or '?'}  {mem}  "
                     f"BF16 {_yes(g['bf16'])}  FP8 {_yes(g['fp8'])}{extra}")
    if not data["toolkits"]:
        lines.append("Toolkits  none found")
    for i, t in enumerate(data["toolkits"]):
        label = "Toolkits  " if i == 0 else "          "
        version = f"CUDA {t['version']}" if t["version"] else "CUDA version unknown"
        nvcc = f"  nvcc {t['nvcc']}" if t["nvcc"] else ""
        lines.append(f"{label}{t['path']}  {version}{nvcc}  (found via {t['source']})")
    have = [_engine_line(n, e) for n, e in data["engines"].items() if e["available"]]
    missing = [n for n, e in data["engines"].items() if not e["available"]]
    lines.append("Engines   " + (", ".join(have) if have else "none"))
    if missing:
        lines.append("          not found: " + ", ".join(missing))
    return "\n".join(lines)
