"""The recipes view: the catalogue marked for this machine, a detail pane, and create with a live log.

Create runs cuenv.envs.create's pipeline in a thread worker. Cancel sets an event that the progress
callback checks at every step; it raises CreateCancelled (a BaseException), and the pipeline,
which writes its completion marker last, removes the half-built prefix. Nothing usable is left.
"""

from __future__ import annotations

import threading

from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.widgets import Button, DataTable, ProgressBar, RichLog, Static

from cuenv.tui import messages as msg
from cuenv.tui.models import RECIPE_COLUMNS
from cuenv.tui.widgets.common import WorkerErrors, current_key, fill_table, line, styled

_WORK = {"thread": True, "exclusive": True, "exit_on_error": False}
# progress events of cuenv.envs.create/engines -> how far along the bar is (steps of _STEPS)
_STEP = {"plan": 1, "solve": 2, "venv": 3, "verify": 3, "download": 3, "install": 4, "link": 4, "done": 5}
_STEPS = 6  # the last one: metadata, activation scripts, completion marker


class RecipesView(WorkerErrors, Vertical):
    BINDINGS = [
        Binding("c", "create", "Create"),
        Binding("escape", "cancel", "Cancel create"),
        Binding("r", "refresh", "Refresh"),
    ]

    def __init__(self, services, **kwargs) -> None:  # noqa: ANN001 - cuenv.tui.services.Services
        super().__init__(**kwargs)
        self.services = services
        self.machine = None
        self.rows: list = []
        self.cancel_event: threading.Event | None = None
        self.creating: str | None = None

    def compose(self) -> ComposeResult:
        # No `loading` indicator: a loading widget cannot take focus, and `2` pressed before the
        # machine is detected must still land here (see EnvironmentsView.compose).
        yield DataTable(id="recipe-table", cursor_type="row", zebra_stripes=True)
        with VerticalScroll(id="recipe-detail"):
            yield Static("Detecting this machine...", id="recipe-detail-text")
        with Vertical(id="create-panel", classes="hidden"):
            with Horizontal(id="create-bar"):
                yield ProgressBar(total=_STEPS, show_eta=False, id="create-progress")
                yield Static("", id="create-status")
                yield Button("Cancel", id="create-cancel", variant="error", compact=True)
            yield RichLog(id="create-log", classes="log", wrap=True, min_width=20)

    def set_machine(self, machine) -> None:  # noqa: ANN001
        self.machine = machine
        self.load()

    # -- loading -------------------------------------------------------------------------------------------
    @work(**_WORK, group="recipes", description="Reading recipes")
    def load(self) -> None:
        rows, warnings = self.services.recipes(self.machine)
        self.post_message(msg.RecipesLoaded(rows, warnings))

    @on(msg.RecipesLoaded)
    def _loaded(self, message: msg.RecipesLoaded) -> None:
        self.rows = message.rows
        fill_table(self.query_one(DataTable), RECIPE_COLUMNS, self.rows, state="mark")  # the cursor stays
        for warning in message.warnings:
            self.app.notify(warning, severity="warning")
        if self.selected:
            self._show(self.selected)
        else:
            self.query_one("#recipe-detail-text", Static).update("No recipes found (see `cuenv recipes`).")

    @on(DataTable.RowHighlighted, "#recipe-table")
    def _highlighted(self, event: DataTable.RowHighlighted) -> None:
        if event.row_key is not None:
            self._show(event.row_key.value)

    def _show(self, name: str) -> None:
        self.load_detail(name)

    @work(**_WORK, group="recipe-detail", description="Reading the recipe")
    def load_detail(self, name: str) -> None:
        self.post_message(msg.DetailLoaded(name, self.services.recipe_detail(name, self.machine)))

    @on(msg.DetailLoaded)
    def _detail(self, message: msg.DetailLoaded) -> None:
        if message.name == self.selected:
            self.query_one("#recipe-detail-text", Static).update(styled(message.lines))

    @property
    def selected(self) -> str | None:
        return current_key(self.query_one(DataTable))

    def action_refresh(self) -> None:
        if self.machine is not None:
            self.load()

    # -- create ---------------------------------------------------------------------------------------
    def check_action(self, action: str, parameters: tuple) -> bool | None:
        if action == "cancel":
            return self.creating is not None  # shown only while a create runs
        if action == "create":
            return None if self.creating or self.machine is None else True
        return True

    @on(DataTable.RowSelected, "#recipe-table")
    def _selected(self) -> None:
        self.action_create()

    def action_create(self) -> None:
        from cuenv.tui.screens.modals import CreateScreen

        recipe = self.selected
        if recipe is None or self.creating or self.machine is None:
            return

        def chosen(answer: tuple[str, str | None] | None) -> None:
            if answer:
                self.start_create(recipe, name=answer[0], engine=answer[1])

        self.app.push_screen(CreateScreen(recipe), chosen)

    def start_create(self, recipe: str, *, name: str, engine: str | None) -> None:
        self.creating = name or recipe
        self.cancel_event = threading.Event()
        panel = self.query_one("#create-panel")
        panel.remove_class("hidden")
        self.query_one("#create-log", RichLog).write(line(f"$ cuenv create {recipe} -n {self.creating}", "bold"))
        self.query_one(ProgressBar).update(total=_STEPS, progress=0)
        self.query_one("#create-status", Static).update("starting")
        cancel = self.query_one("#create-cancel", Button)
        cancel.disabled, cancel.display = False, True
        self.refresh_bindings()
        self.create(recipe, self.creating, engine, self.cancel_event)

    @work(**_WORK, group="create", description="Creating the environment")
    def create(self, recipe: str, name: str, engine: str | None, cancel: threading.Event) -> None:
        from cuenv.tui.services import CreateCancelled

        def progress(event: str, detail: str = "") -> None:
            self.post_message(msg.CreateProgress(event, detail))

        try:
            self.services.create(recipe, name=name, engine=engine, machine=self.machine, progress=progress, cancel=cancel)
        except CreateCancelled:
            self.post_message(msg.CreateFinished(name, "cancelled"))
            return
        except BaseException:
            self.post_message(msg.CreateFinished(name, "failed"))
            raise
        self.post_message(msg.CreateFinished(name, "created"))

    @on(msg.CreateProgress)
    def _progress(self, message: msg.CreateProgress) -> None:
        from cuenv.tui.models import shorten

        text = shorten(f"{message.event}: {message.detail}" if message.detail else message.event,
                       self.services.settings.home)
        style = "$warning" if message.event == "warning" else ""
        self.query_one("#create-log", RichLog).write(line(text, style))
        step = _STEP.get(message.event)
        if step is not None:
            self.query_one(ProgressBar).update(progress=step)
            self.query_one("#create-status", Static).update(message.event)

    @on(msg.CreateFinished)
    def _finished(self, message: msg.CreateFinished) -> None:
        self.creating = None
        self.cancel_event = None
        cancel = self.query_one("#create-cancel", Button)
        cancel.disabled, cancel.display = True, False  # nothing to cancel any more: gone, not greyed
        self.refresh_bindings()
        log = self.query_one("#create-log", RichLog)
        status = self.query_one("#create-status", Static)
        if message.outcome == "created":
            self.query_one(ProgressBar).update(progress=_STEPS)
            status.update("created")
            log.write(line(f"created {message.name}: enter on it in the Environments tab activates it", "$success"))
            self.app.notify(f"Created {message.name}.")
        elif message.outcome == "cancelled":
            status.update("cancelled")
            log.write(line(f"cancelled: {message.name} was removed, nothing half-built is left", "$warning"))
            self.app.notify(f"Create of {message.name} cancelled; nothing was left behind.", severity="warning")
        else:
            status.update("failed")
            log.write(line(f"failed: {message.name} was not created", "$error"))
        self.post_message(msg.EnvironmentsChanged())

    def action_cancel(self) -> None:
        if self.cancel_event is not None and not self.cancel_event.is_set():
            self.cancel_event.set()
            self.query_one("#create-status", Static).update("cancelling...")
            self.query_one("#create-log", RichLog).write(
                line("cancelling: the create stops at its next step and removes what it built", "$warning"))

    @on(Button.Pressed, "#create-cancel")
    def _cancel_pressed(self) -> None:
        self.action_cancel()
