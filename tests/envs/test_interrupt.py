"""An interrupted create never leaves an environment that looks usable (issue 4 §6)."""

from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.envs.envkit import LOAD_CUDART, killable


def _start(args: list[str], env: dict[str, str] | None = None) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-m", "cuenv", *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, env=env)


def _states(cuenv) -> dict[str, str]:
    out = cuenv("list", "--json")
    assert out.returncode == 0, out.stderr
    return {e["name"]: e["status"] for e in json.loads(out.stdout)["environments"]}


def _works(cuenv, name: str) -> bool:
    out = cuenv("run", name, "--", "python3", "-c", LOAD_CUDART, "12")
    return out.returncode == 0 and out.stdout.strip() == "12010"


@pytest.mark.parametrize("engine", ["rattler", "venv"])
def test_kill_9_at_random_points(cuenv, local_recipes, engine, tmp_path: Path):
    recipe = "local-cuda-12.1" if engine == "rattler" else "cuda-12.1"
    args = ["create", recipe, "--engine", engine, "--recipes", str(local_recipes), "-n", "victim", "--force"]
    # how long a whole create takes here, so the kills land all over it
    t0 = time.monotonic()
    assert cuenv(*args).returncode == 0
    full = time.monotonic() - t0
    rng = random.Random(1234)
    for _ in range(8):
        proc = _start(args, env=killable(os.environ, tmp_path / "tmp"))
        time.sleep(rng.uniform(0.0, full))
        proc.send_signal(signal.SIGKILL)
        proc.wait()
        state = _states(cuenv).get("victim")
        # killed before the prefix was made, left incomplete, or finished: never usable-but-broken
        assert state in (None, "incomplete", "ok", "warning", "error", "unknown")
        if state not in (None, "incomplete"):
            assert _works(cuenv, "victim")
        else:
            blocked = cuenv("run", "victim", "--", "true")
            assert blocked.returncode != 0
    # a new create cleans up whatever was left, and leaves no lock file or claim behind. Whether a kill
    # landed mid-create is timing (with --force the old environment survives every kill before the
    # swap), so only what holds for every kill is asserted (issue 14).
    assert cuenv(*args).returncode == 0
    assert _works(cuenv, "victim")
    envs = Path(os.environ["CUENV_HOME"]) / "envs"
    assert not list(envs.glob(".locks/*")) and not list(envs.glob(".claims/*"))


def test_incomplete_leftover_is_cleaned_by_create_and_remove(cuenv, local_recipes, isolated):
    args = ["create", "local-cuda-12.1", "--engine", "rattler", "--recipes", str(local_recipes)]
    assert cuenv(*args).returncode == 0
    (isolated / "home" / "envs" / "local-cuda-12.1" / ".cuenv" / "complete").unlink()  # as after a kill -9
    assert _states(cuenv) == {"local-cuda-12.1": "incomplete"}
    used = cuenv("run", "local-cuda-12.1", "--", "true")
    assert used.returncode == 1 and "is incomplete" in used.stderr
    assert cuenv(*args).returncode == 0  # no --force needed to replace an incomplete leftover
    assert _works(cuenv, "local-cuda-12.1")
    (isolated / "home" / "envs" / "local-cuda-12.1" / ".cuenv" / "complete").unlink()
    assert cuenv("remove", "local-cuda-12.1", "-y").returncode == 0
    assert _states(cuenv) == {}


