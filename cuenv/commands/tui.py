"""`cuenv tui [--choice-file FILE]`: the interactive browser (issue 9).

Textual is imported here, inside run(), and only here: a dependency, but a heavy import that no
other command needs.
`use` in the app hands the chosen environment back: into --choice-file when the shell hook ran
us (the hook then runs `cuenv use NAME` in the calling shell, the way file managers hand a
directory back), else as the command to type.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from cuenv.errors import CuenvError, UsageError
from cuenv.result import Result

if TYPE_CHECKING:
    from cuenv.cli.main import Context
    from cuenv.result import JSONObject


def configure(parser: argparse.ArgumentParser, name: str) -> None:
    parser.add_argument("--choice-file", type=Path, metavar="FILE",
                        help="write the environment chosen with `use` here (the shell hook passes it)")


def run(ctx: Context) -> Result[Choice]:
    try:
        import textual  # noqa: F401 - only whether it imports
    except ImportError:  # a dependency, so only a damaged or hand-made install lacks it
        from cuenv.selfinstall import detect

        raise CuenvError("`cuenv tui` needs Textual, which is not installed.",
                         hint=detect().hint_for("textual>=0.80")) from None
    if not (sys.stdin.isatty() and sys.stdout.isatty()):
        raise UsageError("`cuenv tui` needs a terminal.", hint="Run it in an interactive terminal; scripts use "
                         "`cuenv list --json` and `cuenv recipes --json`.")
    from cuenv.tui.app import CuenvApp
    from cuenv.tui.services import Services

    app = CuenvApp(Services(ctx.settings, ctx.environ))
    choice = app.run()
    if app.return_code:
        return Result(Choice(None), _choice_text, exit_code=app.return_code)
    return handoff(choice, ctx.args.choice_file)


class Choice:
    """`cuenv tui`: ``{"use": NAME | null}``, the environment chosen with `use` (handed to the hook when it asked)."""

    __slots__ = ("handed", "use")

    def __init__(self, use: str | None, *, handed: bool = False) -> None:
        self.use, self.handed = use, handed  # handed: written to the hook's choice file, which activates it

    def to_json(self) -> JSONObject:
        return {"use": self.use}


def _choice_text(choice: Choice) -> str:
    if not choice.use or choice.handed:
        return ""
    return (f"Run `cuenv use {choice.use}` to activate it in this shell.\n"
            "(With the shell hook, `cuenv tui` does this for you: eval \"$(cuenv shell-init bash)\".)")


def handoff(choice: str | None, choice_file: Path | None) -> Result[Choice]:
    """Give the chosen environment to the hook's file, or say what to type."""
    if not choice:
        return Result(Choice(None), _choice_text)
    if choice_file is not None:
        try:
            choice_file.write_text(choice + "\n", encoding="utf-8")
        except OSError as exc:
            raise CuenvError(f"Cannot write the choice file {choice_file}: {exc.strerror}.",
                             hint=f"Run `cuenv use {choice}` yourself.") from None
        return Result(Choice(choice, handed=True), _choice_text)
    return Result(Choice(choice), _choice_text)
