"""This computer's CPU architecture and C library: what a machine record says besides the driver.

Apart from cuenv.machine.probes (which loads logging, shutil and the NVIDIA tools' parsers): `check`
and `info` with CUENV_DRIVER and CUENV_GPUS need only these two (start-up, issue 29).
"""

from __future__ import annotations

import os


def arch() -> str:
    """``x86_64``, ``aarch64``: what ``platform.machine()`` answers, without importing ``platform``."""
    try:
        return os.uname().machine or "unknown"
    except AttributeError:  # no os.uname (Windows)
        import platform

        return platform.machine() or "unknown"


def glibc() -> str | None:
    try:
        text = os.confstr("CS_GNU_LIBC_VERSION")  # "glibc 2.36"
    except (AttributeError, ValueError, OSError):
        return None
    return text.split()[-1] if text else None
