"""Each action of the TUI, driven with Textual's Pilot against real environments made by `cuenv create`."""

from __future__ import annotations

import asyncio
import threading
from pathlib import Path

from cuenv.engines.events import Event, Step
from cuenv.tui import messages as msg
from cuenv.tui.app import CuenvApp
from cuenv.tui.screens.modals import (
    ConfirmScreen,
    CreateScreen,
    ErrorScreen,
    ExportScreen,
    HelpScreen,
)
from cuenv.tui.services import Services
from cuenv.tui.widgets.envs import EnvironmentsView
from cuenv.tui.widgets.recipes import RecipesView

from .conftest import make_incomplete, settle, until

SIZE = (100, 32)


def drive(app: CuenvApp, scenario, size=SIZE) -> list:
    """Run ``scenario(pilot, app)`` headless; return every message the app handled."""
    seen: list = []

    async def main() -> None:
        async with app.run_test(size=size, message_hook=seen.append) as pilot:
            await settle(pilot, app)
            await scenario(pilot, app)

    asyncio.run(main())
    return list({id(m): m for m in seen}.values())  # a bubbling message is seen at every node


def table_names(app: CuenvApp, table_id: str = "#env-table") -> list[str]:
    table = app.screen.query_one(table_id)
    return [k.value for k in table.rows]


def detail(app: CuenvApp) -> str:
    return str(app.screen.query_one("#env-detail-text").render())


def log_text(app: CuenvApp, log_id: str) -> str:
    return "\n".join(line.text for line in app.screen.query_one(log_id).lines)


async def wait_for(pilot, predicate) -> None:
    await until(pilot, predicate, "condition not reached")


def test_environments_machine_and_detail(make_env, services: Services, environ):
    make_env("cuda-12.1")
    make_incomplete(Path(environ["CUENV_HOME"]) / "envs", "broken", make_env("train"))
    app = CuenvApp(services)

    async def scenario(pilot, app):
        assert "driver 550.54.14 | CUDA <= 12.4 | NVIDIA A100-SXM4-80GB (cc 8.0, 80 GiB)" in str(
            app.screen.query_one("#machine").render())
        assert table_names(app) == ["broken", "cuda-12.1", "train"]
        rows = {r.name: r for r in app.screen.query_one(EnvironmentsView).rows}
        assert (rows["cuda-12.1"].status, rows["broken"].status) == ("ok", "incomplete")
        await pilot.press("down")
        await settle(pilot, app)
        text = detail(app)
        assert "cuda-12.1  cuda-12.1 | venv | Python" in text
        assert "VIRTUAL_ENV=$CUENV_HOME/envs/cuda-12.1" in text
        assert "drops /usr/local/cuda-11.8/bin" in text  # what `use` takes off PATH
        assert "nvidia-cuda-runtime-cu12 12.1.105 (pypi)" in text
        assert "runs here: no problem found" in text
        assert "lockfile n/a" in text
        await pilot.press("up")
        await settle(pilot, app)
        assert "Incomplete: its creation was interrupted" in detail(app)

    drive(app, scenario)


class CountingServices(Services):
    """Counts the reads of the first screen."""

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.calls: list[str] = []

    def environments(self):
        self.calls.append("environments")
        return super().environments()

    def detail(self, name: str, machine=None):
        self.calls.append(f"detail {name}")
        return super().detail(name, machine)

    def machine(self, *, refresh: bool = False):
        self.calls.append("machine")
        return super().machine(refresh=refresh)


def test_the_first_frame_is_read_before_it_is_drawn(make_env, settings, environ):
    """Rows, machine line and the first row's detail are read on mount, once each, by no worker
    (issue 18: workers fighting the UI thread for the GIL made the first paint slow)."""
    make_env("cuda-12.1")
    make_env("train")
    services = CountingServices(settings, environ)
    app = CuenvApp(services)

    async def main() -> None:
        async with app.run_test(size=SIZE) as pilot:
            # Nothing awaited yet: this is what the first frame is drawn from.
            assert table_names(app) == ["cuda-12.1", "train"]
            assert "cuda-12.1  cuda-12.1 | venv | Python" in detail(app) and "Packages" in detail(app)
            assert "driver 550.54.14" in str(app.screen.query_one("#machine").render())
            assert not [w for w in app.workers if w.group in ("envs", "detail", "machine")]
            await settle(pilot, app)
            assert services.calls.count("environments") == 1
            assert [c for c in services.calls if c.startswith("detail")] == ["detail cuda-12.1"]  # not again on the cursor's event
            await pilot.press("down")
            await settle(pilot, app)
            assert detail(app).startswith("train  cuda-12.1 | venv")
            assert [c for c in services.calls if c.startswith("detail")] == ["detail cuda-12.1", "detail train"]

    asyncio.run(main())


