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
from typing import TYPE_CHECKING, Any, Mapping, Sequence

from cuenv import runner
from cuenv.engines.events import Progress, Step
from cuenv.envs import cudatools, folder
from cuenv.envs.meta import EnvMeta, RecipeRef, SmokeTest, Validation, built_meta
from cuenv.envs.plan import Built, CreatePlan
from cuenv.envs.store import Store, validate_name
from cuenv.errors import CuenvError, UsageError
from cuenv.knowledge.findings import NO_GPU_HERE, Finding
from cuenv.knowledge.stack import Stack
from cuenv.plain import Plain

if TYPE_CHECKING:
    from cuenv.activation.target import CudaLayout
    from cuenv.config import Settings
    from cuenv.engines import Engine, Request, Solution, Target
    from cuenv.engines.pypiroute import Route
    from cuenv.lock.model import Lock
    from cuenv.machine.model import Machine
    from cuenv.machine.toolkits import SystemToolkit
    from cuenv.recipes.catalogue import Recipe


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


def machine_label(machine: Machine | None) -> str:
    """ "this machine", or "the target machine" when flags (--target-*, --driver) described it."""
    driver = getattr(machine, "driver", None)
    return "the target machine" if driver is not None and driver.source in ("flag", "unknown") else "this machine"


def blocking(findings: Sequence[Finding]) -> list[Finding]:
    return [f for f in findings if f.severity == "error" and f.code not in NO_GPU_HERE]


def prepare_prefix(store: Store, name: str, *, force: bool) -> None:
    """Make room for ``name``: an incomplete leftover is cleaned, a usable one needs --force, a folder
    cuenv did not make is refused."""
    if store.exists(name):
        record = store.get(name, allow_incomplete=True)
        if record.complete and not force:
            raise UsageError(
                f"Environment {name!r} already exists.",
                hint=f"Use --force to replace it, -n for another name, or `cuenv remove {name}`.",
            )
        store.remove(name)




def choose_python(recipe: Recipe, version: str | None, requested: str | None, engine: str) -> str | None:
    """--python wins; a venv otherwise uses this interpreter when the recipe allows it (no download),
    else the recipe's default; conda engines install the recipe's default (none if it names none)."""
    import sys

    if requested:
        from cuenv.knowledge.versions import Dotted

        Dotted.parse(requested, what="Python version")
        return requested
    py = recipe.python_for(version)
    if engine == "venv" and py.allows(f"{sys.version_info.major}.{sys.version_info.minor}"):
        return None
    return py.default if py else None


def request_for(recipe: Recipe, version: str | None, engine: str, python: str | None) -> tuple[str, Request]:
    from cuenv.engines import Request
    from cuenv.engines.names import CONDA_PREFIX_ENGINES

    kind = "conda" if engine in CONDA_PREFIX_ENGINES else "venv"
    can = recipe.engines(version)
    conda, venv = recipe.conda, recipe.venv
    if kind in can and kind == "conda" and conda is not None:
        return kind, Request(engine=engine, python=python, conda_channels=conda.channels,
                             conda_specs=conda.specs_for(version))
    if kind in can and kind == "venv" and venv is not None:
        return kind, Request(engine=engine, python=python, index_urls=venv.index_urls,
                             requirements=venv.requirements_for(version))
    raise UsageError(
        f"Recipe {recipe.label(version)} has no {kind} install section, so engine {engine!r} cannot build it.",
        hint=f"Use --engine {'venv' if 'venv' in can else 'rattler or conda'}." if can else None,
    )


