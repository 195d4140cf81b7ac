"""The command tree read out of the argparse parser: one source for the CLI reference and the completions.

Pure: takes a parser, returns frozen data; prints nothing. Hidden commands (added without help, such as
`shell-env`) and hidden options (help=SUPPRESS) are left out, as `--help` leaves them out.
"""

from __future__ import annotations

import argparse
from dataclasses import dataclass
from typing import Final

GLOBAL_GROUP: Final = "global options"
_WIDTH: Final = 88  # usage lines are wrapped at a fixed width so the generated reference is the same everywhere


@dataclass(frozen=True)
class Option:
    flags: tuple[str, ...]  # ("-n", "--name")
    metavar: str | None  # None: a switch that takes no value
    help: str
    choices: tuple[str, ...]
    group: str  # the argparse group title: "options", "global options", "machine (...)"
    repeatable: bool

    @property
    def is_global(self) -> bool:
        return self.group == GLOBAL_GROUP


@dataclass(frozen=True)
class Positional:
    dest: str
    metavar: str
    help: str
    choices: tuple[str, ...]
    many: bool  # nargs +, * or REMAINDER


@dataclass(frozen=True)
class Command:
    path: tuple[str, ...]  # () for cuenv itself, ("recipes", "show") for a nested one
    help: str
    description: str
    usage: str
    options: tuple[Option, ...]
    positionals: tuple[Positional, ...]
    subcommands: tuple[Command, ...]
    epilog: str = ""

    @property
    def name(self) -> str:
        return " ".join(("cuenv",) + self.path)

    def flags(self) -> list[str]:
        return [f for o in self.options for f in o.flags]

    def walk(self) -> list[Command]:
        """This command and every subcommand below it, depth first, in --help order."""
        out = [self]
        for sub in self.subcommands:
            out.extend(sub.walk())
        return out


def _help(parser: argparse.ArgumentParser, action: argparse.Action) -> str:
    if not action.help:
        return ""
    formatter = parser.formatter_class(prog=parser.prog)
    return " ".join(formatter._expand_help(action).split())  # noqa: SLF001 - argparse's own %(default)s expansion


def _usage(parser: argparse.ArgumentParser) -> str:
    formatter = argparse.HelpFormatter(prog=parser.prog, width=_WIDTH)
    formatter.add_usage(parser.usage, parser._actions, parser._mutually_exclusive_groups)  # noqa: SLF001 - argparse has no public API for its actions
    return formatter.format_help().strip()


def _group_of(parser: argparse.ArgumentParser, action: argparse.Action) -> str:
    for group in parser._action_groups:  # noqa: SLF001 - the only way to read a group's title
        if action in group._group_actions:  # noqa: SLF001 - argparse has no public API for its actions
            return group.title or "options"
    return "options"


def _metavar(action: argparse.Action) -> str:
    if action.metavar is not None:
        return action.metavar if isinstance(action.metavar, str) else " ".join(action.metavar)
    if action.choices:
        return "{" + ",".join(str(c) for c in action.choices) + "}"
    return action.dest.upper() if action.option_strings else action.dest


def walk(parser: argparse.ArgumentParser, path: tuple[str, ...] = (), help_text: str = "") -> Command:
    options: list[Option] = []
    positionals: list[Positional] = []
    subcommands: list[Command] = []
    for action in parser._actions:  # noqa: SLF001 - argparse has no public API for its actions
        if isinstance(action, argparse._SubParsersAction):  # noqa: SLF001 - argparse has no public API for its actions
            for pseudo in action._choices_actions:  # noqa: SLF001 - only the subcommands --help lists
                child = action.choices[pseudo.dest]
                subcommands.append(walk(child, path + (pseudo.dest,), pseudo.help or ""))
            continue
        if action.help == argparse.SUPPRESS:
            continue
        choices = tuple(str(c) for c in action.choices) if action.choices else ()
        if action.option_strings:
            takes_value = action.nargs != 0
            options.append(Option(
                flags=tuple(action.option_strings),
                metavar=_metavar(action) if takes_value else None,
                help=_help(parser, action),
                choices=choices,
                group=_group_of(parser, action),
                repeatable=isinstance(action, (argparse._AppendAction, argparse._CountAction)),  # noqa: SLF001 - argparse has no public API for its actions
            ))
        else:
            positionals.append(Positional(
                dest=action.dest, metavar=_metavar(action), help=_help(parser, action), choices=choices,
                many=action.nargs in ("+", "*", argparse.REMAINDER),
            ))
    return Command(
        path=path,
        help=help_text,
        description=parser.description or help_text,
        usage=_usage(parser),
        options=tuple(options),
        positionals=tuple(positionals),
        subcommands=tuple(subcommands),
        epilog=parser.epilog or "",
    )


def command_tree() -> Command:
    """Every visible command of cuenv, with every option (imports every command module)."""
    from cuenv.cli.parser import build_parser

    return walk(build_parser())
