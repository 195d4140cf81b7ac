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

from pathlib import Path
from typing import Callable, Sequence

from cuenv.envs import cudatools, folder
from cuenv.envs.meta import build_meta
from cuenv.envs.plan import CreatePlan
from cuenv.envs.store import Store, validate_name
from cuenv.errors import CuenvError, UsageError
from cuenv.knowledge.stack import NO_GPU_HERE, Finding, Stack


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
        from cuenv.knowledge.versions import Dotted

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
    from cuenv.engines import Request
    from cuenv.engines.names import CONDA_FAMILY

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
                machine, force: bool, recipe=None, new_env: bool = True, with_nvcc: bool = False) -> CreatePlan:
    """Everything decided before anything is downloaded: recipe, name, engine, verdict.

    ``recipe`` (a Recipe built from environment.yml or requirements.txt) replaces a catalogue ``ref``.
    ``new_env`` is False when nothing will be installed (`cuenv lock RECIPE`): an environment of the
    same name is then no obstacle. ``with_nvcc`` adds the vendor's nvcc of the recipe's CUDA (issue 17).
    """
    from cuenv.engines import resolve_engine
    from cuenv.knowledge.compat import check
    from cuenv.recipes.catalogue import load_catalogue

    if recipe is None and ref is None:
        raise UsageError("Name a recipe to create from.", hint="`cuenv recipes` lists them; e.g. `cuenv create cuda-12.1`.")
    from_catalogue = recipe is None
    recipe, version = (recipe, None) if recipe is not None else load_catalogue(settings).get(str(ref))
    env_name = validate_name(name or recipe.name)
    store = Store.from_settings(settings)
    if new_env and not force and store.exists(env_name) and store.get(env_name, allow_incomplete=True).complete:
        prepare_prefix(store, env_name, force=False)  # raises "already exists" before any work
    engine_name, why = resolve_engine(engine, environ, default=settings.engine)
    py = choose_python(recipe, version, python, engine_name)
    kind, request = request_for(recipe, version, engine_name, py)
    stack = recipe.stack(version, engine=kind)
    if with_nvcc and not stack.has_nvcc:
        request, stack = _with_compiler(recipe, version, kind, request, stack)
    findings = check(stack, machine)
    errors = blocking(findings)
    if errors and not force:
        raise CheckFailed(stack.label, errors, where=machine_label(machine))
    plan = CreatePlan(name=env_name, recipe=recipe, version=version, engine=engine_name, engine_reason=why,
                      stack=stack, findings=findings)
    plan.meta = {"recipe": {"name": recipe.name, "version": version, "hash": recipe.content_hash()},
                 "requested": list(request.conda_specs or request.requirements), "env_vars": recipe.env_vars,
                 "smoke_test": recipe.smoke_test.to_dict() if recipe.smoke_test else None, "request": request}
    if from_catalogue and not stack.has_nvcc:
        from cuenv.recipes import compiler

        engines = recipe.engines(version)
        plan.meta["compiler_hint"] = compiler.create_hint(
            recipe=recipe.label(version), cuda=stack.cuda, has_conda="conda" in engines,
            venv_has_nvcc="venv" in engines and recipe.venv.nvcc, env_name=env_name)
    return plan


def _with_compiler(recipe, version: str | None, kind: str, request, stack: Stack):
    """The request and stack with the compiler packages of the recipe's CUDA added."""
    import dataclasses

    from cuenv.recipes import compiler

    if not stack.cuda:
        raise UsageError(f"Recipe {recipe.label(version)} has no CUDA, so there is no nvcc to add.")
    extra = compiler.packages(kind, stack.cuda, recipe=recipe.label(version), has_conda="conda" in recipe.engines(version))
    if kind == "conda":
        request = dataclasses.replace(request, conda_specs=(*request.conda_specs, *extra.specs))
    else:
        request = dataclasses.replace(request, requirements=(*request.requirements, *extra.specs))
    return request, dataclasses.replace(stack, has_nvcc=True)


def plan_from_lock(settings, environ, *, lock, name: str | None, engine: str | None, machine, platform: str,
                   force: bool) -> CreatePlan:
    """Everything decided before any download, for a lockfile: its packages for this platform, and its
    hardware contract checked against ``machine`` (an error stops here unless ``force``)."""
    from cuenv.lock.model import content_hash, contract_findings

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
    from cuenv.engines import Target

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
    from cuenv.engines import get_engine
    from cuenv.machine.fingerprint import fingerprint

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
            lock_hash = folder.write_solution(prefix, plan.solution.to_json())
            fp = fingerprint(environ) if plan.checked_here else ""
            meta = build_meta(plan, layout=layout, fingerprint=fp, size=0, lock_hash=lock_hash)
            meta["tools"] = cudatools.install_here(name=plan.name, prefix=prefix, layout=layout, meta=meta, environ=environ,
                                                   compiler_hint=plan.meta.get("compiler_hint"))
            store.write_meta(plan.name, meta)
            render_activation(store, plan.name, settings)
            if plan.checked_here:  # the hook's verdict cache too, so the first `use` starts no Python
                from cuenv.envs import verdict

                verdict.write(prefix / ".cuenv", fp, verdict.lines_for(plan.findings))
            from cuenv.envs.diskuse import disk_usage

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


def render_activation(store: Store, name: str, settings) -> None:
    from cuenv.activation.render import render_scripts

    record = store.get(name, allow_incomplete=True)
    render_scripts(record.target(), record.meta_dir, envs_dir=store.envs_dir, prompt=settings.prompt)
