"""`cuenv create RECIPE[@VERSION]`: a named environment pinned to one CUDA stack (issue 4).

Also from a lockfile (`--from-lock FILE`: no solve, the lock's hardware contract checked first) and
from another tool's files (`-f environment.yml`, `-r requirements.txt --cuda X.Y`), issue 6.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from cuenv.engines.names import CHOICES
from cuenv.result import Result


def configure(parser: argparse.ArgumentParser, name: str) -> None:
    parser.add_argument("recipe", nargs="?", metavar="RECIPE[@VERSION]", help="a recipe from `cuenv recipes`, e.g. torch-cu121@2.3.1")
    src = parser.add_argument_group("instead of a recipe")
    src.add_argument("--from-lock", metavar="FILE", help="install exactly a lockfile's packages (from `cuenv lock`), no solve")
    src.add_argument("-f", "--file", metavar="ENVIRONMENT_YML", help="a conda environment.yml")
    src.add_argument("-r", "--requirements", metavar="FILE", help="a pip requirements.txt (needs --cuda)")
    src.add_argument("--cuda", metavar="X.Y", help="the CUDA the -f/-r packages use (default for -f: read from its specs)")
    parser.add_argument("-n", "--name", help="environment name (default: the recipe's name)")
    parser.add_argument("--engine", choices=CHOICES,
                        help="how to build it (default: the `engine` setting, auto: conda-family on PATH, else venv)")
    parser.add_argument("--python", metavar="X.Y", help="Python version (default: the recipe's, or this interpreter for venv)")
    parser.add_argument("--dry-run", action="store_true", help="solve and print what would be installed; change nothing")
    parser.add_argument("--force", action="store_true",
                        help="replace an existing environment, and build even when the check finds errors")
    parser.add_argument("--target-driver", metavar="VERSION", help="validate and solve for a machine with this driver")
    parser.add_argument("--target-gpu", action="append", default=[], metavar="NAME", help="a GPU of that machine (repeat)")
    parser.add_argument("--target-cc", action="append", default=[], metavar="X.Y", help="a GPU of that machine by compute capability")


def _machine(ctx):
    a = ctx.args
    if a.target_driver or a.target_gpu or a.target_cc:
        from cuenv.cli.machine_flags import described_machine

        return described_machine(a.target_driver, a.target_gpu, a.target_cc)
    from cuenv.machine.driver import detect

    return detect(ctx.environ, cache_dir=ctx.settings.cache_dir)


def _plan(ctx, machine):
    """The plan for whichever source was given: a recipe, a lockfile, environment.yml or requirements.txt."""
    from cuenv.envs.create import plan_create
    from cuenv.errors import UsageError

    a = ctx.args
    given = [flag for flag, v in (("RECIPE", a.recipe), ("--from-lock", a.from_lock), ("-f", a.file),
                                  ("-r", a.requirements)) if v]
    if len(given) != 1:
        raise UsageError("Give one of RECIPE, --from-lock FILE, -f environment.yml or -r requirements.txt"
                         + (f" (got {', '.join(given)})." if given else "."),
                         hint="`cuenv recipes` lists recipes; `cuenv lock NAME` makes a lockfile.")
    if a.cuda and not (a.file or a.requirements):
        raise UsageError("--cuda goes with -f or -r.", hint="A recipe or a lockfile already says its CUDA.")
    if a.from_lock:
        from cuenv.envs.create import plan_from_lock
        from cuenv.lock.io import catalogue_extras, host_platform, read_lock

        platform = host_platform()
        lock = read_lock(a.from_lock, platform=platform)
        plan = plan_from_lock(ctx.settings, ctx.environ, lock=lock, name=a.name, engine=a.engine, machine=machine,
                              platform=platform, force=a.force)
        plan.meta.update(catalogue_extras(ctx.settings, lock))
        return plan
    recipe = None
    if a.file or a.requirements:
        from cuenv.recipes.requestfiles import recipe_from_file

        recipe = recipe_from_file(Path(a.file or a.requirements), kind="environment-yml" if a.file else "requirements",
                                  name=a.name, cuda=a.cuda)
    return plan_create(ctx.settings, ctx.environ, ref=a.recipe, name=a.name, engine=a.engine, python=a.python,
                       machine=machine, force=a.force, recipe=recipe)


def run(ctx) -> Result:
    from cuenv.cli.progress import Progress
    from cuenv.envs.create import build_warnings, execute

    a = ctx.args
    machine = _machine(ctx)
    plan = _plan(ctx, machine)
    plan.checked_here = not (a.target_driver or a.target_gpu or a.target_cc)
    # Non-blocking errors (no driver here) and warnings are said once, on stderr; the build goes on.
    progress = Progress(quiet=ctx.verbosity < 0 or ctx.json, verbose=ctx.verbosity, environ=ctx.environ)
    for line in build_warnings(plan.findings):
        progress.note(f"warning: {line}")
    try:
        plan = execute(plan, ctx.settings, ctx.environ, machine=machine, dry_run=a.dry_run, force=a.force,
                       progress=progress)
    finally:
        progress.done()
    packages = [{"name": p.name, "version": p.version, "kind": p.kind, "url": p.url, "size": p.size}
                for p in plan.solution.packages]
    data = {
        "name": plan.name, "recipe": plan.stack.label, "engine": plan.engine, "engine_reason": plan.engine_reason,
        "dry_run": a.dry_run, "python": plan.solution.python, "packages": packages,
        "findings": [f.to_json() for f in plan.findings],
    }
    if a.dry_run:
        from cuenv.engines.base import total_size
        from cuenv.engines.progress import human_bytes

        total = total_size(plan.solution.packages)
        data["download_bytes"] = total
        lines = [f"Would create {plan.name!r} from {plan.stack.label} with {plan.engine} ({plan.engine_reason}):"]
        width = max((len(f"{p['name']} {p['version']}") for p in packages), default=0)
        lines += [f"  {p['name'] + ' ' + p['version']:<{width}}  {human_bytes(p['size']) if p['size'] else ''}".rstrip()
                  for p in packages]
        known = sum(p["size"] or 0 for p in packages)
        lines.append(f"Download: {human_bytes(total)} in {len(packages)} packages (less what the cache already holds)."
                     if total is not None else
                     f"Download: at least {human_bytes(known)}; the engine did not give every size." if known else
                     "Download: the engine did not give the sizes.")
        return Result(data=data, text="\n".join(lines))
    data["path"] = str(plan.prefix)
    data["size_bytes"] = plan.meta.get("size_bytes")
    from cuenv.cli.table import human_size

    text = (f"Created {plan.name!r} ({plan.stack.label}, {plan.engine}, {len(packages)} packages, "
            f"{human_size(plan.meta.get('size_bytes'))}) at {plan.prefix}\n"
            f"Use it with `cuenv use {plan.name}` or `cuenv run {plan.name} -- CMD`.")
    return Result(data=data, text=text, report=True)
