"""`cuenv tui` through the shell hook: the choice comes back through a temp file and is activated
by the hook's own `cuenv use` path, in real bash, zsh and fish.

The app itself needs a terminal (test_tmux.py runs it for real); here a stand-in `cuenv` writes the
choice the way the app does (cuenv.commands.tui.handoff) and passes every other command to cuenv.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
ARGV = {"bash": ["bash", "--norc", "--noprofile", "-c"], "zsh": ["zsh", "-f", "-c"], "fish": ["fish", "--no-config", "-c"]}


@pytest.fixture(params=["bash", "zsh", "fish"])
def shell(request: pytest.FixtureRequest) -> str:
    if shutil.which(request.param) is None:
        pytest.skip(f"{request.param} is not installed")
    return request.param


@pytest.fixture
def bin_dir(tmp_path: Path) -> Path:
    d = tmp_path / "bin"
    d.mkdir()
    exe = d / "cuenv"
    exe.write_text(
        "#!/bin/sh\n"
        'if [ "$1" = tui ]; then\n'
        '  printf "%s\\n" "$*" >>"$CUENV_TEST_LOG"\n'
        f'  PYTHONPATH={REPO} exec {sys.executable} -c "import sys, os; from pathlib import Path; '
        "from cuenv.commands.tui import handoff; a = sys.argv[1:]; "
        "f = Path(a[a.index('--choice-file') + 1]) if '--choice-file' in a else None; "
        "r = handoff(os.environ.get('CUENV_TEST_PICK') or None, f); print(r.text) if r.text else None; "
        "sys.exit(int(os.environ.get('CUENV_TEST_RC', '0')))\" \"$@\"\n"
        "fi\n"
        f'PYTHONPATH={REPO} exec {sys.executable} -m cuenv "$@"\n'
    )
    exe.chmod(0o755)
    return d


def run(shell: str, script: str, env: dict[str, str], **extra: str) -> subprocess.CompletedProcess[str]:
    hook = subprocess.run([str(env["CUENV_BIN"]), "shell-init", shell], env=env, capture_output=True, text=True,
                          check=True).stdout
    src = Path(env["TMPDIR"]) / f"hook.{shell}"
    src.write_text(hook)
    load = f"source '{src}'" if shell == "fish" else f"\\. '{src}'"
    return subprocess.run(ARGV[shell] + [load + "\n" + script + "\ntrue"], env={**env, **extra}, capture_output=True,
                          text=True, timeout=60)


@pytest.fixture
def env(make_env, environ: dict[str, str], bin_dir: Path, tmp_path: Path) -> dict[str, str]:
    make_env("cuda-12.1")
    tmp = tmp_path / "tmp"
    tmp.mkdir()
    out = {k: v for k, v in environ.items() if not k.startswith(("CUENV_TEST", "__cuenv"))}
    out.update(PATH=f"{bin_dir}:/usr/bin:/bin", TMPDIR=str(tmp), CUENV_BIN=str(bin_dir / "cuenv"),
               CUENV_TEST_LOG=str(tmp_path / "log"), HOME=str(tmp_path), TERM="dumb")
    return out


def _status(shell: str) -> str:
    return 'echo "rc=$status active=$CUENV_ACTIVE"' if shell == "fish" else 'echo "rc=$? active=${CUENV_ACTIVE-}"'


def test_use_in_the_tui_activates_in_the_calling_shell(shell: str, env: dict[str, str]):
    strict = "set -u\n" if shell == "bash" else ""
    out = run(shell, strict + "cuenv tui\n" + _status(shell) + "\ncommand -v ptxas", env, CUENV_TEST_PICK="cuda-12.1")
    assert "rc=0 active=cuda-12.1" in out.stdout, out.stderr
    assert "/envs/cuda-12.1/" in out.stdout  # ptxas now comes from the environment
    assert Path(env["CUENV_TEST_LOG"]).read_text().startswith("tui --choice-file " + env["TMPDIR"] + "/cuenv-tui.")
    assert os.listdir(env["TMPDIR"]) == [f"hook.{shell}"]  # the choice file is gone


def test_quitting_without_use_changes_nothing(shell: str, env: dict[str, str]):
    out = run(shell, "cuenv tui\n" + _status(shell), env)
    assert "rc=0 active=" + "\n" in out.stdout + "\n" and "active=cuda" not in out.stdout


def test_a_failed_tui_activates_nothing_and_passes_its_status(shell: str, env: dict[str, str]):
    out = run(shell, "cuenv tui\n" + _status(shell), env, CUENV_TEST_PICK="cuda-12.1", CUENV_TEST_RC="3")
    assert "rc=3 active=\n" in out.stdout


def test_a_hostile_choice_is_never_run(shell: str, env: dict[str, str], tmp_path: Path):
    marker = tmp_path / "pwned"
    out = run(shell, "cuenv tui\n" + _status(shell), env, CUENV_TEST_PICK=f"x; touch {marker}")
    assert "rc=1 active=\n" in out.stdout
    assert "ignoring an invalid environment name" in out.stderr
    assert not marker.exists()


def test_without_the_hook_use_prints_the_command(env: dict[str, str]):
    out = subprocess.run([env["CUENV_BIN"], "tui"], env={**env, "CUENV_TEST_PICK": "cuda-12.1"}, capture_output=True,
                         text=True)
    assert out.stdout.startswith("Run `cuenv use cuda-12.1` to activate it in this shell.")


def test_tui_needs_a_terminal(cli):
    code, out, err = cli("tui")
    assert code == 2 and err.startswith("error: `cuenv tui` needs a terminal.") and "hint:" in err


def test_without_textual_the_hint_fits_how_cuenv_was_installed(cli, monkeypatch):
    from cuenv.selfinstall import detect

    monkeypatch.setitem(sys.modules, "textual", None)  # a damaged install: Textual is a dependency
    code, out, err = cli("tui")
    assert code == 1 and err == ("error: `cuenv tui` needs Textual, which is not installed.\n"
                                 f"hint: {detect().hint_for('textual>=0.80')}\n")
    assert "cuenv[" not in err