def plan_create(settings: Settings, environ: Mapping[str, str], *, ref: str | None, name: str | None,
                engine: str | None, python: str | None, machine: Machine, force: bool, recipe: Recipe | None = None,
                new_env: bool = True, stack: Stack | None = None,
                request_extras: Mapping[str, Any] | None = None, with_nvcc: bool = False) -> CreatePlan:
    """Everything decided before anything is downloaded: recipe, name, engine, verdict.

    ``recipe`` (a Recipe built from environment.yml or requirements.txt) replaces a catalogue ``ref``;
    with it come the ``stack`` the file's pins name and ``request_extras`` (Request fields a recipe does
    not hold: a conda file's pip layer, --find-links, --pre, constraints, hashes).
    ``new_env`` is False when nothing will be installed (`cuenv lock RECIPE`): an environment of the
    same name is then no obstacle. ``with_nvcc`` adds the vendor's nvcc of the recipe's CUDA (issue 17).
    """
    from cuenv.engines import resolve_engine
    from cuenv.knowledge.compat import check
    from cuenv.recipes.beyond import resolve
    from cuenv.recipes.catalogue import load_catalogue

    if recipe is None and ref is None:
        raise UsageError("Name a recipe to create from.", hint="`cuenv recipes` lists them; e.g. `cuenv create cuda-12.1`.")
    from_catalogue = recipe is None
    recipe, version = (recipe, None) if recipe is not None else resolve(load_catalogue(settings), str(ref))
    env_name = validate_name(recipe.name if name is None else name)  # `-n ""` is an error, not the default
    store = Store.from_settings(settings)
    if new_env and not force and store.exists(env_name) and store.get(env_name, allow_incomplete=True).complete:
        prepare_prefix(store, env_name, force=False)  # raises "already exists" before any work
    engine_name, why = resolve_engine(engine, environ, default=settings.engine, families=recipe.engines(version))
    py = choose_python(recipe, version, python, engine_name)
    kind, request = request_for(recipe, version, engine_name, py)
    if request_extras:
        request = request.replace(**request_extras)
    stack = stack or recipe.stack(version, engine=kind)
    if with_nvcc and not stack.has_nvcc:
        request, stack = _with_compiler(recipe, version, kind, request, stack, name=name)
    request, route = routed(settings, recipe, kind, request, stack.cuda)
    findings = check(stack, machine)
    errors = blocking(findings)
    if errors and not force:
        raise CheckFailed(stack.label, errors, where=machine_label(machine))
    compiler_hint = None
    if from_catalogue and not stack.has_nvcc:
        from cuenv.recipes import compiler

        engines = recipe.engines(version)
        compiler_hint = compiler.create_hint(
            recipe=recipe.label(version), cuda=stack.cuda, has_conda="conda" in engines,
            venv_has_nvcc="venv" in engines and recipe.venv is not None and recipe.venv.nvcc,
            env_name=env_name)
    smoke = recipe.smoke_test
    return CreatePlan(name=env_name, recipe=recipe, version=version, engine=engine_name, engine_reason=why,
                      stack=stack, findings=tuple(findings),
                      recipe_ref=RecipeRef(recipe.name, version, recipe.content_hash()),
                      requested=(*request.conda_specs, *request.requirements), env_vars=dict(recipe.env_vars),
                      smoke_test=SmokeTest(smoke.python, tuple(smoke.command or ())) if smoke else None,
                      request=request, route=route, compiler_hint=compiler_hint)


def _with_compiler(recipe: Recipe, version: str | None, kind: str, request: Request, stack: Stack, *,
                   name: str | None) -> tuple[Request, Stack]:
    """The request and stack with the compiler packages of the recipe's CUDA added."""
    from cuenv.recipes import compiler

    if not stack.cuda:
        raise UsageError(f"Recipe {recipe.label(version)} has no CUDA, so there is no nvcc to add.")
    extra = compiler.packages(kind, stack.cuda, recipe=recipe.label(version), has_conda="conda" in recipe.engines(version),
                              name=name)
    if kind == "conda":
        request = request.replace(conda_specs=(*request.conda_specs, *extra.specs))
    else:
        request = request.replace(requirements=(*request.requirements, *extra.specs))
    return request, stack.replace(has_nvcc=True)


class RouteInfo(Plain):
    """The index route of a framework recipe, and what a refusal must say (issue 19 §2)."""

    __slots__ = ("route", "recipe", "versions")

    def __init__(self, route: Route, recipe: str, versions: tuple[str, ...]) -> None:
        self.route, self.recipe, self.versions = route, recipe, versions


