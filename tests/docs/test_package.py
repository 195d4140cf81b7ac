"""`python -m build` makes an sdist and, from it, a wheel with the recipes, shell hooks and knowledge data
inside; installed into a fresh venv, `cuenv` works outside the source tree."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]


def _run(argv: list[str], **kw) -> subprocess.CompletedProcess:
    done = subprocess.run(argv, capture_output=True, text=True, timeout=600, **kw)
    assert done.returncode == 0, f"{argv}\n{done.stdout[-2000:]}\n{done.stderr[-2000:]}"
    return done


@pytest.fixture(scope="module")
def dist(tmp_path_factory: pytest.TempPathFactory) -> Path:
    pytest.importorskip("build")
    out = tmp_path_factory.mktemp("dist")
    # No flags: the sdist first, then the wheel built from the unpacked sdist, so both are exercised.
    _run([sys.executable, "-m", "build", "-o", str(out), str(REPO)], env=_clean_env())
    return out


def _clean_env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH" and not k.startswith("CUENV_")}
    env.update(extra)
    return env


@pytest.mark.network
def test_wheel_holds_the_package_data(dist: Path) -> None:
    wheel = next(dist.glob("cuenv-*.whl"))
    names = set(zipfile.ZipFile(wheel).namelist())
    for recipe in (REPO / "recipes").glob("*.yaml"):
        assert f"cuenv/_data/recipes/{recipe.name}" in names
    for hook in (REPO / "shell").iterdir():
        assert f"cuenv/_data/shell/{hook.name}" in names
    for data in [*(REPO / "cuenv" / "knowledge" / "data").iterdir(), REPO / "cuenv" / "recipes" / "recipe.schema.json"]:
        assert data.relative_to(REPO).as_posix() in names
    assert not any(n.startswith(("tests/", "docs/")) for n in names)


@pytest.mark.network
def test_installed_wheel_works_outside_the_source_tree(dist: Path, tmp_path: Path) -> None:
    from uv import find_uv_bin

    uv = find_uv_bin()
    wheel = next(dist.glob("cuenv-*.whl"))
    venv = tmp_path / "venv"
    cache = os.environ.get("CUENV_CACHE_DIR", str(REPO / ".test-cache"))
    env = _clean_env(UV_CACHE_DIR=str(Path(cache) / "uv"), VIRTUAL_ENV=str(venv))
    _run([uv, "venv", "-q", "--python", sys.executable, str(venv)], env=env, cwd=tmp_path)
    _run([uv, "pip", "install", "-q", "--python", str(venv / "bin" / "python"), str(wheel)], env=env, cwd=tmp_path)

    work = tmp_path / "elsewhere"
    work.mkdir()
    run_env = _clean_env(CUENV_HOME=str(tmp_path / "home"), CUENV_CONFIG=str(tmp_path / "config.yaml"),
                         CUENV_CACHE_DIR=str(tmp_path / "cache"), HOME=str(tmp_path))
    cuenv = str(venv / "bin" / "cuenv")

    def call(*args: str) -> str:
        return _run([cuenv, *args], env=run_env, cwd=work).stdout

    where = _run([str(venv / "bin" / "python"), "-c", "import cuenv, cuenv.recipes.catalogue as r; print(cuenv.__file__); print(r.builtin_dir())"],
                 env=run_env, cwd=work).stdout.split()
    assert where[0].startswith(str(venv)) and where[1].endswith("cuenv/_data/recipes")
    from cuenv import __version__

    assert call("--version").strip() == f"cuenv {__version__}"
    listing = call("recipes", "--driver", "535.104.05", "--cc", "8.6")
    assert "cuda-12.1" in listing and "torch-cu121" in listing
    assert call("check", "cuda-12.1", "--driver", "535.104.05", "--cc", "8.6").startswith("cuda-12.1: runs")
    hook = call("shell-init", "bash")
    assert "cuenv()" in hook and "@CUENV_HOME@" not in hook
    assert "complete -F _cuenv cuenv" in call("completion", "bash")
    assert set(json.loads(call("info", "--json"))) >= {"driver", "gpus", "toolkits", "engines"}  # knowledge data loads
