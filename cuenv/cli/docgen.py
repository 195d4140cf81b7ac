"""Render docs/reference/cli.md from the argparse parser, so the reference cannot drift from the code.

    python -m cuenv.cli.docgen > docs/reference/cli.md

Shipped in the package (not a script under docs/) because it shares cuenv.cli.walk with
`cuenv completion`, and because a test imports it; it costs nothing at start-up (imported only here).
"""

from __future__ import annotations

import re
import sys

from cuenv.cli.walk import Command, Option, Positional, command_tree

HEADER = """\
# Command-line reference

<!-- Generated from the argparse parser by `python -m cuenv.cli.docgen > docs/reference/cli.md`.
     Do not edit by hand: tests/docs/test_cli_reference.py fails when this file is stale. -->

Every command accepts the [global options](#global-options) before or after its name, and
`-h`/`--help`. Exit codes: 0 success, 1 a failure or a check that found errors, 2 a usage or
configuration error, 130 interrupted. Settings that also come from an environment variable are
listed in [Environment variables](environment-variables.md).
"""


def _anchor(command: Command) -> str:
    return re.sub(r"[^\w-]", "", command.name.lower().replace(" ", "-"))


def _option_line(option: Option) -> str:
    flags = ", ".join(f"{flag} {option.metavar}" if option.metavar else flag for flag in option.flags)
    text = f"* `{flags}`"
    details = option.help
    if option.choices and not (option.metavar or "").startswith("{"):
        details += ("; one of " if details else "One of ") + ", ".join(f"`{c}`" for c in option.choices)
    if option.repeatable and "repeat" not in details:
        details += " (repeatable)"
    return text + (f": {details}" if details else "")


def _positional_line(arg: Positional) -> str:
    details = arg.help
    if arg.choices and not arg.metavar.startswith("{"):
        details += ("; one of " if details else "One of ") + ", ".join(f"`{c}`" for c in arg.choices)
    return f"* `{arg.metavar}`" + (f": {details}" if details else "")


def _groups(options: tuple[Option, ...]) -> dict[str, list[Option]]:
    groups: dict[str, list[Option]] = {}
    for option in options:
        if option.flags == ("-h", "--help"):
            continue
        groups.setdefault(option.group, []).append(option)
    return groups


def _section(command: Command) -> list[str]:
    level = "#" * min(2 + max(len(command.path) - 1, 0), 4)
    lines = [f"{level} {command.name}", ""]
    if command.description:
        description = command.description[:1].upper() + command.description[1:]
        lines += [description if description.endswith((".", "?", "!")) else description + ".", ""]
    lines += ["```text", command.usage, "```", ""]
    if command.epilog:
        lines += [command.epilog, ""]
    if command.subcommands:
        lines += ["**Subcommands**", ""]
        lines += [f"* [`{sub.name}`](#{_anchor(sub)}): {sub.help}" for sub in command.subcommands]
        lines.append("")
    if command.positionals:
        lines += ["**Arguments**", ""] + [_positional_line(p) for p in command.positionals] + [""]
    for title, options in _groups(command.options).items():
        if title == "global options" and command.path:
            continue
        heading = "Options" if title == "options" else title[:1].upper() + title[1:]
        if title == "global options":
            lines += ['<a id="global-options"></a>', ""]
        lines += [f"**{heading}**", ""] + [_option_line(o) for o in options] + [""]
    return lines


def render(tree: Command | None = None) -> str:
    tree = tree or command_tree()
    lines = [HEADER]
    for command in tree.walk():
        lines += _section(command)
    return "\n".join(lines).rstrip() + "\n"


def main() -> int:
    sys.stdout.write(render())
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
