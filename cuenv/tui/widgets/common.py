"""Small pieces the views share: styled lines, worker errors as messages, a status cell."""

from __future__ import annotations

from typing import TYPE_CHECKING

from textual.content import Content
from textual.message import Message
from textual.worker import Worker, WorkerState

from cuenv.tui.messages import WorkerFailed
from cuenv.tui.models import STATUS_STYLE


def styled(lines: list[tuple[str, str]]) -> Content:
    """(style, text) lines from cuenv.tui.models as one Content; styles are theme variables."""
    # Plain lines name $foreground too: left unstyled, a Static's text sometimes took the
    # background colour when rendered early (seen in headless screenshots with Textual 8.2).
    return Content("\n").join(Content.styled(text, _coloured(style)) for style, text in lines)


def line(text: str, style: str = "") -> Content:
    """One piece of text in a theme style; plain text is $foreground (see styled)."""
    return Content.styled(text, _coloured(style))


def _coloured(style: str) -> str:
    return style if "$" in style else f"$foreground {style}".strip()


def status_cell(state: str, text: str) -> Content:
    return Content.styled(text, _coloured(STATUS_STYLE.get(state, "")))


class WorkerErrors:
    """Mixin for widgets that own workers: a failed worker becomes a WorkerFailed message (a modal)."""

    if TYPE_CHECKING:  # provided by the Widget or App this is mixed into
        def post_message(self, message: Message) -> bool: ...

    def on_worker_state_changed(self, event: Worker.StateChanged) -> None:
        if event.state == WorkerState.ERROR and event.worker.error is not None:
            self.post_message(WorkerFailed(event.worker.description or event.worker.name, event.worker.error))


def fill_table(table, columns, rows, *, state: str) -> None:
    """Replace a DataTable's rows, keeping the cursor on the same row key (or the nearest row: see
    cuenv.tui.models.cursor_after); the last cell of each row is coloured by ``getattr(row, state)``.

    Every column gets its width here, from its title and its longest text, instead of DataTable's own
    sizing of new rows, which runs later: after a create or remove it sometimes left the columns as
    wide as their titles (names cut to `brok`, `cuda`: seen in CI's snapshot after a remove). It also
    sized a coloured cell by nothing.
    """
    from rich.cells import cell_len

    from cuenv.tui.models import cursor_after

    kept, at = current_key(table), table.cursor_row
    texts = [list(row.cells()) for row in rows]
    widths = [max([cell_len(title)] + [cell_len(str(cells[i])) for cells in texts]) for i, (_, title) in enumerate(columns)]
    table.clear(columns=True)  # the cursor jumps to row 0 here...
    for (key, title), width in zip(columns, widths):
        table.add_column(title, key=key, width=width)
    for row, cells in zip(rows, texts):
        cells[-1] = status_cell(getattr(row, state), cells[-1])
        table.add_row(*cells, key=row.name)
    if rows:  # ...and comes back, within this one UI-thread step: no key can land in between
        table.move_cursor(row=cursor_after([r.name for r in rows], kept, at))


def current_key(table) -> str | None:
    """The key of the row under a DataTable's cursor, or None for an empty table."""
    from textual.widgets.data_table import CellDoesNotExist

    try:
        return table.coordinate_to_cell_key(table.cursor_coordinate).row_key.value if table.row_count else None
    except CellDoesNotExist:  # rows but no columns: a table being filled
        return None
