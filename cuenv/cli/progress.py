"""Progress for long operations: one rewritten status line on a terminal, plain lines otherwise."""

from __future__ import annotations

import sys
import time
from typing import TextIO


class Progress:
    """Callable ``(event, detail)`` handed to engines; renders on stderr, never on stdout."""

    def __init__(self, stream: TextIO | None = None, *, quiet: bool = False) -> None:
        self.stream = stream or sys.stderr
        self.quiet = quiet
        self.tty = self.stream.isatty()
        self.started = time.monotonic()
        self._width = 0

    def __call__(self, event: str, detail: str = "") -> None:
        if self.quiet:
            return
        text = f"{event}: {detail}" if detail else event
        if self.tty:
            elapsed = time.monotonic() - self.started
            line = f"[{elapsed:5.1f}s] {text}"[:120]
            pad = max(0, self._width - len(line))
            self.stream.write("\r" + line + " " * pad)
            self._width = len(line)
        else:
            self.stream.write(text + "\n")
        self.stream.flush()

    def note(self, text: str) -> None:
        """A line that stays (a warning), printed above the status line."""
        self.done()
        self.stream.write(text + "\n")
        self.stream.flush()

    def done(self) -> None:
        if self.tty and self._width and not self.quiet:
            self.stream.write("\r" + " " * self._width + "\r")
            self.stream.flush()
            self._width = 0
