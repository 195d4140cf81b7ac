"""What cuenv reads from `conda create --help` and `conda info --json`, and what it passes because of it."""

from __future__ import annotations

import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from cuenv.engines.condatool import REQUIRED, CondaTool, parse_create_help, parse_info, version_tuple
from cuenv.errors import ToolError

# the lines that matter, as conda 23.x-26.x print them (argparse's usage and option list)
WITH_LIBMAMBA = """usage: conda create [-h] [--clone ENV] [-n ENVIRONMENT | -p PATH] [-c CHANNEL]
                    [--subdir SUBDIR] [--solver {classic,libmamba}] [--dev]
  -p PATH, --prefix PATH
  -O, --override-channels
  -d, --dry-run         Only display what would have been done.
  --json                Report all output as json.
  -y, --yes             Sets any confirmation values to 'yes' automatically.
  -f FILE, --file FILE  Read package versions from the given file.
  --subdir SUBDIR, --platform SUBDIR
  --solver {classic,libmamba}
"""
OLD = """usage: conda create [-h] [--clone ENV] [-n ENVIRONMENT | -p PATH] [-c CHANNEL] [--override-channels]
                    [--json] [-d] [-y] [--file FILE] [--subdir SUBDIR] [package_spec ...]
  -p PATH, --prefix PATH
  -d, --dry-run
  -y, --yes
"""


def _tool(help_text: str, configured: str | None = "classic", version: str | None = "26.7.1") -> CondaTool:
    solvers, options = parse_create_help(help_text)
    return CondaTool(exe="/opt/conda/bin/conda", version=version, solvers=solvers, configured_solver=configured,
                     options=options)


def test_a_conda_with_libmamba_gets_the_flag() -> None:
    tool = _tool(WITH_LIBMAMBA)
    assert tool.solvers == ("classic", "libmamba")
    assert tool.solver_args() == ["--solver=libmamba"] and tool.solver == "libmamba"
    assert tool.platform_args("linux-aarch64") == ["--platform", "linux-aarch64"]
    tool.check_options()


def test_an_old_conda_without_solver_or_platform_options() -> None:
    tool = _tool(OLD, configured=None, version="23.1.0")
    assert tool.solvers == () and tool.solver_args() == [] and tool.solver == "classic"
    assert tool.platform_args("osx-arm64") == ["--subdir", "osx-arm64"]
    assert not tool.sha256_explicit  # conda reads sha256 in explicit files from 24.9 on
    tool.check_options()
    bare = _tool("usage: conda create [--json] [--yes]\n")
    with pytest.raises(ToolError, match="lacks options cuenv needs: --dry-run, --prefix, --override-channels, --file"):
        bare.check_options()
    with pytest.raises(ToolError, match="cannot solve for another platform"):
        bare.platform_args("linux-aarch64")


def test_info_gives_version_and_configured_solver() -> None:
    assert parse_info(json.dumps({"conda_version": "26.7.1", "solver": {"name": "libmamba", "default": True}})) == (
        "26.7.1", "libmamba")
    assert parse_info(json.dumps({"conda_version": "22.9.0"})) == ("22.9.0", None)  # before conda said its solver
    assert parse_info("not json") == (None, None) and parse_info("[1]") == (None, None)
    assert version_tuple("26.7.2.dev0+g0f64223f") == (26, 7) and version_tuple(None) is None


@given(st.text(max_size=400))
def test_any_help_text_is_read_without_failing(text: str) -> None:
    solvers, options = parse_create_help(text)
    assert all(o.startswith("--") for o in options) and list(solvers) == sorted(set(solvers))
    assert set(REQUIRED) <= set(parse_create_help(WITH_LIBMAMBA + text)[1])


@given(st.recursive(st.none() | st.booleans() | st.integers() | st.text(max_size=10),
                    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=12), inner, max_size=4)))
def test_any_info_json_is_read_without_failing(data: object) -> None:
    version, solver = parse_info(json.dumps(data))
    assert version is None or isinstance(version, str)
    assert solver is None or isinstance(solver, str)


def test_a_conda_whose_help_says_nothing_is_tried_with_the_usual_options() -> None:
    """A broken plugin can make `conda create --help` fail: no --solver then, and the usual spellings."""
    tool = _tool("", configured=None, version=None)
    tool.check_options()
    assert tool.solver_args() == [] and tool.platform_args("linux-aarch64") == ["--platform", "linux-aarch64"]
    assert tool.describe() == "conda (version unknown) at /opt/conda/bin/conda" and tool.sha256_explicit
