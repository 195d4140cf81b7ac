"""`cuenv create RECIPE[@VERSION]`: a named environment pinned to one CUDA stack (issue 4).

Also from a lockfile (`--from-lock FILE`: no solve, the lock's hardware contract checked first),
cuenv's own or another tool's (conda-lock.yml, pixi.lock, pylock.toml, uv.lock: issue 15), and
from another tool's files (`-f environment.yml`, `-r requirements.txt --cuda X.Y`), issue 6.
"""

from __future__ import annotations

from pathlib import Path

from cuenv.engines.names import CHOICES
from cuenv.result import Result

TYPE_CHECKING = False  # no `typing` at run time (issue 29)
if TYPE_CHECKING:
    import argparse
    from collections.abc import Mapping

    from cuenv.cli.main import Context
    from cuenv.envs.plan import Built
    from cuenv.lock.io import LockRead
    from cuenv.result import JSON, JSONObject


def configure(parser: argparse.ArgumentParser, name: str) -> None:
    parser.add_argument("recipe", nargs="?", metavar="RECIPE[@VERSION]", help="a recipe from `cuenv recipes`, e.g. torch-cu121@2.3.1")
    src = parser.add_argument_group("instead of a recipe")
    src.add_argument("--from-lock", metavar="FILE",
                     help="install exactly a lockfile's packages, no solve: cuenv.lock, conda-lock.yml, pixi.lock, "
                          "pylock.toml or uv.lock (then RECIPE, if given, is the environment's name)")
    src.add_argument("--environment", metavar="ENV", help="with --from-lock pixi.lock: its environment (default: default)")
    src.add_argument("--platform", metavar="PLATFORM",
                     help="with --from-lock: the lock's platform (default: this machine's; another only with --dry-run)")
    src.add_argument("-f", "--file", metavar="ENVIRONMENT_YML", help="a conda environment.yml (its pip: section too)")
    src.add_argument("-r", "--requirements", metavar="FILE", help="a pip requirements.txt (-r/-c includes, indexes)")
    src.add_argument("--cuda", metavar="X.Y", help="the CUDA the -f/-r packages use (default: read from their pins)")
    src.add_argument("--skip-unsupported", action="store_true",
                     help="build -f/-r without the lines cuenv cannot install (local projects, VCS checkouts)")
    src.add_argument("--allow-build", action="append", default=[], metavar="NAME",
                     help="with -f/-r: build package NAME from its source distribution (runs NAME's build code on "
                          "this machine; repeat for several)")
    parser.add_argument("-n", "--name", help="environment name (default: the recipe's name)")
    parser.add_argument("--engine", choices=CHOICES,
                        help="how to build it (default: the `engine` setting, auto: conda-family on PATH, else venv; "
                             "rattler for conda-only files)")
    parser.add_argument("--with-nvcc", action="store_true",
                        help="add NVIDIA's nvcc of the recipe's CUDA (conda cuda-nvcc; CUDA 13 wheels for venv)")
    parser.add_argument("--python", metavar="X.Y", help="Python version (default: the recipe's, or this interpreter for venv)")
    parser.add_argument("--dry-run", action="store_true", help="solve and print what would be installed; change nothing")
    parser.add_argument("--force", action="store_true",
                        help="replace an existing environment, and build even when the check finds errors")
    parser.add_argument("--target-driver", metavar="VERSION", help="validate and solve for a machine with this driver")
    parser.add_argument("--target-gpu", action="append", default=[], metavar="NAME", help="a GPU of that machine (repeat)")
    parser.add_argument("--target-cc", action="append", default=[], metavar="X.Y", help="a GPU of that machine by compute capability")


def _machine(ctx: Context):
    a = ctx.args
    if a.target_driver or a.target_gpu or a.target_cc:
        from cuenv.cli.machine_flags import described_machine

        return described_machine(a.target_driver, a.target_gpu, a.target_cc)
    from cuenv.machine.driver import detect

    return detect(ctx.environ, cache_dir=ctx.settings.cache_dir)


