"""`cuenv adopt PATH [-n NAME]`: register an existing conda environment or venv; `--scan [DIR]` lists them."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import TYPE_CHECKING

from cuenv.result import Result

if TYPE_CHECKING:
    from cuenv.cli.main import Context
    from cuenv.envs.adopt import Candidate, Found
    from cuenv.result import JSON, JSONObject


def configure(parser: argparse.ArgumentParser, name: str) -> None:
    parser.add_argument("paths", nargs="*", metavar="PATH",
                        help="an existing conda environment (has conda-meta/) or virtualenv (has pyvenv.cfg)")
    parser.add_argument("-n", "--name", help="the name to list it under (default: its folder's name)")
    parser.add_argument("--scan", action="store_true",
                        help="list the environments conda knows of and the .venv and .pixi environments under each PATH")


def run(ctx: Context) -> Result[Adopted] | Result[Scan]:
    from cuenv.envs import adopt
    from cuenv.errors import UsageError

    if ctx.args.scan:
        return _scan(ctx)
    if not ctx.args.paths:
        raise UsageError("Name the environment to adopt.", hint="`cuenv adopt --scan .` lists the environments under this folder, "
                                                                   "and the command that adopts one.")
    if ctx.args.name and len(ctx.args.paths) > 1:
        raise UsageError("-n names one environment; several paths were given.", hint="Adopt them one at a time with -n.")
    done = [adopt.adopt(ctx.settings, ctx.environ, Path(path), name=ctx.args.name) for path in ctx.args.paths]
    return Result(Adopted(done), _adopted_text, report=True)


class Adopted:
    """`cuenv adopt PATH...`: ``{"adopted": [{"name", "path", "kind", "python", "cuda", "cudnn", "framework",
    "packages", "evidence", "conflicts"}]}``."""

    __slots__ = ("done",)

    def __init__(self, done: list[tuple[str, Found]]) -> None:
        self.done = done  # (the name it was registered under, what was found there), per path

    def to_json(self) -> JSONObject:
        rows: list[JSON] = []
        for name, found in self.done:
            stack = found.derived.stack
            rows.append({"name": name, "path": str(found.prefix), "kind": found.kind, "python": found.python,
                         "cuda": stack.cuda, "cudnn": stack.cudnn,
                         "framework": f"{stack.framework} {stack.framework_version}" if stack.framework else None,
                         "packages": len(found.packages), "evidence": list(found.derived.evidence),
                         "conflicts": list(found.derived.conflicts)})
        return {"adopted": rows}


def _adopted_text(adopted: Adopted) -> str:
    lines = []
    for name, found in adopted.done:
        stack = found.derived.stack
        what = f"CUDA {stack.cuda}" if stack.cuda else "no CUDA runtime"
        if stack.framework:
            what += f", {stack.framework} {stack.framework_version}"
        lines.append(f"Adopted {name} ({found.kind}, {len(found.packages)} packages, {what}) at {found.prefix}; "
                     "it is read, never changed.")
        lines += [f"  conflict: {c}" for c in found.derived.conflicts]
    lines.append(f"See it with `cuenv list`; check it with `cuenv check {adopted.done[-1][0]}`.")
    return "\n".join(lines)


class Scan:
    """`cuenv adopt --scan`: ``{"found": [{"path", "kind", "source", "adopted"}]}``."""

    __slots__ = ("found", "known")

    def __init__(self, found: list[Candidate], known: set[str]) -> None:
        self.found, self.known = found, known  # known: the resolved prefixes cuenv already lists

    def adopted(self, c: Candidate) -> bool:
        return str(c.path.resolve()) in self.known

    def to_json(self) -> JSONObject:
        return {"found": [{"path": str(c.path), "kind": c.kind, "source": c.source, "adopted": self.adopted(c)}
                          for c in self.found]}


def _scan(ctx: Context) -> Result[Scan]:
    from cuenv.envs import adopt
    from cuenv.envs.store import Store

    store = Store.from_settings(ctx.settings)
    known = {str(r.prefix.resolve()) for r in store.list()}
    return Result(Scan(adopt.discover(ctx.environ, [Path(p) for p in ctx.args.paths]), known), _scan_text)


def _scan_text(scan: Scan) -> str:
    if not scan.found:
        return ("No conda environments or virtualenvs found. "
                "Name the folder that holds your projects, as `cuenv adopt --scan .` does for this one.")
    from cuenv.cli.table import render

    table = render(["PATH", "KIND", "FOUND IN", "ADOPTED"],
                   [[str(c.path), c.kind, c.source, "yes" if scan.adopted(c) else "-"] for c in scan.found])
    todo = next((c for c in scan.found if not scan.adopted(c)), None)
    return table + (f"\nAdopt one with `cuenv adopt {todo.path}`." if todo else "")
