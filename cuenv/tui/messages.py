"""Typed messages that workers post to the UI thread (STYLE.md §9: data in, messages out)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from textual.message import Message
from textual.notifications import SeverityLevel

if TYPE_CHECKING:
    from cuenv.engines.events import Event
    from cuenv.machine.model import Machine


class MachineDetected(Message):
    """The probe the first frame did not wait for (CuenvApp.on_load) has answered."""

    def __init__(self, machine: Machine) -> None:
        super().__init__()
        self.machine = machine


class EnvironmentsLoaded(Message):
    """The rows read by the environments view's load number ``generation``."""

    def __init__(self, rows: list, generation: int) -> None:
        super().__init__()
        self.rows = rows
        self.generation = generation


class DetailLoaded(Message):
    def __init__(self, name: str, lines: list[tuple[str, str]]) -> None:
        super().__init__()
        self.name = name
        self.lines = lines


class RecipesLoaded(Message):
    def __init__(self, rows: list, warnings: list[str]) -> None:
        super().__init__()
        self.rows = rows
        self.warnings = warnings


class CreateProgress(Message):
    def __init__(self, event: Event) -> None:
        super().__init__()
        self.event = event


class CreateFinished(Message):
    """outcome: created | cancelled | failed (the error then opens a modal)."""

    def __init__(self, name: str, outcome: str) -> None:
        super().__init__()
        self.name = name
        self.outcome = outcome


class EnvironmentsChanged(Message):
    """An action added or removed an environment: reload the table (``removed`` leaves it at once)."""

    def __init__(self, removed: str | None = None) -> None:
        super().__init__()
        self.removed = removed


class LogLine(Message):
    def __init__(self, text: str, style: str = "") -> None:
        super().__init__()
        self.text = text
        self.style = style


class ActionDone(Message):
    """A finished action's one-line result, shown as a notification."""

    def __init__(self, text: str, severity: SeverityLevel = "information") -> None:
        super().__init__()
        from cuenv.trust.shown import output  # as the CLI says it: no credential, no escape sequence (issue 31)

        self.text = output(text)
        self.severity = severity


class WorkerFailed(Message):
    """A worker raised: the app opens a modal with the message and its fix."""

    def __init__(self, title: str, error: BaseException) -> None:
        super().__init__()
        self.title = title
        self.error = error
