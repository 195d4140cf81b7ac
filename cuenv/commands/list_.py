"""`cuenv list`: the environments, what each holds, and whether it runs on this machine."""

from __future__ import annotations

from cuenv.result import Result

TYPE_CHECKING = False  # no `typing` at run time: the start-up path does without it (issue 29)
if TYPE_CHECKING:
    import argparse

    from cuenv.cli.main import Context
    from cuenv.envs.store import EnvRecord
    from cuenv.result import JSONObject


def configure(parser: argparse.ArgumentParser, name: str) -> None:
    parser.add_argument("--system", action="store_true", help="also list the CUDA toolkits installed on the system")
    parser.add_argument("--du", action="store_true", help="measure disk use now (shared hardlinks counted once)")


class EnvRow:
    """One environment in `cuenv list` (and `list --json`'s ``environments``)."""

    __slots__ = ("cuda", "cudnn", "engine", "framework", "name", "nvcc", "path", "reason", "recipe", "size_bytes", "status")

    def __init__(self, *, name: str, path: str, recipe: str | None, engine: str | None, cuda: str | None,
                 cudnn: str | None, nvcc: str | None, framework: str | None, size_bytes: int | None, status: str,
                 reason: str | None) -> None:
        self.name, self.path, self.recipe, self.engine = name, path, recipe, engine
        self.cuda, self.cudnn, self.nvcc, self.framework = cuda, cudnn, nvcc, framework
        self.size_bytes, self.status, self.reason = size_bytes, status, reason

    def to_json(self) -> JSONObject:
        return {"name": self.name, "path": self.path, "recipe": self.recipe, "engine": self.engine, "cuda": self.cuda,
                "cudnn": self.cudnn, "nvcc": self.nvcc, "framework": self.framework, "size_bytes": self.size_bytes,
                "status": self.status, "reason": self.reason}


class SystemRow:
    """A CUDA toolkit installed on the system (`list --system`)."""

    __slots__ = ("name", "path", "version")

    def __init__(self, name: str, path: str, version: str | None) -> None:
        self.name, self.path, self.version = name, path, version

    def to_json(self) -> JSONObject:
        return {"name": self.name, "path": self.path, "version": self.version}


class Listing:
    """`cuenv list`: ``{"environments": [...]}``, plus ``"system": [...]`` with --system."""

    __slots__ = ("environments", "system")

    def __init__(self, environments: list[EnvRow], system: list[SystemRow] | None) -> None:
        self.environments = environments
        self.system = system

    def to_json(self) -> JSONObject:
        data: JSONObject = {"environments": [r.to_json() for r in self.environments]}
        if self.system is not None:
            data["system"] = [s.to_json() for s in self.system]
        return data


def _row(record: EnvRecord, ctx: Context, fp: str) -> EnvRow:
    from cuenv.envs import cudatools, verdict

    meta = record.known  # None: its meta.json is damaged or missing (then it is "incomplete")
    real = cudatools.facts(meta)
    state, reason = verdict.status(record, ctx.environ, ctx.settings.cache_dir, fp=fp)
    return EnvRow(
        name=record.name,
        path=str(record.prefix),
        recipe=meta.recipe.name if meta else None,
        engine=meta.engine if meta else None,
        cuda=real["cuda"],
        cudnn=real["cudnn"],
        nvcc=real["nvcc"],
        framework=meta.framework if meta else None,
        size_bytes=meta.size_bytes if meta else None,
        status=state,
        reason=reason,
    )


def run(ctx: Context) -> Result[Listing]:
    from cuenv.envs.store import Store

    records = Store.from_settings(ctx.settings).list()
    rows: list[EnvRow] = []
    if records:  # no environment, no machine to read
        from cuenv.machine.fingerprint import fingerprint

        fp = fingerprint(ctx.environ)  # once: it reads /proc, and the machine is the same for every row
        rows = [_row(r, ctx, fp) for r in records]
    if ctx.args.du:
        _measure(rows)
    system = None
    if ctx.args.system:
        from cuenv.machine.toolkits import discover

        system = [SystemRow(f"system:{t.version}", str(t.path), t.version) for t in discover(ctx.environ)]
    return Result(Listing(rows, system), render)


def render(listing: Listing) -> str:
    from cuenv.cli.table import human_size
    from cuenv.cli.table import render as table

    rows = listing.environments
    if not rows and listing.system is None:
        from cuenv.envs.store import FIRST_ENVIRONMENT

        return f"No environments yet: {FIRST_ENVIRONMENT}."
    lines = []
    if rows:
        lines.append(table(
            ["NAME", "RECIPE", "ENGINE", "CUDA", "CUDNN", "NVCC", "FRAMEWORK", "SIZE", "STATUS"],
            [[r.name, r.recipe, r.engine, r.cuda, r.cudnn, r.nvcc, r.framework, human_size(r.size_bytes),
              r.status + (f" ({r.reason})" if r.reason else "")] for r in rows],
        ))
    if listing.system is not None:
        lines.append("")
        lines.append(table(["SYSTEM TOOLKIT", "PATH"], [[s.name, s.path] for s in listing.system]) if listing.system
                     else "No CUDA toolkits found on the system.")
    return "\n".join(lines).strip("\n")


def _measure(rows: list[EnvRow]) -> None:
    """Disk use with every inode counted once across all environments (the first one listed owns it)."""
    from pathlib import Path

    from cuenv.envs.diskuse import disk_usage

    seen: set[tuple[int, int]] = set()
    for row in rows:
        row.size_bytes = disk_usage(Path(row.path), seen)
