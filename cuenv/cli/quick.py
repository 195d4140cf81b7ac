"""The start-up fast path of the command line (issue 29): plain argv parsed without argparse.

Building an argparse parser costs more than the rest of `cuenv list` together (argparse's help
formatter imports shutil and gettext's locale lookup; every option is an object). Most command lines
are plain: a command, its positionals, ``--flag`` and ``--option VALUE``. ``parse`` reads those
against the very options each command's ``configure()`` declares (recorded by :class:`Recorder`,
which stands in for the parser), and returns None for anything else: help, a typo, an abbreviation,
``-vv``, ``--``, a value that looks like an option, a bad choice. argparse then parses the line
as before and says what is wrong, so the fast path never decides an error.
tests/cli/test_quick_parse.py holds both parsers to the same namespace for every command.
"""

from __future__ import annotations

from importlib import import_module
from types import SimpleNamespace

TYPE_CHECKING = False  # no `typing` at run time: the start-up path does without it (issue 29)
if TYPE_CHECKING:
    from typing import Any, Callable, Iterable, Sequence

SUPPRESS = "==SUPPRESS=="  # argparse.SUPPRESS, spelled out so that this path never imports argparse


def suppress(parser: object) -> str:
    """The SUPPRESS default for ``parser``: argparse's own object for an argparse parser (it tests that
    default by identity), the same text for a :class:`Recorder` (it compares by value)."""
    if isinstance(parser, Recorder):
        return SUPPRESS
    import argparse  # the parser is argparse's: already loaded

    return argparse.SUPPRESS


class Unsupported(Exception):
    """A declaration the fast path does not model: argparse parses this command."""


class Option:
    __slots__ = ("action", "choices", "const", "default", "dest", "flags", "nargs", "required", "type")

    def __init__(self, flags: tuple[str, ...], dest: str, *, action: str, nargs: Any, default: Any, type: Any,  # noqa: A002 - argparse's word
                 choices: Any, const: Any, required: bool) -> None:
        self.flags, self.dest, self.action, self.nargs, self.default = flags, dest, action, nargs, default
        self.type, self.choices, self.const, self.required = type, choices, const, required


_ACTIONS = frozenset({"store", "store_true", "store_false", "store_const", "append", "count"})
_KNOWN = frozenset({"action", "nargs", "default", "type", "choices", "const", "required", "dest", "help", "metavar"})


class Recorder:
    """Takes a command's ``configure(parser, name)`` calls in place of an argparse parser and keeps
    its options; anything it does not model raises :class:`Unsupported`."""

    def __init__(self) -> None:
        self.options: list[Option] = []
        self.positionals: list[Option] = []
        self.defaults: dict[str, Any] = {}

    def add_argument(self, *flags: str, **kw: Any) -> None:
        if set(kw) - _KNOWN:
            raise Unsupported(sorted(set(kw) - _KNOWN))
        action = kw.get("action", "store")
        if not isinstance(action, str) or action not in _ACTIONS:
            raise Unsupported(action)
        positional = not flags[0].startswith("-")
        nargs = kw.get("nargs")
        if nargs not in ((None, "?", "*", "+") if positional else (None,)):
            raise Unsupported(nargs)
        if positional:
            dest = kw.get("dest", flags[0])
        else:
            long = next((f for f in flags if f.startswith("--")), flags[0])
            dest = kw.get("dest") or long.lstrip("-").replace("-", "_")
        default = kw.get("default")
        if "default" not in kw:
            default = {"store_true": False, "store_false": True}.get(action)
        option = Option(tuple(flags), dest, action=action, nargs=nargs, default=default, type=kw.get("type"),
                        choices=kw.get("choices"), const=kw.get("const"), required=bool(kw.get("required")))
        (self.positionals if positional else self.options).append(option)

    def add_argument_group(self, *_args: Any, **_kw: Any) -> Recorder:
        return self  # a group only changes how --help lays the options out

    def set_defaults(self, **kw: Any) -> None:
        self.defaults.update(kw)

    def __getattr__(self, name: str) -> Any:  # add_subparsers, add_mutually_exclusive_group, ...
        raise Unsupported(name)


