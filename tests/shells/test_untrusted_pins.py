"""A .cuenv file from a clone acts only once allowed (issue 14 §4), in real bash, zsh and fish."""

from __future__ import annotations

from pathlib import Path

import pytest

from .conftest import World, hook_source, run_shell, shell_or_skip

pytestmark = pytest.mark.network  # the `world` fixture downloads NVIDIA wheels from PyPI (once)

ARGV = {
    # bash runs PROMPT_COMMAND only when interactive: feed the commands on stdin to `bash -i`
    "bash": ["bash", "--norc", "--noprofile", "-i"],
    "zsh": ["zsh", "-f", "-c"],
    "fish": ["fish", "--no-config", "-c"],
}


def _run(shell: str, world: World, tmp_path: Path, steps: list[str], cwd: Path) -> tuple[list[str], str]:
    env = world.environ(tmp_path, CUENV_AUTO_ACTIVATE="1", PS1="$ ", CUENV_HOME=str(world.home))
    steps = [hook_source(shell, world, tmp_path), *steps]
    if shell == "bash":
        out = run_shell(shell, "", env, cwd=cwd, argv=ARGV[shell], stdin="\n".join(steps) + "\nexit\n")
    else:
        out = run_shell(shell, "\n".join(steps), env, cwd=cwd, argv=ARGV[shell])
    assert out.returncode == 0, out.stderr
    return [line for line in out.stdout.splitlines() if line.startswith("at=")], out.stderr


@pytest.mark.parametrize("shell_name", ["bash", "zsh", "fish"])
def test_a_pin_acts_only_once_allowed_and_again_after_an_edit(shell_name: str, world: World, tmp_path: Path):
    shell_or_skip(shell_name)
    proj = tmp_path / "cloned repo"
    proj.mkdir()
    pin = proj / ".cuenv"
    pin.write_text("env: cuda-12.4\n")
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    show = 'echo "at=${CUENV_ACTIVE-none}"' if shell_name != "fish" else 'echo "at=$CUENV_ACTIVE"'
    none = "at=none" if shell_name != "fish" else "at="
    steps = [
        f"cd '{proj}'", show,                      # never allowed: nothing happens, and it says why
        "cuenv allow >/dev/null", show,            # allowed: activates at once
        f"cd '{outside}'", show,
        # a `git pull` changes the pin: blocked again, whatever it names now
        f"sleep 0.05; echo 'env: cuda-12.1' > '{pin}'",
        f"cd '{proj}'", show,
        "cuenv deny >/dev/null", f"cd '{outside}'", f"cd '{proj}'", show,  # denied: silent
    ]
    lines, err = _run(shell_name, world, tmp_path, steps, outside)
    assert lines == [none, "at=cuda-12.4", none, none, none]
    assert err.count("is not allowed yet: it would activate cuda-12.4.") == 1
    assert err.count("is not allowed yet: it would activate cuda-12.1.") == 1
    assert f"cuenv allow '{pin}'" in err and "Traceback" not in err


@pytest.mark.parametrize("shell_name", ["bash", "zsh", "fish"])
def test_a_huge_pin_does_not_block_cd(shell_name: str, world: World, tmp_path: Path):
    shell_or_skip(shell_name)
    proj = tmp_path / "big"
    proj.mkdir()
    (proj / ".cuenv").write_text("env: " + "a" * 3_000_000 + "\n")  # blocked `cd` in bash for minutes before
    show = 'echo "at=${CUENV_ACTIVE-none}"' if shell_name != "fish" else 'echo "at=$CUENV_ACTIVE"'
    lines, err = _run(shell_name, world, tmp_path, [f"cd '{proj}'", show], tmp_path)  # the size guard ends it, not a clock
    assert lines == ["at=none" if shell_name != "fish" else "at="]
    assert "is larger than 64 KiB" in err


def test_use_without_a_name_refuses_an_unapproved_pin(world: World, tmp_path: Path):
    proj = tmp_path / "p"
    proj.mkdir()
    (proj / ".cuenv").write_text("env: cuda-12.4\n")
    env = world.environ(tmp_path)
    out = run_shell("bash", hook_source("bash", world, tmp_path) + '; cuenv use; echo "rc=$? at=${CUENV_ACTIVE-none}"',
                    env, cwd=proj)
    assert out.stdout.strip() == "rc=1 at=none"
    assert "is not allowed yet: it would activate cuda-12.4." in out.stderr


@pytest.mark.parametrize("shell_name", ["bash", "zsh", "fish"])
@pytest.mark.parametrize("allowed", [True, False])
def test_a_pinned_use_starts_the_program_once(shell_name: str, allowed: bool, world: World, tmp_path: Path):
    """`cuenv use` with no name in a folder whose .cuenv file the hook has not read yet: one program start
    that reads the pin (issue 24 §4); before, `shell-env pin` and then `shell-env use` both started and
    read it, and a file not allowed was said twice. The answer is cached for the next look, as `pin`'s."""
    shell_or_skip(shell_name)
    proj = tmp_path / "proj"
    proj.mkdir()
    (proj / ".cuenv").write_text("env: cuda-12.4\n")
    if allowed:
        from cuenv.trust import consent

        consent.allow(world.home, proj / ".cuenv", (proj / ".cuenv").read_bytes())
    starts = tmp_path / "starts"
    wrap = tmp_path / "wrapped"
    wrap.mkdir()
    (wrap / "cuenv").write_text(f"#!/bin/sh\nprintf '%s\\n' \"$*\" >> '{starts}'\nexec '{world.bin_dir / 'cuenv'}' \"$@\"\n")
    (wrap / "cuenv").chmod(0o755)
    env = world.environ(tmp_path, CUENV_AUTO_ACTIVATE="0", CUENV_HOME=str(world.home))
    env["PATH"] = f"{wrap}:{env['PATH']}"
    show = 'echo "at=${CUENV_ACTIVE-none}"' if shell_name != "fish" else 'echo "at=$CUENV_ACTIVE"'
    hook = hook_source(shell_name, world, tmp_path)
    steps = [hook, "cuenv use", show, "cuenv use", show]
    argv = ARGV[shell_name] if shell_name != "bash" else ["bash", "--norc", "--noprofile", "-c"]
    out = run_shell(shell_name, "\n".join(steps), env, cwd=proj, argv=argv)
    lines = [line for line in out.stdout.splitlines() if line.startswith("at=")]
    calls = starts.read_text().splitlines() if starts.exists() else []
    if allowed:
        assert lines == ["at=cuda-12.4", "at=cuda-12.4"], out.stderr
        assert calls == [f"shell-env {shell_name} use"], calls  # the second `use` takes the fast path
    else:
        assert lines[0] in ("at=none", "at="), out.stderr
        assert [c for c in calls if " pin " in f" {c} "] == [], calls
        assert len(calls) == 2 and out.stderr.count("is not allowed yet") == 2  # once per `use`, not twice each
