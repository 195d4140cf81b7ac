"""The environments view: a filterable, sortable table, a detail pane and the per-environment actions.

The first screen (the rows and the first row's detail) is read on mount, before the first frame
(see on_mount). Every later blocking call (reading metadata, verdicts, removing, the smoke test,
export, lock, doctor) runs in a thread worker that posts a typed message; the UI thread only renders.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical, VerticalScroll
from textual.widgets import DataTable, Input, RichLog, Static
from textual.worker import get_current_worker

from cuenv.tui import messages as msg
from cuenv.tui.models import ENV_COLUMNS, detail_text, filter_rows, sort_rows
from cuenv.tui.widgets.common import WorkerErrors, current_key, fill_table, line, styled

if TYPE_CHECKING:
    from cuenv.envs.changeplan import ChangePlan
    from cuenv.machine.model import Machine
    from cuenv.tui.services import Services

T = TypeVar("T")


class EnvTable(DataTable):
    """The environments table. Leaving the app is on enter, never on a letter: a word typed at the
    table (the filter is on `/`) must not end the session (issue 18); letters open a dialog or touch
    nothing. DataTable's own enter (select the row) is shown in the footer as Use."""

    BINDINGS = [Binding("enter", "select_cursor", "Use", key_display="enter")]


class EnvironmentsView(WorkerErrors, Vertical):
    BINDINGS = [
        Binding("x,delete", "remove", "Remove", key_display="x"),
        Binding("s", "smoke", "Test"),
        Binding("e", "export", "Export"),
        Binding("l", "lock", "Lock"),
        Binding("d", "doctor", "Doctor"),
        Binding("a", "change('add')", "Add pkg", show=False),
        Binding("u", "change('remove')", "Uninstall pkg", show=False),
        Binding("o", "sort", "Sort"),
        Binding("O", "sort(True)", "Reverse", show=False),
        Binding("slash", "filter", "Filter", key_display="/", show=False),
        # In the filter every printable key is text (names hold digits: cuda-12.1); enter (the
        # Input's submit), down and escape bring the keys back to the table. Input binds neither
        # down nor escape, so they reach this view from it.
        Binding("down", "to_table", "Back to the table", show=False),
        Binding("escape", "clear_filter", "Clear the filter", show=False),
        Binding("r", "refresh", "Refresh", show=False),
    ]

    def __init__(self, services: Services, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.services = services
        self.rows: list = []
        self.sort_column: str | None = None
        self.sort_reverse = False
        self.loaded = False
        self.generation = 0  # of the latest load: an older worker's result is stale
        self.detail_for: str | None = None  # the row whose detail is shown or being read
        self.reading_now = False  # on the UI thread, for the first frame (on_mount)

    def compose(self) -> ComposeResult:
        yield Input(placeholder="/ to filter: words that narrow the list", id="env-filter", compact=True)
        # No `loading` indicator on the table: Textual makes a loading widget unfocusable, and the
        # table must hold the keys from the first frame (the app focuses it on mount).
        yield EnvTable(id="env-table", cursor_type="row", zebra_stripes=True)
        with VerticalScroll(id="env-detail"):
            yield Static("Reading environments...", id="env-detail-text")
        yield RichLog(id="env-log", classes="log hidden", wrap=True, min_width=20)

    def on_mount(self) -> None:
        """Read the first screen (the rows and the first row's detail) now, before the first frame.

        It is some 30 ms of work, but in workers each of its file reads waited for the GIL while the UI
        thread built the screen (50 environments: 15 ms of CPU took 280 ms), and each answer cost
        another layout (issue 18: first paint under 1 s). Later reads (r, after a create or a remove,
        moving the cursor) are workers."""
        self.generation += 1
        self.reading_now = True
        try:
            rows = self._now("Reading environments", self.services.environments)
            if rows is not None:
                self._loaded(msg.EnvironmentsLoaded(rows, self.generation))
        finally:
            self.reading_now = False

    def _now(self, title: str, read: Callable[[], T]) -> T | None:
        """``read()`` on the UI thread; a failure is reported as a worker's would be."""
        try:
            return read()
        except Exception as exc:  # noqa: BLE001 - as a worker's failure: one modal, never a traceback
            self.post_message(msg.WorkerFailed(title, exc))
            return None

    # -- loading -------------------------------------------------------------------------------------------
    def load(self) -> None:
        """Re-read the environments in the background; only the latest read is shown."""
        self.generation += 1
        self._read(self.generation)

    @work(thread=True, exclusive=True, exit_on_error=False, group="envs", description="Reading environments")
    def _read(self, generation: int) -> None:
        # An exclusive worker is cancelled, not stopped: an older read can still finish after a
        # newer one (a create, then a remove), so the message says which load it answers.
        self.post_message(msg.EnvironmentsLoaded(self.services.environments(), generation))

    @on(msg.EnvironmentsLoaded)
    def _loaded(self, message: msg.EnvironmentsLoaded) -> None:
        if message.generation != self.generation:
            return
        self.rows = message.rows
        self.loaded = True
        self.detail_for = None  # new data: the shown row's detail is read again
        self.refill()

    def forget(self, name: str) -> None:
        """Drop a removed environment from the table now, before the reload confirms it: a `u`
        pressed meanwhile must not pick it."""
        self.rows = [r for r in self.rows if r.name != name]
        self.refill()

    def shown(self) -> list:
        rows = filter_rows(self.rows, self.query_one("#env-filter", Input).value)
        return sort_rows(rows, self.sort_column, self.sort_reverse)

    def refill(self) -> None:
        table = self.query_one(DataTable)
        fill_table(table, ENV_COLUMNS, self.shown(), state="status")  # the cursor stays on its name
        if not table.row_count:
            empty = "No environments yet: press 2 for the recipes and c to create one." if not self.rows else \
                "No environment matches the filter."
            self.query_one("#env-detail-text", Static).update(empty)
        else:
            self.show_detail(self.selected)

    @property
    def selected(self) -> str | None:
        return current_key(self.query_one(DataTable))

    @on(DataTable.RowHighlighted, "#env-table")
    def _highlighted(self, event: DataTable.RowHighlighted) -> None:
        self.show_detail(event.row_key.value if event.row_key else None)

    def show_detail(self, name: str | None) -> None:
        # A refill and the cursor's RowHighlighted both ask for the same row: a thread worker cannot be
        # stopped once it runs, so a second read of the shown (or loading) row would only take CPU.
        if not name or name == self.detail_for:
            return
        self.detail_for = name
        machine = getattr(self.app, "machine", None)  # None while it is detected, or when that failed
        if not self.reading_now:
            self.load_detail(name, machine)
            return
        lines = self._now("Reading the environment", lambda: detail_text(self.services.detail(name, machine)))
        if lines is not None:
            self._detail(msg.DetailLoaded(name, lines))

    def machine_known(self) -> None:
        """The machine was detected after the first frame: read the shown detail again, with kernels."""
        self.detail_for = None
        self.show_detail(self.selected)

    @work(thread=True, exclusive=True, exit_on_error=False, group="detail", description="Reading the environment")
    def load_detail(self, name: str, machine: Machine | None) -> None:
        lines = detail_text(self.services.detail(name, machine))
        if not get_current_worker().is_cancelled:
            self.post_message(msg.DetailLoaded(name, lines))

    @on(msg.DetailLoaded)
    def _detail(self, message: msg.DetailLoaded) -> None:
        if message.name == self.selected:
            self.query_one("#env-detail-text", Static).update(styled(message.lines))

    # -- filter and sort -------------------------------------------------------------------------------
    @on(Input.Changed, "#env-filter")
    def _filter(self) -> None:
        if self.loaded:
            self.refill()

    def action_filter(self) -> None:
        self.query_one("#env-filter", Input).focus()

    @on(Input.Submitted, "#env-filter")
    def _filter_done(self) -> None:
        self.action_to_table()  # the filter is kept

    def action_to_table(self) -> None:
        table = self.query_one(DataTable)
        table.screen.set_focus(table)  # now, not after the next key (see CuenvApp._focus_table)

    def action_clear_filter(self) -> None:
        self.query_one("#env-filter", Input).value = ""
        self.action_to_table()

    @on(DataTable.HeaderSelected, "#env-table")
    def _header(self, event: DataTable.HeaderSelected) -> None:
        column = event.column_key.value
        self.sort_reverse = not self.sort_reverse if column == self.sort_column else False
        self.sort_column = column
        self.refill()

    def action_sort(self, reverse: bool = False) -> None:
        keys = [k for k, _ in ENV_COLUMNS]
        if reverse:
            self.sort_reverse = not self.sort_reverse
        else:
            at = keys.index(self.sort_column) + 1 if self.sort_column in keys else 0
            self.sort_column, self.sort_reverse = keys[at % len(keys)], False
        self.app.notify(f"Sorted by {dict(ENV_COLUMNS)[self.sort_column or 'name']}"
                        + (" (reversed)" if self.sort_reverse else ""), timeout=2)
        self.refill()

    def action_refresh(self) -> None:
        self.load()

    # -- actions ----------------------------------------------------------------------------------------
    def _need_selection(self) -> str | None:
        name = self.selected
        if name is None:
            self.app.notify("No environment selected.", severity="warning")
        return name

    @on(DataTable.RowSelected, "#env-table")
    def _row_selected(self) -> None:  # enter on the table: the table's own binding, then this
        self.action_use()

    def action_use(self) -> None:
        name = self._need_selection()
        if name:
            self.app.exit(name)

    def action_remove(self) -> None:
        from cuenv.tui.screens.modals import ConfirmScreen

        name = self._need_selection()
        if not name:
            return
        row = next((r for r in self.rows if r.name == name), None)
        size = f" ({row.size})" if row and row.size_bytes else ""

        def answered(yes: bool | None) -> None:
            if yes:
                self.remove_env(name)
            else:  # enter on the focused No, or esc: say so, never close without a word (issue 26)
                self.post_message(msg.ActionDone(f"Kept {name}; nothing removed."))

        if self.services.environ.get("CUENV_ACTIVE") == name:  # as `cuenv remove` refuses without --force (issue 17 §5)
            self.app.push_screen(ConfirmScreen(
                f"{name} is active in the shell that started cuenv. Remove it anyway{size}?",
                f"This deletes $CUENV_HOME/envs/{name}; then run `cuenv deactivate` in that shell.", yes="Remove"), answered)
            return
        self.app.push_screen(ConfirmScreen(f"Remove environment {name}{size}?",
                                           f"This deletes $CUENV_HOME/envs/{name}.", yes="Remove"), answered)

    @work(thread=True, exclusive=True, exit_on_error=False, group="action", description="Removing")
    def remove_env(self, name: str) -> None:  # not `remove`: that is Widget.remove
        self.services.remove(name)
        self.post_message(msg.EnvironmentsChanged(removed=name))  # first: the row goes before the notice shows
        self.post_message(msg.ActionDone(f"Removed {name}."))

    def action_smoke(self) -> None:
        name = self._need_selection()
        if name:
            log = self.query_one("#env-log", RichLog)
            log.remove_class("hidden")
            log.write(line(f"$ cuenv test {name}  (the recipe's smoke test, inside the environment)", "bold"))
            self.smoke(name)

    @work(thread=True, exclusive=True, exit_on_error=False, group="action", description="Running the smoke test")
    def smoke(self, name: str) -> None:
        code, output = self.services.smoke(name)
        for text in output.splitlines():
            self.post_message(msg.LogLine(text))
        if code == 0:
            self.post_message(msg.LogLine(f"smoke test of {name} passed", "$success"))
            self.post_message(msg.ActionDone(f"Smoke test of {name} passed."))
        else:
            self.post_message(msg.LogLine(f"smoke test of {name} failed (exit {code})", "$error"))
            self.post_message(msg.ActionDone(f"Smoke test of {name} failed (exit {code}); see the log.", "error"))

    @on(msg.LogLine)
    def _log(self, message: msg.LogLine) -> None:
        log = self.query_one("#env-log", RichLog)
        log.write(line(message.text, message.style))

    def action_export(self) -> None:
        from cuenv.export import FORMATS
        from cuenv.tui.screens.modals import ExportScreen

        name = self._need_selection()
        if not name:
            return

        def chosen(answer: tuple[str, str] | None) -> None:
            if answer:
                self.export(name, answer[0], Path(answer[1]).expanduser())

        self.app.push_screen(ExportScreen(name, list(FORMATS)), chosen)

    @work(thread=True, exclusive=True, exit_on_error=False, group="action", description="Exporting")
    def export(self, name: str, fmt: str, out_dir: Path) -> None:
        from cuenv.errors import CuenvError

        try:
            written = self.services.export(name, fmt, out_dir)
        except CuenvError as exc:  # a format not built yet, or a file in the way: a notification
            self.post_message(msg.ActionDone(exc.message + (f" {exc.hint}" if exc.hint else ""), "error"))
            return
        self.post_message(msg.ActionDone(f"Exported {name} as {fmt}: " + ", ".join(written)))

    def action_lock(self) -> None:
        from cuenv.tui.screens.modals import PathScreen

        name = self._need_selection()
        if not name:
            return

        def chosen(path: str | None) -> None:
            if path:
                self.write_lock(name, Path(path).expanduser())

        self.app.push_screen(PathScreen(f"Write a lockfile of {name} to:", "cuenv.lock"), chosen)

    @work(thread=True, exclusive=True, exit_on_error=False, group="action", description="Writing the lockfile")
    def write_lock(self, name: str, path: Path, force: bool = False) -> None:  # not `lock`: that is Widget.lock
        from cuenv.lock.io import OverwriteRefused

        try:
            self.services.lock(name, path, force=force)
        except OverwriteRefused as exc:  # someone's file is there: ask, as the command line does (issue 26 §4)
            self.app.call_from_thread(self._ask_overwrite, name, path, exc.problem)
            return
        self.post_message(msg.EnvironmentsChanged())  # the detail's lock status follows the new file
        self.post_message(msg.ActionDone(f"Wrote the lockfile of {name} to {path}."))

    def _ask_overwrite(self, name: str, path: Path, problem: str) -> None:
        from cuenv.tui.screens.modals import ConfirmScreen

        def answered(yes: bool | None) -> None:
            if yes:
                self.write_lock(name, path, True)
            else:
                self.post_message(msg.ActionDone(f"Kept {path}; nothing written."))

        self.app.push_screen(ConfirmScreen(f"Overwrite {path}?", problem[0].upper() + problem[1:] + ".", yes="Overwrite"),
                             answered)

    def action_change(self, verb: str) -> None:
        """Add or uninstall packages of the highlighted environment: asked, solved and checked, shown, then
        installed only on Yes (issue 26 §5; the same core as `cuenv add`). In a conda environment the
        dialog's "PyPI (pip layer)" switch makes it `cuenv add --pypi`."""
        from cuenv.tui.screens.modals import PackagesScreen

        name = self._need_selection()
        if not name:
            return
        row = next((r for r in self.rows if r.name == name), None)

        def chosen(answer: tuple[list[str], bool] | None) -> None:
            if answer:
                self.plan_change(name, verb, *answer)

        what = "Add to" if verb == "add" else "Uninstall from"
        self.app.push_screen(PackagesScreen(f"{what} {name} (package names or requirements):",
                                            pip_layer=bool(row and row.conda)), chosen)

    @work(thread=True, exclusive=True, exit_on_error=False, group="action", description="Checking the change")
    def plan_change(self, name: str, verb: str, packages: list[str], pypi: bool = False) -> None:
        from cuenv.errors import CuenvError

        try:
            planned = self.services.plan_change(name, verb, packages, pypi=pypi)
        except CuenvError as exc:  # a refusal: its cause and way forward in the error modal, nothing installed
            self.post_message(msg.WorkerFailed("Checking the change", exc))
            return
        if planned.empty:
            first = f" (recorded first, installed outside cuenv: {', '.join(planned.recorded)})" if planned.recorded else ""
            self.post_message(msg.ActionDone(f"Nothing to change in {name}: {', '.join(packages)} already there{first}."))
            return
        self.app.call_from_thread(self._confirm_change, planned)

    def _confirm_change(self, planned: ChangePlan) -> None:
        from cuenv.tui.screens.modals import ConfirmScreen

        def answered(yes: bool | None) -> None:
            if yes:
                self.apply_change(planned)

        warnings = "".join(f"\nwarning: {f.message}" for f in planned.findings)
        first = [f"Recorded first, installed outside cuenv: {', '.join(planned.recorded)}."] if planned.recorded else []
        yes = "Uninstall" if planned.verb == "remove" else "Install" if planned.install else "Record"
        self.app.push_screen(ConfirmScreen(f"Change {planned.name}?", "\n".join([*first, *planned.lines()]) + warnings,
                                           yes=yes), answered)

    @work(thread=True, exclusive=True, exit_on_error=False, group="action", description="Changing the environment")
    def apply_change(self, planned: ChangePlan) -> None:
        self.post_message(msg.ActionDone(f"Changing {planned.name}: {'; '.join(planned.lines())} ..."))
        self.services.apply_change(planned)
        self.post_message(msg.EnvironmentsChanged())
        self.post_message(msg.ActionDone(f"Changed {planned.name}: {'; '.join(planned.lines())}."))

    def action_doctor(self) -> None:
        self.doctor(self.selected)

    @work(thread=True, exclusive=True, exit_on_error=False, group="action", description="Running cuenv doctor")
    def doctor(self, name: str | None) -> None:
        from cuenv.tui.screens.modals import DoctorScreen

        found = self.services.doctor(name)
        self.app.call_from_thread(self.app.push_screen, DoctorScreen(name, found.checks))
