"""Lock -> recreate -> compare with the venv engine and NVIDIA's real cu12 wheels from PyPI."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest
import yaml

from cuenv.engines import get_engine
from tests.envs.envkit import windows_too

pytestmark = pytest.mark.network

RUNTIME_SHA = "6e258468ddf5796e25f1dc591a31029fa317d97a0a94ed93468fc86301d61e40"  # PyPI's, as in tests/engines/channel.py
FAKE = "f" * 64


def _installed(envs: Path, name: str) -> set[tuple]:
    return {(p.name, p.version, p.url, p.sha256) for p in get_engine("venv", os.environ).installed(envs / name)}


def test_lock_recreate_relock_and_check(cli, work, envs) -> None:
    assert cli("create", "cuda-12.1", "--engine", "venv")[0] == 0
    code, out, err = cli("lock", "cuda-12.1")
    assert code == 0 and "(venv; 2 packages for linux-64)" in out, err
    text = (work / "cuenv.lock").read_text()
    data = yaml.safe_load(text)
    runtime = next(p for p in data["packages"]["linux-64"] if p["name"] == "nvidia-cuda-runtime-cu12")
    assert runtime["sha256"] == RUNTIME_SHA and runtime["index_url"] == "https://pypi.org/simple"
    assert runtime["url"].startswith("https://files.pythonhosted.org/")

    code, out, err = cli("create", "--from-lock", "cuenv.lock", "-n", "copy")
    assert code == 0, err
    assert _installed(envs, "copy") == _installed(envs, "cuda-12.1") and len(_installed(envs, "copy")) == 2
    assert cli("lock", "copy", "-o", "copy.lock")[0] == 0
    assert (work / "copy.lock").read_text() == text
    libcudart = envs / "copy" / ".cuenv" / "cuda" / "lib64" / "libcudart.so.12"
    probe = ("import ctypes,sys; v=ctypes.c_int(); ctypes.CDLL(sys.argv[1]).cudaRuntimeGetVersion(ctypes.byref(v)); "
             "print(v.value)")
    assert subprocess.run(["python3", "-c", probe, str(libcudart)], capture_output=True, text=True).stdout.strip() == "12010"

    # Drift: a package removed behind cuenv's back.
    from uv import find_uv_bin

    subprocess.run([find_uv_bin(), "pip", "uninstall", "--python", str(envs / "copy" / "bin" / "python"),
                    "nvidia-cuda-nvcc-cu12"], check=True, capture_output=True)
    code, out, err = cli("lock", "--check", "copy", "cuenv.lock")
    assert code == 1 and "  - nvidia-cuda-nvcc-cu12 12.1.105 (locked, not installed)" in out.splitlines()
    code, out, err = cli("sync", "cuenv.lock", "-n", "copy")
    assert code == 0, err
    assert cli("lock", "--check", "copy", "cuenv.lock")[0] == 0


def test_edited_sha256_is_refused_by_uv(cli, work, envs) -> None:
    assert cli("create", "cuda-12.1", "--engine", "venv")[0] == 0
    assert cli("lock", "cuda-12.1")[0] == 0
    (work / "edited.lock").write_text((work / "cuenv.lock").read_text().replace(RUNTIME_SHA, FAKE))
    code, out, err = cli("create", "--from-lock", "edited.lock", "-n", "tampered")
    assert code == 1
    error = [ln for ln in err.splitlines() if ln.startswith("error:")]
    assert len(error) == 1 and error[0].startswith("error: Hash mismatch for ") and FAKE in error[0], err
    assert not (envs / "tampered").exists()


def test_several_platforms_with_uv(cli, work, tmp_path, monkeypatch) -> None:
    """uv's --python-platform solves for Windows from Linux; a lock made here holds both lists."""
    monkeypatch.setenv("CUENV_RECIPES", str(windows_too(tmp_path / "recipes")))
    code, out, err = cli("lock", "cu121-win", "--engine", "venv", "--platform", "win-64", "--platform", "linux-64")
    assert code == 0, err
    data = yaml.safe_load((work / "cuenv.lock").read_text())
    assert data["contract"]["os"] == ["linux", "windows"]
    assert set(data["contract"]["min_driver"]) == {"linux", "windows"}
    wheels = {p: sorted(q["filename"] for q in data["packages"][p]) for p in data["platforms"]}
    assert all("manylinux" in f for f in wheels["linux-64"]) and all("win_amd64" in f for f in wheels["win-64"])


def test_lock_builtin_recipe_for_a_cluster_node(cli, work, envs) -> None:
    """On this GPU-less machine: a lock for an H100 node with driver 550, nothing installed."""
    code, out, err = cli("lock", "cuda-12.1", "--engine", "venv", "--target-driver", "550.54.14", "--target-gpu", "H100")
    assert code == 0, err
    data = yaml.safe_load((work / "cuenv.lock").read_text())
    assert data["made_on"]["solved_for"]["driver"] == "550.54.14"
    assert {p["name"] for p in data["packages"]["linux-64"]} == {"nvidia-cuda-runtime-cu12", "nvidia-cuda-nvcc-cu12"}
    assert not envs.exists() or not any(p for p in envs.iterdir() if not p.name.startswith("."))


