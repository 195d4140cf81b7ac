"""Which file names the kernel scan opens. Imports nothing heavy: `cuenv check` asks it of every TARGET."""

from __future__ import annotations

import re
from typing import Final

# Bare .cubin files are left out: a program loads the one matching its GPU (cuModuleLoad), so one
# cubin per architecture is normal and none of them alone says what the program runs on.
_SO_NAME: Final = re.compile(r"\.so(\.\d+)*$|\.fatbin$")


def looks_binary(name: str) -> bool:
    """Shared objects (libx.so, libx.so.12, _C.cpython-311-x86_64-linux-gnu.so) and fat binary files."""
    return bool(_SO_NAME.search(name))
