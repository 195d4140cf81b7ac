"""Everything the TUI does to the outside world, behind one object the app receives (STYLE.md §9).

No Textual here: each method blocks (disk, detection, installs, subprocesses) and is called from
a worker thread; tests drive it directly or inject it into the app. Features that later issues
provide (lockfiles, doctor) are found with ``importlib.util.find_spec`` and driven through their
command's documented arguments and ``--json`` data, so the TUI does not depend on their internals.
"""

from __future__ import annotations

import importlib.util
import shutil
import threading
from pathlib import Path
from typing import Any, Callable, Mapping, Sequence

from cuenv.envs import folder
from cuenv.errors import CuenvError, UsageError
from cuenv.tui import models

Progress = Callable[[str, str], None]


class CreateCancelled(BaseException):
    """Raised from the progress callback when the user cancels a create.

    A BaseException, like KeyboardInterrupt, so no engine's ``except Exception`` swallows it and
    cuenv.envs.create.execute removes the half-built prefix (its marker is written last)."""


def guarded(progress: Progress, cancel: threading.Event) -> Progress:
    """A progress callback that stops the pipeline at its next event once ``cancel`` is set."""

    def report(event: str, detail: str = "", *, nbytes: int | None = None) -> None:
        # Every event counts, "tick" and each downloaded chunk too: a running uv is stopped within
        # a second (cuenv.runner.stream ends its process group when this raises).
        if cancel.is_set():
            raise CreateCancelled()
        if event != "tick":
            progress(event, detail) if nbytes is None else progress(event, detail, nbytes=nbytes)
        if cancel.is_set():
            raise CreateCancelled()

    return report


def available(module: str) -> bool:
    """Whether a cuenv module that a later issue adds (cuenv.lock.model, cuenv.doctor) is installed."""
    try:
        return importlib.util.find_spec(module) is not None
    except (ImportError, ValueError):
        return False