def test_other_platforms_keep_what_pip_and_a_sync_put_in(cli, cuenv_exe, work, envs, tmp_path, monkeypatch) -> None:
    """`cuenv lock NAME --platform ...` solves the other platforms with every package the environment holds for
    its own sake, whoever installed it: pip's attrs; and in a teammate's environment made by `cuenv sync` (no
    changes recorded), what the lock held. The drift fix `lock --check` names keeps every platform of the lock."""
    monkeypatch.setenv("CUENV_RECIPES", str(windows_too(tmp_path / "recipes")))
    both = ("--platform", "win-64", "--platform", "linux-64")
    assert cli("create", "cu121-win", "--engine", "venv", "-n", "mine")[0] == 0
    assert cli("add", "-n", "mine", "packaging")[0] == 0
    pip = subprocess.run([*cuenv_exe, "run", "mine", "--", "pip", "install", "-q", "--no-cache-dir", "attrs==24.2.0"],
                         capture_output=True, text=True, timeout=300)
    assert pip.returncode == 0, pip.stderr

    def names(path: str) -> dict[str, set[str]]:
        data = yaml.safe_load((work / path).read_text())
        return {p: {q["name"] for q in data["packages"][p]} for p in data["platforms"]}

    assert cli("lock", "mine", *both, "-o", "team.lock")[0] == 0
    locked = names("team.lock")
    assert {"packaging", "attrs"} <= locked["win-64"] and {"packaging", "attrs"} <= locked["linux-64"], locked
    assert "pip" not in locked["win-64"]
    assert cli("sync", "team.lock", "-n", "theirs")[0] == 0
    assert cli("add", "-n", "theirs", "idna")[0] == 0
    code, out, err = cli("lock", "--check", "theirs", "team.lock")
    fix = next(ln for ln in out.splitlines() if ln.startswith("Fix it:")).split("`")[3]
    assert code == 1 and fix == "cuenv lock theirs -o team.lock --force --platform linux-64 --platform win-64", out
    assert cli(*fix.split()[1:])[0] == 0
    again = names("team.lock")
    assert again["win-64"] >= locked["win-64"] | {"idna"} and again["linux-64"] >= locked["linux-64"] | {"idna"}, again
    assert cli("lock", "--check", "theirs", "team.lock")[0] == 0


def test_an_add_for_another_platform_only_is_recorded_for_its_lock(cli, work, envs, tmp_path, monkeypatch) -> None:
    """A requirement whose marker leaves it out here installs nothing, but is recorded: the lock's Windows list
    has it, its Linux list does not; a dry run says so and writes nothing."""
    monkeypatch.setenv("CUENV_RECIPES", str(windows_too(tmp_path / "recipes")))
    assert cli("create", "cu121-win", "--engine", "venv", "-n", "mine")[0] == 0
    wanted = 'colorama; sys_platform == "win32"'
    meta = (envs / "mine" / ".cuenv" / "meta.json").read_text()
    code, out, err = cli("add", "-n", "mine", wanted, "--dry-run")
    assert code == 0 and f"  + {wanted} (not for this platform: recorded for the lock's others)" in out.splitlines(), out
    assert (envs / "mine" / ".cuenv" / "meta.json").read_text() == meta
    code, out, err = cli("add", "-n", "mine", wanted)
    assert code == 0 and out.startswith("Added to 'mine':"), (out, err)
    code, out, err = cli("lock", "mine", "--platform", "win-64", "--platform", "linux-64")
    assert code == 0, err
    data = yaml.safe_load((work / "cuenv.lock").read_text())
    names = {p: {q["name"] for q in data["packages"][p]} for p in data["platforms"]}
    assert "colorama" in names["win-64"] and "colorama" not in names["linux-64"], names
    # a teammate's sync records what the lock holds for its other platforms: their re-lock keeps colorama there
    assert cli("sync", "cuenv.lock", "-n", "theirs")[0] == 0
    code, out, err = cli("lock", "theirs", "--platform", "win-64", "--platform", "linux-64", "-o", "theirs.lock")
    assert code == 0, err
    theirs = yaml.safe_load((work / "theirs.lock").read_text())["packages"]
    assert {q["name"]: q["version"] for q in theirs["win-64"]} == {q["name"]: q["version"] for q in data["packages"]["win-64"]}
    changes = len(json.loads((envs / "mine" / ".cuenv" / "meta.json").read_text())["changes"])
    code, out, err = cli("add", "-n", "mine", wanted)  # again: nothing new to record
    assert code == 0 and out.splitlines() == [f"{wanted!r} is already recorded for the lock's other platforms.",
                                              "Nothing to change in 'mine'."], (out, err)
    assert len(json.loads((envs / "mine" / ".cuenv" / "meta.json").read_text())["changes"]) == changes
    for nowhere in ('colorama; python_version < "3.0"', 'colorama; sys_platform == "sunos5"'):
        code, out, err = cli("add", "-n", "mine", nowhere)
        assert code == 2 and "applies to no platform 'mine' can be locked for (linux-64, win-64; Python 3." in err, err
    code, out, err = cli("add", "-n", "mine", 'no-such-package-cuenv-test; sys_platform == "win32"')  # checked on the index
    assert code == 1 and "is for win-64, and cannot be installed on win-64: " in err, err
    assert len(json.loads((envs / "mine" / ".cuenv" / "meta.json").read_text())["changes"]) == changes
    code, out, err = cli("uninstall", "-n", "mine", "colorama")  # what only the other platforms have can be taken out
    assert code == 0 and f"  - {wanted} (not for this platform: dropped from the lock's others)" in out.splitlines(), (out, err)
    assert cli("lock", "mine", "--platform", "win-64", "--platform", "linux-64", "--force")[0] == 0
    assert "colorama" not in {q["name"] for q in yaml.safe_load((work / "cuenv.lock").read_text())["packages"]["win-64"]}
    code, out, err = cli("uninstall", "-n", "mine", "colorama")
    assert code == 2 and "Not installed in 'mine': colorama." in err, err


