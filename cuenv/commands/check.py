"""`cuenv check TARGET`: will this build run on this (or a described) machine? Exit 0 yes, 1 no, 2 bad input.

An environment, a wheel, a shared object or a folder is also judged by the kernels its files carry
(issue 20): the SASS and PTX in each library's fat binaries, against the machine's GPUs.

A lockfile (cuenv.lock, conda-lock.yml, pixi.lock, pylock.toml, uv.lock) is judged by the stack its
packages need, with how that was read and the closest catalogue recipe (issue 15 §4); so is a project's
environment.yml or requirements file, by the stack its pins ask for (issue 15 §3).
"""

from __future__ import annotations

import argparse
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from cuenv.cli.machine_flags import add_machine_flags, machine_from_args
from cuenv.errors import EXIT_OK, EXIT_PROBLEMS, NotFound, UsageError
from cuenv.knowledge.compat import state_of
from cuenv.knowledge.stack import SEVERITIES, Finding, Stack
from cuenv.result import Result, text_result

if TYPE_CHECKING:
    from cuenv.binaries.assess import Assessment
    from cuenv.cli.main import Context
    from cuenv.commands.check_all import Survey
    from cuenv.envs.store import EnvRecord
    from cuenv.machine.model import Machine
    from cuenv.recipes.projectfile import ProjectNeed
    from cuenv.result import Text


def configure(parser: argparse.ArgumentParser, name: str) -> None:
    parser.add_argument("target", metavar="TARGET", nargs="?",
                        help="what to check: a recipe, an environment, a package spec such as torch==2.1.0+cu121,"
                             " paddlepaddle-gpu==2.6.1.post118, tensorflow==2.15.0, jax[cuda12]==0.4.30 or cuda==12.1,"
                             " a wheel, shared object or folder (a path: ./ext.so, dist/x.whl) whose kernels are read,"
                             " a lockfile (cuenv.lock, conda-lock.yml, pixi.lock, pylock.toml, uv.lock),"
                             " or a project's environment.yml, requirements.txt, or uv/pixi pyproject.toml (read through its lock)")
    parser.add_argument("--all", action="store_true",
                        help="every environment, built or adopted, one verdict a line (for this machine or the one described)")
    add_machine_flags(parser)
    parser.add_argument("--gcc", metavar="VERSION", help="host gcc, checked against nvcc for stacks that compile CUDA")
    parser.add_argument("--index", metavar="cuXYZ", help="the index a spec was installed from (paddle 3.x: cu126)")
    parser.add_argument("--cuda", metavar="X.Y",
                        help="for an environment.yml or requirements file: the CUDA its packages use, when its pins do not say")
    lock = parser.add_argument_group("lockfiles")
    lock.add_argument("--environment", metavar="ENV", help="a pixi.lock's environment (default: default, as pixi)")
    lock.add_argument("--platform", metavar="PLATFORM", help="the lock's platform (default: this machine's)")
    lock.add_argument("--python", metavar="X.Y",
                      help="pylock.toml/uv.lock: the Python to pick wheels for (default: this one, else the nearest the lock installs)")


def _from_spec(text: str, ctx) -> Stack | None:
    from cuenv.knowledge.specs import looks_like_spec, parse_spec

    return parse_spec(text, getattr(ctx.args, "index", None)) if looks_like_spec(text) else None


def _from_environment(text: str, ctx) -> Stack | None:
    """An environment's recorded stack: what is installed, which may differ from its recipe's default."""
    record = _environment(text, ctx)
    if record is None:
        return None
    from cuenv.envs.meta import stack_from_meta  # only for an environment: a recipe or spec needs none of it

    return stack_from_meta(record.meta)


def _from_recipe(text: str, ctx) -> Stack | None:
    from cuenv.knowledge.specs import looks_like_spec

    if looks_like_spec(text):  # no recipe name has '==' or '[': the catalogue is not even imported
        return None
    from cuenv.recipes.beyond import resolve
    from cuenv.recipes.catalogue import load_catalogue

    catalogue = load_catalogue(ctx.settings)
    name = text.split("@", 1)[0]
    if name not in catalogue.names():
        return None
    recipe, version = resolve(catalogue, text)
    return recipe.stack(version)


