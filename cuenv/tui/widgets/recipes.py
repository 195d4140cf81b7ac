"""The recipes view: the catalogue marked for this machine, a detail pane, and create with a live log.

Create runs cuenv.envs.create's pipeline in a thread worker. Cancel sets an event that the progress
callback checks at every step; it raises CreateCancelled (a BaseException), and the pipeline,
which writes its completion marker last, removes the half-built prefix. Nothing usable is left.
"""

from __future__ import annotations

import threading
from typing import TYPE_CHECKING, Any

from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.widgets import Button, DataTable, ProgressBar, RichLog, Static

from cuenv.engines.events import Chunk, Download, Downloaded, Event, Notice, Output, Step, Tick
from cuenv.tui import messages as msg
from cuenv.tui.models import RECIPE_COLUMNS
from cuenv.tui.widgets.common import WorkerErrors, current_key, fill_table, line, styled

if TYPE_CHECKING:
    from textual.timer import Timer

    from cuenv.engines.progress import Transfers
    from cuenv.machine.model import Machine
    from cuenv.tui.services import Services

_STEP = {"plan": 1, "solve": 2, "venv": 3, "verify": 3, "download": 3, "install": 4, "link": 4, "done": 5}
_STEPS = 6  # the last one: metadata, activation scripts, completion marker


