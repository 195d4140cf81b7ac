"""Consent to a .cuenv pin, round two (issue 31 §7), in real bash, zsh and fish: the hook's cache is keyed
on the file's content, not its mtime; `cuenv allow` holds through symlinked folders both ways (the
shell's logical $PWD and the physical folder); a folder name with a newline or another control
character is never a pin and breaks no hook."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from .conftest import World, shell_or_skip
from .test_untrusted_pins import _run

pytestmark = pytest.mark.network  # the `world` fixture downloads NVIDIA wheels from PyPI (once)
SHELLS = ["bash", "zsh", "fish"]


def _show(shell: str) -> str:
    return 'echo "at=${CUENV_ACTIVE-none}"' if shell != "fish" else 'echo "at=$CUENV_ACTIVE"'


def _none(shell: str) -> str:
    return "at=none" if shell != "fish" else "at="


@pytest.mark.parametrize("shell_name", SHELLS)
def test_an_edit_that_keeps_the_mtime_is_asked_about_again(shell_name: str, world: World, tmp_path: Path):
    """Before, the hook re-asked only for a file newer than its last look: an edit made with the old
    mtime (`touch -r`, a restored backup, a checkout keeping times) kept the old answer."""
    shell_or_skip(shell_name)
    proj, outside = tmp_path / "proj", tmp_path / "elsewhere"
    proj.mkdir()
    outside.mkdir()
    pin = proj / ".cuenv"
    pin.write_text("env: cuda-12.4\n")
    os.utime(pin, (1_000_000_000, 1_000_000_000))  # long before any stamp cuenv writes
    show = _show(shell_name)
    steps = [f"cd '{proj}'", "cuenv allow >/dev/null", show, f"cd '{outside}'", show,
             f"printf 'env: cuda-12.1\\n' > '{pin}'; touch -d @1000000000 '{pin}'",  # same size class, old mtime
             f"cd '{proj}'", show]
    lines, err = _run(shell_name, world, tmp_path, steps, outside)
    assert lines == ["at=cuda-12.4", _none(shell_name), _none(shell_name)]
    assert "is not allowed yet: it would activate cuda-12.1." in err


@pytest.mark.parametrize("shell_name", SHELLS)
@pytest.mark.parametrize("allow_from", ["link", "real"])
def test_allow_holds_through_a_symlinked_folder_both_ways(shell_name: str, allow_from: str, world: World, tmp_path: Path):
    shell_or_skip(shell_name)
    real = tmp_path / "data" / "proj"
    real.mkdir(parents=True)
    (real / ".cuenv").write_text("env: cuda-12.4\n")
    (real / "src").mkdir()
    link = tmp_path / "home-proj"
    link.symlink_to(real)
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    here, there = (link, real) if allow_from == "link" else (real, link)
    show = _show(shell_name)
    steps = [f"cd '{here}/src'", "cuenv allow >/dev/null", show, f"cd '{outside}'", show, f"cd '{there}/src'", show,
             'echo "pwd=$PWD"']
    lines, err = _run(shell_name, world, tmp_path, steps, outside)
    assert lines == ["at=cuda-12.4", _none(shell_name), "at=cuda-12.4"], err
    assert err.count("is not allowed yet") == 1  # the first cd, before `cuenv allow`; never after


@pytest.mark.parametrize("shell_name", SHELLS)
@pytest.mark.parametrize("name", ["new\nline", "esc\x1b[2Jx"])
def test_a_folder_name_with_a_control_character_is_never_a_pin(shell_name: str, name: str, world: World, tmp_path: Path):
    shell_or_skip(shell_name)
    proj = tmp_path / name
    proj.mkdir()
    (proj / ".cuenv").write_text("env: cuda-12.4\n")
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    (outside / "go").symlink_to(proj)  # a plain name to cd through; $PWD keeps the control character
    show = _show(shell_name)
    physical = "cd -P ." if shell_name != "fish" else "cd (builtin realpath . | string collect)"
    steps = [f"cd '{outside}/go'", show, physical, show, "cuenv allow >/dev/null 2>&1; echo \"allow=$?\"" if shell_name != "fish"
             else "cuenv allow >/dev/null 2>&1; echo allow=$status", show, f"cd '{outside}'", "echo at=end"]
    lines, err = _run(shell_name, world, tmp_path, steps, outside)
    assert lines == [_none(shell_name)] * 3 + ["at=end"], err
    assert "Traceback" not in err
