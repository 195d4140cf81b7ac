"""The environments people already have (issue 30): a real venv and a real conda prefix, adopted,
listed, checked against a described machine, forgotten, and never changed (hashed before and after).

The venv gets NVIDIA's CUDA 12.1 runtime wheel from PyPI with uv; the conda prefix gets the CUDA 11.8
runtime from the suite's local channel through the rattler engine. Both are made outside cuenv's home,
as a user's own environments are.
"""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from cuenv.engines import get_engine
from cuenv.engines.base import Request, Target


def _tree_hash(root: Path) -> str:
    """Every entry's path, type, mode, size, mtime and content (links by target): any change shows."""
    digest = hashlib.sha256()
    for path in sorted(root.rglob("*")):
        st = path.lstat()
        digest.update(f"{path.relative_to(root)}|{st.st_mode}|{st.st_size}|{st.st_mtime_ns}".encode())
        if path.is_symlink():
            digest.update(os.readlink(path).encode())
        elif path.is_file():
            digest.update(path.read_bytes())
    return digest.hexdigest()


@pytest.fixture(scope="module")
def user_envs(tmp_path_factory: pytest.TempPathFactory, conda_channel: Path) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("users-own")
    cache = Path(os.environ.get("CUENV_TEST_CACHE", str(Path(__file__).resolve().parents[2] / ".test-cache")))
    venv = root / "project" / ".venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    from uv import find_uv_bin

    subprocess.run([find_uv_bin(), "pip", "install", "-q", "--python", str(venv / "bin" / "python"),
                    "nvidia-cuda-runtime-cu12==12.1.105"], check=True, env=dict(os.environ, UV_CACHE_DIR=str(cache / "uv")))
    conda = root / "miniconda3" / "envs" / "old-cuda"
    engine = get_engine("rattler", os.environ)
    request = Request(engine="rattler", python=None, conda_channels=(str(conda_channel),),
                      conda_specs=("cuda-cudart", "cuda-version 11.8.*"))
    solution = engine.solve(request, target=Target(cuda="12.4", glibc="2.36"), cache_dir=cache)
    engine.install(conda, solution, cache_dir=cache)
    return {"venv": venv, "conda": conda, "root": root}


def test_adopted_environments_are_listed_checked_and_never_changed(cli, user_envs) -> None:
    venv, conda = user_envs["venv"], user_envs["conda"]
    before = {kind: _tree_hash(path) for kind, path in (("venv", venv), ("conda", conda))}

    code, out, err = cli("adopt", str(venv))
    assert code == 0, err
    assert out.startswith("Adopted project (venv, ") and "CUDA 12.1" in out and "never changed" in out
    code, out, err = cli("adopt", str(conda), "-n", "old")
    assert code == 0, err
    assert "Adopted old (conda, " in out and "CUDA 11.8" in out

    code, out, _ = cli("list", "--json")
    rows = {r["name"]: r for r in json.loads(out)["environments"]}
    assert (rows["project"]["recipe"], rows["project"]["cuda"], rows["project"]["path"]) == ("adopted", "12.1", str(venv))
    assert (rows["old"]["recipe"], rows["old"]["cuda"], rows["old"]["path"]) == ("adopted", "11.8", str(conda))

    # "what breaks if the driver is 470 and the GPU a V100": the CUDA 12 venv, not the CUDA 11.8 prefix
    machine = ("--driver", "470.82.01", "--gpu", "Tesla V100-SXM2-16GB")
    code, out, _ = cli("check", "--all", *machine, "--json")
    verdicts = {r["name"]: r for r in json.loads(out)["environments"]}
    assert code == 1
    assert verdicts["project"]["verdict"] == "does not run" and verdicts["project"]["cause"] == "driver-too-old"
    assert verdicts["project"]["adopted"] is True and "530.30.02" in verdicts["project"]["fix"]
    assert verdicts["old"]["verdict"] in ("runs", "runs, with warnings")
    code, text, _ = cli("check", "--all", *machine)
    assert "project (adopted)" in text and "does not run" in text and "driver-too-old" in text

    # the TUI's rows and detail (the same services the app draws from): adopted, with a verdict
    from cuenv import config
    from cuenv.tui.services import Services

    services = Services(config.resolve({}, dict(os.environ)), dict(os.environ))
    rows = {r.name: r for r in services.environments()}
    assert rows["project"].recipe == "adopted" and rows["project"].status in ("ok", "warning", "error", "unknown")
    detail = services.detail("old")
    assert detail.path.endswith("old-cuda") and detail.recipe == "adopted" and detail.packages

    # one judgement: `check NAME` says what `check --all` says of it
    code, out, _ = cli("check", "project", *machine, "--json")
    assert code == 1 and json.loads(out)["findings"][0]["code"] == "driver-too-old"
    assert cli("info", "old")[0] == 0

    code, out, _ = cli("remove", "project", "old", "-y")
    assert code == 0
    assert f"Forgot project; its folder {venv} is left as it was." in out
    assert {kind: _tree_hash(path) for kind, path in (("venv", venv), ("conda", conda))} == before
    assert json.loads(cli("list", "--json")[1])["environments"] == []


def test_scan_finds_them_where_the_tools_keep_them(cli, user_envs, monkeypatch) -> None:
    root = user_envs["root"]
    monkeypatch.setenv("HOME", str(root))  # ~/miniconda3/envs is one of conda's envs folders
    code, out, _ = cli("adopt", "--scan", str(root / "project"), "--json")
    found = {r["path"]: r for r in json.loads(out)["found"]}
    assert found[str(user_envs["venv"])]["kind"] == "venv"
    assert found[str(user_envs["conda"])]["kind"] == "conda"
    assert found[str(user_envs["conda"])]["source"] == "conda envs folder"
    code, out, _ = cli("adopt", "--scan", str(root / "project"))
    hint = out.strip().splitlines()[-1]
    assert hint.startswith("Adopt one with `cuenv adopt ")
    command = hint.split("`")[1].split()[1:]
    assert cli(*command)[0] == 0  # the hint runs as written


def test_what_cannot_be_adopted_is_refused_in_one_line(cli, user_envs, tmp_path) -> None:
    code, _, err = cli("adopt", str(tmp_path))
    assert code == 2 and "neither a conda environment" in err and "cuenv adopt --scan" in err
    assert cli("adopt", str(user_envs["venv"]), "-n", "once")[0] == 0
    code, _, err = cli("adopt", str(user_envs["venv"]), "-n", "twice")
    assert code == 2 and "already adopted as 'once'" in err
    code, _, err = cli("adopt", str(user_envs["conda"]), "-n", "once")
    assert code == 2 and "exists already" in err
    assert "Traceback" not in err
