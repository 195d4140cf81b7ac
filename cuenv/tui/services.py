"""Everything the TUI does to the outside world, behind one object the app receives (STYLE.md §9).

No Textual here: each method blocks (disk, detection, installs, subprocesses) and is called from
a worker thread; tests drive it directly or inject it into the app. It calls the same core functions
as the commands (cuenv.envs.lockmake, cuenv.envs.locksync, cuenv.export.write, cuenv.doctor.gather), never a
command module or the argument parser.
"""

from __future__ import annotations

import shutil
import threading
from pathlib import Path
from typing import TYPE_CHECKING, Any, Mapping

from cuenv.engines.events import Notice, Step, Tick
from cuenv.envs import folder
from cuenv.errors import CuenvError, UsageError
from cuenv.tui import models

if TYPE_CHECKING:
    from cuenv.binaries.assess import Library
    from cuenv.doctor.model import Diagnosis
    from cuenv.engines.events import Event, Progress
    from cuenv.envs.lockmake import Written
    from cuenv.envs.store import EnvRecord
    from cuenv.knowledge.findings import Finding
    from cuenv.machine.model import Machine



class CreateCancelled(BaseException):
    """Raised from the progress callback when the user cancels a create.

    A BaseException, like KeyboardInterrupt, so no engine's ``except Exception`` swallows it and
    cuenv.envs.create.execute removes the half-built prefix (its marker is written last)."""


def guarded(progress: Progress, cancel: threading.Event) -> Progress:
    """A progress callback that stops the pipeline at its next event once ``cancel`` is set."""

    def report(event: Event) -> None:
        # Every event counts, a Tick and each downloaded chunk too: a running uv is stopped within
        # a second (cuenv.runner.stream ends its process group when this raises).
        if cancel.is_set():
            raise CreateCancelled()
        if not isinstance(event, Tick):
            progress(event)
        if cancel.is_set():
            raise CreateCancelled()

    return report



