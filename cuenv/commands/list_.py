"""`cuenv list`: the environments, what each holds, and whether it runs on this machine."""

from __future__ import annotations

from cuenv.result import Result

TYPE_CHECKING = False  # no `typing` at run time: the start-up path does without it (issue 29)
if TYPE_CHECKING:
    import argparse

    from cuenv.cli.main import Context


def configure(parser: argparse.ArgumentParser, name: str) -> None:
    parser.add_argument("--system", action="store_true", help="also list the CUDA toolkits installed on the system")
    parser.add_argument("--du", action="store_true", help="measure disk use now (shared hardlinks counted once)")


def _row(record, ctx, fp: str) -> dict:
    from cuenv.envs import cudatools, verdict

    meta = record.known  # None: its meta.json is damaged or missing (then it is "incomplete")
    real = cudatools.facts(meta)
    state, reason = verdict.status(record, ctx.environ, ctx.settings.cache_dir, fp=fp)
    return {
        "name": record.name,
        "path": str(record.prefix),
        "recipe": meta.recipe.name if meta else None,
        "engine": meta.engine if meta else None,
        "cuda": real["cuda"],
        "cudnn": real["cudnn"],
        "nvcc": real["nvcc"],
        "framework": meta.framework if meta else None,
        "size_bytes": meta.size_bytes if meta else None,
        "status": state,
        "reason": reason,
    }


def run(ctx: Context) -> Result:
    from cuenv.cli.table import human_size, render
    from cuenv.envs.store import Store

    store = Store.from_settings(ctx.settings)
    from cuenv.machine.fingerprint import fingerprint

    fp = fingerprint(ctx.environ)  # once: it reads /proc, and the machine is the same for every row
    rows = [_row(r, ctx, fp) for r in store.list()]
    if ctx.args.du:
        _measure(rows)
    data: dict = {"environments": rows}
    if ctx.args.system:
        from cuenv.machine.toolkits import discover

        data["system"] = [
            {"name": f"system:{t.version}", "path": str(t.path), "version": t.version} for t in discover(ctx.environ)
        ]
    if not rows and not ctx.args.system:
        return Result(data=data, text="No environments yet. Create one with `cuenv create RECIPE` (see `cuenv recipes`).")
    lines = []
    if rows:
        lines.append(render(
            ["NAME", "RECIPE", "ENGINE", "CUDA", "CUDNN", "NVCC", "FRAMEWORK", "SIZE", "STATUS"],
            [[r["name"], r["recipe"], r["engine"], r["cuda"], r["cudnn"], r["nvcc"], r["framework"], human_size(r["size_bytes"]),
              r["status"] + (f" ({r['reason']})" if r["reason"] else "")] for r in rows],
        ))
    if ctx.args.system:
        lines.append("")
        lines.append(render(["SYSTEM TOOLKIT", "PATH"], [[s["name"], s["path"]] for s in data["system"]]) if data["system"]
                     else "No CUDA toolkits found on the system.")
    return Result(data=data, text="\n".join(lines).strip("\n"))


def _measure(rows: list[dict]) -> None:
    """Disk use with every inode counted once across all environments (the first one listed owns it)."""
    from pathlib import Path

    from cuenv.envs.diskuse import disk_usage

    seen: set[tuple[int, int]] = set()
    for row in rows:
        row["size_bytes"] = disk_usage(Path(row["path"]), seen)
