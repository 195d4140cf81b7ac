"""What `cuenv create` decided before anything is downloaded (:class:`CreatePlan`), and what it built
(:class:`Built`): the plan is never changed by the build; cuenv.envs.create.execute returns a Built."""

from __future__ import annotations

from pathlib import Path

from cuenv.envs.meta import Change, EnvMeta, RecipeRef, SmokeTest
from cuenv.knowledge.findings import Finding
from cuenv.knowledge.stack import Stack
from cuenv.plain import Plain

TYPE_CHECKING = False  # plain classes, no `typing` at run time: every create builds one (issue 29)
if TYPE_CHECKING:
    from collections.abc import Mapping

    from cuenv.engines import Request, Solution
    from cuenv.envs.create import RouteInfo
    from cuenv.recipes.catalogue import Recipe


class CreatePlan(Plain):
    """Read-only by convention; ``replace`` makes a changed copy."""

    __slots__ = ("name", "recipe", "version", "engine", "engine_reason", "stack", "findings", "recipe_ref", "requested",
                 "env_vars", "smoke_test", "request", "route", "compiler_hint", "locked", "lock_hash", "checked_here",
                 "changes")

    def __init__(self, *, name: str, recipe: Recipe | None, version: str | None, engine: str, engine_reason: str,
                 stack: Stack, findings: tuple[Finding, ...], recipe_ref: RecipeRef, requested: tuple[str, ...] = (),
                 env_vars: Mapping[str, str] | None = None, smoke_test: SmokeTest | None = None,
                 request: Request | None = None, route: RouteInfo | None = None, compiler_hint: str | None = None,
                 locked: Solution | None = None, lock_hash: str | None = None, checked_here: bool = True,
                 changes: tuple[Change, ...] = ()) -> None:
        self.name = name
        self.recipe = recipe  # None for a lockfile: its recipe is only named (recipe_ref)
        self.version = version
        self.engine = engine
        self.engine_reason = engine_reason
        self.stack = stack
        self.findings = findings
        self.recipe_ref = recipe_ref  # recorded as meta.recipe
        self.requested = requested  # the specs asked for, recorded as meta.requested
        self.env_vars: Mapping[str, str] = {} if env_vars is None else env_vars
        self.smoke_test = smoke_test
        self.request = request  # what the engine solves; None for a lockfile (``locked`` replaces the solve)
        self.route = route  # a framework recipe's index route (issue 19)
        self.compiler_hint = compiler_hint  # how to get nvcc for it, when the recipe ships none (issue 17)
        self.locked = locked  # a Solution from a lockfile: replaces the solve step
        self.lock_hash = lock_hash  # that lockfile's content hash, recorded as meta.lock_hash
        # False when the findings are about another machine (--target-*): then they are not cached as
        # this machine's verdict, and the first `list`/`use` here computes its own.
        self.checked_here = checked_here
        self.changes = changes  # recorded as meta.changes (a lockfile's: what it holds for its other platforms only)

    __hash__ = None  # type: ignore[assignment]  # holds mappings


class Built(Plain):
    """What execute made of a plan: the solution, and (unless a dry run) where and the meta it recorded."""

    __slots__ = ("plan", "solution", "prefix", "meta")

    def __init__(self, plan: CreatePlan, solution: Solution, prefix: Path | None = None,
                 meta: EnvMeta | None = None) -> None:
        self.plan, self.solution = plan, solution
        self.prefix = prefix  # None for a dry run
        self.meta = meta  # None for a dry run

    __hash__ = None  # type: ignore[assignment]  # holds mappings
