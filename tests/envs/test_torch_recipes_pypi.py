"""Issue 27: every torch recipe whose build PyPI serves creates from PyPI alone; the others say why,
with a hint that works as written. Against the real PyPI (network)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import yaml

from cuenv.engines import pypiroute

RECIPES = Path(__file__).resolve().parents[2] / "recipes"
TORCH = sorted(p.stem for p in RECIPES.glob("torch-cu*.yaml"))


@pytest.mark.network
@pytest.mark.parametrize(("version", "cuda", "form"), [
    ("2.9.1", "12.8", "nvidia-cuda-runtime-cu12=="),
    ("2.11.0", "13.0", "cuda-toolkit["),  # torch 2.11+: cuda-toolkit[...,cudart,...]==13.0.x
    ("2.14.1", "13.0", "cuda-toolkit["),  # the index serves no .metadata for it: range-read
    ("2.15.0", "13.2", "cuda-toolkit["),
])
def test_pypi_says_which_cuda_build_it_serves(tmp_path: Path, version: str, cuda: str, form: str) -> None:
    found = pypiroute.pypi_build("torch", version, python="3.11", cache_dir=tmp_path)
    assert (found.cuda, form in found.evidence) == (cuda, True), found.evidence


@pytest.mark.slow
@pytest.mark.network
@pytest.mark.parametrize("recipe", TORCH)
def test_torch_recipe_dry_run_from_pypi_alone(cuenv, recipe: str) -> None:
    data = yaml.safe_load((RECIPES / f"{recipe}.yaml").read_text())
    cuda = str(data["cuda"])
    version = data["framework"]["version"]
    served = pypiroute.pypi_build("torch", version, python=str(data["python"]["default"])).cuda
    done = cuenv("create", recipe, "--dry-run", "--framework-index", "pypi", timeout=900)
    if served == cuda:
        assert done.returncode == 0, done.stderr
        assert "route: PyPI's torch" in done.stdout + done.stderr
        return
    assert done.returncode != 0
    assert f"is the CUDA {served} build" in done.stderr, done.stderr
    hint = re.search(r"`(cuenv create \S+ --framework-index pypi)`", done.stderr)
    if hint:  # the hint's command works as written
        again = cuenv(*hint.group(1).split()[1:], "--dry-run", timeout=900)
        assert again.returncode == 0, again.stderr
    else:
        assert "PyPI serves no CUDA" in done.stderr
