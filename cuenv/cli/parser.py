"""The argparse parser of the command line: built only when the fast path (cuenv.cli.quick) does not
model the line, for `--help`, and for the reference and completions (cuenv.cli.walk)."""

from __future__ import annotations

import argparse
from importlib import import_module

from cuenv import __version__
from cuenv.cli.quick import SUPPRESS
from cuenv.cli.spec import COMMANDS, global_options, user_prog, visible_commands
from cuenv.errors import UsageError

TYPE_CHECKING = False  # no `typing` at run time: `cuenv --help` builds this parser (issue 29)
if TYPE_CHECKING:
    from typing import NoReturn


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:  # argparse's own errors: same two-line form, exit 2
        from cuenv.cli.usage import did_you_mean, invalid_choice

        word = invalid_choice(message)
        if word is not None and self.prog == "cuenv":  # `cuenv craete`: the commands, not a list of 24
            raise UsageError(f"Unknown command {word!r}.{did_you_mean(word, visible_commands())}",
                             hint="Run `cuenv --help` for the commands.")
        text = message[:1].upper() + message[1:].rstrip(".") + "."
        if word is not None:  # `--engine cnda`: the choices stay listed, the likely one is named
            import re

            choices = re.findall(r"'([^']+)'", message.split("choose from", 1)[-1])
            text += did_you_mean(word, choices)
        raise UsageError(text, hint=f"Run `{user_prog(self.prog)} --help` for usage.")


class _GroupedHelp(argparse.RawDescriptionHelpFormatter):
    """`cuenv --help` lists the commands by group in its epilog (cuenv.cli.usage); the flat list that
    argparse would print as well is left out (the usage line keeps COMMAND)."""

    def _format_action(self, action: argparse.Action) -> str:
        if isinstance(action, argparse._SubParsersAction):  # noqa: SLF001 - argparse's own type
            return ""
        return super()._format_action(action)


def unrecognized(parser: argparse.ArgumentParser, args: argparse.Namespace, extras: list[str]) -> UsageError:
    """Arguments no parser took, said against the subcommand the user ran (`cuenv list --help`)."""
    from cuenv.cli.usage import did_you_mean

    sub = parser
    for action in parser._subparsers._group_actions if parser._subparsers else ():  # noqa: SLF001 - argparse has no public way
        sub = action.choices.get(getattr(args, "command", None), parser)  # type: ignore[union-attr]  # the subparsers action has a dict
    flags = [s for a in sub._actions for s in a.option_strings]  # noqa: SLF001 - argparse lists no flags publicly
    first = extras[0]
    guess = did_you_mean(first, flags) if first.startswith("-") else ""
    what = "argument" if len(extras) == 1 else "arguments"
    return UsageError(f"Unrecognized {what}: {' '.join(extras)}.{guess}",
                      hint=f"Run `{user_prog(sub.prog)} --help` for usage.")


def common_options() -> _Parser:
    common = _Parser(add_help=False)
    global_options(common, argparse.SUPPRESS)
    return common


def build_parser(only: str | None = None, *, top_only: bool = False) -> _Parser:
    """The parser. With ``only``, just that subcommand exists (the start-up fast path: argparse's
    sub-parsers cost about 0.5 ms each, issue 29); with ``top_only``, none does (`cuenv --help`,
    whose command list is the epilog)."""
    common = common_options()
    from cuenv.cli.usage import EXAMPLES, command_help

    parser = _Parser(
        prog="cuenv",
        description="Named, isolated CUDA environments, checked against your driver and GPU.",
        parents=[common],
        epilog=command_help({n: h for n, (_, h) in COMMANDS.items() if h != SUPPRESS}) + "\n" + EXAMPLES,
        formatter_class=_GroupedHelp,
    )
    parser.add_argument("--version", action="version", version=f"cuenv {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    for name, (module, help_text) in COMMANDS.items():
        if top_only or (only is not None and name != only):
            continue
        if help_text == SUPPRESS:
            p = sub.add_parser(name, parents=[common])
        else:
            p = sub.add_parser(name, parents=[common], help=help_text, description=help_text)
        import_module(f"cuenv.commands.{module}").configure(p, name)
    return parser
