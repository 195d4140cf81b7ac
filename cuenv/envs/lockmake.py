"""Making a lock: an environment's own solution (plus other platforms solved from its unchanged
recipe), or a recipe solved for one or several platforms without installing anything (issue 6).

It lives in envs/ because it acts on environments and on create's solver; cuenv.lock is the format (issue 24 §5)."""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING, Any, Callable, Mapping, Sequence

from cuenv.errors import CuenvError, UsageError

if TYPE_CHECKING:
    from pathlib import Path

    from cuenv.config import Settings
    from cuenv.engines import Request, Solution
    from cuenv.envs.create import RouteInfo
    from cuenv.envs.meta import EnvMeta
    from cuenv.knowledge.findings import Finding
    from cuenv.lock.model import Lock
    from cuenv.machine.model import Machine
    from cuenv.recipes.catalogue import Recipe


@dataclasses.dataclass(frozen=True)
class Made:
    """A lock and what to tell the user about it."""

    lock: Lock
    source: str  # "environment 'x'" or "recipe torch-cu121"
    warnings: tuple[Finding, ...] = ()  # the target machine's errors, when the lock was forced
    # Installed in the environment, not by cuenv: pinned from their index, or (package, why) it cannot be (issue 26 §3)
    pinned: tuple[str, ...] = ()
    unpinned: tuple[tuple[str, str], ...] = ()
    notes: tuple[str, ...] = ()  # what the lock says otherwise than the environment's record


@dataclasses.dataclass(frozen=True)
class Written:
    """`cuenv lock`'s result (and the TUI's lock action's): a lock made and where its text went ("-": stdout)."""

    made: Made
    output: str  # the file written, or "-"
    text: str  # the lockfile's text (lock_text)

    def to_json(self) -> dict[str, Any]:
        from cuenv.lock import model as lockfile

        lock = self.made.lock
        data: dict[str, Any] = {
            "lock": self.output, "source": self.made.source, "engine": lock.engine, "platforms": list(lock.platforms),
            "hash": lockfile.content_hash(lock), "contract": lockfile.to_data(lock)["contract"],
            "pinned": list(self.made.pinned), "unpinned": [{"name": n, "why": why} for n, why in self.made.unpinned]}
        if self.output == "-":
            data["text"] = self.text
        return data


def write(made: Made, output: str, *, force: bool, confirm: Callable[[str], bool] | None = None) -> Written:
    """Write the lock to ``output`` ("-": nothing written, the caller prints it). A different file there
    raises cuenv.lock.io.OverwriteRefused unless ``force`` or ``confirm(problem)`` says yes (issue 26 §4)."""

    from cuenv.lock.io import OverwriteRefused, output_file, overwrite_problem, write_text

    text = lock_text(made)
    if output != "-":
        path = output_file(output)
        problem = overwrite_problem(path, text)
        if problem and not force and not (confirm is not None and confirm(problem)):
            raise OverwriteRefused(problem)
        write_text(path, text)
    return Written(made, output, text)


def is_environment(settings: Settings, name: str) -> bool:
    from cuenv.envs.store import Store

    try:
        return Store.from_settings(settings).path(name).is_dir()
    except UsageError:  # not a valid environment name (e.g. RECIPE@VERSION): a recipe
        return False


def lock_environment(settings: Settings, environ: Mapping[str, str], *, name: str, platforms: Sequence[str],
                     here: Machine, over: Path | None = None) -> Made:
    """The environment as it is installed (issue 26 §3: packages added by pip or uv pip too); other
    ``platforms`` are solved from its recipe, unchanged since. None asked, a lock of the same recipe
    already at ``over`` (the file it is written to) keeps its platforms: a re-lock never drops a
    teammate's Windows for a Linux-only one (pixi locks every platform of its workspace alike)."""
    from cuenv.envs.change import record_installed
    from cuenv.envs.store import Store

    now = record_installed(settings, environ, name)  # no readable solution.json: folder.own_solution says so
    own = now.solution
    store = Store.from_settings(settings)
    meta = store.get(name).meta
    cuda = installed_cuda(name, own.packages, meta.cuda)
    notes: tuple[str, ...] = ()
    if cuda is not None and meta.cuda and cuda[0] != meta.cuda:  # pip moved the runtime: the lock promises what is there
        notes = (f"{name!r} holds the CUDA {cuda[0]} runtime ({cuda[1]}), not the CUDA {meta.cuda} it was made for: "
                 f"the lock's contract is for CUDA {cuda[0]}.",)
        meta = meta.replace(stack=meta.stack.replace(cuda=cuda[0]))
    kept = () if platforms or over is None else _platforms_of(over, meta.recipe.name, own.platform)
    if len(kept) > 1:
        notes = (*notes, f"the lock keeps the platforms {over} holds ({', '.join(kept)}); --platform chooses others.")
    wanted = list(platforms) or list(kept) or [own.platform]
    solutions = [own] if own.platform in wanted else []
    others = [p for p in dict.fromkeys(wanted) if p != own.platform]
    if others:
        solutions += _solve_env_recipe(settings, environ, meta, own, others, store.path(name))
    return Made(for_environment(meta, solutions, here), f"environment {name!r}", pinned=now.pinned, notes=notes,
                unpinned=now.unpinned)