class ProbingServices(Services):
    """Detection's cache cannot answer (a reboot, a new driver): the probe waits for ``answer``, and
    raises when ``fail`` is set, as a hung NVML would end."""

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.answer = threading.Event()
        self.fail = False

    def known_machine(self):
        return None

    def machine(self, *, refresh: bool = False):
        self.answer.wait(30)
        if self.fail:
            raise RuntimeError("NVML hung")
        return super().machine(refresh=refresh)


def test_a_slow_probe_does_not_hold_the_first_frame(make_env, settings, environ):
    """Rows and detail are drawn while the machine is probed; when it answers, the bar, the detail's
    kernels and the recipes follow."""
    make_env("cuda-12.1")
    services = ProbingServices(settings, environ)
    app = CuenvApp(services)

    async def main() -> None:
        async with app.run_test(size=SIZE) as pilot:
            try:
                assert table_names(app) == ["cuda-12.1"] and "Packages" in detail(app)
                assert "detecting the driver and GPUs" in str(app.screen.query_one("#machine").render())
                await pilot.press("2")  # the tab is mounted after the first frame: on a loaded machine, after the key
                await until(pilot, lambda: bool(app.screen.query("#recipe-detail-text")), "the recipes tab")
                assert "Reading recipes for this machine" in str(app.screen.query_one("#recipe-detail-text").render())
                await pilot.press("1")
            finally:
                services.answer.set()
            await settle(pilot, app)
            assert "driver 550.54.14 | CUDA <= 12.4" in str(app.screen.query_one("#machine").render())
            assert "runs here: no problem found" in detail(app)
            assert "cuda-12.1" in table_names(app, "#recipe-table")

    asyncio.run(main())


def test_a_machine_that_cannot_be_detected_is_a_modal(make_env, settings, environ):
    make_env("cuda-12.1")
    services = ProbingServices(settings, environ)
    services.fail = True
    services.answer.set()
    app = CuenvApp(services)

    async def scenario(pilot, app):
        assert isinstance(app.screen, ErrorScreen)
        assert "Detecting the machine" in str(app.screen.query_one(".title").render())
        assert "RuntimeError: NVML hung" in str(app.screen.query_one("#error-message").render())
        await pilot.press("escape")
        assert "the machine was not detected" in str(app.screen.query_one("#machine").render())
        assert table_names(app) == ["cuda-12.1"]  # the environments are there all the same
        await pilot.press("2")
        await settle(pilot, app)
        assert "The machine was not detected" in str(app.screen.query_one("#recipe-detail-text").render())
        assert table_names(app, "#recipe-table") == []

    drive(app, scenario)


def test_filter_as_you_type_and_sort(make_env, services: Services):
    for name in ("b-env", "a-env", "train"):
        make_env(name)
    app = CuenvApp(services)

    async def scenario(pilot, app):
        assert table_names(app) == ["a-env", "b-env", "train"]
        await pilot.press("slash", "t", "r")
        assert table_names(app) == ["train"]
        await pilot.press("enter")  # back to the table, filter kept
        assert app.focused.id == "env-table"
        await pilot.press("slash", "backspace", "backspace", "enter")
        assert table_names(app) == ["a-env", "b-env", "train"]
        await pilot.press("o")  # sort by name
        await pilot.press("O")  # reversed
        assert table_names(app) == ["train", "b-env", "a-env"]
        await pilot.click("#env-table", offset=(2, 0))  # the Name header, with the mouse
        await pilot.pause()
        assert table_names(app)[0] == "a-env"

    drive(app, scenario)