def _plan(ctx: Context, machine, checked_here: bool):
    """The plan for whichever source was given: a recipe, a lockfile, environment.yml or requirements.txt;
    for a lockfile how it was read (cuenv.lock.io.LockRead); for a file how its CUDA was read."""
    from cuenv.envs.create import plan_create
    from cuenv.errors import UsageError

    a = ctx.args
    file, from_lock, name, recipe = a.file, a.from_lock, a.name, a.recipe
    if file and _is_project(file):  # a uv or pixi pyproject.toml: installed from its lock, as check reads it
        from_lock, file = file, None
    if from_lock and recipe and not name:  # `cuenv create NAME --from-lock FILE`
        name, recipe = recipe, None
    if (a.environment or a.platform) and not from_lock:
        raise UsageError(f"{'--environment' if a.environment else '--platform'} goes with --from-lock.",
                         hint="It chooses what of a lockfile to install.")
    given = [flag for flag, v in (("RECIPE", recipe), ("--from-lock", from_lock), ("-f", file),
                                  ("-r", a.requirements)) if v]
    if len(given) != 1:
        raise UsageError("Give one of a recipe, --from-lock and a lockfile, -f environment.yml or -r requirements.txt"
                         + (f" (got {', '.join(given)})." if given else "."),
                         hint="`cuenv recipes` lists the recipes; -f, -r and --from-lock read a file instead.")
    if (a.cuda or a.skip_unsupported or a.allow_build) and not (file or a.requirements):
        flag = "--cuda" if a.cuda else ("--skip-unsupported" if a.skip_unsupported else "--allow-build")
        raise UsageError(f"{flag} goes with -f or -r.", hint="A recipe or a lockfile is installed as it is.")
    if a.with_nvcc and not recipe:
        raise UsageError("--with-nvcc goes with a RECIPE.", hint="Add nvcc to the -f/-r file or the locked recipe instead.")
    if from_lock:
        plan, read = _plan_from_lock(ctx, machine, from_lock, name)
        return plan.replace(checked_here=checked_here), read, None
    if file or a.requirements:
        from cuenv.recipes.requestfiles import from_file

        built = from_file(Path(file or a.requirements), kind="environment-yml" if file else "requirements",
                          name=name, cuda=a.cuda, skip_unsupported=a.skip_unsupported,
                          trusted_env=ctx.settings.trusted_env_vars, allow_build=tuple(a.allow_build), environ=ctx.environ,
                          settings=ctx.settings)
        plan = plan_create(ctx.settings, ctx.environ, ref=None, name=name, engine=a.engine, python=a.python,
                           machine=machine, force=a.force, recipe=built.recipe, stack=built.stack,
                           request_extras=built.request_extras)
        source = {"file": str(file or a.requirements), "cuda_from": built.how, "notes": list(built.notes)}
        return plan.replace(checked_here=checked_here), None, source
    if Path(recipe).is_file():
        _refuse_file(recipe, name, ctx)
    plan = plan_create(ctx.settings, ctx.environ, ref=recipe, name=name, engine=a.engine, python=a.python,
                       machine=machine, force=a.force, with_nvcc=a.with_nvcc)
    return plan.replace(checked_here=checked_here), None, None


def _refuse_file(file: str, name: str | None, ctx: Context) -> None:
    """`cuenv create pixi.lock` names a file here, not a recipe: the flag that reads it, as a command that runs."""
    import shlex

    from cuenv.errors import UsageError
    from cuenv.lock.io import is_lockfile
    from cuenv.recipes.catalogue import load_catalogue
    from cuenv.recipes.projectfile import kind_of

    if file in load_catalogue(ctx.settings).names():
        return
    try:
        kind = "lock" if is_lockfile(file) else kind_of(Path(file))
    except UsageError:
        kind = None
    flag = {"lock": "--from-lock", "environment-yml": "-f", "requirements": "-r"}.get(kind or "")
    named = f" -n {shlex.quote(name)}" if name else ""
    raise UsageError(f"{file} is a file here, not a recipe.",
                     hint=f"Create from it with `cuenv create {flag} {shlex.quote(file)}{named}`." if flag else
                     "cuenv creates from a recipe (`cuenv recipes` lists them), a lockfile (--from-lock), "
                     "an environment.yml (-f) or a requirements file (-r).")


def _is_project(file: str) -> bool:
    """A uv or pixi project manifest (cuenv.lock.io.project_kind), which `-f` installs through its lock."""
    from cuenv.lock.io import head_text, is_lockfile, project_kind

    return is_lockfile(file) and project_kind(Path(file).name, head_text(file)) is not None


def _plan_from_lock(ctx: Context, machine, from_lock: str, name: str | None):
    from cuenv.envs.locksync import plan_lockfile

    a = ctx.args
    return plan_lockfile(ctx.settings, ctx.environ, lock_path=from_lock, name=name, engine=a.engine, machine=machine,
                         force=a.force, platform=a.platform, environment=a.environment, python=a.python,
                         dry_run=a.dry_run)


def _shadow_warning(ctx: Context) -> str | None:
    """A user recipe with a built-in's name: which one this create uses, and how to pick the other."""
    from cuenv.errors import CuenvError
    from cuenv.recipes.catalogue import load_catalogue

    try:
        return load_catalogue(ctx.settings).shadow_warning(ctx.args.recipe)
    except CuenvError:
        return None