def _converted(option: Option, text: str) -> Any:
    value = option.type(text) if option.type is not None else text
    if option.choices is not None and value not in option.choices:
        raise Unsupported("a value argparse refuses")  # argparse words the error
    return value


def parse(argv: Sequence[str], command: str, module: str, global_options: Callable[[Recorder], None]) -> SimpleNamespace | None:
    """``argv`` (whose first word is ``command``) as argparse would parse it, or None where this path
    does not model the line. ``global_options(recorder)`` declares the options every command takes."""
    if not argv or argv[0] != command:
        return None  # options before the command: argparse merges the two parsers' namespaces
    recorder = Recorder()
    try:
        global_options(recorder)
        import_module(f"cuenv.commands.{module}").configure(recorder, command)
        return _parse(list(argv[1:]), command, recorder)
    except Unsupported:
        return None
    except (TypeError, ValueError):  # a type= conversion argparse would refuse, with its own message
        return None


def _parse(words: list[str], command: str, rec: Recorder) -> SimpleNamespace | None:
    by_flag = {flag: o for o in rec.options for flag in o.flags}
    values: dict[str, Any] = {}
    given: set[str] = set()
    chunks: list[list[str]] = []
    after_option = True
    i = 0
    while i < len(words):
        word = words[i]
        i += 1
        if not word.startswith("-") or word == "-":
            if word == "-":
                return None
            if after_option:
                chunks.append([])
            chunks[-1].append(word)
            after_option = False
            continue
        after_option = True
        flag, eq, inline = word.partition("=")
        option = by_flag.get(flag if flag.startswith("--") else word)
        if option is None:
            return None  # -h, an abbreviation, -vv, --, a typo: argparse's to say
        if option.action in ("store", "append"):
            if eq:
                text = inline
            elif i < len(words) and not words[i].startswith("-"):
                text = words[i]
                i += 1
            else:
                return None
            value = _converted(option, text)
            if option.action == "append":
                if option.dest not in values:  # argparse appends to a copy of a list default
                    values[option.dest] = list(option.default) if isinstance(option.default, list) else []
                values[option.dest].append(value)
            else:
                values[option.dest] = value
        elif eq:
            return None
        elif option.action == "count":
            values[option.dest] = (values.get(option.dest) or 0) + 1
        else:
            values[option.dest] = {"store_true": True, "store_false": False}.get(option.action, option.const)
        given.add(option.dest)
    if len(chunks) > 1:
        return None  # positionals split by options: argparse's matching is subtler than a queue
    if not _assign(chunks[0] if chunks else [], rec.positionals, values):
        return None
    if any(o.required and o.dest not in given for o in rec.options):
        return None
    out: dict[str, Any] = {}
    for option in rec.options:
        if option.dest in values:
            out[option.dest] = values[option.dest]
        elif option.default != SUPPRESS and option.dest not in out:
            out[option.dest] = _default(option)
    out.update(rec.defaults)
    for option in rec.positionals:
        out[option.dest] = values[option.dest]
    return SimpleNamespace(command=command, **out)


def _default(option: Option) -> Any:
    if isinstance(option.default, str) and option.type is not None:
        return option.type(option.default)  # argparse converts a string default as if it were given
    return option.default


def _assign(words: list[str], positionals: Iterable[Option], values: dict[str, Any]) -> bool:
    """Positionals in order: one word each, '?' one if left, '*' the rest, '+' the rest (at least one); False
    where argparse would refuse."""
    rest = list(words)
    for option in positionals:
        if option.nargs is None:
            if not rest:
                return False
            values[option.dest] = _converted(option, rest.pop(0))
        elif option.nargs == "?":
            values[option.dest] = _converted(option, rest.pop(0)) if rest else _default(option)
        elif option.nargs == "+" and not rest:
            return False
        else:
            empty = option.default if option.default is not None else []
            values[option.dest] = [_converted(option, w) for w in rest] if rest else empty
            rest = []
    return not rest

