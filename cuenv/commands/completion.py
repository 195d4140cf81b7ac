"""`cuenv completion [bash|zsh|fish]`: print completions generated from the parser (cuenv.cli.completion)."""

from __future__ import annotations

import argparse
import os
from typing import TYPE_CHECKING

from cuenv.errors import UsageError
from cuenv.result import Result

if TYPE_CHECKING:
    from cuenv.cli.main import Context
    from cuenv.result import JSONObject

SHELLS = ("bash", "zsh", "fish")
_INSTALL = {
    "bash": 'eval "$(cuenv completion bash)" in ~/.bashrc, or save it as ~/.local/share/bash-completion/completions/cuenv',
    "zsh": 'save it as _cuenv in a folder on $fpath before compinit runs, or eval "$(cuenv completion zsh)" after compinit',
    "fish": "save it as ~/.config/fish/completions/cuenv.fish",
}


def configure(parser: argparse.ArgumentParser, name: str) -> None:
    parser.add_argument("shell", nargs="?", choices=SHELLS, help="default: the shell in $SHELL")
    parser.epilog = "Install: " + "; ".join(f"{s}: {how}" for s, how in _INSTALL.items()) + "."


def run(ctx: Context) -> Result[Script]:
    from cuenv import __version__
    from cuenv.cli import completion
    from cuenv.cli.walk import command_tree
    from cuenv.recipes.catalogue import builtin_dir

    shell = ctx.args.shell or os.path.basename(ctx.environ.get("SHELL", ""))
    if shell not in SHELLS:
        raise UsageError(f"Cannot tell which shell to complete for (SHELL={ctx.environ.get('SHELL', '')!r}).",
                         hint="Name it: `cuenv completion bash`, `cuenv completion zsh` or `cuenv completion fish`.")
    settings = ctx.settings
    baked = completion.Baked(home=settings.home, builtin_recipes=builtin_dir(), recipe_dirs=tuple(settings.recipe_dirs))
    return Result(Script(shell, completion.render(shell, command_tree(), baked, __version__)), _script_text)


class Script:
    """`cuenv completion`: the script for ``shell``; ``{"shell", "script"}`` with --json."""

    __slots__ = ("script", "shell")

    def __init__(self, shell: str, script: str) -> None:
        self.shell, self.script = shell, script

    def to_json(self) -> JSONObject:
        return {"shell": self.shell, "script": self.script}


def _script_text(script: Script) -> str:
    return script.script
