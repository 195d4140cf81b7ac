"""The header line: this machine's driver, newest CUDA and GPUs (loaded by a worker)."""

from __future__ import annotations

from textual.widgets import Static

from cuenv.tui.models import machine_summary


class MachineBar(Static):
    DEFAULT_CLASSES = "machine-bar"

    def on_mount(self) -> None:
        self.update("cuenv | detecting the driver and GPUs...")

    def show(self, machine) -> None:  # noqa: ANN001 - cuenv.machine.model.Machine
        self.update("cuenv | " + machine_summary(machine).line)
