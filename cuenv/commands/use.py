"""`cuenv use` / `cuenv deactivate` run as a program: they cannot change the shell that started them.

With the hook installed, the `cuenv` shell function handles both itself (shell/cuenv.sh); reaching
this module means the hook is missing, so say how to install it (as conda's mock activate does).
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

from cuenv.errors import UsageError

if TYPE_CHECKING:
    import argparse  # annotations only: the fast path never imports argparse (issue 29)

    from cuenv.cli.main import Context


def configure(parser: argparse.ArgumentParser, name: str) -> None:
    if name == "use":
        parser.add_argument("name", nargs="?", help="environment name, or system:X.Y; default: the nearest .cuenv file")
        parser.add_argument("--strict", action="store_true", help="refuse to activate when the check finds an error")
        parser.add_argument("--off", action="store_true", help="deactivate (same as `cuenv deactivate`)")


def run(ctx: Context):
    shell = os.path.basename(ctx.environ.get("SHELL", "")) or "bash"
    if shell not in ("bash", "zsh", "fish"):
        shell = "bash"
    line = "cuenv shell-init fish | source" if shell == "fish" else f'eval "$(cuenv shell-init {shell})"'
    raise UsageError(
        f"`cuenv {ctx.args.command}` needs the cuenv shell hook: a program cannot change the shell that started it.",
        hint=f"Run `{line}` in this shell, or `cuenv init {shell}` to install the hook for new shells.",
    )