def run(ctx: Context) -> Result[Created]:
    from cuenv.cli.progress import for_command
    from cuenv.envs.create import build_warnings, execute

    a = ctx.args
    machine = _machine(ctx)
    plan, read, source = _plan(ctx, machine, checked_here=not (a.target_driver or a.target_gpu or a.target_cc))
    # Non-blocking errors (no driver here) and warnings are said once, on stderr; the build goes on.
    progress = for_command(ctx)
    if source:  # how a project file was read: said before anything is downloaded
        progress.note(f"CUDA {plan.stack.cuda}: {source['cuda_from']}")
        for line in source["notes"]:
            progress.note(f"note: {line}")
    shadow = _shadow_warning(ctx) if a.recipe and read is None else None  # `create NAME --from-lock` names no recipe
    for line in build_warnings(plan.findings) + list(read.warnings if read else ()) + ([shadow] if shadow else []):
        progress.note(f"warning: {line}")
    for line in read.notes if read else ():
        progress.note(f"note: {line}")
    from cuenv.recipes.beyond import derived_note

    note = derived_note(plan.recipe)
    if note:
        progress.note(f"note: {note}")
    try:
        built = execute(plan, ctx.settings, ctx.environ, machine=machine, dry_run=a.dry_run, force=a.force,
                        progress=progress)
    finally:
        progress.done()
    if built.meta is None:  # a dry run: solved, not built
        request = plan.request
        layer = request.requirements if request is not None and request.conda_specs else ()
        return Result(Created(built, read, note=note, source=source, pip_layer=tuple(layer)), _would_text)
    from cuenv.envs.cudatools import nvcc_note

    nvcc = nvcc_note(plan.name, built.meta, plan.compiler_hint)  # issue 17: said once, where the environment is made
    return Result(Created(built, read, note=note, source=source, nvcc=nvcc), _created_text, report=True)


class Created:
    """`cuenv create` (and `--dry-run`): what execute built (or only solved), how a lockfile or a project file
    was read, and what to say about nvcc. One JSON shape; a dry run adds ``download_bytes`` (and ``pip_layer``
    for a conda file's pip: section), a build ``path``, ``size_bytes`` and ``nvcc``."""

    __slots__ = ("built", "note", "nvcc", "pip_layer", "read", "source")

    def __init__(self, built: Built, read: LockRead | None, *, note: str | None, source: Mapping[str, JSON] | None,
                 pip_layer: tuple[str, ...] = (), nvcc: str | None = None) -> None:
        self.built, self.read, self.note, self.source = built, read, note, source
        self.pip_layer, self.nvcc = pip_layer, nvcc

    @property
    def dry_run(self) -> bool:
        return self.built.meta is None

    def packages(self) -> list[JSONObject]:
        return [{"name": p.name, "version": p.version, "kind": p.kind, "url": p.url, "size": p.size}
                for p in self.built.solution.packages]

    def to_json(self) -> JSONObject:
        from cuenv.engines.base import total_size

        built = self.built
        plan = built.plan
        data: JSONObject = {
            "name": plan.name, "recipe": plan.stack.label, "engine": plan.engine, "engine_reason": plan.engine_reason,
            "dry_run": self.dry_run, "python": built.solution.python, "packages": self.packages(),
            "findings": [f.to_json() for f in plan.findings],
        }
        if self.read is not None:
            data.update(self.read.to_json())
        if self.note:
            data["note"] = self.note
        if self.source:
            data["source"] = self.source
        if built.meta is None:
            data["download_bytes"] = total_size(built.solution.packages)
            if self.pip_layer:
                data["pip_layer"] = list(self.pip_layer)
            return data
        data["path"] = str(built.prefix)
        data["size_bytes"] = built.meta.size_bytes
        data["nvcc"] = self.nvcc
        return data


def _would_text(done: Created) -> str:
    """What a dry run would install, with sizes."""
    from cuenv.engines.base import total_size
    from cuenv.engines.progress import human_bytes

    plan, read = done.built.plan, done.read
    packages = done.built.solution.packages
    total = total_size(packages)
    lines = [f"Would create {plan.name!r} from {plan.stack.label} with {plan.engine} ({plan.engine_reason}):"]
    width = max((len(f"{p.name} {p.version}") for p in packages), default=0)
    lines += [f"  {p.name + ' ' + p.version:<{width}}  {human_bytes(p.size) if p.size else ''}".rstrip() for p in packages]
    known = sum(p.size or 0 for p in packages)
    lines.append(f"Download: {human_bytes(total)} in {len(packages)} packages (less what the cache already holds)."
                 if total is not None else
                 f"Download: at least {human_bytes(known)}; the engine did not give every size." if known else
                 "Download: the engine did not give the sizes.")
    if read is not None:
        from cuenv.lock.model import contract_line

        lines += [contract_line(read.lock)] + [f"  {e}" for e in (read.derived.evidence if read.derived else ())]
    if done.pip_layer:  # a conda file's pip: section is resolved against the installed conda packages
        lines.append("then, with pip's rules against those conda packages, the pip: section:")
        lines += [f"  {r}" for r in done.pip_layer]
    return "\n".join(lines)


def _created_text(done: Created) -> str:
    from cuenv.cli.table import human_size

    built = done.built
    plan = built.plan
    assert built.meta is not None  # rendered only for a build
    return (f"Created {plan.name!r} ({plan.stack.label}, {plan.engine}, {len(built.solution.packages)} packages, "
            f"{human_size(built.meta.size_bytes)}) at {built.prefix}\n"
            + (f"note: {done.nvcc}\n" if done.nvcc else "")
            + f"Use it with `cuenv use {plan.name}` or `cuenv run {plan.name} -- python -V`.")
