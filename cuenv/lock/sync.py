"""Comparing an environment with a lockfile (`lock --check`) and making it match one (`sync`)."""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING, Any, Callable, Mapping

from cuenv.errors import UsageError

if TYPE_CHECKING:
    from cuenv.config import Settings
    from cuenv.envs.plan import CreatePlan
    from cuenv.lock.model import Drift


@dataclasses.dataclass(frozen=True)
class DriftCheck:
    name: str
    lock_path: str
    drift: Drift
    packages: int  # how many packages the lock has for this environment's platform
    lock_hash_recorded: bool  # the environment was made from exactly this lock

    @property
    def matches(self) -> bool:
        return not self.drift


def check_drift(settings: Settings, environ: Mapping[str, str], *, name: str, lock_path: str) -> DriftCheck:
    from cuenv.engines import get_engine
    from cuenv.envs.store import Store
    from cuenv.lock.io import read_lock
    from cuenv.lock.model import content_hash, drift

    record = Store.from_settings(settings).get(name)
    lock = read_lock(lock_path, platform=record.meta.get("platform"), trusted_env=settings.trusted_env_vars)
    solution = lock.solution_for(record.meta["platform"])
    found = drift(solution.packages, get_engine(record.meta["engine"], environ).installed(record.path))
    return DriftCheck(name, lock_path, found, len(solution.packages), record.meta.get("lock_hash") == content_hash(lock))


@dataclasses.dataclass(frozen=True)
class Synced:
    plan: CreatePlan
    changed: bool
    updated: bool  # an existing environment was brought to the lock (else one was created)


def sync(settings: Settings, environ: Mapping[str, str], *, lock_path: str, name: str | None, engine: str | None,
         force: bool, progress: Any = None, warn: Callable[[str], None] = lambda line: None) -> Synced:
    """Install exactly the lock's packages into environment ``name`` (created when absent); the lock's
    hardware contract is checked first, and nothing is installed when the environment already matches."""
    from cuenv.engines import get_engine
    from cuenv.envs.create import build_warnings, execute, plan_from_lock
    from cuenv.envs.store import Store
    from cuenv.lock.io import catalogue_extras, host_platform, read_lock
    from cuenv.lock.model import drift
    from cuenv.machine.driver import detect

    platform = host_platform()
    lock = read_lock(lock_path, platform=platform, trusted_env=settings.trusted_env_vars)
    machine = detect(environ, cache_dir=settings.cache_dir)
    plan = plan_from_lock(settings, environ, lock=lock, name=name, engine=engine, machine=machine,
                          platform=platform, force=force)
    plan.meta.update(catalogue_extras(settings, lock))
    store = Store.from_settings(settings)
    existing = store.get(plan.name, allow_incomplete=True) if store.exists(plan.name) else None
    update = bool(existing and existing.complete)
    if existing is not None and update:
        have = str(existing.meta.get("engine"))
        if get_engine(have, environ).family != get_engine(plan.engine, environ).family:
            raise UsageError(f"Environment {plan.name!r} was built by {have}; this lock is for {plan.engine}.",
                             hint=f"Replace it: `cuenv create --from-lock {lock_path} -n {plan.name} --force`.")
        found = drift(plan.locked.packages, get_engine(have, environ).installed(existing.path))
        if not found and existing.meta.get("lock_hash") == plan.lock_hash:
            return Synced(plan, changed=False, updated=True)
    for line in build_warnings(plan.findings, anyway="Installing anyway.", forced=force):
        warn(line)
    plan = execute(plan, settings, environ, machine=machine, dry_run=False, force=False, progress=progress, update=update)
    return Synced(plan, changed=True, updated=update)

