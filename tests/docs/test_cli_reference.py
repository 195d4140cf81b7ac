"""docs/reference/cli.md is generated from the parser; this fails when it is stale."""

from __future__ import annotations

import argparse
from pathlib import Path

from cuenv.cli import docgen
from cuenv.cli import walk as cliwalk

REPO = Path(__file__).resolve().parents[2]
PAGE = REPO / "docs" / "reference" / "cli.md"
REGENERATE = "python -m cuenv.cli.docgen > docs/reference/cli.md"


def test_cli_reference_is_current() -> None:
    assert PAGE.read_text(encoding="utf-8") == docgen.render(), f"docs/reference/cli.md is stale; regenerate it: {REGENERATE}"


def test_every_visible_command_and_option_is_in_the_reference() -> None:
    text = PAGE.read_text(encoding="utf-8")
    for command in cliwalk.command_tree().walk():
        assert f"# {command.name}\n" in text
        for option in command.options:
            assert option.flags[-1] in text


def test_nested_and_hidden_commands() -> None:
    tree = cliwalk.command_tree()
    names = [c.name for c in tree.walk()]
    assert {"cuenv recipes list", "cuenv recipes show", "cuenv recipes lint"} <= set(names)
    assert "cuenv shell-env" not in names  # hidden: no help, not in --help
    create = next(c for c in tree.walk() if c.path == ("create",))
    engine = next(o for o in create.options if "--engine" in o.flags)
    assert engine.choices == ("auto", "conda", "mamba", "micromamba", "rattler", "venv")
    assert next(o for o in create.options if "--target-gpu" in o.flags).repeatable


def test_walk_reads_a_small_parser() -> None:
    parser = argparse.ArgumentParser(prog="tool", description="A tool.")
    parser.add_argument("--hidden", help=argparse.SUPPRESS)
    parser.add_argument("-x", "--level", type=int, default=3, help="level (default: %(default)s)")
    sub = parser.add_subparsers(dest="cmd")
    go = sub.add_parser("go", help="go somewhere")
    go.add_argument("where", choices=["up", "down"])
    sub.add_parser("secret")  # no help: hidden
    tree = cliwalk.walk(parser)
    assert [o.flags for o in tree.options] == [("-h", "--help"), ("-x", "--level")]
    assert tree.options[1].help == "level (default: 3)" and tree.options[1].metavar == "LEVEL"
    assert [c.path for c in tree.subcommands] == [("go",)]
    assert tree.subcommands[0].positionals[0].choices == ("up", "down")
    assert "usage: tool go" in tree.subcommands[0].usage
