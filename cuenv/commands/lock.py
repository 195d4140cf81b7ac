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
from pathlib import Path

from cuenv.engines.names import CHOICES, ENGINE_NAMES
from cuenv.envs import folder
from cuenv.result import Result


def configure(parser: argparse.ArgumentParser, name: str) -> None:
    if name == "sync":
        parser.add_argument("file", metavar="FILE", help="the lockfile (from `cuenv lock`)")
        parser.add_argument("-n", "--name", help="environment to sync (default: the lock's recipe name)")
        parser.add_argument("--engine", choices=ENGINE_NAMES, help="install with this engine (default: the lock's)")
        parser.add_argument("--force", action="store_true", help="install even when this machine fails the lock's contract")
        return
    parser.add_argument("target", metavar="NAME|RECIPE", help="an environment, or a recipe (solved without installing)")
    parser.add_argument("file", nargs="?", metavar="FILE", help="with --check: the lockfile to compare against")
    parser.add_argument("-o", "--output", default="cuenv.lock", metavar="FILE",
                        help="where to write the lock (default: cuenv.lock; '-' for stdout)")
    parser.add_argument("--check", action="store_true", help="exit 1 if environment NAME no longer matches FILE")
    parser.add_argument("--platform", action="append", default=[], metavar="PLATFORM",
                        help="lock for this platform (repeat; default: this machine's, or the environment's)")
    parser.add_argument("--recipe", action="store_true", help="treat NAME as a recipe even if an environment has that name")
    parser.add_argument("--engine", choices=CHOICES, help="solve a recipe with this engine")
    parser.add_argument("--python", metavar="X.Y", help="Python version for a recipe lock")
    parser.add_argument("--force", action="store_true", help="lock a recipe even when the target machine fails the check")
    parser.add_argument("--target-driver", metavar="VERSION", help="solve and check for a machine with this driver")
    parser.add_argument("--target-gpu", action="append", default=[], metavar="NAME", help="a GPU of that machine (repeat)")
    parser.add_argument("--target-cc", action="append", default=[], metavar="X.Y", help="a GPU of that machine by compute capability")


def run(ctx) -> Result:
    if ctx.args.command == "sync":
        return _sync(ctx)
    if ctx.args.check:
        return _check(ctx)
    if ctx.args.file:
        from cuenv.errors import UsageError

        raise UsageError(f"Unexpected argument {ctx.args.file!r}.", hint="Write to a file with -o FILE; FILE as a second argument goes with --check.")
    return _lock(ctx)


# -- cuenv lock ----------------------------------------------------------------------------------
def _targeted(a) -> bool:
    return bool(a.target_driver or a.target_gpu or a.target_cc)


def _lock(ctx) -> Result:
    from cuenv.envs.store import Store
    from cuenv.lock import model as lockfile
    from cuenv.lock.io import detect

    a = ctx.args
    store = Store.from_settings(ctx.settings)
    here = detect(ctx)
    if not (a.recipe or _targeted(a) or a.engine or a.python) and _is_env(store, a.target):
        lock = _lock_env(ctx, store, a.target, here)
        what = f"environment {a.target!r}"
    else:
        lock = _lock_recipe(ctx, here)
        what = f"recipe {a.target}"
    text = lockfile.dump(lock)
    counts = ", ".join(f"{len(s.packages)} packages for {s.platform}" for s in lock.solutions)
    data = {"lock": a.output, "source": what, "engine": lock.engine, "platforms": list(lock.platforms),
            "hash": lockfile.content_hash(lock), "contract": lockfile.to_data(lock)["contract"]}
    if a.output == "-":
        if ctx.json:
            return Result(data={**data, "text": text})
        sys.stdout.write(text)
        return Result()
    from cuenv.lock.io import write_text

    write_text(Path(a.output), text)
    return Result(data=data, text=f"Locked {what} ({lock.engine}; {counts}) into {a.output}\n{_needs(lock)}")


def _is_env(store, name: str) -> bool:
    from cuenv.errors import UsageError

    try:
        return store.path(name).is_dir()
    except UsageError:  # not a valid environment name (e.g. RECIPE@VERSION): a recipe
        return False