def _platforms_of(path: Path, recipe: str, platform: str) -> tuple[str, ...]:
    """The platforms of the cuenv lock of ``recipe`` at ``path`` that holds ``platform``; () for any other
    file (none, unreadable, not a cuenv lock, another recipe's: the overwrite check speaks of those)."""
    from cuenv.lock import model as lockfile
    from cuenv.trust import limits

    try:
        lock = lockfile.parse(limits.read_text(path, what="Lockfile", limit=limits.LOCK))
    except (OSError, CuenvError, ValueError):
        return ()
    return lock.platforms if lock.recipe.name == recipe and platform in lock.platforms else ()


def _solve_env_recipe(settings: Settings, environ: Mapping[str, str], meta: EnvMeta, own: Solution,
                      platforms: Sequence[str], prefix: Path) -> list[Solution]:
    """The environment's other ``platforms``, solved from its recipe as it was made from. For a venv, the
    environment as it is: every package installed for its own sake (that nothing installed requires,
    whoever installed it: the recipe, `cuenv add`, pip, a sync) at its version here, each installed package
    held at that version wherever the platform needs it, and those requirements of the recipe and of
    `cuenv add` that do not apply here (a marker of another platform): one that applies here and is not
    installed was taken out since."""
    from cuenv.envs.create import request_for, routed
    from cuenv.recipes.catalogue import load_catalogue

    recipe = load_catalogue(settings).find(meta.recipe.name)
    if recipe.content_hash() != meta.recipe.hash:
        raise UsageError(f"Recipe {recipe.name} changed since environment {meta.name!r} was created, so its other "
                         "platforms cannot be solved to match it.",
                         hint=f"Lock the recipe instead: `cuenv lock {recipe.name} --recipe` with the --platform flags you gave.")
    version = meta.recipe.version
    kind, request = request_for(recipe, version, meta.engine, own.python)
    if kind == "venv":
        from cuenv.envs.changeplan import applies_here, required
        from cuenv.envs.history import asked_name, net_asked

        here = {p.name: p.version for p in own.packages}
        needed = required(prefix)
        top = [f"{n}=={v}" for n, v in here.items() if n not in needed]
        elsewhere = [r for r in (*request.requirements, *(t for ts in net_asked(meta.changes)[1].values() for t in ts))
                     if asked_name(r) not in here and not applies_here(r, prefix)]
        request = request.replace(requirements=tuple(dict.fromkeys([*top, *elsewhere])),
                                  constraints=(*request.constraints, *(f"{n}=={v}" for n, v in sorted(here.items()))))
    # the same index route the environment was created by
    request, info = routed(settings, recipe, kind, request, recipe.stack(version, engine=kind).cuda)
    return solve_platforms(settings, environ, recipe=recipe, version=version, engine_name=meta.engine,
                           request=request, machine=None, platforms=platforms, route=info)


