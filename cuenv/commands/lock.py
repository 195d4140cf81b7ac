"""`cuenv lock` (write a lockfile, or --check drift) and `cuenv sync` (make an environment match one). Issue 6.

    cuenv lock NAME [-o cuenv.lock]                     an environment, from its solution.json + meta.json
    cuenv lock RECIPE --target-driver V --target-gpu G  a recipe, solved (not installed) for that machine
    cuenv lock ... --platform linux-64 --platform win-64  one package list per platform
    cuenv lock --check NAME FILE                        exit 1 when the environment drifted from FILE
    cuenv sync FILE [-n NAME]                           install exactly FILE's packages (contract checked first)
"""

from __future__ import annotations

import argparse
import sys
from typing import TYPE_CHECKING

from cuenv.engines.names import CHOICES, ENGINE_NAMES
from cuenv.result import Result
from cuenv.trust.shown import output

if TYPE_CHECKING:
    from collections.abc import Sequence

    from cuenv.cli.main import Context
    from cuenv.envs.lockmake import Written
    from cuenv.envs.locksync import DriftCheck, Synced
    from cuenv.lock.drift import Drift
    from cuenv.result import JSONObject


def configure(parser: argparse.ArgumentParser, name: str) -> None:
    if name == "sync":
        parser.add_argument("file", nargs="?", default="cuenv.lock", metavar="FILE",
                            help="the lockfile (from `cuenv lock`; default: cuenv.lock)")
        parser.add_argument("-n", "--name", help="environment to sync (default: the lock's recipe name)")
        parser.add_argument("--engine", choices=ENGINE_NAMES, help="install with this engine (default: the lock's)")
        parser.add_argument("--force", action="store_true", help="install even when this machine fails the lock's contract")
        parser.add_argument("-y", "--yes", action="store_true",
                            help="remove or change installed packages the lock lacks without asking")
        return
    parser.add_argument("target", nargs="?", metavar="NAME|RECIPE",
                        help="an environment, or a recipe (solved without installing); default: the active environment")
    parser.add_argument("file", nargs="?", metavar="FILE", help="with --check: the lockfile to compare against (default: cuenv.lock)")
    parser.add_argument("-o", "--output", default="cuenv.lock", metavar="FILE",
                        help="where to write the lock (default: cuenv.lock; '-' for stdout)")
    parser.add_argument("--check", action="store_true", help="exit 1 if environment NAME no longer matches FILE")
    parser.add_argument("--platform", action="append", default=[], metavar="PLATFORM",
                        help="lock for this platform (repeat; default: the platforms of the environment's own lock "
                             "at -o, else the environment's or this machine's)")
    parser.add_argument("--recipe", action="store_true", help="treat NAME as a recipe even if an environment has that name")
    parser.add_argument("--engine", choices=CHOICES, help="solve a recipe with this engine")
    parser.add_argument("--python", metavar="X.Y", help="Python version for a recipe lock")
    parser.add_argument("--force", action="store_true",
                        help="write over a different FILE without asking; lock a recipe even when the target machine fails the check")
    parser.add_argument("--target-driver", metavar="VERSION", help="solve and check for a machine with this driver")
    parser.add_argument("--target-gpu", action="append", default=[], metavar="NAME", help="a GPU of that machine (repeat)")
    parser.add_argument("--target-cc", action="append", default=[], metavar="X.Y", help="a GPU of that machine by compute capability")


def run(ctx: Context) -> Result[Written] | Result[DriftCheck] | Result[SyncDone]:
    if ctx.args.command == "sync":
        return _sync(ctx)
    if not ctx.args.target:  # inside `cuenv use NAME`, as `cuenv add` does
        from cuenv.errors import UsageError

        ctx.args.target = ctx.environ.get("CUENV_ACTIVE")
        if not ctx.args.target:
            raise UsageError("No environment or recipe named, and none is active.",
                             hint="`cuenv list` shows your environments and `cuenv recipes` the recipes: name one.")
    if ctx.args.check:
        return _check(ctx)
    if ctx.args.file:
        import shlex

        from cuenv.errors import UsageError

        again = f"cuenv lock {shlex.quote(ctx.args.target)} -o {shlex.quote(ctx.args.file)}"
        raise UsageError(f"Unexpected argument {ctx.args.file!r}.",
                         hint=f"Write to it with `{again}`; a second argument is the file --check compares with.")
    return _lock(ctx)


