"""The machine fingerprint that keys every cache of machine facts (detection, verdicts).

It changes when the driver changes (the kernel module's version line), on reboot (boot id),
or when an override variable changes. The shell hook computes the same string in shell code
(see shell/cuenv.sh), so a cached verdict can be reused without starting Python.
"""

from __future__ import annotations

from pathlib import Path

TYPE_CHECKING = False  # no `typing` at run time: the start-up path does without it (issue 29)
if TYPE_CHECKING:
    from typing import Final, Mapping

# The target machine of a GPU-less one (CUENV_TARGET_DRIVER and CUENV_TARGET_GPUS, cuenv.machine.overrides.read_target) changes verdicts too.
OVERRIDES: Final = ("CUENV_DRIVER", "CUENV_GPUS", "CONDA_OVERRIDE_CUDA", "CUENV_TARGET_DRIVER", "CUENV_TARGET_GPUS")


def _first_line(path: Path) -> str:
    try:
        with path.open(encoding="utf-8", errors="replace") as fh:
            return fh.readline().rstrip("\n")
    except OSError:
        return "-"


def fingerprint(environ: Mapping[str, str], root: Path = Path("/")) -> str:
    """``boot_id|driver line|`` and the OVERRIDES values joined by ``|`` (``-`` for a missing file)."""
    parts = [
        _first_line(root / "proc/sys/kernel/random/boot_id"),
        _first_line(root / "proc/driver/nvidia/version"),
        *(environ.get(name, "") for name in OVERRIDES),
    ]
    return "|".join(parts)
