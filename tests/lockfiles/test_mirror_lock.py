"""Locks behind mirrors (issue 19 §1), through the command line: a PyPI mirror of NVIDIA's real wheels
and the local conda channel, both served on 127.0.0.1. A lock made behind a mirror names only the
canonical URLs; it installs behind another mirror, and the environment shows no drift against it."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest
import yaml

from tests.engines import channel, pypimirror

WHEELS = ("nvidia-cuda-runtime-cu12==12.1.105", "nvidia-cuda-nvcc-cu12==12.1.105")


@pytest.fixture(scope="module")
def wheels() -> list[Path]:
    found = channel.ensure_wheels(wanted=WHEELS)
    return [found[w] for w in WHEELS]


def test_venv_lock_behind_one_mirror_installs_behind_another(cli, work, envs, tmp_path, wheels) -> None:
    bandersnatch = pypimirror.build_mirror(tmp_path / "m1", wheels)  # keeps PyPI's packages/ paths
    flat = pypimirror.build_mirror(tmp_path / "m2", wheels, layout="flat")
    with pypimirror.serve(bandersnatch) as first:
        code, out, err = cli("lock", "cuda-12.1", "--engine", "venv", "--mirror", f"pypi={first}/simple")
        assert code == 0, err
    text = (work / "cuenv.lock").read_text()
    assert "127.0.0.1" not in text
    data = yaml.safe_load(text)
    assert data["sources"]["indexes"] == ["https://pypi.org/simple"]
    assert all(p["url"].startswith("https://files.pythonhosted.org/packages/") for p in data["packages"]["linux-64"])

    log = tmp_path / "m2.log"
    with pypimirror.serve(flat, log=log) as second:
        env = dict(os.environ, CUENV_MIRRORS=f"pypi={second}/simple", CUENV_CACHE_DIR=str(tmp_path / "cold"))
        code, out, err = cli("create", "--from-lock", "cuenv.lock", "-n", "behind", environ=env)
        assert code == 0, err
        assert f"mirror: https://pypi.org/simple -> {second}/simple (environment CUENV_MIRRORS)" in err
    fetched = log.read_text()
    assert all(f"GET /files/{w.name}" in fetched for w in wheels)
    code, out, err = cli("lock", "--check", "behind", "cuenv.lock")
    assert code == 0, out + err


def test_conda_lock_behind_a_channel_mirror(cli, work, envs, tmp_path, lock_channel, recipes, monkeypatch) -> None:
    # A private cache: archives downloaded over http must not sit in the suite's shared cache, where
    # other tests expect a download to happen.
    monkeypatch.setenv("CUENV_CACHE_DIR", str(tmp_path / "cache"))
    # the fixture's recipe, with its channel named as on anaconda.org instead of by folder
    text = (recipes / "local-cu121.yaml").read_text().replace(str(lock_channel), "cuenv-lock-test")
    (recipes / "mirrored-cu121.yaml").write_text(text.replace("name: local-cu121", "name: mirrored-cu121"))
    served = tmp_path / "srv"
    shutil.copytree(lock_channel, served / "cuenv-lock-test", symlinks=True)
    log = tmp_path / "channel.log"
    with pypimirror.serve(served, log=log) as base:
        mirror = f"cuenv-lock-test={base}/cuenv-lock-test"
        code, out, err = cli("lock", "mirrored-cu121", "--engine", "rattler", "--mirror", mirror)
        assert code == 0, err
        data = yaml.safe_load((work / "cuenv.lock").read_text())
        assert data["sources"]["channels"] == ["https://conda.anaconda.org/cuenv-lock-test"]
        assert "127.0.0.1" not in (work / "cuenv.lock").read_text()
        code, out, err = cli("create", "--from-lock", "cuenv.lock", "-n", "conda-behind", "--mirror", mirror)
        assert code == 0, err
    assert "GET /cuenv-lock-test/linux-64/cuda-cudart-12.1.105" in log.read_text()
    code, out, err = cli("lock", "--check", "conda-behind", "cuenv.lock")
    assert code == 0, out + err
    meta = (envs / "conda-behind" / "conda-meta").glob("cuda-cudart-*.json")
    assert all("https://conda.anaconda.org/cuenv-lock-test/" in p.read_text() for p in meta)


def test_config_show_names_the_tools_settings(cli, tmp_path) -> None:
    home = tmp_path / "home"
    home.mkdir()
    (home / ".condarc").write_text("channel_alias: https://mirror.example.org/anaconda/cloud\n")
    env = dict(os.environ, HOME=str(home), CUENV_MIRRORS_FROM_TOOLS="1", PIP_CONFIG_FILE=os.devnull,
               UV_DEFAULT_INDEX="https://uv.example.org/simple")
    code, out, err = cli("config", "show", "--mirror", "pytorch=https://mirror.example.org/pytorch-wheels", environ=env)
    assert code == 0, err
    lines = [" ".join(line.split()) for line in out.splitlines()]
    assert ("mirrors https://conda.anaconda.org -> https://mirror.example.org/anaconda/cloud "
            f"(conda: {home / '.condarc'} channel_alias)") in lines
    assert "https://download.pytorch.org/whl -> https://mirror.example.org/pytorch-wheels (flag --mirror)" in lines
    assert "https://pypi.org/simple -> https://uv.example.org/simple (uv: environment UV_DEFAULT_INDEX)" in lines
    code, out, err = cli("config", "show", "--mirror", "pypi", environ=env)
    assert (code, err) == (2, "error: Bad mirror from flag --mirror: 'pypi' is not UPSTREAM=MIRROR.\n"
                              "hint: Write the upstream, '=', then the mirror, e.g. pypi=https://mirror.example/simple.\n")
