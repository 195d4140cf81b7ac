"""The command-line edge: parse, dispatch, render. The only place that prints errors or picks exit codes.

Start-up is kept light: only the chosen command's module is imported (STYLE.md §1, issue 2).
"""

from __future__ import annotations

import argparse
import os
import sys
from importlib import import_module
from typing import TYPE_CHECKING, Any, Final, Mapping, NoReturn, Sequence

from cuenv import __version__
from cuenv.errors import EXIT_INTERRUPTED, EXIT_USAGE, CuenvError, UsageError

if TYPE_CHECKING:
    from cuenv.result import Result, Shaped

# name -> (module under cuenv.commands, one-line help). Order is the order of --help.
COMMANDS: dict[str, tuple[str, str]] = {
    "info": ("info", "show this machine (driver, GPUs, toolkits, engines), or one environment"),
    "recipes": ("recipes", "list, show and lint recipes"),
    "check": ("check", "will a recipe, environment or installed build run on this (or another) machine?"),
    "suggest": ("suggest", "the best recipe for this (or another) machine"),
    "create": ("create", "create a named environment from a recipe"),
    "adopt": ("adopt", "register an existing conda environment or venv (it is read, never changed)"),
    "list": ("list_", "list environments"),
    "remove": ("remove", "remove an environment"),
    "add": ("change", "add packages to an environment, checked against its CUDA contract first"),
    "install": ("change", "the same as `cuenv add` (conda's word)"),
    "upgrade": ("change", "upgrade packages of an environment, its CUDA pins held"),
    "uninstall": ("change", "remove packages from an environment"),
    "run": ("run", "run a command inside an environment"),
    "test": ("test", "run an environment's smoke test"),
    "use": ("use", "activate an environment in this shell (needs the shell hook)"),
    "deactivate": ("use", "undo `cuenv use` in this shell (needs the shell hook)"),
    "allow": ("allow", "allow a project's .cuenv file to activate its environment"),
    "deny": ("allow", "block a project's .cuenv file until it is allowed again"),
    "shell-init": ("shell", "print the shell hook for bash, zsh or fish"),
    "init": ("shell", "add the shell hook to your shell's rc file"),
    "lock": ("lock", "write a lockfile for an environment or a recipe"),
    "sync": ("lock", "make an environment match a lockfile"),
    "export": ("export", "export an environment (dockerfile, apptainer, lmod, tcl, explicit, ...)"),
    "image": ("image", "build a container image of an environment, or push one to a registry"),
    "pack": ("pack", "pack an environment into a relocatable archive"),
    "unpack": ("pack", "unpack an archive made by `cuenv pack`"),
    "doctor": ("doctor", "run the acceptance checks and explain each failure"),
    "tui": ("tui", "interactive terminal browser of environments and recipes"),
    "config": ("config", "show settings and where each came from"),
    "completion": ("completion", "print shell completions"),
    "shell-env": ("shell", argparse.SUPPRESS),
}


class Context:
    """What every command receives: parsed args, the environment, settings on demand.

    A plain class: ``dataclasses`` imports ``inspect``, which costs more than a bare interpreter's
    start, and ``cuenv --help`` needs nothing else of it (issue 29)."""

    __slots__ = ("_settings", "args", "environ")

    def __init__(self, args: argparse.Namespace, environ: Mapping[str, str]) -> None:
        self.args = args
        self.environ = environ
        self._settings: Any = None

    @property
    def settings(self):  # noqa: ANN201 - cuenv.config.Settings, imported lazily
        if self._settings is None:
            from cuenv import config

            flags = {
                "home": getattr(self.args, "home", None),
                "cache_dir": getattr(self.args, "cache_dir", None),
                "engine": getattr(self.args, "default_engine", None),
                "recipe_dirs": tuple(getattr(self.args, "recipes", None) or ()),
                "mirrors": tuple(getattr(self.args, "mirror", None) or ()),
                "framework_index": getattr(self.args, "framework_index", None),
            }
            path = getattr(self.args, "config", None)
            self._settings = config.resolve(flags, self.environ, config._path(path) if path else None)
        return self._settings

    @property
    def json(self) -> bool:
        return bool(getattr(self.args, "json", False))

    @property
    def verbosity(self) -> int:
        """-1 with -q, 0 by default, 1 with -v, 2 with -vv (and more)."""
        return -1 if getattr(self.args, "quiet", False) else int(getattr(self.args, "verbose", 0) or 0)


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


def visible_commands() -> list[str]:
    return [name for name, (_, help_text) in COMMANDS.items() if help_text != argparse.SUPPRESS]


def user_prog(prog: str) -> str:
    """What the user typed: `cuenv shell-env bash use` is the hook running `cuenv use`."""
    words = prog.split()
    if len(words) >= 2 and words[1] == "shell-env":
        return "cuenv " + (words[3] if len(words) > 3 else "use")
    return prog