def _lock(ctx: Context) -> Result[Written]:
    from cuenv.envs import lockmake
    from cuenv.lock.io import OverwriteRefused
    from cuenv.machine.driver import detect

    a = ctx.args
    here = detect(ctx.environ, cache_dir=ctx.settings.cache_dir)
    targeted = bool(a.target_driver or a.target_gpu or a.target_cc)
    if not (a.recipe or targeted or a.engine or a.python) and lockmake.is_environment(ctx.settings, a.target):
        from cuenv.lock.io import output_file

        made = lockmake.lock_environment(ctx.settings, ctx.environ, name=a.target, platforms=a.platform, here=here,
                                         over=None if a.output == "-" else output_file(a.output))
    else:
        target = None
        if targeted:
            from cuenv.cli.machine_flags import described_machine

            target = described_machine(a.target_driver, a.target_gpu, a.target_cc)
        from cuenv.errors import NotFound

        try:
            made = lockmake.lock_recipe(ctx.settings, ctx.environ, ref=a.target, engine=a.engine, python=a.python,
                                    force=a.force, here=here, target=target, platforms=a.platform)
        except NotFound as exc:
            if a.recipe or not exc.message.startswith("Unknown recipe"):
                raise
            # `cuenv lock NAME` takes an environment or a recipe: say both were looked for (issue 30 §4)
            raise NotFound(f"No environment or recipe named {a.target!r}.",
                           hint=f"{exc.hint} `cuenv list` shows your environments." if exc.hint else
                           "`cuenv list` shows your environments and `cuenv recipes` the recipes.") from None
    for f in made.warnings:
        sys.stderr.write(output(f"warning: {f.message}\n"))
    for note in made.notes:
        sys.stderr.write(output(f"note: {note}\n"))
    if made.unpinned:  # named in the file and on the terminal, never dropped without a word (issue 26 §3)
        for n, why in made.unpinned:
            sys.stderr.write(f"warning: {n} is installed but not locked: {why}; a teammate's sync will not have it.\n")
    try:
        written = lockmake.write(made, a.output, force=a.force, confirm=confirm_overwrite)
    except OverwriteRefused as exc:
        import shlex

        again = shlex.join(["cuenv", "lock", a.target, "-o", a.output, "--force", *(f for p in a.platform for f in ("--platform", p))])
        raise OverwriteRefused(exc.problem, hint=f"Write over it with `{again}`, or choose another file with -o.") from None
    # -o -: the lockfile itself is the output (asked for, so printed with -q too); a file: a report of it
    if a.output == "-":
        return Result(written, _stdout, exact=True)
    return Result(written, _written)


def _stdout(written: Written) -> str:
    return written.text


def _written(written: Written) -> str:
    made, lock = written.made, written.made.lock
    counts = ", ".join(f"{len(s.packages)} packages for {s.platform}" for s in lock.solutions)
    found = f"Installed outside cuenv, locked from their index: {', '.join(made.pinned)}.\n" if made.pinned else ""
    from cuenv.lock.model import contract_line

    return (f"{found}Locked {made.source} ({lock.engine}; {counts}) into {written.output}\n{contract_line(lock)}\n"
            f"{_resolved(lock)}")


def confirm_overwrite(problem: str) -> bool:
    """Ask on a terminal whether to write over another file; False (never asked) elsewhere."""
    if not (sys.stdin.isatty() and sys.stderr.isatty()):
        return False
    sys.stderr.write(f"{problem}. Overwrite it? [y/N] ")
    sys.stderr.flush()
    return sys.stdin.readline().strip().lower() in {"y", "yes"}


def _resolved(lock) -> str:
    """What the locked packages really are (issue 17 §3): the contract above is the recipe's nominal CUDA."""
    from cuenv.envs.meta import resolved_versions

    parts = []
    for solution in lock.solutions:
        got = resolved_versions(solution.packages)
        text = ", ".join(f"{'nvcc package' if k == 'nvcc' else k} {v}" for k, v in got.items()) or "no CUDA packages"
        parts.append(f"{solution.platform}: {text}")
    nvcc = "yes" if lock.contract.nvcc else "no (ptxas at most)"
    return f"Locked: {'; '.join(parts)}; nvcc: {nvcc}."


def _check(ctx: Context) -> Result[DriftCheck]:
    from cuenv.envs.locksync import check_drift

    a = ctx.args
    a.file = a.file or "cuenv.lock"
    checked = check_drift(ctx.settings, ctx.environ, name=a.target, lock_path=a.file)
    return Result(checked, _drift_text, exit_code=0 if checked.matches else 1)


