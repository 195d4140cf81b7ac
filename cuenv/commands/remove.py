"""`cuenv remove NAME [-y]`: delete an environment (never anything outside CUENV_HOME)."""

from __future__ import annotations

import argparse
import sys

from cuenv.errors import UsageError
from cuenv.result import Result


def configure(parser: argparse.ArgumentParser, name: str) -> None:
    parser.add_argument("names", nargs="+", metavar="NAME", help="environment(s) to remove")
    parser.add_argument("-y", "--yes", action="store_true", help="do not ask for confirmation")


def run(ctx) -> Result:
    from cuenv.envs.store import Store

    store = Store.from_settings(ctx.settings)
    records = [store.get(n, allow_incomplete=True) for n in ctx.args.names]  # all names valid before any delete
    if not ctx.args.yes:
        if not sys.stdin.isatty():
            raise UsageError("Refusing to remove without confirmation on a non-interactive input.", hint="Add -y.")
        names = ", ".join(r.name for r in records)
        sys.stderr.write(f"Remove {names}? [y/N] ")
        sys.stderr.flush()
        if sys.stdin.readline().strip().lower() not in {"y", "yes"}:
            return Result(data={"removed": []}, text="Nothing removed.", exit_code=1)
    removed = []
    for record in records:
        with store.locked(record.name):
            store.remove(record.name)
        removed.append(record.name)
    return Result(data={"removed": removed}, text="\n".join(f"Removed {n}." for n in removed), report=True)
