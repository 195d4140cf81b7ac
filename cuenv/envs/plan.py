"""What `cuenv create` decided before anything is downloaded (:class:`CreatePlan`), and what it built
(:class:`Built`): the plan is never changed by the build; cuenv.envs.create.execute returns a Built."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Mapping

from cuenv.envs.meta import EnvMeta, RecipeRef, SmokeTest
from cuenv.knowledge.findings import Finding
from cuenv.knowledge.stack import Stack

if TYPE_CHECKING:
    from cuenv.engines import Request, Solution
    from cuenv.envs.create import RouteInfo
    from cuenv.recipes.catalogue import Recipe


@dataclass(frozen=True)
class CreatePlan:
    name: str
    recipe: Recipe | None  # None for a lockfile: its recipe is only named (recipe_ref)
    version: str | None
    engine: str
    engine_reason: str
    stack: Stack
    findings: tuple[Finding, ...]
    recipe_ref: RecipeRef  # recorded as meta.recipe
    requested: tuple[str, ...] = ()  # the specs asked for, recorded as meta.requested
    env_vars: Mapping[str, str] = field(default_factory=dict)
    smoke_test: SmokeTest | None = None
    request: Request | None = None  # what the engine solves; None for a lockfile (``locked`` replaces the solve)
    route: RouteInfo | None = None  # a framework recipe's index route (issue 19)
    compiler_hint: str | None = None  # how to get nvcc for it, when the recipe ships none (issue 17)
    locked: Solution | None = None  # a Solution from a lockfile: replaces the solve step
    lock_hash: str | None = None  # that lockfile's content hash, recorded as meta.lock_hash
    # False when the findings are about another machine (--target-*): then they are not cached as
    # this machine's verdict, and the first `list`/`use` here computes its own.
    checked_here: bool = True


@dataclass(frozen=True)
class Built:
    """What execute made of a plan: the solution, and (unless a dry run) where and the meta it recorded."""

    plan: CreatePlan
    solution: Solution
    prefix: Path | None = None  # None for a dry run
    meta: EnvMeta | None = None  # None for a dry run