def _drift_text(checked: DriftCheck) -> str:
    name, path = checked.name, checked.lock_path
    if checked.matches:
        return f"{name!r} matches {path} ({checked.packages} packages)."
    lines = [f"{name!r} drifted from {path}:"] + ["  " + ln for ln in checked.drift.lines()]
    if checked.recipes is not None:
        theirs, ours = checked.recipes
        lines.append(f"Note: {path} is a lock of {theirs}, and {name!r} was made from {ours}: a sync to it makes "
                     f"{name!r} a {theirs} environment.")
    lines += drift_fixes(checked.drift, name=name, lock_path=path, platforms=checked.platforms, conda=checked.conda)
    return "\n".join(lines)


def drift_fixes(drift: Drift, *, name: str, lock_path: str, platforms: Sequence[str] = (), conda: bool = False) -> list[str]:
    """Two fixes, each clearing the drift when run as written: the environment back to the lock, or the lock
    to the environment as it is now. A package installed from a local path or editable is named: no lock can
    pin it, so the second fix takes it out first."""
    import shlex

    from cuenv.lock.drift import relock_command

    local = [p for p in drift.added if p.url.startswith("file:")]
    relock = relock_command(name, lock_path, platforms)
    if local:
        groups: dict[str, list[str]] = {}  # by the flag that names them: a conda prefix's pip layer is --pypi
        for p in local:
            groups.setdefault(" --pypi" if conda and p.kind == "pypi" else "", []).append(p.name)
        takes = "`, `".join(f"cuenv uninstall -n {name}{flag} {' '.join(names)}" for flag, names in groups.items())
        second = f", or `{takes}` and then `{relock}` record the environment as it is, less what no lock can pin."
    else:
        second = f", or `{relock}` records the environment as it is now."
    out = [f"Fix it: `cuenv sync {shlex.quote(lock_path)} -n {name} -y` puts the lock's packages back"
           + (" (removing what it lacks)" if drift.added else "") + second]
    if local:
        out.append(f"Not lockable (a local path or editable install): {', '.join(p.name for p in local)}; the lock names "
                   "them in a comment.")
    return out


class SyncDone:
    """`cuenv sync`: ``{"name", "changed"}``, plus ``path`` and ``lock_hash`` when it installed anything."""

    __slots__ = ("lock_path", "synced")

    def __init__(self, synced: Synced, lock_path: str) -> None:
        self.synced, self.lock_path = synced, lock_path

    def to_json(self) -> JSONObject:
        plan, built = self.synced.plan, self.synced.built
        if built is None:  # nothing changed
            return {"name": plan.name, "changed": False}
        return {"name": plan.name, "changed": True, "path": str(built.prefix), "lock_hash": plan.lock_hash}


def _sync_text(done: SyncDone) -> str:
    plan, built = done.synced.plan, done.synced.built
    if built is None:  # nothing changed
        return f"{plan.name!r} already matches {done.lock_path}."
    verb = "Synced" if done.synced.updated else "Created"
    return f"{verb} {plan.name!r} from {done.lock_path} ({len(built.solution.packages)} packages, no solve)."


def _sync(ctx: Context) -> Result[SyncDone]:
    from cuenv.cli.progress import for_command
    from cuenv.envs.locksync import sync

    a = ctx.args
    progress = for_command(ctx)

    def confirm(name: str, drift: Drift, relock: str) -> bool:
        """Name what the sync would remove or change; ask on a terminal, refuse elsewhere unless -y."""
        lines = [f"- {p.name} {p.version} (installed, not in {a.file}: removed)" for p in drift.added]
        lines += [f"~ {old.name} {new.version} -> {old.version} (as locked)" for old, new in drift.changed]
        for line in [f"Syncing {name!r} to {a.file} would change what is installed:", *["  " + ln for ln in lines]]:
            sys.stderr.write(line + "\n")
        if a.yes:
            return True
        if not sys.stdin.isatty():
            import shlex

            from cuenv.errors import UsageError

            raise UsageError(f"Refusing to remove or change packages of {name!r} without confirmation on a "
                             "non-interactive input.",
                             hint=f"Run `cuenv sync {shlex.quote(a.file)} -n {name} -y`, or keep them: `{relock}`.")
        sys.stderr.write("Go on? [y/N] ")
        sys.stderr.flush()
        return sys.stdin.readline().strip().lower() in {"y", "yes"}

    try:
        done = sync(ctx.settings, ctx.environ, lock_path=a.file, name=a.name, engine=a.engine, force=a.force,
                    progress=progress, warn=lambda line: progress.note(f"warning: {line}"), confirm=confirm)
    finally:
        progress.done()
    return Result(SyncDone(done, a.file), _sync_text)