def solve_platforms(settings: Settings, environ: Mapping[str, str], *, recipe: Recipe, version: str | None,
                    engine_name: str, request: Request, machine: Machine | None, platforms: Sequence[str],
                    route: RouteInfo | None = None) -> list[Solution]:
    """One solution per platform; each must be one the recipe declares. ``route`` is the framework's
    index route, with its fallback (issue 19)."""
    from cuenv.engines import Target, get_engine
    from cuenv.envs.create import solve_routed
    from cuenv.lock.model import os_of

    declared = recipe.platforms_for(version)
    engine = get_engine(engine_name, environ, mirrors=settings.mirrors)
    base = Target.from_machine(machine) if machine is not None else Target(cuda=None, glibc=None)
    out = []
    for plat in platforms:
        if plat not in declared:
            raise UsageError(f"Recipe {recipe.label(version)} does not exist for {plat[:60]} (it lists {', '.join(declared)}).",
                             hint="Lock only the platforms the recipe lists.")
        os_name = os_of(plat)
        target = base.replace(os=os_name, arch="aarch64" if plat.endswith("aarch64") else "x86_64",
                              glibc=base.glibc if os_name == "linux" else None)
        try:
            out.append(solve_routed(engine, request.replace(platform=plat), route, target=target,
                                    cache_dir=settings.cache_dir))
        except CuenvError as exc:
            if len(platforms) > 1:  # say which platform's solve failed
                exc.message = f"For {plat}: {exc.message}"
                exc.args = (exc.message,)
            raise
    return out


def lock_recipe(settings: Settings, environ: Mapping[str, str], *, ref: str, engine: str | None, python: str | None,
                force: bool, here: Machine, target: Machine | None, platforms: Sequence[str]) -> Made:
    """Solve recipe ``ref`` for ``platforms`` (default: this one) and for ``target`` (default: this machine)."""
    from cuenv.envs.create import plan_create
    from cuenv.lock import model as lockfile
    from cuenv.lock.io import host_platform

    machine = target or here
    plan = plan_create(settings, environ, ref=ref, name=None, engine=engine, python=python, new_env=False,
                       machine=machine, force=force)
    assert plan.recipe is not None and plan.request is not None  # a recipe's plan always has both
    solutions = solve_platforms(settings, environ, recipe=plan.recipe, version=plan.version, engine_name=plan.engine,
                                request=plan.request, machine=machine,
                                platforms=list(dict.fromkeys(platforms)) or [host_platform()],
                                route=plan.route)
    info = lockfile.made_on(here)
    if target is not None:
        info["solved_for"] = lockfile.made_on(target)
    made = plan.recipe_ref
    recipe = lockfile.LockRecipe(made.name, made.version, made.hash, dict(plan.env_vars))
    lock = lockfile.build(recipe=recipe, engine=plan.engine, stack=plan.stack, solutions=solutions, made_on=info)
    return Made(lock, f"recipe {ref}", tuple(f for f in plan.findings if f.severity == "error"))


def lock_text(made: Made) -> str:
    """The lockfile's text: the lock, with the installed packages no lock can pin named first (issue 26 §3)."""
    from cuenv.lock import model as lockfile

    return "".join(f"# not locked: {n}: {why}\n" for n, why in made.unpinned) + lockfile.dump(made.lock)


def installed_cuda(name: str, packages: Sequence[Any], made_for: str | None) -> tuple[str, str] | None:
    """(CUDA X.Y, "package version") of the CUDA runtime installed among ``packages``, None without one; two
    majors of it in one environment are refused (a lock of it could promise neither), naming the one that is
    not the major the environment was ``made_for``."""
    from cuenv.envs.changeplan import cuda_of
    from cuenv.knowledge.packages import cuda_package_names

    runtimes = [(p, c) for p in packages if p.name in cuda_package_names("libcudart") and (c := cuda_of(p)) is not None]
    if len({c[0] for _, c in runtimes}) > 1:
        listed = ", ".join(f"{p.name} {p.version}" for p, _ in runtimes)
        major = int(made_for.split(".")[0]) if made_for else max(c[0] for _, c in runtimes)
        odd = " ".join(p.name for p, c in runtimes if c[0] != major)
        raise UsageError(f"{name!r} holds CUDA runtimes of two majors ({listed}); one environment holds one CUDA major, "
                         "and a lock of it could promise neither.",
                         hint=f"Take out the other major's: `cuenv run {name} -- pip uninstall -y {odd}`, then lock again.")
    return next(((c[1], f"{p.name} {p.version}") for p, c in runtimes if c[1]), None)


def for_environment(meta: EnvMeta, solutions: Sequence[Any], machine: Any) -> Lock:
    """The lock of an installed environment: its recorded recipe, stack and exact solution(s)."""
    from cuenv.lock.model import LockRecipe, build, made_on

    stack = meta.stack.replace(label=meta.stack.label or meta.recipe.name)
    recipe = LockRecipe(meta.recipe.name, meta.recipe.version, meta.recipe.hash, dict(meta.env_vars))
    return build(recipe=recipe, engine=meta.engine, stack=stack, solutions=solutions, made_on=made_on(machine))
