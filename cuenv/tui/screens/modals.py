"""Modal screens: confirm, error (with the fix), create, export, a path, doctor's results, help.

Each one dismisses with plain data (a bool, a tuple, a path) that the calling view acts on.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Callable, Final, Sequence

from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.content import Content
from textual.screen import ModalScreen
from textual.widgets import Button, Input, Label, Select, Static, Switch

from cuenv.tui.models import STATUS_STYLE
from cuenv.tui.widgets.common import line

if TYPE_CHECKING:
    from cuenv.doctor.model import Check

_ENGINE_LABELS: Final = {"venv": "venv (uv, PyPI wheels)", "rattler": "rattler (embedded conda)"}

class _Modal(ModalScreen):
    BINDINGS = [Binding("escape", "dismiss_none", "Close")]

    def action_dismiss_none(self) -> None:
        self.dismiss(None)


class ConfirmScreen(_Modal):
    """A yes/no question whose yes is a button only: the focus starts on No, and no letter says yes,
    so a word typed at the table (x, then y...) never removes anything (issue 18)."""

    BINDINGS = [Binding("n,escape", "dismiss_none", "No"), Binding("left", "app.focus_previous", show=False),
                Binding("right", "app.focus_next", show=False)]

    def __init__(self, question: str, detail: str = "", *, yes: str = "Yes") -> None:
        super().__init__()
        self.question, self.detail, self.yes = question, detail, yes

    def compose(self) -> ComposeResult:
        with Vertical(classes="dialog"):
            yield Label(self.question, classes="title")
            if self.detail:
                yield Static(line(self.detail))
            with Horizontal(classes="buttons"):
                yield Button(self.yes, id="yes", variant="error")
                yield Button("Keep it (esc)", id="no")

    def on_mount(self) -> None:
        self.query_one("#no", Button).focus()

    @on(Button.Pressed)
    def _pressed(self, event: Button.Pressed) -> None:
        self.dismiss(event.button.id == "yes")


class ErrorScreen(_Modal):
    """An error as the CLI would say it: what failed, then the fix."""

    BINDINGS = [Binding("escape,enter,q", "dismiss_none", "Close")]

    def __init__(self, title: str, message: str, hint: str | None) -> None:
        super().__init__()
        from cuenv.trust.shown import output  # as the CLI says it: no credential, no escape sequence (issue 31)

        self.title_text, self.message, self.hint = title, output(message), (output(hint) if hint else hint)

    def compose(self) -> ComposeResult:
        with Vertical(classes="dialog error"):
            yield Label(self.title_text, classes="title")
            yield Static(line("error: ", "$error bold") + line(self.message), id="error-message")
            if self.hint:
                yield Static(line("fix: ", "bold") + line(self.hint), id="error-hint")
            with Horizontal(classes="buttons"):
                yield Button("Close (esc)", id="close", variant="primary")

    @on(Button.Pressed)
    def _pressed(self) -> None:
        self.dismiss(None)


class CreateScreen(_Modal):
    """Name and engine for a new environment from ``recipe``, with what it would download.

    ``size_of(engine)`` (blocking: it solves) runs in a worker whenever the engine changes, so the
    user sees the download before committing to it (issue 18)."""

    ENGINES = (("auto (the configured default)", ""), ("venv (uv, PyPI wheels)", "venv"),
               ("rattler (embedded conda)", "rattler"), ("conda", "conda"), ("mamba", "mamba"),
               ("micromamba", "micromamba"))

    def __init__(self, recipe: str, size_of: Callable[[str | None], str] | None = None) -> None:
        super().__init__()
        self.recipe = recipe
        self.size_of = size_of

    def compose(self) -> ComposeResult:
        with Vertical(classes="dialog"):
            yield Label(f"Create an environment from {self.recipe}", classes="title")
            yield Label("Name")
            yield Input(value=self.recipe.split("@")[0], id="create-name")
            yield Label("Engine")
            yield Select(self.ENGINES, value="", allow_blank=False, id="create-engine")
            yield Static(line("Download: working it out...", "$text-muted"), id="create-size")
            with Horizontal(classes="buttons"):
                yield Button("Create", id="go", variant="primary")
                yield Button("Cancel (esc)", id="cancel")

    def on_mount(self) -> None:
        self._solve_size(None)

    @on(Select.Changed, "#create-engine")
    def _engine_changed(self, event: Select.Changed) -> None:
        self._solve_size(str(event.value) or None)

    def _solve_size(self, engine: str | None) -> None:
        if self.size_of is None:
            self.query_one("#create-size", Static).display = False
            return
        self.query_one("#create-size", Static).update(line("Download: working it out...", "$text-muted"))
        size_of = self.size_of
        self.run_worker(lambda: self._sized(size_of, engine), thread=True, exclusive=True, group="size",
                        exit_on_error=False, description="Solving for the download size")

    def _sized(self, size_of: Callable[[str | None], str], engine: str | None) -> None:
        from cuenv.errors import CuenvError

        try:
            text = "Download: " + size_of(engine)
        except CuenvError as exc:  # no engine here, no solution: said, and Create still says why
            text = f"Download: unknown ({exc.message})"
        if self.is_attached:
            self.app.call_from_thread(self._show_size, text)

    def _show_size(self, text: str) -> None:
        if self.is_attached:
            self.query_one("#create-size", Static).update(line(text))

    @on(Input.Submitted)
    @on(Button.Pressed, "#go")
    def _go(self) -> None:
        name = self.query_one("#create-name", Input).value.strip()
        engine = self.query_one("#create-engine", Select).value
        self.dismiss((name, engine or None))

    @on(Button.Pressed, "#cancel")
    def _cancel(self) -> None:
        self.dismiss(None)


class ExportScreen(_Modal):
    def __init__(self, name: str, formats: Sequence[str]) -> None:
        super().__init__()
        self.env, self.formats = name, list(formats)

    def compose(self) -> ComposeResult:
        with Vertical(classes="dialog"):
            yield Label(f"Export {self.env}", classes="title")
            yield Label("Format")
            yield Select([(f, f) for f in self.formats], value=self.formats[0], allow_blank=False, id="export-format")
            yield Label("Into the folder")
            yield Input(value=f"{self.env}-export", id="export-dir")
            with Horizontal(classes="buttons"):
                yield Button("Export", id="go", variant="primary")
                yield Button("Cancel (esc)", id="cancel")

    def on_mount(self) -> None:
        self.query_one("#export-dir", Input).focus()  # enter exports; tab reaches the format

    @on(Input.Submitted)
    @on(Button.Pressed, "#go")
    def _go(self) -> None:
        folder = self.query_one("#export-dir", Input).value.strip()
        if folder:
            self.dismiss((str(self.query_one("#export-format", Select).value), folder))

    @on(Button.Pressed, "#cancel")
    def _cancel(self) -> None:
        self.dismiss(None)


class PathScreen(_Modal):
    def __init__(self, question: str, default: str) -> None:
        super().__init__()
        self.question, self.default = question, default

    def compose(self) -> ComposeResult:
        with Vertical(classes="dialog"):
            yield Label(self.question, classes="title")
            yield Input(value=self.default, id="path")
            with Horizontal(classes="buttons"):
                yield Button("Write", id="go", variant="primary")
                yield Button("Cancel (esc)", id="cancel")

    @on(Input.Submitted)
    @on(Button.Pressed, "#go")
    def _go(self) -> None:
        path = self.query_one("#path", Input).value.strip()
        if path:
            self.dismiss(path)

    @on(Button.Pressed, "#cancel")
    def _cancel(self) -> None:
        self.dismiss(None)


class PackagesScreen(_Modal):
    """Package names for `cuenv add` or `cuenv uninstall` of one environment (issue 26 §5). Dismissed with
    (the words, whether they are PyPI packages of a conda prefix's pip layer: `--pypi`). ``pip_layer``: a
    conda environment, whose dialog has the "PyPI (pip layer)" switch; a venv's packages are all PyPI's."""

    def __init__(self, question: str, *, pip_layer: bool = False) -> None:
        super().__init__()
        self.question = question
        self.pip_layer = pip_layer

    def compose(self) -> ComposeResult:
        with Vertical(classes="dialog"):
            yield Label(self.question, classes="title")
            yield Input(placeholder="numpy 'six>=1.16'", id="packages")
            if self.pip_layer:
                with Horizontal(classes="field"):
                    yield Switch(value=False, id="pypi")
                    yield Label("PyPI (pip layer): wheels installed by uv next to the conda packages")
            with Horizontal(classes="buttons"):
                yield Button("Check", id="go", variant="primary")
                yield Button("Cancel (esc)", id="cancel")

    @on(Input.Submitted)
    @on(Button.Pressed, "#go")
    def _go(self) -> None:
        import shlex

        try:
            words = shlex.split(self.query_one("#packages", Input).value)
        except ValueError:  # an unclosed quote: keep the dialog open to fix it
            return
        if words:
            self.dismiss((words, self.pip_layer and self.query_one("#pypi", Switch).value))

    @on(Button.Pressed, "#cancel")
    def _cancel(self) -> None:
        self.dismiss(None)


class DoctorScreen(_Modal):
    """`cuenv doctor`'s checks: status, what it saw, and the fix of each problem."""

    BINDINGS = [Binding("escape,q", "dismiss_none", "Close")]

    def __init__(self, name: str | None, checks: Sequence[Check]) -> None:
        super().__init__()
        self.env, self.checks = name, list(checks)

    def compose(self) -> ComposeResult:
        lines: list[Content] = []
        for c in self.checks:
            lines.append(line(f"{c.status:8}", STATUS_STYLE.get(c.status, "")) + line(c.name))
            for f in c.findings:
                lines.append(line(f"  {f.severity}: ", STATUS_STYLE.get(f.severity, "")) + line(f.message))
                if f.fix:
                    lines.append(line(f"    fix: {f.fix}"))
        with Vertical(classes="dialog wide"):
            yield Label("cuenv doctor" + (f" {self.env}" if self.env else ""), classes="title")
            with VerticalScroll():
                yield Static(Content("\n").join(lines) if lines else line("No checks reported."))
            with Horizontal(classes="buttons"):
                yield Button("Close (esc)", id="close", variant="primary")

    @on(Button.Pressed)
    def _pressed(self) -> None:
        self.dismiss(None)


HELP = """\
Environments tab (key 1)
  up/down  move            /      filter: words that narrow the list
  In the filter every key is text (12.1 too): enter or down: back to
  the table, the filter kept; esc: clear it and back.
  o / O    sort by the next column / reverse (or click a title)
  enter    use: leave, and activate it in your shell (the hook)
  x        remove (asks first)     s      run its smoke test
  e        export (pick a format)  l      lock (write a lockfile)
  d        doctor                  r      reload
  a        add packages (checked against its CUDA first, then asks)
  u        uninstall packages (asks first)
  Letters only open a dialog or run the smoke test: typing at the
  table never leaves the app and never removes anything.
Recipes tab (key 2)
  c, enter create an environment from the highlighted recipe
  esc      cancel a running create: its download or install stops at
           once, what was fully downloaded stays in the cache, and
           nothing half-built is left usable
Everywhere but in the filter
  1 2  tabs   ?  help   ctrl+t  light/dark   ctrl+p  commands
  q, ctrl+c  quit
enter on an environment hands its name to the shell hook
(eval "$(cuenv shell-init bash)"); without the hook, cuenv prints the
`cuenv use` line to run.
"""


class HelpScreen(_Modal):
    BINDINGS = [Binding("escape,q,question_mark", "dismiss_none", "Close")]

    def compose(self) -> ComposeResult:
        with Vertical(classes="dialog wide"):
            yield Label("cuenv tui: keys", classes="title")
            with VerticalScroll():
                yield Static(line(HELP), id="help-text")
            with Horizontal(classes="buttons"):
                yield Button("Close (esc)", id="close", variant="primary")

    @on(Button.Pressed)
    def _pressed(self) -> None:
        self.dismiss(None)
