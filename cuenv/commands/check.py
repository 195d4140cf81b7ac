"""`cuenv check TARGET`: will this build run on this (or a described) machine? Exit 0 yes, 1 no, 2 bad input.

An environment, a wheel, a shared object or a folder is also judged by the kernels its files carry
(issue 20): the SASS and PTX in each library's fat binaries, against the machine's GPUs.

A lockfile (cuenv.lock, conda-lock.yml, pixi.lock, pylock.toml, uv.lock) is judged by the stack its
packages need, with how that was read and the closest catalogue recipe (issue 15 §4); so is a project's
environment.yml or requirements file, by the stack its pins ask for (issue 15 §3).
"""

from __future__ import annotations

from pathlib import Path

from cuenv.cli.machine_flags import add_machine_flags, machine_from_args
from cuenv.errors import EXIT_OK, EXIT_PROBLEMS, UsageError
from cuenv.knowledge.compat import state_of
from cuenv.knowledge.findings import SEVERITIES, Finding
from cuenv.result import Result

TYPE_CHECKING = False  # no `typing` or argparse at run time: `check` starts like a shell tool (issue 29)
if TYPE_CHECKING:
    import argparse

    from cuenv.binaries.assess import Assessment
    from cuenv.cli.main import Context
    from cuenv.commands.check_all import Survey
    from cuenv.commands.filejson import LockfileCheck, ProjectCheck
    from cuenv.knowledge.stack import Stack
    from cuenv.machine.model import Machine
    from cuenv.recipes.projectfile import ProjectNeed
    from cuenv.result import JSON, JSONObject


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


def run(ctx: Context) -> Result[TargetCheck] | Result[ProjectCheck] | Result[LockfileCheck] | Result[Survey]:
    from cuenv.knowledge import versions
    from cuenv.knowledge.compat import check, describe_machine
    from cuenv.lock.io import is_lockfile

    if ctx.args.all or not ctx.args.target:
        if ctx.args.all and ctx.args.target:
            raise UsageError("--all checks every environment; it takes no TARGET.",
                             hint=f"`cuenv check {ctx.args.target}` checks that one, `cuenv check --all` all of them.")
        if not ctx.args.all:
            raise UsageError("Name what to check, or --all for every environment.",
                             hint="`cuenv check torch-cu121` checks a recipe, `cuenv check --all` every environment; a file's path, the file.")
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
                         hint=f"They choose what of a lockfile to read; {a.target} is not one.")
    from cuenv.envs.target import resolve

    target = resolve(a.target, ctx.settings, index=a.index)
    if a.gcc:
        versions.Dotted.parse(a.gcc, what="gcc version")
    machine, warnings = machine_from_args(ctx)
    kernels: Assessment | None
    if target.record is not None:  # one judgement for `check NAME` and `check --all` (cuenv.envs.kernels)
        from cuenv.envs.kernels import judge

        findings, kernels = judge(target.record, machine, cache_dir=ctx.settings.cache_dir, gcc=a.gcc)
    else:
        kernels = _kernels(ctx, target.path, machine)
        findings = check(target.stack, machine, gcc=a.gcc) if target.stack is not None else []
        if kernels is not None:
            findings = sorted([*findings, *kernels.findings], key=lambda f: SEVERITIES.index(f.severity))
    done = TargetCheck(a.target, findings, describe_machine(machine), kernels=kernels, note=target.note,
                       kernels_only=target.record is None and target.path is not None)
    return Result(done, _target_text, exit_code=EXIT_OK if done.ok else EXIT_PROBLEMS, warnings=warnings)


