"""docs/guides/team.md, run as written: every ```bash block after a `<!-- run: MACHINE ... -->` line.

Each machine is a separate CUENV_HOME with its own clone of one bare git repository; `fails` blocks
must exit non-zero with exactly the stderr shown in the ```text block that follows them.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
GUIDE = REPO / "docs" / "guides" / "team.md"
_BLOCK = re.compile(r"<!-- run: (?P<spec>[^>]*?) -->\n```bash\n(?P<body>.*?)```(?:\n\n```text\n(?P<expect>.*?)```)?", re.S)


def blocks() -> list[tuple[str, dict[str, str], bool, list[str], str | None]]:
    out = []
    for m in _BLOCK.finditer(GUIDE.read_text()):
        words = m.group("spec").split()
        env = dict(w.split("=", 1) for w in words[1:] if "=" in w)
        lines = [ln for ln in m.group("body").splitlines() if ln.strip() and not ln.startswith("#")]
        out.append((words[0], env, "fails" in words, lines, m.group("expect")))
    return out


def test_the_guide_has_runnable_blocks() -> None:
    found = blocks()
    assert [b[0] for b in found] == ["laptop", "teammate", "teammate", "old-node", "laptop", "laptop"]
    assert sum(len(b[3]) for b in found) == 13


@pytest.mark.network
def test_team_guide_end_to_end(tmp_path: Path) -> None:
    shim = tmp_path / "bin"
    shim.mkdir()
    (shim / "cuenv").write_text(f'#!/bin/sh\nPYTHONPATH={REPO} exec {sys.executable} -m cuenv "$@"\n')
    (shim / "cuenv").chmod(0o755)
    origin = tmp_path / "origin.git"
    subprocess.run(["git", "init", "-q", "--bare", "-b", "main", str(origin)], check=True)
    base = {k: v for k, v in os.environ.items() if not k.startswith(("CUENV_DRIVER", "CUENV_GPUS", "CONDA_OVERRIDE"))}
    base.update(PATH=f"{shim}{os.pathsep}{os.environ['PATH']}", GIT_AUTHOR_NAME="Ada", GIT_AUTHOR_EMAIL="ada@example.org",
                GIT_COMMITTER_NAME="Ada", GIT_COMMITTER_EMAIL="ada@example.org", GIT_CONFIG_NOSYSTEM="1",
                HOME=str(tmp_path))
    machines: dict[str, dict] = {}
    for name, extra, fails, lines, expect in blocks():
        if name not in machines:
            home = tmp_path / name
            subprocess.run(["git", "clone", "-q", str(origin), str(home / "project")], check=True, env=base,
                           capture_output=True)
            machines[name] = dict(base, CUENV_HOME=str(home / "cuenv"), CUENV_CONFIG=str(home / "config.yaml"))
        env = dict(machines[name], **extra)
        cwd = tmp_path / name / "project"
        for line in lines:
            done = subprocess.run(["bash", "-c", line], cwd=cwd, env=env, capture_output=True, text=True, timeout=600)
            if fails:
                assert done.returncode != 0, line
                assert done.stderr == expect, done.stderr
            else:
                assert done.returncode == 0, f"{name}$ {line}\n{done.stdout}\n{done.stderr}"
            if "cudaRuntimeGetVersion" in line:
                assert done.stdout.strip() == "12010"
    # What the guide promises beyond exit codes:
    assert not (tmp_path / "old-node" / "cuenv" / "envs" / "cuda-12.1").exists()
    assert (tmp_path / "teammate" / "cuenv" / "envs" / "cuda-12.1" / ".cuenv" / "complete").exists()
    assert "  solved_for:\n    driver: 550.54.14\n" in (tmp_path / "laptop" / "project" / "cluster.lock").read_text()
    assert "--hash=sha256:" in (tmp_path / "laptop" / "project" / "exported" / "requirements.txt").read_text()