def _unrecognized(parser: argparse.ArgumentParser, args: argparse.Namespace, extras: list[str]) -> UsageError:
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
    # Defaults are SUPPRESS so that a flag given before or after the subcommand both count.
    common = _Parser(add_help=False)
    g = common.add_argument_group("global options")
    g.add_argument("--json", action="store_true", default=argparse.SUPPRESS, help="print JSON on stdout")
    g.add_argument("--home", default=argparse.SUPPRESS, metavar="DIR", help="cuenv's home (env CUENV_HOME)")
    g.add_argument("--cache-dir", default=argparse.SUPPRESS, metavar="DIR", help="cache folder (env CUENV_CACHE_DIR)")
    g.add_argument("--config", default=argparse.SUPPRESS, metavar="FILE", help="config file (env CUENV_CONFIG)")
    g.add_argument("--recipes", action="append", default=argparse.SUPPRESS, metavar="DIR",
                   help="extra recipe folder, may repeat (env CUENV_RECIPES)")
    g.add_argument("--mirror", action="append", default=argparse.SUPPRESS, metavar="UPSTREAM=MIRROR",
                   help="fetch UPSTREAM (pypi, pytorch, conda, a channel or a URL) from MIRROR, may repeat (env CUENV_MIRRORS)")
    # Checked by cuenv.config (its one list of values), so the parser needs no import for it.
    g.add_argument("--framework-index", default=argparse.SUPPRESS, metavar="ROUTE",
                   help="where framework wheels come from: pypi-first (default), vendor-first, pypi, vendor (env CUENV_FRAMEWORK_INDEX)")
    g.add_argument("-q", "--quiet", action="store_true", default=argparse.SUPPRESS,
                   help="only errors and the output asked for: no progress, warnings or reports")
    g.add_argument("-v", "--verbose", action="count", default=argparse.SUPPRESS,
                   help="also the commands cuenv runs and their output; -vv adds debug details")
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
        epilog=command_help({n: h for n, (_, h) in COMMANDS.items() if h != argparse.SUPPRESS}) + "\n" + EXAMPLES,
        formatter_class=_GroupedHelp,
    )
    parser.add_argument("--version", action="version", version=f"cuenv {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    for name, (module, help_text) in COMMANDS.items():
        if top_only or (only is not None and name != only):
            continue
        if help_text == argparse.SUPPRESS:
            p = sub.add_parser(name, parents=[common])
        else:
            p = sub.add_parser(name, parents=[common], help=help_text, description=help_text)
        import_module(f"cuenv.commands.{module}").configure(p, name)
    return parser


_VALUE_FLAGS = {"--home", "--cache-dir", "--config", "--recipes"}


def _command_in(argv: Sequence[str]) -> str | None:
    """The subcommand named in argv, found without building the full parser."""
    skip = False
    for arg in argv:
        if skip:
            skip = False
        elif arg in COMMANDS:
            return arg
        elif arg in _VALUE_FLAGS:
            skip = True
        elif not arg.startswith("-"):
            return None
    return None


# Commands whose stdout is shell code or completion script: printed exactly (activation restores the
# user's own variables byte for byte). Everything else passes cuenv.trust.shown (issue 31).
_RAW_STDOUT: Final = frozenset({"shell-env", "shell-init", "completion"})


def _emit(result: Result[Shaped], as_json: bool, *, quiet: bool, raw: bool = False) -> None:
    """The one place a command's typed result is rendered: as JSON, or as text (issue 24 §3)."""
    from cuenv.trust import shown

    if as_json:
        import json  # on use: most runs print text (start-up, issue 29)

        data = result.value.to_json()
        sys.stdout.write(json.dumps(data if raw else shown.redact_data(data), indent=2, sort_keys=False, default=str) + "\n")
        return
    if quiet and result.report:
        return
    text = result.render(result.value)
    if text:
        text = text if raw or result.exact else shown.output(text)
        sys.stdout.write(text if text.endswith("\n") else text + "\n")


def _err(text: str) -> None:
    """Every message cuenv writes to stderr: credentials redacted, control characters escaped."""
    from cuenv.trust.shown import output

    sys.stderr.write(output(text))


def _log_to_stderr(verbosity: int) -> None:
    """-v: the commands cuenv runs (cuenv.runner logs them at INFO); -vv: debug details too.
    One handler, replaced on every call (tests call main() many times in one process)."""
    import logging

    root = logging.getLogger("cuenv")
    for old in [h for h in root.handlers if getattr(h, "cuenv_cli", False)]:
        root.removeHandler(old)
    if verbosity <= 0:
        root.setLevel(logging.WARNING)
        return
    handler = logging.StreamHandler(sys.stderr)
    handler.cuenv_cli = True  # type: ignore[attr-defined]  # a mark to find our own handler again
    class Redacting(logging.Formatter):  # -v/-vv: command lines and URLs name mirrors that may carry a token
        def format(self, record: logging.LogRecord) -> str:
            from cuenv.trust.shown import output

            return output(super().format(record))

    handler.setFormatter(Redacting("%(levelname).1s %(name)s: %(message)s" if verbosity > 1 else "%(message)s"))
    root.addHandler(handler)
    root.setLevel(logging.DEBUG if verbosity > 1 else logging.INFO)


def _print_error(exc: CuenvError) -> None:
    _err(f"error: {exc.message}\n")
    if exc.hint:
        _err(f"hint: {exc.hint}\n")


def main(argv: Sequence[str] | None = None, environ: Mapping[str, str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    environ = os.environ if environ is None else environ
    if argv == ["--version"]:  # the fast path: no parser with every subcommand configured
        sys.stdout.write(f"cuenv {__version__}\n")
        return 0
    try:
        wanted = _command_in(argv)
        parser = build_parser(wanted, top_only=argv in (["--help"], ["-h"]))
        args, extras = parser.parse_known_args(argv)
        if extras:
            raise _unrecognized(parser, args, extras)
        if args.command is None:
            parser.print_help()
            return 0 if not argv else EXIT_USAGE
        module = import_module(f"cuenv.commands.{COMMANDS[args.command][0]}")
        ctx = Context(args=args, environ=environ)
        if ctx.verbosity > 0 or "logging" in sys.modules:  # logging is imported late: start-up stays light
            _log_to_stderr(ctx.verbosity)
        result = module.run(ctx)
        quiet = ctx.verbosity < 0
        for warning in () if quiet else result.warnings:
            _err(f"warning: {warning}\n")
        _emit(result, ctx.json, quiet=quiet, raw=args.command in _RAW_STDOUT)
        return result.exit_code
    except CuenvError as exc:
        _print_error(exc)
        return exc.exit_code
    except KeyboardInterrupt:
        sys.stderr.write("error: interrupted.\n")
        from cuenv.cli.usage import interrupted_hint

        hint = interrupted_hint(_command_in(argv), argv)
        if hint:
            sys.stderr.write(f"hint: {hint}\n")
        return EXIT_INTERRUPTED
    except BrokenPipeError:
        # `cuenv list | head`: the reader left; that is not a failure worth a traceback.
        try:
            sys.stdout = open(os.devnull, "w")  # noqa: SIM115 - silence the flush at exit
        except OSError:
            pass
        return 0
    except OSError as exc:
        # A read-only or full CUENV_HOME, a file where a folder belongs (issue 14): the system's words, no traceback.
        where = f" {exc.filename}" if exc.filename else ""
        _err(f"error: Cannot write or read{where}: {exc.strerror or exc}.\n")
        sys.stderr.write("hint: Check that the folder exists, is writable and has free space "
                         "(`cuenv config` shows cuenv's folders).\n")
        return 1
    except Exception as exc:  # a bug: still one clear line, the traceback only when asked for (-v)
        if any(a in ("-v", "--verbose") or a.startswith("-vv") for a in argv):
            raise
        _err(f"error: internal error: {type(exc).__name__}: {exc}\n")
        sys.stderr.write("hint: This is a bug in cuenv. Run again with -v for the traceback and report it.\n")
        return 1


def entry() -> None:
    """The console script and `python -m cuenv`: main(), then exit.

    py-rattler's runtime threads can call into Python while the interpreter finalizes and abort the
    process ("PyGILState_Release ... finalizing"), seen intermittently after a successful solve. When it
    was loaded, flush and leave without finalizing; nothing of cuenv's needs atexit.
    """
    import signal

    def _terminated(signum: int, _frame: object) -> None:
        # SIGTERM/SIGHUP unwind like Ctrl-C: temporary folders, lock files and half-made environments
        # are cleaned up by the code that made them (issue 14). Only SIGKILL leaves anything behind.
        raise SystemExit(128 + signum)

    for sig in (signal.SIGTERM, signal.SIGHUP):
        signal.signal(sig, _terminated)
    try:
        code = main()
    except KeyboardInterrupt:  # Ctrl-C between main's own handler and here: the same exit, no death by signal
        code = EXIT_INTERRUPTED
    # The work is done (or taken back): a Ctrl-C from now on changes nothing and must not turn a finished
    # command into one killed by SIGINT while the interpreter exits (seen in tests/envs/test_interrupt.py).
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    if "rattler" in sys.modules:
        try:
            sys.stdout.flush()
            sys.stderr.flush()
        finally:
            os._exit(code)
    raise SystemExit(code)