def test_use_leaves_with_the_chosen_environment(make_env, services: Services, tmp_path: Path):
    from cuenv.commands.tui import handoff

    make_env("cuda-12.1")
    make_env("train")
    app = CuenvApp(services)

    async def scenario(pilot, app):
        await pilot.press("down", "enter")  # use: on enter, never on a letter

    drive(app, scenario)
    assert app.return_value == "train"
    choice = tmp_path / "choice"
    handoff(app.return_value, choice)
    assert choice.read_text() == "train\n"


def test_remove_asks_first(make_env, services: Services):
    path = make_env("doomed")
    app = CuenvApp(services)

    async def scenario(pilot, app):
        await pilot.press("x")
        assert isinstance(app.screen, ConfirmScreen)
        await pilot.press("n")
        assert path.is_dir()
        await pilot.press("x", "left", "enter")
        await settle(pilot, app)
        assert table_names(app) == []

    seen = drive(app, scenario)
    assert not path.exists()
    assert any(isinstance(m, msg.ActionDone) and m.text == "Removed doomed." for m in seen)


def test_remove_of_the_active_environment_says_so_first(make_env, settings, environ):
    """As `cuenv remove` refuses the active environment without --force, the TUI asks with that said (issue 17 §5)."""
    path = make_env("busy")
    app = CuenvApp(Services(settings, {**environ, "CUENV_ACTIVE": "busy"}))

    async def scenario(pilot, app):
        await pilot.press("x")
        assert isinstance(app.screen, ConfirmScreen)
        assert app.screen.question.startswith("busy is active in the shell that started cuenv.")
        assert "`cuenv deactivate`" in app.screen.detail
        await pilot.press("n")
        assert path.is_dir()

    drive(app, scenario)


def _start_create(pilot, app, name: str):
    async def go():
        await pilot.press("2")
        await settle(pilot, app)
        recipes = table_names(app, "#recipe-table")
        await pilot.press(*["down"] * recipes.index("cuda-12.1"))
        await pilot.press("c")
        assert isinstance(app.screen, CreateScreen)
        app.screen.query_one("#create-name").value = name
        await pilot.press("enter")
    return go()


def test_create_streams_progress_and_lists_the_new_environment(services: Services, environ):
    app = CuenvApp(services)

    async def scenario(pilot, app):
        await _start_create(pilot, app, "fresh")
        await wait_for(pilot, lambda: app.screen.query_one(RecipesView).creating is None)
        await settle(pilot, app)
        assert "created fresh" in log_text(app, "#create-log")
        await pilot.press("1")
        assert "fresh" in table_names(app)

    seen = drive(app, scenario)
    events = [m.event.name for m in seen if isinstance(m, msg.CreateProgress) and isinstance(m.event, Step)]
    assert events[:2] == ["plan", "solve"] and "install" in events and events[-1] == "done"
    assert (Path(environ["CUENV_HOME"]) / "envs" / "fresh" / ".cuenv" / "complete").is_file()


class GatedServices(Services):
    """Real create, held at its install step until the test has pressed cancel."""

    def __init__(self, *a, **kw) -> None:
        super().__init__(*a, **kw)
        self.reached = threading.Event()

    def create(self, ref, *, progress, cancel, **kw):
        def gated(event: Event) -> None:
            progress(event)
            if isinstance(event, Step) and event.name == "install":
                self.reached.set()
                cancel.wait(30)

        return super().create(ref, progress=gated, cancel=cancel, **kw)


def test_cancel_create_leaves_nothing_usable(settings, environ):
    services = GatedServices(settings, environ)
    app = CuenvApp(services)
    prefix = Path(environ["CUENV_HOME"]) / "envs" / "halfway"

    async def scenario(pilot, app):
        await _start_create(pilot, app, "halfway")
        await wait_for(pilot, services.reached.is_set)
        assert prefix.is_dir()  # the venv is there, being filled
        await pilot.press("escape")
        await wait_for(pilot, lambda: app.screen.query_one(RecipesView).creating is None)
        await settle(pilot, app)
        assert "cancelled: halfway was removed" in log_text(app, "#create-log")
        await pilot.press("1")
        assert "halfway" not in table_names(app)

    seen = drive(app, scenario)
    assert not prefix.exists()
    assert [m.outcome for m in seen if isinstance(m, msg.CreateFinished)] == ["cancelled"]