def _needs(lock) -> str:
    c = lock.contract
    if not c.cuda:
        return "Contract: no CUDA (a CPU-only stack)."
    drivers = "; ".join(
        f"{m.os}: driver >= {m.full or '?'}" + (f" ({m.floor} with minor-version compatibility)" if m.floor and m.floor != m.full else "")
        for m in c.min_driver)
    archs = ", ".join(c.sass) + (f" (+PTX {', '.join(c.ptx)})" if c.ptx else "")
    return f"Contract: CUDA {c.cuda}" + (f", cuDNN {c.cudnn}" if c.cudnn else "") + f"; {drivers}; GPUs sm {archs or 'unknown'}."


def _lock_env(ctx, store, name: str, here):

    from cuenv.engines import Solution
    from cuenv.errors import CuenvError
    from cuenv.lock import model as lockfile

    record = store.get(name)
    try:
        own = Solution.from_json(folder.read_solution(record.path))
    except (OSError, ValueError) as exc:
        raise CuenvError(f"Environment {name!r} has no readable {folder.SOLUTION_FILE} ({exc}).",
                         hint=f"Recreate it: `cuenv create RECIPE -n {name} --force`.") from None
    meta = record.meta
    wanted = ctx.args.platform or [own.platform]
    solutions = [own] if own.platform in wanted else []
    others = [p for p in dict.fromkeys(wanted) if p != own.platform]
    if others:
        solutions += _solve_env_recipe(ctx, meta, own, others)
    return lockfile.for_environment(meta, solutions, here)


def _solve_env_recipe(ctx, meta, own, platforms):
    """Other platforms of an environment come from its recipe, which must be unchanged since."""
    from cuenv.envs.create import request_for
    from cuenv.errors import UsageError
    from cuenv.recipes.catalogue import load_catalogue

    recipe = load_catalogue(ctx.settings).find(meta["recipe"]["name"])
    if recipe.content_hash() != meta["recipe"].get("hash"):
        raise UsageError(f"Recipe {recipe.name} changed since environment {meta['name']!r} was created, so its other "
                         "platforms cannot be solved to match it.",
                         hint=f"Lock the recipe instead: `cuenv lock {recipe.name} --recipe --platform ...`.")
    _, request = request_for(recipe, meta["recipe"].get("version"), meta["engine"], own.python)
    return _solve_platforms(ctx, recipe, meta["recipe"].get("version"), meta["engine"], request, None, platforms)


def _solve_platforms(ctx, recipe, version, engine_name, request, machine, platforms):
    import dataclasses

    from cuenv.engines import Target, get_engine
    from cuenv.errors import UsageError
    from cuenv.lock.model import os_of

    declared = recipe.platforms_for(version)
    engine = get_engine(engine_name, ctx.environ)
    base = Target.from_machine(machine) if machine is not None else Target(cuda=None, glibc=None)
    out = []
    for plat in platforms:
        if plat not in declared:
            raise UsageError(f"Recipe {recipe.label(version)} does not exist for {plat} (it lists {', '.join(declared)}).",
                             hint="Lock only the platforms the recipe lists.")
        os_name = os_of(plat)
        target = dataclasses.replace(base, os=os_name, arch="aarch64" if plat.endswith("aarch64") else "x86_64",
                                     glibc=base.glibc if os_name == "linux" else None)
        out.append(engine.solve(dataclasses.replace(request, platform=plat), target=target, cache_dir=ctx.settings.cache_dir))
    return out


def _lock_recipe(ctx, here):
    from cuenv.envs.create import plan_create
    from cuenv.lock import model as lockfile
    from cuenv.lock.io import host_platform

    a = ctx.args
    if _targeted(a):
        from cuenv.cli.machine_flags import described_machine

        machine = described_machine(a.target_driver, a.target_gpu, a.target_cc)
    else:
        machine = here
    plan = plan_create(ctx.settings, ctx.environ, ref=a.target, name=None, engine=a.engine, python=a.python, new_env=False,
                       machine=machine, force=a.force)
    for f in plan.findings:
        if f.severity == "error":
            sys.stderr.write(f"warning: {f.message}\n")
    platforms = list(dict.fromkeys(a.platform)) or [host_platform()]
    request = plan.meta["request"]
    solutions = _solve_platforms(ctx, plan.recipe, plan.version, plan.engine, request, machine, platforms)
    info = lockfile.made_on(here)
    if _targeted(a):
        info["solved_for"] = lockfile.made_on(machine)
    recipe = dict(plan.meta["recipe"], env=plan.meta.get("env_vars") or {})
    return lockfile.build(recipe=recipe, engine=plan.engine, stack=plan.stack, solutions=solutions, made_on=info)


