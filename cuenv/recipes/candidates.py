"""The builds a framework has: every version of every catalogue recipe for it, else the knowledge base's
(issue 24 §4: this was `cuenv suggest`'s, imported by `check` and the lockfile checks)."""

from __future__ import annotations

TYPE_CHECKING = False  # no `typing` at run time: `suggest` reads every recipe at start-up (issue 29)
if TYPE_CHECKING:
    from cuenv.config import Settings
    from cuenv.knowledge.stack import Stack


def candidates(framework: str, settings: Settings, warnings: list[str] | None = None) -> list[Stack]:
    """Candidate stacks for ``framework``: every version of every recipe for it (labelled NAME@VERSION,
    so the answer can be passed to `cuenv create`); the knowledge base's builds when no recipe has one.
    A broken user recipe is left out, and said in ``warnings`` when given."""

    from cuenv.knowledge import builds
    from cuenv.knowledge.packages import family
    from cuenv.recipes.catalogue import RecipeError, load_catalogue

    found = []
    broken: list[RecipeError] = []  # one broken user recipe must not hide the others
    recipes = load_catalogue(settings).all(broken)
    if warnings is not None:
        warnings += [f"{exc.message} {exc.hint}" for exc in broken]
    for recipe in recipes:
        fw = recipe.framework.name if recipe.framework else None
        if (fw is None and framework == "cuda") or (fw is not None and family(fw) == framework):
            default = recipe.framework.version if recipe.framework else None
            versions = recipe.framework.versions if recipe.framework else (None,)
            for v in versions:
                label = recipe.name if v is None or v == default else f"{recipe.name}@{v}"
                found.append(recipe.stack(v).replace(label=label))
    return found or builds.candidates(framework)


def closest_build(stack: Stack, settings: Settings) -> Stack | None:
    """The catalogue build nearest to ``stack`` (labelled as `cuenv create` takes it): lockfiles' rule
    (cuenv.lock.check.closest), for a project file's stack."""
    from cuenv.lock.check import closest
    from cuenv.recipes.projectfile import framework_family

    if stack.cuda is None:
        return None
    return closest(stack, [c for c in candidates(framework_family(stack.framework) or "cuda", settings) if c.cuda])
