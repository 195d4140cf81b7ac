"""`cuenv suggest [FRAMEWORK]`: the best build for this (or a described) machine, with the reasoning."""

from __future__ import annotations

from cuenv.cli.machine_flags import add_machine_flags, machine_from_args
from cuenv.errors import EXIT_OK, EXIT_PROBLEMS, UsageError
from cuenv.knowledge import packages
from cuenv.recipes.candidates import candidates, closest_build
from cuenv.result import Result

TYPE_CHECKING = False  # no `typing` or argparse at run time: `suggest` starts like a shell tool (issue 29)
if TYPE_CHECKING:
    import argparse

    from cuenv.cli.main import Context
    from cuenv.commands.filejson import LockfileCheck, ProjectCheck
    from cuenv.knowledge.stack import Stack
    from cuenv.lock.check import LockCheck
    from cuenv.machine.model import Machine
    from cuenv.recipes.projectfile import ProjectNeed
    from cuenv.result import JSONObject

def configure(parser: argparse.ArgumentParser, name: str) -> None:
    parser.add_argument("framework", nargs="?", default=None, metavar="FRAMEWORK",
                        help="torch (default), paddle, tensorflow, jax, or cuda (a bare toolkit)")
    parser.add_argument("--for", dest="for_file", metavar="FILE",
                        help="a project's environment.yml, requirements.txt or lockfile: its framework, and whether its "
                        "own stack runs")
    parser.add_argument("--cuda", metavar="X.Y", help="with --for: the CUDA the file's packages use, when its pins do not say")
    add_machine_flags(parser)


def _for_file(ctx: Context) -> tuple[ProjectNeed, Stack | None, str]:
    """(need, closest recipe, framework) for --for FILE."""
    from pathlib import Path

    from cuenv.recipes.projectfile import framework_family, read_need

    if ctx.args.framework:
        raise UsageError("Give a framework or --for and a file, not both.", hint="--for takes the framework from the file.")
    need = read_need(Path(ctx.args.for_file), cuda=ctx.args.cuda, environ=ctx.environ, settings=ctx.settings)
    need.require_cuda()
    closest = closest_build(need.stack, ctx.settings)
    return need, closest, framework_family(need.stack.framework) or "cuda"


def _for_lockfile(ctx: Context, machine: Machine) -> tuple[LockCheck, str]:
    """(cuenv.lock.check.LockCheck, framework) for --for LOCKFILE: its stack as `cuenv check LOCKFILE` reads it."""
    from cuenv.lock.check import check_lockfile
    from cuenv.recipes.projectfile import framework_family

    if ctx.args.framework:
        raise UsageError("Give a framework or --for and a file, not both.", hint="--for takes the framework from the file.")
    if ctx.args.cuda:
        raise UsageError("--cuda does not apply to a lockfile: its packages say their CUDA.", hint="Leave out --cuda.")
    done = check_lockfile(ctx.args.for_file, machine=machine, os_given=bool(getattr(ctx.args, "os", None)),
                          candidates=lambda framework: candidates(framework, ctx.settings), environ=ctx.environ)
    return done, framework_family(done.stack.framework) or "cuda"


def run(ctx: Context) -> Result[Suggestion]:
    from cuenv.commands.filejson import LockfileCheck, ProjectCheck
    from cuenv.knowledge.compat import check, describe_machine, suggest, verdict
    from cuenv.lock.io import is_lockfile

    found = None
    locked = None
    framework: str | None
    if ctx.args.for_file and is_lockfile(ctx.args.for_file):
        machine, warnings = machine_from_args(ctx)
        locked, framework = _for_lockfile(ctx, machine)
    elif ctx.args.for_file:
        found = _for_file(ctx)
        framework = found[2]
    else:
        if ctx.args.cuda:
            raise UsageError("--cuda goes with --for and a file.", hint="Without a file, cuenv suggests from every build.")
        framework = packages.family(ctx.args.framework or "torch")
    if framework is None:
        raise UsageError(f"cuenv has no builds for {ctx.args.framework!r}.",
                         hint=f"Choose one of: {', '.join([*packages.FRAMEWORKS, 'cuda'])}.")
    if locked is None:
        machine, warnings = machine_from_args(ctx)
    best, reasoning = suggest(candidates(framework, ctx.settings, warnings), machine)
    if best is None and machine.driver is None:
        # A GPU-less machine (login node, CI runner) rules nothing out by itself: say what it can't tell (issue 30 §4).
        reasoning = [*reasoning, "name the GPU machine to suggest for, e.g. "
                     f"`cuenv suggest {ctx.args.framework or 'torch'} --driver 550.54.14 --gpu 'NVIDIA A100-SXM4-80GB'`, "
                     "or set CUENV_TARGET_DRIVER and CUENV_TARGET_GPUS"]
    file: ProjectCheck | LockfileCheck | None = None
    if found:
        need, closest, _ = found
        findings = check(need.stack, machine)
        file = ProjectCheck(need.file, findings, verdict(findings), describe_machine(machine), need, closest)
    if locked is not None:
        file = LockfileCheck(ctx.args.for_file, locked, describe_machine(locked.machine))
    done = Suggestion(framework, best, reasoning, no_driver=machine.driver is None, file=file)
    return Result(done, render, exit_code=EXIT_OK if best else EXIT_PROBLEMS, warnings=warnings)


class Suggestion:
    """`cuenv suggest`: ``{"framework", "best": {...} | null, "reasoning": [...]}``; with --for FILE also
    ``file`` (the shape of `check FILE --json`), ``file_runs`` and ``closest_recipe``."""

    __slots__ = ("best", "file", "framework", "no_driver", "reasoning")

    def __init__(self, framework: str, best: Stack | None, reasoning: list[str], *, no_driver: bool,
                 file: ProjectCheck | LockfileCheck | None = None) -> None:
        self.framework, self.best, self.reasoning, self.no_driver, self.file = framework, best, reasoning, no_driver, file

    def closest(self) -> Stack | None:
        from cuenv.commands.filejson import LockfileCheck

        if isinstance(self.file, LockfileCheck):
            return self.file.lock.closest
        return self.file.closest if self.file is not None else None

    def to_json(self) -> JSONObject:
        best = self.best
        data: JSONObject = {
            "framework": self.framework,
            "best": None if best is None else {"target": best.label, "cuda": best.cuda, "cudnn": best.cudnn,
                                               "framework_version": best.framework_version, "variant": best.variant},
            "reasoning": list(self.reasoning),
        }
        if self.file is not None:
            closest = self.closest()
            data["file"] = self.file.to_json()
            data["file_runs"] = self.file.ok
            data["closest_recipe"] = closest.label if closest else None
        return data


def render(done: Suggestion) -> str:
    from cuenv.commands.filejson import LockfileCheck

    framework = done.framework
    head = f"best {framework} build: {done.best.label}" if done.best else f"no {framework} build runs on this machine"
    if done.best is None and done.no_driver:
        head = f"no NVIDIA driver here, so no {framework} build can be confirmed on this machine"
    text = "\n".join([head] + [f"  {line}" for line in done.reasoning])
    file = done.file
    if file is None:
        return text
    first = next((f for f in file.findings if f.severity == "error"), None)
    state = "its own stack runs here" if file.ok else f"its own stack does not run here: {first.message if first else ''}"
    indent = "  " if isinstance(file, LockfileCheck) else ""  # a lockfile's lines are said under it
    return "\n".join([f"{file.target}: {state}", *[indent + line for line in file.lines()], text])
