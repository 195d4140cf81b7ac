"""`cuenv recipes [list | show NAME[@VERSION] | lint FILE...]`: the catalogue, one recipe in full, the linter."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import TYPE_CHECKING, cast

from cuenv.knowledge.findings import REASON_WORD
from cuenv.result import Result

if TYPE_CHECKING:
    from cuenv.cli.main import Context
    from cuenv.machine.model import Machine
    from cuenv.recipes.catalogue import Recipe
    from cuenv.recipes.lint import Problem
    from cuenv.result import JSON, JSONObject

# finding code -> the one word shown in the machine column


def configure(parser: argparse.ArgumentParser, name: str) -> None:
    from cuenv.cli.machine_flags import add_machine_flags
    from cuenv.cli.parser import common_options

    add_machine_flags(parser)
    sub = parser.add_subparsers(dest="action", metavar="ACTION")
    listing = sub.add_parser("list", parents=[common_options()], help="the catalogue with a mark for this machine (default)",
                             description="The catalogue with a mark for this machine (or the one the flags describe).")
    add_machine_flags(listing)
    show = sub.add_parser("show", parents=[common_options()], help="everything about one recipe",
                          description="Everything about one recipe, including what each engine would install.")
    show.add_argument("ref", metavar="NAME[@VERSION]")
    add_machine_flags(show)
    lint = sub.add_parser("lint", parents=[common_options()], help="report every problem in recipe files",
                          description="Report every problem in recipe files, with key and line. Exit 1 when any.")
    lint.add_argument("files", nargs="+", metavar="FILE", type=Path)


def run(ctx: Context) -> Result[RecipeList] | Result[RecipeShow] | Result[Lint]:
    action = getattr(ctx.args, "action", None) or "list"
    if action == "lint":
        return _lint(ctx)
    return _show(ctx) if action == "show" else _list(ctx)


def _catalogue(ctx: Context):
    from cuenv.recipes.catalogue import load_catalogue

    return load_catalogue(ctx.settings)


def _detect_machine(ctx: Context) -> Machine:
    from cuenv.cli.machine_flags import machine_from_args

    return machine_from_args(ctx)[0]


def _min_driver(recipe) -> str:
    """Oldest driver that runs the recipe's CUDA (its major family's floor, minor-version compatibility)."""
    from cuenv.knowledge.matrix import family_floor
    from cuenv.knowledge.versions import cuda

    floor = family_floor(cuda(recipe.cuda).major) if recipe.cuda else None
    return str(floor) if floor else "-"


def _mark(recipe, machine) -> tuple[str, str | None]:
    """(mark, one-word reason): mark is runs | warning | no."""
    from cuenv.knowledge.compat import check

    findings = check(recipe.stack(), machine)
    for severity, mark in (("error", "no"), ("warning", "warning")):
        hit = next((f for f in findings if f.severity == severity), None)
        if hit is not None:
            return mark, REASON_WORD.get(hit.code, hit.code)
    return "runs", None


def _cc_range(stack) -> str:
    from cuenv.knowledge.versions import cc

    sass = sorted(stack.sass, key=cc)
    text = f"{sass[0]}-{sass[-1]}" if sass else ""
    if stack.ptx:
        newest = max(stack.ptx, key=cc)
        text += f"{' ' if text else ''}+PTX {newest}"
    return text


# ---------------------------------------------------------------------------------------------

class RecipeRow:
    """One catalogue recipe in `cuenv recipes` (and `--json`'s ``recipes``), marked for the machine."""

    __slots__ = ("cc", "cuda", "cudnn", "engines", "framework", "machine", "min_driver", "name", "origin", "reason",
                 "shadows_builtin", "summary", "versions")

    def __init__(self, name: str, recipe: Recipe, machine: Machine | None) -> None:
        from cuenv.recipes.catalogue import USER_PREFIX

        stack = recipe.stack()
        self.name = name
        self.shadows_builtin = name.startswith(USER_PREFIX)
        self.framework = f"{recipe.framework.name} {recipe.framework.version}" if recipe.framework else None
        self.versions = list(recipe.versions)
        self.cuda, self.cudnn = recipe.cuda, stack.cudnn
        self.min_driver = _min_driver(recipe)
        self.cc = _cc_range(stack)
        self.engines = list(recipe.engines())
        self.machine, self.reason = _mark(recipe, machine)  # runs | warning | no, and its one-word reason
        self.origin, self.summary = recipe.origin, recipe.summary

    def to_json(self) -> JSONObject:
        return {"name": self.name, "shadows_builtin": self.shadows_builtin, "framework": self.framework,
                "versions": list(self.versions), "cuda": self.cuda, "cudnn": self.cudnn, "min_driver": self.min_driver,
                "cc": self.cc, "engines": list(self.engines), "machine": self.machine, "reason": self.reason,
                "origin": self.origin, "summary": self.summary}


class RecipeList:
    """`cuenv recipes [list]`: ``{"recipes": [...]}``."""

    __slots__ = ("rows",)

    def __init__(self, rows: list[RecipeRow]) -> None:
        self.rows = rows

    def to_json(self) -> JSONObject:
        return {"recipes": [r.to_json() for r in self.rows]}


def _list(ctx: Context) -> Result[RecipeList]:
    from cuenv.recipes.catalogue import USER_PREFIX, RecipeError

    catalogue = _catalogue(ctx)
    recipes, warnings = [], []
    for name in catalogue.names():
        try:
            recipes.append((name, catalogue.find(name)))
        except RecipeError as exc:  # one broken user recipe must not hide the catalogue
            warnings.append(f"{exc.message} {exc.hint}")
        if name.startswith(USER_PREFIX):  # a user recipe with a built-in's name: listed as user:NAME, and said
            warnings.append(catalogue.shadow_warning(name[len(USER_PREFIX):]) or "")
    machine = _detect_machine(ctx) if recipes else None
    return Result(RecipeList([RecipeRow(ref, recipe, machine) for ref, recipe in recipes]), _list_text,
                  warnings=[w for w in warnings if w])


def _list_text(found: RecipeList) -> str:
    from cuenv.recipes.catalogue import USER_PREFIX

    rows = found.rows
    table = _table(
        ["NAME", "FRAMEWORK", "CUDA", "CUDNN", "MIN DRIVER", "COMPUTE CAP.", "THIS MACHINE"],
        [[r.name + ("*" if r.origin == "user" else ""), r.framework or "-", r.cuda, r.cudnn or "-",
          r.min_driver, r.cc, r.machine + (f" ({r.reason})" if r.reason else "")] for r in rows],
    )
    foot = "\n* user recipe" if any(r.origin == "user" for r in rows) else ""
    shadow = next((r.name for r in rows if r.shadows_builtin), None)
    if shadow is not None:
        foot += f"; {shadow}: yours, with a built-in's name ({shadow[len(USER_PREFIX):]} is the built-in)"
    many = next((r for r in rows if r.framework and len(r.versions) > 1), None)
    if many is not None:
        default = (many.framework or "").rsplit(" ", 1)[-1]  # "torch 2.5.1": the version a bare name installs
        other = next(v for v in many.versions if v != default)
        foot += (f"\n{many.name}@{other} picks another framework version; `cuenv recipes show {many.name}` "
                 "lists them.")
    return table + foot


class RecipeShow:
    """`cuenv recipes show NAME[@VERSION]`: the recipe in full, its stack at that version, and what each engine
    would install."""

    __slots__ = ("recipe", "shadow_warning", "shadows", "version")

    def __init__(self, recipe: Recipe, version: str | None, shadows: list[Path], shadow_warning: str | None) -> None:
        self.recipe, self.version, self.shadows, self.shadow_warning = recipe, version, shadows, shadow_warning

    def to_json(self) -> JSONObject:
        recipe, version = self.recipe, self.version
        stack = recipe.stack(version)
        return {
            "name": recipe.name,
            "label": stack.label,
            "file": str(recipe.path) if recipe.path else None,
            "origin": recipe.origin,
            "shadows": [str(p) for p in self.shadows],
            "shadow_warning": self.shadow_warning,
            "content_hash": recipe.content_hash(),
            "version": version,
            "stack": {"cuda": stack.cuda, "cudnn": stack.cudnn, "sass": list(stack.sass), "ptx": list(stack.ptx),
                      "has_nvcc": stack.has_nvcc, "os": list(stack.os), "framework": stack.framework,
                      "framework_version": stack.framework_version, "variant": stack.variant},
            "python": cast("JSON", recipe.python_for(version).to_dict()),
            "min_driver": _min_driver(recipe),
            "install": recipe.install_plan(version),
            "recipe": cast("JSON", recipe.to_dict()),
        }


def _show(ctx: Context) -> Result[RecipeShow]:
    catalogue = _catalogue(ctx)
    recipe, version = catalogue.get(ctx.args.ref)
    shadow = catalogue.shadow_warning(ctx.args.ref)
    found = RecipeShow(recipe, version, catalogue.shadowed(ctx.args.ref.partition("@")[0]), shadow)
    return Result(found, _show_text, warnings=[shadow] if shadow else [])


def _show_text(found: RecipeShow) -> str:
    recipe, version = found.recipe, found.version
    stack = recipe.stack(version)
    plan = recipe.install_plan(version)
    python = recipe.python_for(version)
    lines = [f"{stack.label}: {recipe.summary}",
             f"  file         {recipe.path if recipe.path else None} ({recipe.origin})"]
    lines += [f"  overrides    {p}" for p in found.shadows]
    if recipe.framework:
        others = ", ".join(v + (" (default)" if v == recipe.framework.version else "") for v in recipe.versions)
        lines.append(f"  framework    {recipe.framework.name} {version}   versions: {others}")
    lines += [
        f"  CUDA         {stack.cuda}   cuDNN {stack.cudnn or '-'}   minimum driver {_min_driver(recipe)}",
        f"  SASS         {' '.join(stack.sass) or '-'}",
        f"  PTX          {' '.join(stack.ptx) or '-'}",
        f"  python       {python.default}" + (f" ({python.supported})" if python.supported else ""),
        f"  platforms    {' '.join(recipe.platforms_for(version))}",
    ]
    for key, value in recipe.env:
        lines.append(f"  env          {key}={value}")
    for engine, section in plan.items():
        lines.append(f"  {engine}" + (" (ships nvcc)" if section["nvcc"] else ""))
        if engine == "conda":
            lines.append(f"    channels   {' '.join(section['channels'])}")
            lines += [f"    spec       {s}" for s in section["specs"]]
        else:
            lines += [f"    index      {u}" for u in section["index_urls"]] or ["    index      PyPI"]
            lines += [f"    require    {r}" for r in section["requirements"]]
    missing = [e for e in ("conda", "venv") if e not in plan]
    if missing:
        lines.append(f"  not available with: {', '.join(missing)}")
    smoke = recipe.smoke_test
    lines.append("  smoke test")
    body = smoke.python if smoke.python is not None else " ".join(smoke.command or ())
    lines += ["    " + line for line in body.rstrip("\n").splitlines()]
    for note in recipe.notes:
        lines.append(f"  note: {note}")
    lines.append(f"  content hash {recipe.content_hash()}")
    return "\n".join(lines)


class Lint:
    """`cuenv recipes lint`: ``{"ok", "files", "problems": [...]}``, every problem with its file, key and line."""

    __slots__ = ("files", "problems")

    def __init__(self, files: list[str], problems: list[Problem]) -> None:
        self.files, self.problems = files, problems

    def to_json(self) -> JSONObject:
        return {"ok": not self.problems, "files": list(self.files), "problems": [p.to_json() for p in self.problems]}


def _lint_text(lint: Lint) -> str:
    problems, files = lint.problems, lint.files
    if not problems:
        return f"{len(files)} file{'s' if len(files) != 1 else ''} clean."
    bad = len({p.file for p in problems})
    return "\n".join(str(p) for p in problems) + (
        f"\n{len(problems)} problem{'s' if len(problems) != 1 else ''} in {bad} of {len(files)} "
        f"file{'s' if len(files) != 1 else ''}.")


def _lint(ctx: Context) -> Result[Lint]:
    from cuenv.errors import EXIT_OK, EXIT_PROBLEMS
    from cuenv.recipes.lint import lint_file

    problems = [p for f in ctx.args.files for p in lint_file(f)]
    return Result(Lint([str(f) for f in ctx.args.files], problems), _lint_text,
                  exit_code=EXIT_PROBLEMS if problems else EXIT_OK)


def _table(headers: list[str], rows: list[list[str]]) -> str:
    widths = [max(len(str(c)) for c in col) for col in zip(headers, *rows)]
    out = ["  ".join(str(c).ljust(w) for c, w in zip(row, widths)).rstrip() for row in [headers, *rows]]
    return "\n".join(out)
