"""Placeholder for a command that is laid out in the CLI but not built yet: it says so, exit 2."""

from __future__ import annotations

import argparse

from cuenv.errors import UsageError


def configure(parser: argparse.ArgumentParser, name: str) -> None:
    parser.add_argument("rest", nargs=argparse.REMAINDER, help=argparse.SUPPRESS)


def run(ctx):
    raise UsageError(
        f"`cuenv {ctx.args.command}` is not available in this version of cuenv yet.",
        hint="Run `cuenv --help` for the commands that are.",
    )
