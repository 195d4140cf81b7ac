"""`cuenv tui`: the composition. Views own their workers; the app wires messages and modals.

The app receives its Services (store, settings, environ: STYLE.md §9) and exits with the name
of the environment to use, or None.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from textual import on, work
from textual.app import App, ComposeResult
from textual.binding import Binding
from textual.content import Content
from textual.lazy import Lazy
from textual.screen import Screen
from textual.widgets import Footer, TabbedContent, TabPane
from textual.worker import Worker, WorkerState

from cuenv.tui import messages as msg
from cuenv.tui.widgets.common import WorkerErrors
from cuenv.tui.widgets.envs import EnvironmentsView
from cuenv.tui.widgets.machine import MachineBar
from cuenv.tui.widgets.recipes import RecipesView

if TYPE_CHECKING:
    from cuenv.machine.model import Machine
    from cuenv.tui.services import Services


class MainScreen(Screen):
    # The keys start on the environments table, from the first frame: Textual's default is the
    # first focusable widget (the tab strip). The filter is reached with `/`. Modals keep "*".
    AUTO_FOCUS = "#env-table"


class CuenvApp(WorkerErrors, App[str]):
    CSS_PATH = "cuenv.tcss"
    TITLE = "cuenv"
    BINDINGS = [
        Binding("q", "quit", "Quit"),
        # Ctrl-C quits, as in every terminal program (issue 26 §4): Textual's default is copy plus a toast.
        Binding("ctrl+c", "quit", "Quit", show=False, priority=True),
        Binding("question_mark", "help", "Help", key_display="?"),
        Binding("1", "tab('envs')", "Envs", show=False),
        Binding("2", "tab('recipes')", "Recipes", show=False),
        Binding("ctrl+t", "toggle_dark", "Light/dark", show=False),
    ]

    def __init__(self, services: Services) -> None:
        super().__init__()
        self.services = services
        self.machine: Machine | None = None
        self.machine_failed = False  # detection raised (a modal said why)
        self._quit_after_create = False

    def get_default_screen(self) -> Screen:
        return MainScreen(id="_default")

    def compose(self) -> ComposeResult:
        yield MachineBar(id="machine")
        with TabbedContent(id="tabs"):
            # The key before the name: "Environments (1)" read as a count of one (issue 18).
            with TabPane(Content.assemble(("1", "bold"), " Environments"), id="envs"):
                yield EnvironmentsView(self.services, id="envs-view")
            with TabPane(Content.assemble(("2", "bold"), " Recipes"), id="recipes"):
                # Mounted after the first frame (issue 18: first paint under 1 s): a hidden tab's
                # widgets and styles are work the first screen does not show.
                yield Lazy(RecipesView(self.services, id="recipes-view"))
        yield Footer(show_command_palette=False)  # ctrl+p still opens it; the room goes to q and ?

    def on_load(self) -> None:
        # Before anything is composed, as the environments are read before the first frame
        # (EnvironmentsView.on_mount), when detection can answer from its cache or the overrides. A
        # probe (a new driver, a reboot: NVML's first start can take seconds) is a worker, and the
        # screen is drawn meanwhile. The bar, the detail and the recipes take the machine from here.
        try:
            self.machine = self.services.known_machine()
        except Exception as exc:  # noqa: BLE001 - as a worker's failure: one modal, never a traceback
            self.machine_failed = True
            self.post_message(msg.WorkerFailed("Detecting the machine", exc))
            return
        if self.machine is None:
            self.detect_machine()

    @work(thread=True, exclusive=True, exit_on_error=False, group="machine", description="Detecting the machine")
    def detect_machine(self) -> None:
        self.post_message(msg.MachineDetected(self.services.machine()))

    def on_worker_state_changed(self, event: Worker.StateChanged) -> None:
        # Textual also runs WorkerErrors' handler of the same name (it dispatches along the MRO): the modal.
        if event.worker.group == "machine" and event.state == WorkerState.ERROR:
            self.machine_failed = True
            self.query_one(MachineBar).show(None)
            for view in self.query(RecipesView):
                view.machine_known(None)

    @on(msg.MachineDetected)
    def _detected(self, message: msg.MachineDetected) -> None:
        self.machine = message.machine
        self.query_one(MachineBar).show(message.machine)
        self.query_one(EnvironmentsView).machine_known()
        for view in self.query(RecipesView):  # none yet when the probe beat the lazy tab
            view.machine_known(message.machine)

    @on(msg.EnvironmentsChanged)
    def _envs_changed(self, message: msg.EnvironmentsChanged) -> None:
        view = self.query_one(EnvironmentsView)
        if message.removed:
            view.forget(message.removed)
        view.load()

    @on(msg.ActionDone)
    def _done(self, message: msg.ActionDone) -> None:
        self.notify(message.text, severity=message.severity, timeout=6)

    @on(msg.WorkerFailed)
    def _failed(self, message: msg.WorkerFailed) -> None:
        from cuenv.errors import CuenvError
        from cuenv.tui.screens.modals import ErrorScreen

        err = message.error
        if isinstance(err, CuenvError):
            self.push_screen(ErrorScreen(message.title, err.message, err.hint))
        else:  # a bug: one clear line, never a traceback on the screen
            self.push_screen(ErrorScreen(message.title, f"internal error: {type(err).__name__}: {err}",
                                         "This is a bug in cuenv; the same action on the command line with -v "
                                         "shows the traceback. Please report it."))

    @on(msg.CreateFinished)
    def _created(self) -> None:
        if self._quit_after_create:
            self.exit(None)

    def action_tab(self, tab: str) -> None:
        self.query_one(TabbedContent).active = tab
        self._focus_table(tab)

    @on(TabbedContent.TabActivated)
    def _tab_activated(self, event: TabbedContent.TabActivated) -> None:
        if not self.screen_stack:  # the app is closing: a tab mounted late says so after the last screen
            return
        if self.focused is None or event.pane not in self.focused.ancestors:  # a click on a tab
            self._focus_table(event.pane.id)

    def _focus_table(self, tab: str | None) -> None:
        # At once, not with widget.focus() (a callback run after the keys already queued): in a
        # terminal, a key typed right after `1` would go to the other, now hidden, tab's table.
        found = self.query("#env-table" if tab == "envs" else "#recipe-table")
        if not found:  # the recipes tab is mounted after the first frame: `2` pressed before it
            self.screen.set_focus(None)  # not the hidden tab's filter (Textual's pick): a key typed now goes nowhere
            self.call_after_refresh(self._focus_table, tab)
            return
        table = found.first()
        table.screen.set_focus(table)  # its own screen: a modal may be on top

    def action_help(self) -> None:
        from cuenv.tui.screens.modals import HelpScreen

        self.push_screen(HelpScreen())

    def action_toggle_dark(self) -> None:
        self.theme = "textual-light" if self.current_theme.dark else "textual-dark"

    async def action_quit(self) -> None:
        recipes = next(iter(self.query(RecipesView)), None)
        if recipes is not None and recipes.creating:  # stop the build first: quitting must not strand a half-built prefix
            self._quit_after_create = True
            recipes.action_cancel()
            self.notify("Stopping the running create first...", severity="warning")
            return
        self.exit(None)
