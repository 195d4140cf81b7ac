"""`cuenv shell-init`, `cuenv init` and the hook's hidden helper `cuenv shell-env` (issue 5).

`shell-env SHELL use|verdict|deactivate ...` writes only shell code on stdout; messages (the
validation findings, errors) go to stderr, and a failure writes no code at all.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Sequence

from cuenv import atomic
from cuenv.errors import CuenvError, UsageError
from cuenv.result import Result, text_result
from cuenv.trust.shown import output

if TYPE_CHECKING:
    from cuenv.cli.main import Context
    from cuenv.envs.verdict import Notice
    from cuenv.result import JSONObject, Text

SHELLS = ("bash", "zsh", "fish")


def configure(parser: argparse.ArgumentParser, name: str) -> None:
    if name == "shell-init":
        parser.add_argument("shell", choices=SHELLS, help="the shell to print the hook for")
    elif name == "init":
        parser.add_argument("shell", nargs="?", choices=SHELLS, help="default: the shell in $SHELL")
        parser.add_argument("--undo", action="store_true", help="remove the hook from the rc file")
    else:
        parser.add_argument("shell", choices=SHELLS)
        sub = parser.add_subparsers(dest="action", required=True, parser_class=type(parser))
        use = sub.add_parser("use")
        use.add_argument("--strict", action="store_true")
        use.add_argument("name", nargs="?")
        verdict = sub.add_parser("verdict")
        verdict.add_argument("--strict", action="store_true")
        verdict.add_argument("name")
        sub.add_parser("deactivate")
        pin = sub.add_parser("pin")
        pin.add_argument("file")


def run(ctx: Context) -> Result[Text] | Result[HookEdit]:
    if ctx.args.command == "shell-init":
        from cuenv.activation.render import hook_text

        s = ctx.settings
        return text_result(hook_text(ctx.args.shell, home=s.home, auto_activate=s.auto_activate))
    if ctx.args.command == "init":
        return _init(ctx)
    return {"use": _use, "verdict": _verdict, "deactivate": _deactivate, "pin": _pin}[ctx.args.action](ctx)


# -- cuenv init ------------------------------------------------------------------------------
def _init(ctx: Context) -> Result[HookEdit]:
    import os

    from cuenv.activation import rcfile

    shell = ctx.args.shell or os.path.basename(ctx.environ.get("SHELL", ""))
    if shell not in SHELLS:
        raise UsageError(f"Cannot tell which shell to set up (SHELL={ctx.environ.get('SHELL', '')!r}).",
                         hint="Name it: `cuenv init bash`, `cuenv init zsh` or `cuenv init fish`.")
    path = rcfile.rc_path(shell, ctx.environ)
    try:
        old = path.read_text(encoding="utf-8") if path.exists() else ""
    except OSError as exc:
        raise CuenvError(f"Cannot read {path}: {exc.strerror}.") from None
    new = rcfile.remove_block(old) if ctx.args.undo else rcfile.add_block(old, shell)
    changed = new != old
    if changed:
        try:
            mode = path.stat().st_mode & 0o7777 if path.exists() else None
            atomic.write_text(path, new, mode=mode)
        except OSError as exc:
            raise CuenvError(f"Cannot write {path}: {exc.strerror}.") from None
    return Result(HookEdit(shell, path, changed=changed, undo=ctx.args.undo), _init_text)


class HookEdit:
    """`cuenv init`: ``{"shell", "rc_file", "changed", "undo"}``."""

    __slots__ = ("changed", "rc_file", "shell", "undo")

    def __init__(self, shell: str, rc_file: Path, *, changed: bool, undo: bool) -> None:
        self.shell, self.rc_file, self.changed, self.undo = shell, rc_file, changed, undo

    def to_json(self) -> JSONObject:
        return {"shell": self.shell, "rc_file": str(self.rc_file), "changed": self.changed, "undo": self.undo}


def _init_text(done: HookEdit) -> str:
    from cuenv.activation import rcfile

    path = done.rc_file
    if done.undo:
        return f"Removed the cuenv hook from {path}." if done.changed else f"No cuenv hook in {path}; nothing to do."
    if done.changed:
        return f"Added the cuenv hook to {path}. Open a new {done.shell}, or run: {rcfile.hook_line(done.shell)}"
    return f"The cuenv hook is already in {path}."


# -- cuenv shell-env (the hook's helper) -------------------------------------------------------
def _deactivate(ctx: Context) -> Result[Text]:
    if ctx.args.shell == "fish":
        return text_result("if set -q __cuenv_active; __cuenv_restore; end")
    return text_result('if [ -n "${__cuenv_active+x}" ]; then __cuenv_restore; fi')


def _pin(ctx: Context) -> Result[Text]:
    """The hook's question "which environment does this .cuenv file activate?": shell code that sets
    ``__cuenv_pin_name`` (empty unless the file was allowed); why not goes to stderr, once per file."""
    from cuenv.envs import project
    from cuenv.trust import consent

    home = ctx.settings.home
    consent.touch_checked(home)  # before reading: an edit after this makes the file newer than the stamp
    name = ""
    try:
        name = project.approved(project.read(Path(ctx.args.file).absolute()), home).env
    except project.PinNotAllowed as exc:
        if exc.status != consent.DENIED:  # denied: silent, as the user asked
            sys.stderr.write(output(f"cuenv: {exc.message}\ncuenv: {exc.hint}\n"))
    except CuenvError as exc:
        sys.stderr.write(output(f"cuenv: {exc.message}\n" + (f"cuenv: {exc.hint}\n" if exc.hint else "")))
    return text_result(_pin_line(ctx.args.shell, name))


def _pin_line(shell: str, name: str) -> str:
    """Shell code that sets the hook's answer to "which environment does this .cuenv file activate?"."""
    from cuenv.activation import fish, posix

    if shell == "fish":
        return f"set -g __cuenv_pin_name {fish.quote(name)}"
    return f"__cuenv_pin_name={posix.quote(name)}"


def _say(said: Sequence[Notice], refused: CuenvError | None) -> None:
    """The notices on stderr, then the refusal (--strict) if any."""
    from cuenv.envs.verdict import line_texts

    for line in line_texts(said):
        sys.stderr.write(output(line + "\n"))
    if refused is not None:
        raise refused


def _verdict(ctx: Context) -> Result[Text]:
    from cuenv.envs import use
    from cuenv.envs.store import Store

    record = Store.from_settings(ctx.settings).get(ctx.args.name)
    _say(*use.verdict(record, ctx.environ, ctx.settings.cache_dir, strict=ctx.args.strict))
    return text_result()


def _use(ctx: Context) -> Result[Text]:
    from cuenv.activation.render import render_target
    from cuenv.activation.system import toolkit_roots
    from cuenv.envs import use

    settings = ctx.settings
    chosen = use.prepare(ctx.args.name, settings, ctx.environ, strict=ctx.args.strict)
    _say(chosen.said, chosen.refused)
    if chosen.record is not None:
        use.repair_scripts(chosen.record, ctx.args.shell, settings, ctx.environ)
    script = render_target(chosen.target, ctx.args.shell, envs_dir=settings.envs_dir, prompt=settings.prompt,
                           other_roots=toolkit_roots(ctx.environ))
    if chosen.pin is not None:  # the hook's pin cache, answered here rather than by a second `pin` start
        script = _pin_line(ctx.args.shell, chosen.pin.env) + "\n" + script
    return text_result(script)

