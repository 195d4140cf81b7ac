"""`cuenv allow [PATH]` and `cuenv deny [PATH]`: approve or block a project's `.cuenv` pin (issue 14 §4).

A pin acts (auto-activation, `cuenv use` without a name) only once its exact content at its exact
path was allowed; see cuenv.trust.consent and docs/concepts/security.md.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import TYPE_CHECKING

from cuenv.result import Result

if TYPE_CHECKING:
    from cuenv.cli.main import Context
    from cuenv.envs.project import ProjectPin
    from cuenv.result import JSONObject


def configure(parser: argparse.ArgumentParser, name: str) -> None:
    parser.add_argument("path", nargs="?", metavar="PATH",
                        help="a .cuenv file or the folder holding it (default: the nearest .cuenv from here up)")


def run(ctx: Context) -> Result[Consent]:
    from cuenv.envs import project
    from cuenv.trust import Untrusted, consent

    home = ctx.settings.home
    pin = project.locate(Path(ctx.args.path) if ctx.args.path else None, cwd=consent.logical_cwd(ctx.environ))
    why = consent.path_problem(pin.file)
    if why is not None and ctx.args.command == "allow":
        raise Untrusted(f"Refusing to allow {pin.file!r}: {why}.",
                        hint="Rename the folder; no shell hook activates a pin there.")
    if ctx.args.command == "allow":
        consent.allow(home, pin.file, pin.content)
        return Result(Consent(pin, consent.ALLOWED), render)
    consent.deny(home, pin.file)
    return Result(Consent(pin, consent.DENIED), render)


class Consent:
    """`cuenv allow` / `cuenv deny`: ``{"file", "env", "lock", "status"}`` of the .cuenv file decided on."""

    __slots__ = ("pin", "status")

    def __init__(self, pin: ProjectPin, status: str) -> None:
        self.pin, self.status = pin, status  # status: cuenv.trust.consent.ALLOWED or DENIED

    def to_json(self) -> JSONObject:
        pin = self.pin
        return {"file": str(pin.file), "env": pin.env, "lock": str(pin.lock) if pin.lock else None, "status": self.status}


def render(done: Consent) -> str:
    from cuenv.trust import consent

    if done.status == consent.ALLOWED:
        return f"Allowed {done.pin.file}: it activates {done.pin.env}."
    return f"Denied {done.pin.file}: it stays blocked, silently, until `cuenv allow {done.pin.file}`."
