"""The command-line edge: parse, dispatch, render. The only place that prints errors or picks exit codes.

Start-up is kept light (issue 29): only the chosen command's module is imported, and a plain command
line is parsed by cuenv.cli.quick without argparse; the argparse parser (cuenv.cli.parser) is built
for help, errors and the lines the fast path does not model.
"""

from __future__ import annotations

import os
import sys
from importlib import import_module

from cuenv import __version__
from cuenv.cli import quick
from cuenv.cli.spec import COMMANDS, global_options
from cuenv.errors import EXIT_INTERRUPTED, EXIT_USAGE, CuenvError

TYPE_CHECKING = False  # no `typing` at run time: the start-up path does without it (issue 29)
if TYPE_CHECKING:
    import argparse
    from types import SimpleNamespace
    from typing import Final, Mapping, Sequence

    from cuenv.config import Settings
    from cuenv.result import Result, Shaped


class Context:
    """What every command receives: parsed args, the environment, settings on demand.

    A plain class: ``dataclasses`` imports ``inspect``, which costs more than a bare interpreter's
    start, and ``cuenv --help`` needs nothing else of it (issue 29)."""

    __slots__ = ("_settings", "args", "environ")

    def __init__(self, args: argparse.Namespace | SimpleNamespace, environ: Mapping[str, str]) -> None:
        self.args = args
        self.environ = environ
        self._settings: Settings | None = None

    @property
    def settings(self) -> Settings:  # cuenv.config is imported on first use
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
        args: argparse.Namespace | SimpleNamespace | None = None
        if wanted is not None:
            args = quick.parse(argv, wanted, COMMANDS[wanted][0], global_options)
        if args is None:
            from cuenv.cli import parser as full

            parser = full.build_parser(wanted, top_only=argv in (["--help"], ["-h"]))
            parsed, extras = parser.parse_known_args(argv)
            if extras:
                raise full.unrecognized(parser, parsed, extras)
            if parsed.command is None:
                parser.print_help()
                return 0 if not argv else EXIT_USAGE
            args = parsed
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

    The command flushes its output and leaves without finalizing the interpreter: nothing of cuenv's needs
    atexit (every temporary folder is removed by the ``with`` that made it, every file closed by the code that
    wrote it, the only threads are daemons), and finalizing is slow and fragile:
    - tearing down the modules a command loaded took 10-20 ms of a `cuenv add` (issue 26's benchmark);
    - when py-rattler was loaded: its runtime threads can call into Python while the interpreter
      finalizes and abort the process ("PyGILState_Release ... finalizing"), seen intermittently after a
      successful solve;
    - after a Ctrl-C: CPython remembers a KeyboardInterrupt that left code run by ``exec`` of a string
      (dataclasses and namedtuple build their methods so) even when cuenv handled it, and the finalizing
      interpreter then kills itself with SIGINT instead of exiting 130 (seen in tests/envs/test_interrupt.py).
    The TUI exits the ordinary way (Textual restores the terminal on its own terms).
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
    if "textual" in sys.modules:
        raise SystemExit(code)
    try:
        sys.stdout.flush()
        sys.stderr.flush()
    except OSError:  # a reader that left (`cuenv list | head -1`): nothing more to say to it
        pass
    finally:
        os._exit(code)
