"""`cuenv create`: validate -> solve -> lock -> install from the lock -> layout -> activation -> mark complete.

`cuenv create --from-lock` and `cuenv sync` run the same pipeline with one step replaced: the
solution is taken from the lockfile instead of solved (``plan.locked``), and the validation is the
lock's hardware contract (plan_from_lock). There is one install path.

The environment is built in place (prefixes embed their path) and only the completion marker,
written last, makes it usable. Any failure, Ctrl-C included, removes what was built; a kill -9
leaves a folder without the marker, which `cuenv list` shows as incomplete and `create`/`remove`
clean up.
"""

from __future__ import annotations

import datetime as _dt
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Mapping, Sequence

from cuenv import __version__
from cuenv.errors import CuenvError, UsageError
from cuenv.stack import NO_GPU_HERE, Finding, Stack
from cuenv.store import Store, layout_to_json, validate_name



class CheckFailed(CuenvError):
    def __init__(self, target: str, errors: Sequence[Finding],
                 how: str = "`cuenv suggest` names the recipe that runs there; --force builds anyway.",
                 where: str = "this machine") -> None:
        first = errors[0]
        more = f" (and {len(errors) - 1} more)" if len(errors) > 1 else ""
        super().__init__(
            f"{target} will not run on {where}: {first.message}{more}",
            hint=(first.fix + " " if first.fix else "") + how,
        )
        self.findings = list(errors)


@dataclass
class CreatePlan:
    name: str
    recipe: Any
    version: str | None
    engine: str
    engine_reason: str
    stack: Stack
    findings: list[Finding]
    solution: Any = None
    prefix: Path | None = None
    meta: dict[str, Any] = field(default_factory=dict)
    locked: Any = None  # a Solution from a lockfile: replaces the solve step
    lock_hash: str | None = None  # that lockfile's content hash, recorded as meta.lock_hash
    # False when the findings are about another machine (--target-*): then they are not cached as
    # this machine's verdict, and the first `list`/`use` here computes its own.
    checked_here: bool = True


def build_warnings(findings: Sequence[Finding], *, anyway: str = "Building anyway.", forced: bool = False) -> list[str]:
    """What create and sync say once before they build: every error or warning the build goes on with."""
    return [f.message + (f" {anyway}" if f.code in NO_GPU_HERE or forced else "")
            for f in findings if f.severity in ("error", "warning")]


def machine_label(machine) -> str:
    """ "this machine", or "the target machine" when flags (--target-*, --driver) described it."""
    driver = getattr(machine, "driver", None)
    return "the target machine" if driver is not None and driver.source in ("flag", "unknown") else "this machine"


def blocking(findings: Sequence[Finding]) -> list[Finding]:
    return [f for f in findings if f.severity == "error" and f.code not in NO_GPU_HERE]


def now() -> str:
    return _dt.datetime.now(_dt.timezone.utc).replace(microsecond=0).isoformat()


def build_meta(plan: CreatePlan, *, layout, fingerprint: str, size: int, lock_hash: str | None) -> dict[str, Any]:
    stack = plan.stack
    return {
        "schema": 1,
        "name": plan.name,
        "recipe": dict(plan.meta["recipe"]),
        "engine": plan.engine,
        "engine_reason": plan.engine_reason,
        "python": plan.solution.python,
        "platform": plan.solution.platform,
        "cuda": stack.cuda,
        "cudnn": stack.cudnn,
        "framework": {"name": stack.framework, "version": stack.framework_version} if stack.framework else None,
        "stack": {
            "label": stack.label, "cuda": stack.cuda, "cudnn": stack.cudnn, "sass": list(stack.sass),
            "ptx": list(stack.ptx), "has_nvcc": stack.has_nvcc, "os": list(stack.os),
            "framework": stack.framework, "framework_version": stack.framework_version, "variant": stack.variant,
        },
        "resolved": resolved_versions(plan.solution.packages),
        "requested": list(plan.meta.get("requested", [])),
        "created": now(),
        "cuenv_version": __version__,
        "validation": {"fingerprint": fingerprint, "findings": [f.to_json() for f in plan.findings]},
        "layout": layout_to_json(layout),
        "env_vars": dict(plan.meta.get("env_vars", {})),
        "activate_scripts": [],
        "smoke_test": plan.meta.get("smoke_test"),
        "size_bytes": size,
        "lock_hash": plan.lock_hash or lock_hash,
    }


