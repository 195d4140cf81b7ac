"""`cuenv suggest [FRAMEWORK]`: the best build for this (or a described) machine, with the reasoning."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING

from cuenv.cli.machine_flags import add_machine_flags, machine_from_args
from cuenv.errors import EXIT_OK, EXIT_PROBLEMS, UsageError
from cuenv.result import Result

if TYPE_CHECKING:
    from cuenv.cli.main import Context

_ALIASES = {"torch": "torch", "pytorch": "torch", "paddle": "paddle", "paddlepaddle": "paddle",
            "paddlepaddle-gpu": "paddle", "tensorflow": "tensorflow", "tf": "tensorflow", "jax": "jax",
            "cuda": "cuda"}


def configure(parser: argparse.ArgumentParser, name: str) -> None:
    parser.add_argument("framework", nargs="?", default="torch", metavar="FRAMEWORK",
                        help="torch (default), paddle, tensorflow, jax, or cuda (a bare toolkit)")
    add_machine_flags(parser)


_RECIPE_FRAMEWORK = {"torch": "torch", "paddle": "paddlepaddle", "tensorflow": "tensorflow", "jax": "jax"}


def candidates(framework: str, ctx, warnings: list[str] | None = None) -> list:
    """Candidate stacks for ``framework``: every version of every recipe for it (labelled NAME@VERSION,
    so the answer can be passed to `cuenv create`); the knowledge base's builds when no recipe has one."""
    from dataclasses import replace

    from cuenv.knowledge import builds
    from cuenv.recipes.catalogue import RecipeError, load_catalogue

    wanted = _RECIPE_FRAMEWORK.get(framework)
    found = []
    broken: list[RecipeError] = []  # one broken user recipe must not hide the others
    recipes = load_catalogue(ctx.settings).all(broken)
    if warnings is not None:
        warnings += [f"{exc.message} {exc.hint}" for exc in broken]
    for recipe in recipes:
        fw = recipe.framework.name if recipe.framework else None
        if (fw is None and framework == "cuda") or (fw is not None and wanted and fw.startswith(wanted)):
            default = recipe.framework.version if recipe.framework else None
            versions = recipe.framework.versions if recipe.framework else (None,)
            for v in versions:
                label = recipe.name if v is None or v == default else f"{recipe.name}@{v}"
                found.append(replace(recipe.stack(v), label=label))
    return found or builds.candidates(framework)


def run(ctx: Context) -> Result:
    from cuenv.knowledge.compat import suggest

    framework = _ALIASES.get(ctx.args.framework.lower())
    if framework is None:
        raise UsageError(f"cuenv has no builds for {ctx.args.framework!r}.",
                         hint="Choose one of: torch, paddle, tensorflow, jax, cuda.")
    machine, warnings = machine_from_args(ctx)
    best, reasoning = suggest(candidates(framework, ctx, warnings), machine)
    data = {
        "framework": framework,
        "best": None if best is None else {"target": best.label, "cuda": best.cuda, "cudnn": best.cudnn,
                                           "framework_version": best.framework_version, "variant": best.variant},
        "reasoning": reasoning,
    }
    head = f"best {framework} build: {best.label}" if best else f"no {framework} build runs on this machine"
    text = "\n".join([head] + [f"  {line}" for line in reasoning])
    return Result(data=data, text=text, exit_code=EXIT_OK if best else EXIT_PROBLEMS, warnings=warnings)