def routed(settings: Settings, recipe: Recipe, kind: str, request: Request,
           cuda: str | None) -> tuple[Request, RouteInfo | None]:
    """(request, RouteInfo or None): a venv framework request sent to the index its route picks first."""
    versions = (recipe.venv.versions if recipe.venv else None) or recipe.versions
    try:
        route = framework_route(settings, request, cuda) if kind == "venv" else None
    except CuenvError as exc:
        from cuenv.engines.pypiroute import RouteRefused  # imported only where a route was planned (issue 29)

        if not isinstance(exc, RouteRefused):
            raise
        # --framework-index pypi: name the versions PyPI does serve
        raise _pypi_only_refusal(settings, exc, recipe.name, tuple(versions), cuda or "", request) from None
    if route is None:
        return request, None
    request = request.replace(index_urls=route.first.index_urls, requirements=route.first.requirements)
    return request, RouteInfo(route, recipe.name, tuple(versions))


def _pypi_only_refusal(settings: Settings, exc: CuenvError, recipe: str, versions: tuple[str, ...], cuda: str,
                       request: Request) -> CuenvError:
    """The refusal of ``--framework-index pypi``, its hint naming this recipe's versions whose PyPI build is ``cuda``."""
    from cuenv.engines import pypiroute
    from cuenv.knowledge.packages import framework_packages

    pinned = pypiroute.pinned_project(request.requirements, framework_packages())
    if pinned is None:
        return exc
    project = pinned[0]
    same = [v for v in versions
            if pypiroute.pypi_build(project, v.split("+")[0], mirrors=settings.mirrors, cache_dir=settings.cache_dir,
                                    python=request.python).cuda == cuda]
    if same:
        hint = (f"PyPI serves the CUDA {cuda} build of {project} {', '.join(same)}: "
                f"`cuenv create {recipe}@{same[-1]} --framework-index pypi`.")
    else:
        hint = (f"PyPI serves no CUDA {cuda} build of any {project} version of {recipe}; it needs the vendor index"
                " (`--framework-index pypi-first`, with a mirror for it where it cannot be reached:"
                " docs/guides/mirrors.md).")
    return pypiroute.RouteRefused(exc.message, hint=hint)


def framework_route(settings: Settings, request: Request, cuda: str | None) -> Route | None:
    """Where a framework recipe's wheels come from: PyPI where PyPI's build of that version is the
    recipe's CUDA build (read from the wheel's metadata), else the vendor index (``framework_index``).
    None for anything that is not one exact framework pin on a vendor index."""
    from cuenv.engines.mirrors import PYPI_SIMPLE

    vendor = tuple(u.rstrip("/") for u in request.index_urls)
    if not cuda or not vendor or PYPI_SIMPLE in vendor:
        return None
    from cuenv.engines import pypiroute  # only a vendor-index request pays for it (start-up, issue 29)
    from cuenv.knowledge.packages import framework_packages

    pinned = pypiroute.pinned_project(request.requirements, framework_packages())
    if pinned is None:
        return None
    project, version = pinned
    build = None
    if settings.framework_index != "vendor":
        build = pypiroute.pypi_build(project, version, mirrors=settings.mirrors, cache_dir=settings.cache_dir,
                                     python=request.python)
    return pypiroute.plan(cuda=cuda, project=project, version=version, vendor_indexes=request.index_urls,
                          requirements=request.requirements, setting=settings.framework_index, build=build)


def solve_routed(engine: Engine, request: Request, info: RouteInfo | None, *, target: Target, cache_dir: Path,
                 progress: Progress | None = None) -> Solution:
    """``engine.solve``; where the route's first index cannot be reached, its second, or a refusal
    that names the versions PyPI serves for the recipe's CUDA."""
    from cuenv.engines import DownloadFailed

    try:
        return engine.solve(request, target=target, cache_dir=cache_dir)
    except DownloadFailed as exc:
        if info is None:
            raise
        route = info.route
        if route.then is not None:
            if progress:
                progress(Step("solve", f"{route.first.name} failed ({exc.message}); trying {route.then.name}"))
            other = request.replace(index_urls=route.then.index_urls, requirements=route.then.requirements)
            return engine.solve(other, target=target, cache_dir=cache_dir)
        if route.first.name != "vendor" or route.build is None:
            raise
        from cuenv.engines import pypiroute

        builds = [pypiroute.pypi_build(route.build.project, v.split("+")[0], mirrors=engine.mirrors, cache_dir=cache_dir)
                  for v in info.versions]
        raise pypiroute.refusal(project=route.build.project, version=route.build.version, cuda=route.cuda,
                                vendor_indexes=route.first.index_urls, reason=exc.message.rstrip("."),
                                builds=builds, recipe=info.recipe) from None