def test_create_error_opens_a_modal_with_the_fix(services: Services):
    app = CuenvApp(services)

    async def scenario(pilot, app):
        await _start_create(pilot, app, "bad name")
        await wait_for(pilot, lambda: isinstance(app.screen, ErrorScreen))
        text = str(app.screen.query_one("#error-message").render()) + str(app.screen.query_one("#error-hint").render())
        assert "'bad name' is not a valid environment name." in text
        assert "fix: Use 1-64 characters" in text
        await pilot.press("escape")
        assert not isinstance(app.screen, ErrorScreen)
        assert app.is_running

    drive(app, scenario)


def test_smoke_test_runs_inside_the_environment(make_env, services: Services):
    make_env("cuda-12.1")
    app = CuenvApp(services)

    async def scenario(pilot, app):
        await pilot.press("s")
        await settle(pilot, app)
        out = log_text(app, "#env-log")
        assert "CUDA runtime 12010" in out  # the env's libcudart, found through its LD_LIBRARY_PATH
        assert "ptxas: Cuda compilation tools, release 12.1" in out
        assert "no usable GPU" in out and "smoke test of cuda-12.1 failed (exit 1)" in out  # no GPU here

    seen = drive(app, scenario)
    assert any(isinstance(m, msg.ActionDone) and m.severity == "error" for m in seen)


def test_export_picker_reports_a_format_not_built_yet(make_env, services: Services, tmp_path: Path, monkeypatch):
    make_env("cuda-12.1")
    monkeypatch.chdir(tmp_path)
    app = CuenvApp(services)

    async def scenario(pilot, app):
        await pilot.press("e")
        assert isinstance(app.screen, ExportScreen)
        await pilot.press("enter")
        await settle(pilot, app)

    seen = drive(app, scenario)
    done = [m for m in seen if isinstance(m, msg.ActionDone)]
    from cuenv.errors import UsageError
    from cuenv.export import format_module

    try:
        format_module("dockerfile")
    except UsageError as exc:  # not built yet: the error is the notification, nothing written
        assert done and done[-1].severity == "error" and exc.message in done[-1].text
        assert not (tmp_path / "cuda-12.1-export").exists()
    else:
        assert done[-1].text.startswith("Exported cuda-12.1 as dockerfile")


def test_help_lists_lock_and_doctor_with_the_other_keys(make_env, services: Services):
    make_env("cuda-12.1")
    app = CuenvApp(services)

    async def scenario(pilot, app):
        view = app.screen.query_one(EnvironmentsView)
        assert view.check_action("lock", ()) and view.check_action("doctor", ())
        await pilot.press("question_mark")
        assert isinstance(app.screen, HelpScreen)
        text = str(app.screen.query_one("#help-text").render())
        assert "enter    use: leave, and activate it in your shell" in text
        assert "is off" not in text and "not in this version" not in text
        await pilot.press("escape")
        assert not isinstance(app.screen, HelpScreen)

    drive(app, scenario)


def test_a_failing_worker_is_a_modal_never_a_crash(settings, environ):
    class Broken(Services):
        def environments(self):
            raise RuntimeError("disk on fire")

    app = CuenvApp(Broken(settings, environ))

    async def scenario(pilot, app):
        assert isinstance(app.screen, ErrorScreen)
        assert "internal error: RuntimeError: disk on fire" in str(app.screen.query_one("#error-message").render())
        await pilot.press("escape", "ctrl+t")
        assert app.theme == "textual-light"
        await pilot.press("q")

    drive(app, scenario)
    assert app.return_value is None and app.return_code == 0


def test_quitting_during_a_create_cancels_it_first(settings, environ):
    services = GatedServices(settings, environ)
    app = CuenvApp(services)
    prefix = Path(environ["CUENV_HOME"]) / "envs" / "leaving"

    async def scenario(pilot, app):
        await _start_create(pilot, app, "leaving")
        await wait_for(pilot, services.reached.is_set)
        await pilot.press("q")  # the app waits for the pipeline to undo itself, then exits
        await wait_for(pilot, lambda: not app.is_running)

    seen = drive(app, scenario)
    assert not prefix.exists()
    assert [m.outcome for m in seen if isinstance(m, msg.CreateFinished)] == ["cancelled"]
    assert app.return_value is None