class Services:
    def __init__(self, settings: Any, environ: Mapping[str, str]) -> None:
        from cuenv.envs.store import Store

        self.settings = settings
        self.environ = dict(environ)
        self.store = Store.from_settings(settings)

    # -- capabilities ----------------------------------------------------------------------------------
    @property
    def can_lock(self) -> bool:
        return available("cuenv.lock.model")

    @property
    def can_doctor(self) -> bool:
        return available("cuenv.doctor")

    # -- reading ---------------------------------------------------------------------------------------
    def machine(self, *, refresh: bool = False):  # noqa: ANN201 - cuenv.machine.model.Machine
        from cuenv.machine.driver import detect

        return detect(self.environ, cache_dir=self.settings.cache_dir, refresh=refresh)

    def environments(self) -> list[models.EnvRow]:
        from cuenv.envs import verdict

        rows = []
        for record in self.store.list():
            try:
                state, reason = verdict.status(record, self.environ, self.settings.cache_dir)
            except CuenvError as exc:  # damaged metadata: one bad environment must not hide the rest
                state, reason = "error", exc.message
            rows.append(models.env_row(record.meta, record.name, state, reason))
        return rows

    def detail(self, name: str) -> models.EnvDetail:
        from cuenv.activation.plan import plan_for
        from cuenv.envs import verdict

        record = self.store.get(name, allow_incomplete=True)
        meta = record.meta
        home = self.settings.home
        problems, findings, activation = [], (), ()
        if record.complete:
            try:
                findings = tuple(verdict.findings_for(record, self.environ, self.settings.cache_dir))
                plan = plan_for(record.target(), envs_dir=self.settings.envs_dir)
                activation = models.activation_lines(self.environ, plan, home)
            except (CuenvError, KeyError, TypeError) as exc:
                problems.append(getattr(exc, "message", f"damaged metadata ({exc})"))
        else:
            problems.append("Incomplete: its creation was interrupted or failed. Remove it, or create it again.")
        try:
            solution = folder.read_solution(record.path)
        except (OSError, ValueError):
            solution = None
        recipe = (meta.get("recipe") or {}).get("name") or "-"
        return models.EnvDetail(
            name=name, path=models.shorten(str(record.path), home), recipe=recipe, engine=str(meta.get("engine", "-")),
            python=str(meta.get("python") or ""), complete=record.complete,
            packages=models.packages_from_solution(solution), activation=activation,
            lock_hash=str(meta.get("lock_hash") or ""), lock_status=self.lock_status(name),
            findings=findings, smoke_test=models.smoke_argv(meta.get("smoke_test")) is not None,
            problem=" ".join(problems),
        )

    def recipes(self, machine) -> tuple[list[models.RecipeRow], list[str]]:  # noqa: ANN001
        """The catalogue marked for ``machine``; a broken user recipe is a warning, not a failure."""
        from cuenv.knowledge.compat import check
        from cuenv.recipes.catalogue import RecipeError, load_catalogue

        catalogue = load_catalogue(self.settings)
        rows, warnings = [], []
        for name in catalogue.names():
            try:
                recipe = catalogue.find(name)
            except RecipeError as exc:
                warnings.append(exc.message)
                continue
            rows.append(models.recipe_row(recipe, check(recipe.stack(), machine)))
        return rows, warnings

    def recipe_detail(self, name: str, machine) -> list[tuple[str, str]]:  # noqa: ANN001
        from cuenv.knowledge.compat import check
        from cuenv.recipes.catalogue import load_catalogue

        recipe, _ = load_catalogue(self.settings).get(name)
        return models.recipe_detail_text(recipe, check(recipe.stack(), machine))

    # -- actions -------------------------------------------------------------------------------------
    def create(self, ref: str, *, name: str | None, engine: str | None, machine, progress: Progress,
               cancel: threading.Event, force: bool = False) -> str:
        """Plan and build an environment; ``cancel`` stops it at the next step with nothing usable left."""
        from cuenv.envs.create import build_warnings, execute, plan_create

        plan = plan_create(self.settings, self.environ, ref=ref, name=name or None, engine=engine, python=None,
                           machine=machine, force=force)
        for line in build_warnings(plan.findings):
            progress("warning", line)
        report = guarded(progress, cancel)
        report("plan", f"{plan.name}: {plan.stack.label} with {plan.engine} ({plan.engine_reason})")
        execute(plan, self.settings, self.environ, machine=machine, dry_run=False, force=force, progress=report)
        return plan.name

    def download_size(self, ref: str, *, engine: str | None, machine) -> str:  # noqa: ANN001
        """What a create of ``ref`` would download, solved now (no install): "19.9 MiB in 2 packages"."""
        from cuenv.engines import get_engine
        from cuenv.engines.base import total_size
        from cuenv.engines.progress import human_bytes
        from cuenv.envs.create import obtain_solution, plan_create

        plan = plan_create(self.settings, self.environ, ref=ref, name=None, engine=engine, python=None,
                           machine=machine, force=True, new_env=False)
        # The solve alone: no environment lock, so a Create pressed meanwhile is not refused.
        solver = get_engine(plan.engine, self.environ)
        packages = obtain_solution(plan, solver, machine, self.settings.cache_dir).packages
        total = total_size(packages)
        size = human_bytes(total) if total is not None else "an unknown size"
        return f"{size} in {len(packages)} packages, less what the cache holds (engine {plan.engine})"

    def remove(self, name: str) -> None:
        with self.store.locked(name):
            self.store.remove(name)

    def smoke(self, name: str, *, timeout: float = 600.0) -> tuple[int, str]:
        """Run the recipe's smoke test inside the activated environment: (exit code, output)."""
        from cuenv import runner
        from cuenv.activation.plan import activated_env

        record = self.store.get(name)
        argv = models.smoke_argv(record.meta.get("smoke_test"))
        if argv is None:
            raise UsageError(f"Environment {name!r} has no smoke test.", hint="Its recipe defines none.")
        env = activated_env(self.environ, record.target(), home=self.settings.home)
        exe = shutil.which(argv[0], path=env.get("PATH", ""))
        if exe is None:
            raise CuenvError(f"{argv[0]!r} was not found in environment {name!r}.",
                             hint=f"Recreate it: `cuenv create {record.meta.get('recipe', {}).get('name', 'RECIPE')} -n {name} --force`.")
        done = runner.run([exe, *argv[1:]], timeout=timeout, env=env, check=False)
        return done.returncode, (done.stdout + done.stderr).rstrip("\n")

    def export(self, name: str, fmt: str, out_dir: Path, *, force: bool = False) -> list[str]:
        from cuenv.commands.export import write_outputs
        from cuenv.export import format_module

        module = format_module(fmt)  # a format not built yet: UsageError, shown as a notification
        source = self._export_source(name)
        return write_outputs(module.export(source, {"base": None}), Path(out_dir), force=force)

    def _export_source(self, name: str):  # noqa: ANN202
        from cuenv.engines import Solution
        from cuenv.export import ExportSource

        record = self.store.get(name)
        try:
            solution = Solution.from_json(folder.read_solution(record.path))
        except (OSError, ValueError) as exc:
            raise CuenvError(f"Environment {name!r} has no readable {folder.SOLUTION_FILE} ({exc}).",
                             hint=f"Recreate it with `cuenv create ... -n {name} --force`.") from None
        return ExportSource(record=record, solution=solution, home=self.settings.home)

    def lock(self, name: str, path: Path) -> Any:
        if not self.can_lock:
            raise UsageError("Lockfiles are not available in this version of cuenv yet.")
        return self._command(["lock", name, "-o", str(path)]).data

    def lock_status(self, name: str, lockfile: Path | None = None) -> str:
        """`cuenv lock --check NAME FILE` for a lockfile beside the user, else why not."""
        if not self.can_lock:
            return "n/a (lockfiles are not in this version of cuenv)"
        path = lockfile or Path("cuenv.lock")
        if not path.is_file():
            return f"n/a (no {path})"
        try:
            result = self._command(["lock", "--check", name, str(path)])
        except CuenvError as exc:
            return f"{path}: {exc.message}"
        return f"{path}: " + ("matches" if result.exit_code == 0 else "drifted")

    def doctor(self, name: str | None) -> tuple[models.DoctorCheck, ...]:
        if not self.can_doctor:
            raise UsageError("`cuenv doctor` is not available in this version of cuenv yet.")
        result = self._command(["doctor", *([name] if name else []), "--json"])
        return models.doctor_checks(result.data or {})

    def _command(self, argv: Sequence[str]):  # noqa: ANN202 - cuenv.result.Result
        """Run a cuenv command in-process and return its Result (its data is the --json document)."""
        from importlib import import_module

        from cuenv.cli.main import COMMANDS, Context, build_parser

        args = build_parser(argv[0]).parse_args(list(argv))
        module = import_module(f"cuenv.commands.{COMMANDS[argv[0]][0]}")
        return module.run(Context(args=args, environ=self.environ, _settings=self.settings))