def stack_from_meta(meta: Mapping[str, Any]) -> Stack:
    s = meta.get("stack")
    if not isinstance(s, Mapping) or "cuda" not in s:
        name = meta.get("name", "?")
        raise CuenvError(f"The metadata of environment {name!r} is damaged (no stack recorded).",
                         hint=f"Recreate it: `cuenv create RECIPE -n {name} --force`.")
    return Stack(
        label=str(meta.get("name", "environment")), cuda=s["cuda"], cudnn=s.get("cudnn"), sass=tuple(s.get("sass", ())),
        ptx=tuple(s.get("ptx", ())), has_nvcc=bool(s.get("has_nvcc")), os=tuple(s.get("os", ("linux",))),
        framework=s.get("framework"), framework_version=s.get("framework_version"), variant=s.get("variant"),
    )


_CUDA_PACKAGES = {
    "libcudart": ("nvidia-cuda-runtime-cu11", "nvidia-cuda-runtime-cu12", "nvidia-cuda-runtime", "cuda-cudart", "cudatoolkit"),
    "cudnn": ("nvidia-cudnn-cu11", "nvidia-cudnn-cu12", "nvidia-cudnn-cu13", "cudnn"),
    "nvcc": ("nvidia-cuda-nvcc-cu11", "nvidia-cuda-nvcc-cu12", "nvidia-cuda-nvcc", "cuda-nvcc"),
}
_FRAMEWORKS = ("torch", "pytorch", "paddlepaddle-gpu", "paddlepaddle", "tensorflow", "jax", "jaxlib")


def resolved_versions(packages: Sequence[Any]) -> dict[str, str]:
    """The versions that matter, read from the solution: CUDA runtime, cuDNN, nvcc, the framework."""
    by_name = {p.name.lower(): p.version for p in packages}
    out: dict[str, str] = {}
    for key, names in _CUDA_PACKAGES.items():
        for n in names:
            if n in by_name:
                out[key] = by_name[n]
                break
    for n in _FRAMEWORKS:
        if n in by_name:
            out["framework"] = f"{n} {by_name[n]}"
            break
    return out


def prepare_prefix(store: Store, name: str, *, force: bool) -> None:
    """Make room for ``name``: an incomplete leftover is cleaned, a usable one needs --force."""
    if not store.exists(name):
        return
    record = store.get(name, allow_incomplete=True)
    if record.complete and not force:
        raise UsageError(
            f"Environment {name!r} already exists.",
            hint=f"Use --force to replace it, -n OTHER for another name, or `cuenv remove {name}`.",
        )
    store.remove(name)


Reporter = Callable[[str, str], None]


def choose_python(recipe, version: str | None, requested: str | None, engine: str) -> str | None:
    """--python wins; a venv otherwise uses this interpreter when the recipe allows it (no download),
    else the recipe's default; conda engines install the recipe's default (none if it names none)."""
    import sys

    if requested:
        from cuenv.versions import Dotted

        Dotted.parse(requested, what="Python version")
        return requested
    py = recipe.python_for(version)
    if engine == "venv":
        here = f"{sys.version_info.major}.{sys.version_info.minor}"
        if not py.supported or _allows(py.supported, here):
            return None
    return py.default if py else None


def _allows(spec: str, version: str) -> bool:
    from packaging.specifiers import SpecifierSet

    return SpecifierSet(spec).contains(version, prereleases=True)