# Tried in order; the first that answers wins: an environment (what is installed), a recipe, a spec.
RESOLVERS: list[Callable[[str, object], Stack | None]] = [_from_environment, _from_recipe, _from_spec]


def resolve_target(text: str, ctx) -> Stack:
    """The Stack a TARGET names: a recipe, an environment, or a package spec."""
    for resolver in RESOLVERS:
        stack = resolver(text, ctx)
        if stack is not None:
            return stack
    import difflib

    from cuenv.knowledge.specs import EXAMPLES
    from cuenv.recipes.catalogue import load_catalogue

    close = difflib.get_close_matches(text.split("@", 1)[0], load_catalogue(ctx.settings).names(), n=3)
    hint = ("Did you mean " + ", ".join(close) + "? " if close else "") + \
        f"Give a recipe (`cuenv recipes`), an environment, or a package spec such as {EXAMPLES}."
    raise UsageError(f"cuenv does not know the target {text!r}.", hint=hint)


def path_target(text: str) -> Path | None:
    """A TARGET written as a path (it has a slash, or names a wheel or a shared object); must exist."""
    from cuenv.binaries.names import looks_binary

    if "/" not in text and text != "." and not text.endswith(".whl") and not looks_binary(text):
        return None
    path = Path(text).expanduser()
    hint = "Give a wheel, a shared object or a folder to read the kernels of, or a recipe, an environment or a spec."
    if not path.exists():
        raise NotFound(f"No file or folder {text!r}.", hint=hint)
    if not path.is_file() and not path.is_dir():  # a FIFO, a socket, a device: nothing to read kernels from
        raise UsageError(f"{text} is neither a file nor a folder.", hint=hint)
    if path.is_file() and not text.endswith(".whl") and not looks_binary(path.name) and not _is_elf(path):
        # What reaches here was not read as a lockfile or a project file either (run() tries those first).
        from cuenv.lock.foreign import LABELS

        kinds = ", ".join(["cuenv.lock", *LABELS.values()])
        raise UsageError(f"{text} is not a wheel, a shared object, a fat binary, a lockfile or a project file cuenv reads.",
                         hint=hint + f" Lockfiles: {kinds}; project files: environment.yml, requirements.txt, "
                         "pyproject.toml (uv, pixi), pixi.toml.")
    return path


def _is_elf(path: Path) -> bool:
    """Whether a file named like nothing cuenv scans still is one (an ELF shared object or cubin)."""
    try:
        with path.open("rb") as fh:
            return fh.read(4) == b"\x7fELF"
    except OSError:
        return False


def _environment(text: str, ctx: Context) -> EnvRecord | None:
    if "/" in text or not (ctx.settings.envs_dir / text).is_dir():  # a recipe or a spec: no store import
        return None
    from cuenv.envs.store import NAME_RE, Store

    if not NAME_RE.fullmatch(text):
        return None
    store = Store.from_settings(ctx.settings)
    return store.get(text) if store.path(text).is_dir() else None


def _derived_note(text: str, ctx: Context) -> str | None:
    """The note of a recipe version read from PyPI on the fly (cuenv.recipes.beyond), if the target is one."""
    if "@" not in text:
        return None
    from cuenv.recipes.beyond import derived_note, resolve
    from cuenv.recipes.catalogue import load_catalogue

    catalogue = load_catalogue(ctx.settings)
    if text.split("@", 1)[0] not in catalogue.names():
        return None
    return derived_note(resolve(catalogue, text)[0])


