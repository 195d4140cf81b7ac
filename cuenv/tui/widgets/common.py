"""Small pieces the views share: styled lines, worker errors as messages, a status cell."""

from __future__ import annotations

from textual.content import Content
from textual.worker import Worker, WorkerState

from cuenv.tui.messages import WorkerFailed
from cuenv.tui.models import STATUS_STYLE


def styled(lines: list[tuple[str, str]]) -> Content:
    """(style, text) lines from cuenv.tui.models as one Content; styles are theme variables."""
    parts = []
    for style, text in lines:
        parts.append(Content.styled(text, style) if style else Content(text))
    return Content("\n").join(parts)


def status_cell(state: str, text: str) -> Content:
    style = STATUS_STYLE.get(state, "")
    return Content.styled(text, style) if style else Content(text)


class WorkerErrors:
    """Mixin for widgets that own workers: a failed worker becomes a WorkerFailed message (a modal)."""

    def on_worker_state_changed(self, event: Worker.StateChanged) -> None:
        if event.state == WorkerState.ERROR and event.worker.error is not None:
            self.post_message(WorkerFailed(event.worker.description or event.worker.name, event.worker.error))