def request_for(recipe, version: str | None, engine: str, python: str | None):
    from cuenv.backends import Request
    from cuenv.backends.base import CONDA_FAMILY

    kind = "conda" if engine in CONDA_FAMILY or engine == "rattler" else "venv"
    if kind not in recipe.engines(version):
        can = recipe.engines(version)
        raise UsageError(
            f"Recipe {recipe.label(version)} has no {kind} install section, so engine {engine!r} cannot build it.",
            hint=f"Use --engine {'venv' if 'venv' in can else 'rattler or conda'}." if can else None,
        )
    if kind == "conda":
        return kind, Request(engine=engine, python=python, conda_channels=recipe.conda.channels,
                             conda_specs=recipe.conda.specs_for(version))
    return kind, Request(engine=engine, python=python, index_urls=recipe.venv.index_urls,
                         requirements=recipe.venv.requirements_for(version))


def plan_create(settings, environ, *, ref: str | None, name: str | None, engine: str | None, python: str | None,
                machine, force: bool, recipe=None, new_env: bool = True) -> CreatePlan:
    """Everything decided before anything is downloaded: recipe, name, engine, verdict.

    ``recipe`` (a Recipe built from environment.yml or requirements.txt) replaces a catalogue ``ref``.
    ``new_env`` is False when nothing will be installed (`cuenv lock RECIPE`): an environment of the
    same name is then no obstacle.
    """
    from cuenv.backends import resolve_engine
    from cuenv.check import check
    from cuenv.recipes import load_catalogue

    recipe, version = (recipe, None) if recipe is not None else load_catalogue(settings).get(ref)
    env_name = validate_name(name or recipe.name)
    store = Store.from_settings(settings)
    if new_env and not force and store.exists(env_name) and store.get(env_name, allow_incomplete=True).complete:
        prepare_prefix(store, env_name, force=False)  # raises "already exists" before any work
    engine_name, why = resolve_engine(engine, environ, default=settings.engine)
    py = choose_python(recipe, version, python, engine_name)
    kind, request = request_for(recipe, version, engine_name, py)
    stack = recipe.stack(version, engine=kind)
    findings = check(stack, machine)
    errors = blocking(findings)
    if errors and not force:
        raise CheckFailed(stack.label, errors, where=machine_label(machine))
    plan = CreatePlan(name=env_name, recipe=recipe, version=version, engine=engine_name, engine_reason=why,
                      stack=stack, findings=findings)
    plan.meta = {"recipe": {"name": recipe.name, "version": version, "hash": recipe.content_hash()},
                 "requested": list(request.conda_specs or request.requirements), "env_vars": recipe.env_vars,
                 "smoke_test": recipe.smoke_test.to_dict() if recipe.smoke_test else None, "request": request}
    return plan


def plan_from_lock(settings, environ, *, lock, name: str | None, engine: str | None, machine, platform: str,
                   force: bool) -> CreatePlan:
    """Everything decided before any download, for a lockfile: its packages for this platform, and its
    hardware contract checked against ``machine`` (an error stops here unless ``force``)."""
    from cuenv.lockfile import content_hash, contract_findings

    solution = lock.solution_for(platform)
    engine = None if engine == "auto" else engine
    env_name = validate_name(name or lock.recipe["name"])
    findings = contract_findings(lock, machine)
    errors = blocking(findings)
    if errors and not force:
        raise CheckFailed(lock.contract.label, errors, how="Use --force to install it anyway.",
                          where=machine_label(machine))
    engine_name, why = (engine, f"{engine}: requested") if engine else (lock.engine, f"{lock.engine}: from the lockfile")
    plan = CreatePlan(name=env_name, recipe=None, version=lock.recipe.get("version"), engine=engine_name,
                      engine_reason=why, stack=lock.contract.stack(), findings=findings, locked=solution,
                      lock_hash=content_hash(lock))
    plan.meta = {"recipe": {k: lock.recipe.get(k) for k in ("name", "version", "hash")}, "requested": [],
                 "env_vars": dict(lock.recipe.get("env") or {}), "smoke_test": None}
    return plan