class Services:
    def __init__(self, settings: Any, environ: Mapping[str, str]) -> None:
        import sysconfig

        from cuenv.envs.store import Store

        # The TUI's workers read sysconfig (uv's finder: "uv" + get_config_var("EXE")), and Python 3.11
        # fills it on first use without a lock: a worker could read a half-filled table (None). Filled
        # here, on the UI thread, before any worker starts.
        sysconfig.get_config_vars()
        self.settings = settings
        self.environ = dict(environ)
        self.store = Store.from_settings(settings)

    # -- reading ---------------------------------------------------------------------------------------
    def machine(self, *, refresh: bool = False) -> Machine:
        from cuenv.machine.driver import detect

        return detect(self.environ, cache_dir=self.settings.cache_dir, refresh=refresh)

    def known_machine(self) -> Machine | None:
        """The machine if detection can say it without probing (overrides, or its cache), else None."""
        from cuenv.machine.driver import known_now

        return known_now(self.environ, cache_dir=self.settings.cache_dir)

    def environments(self) -> list[models.EnvRow]:
        from cuenv.envs import verdict

        rows = []
        for record in self.store.list():
            try:
                state, reason = verdict.status(record, self.environ, self.settings.cache_dir)
            except CuenvError as exc:  # damaged metadata: one bad environment must not hide the rest
                state, reason = "error", exc.message
            rows.append(models.env_row(record.known, record.name, state, reason))
        return rows

    def detail(self, name: str, machine: Machine | None = None) -> models.EnvDetail:
        """What the detail pane shows; the kernels are judged for ``machine`` (none without one)."""
        from cuenv.activation.plan import plan_for
        from cuenv.envs import verdict

        record = self.store.get(name, allow_incomplete=True)
        meta = record.known
        home = self.settings.home
        problems: list[str] = []
        findings: tuple[Finding, ...] = ()
        activation: tuple[models.ActivationLine, ...] = ()
        kernels: tuple[Library, ...] = ()
        if record.complete:
            try:
                findings = tuple(verdict.findings_for(record, self.environ, self.settings.cache_dir))
                kernels, found = self._kernels(record, machine) if machine is not None else ((), ())
                findings = (*findings, *found)
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
        from cuenv.envs import cudatools

        return models.EnvDetail(
            name=name, path=models.shorten(str(record.prefix), home), recipe=meta.recipe.name if meta else "-",
            engine=meta.engine if meta else "-", python=(meta.python if meta else None) or "",
            complete=record.complete, packages=models.packages_from_solution(solution), activation=activation,
            lock_hash=(meta.lock_hash if meta else None) or "", lock_status=self.lock_status(name),
            findings=findings, smoke_test=meta is not None and models.smoke_argv(meta.runnable_smoke_test()) is not None,
            problem=" ".join(problems), kernels=kernels, installed=cudatools.facts(meta),
        )

    def _kernels(self, record: EnvRecord, machine: Machine) -> tuple[tuple[Library, ...], tuple[Finding, ...]]:
        """What the environment's files carry, for this machine; info-only findings stay in the CLI."""
        from cuenv.envs.kernels import assess_environment

        judged = assess_environment(record, machine, cache_dir=self.settings.cache_dir)
        return (tuple(lib for lib in judged.libraries if lib.modules),
                tuple(f for f in judged.findings if f.severity != "info"))

    def recipes(self, machine: Machine) -> tuple[list[models.RecipeRow], list[str]]:
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

    def recipe_detail(self, name: str, machine: Machine) -> list[tuple[str, str]]:
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
            progress(Notice(line))
        report = guarded(progress, cancel)
        report(Step("plan", f"{plan.name}: {plan.stack.label} with {plan.engine} ({plan.engine_reason})"))
        execute(plan, self.settings, self.environ, machine=machine, dry_run=False, force=force, progress=report)
        return plan.name

    def download_size(self, ref: str, *, engine: str | None, machine: Machine) -> str:
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

    def plan_change(self, name: str, verb: str, packages: list[str], *, pypi: bool = False) -> Any:
        """`cuenv add/uninstall --dry-run` (``pypi``: with --pypi, a conda prefix's pip layer): the change solved
        and checked, nothing installed (a refusal raises)."""
        from cuenv.envs import change

        return change.plan(self.settings, self.environ, name=name, verb=verb, packages=packages, machine=self.machine(),
                           pypi=pypi)

    def apply_change(self, planned: Any, progress: Any = None) -> Any:
        """Install a change planned by :meth:`plan_change` and record it, as `cuenv add` does."""
        from cuenv.envs import change

        return change.apply(self.settings, self.environ, planned, progress=progress)

    def remove(self, name: str) -> None:
        with self.store.locked(name):
            self.store.remove(name)

    def smoke(self, name: str, *, timeout: float = 600.0) -> tuple[int, str]:
        """Run the recipe's smoke test inside the activated environment: (exit code, output)."""
        from cuenv import runner
        from cuenv.activation.plan import activated_env

        record = self.store.get(name)
        argv = models.smoke_argv(record.meta.runnable_smoke_test())
        if argv is None and record.meta.archived_smoke_test():  # never run on the archive's word (issue 31 §4)
            raise UsageError(f"The smoke test of {name!r} came in an archive and has not been trusted.",
                             hint=f"`cuenv test {name}` shows it; `cuenv test {name} --trust-smoke-test` runs it.")
        if argv is None:
            raise UsageError(f"Environment {name!r} has no smoke test.", hint="Its recipe defines none.")
        env = activated_env(self.environ, record.target(), home=self.settings.home)
        exe = shutil.which(argv[0], path=env.get("PATH", ""))
        if exe is None:
            raise CuenvError(f"{argv[0]!r} was not found in environment {name!r}.",
                             hint=f"Recreate it: `cuenv create {record.meta.recipe.name} -n {name} --force`.")
        done = runner.run([exe, *argv[1:]], timeout=timeout, env=env, check=False)
        return done.returncode, (done.stdout + done.stderr).rstrip("\n")

    def export(self, name: str, fmt: str, out_dir: Path, *, force: bool = False) -> list[str]:
        from cuenv.export.write import export_environment

        return export_environment(self.settings, name=name, fmt=fmt, out_dir=Path(out_dir), force=force)

    def lock(self, name: str, path: Path, *, force: bool = False) -> Written:
        """`cuenv lock NAME -o PATH`: the environment's lock, written (the command's typed result). A different
        file at PATH raises cuenv.lock.io.OverwriteRefused unless ``force`` (the view asks first, issue 26 §4)."""
        from cuenv.envs import lockmake

        made = lockmake.lock_environment(self.settings, self.environ, name=name, platforms=(), here=self.machine(),
                                         over=path)
        return lockmake.write(made, str(path), force=force)

    def lock_status(self, name: str, lockfile: Path | None = None) -> str:
        """`cuenv lock --check NAME FILE` for a lockfile beside the user, else why not."""
        from cuenv.envs.locksync import check_drift

        path = lockfile or Path("cuenv.lock")
        if not path.is_file():
            return f"n/a (no {path})"
        try:
            checked = check_drift(self.settings, self.environ, name=name, lock_path=str(path))
        except CuenvError as exc:
            return f"{path}: {exc.message}"
        return f"{path}: " + ("matches" if checked.matches else "drifted")

    def doctor(self, name: str | None) -> Diagnosis:
        """`cuenv doctor [NAME]`'s typed result, as the command has it (no JSON in between)."""
        from cuenv import doctor
        from cuenv.doctor.gather import examine

        return doctor.diagnosis(examine(self.settings, self.environ, name=name))
