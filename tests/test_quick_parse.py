"""The start-up fast path (cuenv.cli.quick) parses a line exactly as argparse does, or declines it.

For every command, typical lines are parsed both ways: where the fast path answers, its namespace
must equal argparse's; the lines it must leave to argparse (help, typos, abbreviations, -vv, split
positionals, a bad choice) get None, so argparse words the error as before.
"""

from __future__ import annotations

import argparse

import pytest

from cuenv.cli import quick
from cuenv.cli.parser import build_parser
from cuenv.cli.spec import COMMANDS, global_options


def _argparse(argv: list[str]) -> dict | None:
    parser = build_parser(argv[0])
    try:
        args, extras = parser.parse_known_args(argv)
    except (SystemExit, Exception):  # noqa: BLE001 - any refusal: the fast path must decline too
        return None
    return None if extras else vars(args)


def _quick(argv: list[str]) -> dict | None:
    got = quick.parse(argv, argv[0], COMMANDS[argv[0]][0], global_options)
    return None if got is None else vars(got)


def test_suppress_is_argparse_s():
    assert quick.SUPPRESS == argparse.SUPPRESS


LINES = [
    ["list"], ["list", "--json"], ["list", "--system", "--du", "-q"], ["list", "-v"], ["list", "--home", "/tmp/h"],
    ["list", "--home=/tmp/h", "--recipes", "a", "--recipes", "b"],
    ["info"], ["info", "myenv", "--refresh"],
    ["check", "cuda-12.1"], ["check", "cuda-12.1", "--driver", "550.54.14", "--cc", "8.6", "--cc", "9.0"],
    ["check", "torch==2.1.0+cu121", "--driver", "470.82.01", "--cc", "8.6", "--json"], ["check", "--all"],
    ["check", "x", "--os", "windows"], ["check", "--driver", "535.104.05", "cuda-12.1"],
    ["use", "myenv"], ["use", "myenv", "--strict"], ["use"],
    ["remove", "a"], ["run", "a", "--", "python"], ["create", "cuda-12.1", "-n", "x", "--engine", "venv", "-q"],
    ["add", "-n", "bench", "six", "-q"], ["uninstall", "-n", "bench", "six", "-q"], ["lock", "x", "-o", "cuenv.lock"],
    ["add", "six", "numpy>=2", "--pypi", "--dry-run"], ["upgrade", "-n", "x", "numpy"], ["install", "a", "b", "c"],
    ["export", "x", "--format", "requirements"], ["suggest", "--driver", "550.54.14", "--cc", "6.1", "--cc", "8.9"],
    ["recipes"], ["recipes", "list"], ["doctor"], ["config"], ["tui"], ["test", "x"], ["image", "build", "x"],
]


@pytest.mark.parametrize("argv", LINES, ids=" ".join)
def test_the_fast_path_parses_as_argparse_does(argv):
    fast = _quick(argv)
    if fast is not None:
        assert fast == _argparse(argv)


@pytest.mark.parametrize("argv", [
    ["list", "--help"], ["list", "-h"], ["list", "--sys"], ["list", "-vv"], ["list", "--nope"], ["list", "extra"],
    ["check", "a", "--cc", "8.6", "b"], ["check", "x", "--os", "plan9"], ["check", "x", "--driver"],
    ["check", "x", "--driver", "-1"], ["list", "--json=1"], ["use", "a", "b"], ["add", "-n", "x"], ["add"],
])
def test_the_fast_path_declines_what_argparse_must_word(argv):
    assert _quick(argv) is None


@pytest.mark.parametrize("argv", [["list"], ["list", "--json", "-q"], ["check", "cuda-12.1", "--driver", "550.54.14", "--cc", "8.6"],
                                  ["info"], ["use", "x", "--strict"], ["add", "-n", "bench", "six", "-q"],
                                  ["uninstall", "six", "numpy"]])
def test_everyday_lines_take_the_fast_path(argv):
    assert _quick(argv) is not None
