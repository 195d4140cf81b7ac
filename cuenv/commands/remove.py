"""`cuenv remove NAME [-y]`: delete an environment (never anything outside CUENV_HOME)."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Mapping
from typing import TYPE_CHECKING

from cuenv.errors import UsageError
from cuenv.result import Result

if TYPE_CHECKING:
    from cuenv.cli.main import Context
    from cuenv.result import JSONObject


def configure(parser: argparse.ArgumentParser, name: str) -> None:
    parser.add_argument("names", nargs="+", metavar="NAME", help="environment(s) to remove")
    parser.add_argument("-y", "--yes", action="store_true", help="do not ask for confirmation")
    parser.add_argument("--force", action="store_true",
                        help="remove the active environment too (the shell hook deactivates it first)")


class Removal:
    """`cuenv remove`: ``{"removed": [NAME, ...]}``; the text says, per name, what was deleted."""

    __slots__ = ("lines", "removed")

    def __init__(self, removed: list[str], lines: list[str]) -> None:
        self.removed = removed
        self.lines = lines  # one per name: "Removed NAME." or, for an adopted one, that its folder is left

    def to_json(self) -> JSONObject:
        return {"removed": list(self.removed)}


def _text(done: Removal) -> str:
    return "\n".join(done.lines) if done.removed else "Nothing removed."


def run(ctx: Context) -> Result[Removal]:
    from cuenv.envs.store import Store

    store = Store.from_settings(ctx.settings)
    records = [store.get(n, allow_incomplete=True) for n in ctx.args.names]  # all names valid before any delete
    still_active = refuse_active([r.name for r in records], ctx.environ, force=ctx.args.force, yes=ctx.args.yes)
    if not ctx.args.yes:
        if not sys.stdin.isatty():
            raise UsageError("Refusing to remove without confirmation on a non-interactive input.", hint="Add -y.")
        names = ", ".join(r.name for r in records)
        sys.stderr.write(f"Remove {names}? [y/N] ")
        sys.stderr.flush()
        if sys.stdin.readline().strip().lower() not in {"y", "yes"}:
            return Result(Removal([], []), _text, exit_code=1)
    removed: list[str] = []
    lines: list[str] = []
    for record in records:
        with store.locked(record.name):
            store.remove(record.name)  # an adopted environment's folder holds only cuenv's records
        removed.append(record.name)
        lines.append(f"Forgot {record.name}; its folder {record.prefix} is left as it was." if record.adopted
                     else f"Removed {record.name}.")
    if still_active:  # --force without the hook: this shell still points into the removed folder
        sys.stderr.write(f"warning: {still_active} was active here; run `cuenv deactivate` in this shell.\n")
    return Result(Removal(removed, lines), _text, report=True)


def refuse_active(names: list[str], environ: Mapping[str, str], *, force: bool, yes: bool = False) -> str | None:
    """Refuse to remove the environment this shell has active, as conda does, unless ``force``;
    returns its name when it is forced out from under the shell. The hint keeps ``-y`` when given, so
    that it runs as written where the first command would have."""
    active = environ.get("CUENV_ACTIVE")
    if active not in names:
        return None
    if not force:
        raise UsageError(
            f"Environment {active!r} is active in this shell.",
            hint=(f"Run `cuenv deactivate` first, or `cuenv remove {active} --force{' -y' if yes else ''}` "
                  "(with the shell hook it deactivates it first)."),
        )
    return active
