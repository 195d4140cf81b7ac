"""The README opens with two commands, and CI runs the second one exactly (issue 18)."""

from __future__ import annotations

import re
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


def _readme_commands() -> list[str]:
    text = (REPO / "README.md").read_text(encoding="utf-8")
    block = re.search(r"```bash\n(.*?)```", text, re.S)
    assert block, "README has no bash block"
    return [ln for ln in block.group(1).splitlines() if ln.strip() and not ln.startswith("#")]


def test_the_readme_opens_with_an_install_and_a_test_command():
    install, tests = _readme_commands()
    # no system-wide pip: Debian's python3 refuses it (externally managed)
    assert "python3 -m pip install" not in install and "python3 -m pip install" not in tests
    assert "cuenv create" in install and "pytest" in tests


def test_ci_runs_the_readmes_test_command_exactly():
    ci = (REPO / ".ci" / "run").read_text(encoding="utf-8")
    last = [ln for ln in ci.splitlines() if ln.strip() and not ln.startswith("#")][-1]
    assert last == _readme_commands()[1]
    assert "python3-venv" in ci  # `python3 -m venv` on a fresh Debian needs it