class RecipesView(WorkerErrors, Vertical):
    BINDINGS = [
        Binding("c", "create", "Create"),
        Binding("escape", "cancel", "Cancel create"),
        Binding("r", "refresh", "Refresh"),
    ]

    def __init__(self, services: Services, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.services = services
        self.machine: Machine | None = None
        self.rows: list = []
        self.cancel_event: threading.Event | None = None
        self.creating: str | None = None
        self.transfers: Transfers | None = None  # of the running create
        self._clock: Timer | None = None  # the timer that redraws the status every second

    def compose(self) -> ComposeResult:
        # No `loading` indicator: a loading widget cannot take focus, and `2` pressed before the
        # recipes are read must still land here (see EnvironmentsView.compose).
        yield DataTable(id="recipe-table", cursor_type="row", zebra_stripes=True)
        with VerticalScroll(id="recipe-detail"):
            yield Static("Reading recipes for this machine...", id="recipe-detail-text")
        with Vertical(id="create-panel", classes="hidden"):
            with Horizontal(id="create-bar"):
                yield ProgressBar(total=_STEPS, show_eta=False, id="create-progress")
                yield Static("", id="create-status")
                yield Button("Cancel", id="create-cancel", variant="error", compact=True)
            yield RichLog(id="create-log", classes="log", wrap=True, min_width=20)

    def on_mount(self) -> None:
        # Mounted after the first frame (CuenvApp.compose); the machine may still be being detected.
        machine = getattr(self.app, "machine", None)
        if machine is not None or getattr(self.app, "machine_failed", False):
            self.machine_known(machine)

    def machine_known(self, machine: Machine | None) -> None:
        """Mark the catalogue for ``machine``; None: its detection failed."""
        self.machine = machine
        if machine is None:
            self.query_one("#recipe-detail-text", Static).update("The machine was not detected: no recipe can be judged.")
            return
        self.load()

    # -- loading -------------------------------------------------------------------------------------------
    @work(thread=True, exclusive=True, exit_on_error=False, group="recipes", description="Reading recipes")
    def load(self) -> None:
        if self.machine is None:  # machine_known said why
            return
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
        if event.row_key is not None and event.row_key.value is not None:
            self._show(event.row_key.value)

    def _show(self, name: str) -> None:
        self.load_detail(name)

    @work(thread=True, exclusive=True, exit_on_error=False, group="recipe-detail", description="Reading the recipe")
    def load_detail(self, name: str) -> None:
        if self.machine is None:
            return
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

        machine = self.machine

        def size_of(engine: str | None) -> str:
            return self.services.download_size(recipe, engine=engine, machine=machine)

        self.app.push_screen(CreateScreen(recipe, size_of), chosen)

    def start_create(self, recipe: str, *, name: str, engine: str | None) -> None:
        self.creating = name or recipe
        self.cancel_event = threading.Event()
        panel = self.query_one("#create-panel")
        panel.remove_class("hidden")
        self.query_one("#create-log", RichLog).write(line(f"$ cuenv create {recipe} -n {self.creating}", "bold"))
        from cuenv.engines.progress import Transfers

        self.transfers = Transfers()
        self.query_one(ProgressBar).update(total=_STEPS, progress=0)
        self._show_status()
        self._clock = self.set_interval(1.0, self._show_status)  # the clock moves between events
        cancel = self.query_one("#create-cancel", Button)
        cancel.disabled, cancel.display = False, True
        self.refresh_bindings()
        self.create(recipe, self.creating, engine, self.cancel_event)

    @work(thread=True, exclusive=True, exit_on_error=False, group="create", description="Creating the environment")
    def create(self, recipe: str, name: str, engine: str | None, cancel: threading.Event) -> None:
        from cuenv.tui.services import CreateCancelled

        def progress(event: Event) -> None:
            self.post_message(msg.CreateProgress(event))

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

        event = message.event
        if self.transfers is None or isinstance(event, Output):  # the engine's own lines: the CLI's -v
            return
        self.transfers.update(event)
        if isinstance(event, (Chunk, Tick)):
            self._show_status()
            return
        self.query_one("#create-log", RichLog).write(line(shorten(_said(event), self.services.settings.home),
                                                          "$warning" if isinstance(event, Notice) else ""))
        self._show_status()

    def _show_status(self) -> None:
        """The bar and the status line: bytes when the download's size is known, else steps; a clock."""
        from cuenv.engines.progress import clock, summary

        t = self.transfers
        if t is None:
            return
        bar = self.query_one(ProgressBar)
        if t.expected and t.step in ("install", "venv") and t.items:
            bar.update(total=t.expected, progress=min(t.done_bytes, t.expected))
        else:
            bar.update(total=_STEPS, progress=_STEP.get(t.step, 0))
        parts = [clock(t.elapsed), t.step or "starting"]
        if t.items:
            parts.append(summary(t))
        active = sorted(t.active, key=lambda i: -(i.size or 0))
        if active:
            parts.append(f"now {active[0].name}" + (f" +{len(active) - 1}" if len(active) > 1 else ""))
        self.query_one("#create-status", Static).update(" | ".join(parts))

    @on(msg.CreateFinished)
    def _finished(self, message: msg.CreateFinished) -> None:
        self.creating = None
        self.cancel_event = None
        if self._clock is not None:
            self._clock.stop()
            self._clock = None
        cancel = self.query_one("#create-cancel", Button)
        cancel.disabled, cancel.display = True, False  # nothing to cancel any more: gone, not greyed
        self.refresh_bindings()
        log = self.query_one("#create-log", RichLog)
        status = self.query_one("#create-status", Static)
        if message.outcome == "created":
            self.query_one(ProgressBar).update(total=_STEPS, progress=_STEPS)
            status.update("created")
            log.write(line(f"created {message.name}: enter on it in the Environments tab activates it", "$success"))
            self.app.notify(f"Created {message.name}.")
        elif message.outcome == "cancelled":
            status.update("cancelled")
            log.write(line(f"cancelled: {message.name} was removed, nothing half-built is left; finished downloads "
                           "stay in the cache, so creating it again resumes", "$warning"))
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
                line("cancelling: the running download or install stops now; what it built is removed", "$warning"))

    @on(Button.Pressed, "#create-cancel")
    def _cancel_pressed(self) -> None:
        self.action_cancel()


def _said(event: Step | Download | Downloaded | Notice) -> str:
    """One line of the create log for an event."""
    from cuenv.engines.progress import human_bytes

    if isinstance(event, Notice):
        return f"warning: {event.text}"
    if isinstance(event, (Download, Downloaded)):
        name = "download" if isinstance(event, Download) else "downloaded"
        return f"{name}: {event.package}" + (f" ({human_bytes(event.size)})" if event.size else "")
    text = event.name + (f": {event.detail}" if event.detail else "")
    return text + (f", up to {human_bytes(event.nbytes)} to download" if event.name == "install" and event.nbytes else "")
