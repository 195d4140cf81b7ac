"""Comparing an environment with a lockfile (`lock --check`), making it match one (`sync`), and the plan
both `sync` and `create --from-lock` start from (:func:`plan_lockfile`)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Callable, Mapping, Sequence

from cuenv.errors import CuenvError, UsageError
from cuenv.plain import Plain

if TYPE_CHECKING:
    from cuenv.config import Settings
    from cuenv.engines.events import Progress
    from cuenv.envs.plan import Built, CreatePlan
    from cuenv.lock.drift import Drift
    from cuenv.lock.io import LockRead
    from cuenv.lock.model import Lock


def plan_lockfile(settings: Settings, environ: Mapping[str, str], *, lock_path: str, name: str | None,
                  engine: str | None, machine: Any, force: bool, platform: str | None = None,
                  environment: str | None = None, python: str | None = None,
                  dry_run: bool = False) -> tuple[CreatePlan, LockRead]:
    """The create plan for a lockfile of any kind (cuenv's, conda-lock, pixi, pylock, uv): its packages
    for this machine's platform (another only for a dry run), its contract checked against ``machine``
    before anything is downloaded. Also how the file was read, for what to tell the user."""
    from cuenv.envs.create import plan_from_lock
    from cuenv.lock.io import host_platform, read_any

    here = host_platform()
    read = read_any(lock_path, platform=platform or here, environment=environment, python=python, engine=engine,
                    environ=environ, install=True, trusted_env=settings.trusted_env_vars,  # a dry run is the plan: it refuses alike
                    cache_dir=settings.cache_dir)
    chosen = read.lock.platforms[0] if read.foreign is not None else (platform or here)
    if chosen != here and not dry_run:
        raise UsageError(f"This machine is {here}; the {chosen} packages of {lock_path} cannot be installed here.",
                         hint="See them with --dry-run, or install on a machine of that platform.")
    if read.machine_cuda and machine is not None and not force:  # pixi's own check of the driver, before any download
        from cuenv.envs.create import CheckFailed, machine_label
        from cuenv.knowledge.compat import system_requirement

        unmet = system_requirement(*read.machine_cuda, machine)
        if unmet is not None:
            raise CheckFailed(lock_path, [unmet], how="Use --force to install it anyway.", where=machine_label(machine))
    plan = plan_from_lock(settings, environ, lock=read.lock, name=name, engine=None if read.foreign else engine,
                          machine=machine, platform=chosen, force=force)
    if read.foreign is None and read.lock.engine == "venv" and (asked := elsewhere_asked(read.lock, chosen)):
        from cuenv.envs.meta import Change, now

        plan = plan.replace(changes=(Change("add", asked, now(), tuple(f"+ {t} (in {lock_path}, for its other platforms)"
                                                                       for t in asked)),))
    return plan.replace(**catalogue_extras(settings, read.lock)), read


def elsewhere_asked(lock: Lock, platform: str) -> tuple[str, ...]:
    """The lock's packages for its other platforms only, as requirements pinned to their version there and marked
    for those platforms: recorded by a sync, a re-lock of the environment keeps them where they were (as
    `cuenv add` records a requirement whose marker leaves it out here)."""
    here = {p.name for p in lock.solution_for(platform).packages}
    where: dict[tuple[str, str], list[str]] = {}
    for solution in lock.solutions:
        for pkg in solution.packages if solution.platform != platform else ():
            if pkg.name not in here and pkg.kind == "pypi":
                where.setdefault((pkg.name, pkg.version), []).append(solution.platform)
    if not where:
        return ()
    from cuenv.lock.foreign.wheels import Target  # only then: a lock's readers of other formats (issue 29)

    python = lock.python or "3"
    return tuple(f"{n}=={v}; " + " or ".join(f"({Target(python, p).only_here()})" for p in platforms)
                 for (n, v), platforms in sorted(where.items()))


class DriftCheck(Plain):
    """`cuenv lock --check`: how an environment differs from a lockfile."""

    __slots__ = ("name", "lock_path", "drift", "packages", "lock_hash_recorded", "platforms", "conda", "recipes")

    def __init__(self, name: str, lock_path: str, drift: Drift, packages: int, lock_hash_recorded: bool,
                 platforms: tuple[str, ...] = (), conda: bool = False, recipes: tuple[str, str] | None = None) -> None:
        self.name, self.lock_path, self.drift = name, lock_path, drift
        self.platforms = platforms  # every platform the lock holds, in its order
        self.conda = conda  # a conda prefix: its PyPI packages are its pip layer's (--pypi)
        self.recipes = recipes  # (the lock's recipe, the environment's) where they differ
        self.packages = packages  # how many packages the lock has for this environment's platform
        self.lock_hash_recorded = lock_hash_recorded  # the environment was made from exactly this lock

    def to_json(self) -> dict[str, Any]:
        """`cuenv lock --check --json`: the verdict and the drift's lists."""
        return {"name": self.name, "lock": self.lock_path, "matches": self.matches,
                "lock_hash_recorded": self.lock_hash_recorded, **self.drift.to_json()}

    @property
    def matches(self) -> bool:
        return not self.drift


def check_drift(settings: Settings, environ: Mapping[str, str], *, name: str, lock_path: str) -> DriftCheck:
    from cuenv.engines import get_engine
    from cuenv.envs import snapshot
    from cuenv.envs.store import Store
    from cuenv.lock.drift import drift
    from cuenv.lock.io import read_lock
    from cuenv.lock.model import content_hash

    store = Store.from_settings(settings)
    snapshot.recover_under_lock(store, name)  # a change killed half-way is undone, not reported as drift
    record = store.get(name)
    meta = record.meta
    lock = read_lock(lock_path, platform=meta.platform, trusted_env=settings.trusted_env_vars, cache_dir=settings.cache_dir)
    solution = lock.solution_for(meta.platform)
    found = drift(solution.packages, get_engine(meta.engine, environ).installed(record.prefix))
    return DriftCheck(name, lock_path, found, len(solution.packages), meta.lock_hash == content_hash(lock),
                      _lockable(settings, meta, lock.platforms), conda=get_engine(meta.engine, environ).family == "conda",
                      recipes=(lock.recipe.name, meta.recipe.name) if lock.recipe.name != meta.recipe.name else None)


def _lockable(settings: Settings, meta: Any, platforms: Sequence[str]) -> tuple[str, ...]:
    """Those of a lock's ``platforms`` that the environment's recipe declares (and its own): what a re-lock
    of it can write."""
    from cuenv.recipes.catalogue import load_catalogue

    try:
        declared = set(load_catalogue(settings).find(meta.recipe.name).platforms_for(meta.recipe.version))
    except CuenvError:
        declared = set()
    return tuple(p for p in platforms if p in declared or p == meta.platform)


class Synced(Plain):
    """`cuenv sync`: what it built (None when nothing changed), and whether it updated an environment."""

    __slots__ = ("plan", "built", "changed", "updated")

    def __init__(self, plan: CreatePlan, built: Built | None, *, changed: bool, updated: bool) -> None:
        self.plan, self.built, self.changed = plan, built, changed
        self.updated = updated  # an existing environment was brought to the lock (else one was created)

    __hash__ = None  # type: ignore[assignment]  # holds mappings


class SyncDeclined(UsageError):
    """The user (or a non-interactive input without -y) did not allow a sync to remove or change packages."""


def sync(settings: Settings, environ: Mapping[str, str], *, lock_path: str, name: str | None, engine: str | None,
         force: bool, progress: Progress | None = None, warn: Callable[[str], None] = lambda line: None,
         confirm: Callable[[str, Drift, str], bool] | None = None) -> Synced:
    """Install exactly the lock's packages into environment ``name`` (created when absent); the lock's
    hardware contract is checked first, and nothing is installed when the environment already matches.
    ``confirm(name, drift, relock)`` is asked before a sync removes or changes installed packages (issue 26 §3;
    ``relock``: the command that keeps them in the lock instead); a False answer changes nothing."""
    from cuenv.engines import get_engine
    from cuenv.envs import snapshot
    from cuenv.envs.create import build_warnings, execute
    from cuenv.envs.store import Store
    from cuenv.lock.drift import drift, relock_command
    from cuenv.machine.driver import detect

    machine = detect(environ, cache_dir=settings.cache_dir)
    plan, read = plan_lockfile(settings, environ, lock_path=lock_path, name=name, engine=engine, machine=machine,
                               force=force)
    store = Store.from_settings(settings)
    snapshot.recover_under_lock(store, plan.name)  # a change killed half-way is undone before the sync reads it
    existing = store.get(plan.name, allow_incomplete=True) if store.exists(plan.name) else None
    update = bool(existing and existing.complete)
    if existing is not None and update:
        have = existing.meta.engine
        if get_engine(have, environ).family != get_engine(plan.engine, environ).family:
            raise UsageError(f"Environment {plan.name!r} was built by {have}; this lock is for {plan.engine}.",
                             hint=f"Replace it: `cuenv create --from-lock {lock_path} -n {plan.name} --force`.")
        locked = plan.locked.packages if plan.locked is not None else ()
        found = drift(locked, get_engine(have, environ).installed(existing.path))
        if not found and existing.meta.lock_hash == plan.lock_hash:
            return Synced(plan, None, changed=False, updated=True)
        relock = relock_command(plan.name, lock_path, read.lock.platforms)
        if (found.added or found.changed) and confirm is not None and not confirm(plan.name, found, relock):
            raise SyncDeclined(f"Nothing synced: {plan.name!r} keeps its packages.",
                               hint=f"Keep them in the lock instead: `{relock}`.")
    for line in build_warnings(plan.findings, anyway="Installing anyway.", forced=force) + list(read.warnings):
        warn(line)
    built = execute(plan, settings, environ, machine=machine, dry_run=False, force=False, progress=progress, update=update)
    return Synced(plan, built, changed=True, updated=update)


def catalogue_extras(settings: Settings, lock: Lock) -> dict[str, Any]:
    """CreatePlan's smoke_test and requested specs from the lock's recipe, when this catalogue has that exact recipe
    (same content hash); a lock made from a recipe the reader lacks installs all the same."""
    from cuenv.recipes.catalogue import load_catalogue

    try:
        recipe = load_catalogue(settings).find(lock.recipe.name)
    except UsageError:
        return {}
    if recipe.content_hash() != lock.recipe.hash:
        return {}
    version = lock.recipe.version
    requested: list[str] = []
    if lock.engine == "venv" and recipe.venv is not None:
        requested = list(recipe.venv.requirements_for(version))
    elif lock.engine != "venv" and recipe.conda is not None:
        requested = list(recipe.conda.specs_for(version))
    from cuenv.envs.meta import SmokeTest

    smoke = recipe.smoke_test
    return {"smoke_test": SmokeTest(smoke.python, tuple(smoke.command or ())) if smoke else None,
            "requested": tuple(requested)}
