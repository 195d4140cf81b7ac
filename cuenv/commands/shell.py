"""`cuenv shell-init`, `cuenv init` and the hook's hidden helper `cuenv shell-env` (issue 5).

`shell-env SHELL use|verdict|deactivate ...` writes only shell code on stdout; messages (the
validation findings, errors) go to stderr, and a failure writes no code at all.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any, Mapping

from cuenv import atomic
from cuenv.errors import CuenvError, NotFound, UsageError
from cuenv.result import Result, text_result
from cuenv.trust.shown import output

if TYPE_CHECKING:
    from cuenv.cli.main import Context
    from cuenv.envs.store import EnvRecord
    from cuenv.result import Text

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


def run(ctx: Context) -> Result[Text]:
    if ctx.args.command == "shell-init":
        from cuenv.activation.render import hook_text

        s = ctx.settings
        return text_result(text=hook_text(ctx.args.shell, home=s.home, auto_activate=s.auto_activate))
    if ctx.args.command == "init":
        return _init(ctx)
    return {"use": _use, "verdict": _verdict, "deactivate": _deactivate, "pin": _pin}[ctx.args.action](ctx)


# -- cuenv init ------------------------------------------------------------------------------
def _init(ctx: Context) -> Result[Text]:
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
    if ctx.args.undo:
        text = f"Removed the cuenv hook from {path}." if changed else f"No cuenv hook in {path}; nothing to do."
    elif changed:
        text = f"Added the cuenv hook to {path}. Open a new {shell}, or run: {rcfile.hook_line(shell)}"
    else:
        text = f"The cuenv hook is already in {path}."
    return text_result(data={"shell": shell, "rc_file": str(path), "changed": changed, "undo": ctx.args.undo}, text=text)


# -- cuenv shell-env (the hook's helper) -------------------------------------------------------
def _deactivate(ctx: Context) -> Result[Text]:
    if ctx.args.shell == "fish":
        return text_result(text="if set -q __cuenv_active; __cuenv_restore; end")
    return text_result(text='if [ -n "${__cuenv_active+x}" ]; then __cuenv_restore; fi')


def _pin(ctx: Context) -> Result[Text]:
    """The hook's question "which environment does this .cuenv file activate?": shell code that sets
    ``__cuenv_pin_name`` (empty unless the file was allowed); why not goes to stderr, once per file."""
    from cuenv.activation import fish, posix
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
    if ctx.args.shell == "fish":
        return text_result(text=f"set -g __cuenv_pin_name {fish.quote(name)}")
    return text_result(text=f"__cuenv_pin_name={posix.quote(name)}")


def _resolve_name(ctx: Context) -> tuple[str, Any]:  # Any: a project.ProjectPin or None
    """The environment to use: the argument, or the nearest .cuenv file's, once the user allowed it."""
    from cuenv.envs import project

    if ctx.args.name:
        return ctx.args.name, None
    from cuenv.trust import consent

    cwd = consent.logical_cwd(ctx.environ)
    pin = project.find(cwd)
    if pin is None:
        raise UsageError(f"No environment named, and no {project.PROJECT_FILE} file in {cwd} or above.",
                         hint="Run `cuenv use NAME`, or write `env: NAME` into a .cuenv file in your project.")
    project.approved(pin, ctx.settings.home)
    return pin.env, pin


def _verdict_lines(record: EnvRecord, environ: Mapping[str, str], cache_dir: Path | None = None) -> list[str]:
    from cuenv.envs import verdict

    return verdict.lines_for(verdict.findings_for(record, environ, cache_dir))


def _report(name: str, lines: list[str], strict: bool) -> None:
    from cuenv.envs import verdict

    for line in lines:
        if not strict and line.startswith("error:"):  # it does not stop activation: a warning (issue 17 §4)
            line = "warning:" + line[len("error:"):]
        sys.stderr.write(output(line + "\n"))
    if strict and verdict.has_error(lines):
        raise CuenvError(f"Not activating {name}: it cannot run on this machine (--strict).",
                         hint="Fix the error above, or activate without --strict.")


def _verdict(ctx: Context) -> Result[Text]:
    from cuenv.envs.store import Store

    record = Store.from_settings(ctx.settings).get(ctx.args.name)
    _report(record.name, _verdict_lines(record, ctx.environ, ctx.settings.cache_dir), ctx.args.strict)
    return text_result()


def _use(ctx: Context) -> Result[Text]:
    from cuenv.activation.render import render_scripts, render_target
    from cuenv.activation.system import is_system, system_target, toolkit_roots
    from cuenv.envs.store import Store

    settings = ctx.settings
    name, pin = _resolve_name(ctx)
    roots = toolkit_roots(ctx.environ)
    if is_system(name):
        target = system_target(name, ctx.environ)
    else:
        store = Store.from_settings(settings)
        try:
            record = store.get(name)
        except NotFound as exc:
            if pin is not None and getattr(pin, "lock", None):
                # name the lockfile only when it is there: `cuenv sync` of a missing file fails (issue 17 §4)
                lock = Path(pin.lock)
                hint = (f"Create it from its lockfile: `cuenv sync {pin.lock} -n {name}`." if lock.is_file() else
                        f"Its lockfile {pin.lock} is missing too: create it from a recipe, `cuenv create RECIPE -n {name}`"
                        " (`cuenv recipes` lists them).")
                raise NotFound(f"Environment {name!r} (pinned by {pin.file}) does not exist yet.", hint=hint) from None
            if pin is not None:  # the pin names it: a create under another name would not be found either
                raise NotFound(f"Environment {name!r} (pinned by {pin.file}) does not exist yet.",
                               hint=f"Create it: `cuenv create RECIPE -n {name}` (`cuenv recipes` lists them).") from None
            raise exc
        _report(name, _verdict_lines(record, ctx.environ, ctx.settings.cache_dir), ctx.args.strict)
        target = record.target()
        script = record.meta_dir / f"activate.{ctx.args.shell}"
        if not script.exists():  # rendered by an older cuenv, or removed: repair the fast path
            try:
                render_scripts(target, record.meta_dir, envs_dir=settings.envs_dir, prompt=settings.prompt)
            except OSError:
                pass
    text = render_target(target, ctx.args.shell, envs_dir=settings.envs_dir, prompt=settings.prompt, other_roots=roots)
    return text_result(text=text)
