"""The header line: this machine's driver, newest CUDA and GPUs (loaded by a worker)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from textual.widgets import Static

from cuenv.tui.models import machine_summary

if TYPE_CHECKING:
    from cuenv.machine.model import Machine


class MachineBar(Static):
    DEFAULT_CLASSES = "machine-bar"

    def on_mount(self) -> None:
        self.show(getattr(self.app, "machine", None))  # known on load, or detected by a worker (CuenvApp)

    def show(self, machine: Machine | None) -> None:
        if machine is not None:
            self.update("cuenv | " + machine_summary(machine).line)
        elif getattr(self.app, "machine_failed", False):
            self.update("cuenv | the machine was not detected")
        else:
            self.update("cuenv | detecting the driver and GPUs...")
