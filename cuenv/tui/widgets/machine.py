"""The header line: this machine's driver, newest CUDA and GPUs (loaded by a worker)."""

from __future__ import annotations

from textual.widgets import Static

from cuenv.tui.models import machine_summary


class MachineBar(Static):
    DEFAULT_CLASSES = "machine-bar"

    def on_mount(self) -> None:
        machine = getattr(self.app, "machine", None)  # read on load (CuenvApp.on_load)
        self.update("cuenv | " + (machine_summary(machine).line if machine is not None else "the machine was not detected"))