# -- cuenv lock --check ------------------------------------------------------------------------
def _check(ctx) -> Result:
    from cuenv.engines import get_engine
    from cuenv.envs.store import Store
    from cuenv.errors import UsageError
    from cuenv.lock.io import read_lock
    from cuenv.lock.model import content_hash, drift

    a = ctx.args
    if not a.file:
        raise UsageError("--check needs an environment and a lockfile.", hint="cuenv lock --check NAME FILE")
    record = Store.from_settings(ctx.settings).get(a.target)
    lock = read_lock(a.file, platform=record.meta.get("platform"))
    solution = lock.solution_for(record.meta["platform"])
    found = drift(solution.packages, get_engine(record.meta["engine"], ctx.environ).installed(record.path))
    same_hash = record.meta.get("lock_hash") == content_hash(lock)
    data = {"name": a.target, "lock": a.file, "matches": not found, "lock_hash_recorded": same_hash, **found.to_json()}
    if not found:
        return Result(data=data, text=f"{a.target!r} matches {a.file} ({len(solution.packages)} packages).")
    lines = [f"{a.target!r} drifted from {a.file}:"] + ["  " + ln for ln in found.lines()]
    lines.append(f"Fix it with `cuenv sync {a.file} -n {a.target}`, or re-lock with `cuenv lock {a.target} -o {a.file}`.")
    return Result(data=data, text="\n".join(lines), exit_code=1)


# -- cuenv sync ----------------------------------------------------------------------------------
def _sync(ctx) -> Result:
    from cuenv.cli.progress import Progress
    from cuenv.engines import get_engine
    from cuenv.envs.create import build_warnings, execute, plan_from_lock
    from cuenv.envs.store import Store
    from cuenv.errors import UsageError
    from cuenv.lock.io import catalogue_extras, detect, host_platform, read_lock
    from cuenv.lock.model import drift

    a = ctx.args
    platform = host_platform()
    lock = read_lock(a.file, platform=platform)
    machine = detect(ctx)
    plan = plan_from_lock(ctx.settings, ctx.environ, lock=lock, name=a.name, engine=a.engine, machine=machine,
                          platform=platform, force=a.force)
    plan.meta.update(catalogue_extras(ctx.settings, lock))
    store = Store.from_settings(ctx.settings)
    existing = store.get(plan.name, allow_incomplete=True) if store.exists(plan.name) else None
    update = bool(existing and existing.complete)
    if update:
        have = existing.meta.get("engine")
        if get_engine(have, ctx.environ).family != get_engine(plan.engine, ctx.environ).family:
            raise UsageError(f"Environment {plan.name!r} was built by {have}; this lock is for {plan.engine}.",
                             hint=f"Replace it: `cuenv create --from-lock {a.file} -n {plan.name} --force`.")
        found = drift(plan.locked.packages, get_engine(have, ctx.environ).installed(existing.path))
        if not found and existing.meta.get("lock_hash") == plan.lock_hash:
            return Result(data={"name": plan.name, "changed": False},
                          text=f"{plan.name!r} already matches {a.file}.")
    progress = Progress(quiet=ctx.verbosity < 0 or ctx.json, verbose=ctx.verbosity, environ=ctx.environ)
    for line in build_warnings(plan.findings, anyway="Installing anyway.", forced=a.force):
        progress.note(f"warning: {line}")
    try:
        plan = execute(plan, ctx.settings, ctx.environ, machine=machine, dry_run=False, force=False,
                       progress=progress, update=update)
    finally:
        progress.done()
    verb = "Synced" if update else "Created"
    return Result(data={"name": plan.name, "changed": True, "path": str(plan.prefix), "lock_hash": plan.lock_hash},
                  text=f"{verb} {plan.name!r} from {a.file} ({len(plan.solution.packages)} packages, no solve).")
