"""Plain text tables for people; --json carries the same rows as data."""

from __future__ import annotations

TYPE_CHECKING = False  # no `typing` at run time: the start-up path does without it (issue 29)
if TYPE_CHECKING:
    from typing import Sequence


def render(headers: Sequence[str], rows: Sequence[Sequence[object]]) -> str:
    """Every cell on one line: a name from a shared file (a lock's or archive's recipe name) holds no line
    break or escape sequence once shown (cuenv.trust.shown.terminal_safe, issue 31)."""
    from cuenv.trust.shown import terminal_safe

    cells = [[str(h) for h in headers]] + [["-" if c is None or c == "" else terminal_safe(c) for c in r] for r in rows]
    widths = [max(len(r[i]) for r in cells) for i in range(len(headers))]
    lines = ["  ".join(c.ljust(w) for c, w in zip(r, widths)).rstrip() for r in cells]
    return "\n".join(lines)


def human_size(n: int | None) -> str:
    if n is None:
        return "-"
    size = float(n)
    for unit in ("B", "KB", "MB", "GB", "TB"):
        if size < 1000 or unit == "TB":
            return f"{size:.0f} {unit}" if unit == "B" else f"{size:.1f} {unit}"
        size /= 1000
    return f"{n} B"
