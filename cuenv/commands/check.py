"""`cuenv check TARGET`: will this build run on this (or a described) machine? Exit 0 yes, 1 no, 2 bad input.

TARGET is a recipe, an environment, a package spec, or a lockfile (cuenv.lock, conda-lock.yml,
pixi.lock, pylock.toml, uv.lock): for a lockfile, the stack its packages need, how that was read,
and the closest catalogue recipe (issue 15 §4).
"""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING, Callable

from cuenv.cli.machine_flags import add_machine_flags, machine_from_args
from cuenv.errors import EXIT_OK, EXIT_PROBLEMS, UsageError
from cuenv.knowledge.stack import Finding, Stack
from cuenv.result import Result

if TYPE_CHECKING:
    from cuenv.cli.main import Context


def configure(parser: argparse.ArgumentParser, name: str) -> None:
    parser.add_argument("target", metavar="TARGET",
                        help="what to check: a package spec such as torch==2.1.0+cu121, paddlepaddle-gpu==2.6.1.post118,"
                             " tensorflow==2.15.0, jax[cuda12]==0.4.30 or cuda==12.1; a recipe; an environment; or a "
                             "lockfile (cuenv.lock, conda-lock.yml, pixi.lock, pylock.toml, uv.lock)")
    add_machine_flags(parser)
    parser.add_argument("--gcc", metavar="VERSION", help="host gcc, checked against nvcc for stacks that compile CUDA")
    parser.add_argument("--index", metavar="cuXYZ", help="the index a spec was installed from (paddle 3.x: cu126)")
    lock = parser.add_argument_group("lockfiles")
    lock.add_argument("--environment", metavar="ENV", help="a pixi.lock's environment (default: default, as pixi)")
    lock.add_argument("--platform", metavar="PLATFORM", help="the lock's platform (default: this machine's)")
    lock.add_argument("--python", metavar="X.Y", help="pylock.toml/uv.lock: the Python to pick wheels for (default: this one)")


def _from_spec(text: str, ctx) -> Stack | None:
    from cuenv.knowledge.specs import looks_like_spec, parse_spec

    return parse_spec(text, getattr(ctx.args, "index", None)) if looks_like_spec(text) else None


def _from_environment(text: str, ctx) -> Stack | None:
    """An environment's recorded stack: what is installed, which may differ from its recipe's default."""
    from cuenv.envs.meta import stack_from_meta
    from cuenv.envs.store import NAME_RE, Store

    if not NAME_RE.fullmatch(text):
        return None
    store = Store.from_settings(ctx.settings)
    if not store.path(text).is_dir():
        return None
    return stack_from_meta(store.get(text).meta)


def _from_recipe(text: str, ctx) -> Stack | None:
    from cuenv.recipes.catalogue import load_catalogue

    catalogue = load_catalogue(ctx.settings)
    name = text.split("@", 1)[0]
    if name not in catalogue.names():
        return None
    recipe, version = catalogue.get(text)
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


def run(ctx: Context) -> Result:
    from cuenv.knowledge import versions
    from cuenv.knowledge.compat import check, describe_machine, verdict
    from cuenv.lock.io import is_lockfile

    if is_lockfile(ctx.args.target):
        return _check_lockfile(ctx)
    a = ctx.args
    if a.environment or a.platform or a.python:
        raise UsageError("--environment, --platform and --python go with a lockfile.",
                         hint="Give the lockfile as TARGET, e.g. `cuenv check pixi.lock --environment cuda`.")
    stack = resolve_target(ctx.args.target, ctx)
    if ctx.args.gcc:
        versions.Dotted.parse(ctx.args.gcc, what="gcc version")
    machine, warnings = machine_from_args(ctx)
    findings = check(stack, machine, gcc=ctx.args.gcc)
    ok = verdict(findings)
    data = {"target": ctx.args.target, "ok": ok, "findings": [f.to_json() for f in findings]}
    return Result(data=data, text=render(ctx.args.target, findings, ok, describe_machine(machine)),
                  exit_code=EXIT_OK if ok else EXIT_PROBLEMS, warnings=warnings)


def _check_lockfile(ctx: Context) -> Result:
    from cuenv.commands.suggest import candidates
    from cuenv.knowledge.compat import describe_machine
    from cuenv.lock.check import check_lockfile

    a = ctx.args
    machine, warnings = machine_from_args(ctx)
    done = check_lockfile(a.target, machine=machine, os_given=bool(getattr(a, "os", None)),
                          candidates=lambda framework: candidates(framework, ctx), environ=ctx.environ,
                          platform=a.platform, environment=a.environment, python=a.python, gcc=a.gcc)
    return Result(data={"target": a.target, **done.to_json()},
                  text=render(a.target, list(done.findings), done.ok, describe_machine(done.machine), extra=done.lines()),
                  exit_code=EXIT_OK if done.ok else EXIT_PROBLEMS, warnings=warnings)


def render(target: str, findings: list[Finding], ok: bool, machine: str, extra: list[str] | None = None) -> str:
    warned = any(f.severity == "warning" for f in findings)
    state = "does not run" if not ok else ("runs, with warnings" if warned else "runs")
    lines = [f"{target}: {state}", f"  {machine}", *(extra or [])]
    for f in findings:
        lines += ["", f"{f.severity}: {f.code}", f"  {f.message}"]
        if f.fix:
            lines.append(f"  fix: {f.fix}")
    return "\n".join(lines)