def obtain_solution(plan: CreatePlan, engine, machine, cache: Path, progress=None):
    """The pipeline's one variable step: the lockfile's solution when there is one, else a solve."""
    from cuenv.backends import Target

    if plan.locked is not None:
        if progress:
            progress("lock", f"{len(plan.locked.packages)} locked packages for {plan.locked.platform}, no solve")
        return plan.locked
    if progress:
        progress("solve", f"{plan.stack.label} with {plan.engine}")
    return engine.solve(plan.meta["request"], target=Target.from_machine(machine), cache_dir=cache)


def execute(plan: CreatePlan, settings, environ, *, machine, dry_run: bool, force: bool, progress=None,
            update: bool = False) -> CreatePlan:
    """Solve (or take the locked solution), then (unless dry_run) install it in place and mark the env
    complete last. ``update`` installs over the existing environment (`cuenv sync`) instead of replacing it."""
    from cuenv.backends import get_engine
    from cuenv.fingerprint import fingerprint

    store = Store.from_settings(settings)
    engine = get_engine(plan.engine, environ)
    cache = settings.cache_dir
    store.envs_dir.mkdir(parents=True, exist_ok=True)
    with store.locked(plan.name):
        if not dry_run and not update:
            prepare_prefix(store, plan.name, force=force)
        plan.solution = obtain_solution(plan, engine, machine, cache, progress)
        if dry_run:
            return plan
        prefix = store.path(plan.name)
        plan.prefix = prefix
        before = engine.installed(prefix) if update else ()
        if update:
            store.mark_incomplete(plan.name)  # usable again only once it matches the lock
        try:
            engine.install(prefix, plan.solution, cache_dir=cache, progress=progress)
            layout = engine.layout(prefix)
            lock_hash = write_solution(prefix, plan.solution)
            fp = fingerprint(environ) if plan.checked_here else ""
            meta = build_meta(plan, layout=layout, fingerprint=fp, size=0, lock_hash=lock_hash)
            store.write_meta(plan.name, meta)
            render_activation(store, plan.name, settings)
            if plan.checked_here:  # the hook's verdict cache too, so the first `use` starts no Python
                from cuenv import verdict

                verdict.write(prefix / ".cuenv", fp, verdict.lines_for(plan.findings))
            from cuenv.diskuse import disk_usage

            meta["size_bytes"] = disk_usage(prefix)
            store.write_meta(plan.name, meta)
            store.mark_complete(plan.name)
        except BaseException:
            # Ctrl-C, a failed download, a full disk: take it all back. A kill -9 cannot be caught;
            # its leftover has no completion marker and shows as incomplete. An update whose engine
            # refused before changing anything (hashes are verified before linking) stays as it was.
            if not update:
                store.remove(plan.name)
            elif engine.installed(prefix) == before:
                store.mark_complete(plan.name)
            raise
        plan.meta = meta
    return plan


def write_solution(prefix: Path, solution) -> str:
    """The environment's own lock: the exact solution it was installed from. Returns its hash."""
    import hashlib
    import json

    text = json.dumps(solution.to_json(), indent=2, sort_keys=True) + "\n"
    meta_dir = prefix / ".cuenv"
    meta_dir.mkdir(parents=True, exist_ok=True)
    (meta_dir / "solution.json").write_text(text, encoding="utf-8")
    return "sha256:" + hashlib.sha256(text.encode()).hexdigest()


def render_activation(store: Store, name: str, settings) -> None:
    from cuenv.shells import render_scripts

    record = store.get(name, allow_incomplete=True)
    render_scripts(record.target(), record.meta_dir, envs_dir=store.envs_dir, prompt=settings.prompt)
