"""Progress for long operations, on stderr: a live panel on a terminal, plain lines otherwise.

On a terminal (rich, which Textual brings, draws it): the step with a clock that moves on its own,
one line per download in flight with its size and time, and the total so far with rate and time
left (issue 18: a 5.8 GB create once showed one line whose timer never moved). Not a terminal, or
--json: one plain line per step and per finished download, nothing rewritten. -q: nothing; -v:
also every line the engine's tool prints. NO_COLOR and FORCE_COLOR are honoured (rich reads them).
"""

from __future__ import annotations

import sys

from cuenv.engines.events import Chunk, Download, Downloaded, Event, Notice, Output, Step, Tick
from cuenv.engines.progress import Transfers, clock, human_bytes, summary

TYPE_CHECKING = False  # no `typing` at run time: every create and change draws its progress here (issue 29)
if TYPE_CHECKING:
    from collections.abc import Mapping
    from typing import Any, TextIO

    from rich.console import Console
    from rich.table import Table

_SHOWN_ACTIVE = 4  # downloads listed at once; more are counted


class Progress:
    """The cuenv.engines.events.Progress handed to engines: each typed event drawn, or said as a line."""

    def __init__(self, stream: TextIO | None = None, *, quiet: bool = False, verbose: int = 0,
                 environ: Mapping[str, str] | None = None, notes: bool | None = None) -> None:
        self.stream = stream or sys.stderr
        self.quiet = quiet
        self.notes = not quiet if notes is None else notes  # --json keeps its warnings on stderr; -q does not
        self.verbose = verbose
        self.environ = environ
        self.transfers = Transfers()
        self.tty = self.stream.isatty()
        self._live: Any = None

    # -- events ----------------------------------------------------------------------------------
    def __call__(self, event: Event) -> None:
        if self.quiet:
            return
        if isinstance(event, Notice):
            self.note(f"warning: {event.text}")
            return
        self.transfers.update(event)
        if isinstance(event, Tick):
            return  # the live panel redraws itself; plain output has nothing new to say
        if isinstance(event, Output):
            if self.verbose > 0 and event.line.strip():
                self._line(f"  | {event.line}", style="dim")
            return
        if self.tty:
            self._start()
            self._live.update(self._panel())
        else:
            text = self._plain(event)
            if text:
                self._line(text)

    def note(self, text: str) -> None:
        """A line that stays (a warning), printed above the live panel."""
        if self.notes:
            self._line(text)

    def done(self) -> None:
        if self._live is not None:
            self._live.stop()
            self._live = None

    # -- drawing -----------------------------------------------------------------------------------
    def _console(self) -> Console:
        from rich.console import Console

        environ = dict(self.environ) if self.environ is not None else None
        return Console(file=self.stream, highlight=False, _environ=environ)

    def _start(self) -> None:
        if self._live is None:
            from rich.live import Live

            self._live = Live(self._panel(), console=self._console(), refresh_per_second=4, transient=True,
                              get_renderable=self._panel)
            self._live.start()

    def _line(self, text: str, style: str = "") -> None:
        from cuenv.trust.shown import output

        text = output(text)  # engine events name URLs (a mirror's token) and packages from shared files
        if self._live is not None:
            self._live.console.print(text, style=style or None, markup=False, highlight=False, soft_wrap=True)
        else:
            self.stream.write(text + "\n")
            self.stream.flush()

    def _panel(self) -> Table:
        from rich.table import Table
        from rich.text import Text

        t = self.transfers
        grid = Table.grid(padding=(0, 1))
        grid.add_column(justify="right", style="bold")
        grid.add_column(overflow="ellipsis", no_wrap=True)
        grid.add_row(clock(t.elapsed), Text(f"{t.step}: {t.step_detail}" if t.step_detail else t.step))
        active = sorted(t.active, key=lambda i: -(i.size or 0))
        for item in active[:_SHOWN_ACTIVE]:
            got = f"{human_bytes(item.arrived)} of " if item.arrived else ""
            grid.add_row("", Text(f"downloading {item.name}  {got}{human_bytes(item.size)}  "
                                  f"({clock(t.clock() - item.started)})", style="cyan"))
        if len(active) > _SHOWN_ACTIVE:
            grid.add_row("", Text(f"... and {len(active) - _SHOWN_ACTIVE} more downloads", style="cyan"))
        if t.items:
            grid.add_row("", Text(f"{len(t.finished)} downloaded: {summary(t)}", style="green"))
        return grid

    def _plain(self, event: Step | Download | Chunk | Downloaded) -> str:
        t = self.transfers
        if isinstance(event, Chunk):
            return ""
        if isinstance(event, Download):
            return f"download: {event.package} ({human_bytes(event.size)})" if event.size else f"download: {event.package}"
        if isinstance(event, Downloaded):
            return f"downloaded: {event.package} [{clock(t.elapsed)}] {len(t.finished)} done, {summary(t)}"
        if event.name == "install" and event.nbytes:
            return f"install: {event.detail}, up to {human_bytes(event.nbytes)} to download"
        return f"{event.name}: {event.detail}" if event.detail else event.name


def for_command(ctx: Any) -> Progress:
    """The progress of a command: none with -q or --json (stdout is the answer), warnings and notes on
    stderr unless -q; -v adds the tools' output (ctx: a cuenv.cli.main.Context)."""
    return Progress(quiet=ctx.verbosity < 0 or ctx.json, verbose=ctx.verbosity, environ=ctx.environ,
                    notes=ctx.verbosity >= 0)