def plan_from_lock(settings: Settings, environ: Mapping[str, str], *, lock: Lock, name: str | None,
                   engine: str | None, machine: Machine, platform: str, force: bool) -> CreatePlan:
    """Everything decided before any download, for a lockfile: its packages for this platform, and its
    hardware contract checked against ``machine`` (an error stops here unless ``force``)."""
    from cuenv.lock.model import content_hash, contract_findings

    solution = lock.solution_for(platform)
    engine = None if engine == "auto" else engine
    env_name = validate_name(lock.recipe.name if name is None else name)
    findings = contract_findings(lock, machine)
    errors = blocking(findings)
    if errors and not force:
        raise CheckFailed(lock.contract.label, errors, how="Use --force to install it anyway.",
                          where=machine_label(machine))
    engine_name, why = (engine, f"{engine}: requested") if engine else (lock.engine, f"{lock.engine}: from the lockfile")
    return CreatePlan(name=env_name, recipe=None, version=lock.recipe.version, engine=engine_name,
                      engine_reason=why, stack=lock.contract.stack(), findings=tuple(findings), locked=solution,
                      lock_hash=content_hash(lock),
                      recipe_ref=RecipeRef(lock.recipe.name, lock.recipe.version, lock.recipe.hash),
                      env_vars=dict(lock.recipe.env))


def check_solution_cuda(plan: CreatePlan, solution: Solution) -> None:
    """The resolver's NVIDIA wheels must be of the stack's CUDA major: an unpinned framework can pull
    another CUDA's wheels than the one the environment is checked and recorded for (issue 15)."""
    from cuenv.engines.venv import cuda_major_of

    if plan.stack.cuda is None or plan.locked is not None:
        return
    want = int(plan.stack.cuda.split(".")[0])
    for pkg in solution.packages:
        major = cuda_major_of(pkg.name, pkg.version) if pkg.kind == "pypi" else None
        if major is not None and major != want:
            raise UsageError(f"The resolver picked CUDA {major} wheels ({pkg.name} {pkg.version}) for an environment "
                             f"checked for CUDA {plan.stack.cuda}.",
                             hint=f"Pin the framework to a CUDA {want} build (its +cu{plan.stack.cuda.replace('.', '')} build "
                             "from its index), or pass the --cuda the packages really use.")


def obtain_solution(plan: CreatePlan, engine: Engine, machine: Machine, cache: Path,
                    progress: Progress | None = None) -> Solution:
    """The pipeline's one variable step: the lockfile's solution when there is one, else a solve."""
    from cuenv.engines import Target

    if progress:
        for line in engine.mirrors.describe():  # say which mirror is used, and whose setting it is
            progress(Step("mirror", line))
    if plan.locked is not None:
        if progress:
            progress(Step("lock", f"{len(plan.locked.packages)} locked packages for {plan.locked.platform}, no solve"))
        return plan.locked
    info = plan.route
    if progress:
        progress(Step("solve", f"{plan.stack.label} with {plan.engine}"))
        if info is not None:
            progress(Step("route", info.route.reason))
    if plan.request is None:
        raise UsageError(f"Nothing to solve for {plan.name!r}: it names neither packages nor a lockfile.")
    return solve_routed(engine, plan.request, info, target=Target.from_machine(machine), cache_dir=cache,
                        progress=progress)


