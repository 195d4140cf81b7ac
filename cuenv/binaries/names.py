"""Which file names the kernel scan opens. Imports nothing heavy: `cuenv check` asks it of every TARGET."""

from __future__ import annotations

import re

TYPE_CHECKING = False  # no `typing` at run time (issue 29)
if TYPE_CHECKING:
    from typing import Final

# Bare .cubin files are left out: a program loads the one matching its GPU (cuModuleLoad), so one
# cubin per architecture is normal and none of them alone says what the program runs on.
# Compiled on first use (by `re`'s own cache).
_SO_NAME: Final = r"\.so(\.\d+)*$|\.fatbin$"


def looks_binary(name: str) -> bool:
    """Shared objects (libx.so, libx.so.12, _C.cpython-311-x86_64-linux-gnu.so) and fat binary files."""
    return bool(re.search(_SO_NAME, name))
