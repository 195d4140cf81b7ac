"""`cuenv run NAME -- CMD ...`: run one command with the environment's activation applied.

The environment is the same one `cuenv use` gives (activation.activated_env), and the command
replaces this process, so its exit code, signals and terminal pass straight through.
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
from typing import TYPE_CHECKING

from cuenv.errors import CuenvError, UsageError
from cuenv.result import Result
from cuenv.trust.shown import output

if TYPE_CHECKING:
    from cuenv.cli.main import Context


def configure(parser: argparse.ArgumentParser, name: str) -> None:
    parser.add_argument("name", nargs="?", metavar="NAME", help="environment")
    parser.add_argument("cmd", nargs=argparse.REMAINDER, metavar="-- CMD ...", help="command and its arguments")


def prepared_env(ctx: Context, name: str) -> dict[str, str]:
    """The activated environment of ``name``, after warning on stderr when it cannot run here.

    The command runs regardless (it may not need the GPU); a machine without any driver is not
    repeated on every run (`cuenv list` and `cuenv doctor` say it).
    """
    from cuenv.activation.plan import activated_env
    from cuenv.envs import snapshot, verdict
    from cuenv.envs.store import Store
    from cuenv.knowledge.findings import NO_GPU_HERE

    settings = ctx.settings
    store = Store.from_settings(settings)
    if snapshot.needs_recovery(store.envs_dir, name):  # a change killed half-way: its copy back first
        from cuenv.envs.change import recovered
        from cuenv.errors import EnvironmentBusy

        try:
            recovered(settings, ctx.environ, store, name)
        except EnvironmentBusy as busy:  # a change still running: the command runs, told so
            sys.stderr.write(output(f"warning: {busy.message} The command runs on it as it is now.\n"))
    record = store.get(name)
    for f in verdict.findings_for(record, ctx.environ, settings.cache_dir):
        if f.severity in ("error", "warning") and f.code not in NO_GPU_HERE:
            sys.stderr.write(output(f"warning: {f.message}\n"))
    return activated_env(ctx.environ, record.target(), home=settings.home)


def run(ctx: Context) -> Result:
    argv = list(ctx.args.cmd)
    if argv and argv[0] == "--":
        argv = argv[1:]
    if not ctx.args.name:  # argparse would say "required: NAME, -- CMD ..." (issue 18)
        from cuenv.envs.store import with_an_environment

        raise UsageError("`cuenv run` needs an environment and a command after --.",
                         hint=with_an_environment(ctx.settings, lambda n: f"cuenv run {n} -- python -V", "For example"))
    if not argv:
        import shlex

        raise UsageError("No command given.", hint=f"Write it after --: `cuenv run {shlex.quote(ctx.args.name)} -- python -V`.")
    env = prepared_env(ctx, ctx.args.name)
    exe = shutil.which(argv[0], path=env.get("PATH", ""))
    if exe is None:
        raise CuenvError(f"Command {argv[0]!r} was not found in environment {ctx.args.name!r} nor on PATH.", exit_code=127)
    sys.stdout.flush()
    sys.stderr.flush()
    os.execve(exe, argv, env)
    raise AssertionError("unreachable")  # pragma: no cover