def test_check_against_another_recipes_lock_says_so(cli, work, envs, tmp_path, monkeypatch) -> None:
    """The same packages under another recipe's name: the drift is listed, and that a sync would make the
    environment the other recipe's; the re-lock it names writes only the platforms this recipe has."""
    monkeypatch.setenv("CUENV_RECIPES", str(windows_too(tmp_path / "recipes")))
    assert cli("create", "cuda-12.1", "--engine", "venv")[0] == 0
    assert cli("create", "cu121-win", "--engine", "venv", "-n", "win")[0] == 0
    assert cli("add", "-n", "win", "six")[0] == 0
    assert cli("lock", "win", "--platform", "linux-64", "--platform", "win-64", "-o", "win.lock")[0] == 0
    code, out, err = cli("lock", "--check", "cuda-12.1", "win.lock")
    assert code == 1 and ("Note: win.lock is a lock of cu121-win, and 'cuda-12.1' was made from cuda-12.1: a sync to "
                          "it makes 'cuda-12.1' a cu121-win environment.") in out.splitlines(), out
    fix = next(ln for ln in out.splitlines() if ln.startswith("Fix it:")).split("`")[3]
    assert fix == "cuenv lock cuda-12.1 -o win.lock --force" and cli(*fix.split()[1:])[0] == 0
    assert cli("lock", "--check", "cuda-12.1", "win.lock")[0] == 0


def test_other_platforms_hold_each_package_at_the_version_here(cli, cuenv_exe, work, tmp_path, monkeypatch) -> None:
    """An upgrade, pip's dependency pins and pip's uninstall of what `cuenv add` put in: the other platform's
    list follows the environment as it is, version for version."""
    monkeypatch.setenv("CUENV_RECIPES", str(windows_too(tmp_path / "recipes")))
    assert cli("create", "cu121-win", "--engine", "venv", "-n", "v")[0] == 0
    for argv in (("add", "-n", "v", "idna==3.6", "packaging"), ("upgrade", "-n", "v", "idna")):
        code, out, err = cli(*argv)
        assert code == 0, err
    for argv in (("install", "-q", "--no-cache-dir", "python-dateutil==2.8.2", "six==1.16.0"), ("uninstall", "-y", "packaging")):
        done = subprocess.run([*cuenv_exe, "run", "v", "--", "pip", *argv], capture_output=True, text=True, timeout=300)
        assert done.returncode == 0, done.stderr
    assert cli("lock", "v", "--platform", "win-64", "--platform", "linux-64")[0] == 0
    data = yaml.safe_load((work / "cuenv.lock").read_text())
    versions = {p: {q["name"]: q["version"] for q in data["packages"][p]} for p in data["platforms"]}
    linux, windows = versions["linux-64"], versions["win-64"]
    assert "packaging" not in linux and "packaging" not in windows
    assert {n: windows[n] for n in ("idna", "six", "python-dateutil")} == {n: linux[n] for n in ("idna", "six", "python-dateutil")}
    assert linux["six"] == "1.16.0" and linux["idna"] != "3.6"


def test_a_platform_that_cannot_be_solved_is_named(cli, work, tmp_path, monkeypatch) -> None:
    import cuenv.envs.create as create
    from cuenv.errors import UsageError

    solve = create.solve_routed

    def no_windows(engine, request, *args, **kwargs):  # noqa: ANN001, ANN202 - the solve's own signature
        if request.platform == "win-64":
            raise UsageError("six==1.16.0 has no wheels with a matching platform tag.")
        return solve(engine, request, *args, **kwargs)

    monkeypatch.setenv("CUENV_RECIPES", str(windows_too(tmp_path / "recipes")))
    monkeypatch.setattr(create, "solve_routed", no_windows)
    code, out, err = cli("lock", "cu121-win", "--engine", "venv", "--platform", "linux-64", "--platform", "win-64")
    assert code == 2 and err.startswith("error: For win-64: six==1.16.0 has no wheels"), err
