"""`cuenv adopt PATH [-n NAME]`: register an existing conda environment or venv; `--scan [DIR]` lists them."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import TYPE_CHECKING

from cuenv.result import Result, text_result

if TYPE_CHECKING:
    from cuenv.cli.main import Context
    from cuenv.result import JSONObject, Text


def configure(parser: argparse.ArgumentParser, name: str) -> None:
    parser.add_argument("paths", nargs="*", metavar="PATH",
                        help="an existing conda environment (has conda-meta/) or virtualenv (has pyvenv.cfg)")
    parser.add_argument("-n", "--name", help="the name to list it under (default: its folder's name)")
    parser.add_argument("--scan", action="store_true",
                        help="list the environments conda knows of and the .venv and .pixi environments under each PATH")


def run(ctx: Context) -> Result[Text]:
    from cuenv.envs import adopt
    from cuenv.errors import UsageError

    if ctx.args.scan:
        return _scan(ctx)
    if not ctx.args.paths:
        raise UsageError("Name the environment to adopt.", hint="`cuenv adopt PATH`, or `cuenv adopt --scan .` to find them.")
    if ctx.args.name and len(ctx.args.paths) > 1:
        raise UsageError("-n names one environment; several paths were given.", hint="Adopt them one at a time with -n.")
    rows, lines = [], []
    for path in ctx.args.paths:
        name, found = adopt.adopt(ctx.settings, ctx.environ, Path(path), name=ctx.args.name)
        stack = found.derived.stack
        rows.append({"name": name, "path": str(found.prefix), "kind": found.kind, "python": found.python,
                     "cuda": stack.cuda, "cudnn": stack.cudnn,
                     "framework": f"{stack.framework} {stack.framework_version}" if stack.framework else None,
                     "packages": len(found.packages), "evidence": list(found.derived.evidence),
                     "conflicts": list(found.derived.conflicts)})
        what = f"CUDA {stack.cuda}" if stack.cuda else "no CUDA runtime"
        if stack.framework:
            what += f", {stack.framework} {stack.framework_version}"
        lines.append(f"Adopted {name} ({found.kind}, {len(found.packages)} packages, {what}) at {found.prefix}; "
                     "it is read, never changed.")
        lines += [f"  conflict: {c}" for c in found.derived.conflicts]
    lines.append(f"See it with `cuenv list`; check it with `cuenv check {rows[-1]['name']}`.")
    return text_result(data={"adopted": rows}, text="\n".join(lines), report=True)


def _scan(ctx: Context) -> Result[Text]:
    from cuenv.envs import adopt
    from cuenv.envs.store import Store

    store = Store.from_settings(ctx.settings)
    known = {str(r.prefix.resolve()) for r in store.list()}
    found = adopt.discover(ctx.environ, [Path(p) for p in ctx.args.paths])
    rows: list[JSONObject] = [{"path": str(c.path), "kind": c.kind, "source": c.source, "adopted": str(c.path.resolve()) in known} for c in found]
    if not rows:
        return text_result(data={"found": []}, text="No conda environments or virtualenvs found. "
                      "Name the folder that holds your projects, as `cuenv adopt --scan .` does for this one.")
    from cuenv.cli.table import render

    table = render(["PATH", "KIND", "FOUND IN", "ADOPTED"],
                   [[r["path"], r["kind"], r["source"], "yes" if r["adopted"] else "-"] for r in rows])
    todo = next((r for r in rows if not r["adopted"]), None)
    hint = f"\nAdopt one with `cuenv adopt {todo['path']}`." if todo else ""
    return text_result(data={"found": rows}, text=table + hint)