def run(ctx: Context) -> Result[Text] | Result[Survey]:
    from cuenv.knowledge import versions
    from cuenv.knowledge.compat import check, describe_machine, verdict
    from cuenv.lock.io import is_lockfile

    if ctx.args.all or not ctx.args.target:
        if ctx.args.all and ctx.args.target:
            raise UsageError("--all checks every environment; it takes no TARGET.",
                             hint=f"`cuenv check {ctx.args.target}` checks that one, `cuenv check --all` all of them.")
        if not ctx.args.all:
            raise UsageError("Name what to check, or --all for every environment.",
                             hint="`cuenv check torch-cu121`, `cuenv check ./environment.yml` or `cuenv check --all`.")
        from cuenv.commands.check_all import run_all

        return run_all(ctx)
    if is_lockfile(ctx.args.target):
        return _check_lockfile(ctx)
    found = project_file(ctx.args.target, ctx)
    if found is not None:
        return _check_project_file(ctx, *found)
    a = ctx.args
    if a.environment or a.platform or a.python:
        raise UsageError("--environment, --platform and --python go with a lockfile.",
                         hint="Give the lockfile as TARGET, e.g. `cuenv check pixi.lock --environment cuda`.")
    target = ctx.args.target
    path = path_target(target)
    stack = None if path is not None else resolve_target(target, ctx)
    note = _derived_note(target, ctx) if stack is not None and stack.label == target else None
    if ctx.args.gcc:
        versions.Dotted.parse(ctx.args.gcc, what="gcc version")
    machine, warnings = machine_from_args(ctx)
    record = _environment(target, ctx) if path is None else None
    kernels: Assessment | None
    if record is not None:  # one judgement for `check NAME` and `check --all` (cuenv.envs.kernels)
        from cuenv.envs.kernels import judge

        findings, kernels = judge(record, machine, cache_dir=ctx.settings.cache_dir, gcc=ctx.args.gcc)
    else:
        kernels = _kernels(ctx, path, machine)
        findings = check(stack, machine, gcc=ctx.args.gcc) if stack is not None else []
        if kernels is not None:
            findings = sorted([*findings, *kernels.findings], key=lambda f: SEVERITIES.index(f.severity))
    ok = verdict(findings)
    data = {"target": target, "ok": ok, "verdict": state_of(findings, ok), "findings": [f.to_json() for f in findings]}
    if ok and any(f.code == "build-unknown" for f in findings):
        data["known"] = False  # no error found, but the build itself is not in cuenv's tables: not a pass
    if kernels is not None:
        data["kernels"] = kernels.to_json()
    text = render(target, findings, ok, describe_machine(machine), kernels)
    if note:
        data["note"] = note
        text += f"\n\nnote: {note}"
    return text_result(data=data, text=text,
                  exit_code=EXIT_OK if ok else EXIT_PROBLEMS, warnings=warnings)


def project_file(text: str, ctx: Context) -> tuple[ProjectNeed, Stack | None] | None:
    """(need, closest recipe) for a TARGET that is a project's environment.yml or requirements file, else None."""
    from cuenv.knowledge.specs import looks_like_spec

    path = Path(text)
    kind = None
    if not looks_like_spec(text) and path.is_file():
        from cuenv.recipes.projectfile import kind_of

        try:
            kind = kind_of(path)
        except UsageError:  # a wheel, a shared object: read for its kernels instead
            kind = None
    if kind not in ("environment-yml", "requirements"):
        if getattr(ctx.args, "cuda", None):
            raise UsageError("--cuda goes with a project file.", hint="A recipe, environment or spec says its CUDA.")
        return None
    from cuenv.recipes.projectfile import read_need

    need = read_need(path, cuda=getattr(ctx.args, "cuda", None), kind=kind)
    need.require_cuda()
    from cuenv.commands.suggest import closest_build

    return need, closest_build(need.stack, ctx)


def _check_project_file(ctx: Context, need: ProjectNeed, closest: Stack | None) -> Result[Text]:
    from cuenv.knowledge import versions
    from cuenv.knowledge.compat import check, describe_machine, verdict

    a = ctx.args
    if a.environment or a.platform or a.python:
        raise UsageError("--environment, --platform and --python go with a lockfile.",
                         hint="An environment.yml or requirements file names its own packages.")
    if a.gcc:
        versions.Dotted.parse(a.gcc, what="gcc version")
    machine, warnings = machine_from_args(ctx)
    findings = sorted([*check(need.stack, machine, gcc=a.gcc), *need.findings()],
                      key=lambda f: SEVERITIES.index(f.severity))
    ok = verdict(findings)
    from cuenv.commands.filejson import project_json

    data = project_json(a.target, ok, findings, need, closest)
    return text_result(data=data, text=render(a.target, findings, ok, describe_machine(machine), extra=need.describe(closest)),
                  exit_code=EXIT_OK if ok else EXIT_PROBLEMS, warnings=warnings)