def execute(plan: CreatePlan, settings: Settings, environ: Mapping[str, str], *, machine: Machine, dry_run: bool,
            force: bool, progress: Progress | None = None, update: bool = False) -> Built:
    """Solve (or take the locked solution), then (unless dry_run) install it in place and mark the env
    complete last; returns what was built, the plan unchanged. ``update`` installs over the existing
    environment (`cuenv sync`) instead of replacing it."""
    from cuenv.engines import get_engine
    from cuenv.machine.fingerprint import fingerprint

    store = Store.from_settings(settings)
    engine = get_engine(plan.engine, environ, mirrors=settings.mirrors)
    cache = settings.cache_dir
    store.envs_dir.mkdir(parents=True, exist_ok=True)
    with store.locked(plan.name):
        if not dry_run and not update:
            prepare_prefix(store, plan.name, force=force)
        solution = obtain_solution(plan, engine, machine, cache, progress)
        check_solution_cuda(plan, solution)
        if dry_run:
            return Built(plan, solution)
        prefix = store.path(plan.name)
        before = engine.installed(prefix) if update else ()
        if update:
            store.mark_incomplete(plan.name)  # usable again only once it matches the lock
        try:
            if not update:
                store.claim(plan.name)  # before the engine makes the prefix: a build killed half-way is still ours
            request = plan.request
            layer = request if engine.family == "conda" and request is not None and request.requirements else None
            # The system's toolkits (the shims and the activation scripts name them) are found while the engine
            # installs: they need nothing it makes, and asking a system nvcc its version is a process of its own.
            # The modules of what follows the install are loaded there too, while uv works on the other core.
            system = runner.meanwhile(_toolkits_and_what_follows, environ)
            with_layer = engine.install(prefix, solution, cache_dir=cache, progress=progress, layer=layer)
            if with_layer is not None:  # the pip layer's wheels, resolved against the conda packages
                solution = with_layer
            layout = engine.layout(prefix)
            lock_hash = folder.write_solution(prefix, solution.to_json())
            fp = fingerprint(environ) if plan.checked_here else ""
            meta = _meta_of(plan, solution, layout=layout, fingerprint=fp, lock_hash=lock_hash)
            found = system()
            meta = meta.replace(tools=cudatools.install_here(name=plan.name, prefix=prefix, layout=layout, meta=meta,
                                                             environ=environ, compiler_hint=plan.compiler_hint, found=found))
            store.write_meta(plan.name, meta)
            render_activation(store, plan.name, settings, environ, found)
            if plan.checked_here:  # the hook's verdict cache too, so the first `use` starts no Python
                from cuenv.envs import verdict

                verdict.write(folder.meta_dir(prefix), fp, verdict.lines_for(plan.findings))
            from cuenv.envs.diskuse import disk_usage

            meta = meta.replace(size_bytes=disk_usage(prefix))
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
    return Built(plan, solution, prefix, meta)


def _toolkits_and_what_follows(environ: Mapping[str, str]) -> list[SystemToolkit]:
    from importlib import import_module

    from cuenv.machine import toolkits

    found = toolkits.discover(environ)
    # A hint for speed, not a second list of what follows: a module missing here is loaded where it is used.
    for module in ("datetime", "cuenv.activation.render", "cuenv.envs.diskuse", "cuenv.envs.verdict"):
        import_module(module)  # what the create does once uv is done: loaded while uv works
    return found


def _meta_of(plan: CreatePlan, solution: Solution, *, layout: CudaLayout, fingerprint: str, lock_hash: str) -> EnvMeta:
    return built_meta(name=plan.name, recipe=plan.recipe_ref, engine=plan.engine, engine_reason=plan.engine_reason,
                      python=solution.python, platform=solution.platform, stack=plan.stack, packages=solution.packages,
                      requested=plan.requested, validation=Validation(fingerprint, plan.findings), layout=layout,
                      env_vars=plan.env_vars, smoke_test=plan.smoke_test, lock_hash=plan.lock_hash or lock_hash,
                      compiler_hint=plan.compiler_hint, changes=plan.changes)


def render_activation(store: Store, name: str, settings: Settings, environ: Mapping[str, str],
                      found: Sequence[SystemToolkit] | None = None) -> None:
    """The environment's activation scripts; ``found``: the system toolkits ``discover(environ)`` found already."""
    from cuenv.activation.render import render_scripts

    record = store.get(name, allow_incomplete=True)
    folder.write_activation(record.meta_dir, render_scripts(record.target(), envs_dir=store.envs_dir,
                                                            prompt=settings.prompt, environ=environ, found=found))
