"""The header line: this machine's driver, newest CUDA and GPUs (loaded by a worker)."""

from __future__ import annotations

from textual.widgets import Static

from cuenv.tui.models import machine_summary


class MachineBar(Static):
    DEFAULT_CLASSES = "machine-bar"

    def on_mount(self) -> None:
        self.show(getattr(self.app, "machine", None))  # known on load, or detected by a worker (CuenvApp)

    def show(self, machine) -> None:  # noqa: ANN001 - cuenv.machine.model.Machine, or None
        if machine is not None:
            self.update("cuenv | " + machine_summary(machine).line)
        elif getattr(self.app, "machine_failed", False):
            self.update("cuenv | the machine was not detected")
        else:
            self.update("cuenv | detecting the driver and GPUs...")
