"""The hook line in a shell's rc file, between marker lines (after conda's `conda init`)."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Final, Mapping

BEGIN: Final = "# >>> cuenv initialize >>>"
END: Final = "# <<< cuenv initialize <<<"


def hook_line(shell: str) -> str:
    if shell == "fish":
        return "command -q cuenv; and cuenv shell-init fish | source"
    return f'if command -v cuenv >/dev/null 2>&1; then eval "$(command cuenv shell-init {shell})"; fi'


def rc_path(shell: str, environ: Mapping[str, str]) -> Path:
    home = Path(environ.get("HOME") or os.path.expanduser("~"))
    if shell == "zsh":
        return Path(environ.get("ZDOTDIR") or home) / ".zshrc"
    if shell == "fish":
        return Path(environ.get("XDG_CONFIG_HOME") or home / ".config") / "fish" / "config.fish"
    return home / ".bashrc"


def remove_block(text: str) -> str:
    """``text`` without cuenv's block (every copy of it); other lines untouched."""
    out, inside = [], False
    for line in text.splitlines(keepends=True):
        if line.rstrip("\r\n") == BEGIN:
            inside = True
        elif inside and line.rstrip("\r\n") == END:
            inside = False
        elif not inside:
            out.append(line)
    return "".join(out)


def add_block(text: str, shell: str) -> str:
    """``text`` with exactly one up-to-date cuenv block at its end (idempotent)."""
    body = remove_block(text)
    if body and not body.endswith("\n"):
        body += "\n"
    block = f"{BEGIN}\n# Added by `cuenv init`; remove it with `cuenv init --undo`.\n{hook_line(shell)}\n{END}\n"
    return body + block
