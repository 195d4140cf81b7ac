"""`cuenv add`, `cuenv upgrade`, `cuenv uninstall` (and `cuenv install`, conda's word for add): change the
packages of an environment in place, checked against its CUDA contract before any download (issue 26).

    cuenv add [-n NAME] [--pypi] PKG...        install PKG with every installed package held
    cuenv upgrade [-n NAME] [--pypi] PKG...    move PKG (only) to its newest version that fits
    cuenv uninstall [-n NAME] [--pypi] PKG...  remove PKG (refused while an installed package needs it)

In a conda environment PKG is a conda package (a spec: `cuda-nvrtc`, `numpy=1.26`); with --pypi, a
package of its pip layer (installed by uv with the prefix's Python, next to conda's). In a venv every
package is PyPI's.

NAME defaults to the active environment (CUENV_ACTIVE). `cuenv remove NAME` removes a whole
environment; removing packages has its own word so that one can never be taken for the other.
"""

from __future__ import annotations

from cuenv.errors import UsageError
from cuenv.result import Result

TYPE_CHECKING = False  # no `typing` at run time: `cuenv add` starts lean (issue 26's benchmark)
if TYPE_CHECKING:
    import argparse

    from cuenv.cli.main import Context
    from cuenv.envs.changeplan import ChangePlan
    from cuenv.result import JSONObject

_VERB = {"add": "add", "install": "add", "upgrade": "upgrade", "uninstall": "remove"}
_DONE = {"add": "Added to", "upgrade": "Upgraded in", "remove": "Removed from"}


def configure(parser: argparse.ArgumentParser, name: str) -> None:
    parser.add_argument("packages", nargs="+", metavar="PKG",
                        help="package name" + ("" if name == "uninstall" else " or requirement (numpy, 'numpy>=2')"))
    parser.add_argument("-n", "--name", help="the environment (default: the active one)")
    parser.add_argument("--pypi", action="store_true",
                        help="in a conda environment: PyPI packages of its pip layer (a venv's are all PyPI's)")
    parser.add_argument("--dry-run", action="store_true", help="solve and check, say what would change, install nothing")


def env_name(ctx: Context) -> str:
    name = ctx.args.name or ctx.environ.get("CUENV_ACTIVE")
    if not name:
        raise UsageError("No environment named and none is active.", hint=_name_one(ctx))
    return name


def _name_one(ctx: Context) -> str:
    """The command again with -n and a real environment's name."""
    import shlex

    from cuenv.envs.store import with_an_environment

    return with_an_environment(ctx.settings, lambda n: f"cuenv {ctx.args.command} -n {n} {shlex.join(ctx.args.packages)}")


def run(ctx: Context) -> Result[Changed]:
    from cuenv.envs import change

    verb = _VERB[ctx.args.command]
    name = env_name(ctx)
    planned = change.plan(ctx.settings, ctx.environ, name=name, verb=verb, packages=ctx.args.packages, pypi=ctx.args.pypi,
                          predict=not ctx.args.dry_run, dry_run=bool(ctx.args.dry_run))
    if planned.empty or ctx.args.dry_run:  # a dry run's plan is what was asked for: printed with -q too
        return Result(Changed(planned, dry_run=bool(ctx.args.dry_run)), render, report=not ctx.args.dry_run)
    from cuenv.cli.progress import for_command
    from cuenv.errors import CuenvError

    progress = for_command(ctx)
    try:
        for f in planned.findings:
            progress.note(f"warning: {f.message}")
        done = change.apply(ctx.settings, ctx.environ, planned, progress=progress).replace(recorded=planned.recorded)
        for f in done.findings:  # planned again where the index answered otherwise than uv's cache
            if f not in planned.findings:
                progress.note(f"warning: {f.message}")
    except CuenvError as exc:
        raise change.said_recorded(exc, planned.recorded) from None
    finally:
        progress.done()
    return Result(Changed(done, dry_run=False), render, report=True)  # what was done: -q leaves it out


class Changed:
    """`cuenv add/upgrade/uninstall`: the change as planned (cuenv.envs.change.ChangePlan's JSON), plus
    ``dry_run: true`` for --dry-run; nothing was installed when it is empty."""

    __slots__ = ("dry_run", "planned")

    def __init__(self, planned: ChangePlan, *, dry_run: bool) -> None:
        self.planned, self.dry_run = planned, dry_run

    def to_json(self) -> JSONObject:
        data: JSONObject = dict(self.planned.to_json())
        if self.dry_run and not self.planned.empty:
            data["dry_run"] = True
        return data


def render(done: Changed) -> str:
    planned, name = done.planned, done.planned.name
    what = "already the newest version that fits" if planned.verb == "upgrade" else "already installed"
    already = [f"{n!r} is already recorded for the lock's other platforms." if ";" in n else  # a requirement, not a name
               f"{n} is {what} in {name!r}." for n in planned.already]
    if planned.recorded and done.dry_run:
        already.insert(0, f"Installed outside cuenv since the last record (the change records them first): "
                          f"{', '.join(planned.recorded)}.")
    elif planned.recorded:  # never folded into the record without a word (issue 26 §3)
        already.insert(0, f"Recorded first, installed outside cuenv and locked from their index: {', '.join(planned.recorded)}.")
    lines = ["  " + ln for ln in planned.lines()]
    if planned.empty:
        return "\n".join(already + [f"Nothing to change in {name!r}."])
    if done.dry_run:
        notes = [f"warning: {f.message}" for f in planned.findings]
        return "\n".join(already + notes + [f"Would change {name!r}:"] + lines)
    return "\n".join([*already, f"{_DONE[planned.verb]} {name!r}:", *lines,
                      f"Recorded: `cuenv lock {name}` writes the environment as it is now."])
