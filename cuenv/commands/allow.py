"""`cuenv allow [PATH]` and `cuenv deny [PATH]`: approve or block a project's `.cuenv` pin (issue 14 §4).

A pin acts (auto-activation, `cuenv use` without a name) only once its exact content at its exact
path was allowed; see cuenv.trust.consent and docs/concepts/security.md.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import TYPE_CHECKING

from cuenv.result import Result, text_result

if TYPE_CHECKING:
    from cuenv.cli.main import Context
    from cuenv.result import Text


def configure(parser: argparse.ArgumentParser, name: str) -> None:
    parser.add_argument("path", nargs="?", metavar="PATH",
                        help="a .cuenv file or the folder holding it (default: the nearest .cuenv from here up)")


def run(ctx: Context) -> Result[Text]:
    from cuenv.envs import project
    from cuenv.trust import Untrusted, consent

    home = ctx.settings.home
    pin = project.locate(Path(ctx.args.path) if ctx.args.path else None, cwd=consent.logical_cwd(ctx.environ))
    why = consent.path_problem(pin.file)
    if why is not None and ctx.args.command == "allow":
        raise Untrusted(f"Refusing to allow {pin.file!r}: {why}.",
                        hint="Rename the folder; no shell hook activates a pin there.")
    data = {"file": str(pin.file), "env": pin.env, "lock": str(pin.lock) if pin.lock else None}
    if ctx.args.command == "allow":
        consent.allow(home, pin.file, pin.content)
        text = f"Allowed {pin.file}: it activates {pin.env}."
        return text_result(data={**data, "status": consent.ALLOWED}, text=text)
    consent.deny(home, pin.file)
    text = f"Denied {pin.file}: it stays blocked, silently, until `cuenv allow {pin.file}`."
    return text_result(data={**data, "status": consent.DENIED}, text=text)