class TargetCheck:
    """`cuenv check TARGET` of a recipe, an environment, a spec or a path: ``{"target", "ok", "verdict",
    "findings"}``, plus ``known: false`` (a build cuenv's tables lack), ``kernels`` (what files carry) and
    ``note`` (a recipe version derived on the fly) when they apply."""

    __slots__ = ("findings", "kernels", "kernels_only", "machine", "note", "ok", "target")

    def __init__(self, target: str, findings: list[Finding], machine: str, *, kernels: Assessment | None = None,
                 note: str | None = None, kernels_only: bool = False) -> None:
        from cuenv.knowledge.compat import verdict

        self.target, self.findings, self.machine = target, findings, machine  # machine: as describe_machine says it
        self.kernels, self.note = kernels, note
        self.kernels_only = kernels_only  # a file or folder: judged by the kernels it carries alone
        self.ok = verdict(findings)

    def to_json(self) -> JSONObject:
        data: JSONObject = {"target": self.target, "ok": self.ok,
                            "verdict": state_of(self.findings, self.ok, kernels_only=self.kernels_only),
                            "findings": [f.to_json() for f in self.findings]}
        if self.ok and any(f.code == "build-unknown" for f in self.findings):
            data["known"] = False  # no error found, but the build itself is not in cuenv's tables: not a pass
        if self.kernels is not None:  # a path's check (it reads files: `typing` is no cost there)
            from typing import cast

            data["kernels"] = cast("JSON", self.kernels.to_json())
        if self.note:
            data["note"] = self.note
        return data


def _target_text(done: TargetCheck) -> str:
    text = render(done.target, done.findings, done.ok, done.machine, done.kernels, kernels_only=done.kernels_only)
    return text + f"\n\nnote: {done.note}" if done.note else text


def _file_text(done: ProjectCheck | LockfileCheck) -> str:
    return render(done.target, done.findings, done.ok, done.machine, extra=done.lines())


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

    need = read_need(path, cuda=getattr(ctx.args, "cuda", None), kind=kind, environ=ctx.environ, settings=ctx.settings)
    need.require_cuda()
    from cuenv.recipes.candidates import closest_build

    return need, closest_build(need.stack, ctx.settings)


def _check_project_file(ctx: Context, need: ProjectNeed, closest: Stack | None) -> Result[ProjectCheck]:
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
    from cuenv.commands.filejson import ProjectCheck

    done = ProjectCheck(a.target, findings, verdict(findings), describe_machine(machine), need, closest)
    return Result(done, _file_text, exit_code=EXIT_OK if done.ok else EXIT_PROBLEMS, warnings=warnings)


def _check_lockfile(ctx: Context) -> Result[LockfileCheck]:
    from cuenv.knowledge.compat import describe_machine
    from cuenv.lock.check import check_lockfile
    from cuenv.recipes.candidates import candidates

    a = ctx.args
    machine, warnings = machine_from_args(ctx)
    done = check_lockfile(a.target, machine=machine, os_given=bool(getattr(a, "os", None)),
                          candidates=lambda framework: candidates(framework, ctx.settings), environ=ctx.environ,
                          platform=a.platform, environment=a.environment, python=a.python, gcc=a.gcc)
    from cuenv.commands.filejson import LockfileCheck

    found = LockfileCheck(a.target, done, describe_machine(done.machine))
    return Result(found, _file_text, exit_code=EXIT_OK if done.ok else EXIT_PROBLEMS, warnings=warnings)


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
           extra: list[str] | None = None, *, kernels_only: bool = False) -> str:
    warned = any(f.severity == "warning" for f in findings)
    state = "does not run" if not ok else ("runs, with warnings" if warned else "runs")
    if ok and any(f.code == "kernels-not-checked" for f in findings):
        state = "kernels listed, not checked"
    if state_of(findings, ok, kernels_only=kernels_only) == "unknown":  # no driver here, an unconfirmed build, no kernels
        codes = {f.code for f in findings}
        state = ("unknown: no NVIDIA driver here (describe the target machine with --driver and --gpu)" if not ok
                 else "unknown: kernels listed, not checked (no GPU to hold them against)"
                 if kernels_only and "kernels-not-checked" in codes
                 else "unknown: no CUDA kernels in it to judge by" if kernels_only and "kernels-none-found" in codes
                 else "unknown (a build or package set cuenv cannot confirm; no error found for its CUDA)")
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