def _check_lockfile(ctx: Context) -> Result[Text]:
    from cuenv.commands.suggest import candidates
    from cuenv.knowledge.compat import describe_machine
    from cuenv.lock.check import check_lockfile

    a = ctx.args
    machine, warnings = machine_from_args(ctx)
    done = check_lockfile(a.target, machine=machine, os_given=bool(getattr(a, "os", None)),
                          candidates=lambda framework: candidates(framework, ctx), environ=ctx.environ,
                          platform=a.platform, environment=a.environment, python=a.python, gcc=a.gcc)
    from cuenv.commands.filejson import lock_json

    data = lock_json(a.target, done)
    return text_result(data=data,
                  text=render(a.target, list(done.findings), done.ok, describe_machine(done.machine), extra=done.lines()),
                  exit_code=EXIT_OK if done.ok else EXIT_PROBLEMS, warnings=warnings)


def _kernels(ctx: Context, path: Path | None, machine: Machine) -> Assessment | None:
    """What the files at ``path`` carry; None for recipes and specs."""
    if path is None:
        return None
    from cuenv.binaries.assess import assess
    from cuenv.binaries.scan import scan

    report = scan(path, cache_dir=ctx.settings.cache_dir)
    if report.problems:  # the target itself is unreadable (not a zip): bad input, not a finding
        raise UsageError(report.problems[0] + ".", hint="Download or build it again, or give a shared object or a folder.")
    return assess(report, machine)


def render(target: str, findings: list[Finding], ok: bool, machine: str, kernels: Assessment | None = None,
           extra: list[str] | None = None) -> str:
    warned = any(f.severity == "warning" for f in findings)
    state = "does not run" if not ok else ("runs, with warnings" if warned else "runs")
    if ok and any(f.code == "kernels-not-checked" for f in findings):
        state = "kernels listed, not checked"
    if state_of(findings, ok) == "unknown":  # a GPU-less machine, or a build cuenv cannot confirm
        state = ("unknown: no NVIDIA driver here (describe the target machine with --driver and --gpu)" if not ok
                 else "unknown (a build cuenv's tables do not list; no error found for its CUDA)")
    lines = [f"{target}: {state}", f"  {machine}", *(extra or [])]
    if kernels is not None:
        lines += ["", *kernel_table(kernels)]
    for f in findings:
        lines += ["", f"{f.severity}: {f.code}", f"  {f.message}"]
        if f.fix:
            lines.append(f"  fix: {f.fix}")
    return "\n".join(lines)


def kernel_table(kernels: Assessment) -> list[str]:
    """Per library with GPU code: owner, SASS and PTX by compute capability, and how it runs per GPU."""
    from cuenv.cli.table import render as table

    rows = [lib for lib in kernels.libraries if lib.modules]
    cached = f", {kernels.cached} from cache" if kernels.cached else ""
    head = f"kernels: {len(rows)} of {kernels.scanned} shared objects carry GPU code ({kernels.scanned} read{cached})"
    if not rows:
        return [head]
    ccs = list(dict.fromkeys(r.cc for lib in rows for r in lib.runs))
    status = {"native": "native", "jit": "PTX JIT", "none": "none"}
    body = [[_short(lib.path), lib.owner or "", _ccs(lib.sass), _ccs(lib.ptx),
             *(next((status[r.status] for r in lib.runs if r.cc == cc), "-") for cc in ccs)] for lib in rows]
    return [head, *("  " + line for line in table(["FILE", "PACKAGE", "SASS", "PTX", *ccs], body).splitlines())]


def _short(path: str) -> str:
    return path.split("site-packages/", 1)[-1]


def _ccs(names: tuple[str, ...]) -> str:
    """sm_86 / compute_90a -> 8.6 / 9.0a, as TORCH_CUDA_ARCH_LIST writes them."""
    out = []
    for name in names:
        digits = name.split("_", 1)[1]
        arch = digits.rstrip("af")
        out.append(f"{arch[:-1]}.{arch[-1]}{digits[len(arch):]}")
    return " ".join(out)
