"""`cuenv add`, `cuenv upgrade`, `cuenv uninstall` (and `cuenv install`, conda's word for add): change the
packages of an environment in place, checked against its CUDA contract before any download (issue 26).

    cuenv add [-n NAME] PKG...        install PKG with every installed package held
    cuenv upgrade [-n NAME] PKG...    move PKG (only) to its newest version that fits
    cuenv uninstall [-n NAME] PKG...  remove PKG (refused while an installed package needs it)

NAME defaults to the active environment (CUENV_ACTIVE). `cuenv remove NAME` removes a whole
environment; removing packages has its own word so that one can never be taken for the other.
"""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING

from cuenv.errors import UsageError
from cuenv.result import Result, text_result

if TYPE_CHECKING:
    from cuenv.cli.main import Context
    from cuenv.result import Text

_VERB = {"add": "add", "install": "add", "upgrade": "upgrade", "uninstall": "remove"}
_DONE = {"add": "Added to", "upgrade": "Upgraded in", "remove": "Removed from"}


def configure(parser: argparse.ArgumentParser, name: str) -> None:
    parser.add_argument("packages", nargs="+", metavar="PKG",
                        help="package name" + ("" if name == "uninstall" else " or requirement (numpy, 'numpy>=2')"))
    parser.add_argument("-n", "--name", help="the environment (default: the active one)")
    parser.add_argument("--dry-run", action="store_true", help="solve and check, say what would change, install nothing")


def env_name(ctx: Context) -> str:
    name = ctx.args.name or ctx.environ.get("CUENV_ACTIVE")
    if not name:
        raise UsageError("No environment named and none is active.",
                         hint=f"Name one: `cuenv {ctx.args.command} -n NAME {' '.join(ctx.args.packages)}` "
                              "(`cuenv list` shows them).")
    return name


def run(ctx: Context) -> Result[Text]:
    from cuenv.cli.progress import for_command
    from cuenv.envs import change
    from cuenv.machine.driver import detect

    verb = _VERB[ctx.args.command]
    name = env_name(ctx)
    machine = detect(ctx.environ, cache_dir=ctx.settings.cache_dir)
    planned = change.plan(ctx.settings, ctx.environ, name=name, verb=verb, packages=ctx.args.packages, machine=machine)
    lines = planned.lines()
    what = "already the newest version that fits" if verb == "upgrade" else "already installed"
    already = [f"{n} is {what} in {name!r}." for n in planned.already]
    notes = [f"warning: {f.message}" for f in planned.findings]
    if planned.empty:
        return text_result(data=planned.to_json(), text="\n".join(already + [f"Nothing to change in {name!r}."]))
    if ctx.args.dry_run:
        return text_result(data={**planned.to_json(), "dry_run": True},
                      text="\n".join(already + notes + [f"Would change {name!r}:"] + ["  " + ln for ln in lines]))
    progress = for_command(ctx)
    try:
        for line in notes:
            progress.note(line)
        change.apply(ctx.settings, ctx.environ, planned, progress=progress)
    finally:
        progress.done()
    text = [*already, f"{_DONE[verb]} {name!r}:", *["  " + ln for ln in lines],
            f"Recorded: `cuenv lock {name}` writes the environment as it is now."]
    return text_result(data=planned.to_json(), text="\n".join(text))