def test_ctrl_c_takes_everything_back(cuenv, local_recipes, isolated):
    env = dict(os.environ, CUENV_CACHE_DIR=str(isolated / "cold-cache"))  # a cold cache: the install takes a while
    interrupted = 0
    for i, delay in enumerate((0.15, 0.25, 0.35, 0.5, 0.8)):
        name = f"interrupted{i}"
        proc = _start(["create", "cuda-12.1", "--engine", "venv", "-n", name], env=env)
        # Wait for cuenv's first progress line: a signal during the interpreter's own start-up (site
        # imports, before cuenv runs at all) is Python's to handle, and a loaded machine makes that long.
        first = proc.stderr.readline()
        time.sleep(delay)
        proc.send_signal(signal.SIGINT)
        _, rest = proc.communicate(timeout=120)
        err = first + rest
        if proc.returncode == 0:
            continue  # finished before the signal
        assert proc.returncode == 130, err
        assert "interrupted" in err and "Traceback" not in err
        assert not (isolated / "home" / "envs" / name).exists()
        interrupted += 1
    assert interrupted, "every create finished before Ctrl-C: the test proved nothing"


def test_concurrent_creates_of_one_name(cuenv, local_recipes):
    args = ["create", "local-cuda-12.1", "--engine", "rattler", "--recipes", str(local_recipes), "-n", "twin"]
    procs = [_start(args) for _ in range(3)]
    results = [(p.wait(), p.stderr.read()) for p in procs]
    codes = sorted(code for code, _ in results)
    # one builds it; the others are told it is busy or that it now exists; none interleave
    assert codes.count(0) >= 1, results
    for code, err in results:
        if code != 0:
            assert "being changed by another cuenv process" in err or "already exists" in err, err
    assert _states(cuenv) != {} and _works(cuenv, "twin")


@pytest.mark.skipif(os.geteuid() != 0, reason="mounting a small tmpfs needs root")
def test_full_disk_leaves_nothing_usable(cuenv, tmp_path):
    home = tmp_path / "small-home"
    home.mkdir()
    try:
        subprocess.run(["mount", "-t", "tmpfs", "-o", "size=8m", "tmpfs", str(home)], check=True, capture_output=True)
    except (subprocess.CalledProcessError, FileNotFoundError):
        pytest.skip("cannot mount a tmpfs here")
    try:
        env = dict(os.environ, CUENV_HOME=str(home))
        out = cuenv("create", "cuda-12.1", "--engine", "venv", env=env)  # ~55 MB into 8 MB
        assert out.returncode == 1, out.stderr
        assert "Traceback" not in out.stderr and out.stderr.count("error: ") == 1
        assert "error: The disk is full" in out.stderr, out.stderr
        listed = cuenv("list", "--json", env=env)
        assert json.loads(listed.stdout)["environments"] == []
        assert not (Path(home) / "envs" / "cuda-12.1").exists()
    finally:
        subprocess.run(["umount", str(home)], check=False)


def test_sigterm_cleans_temp_folders_and_locks(cuenv, isolated, tmp_path):
    # SIGTERM (a closed terminal, a CI timeout) unwinds like Ctrl-C: no cuenv-* temp folder, lock file or
    # usable-looking environment is left (issue 14). Only SIGKILL cannot be cleaned up after.
    tmp = tmp_path / "tmp"
    tmp.mkdir()
    env = dict(os.environ, TMPDIR=str(tmp), CUENV_CACHE_DIR=str(isolated / "cold-cache"))
    for i, delay in enumerate((0.3, 0.6, 1.0)):
        proc = _start(["create", "cuda-12.1", "--engine", "venv", "-n", f"term{i}"], env=env)
        time.sleep(delay)
        proc.send_signal(signal.SIGTERM)
        _, err = proc.communicate(timeout=120)
        # 143: unwound by cuenv's handler; -15: killed before cuenv started (nothing made yet); 0: finished
        assert proc.returncode in (0, 143, -signal.SIGTERM), err
        assert "Traceback" not in err
        assert not [p.name for p in tmp.iterdir() if p.name.startswith("cuenv-")]
        envs = isolated / "home" / "envs"
        assert not list(envs.glob(".locks/*")) and not list(envs.glob(".claims/*"))
        if proc.returncode != 0:  # gone, or (a signal after the last step, under load) complete: never half-built
            assert not (envs / f"term{i}").exists() or (envs / f"term{i}" / ".cuenv" / "complete").exists()
