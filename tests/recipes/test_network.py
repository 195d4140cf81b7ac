"""Every package a recipe pins exists on PyPI, and PyPI-only recipes resolve there for each Linux platform.

download.pytorch.org and paddlepaddle.org.cn are not reachable from cuenv's build machine: for recipes
with their own index, the release itself is checked on PyPI (torch 2.3.1 for 2.3.1+cu121; Paddle's GPU
release through its CPU twin ``paddlepaddle``), and the cuXXX build is taken from the vendors' release
matrices (see each recipe's notes).
"""

from __future__ import annotations

import re
import subprocess
import sys
from functools import cache

import pytest
from packaging.requirements import Requirement
from packaging.version import Version

from cuenv.recipes.catalogue import Catalogue, builtin_dir

pytestmark = pytest.mark.network

RECIPES = Catalogue(builtin_dir()).all()
# A GPU package published only on the vendor's index, and the PyPI package of the same release.
PYPI_TWIN = {"paddlepaddle-gpu": "paddlepaddle"}
UV_PLATFORM = {"linux-64": "x86_64-manylinux_2_28", "linux-aarch64": "aarch64-manylinux_2_28"}


@cache
def pypi_versions(name: str) -> frozenset[str]:
    # every release, also those for a newer Python than the one running the tests (jax 0.11+ needs 3.12)
    out = subprocess.run([sys.executable, "-m", "pip", "index", "versions", name, "--disable-pip-version-check",
                          "--ignore-requires-python"],
                         capture_output=True, text=True, timeout=120)
    match = re.search(r"Available versions: (.*)", out.stdout)
    assert match, f"PyPI does not know {name}: {out.stderr.strip()[-300:]}"
    return frozenset(v.strip() for v in match.group(1).split(","))


def _pins():
    for recipe in RECIPES:
        if recipe.venv is None:
            continue
        for version in recipe.versions or (None,):
            if "venv" not in recipe.engines(version):
                continue
            for text in recipe.venv.requirements_for(version):
                req = Requirement(text)
                for spec in req.specifier:
                    if spec.operator == "==":
                        yield pytest.param(recipe, req.name, spec.version, id=f"{recipe.name}:{req.name}=={spec.version}")


@pytest.mark.parametrize(("recipe", "name", "version"), list(_pins()))
def test_pinned_package_exists(recipe, name, version):
    wanted = Version(version)
    if recipe.venv.index_urls:
        # The vendor's build (torch 2.3.1+cu121) is on its own index; the release must exist on PyPI.
        name = PYPI_TWIN.get(name, name)
        available = {Version(v).public for v in pypi_versions(name)}
        assert wanted.public in available, f"{name} {wanted.public} is not a release on PyPI"
    else:
        assert version in pypi_versions(name), f"{name}=={version} is not on PyPI"


def _resolvable():
    for recipe in RECIPES:
        if recipe.venv is None or recipe.venv.index_urls:
            continue
        for version in recipe.versions or (None,):
            for platform in recipe.platforms_for(version):
                if platform in UV_PLATFORM:
                    yield pytest.param(recipe, version, platform, id=f"{recipe.label(version)}:{platform}")


def _runtime(resolved: dict[str, str], major: int) -> Version:
    name = "nvidia-cuda-runtime" if major >= 13 else f"nvidia-cuda-runtime-cu{major}"
    assert name in resolved, f"{name} not in the resolution: {sorted(resolved)}"
    return Version(resolved[name])


@pytest.mark.parametrize(("recipe", "version", "platform"), list(_resolvable()))
def test_pypi_only_recipe_resolves(recipe, version, platform, tmp_path):
    """uv resolves the requirements for that platform, and the CUDA runtime it picks is the recipe's."""
    from uv import find_uv_bin

    python = recipe.python_for(version).default
    reqs = tmp_path / "requirements.in"
    reqs.write_text("\n".join(recipe.venv.requirements_for(version)) + "\n")
    out = subprocess.run([find_uv_bin(), "pip", "compile", str(reqs), "--python-version", python,
                          "--python-platform", UV_PLATFORM[platform], "--no-header", "--no-annotate", "-q"],
                         capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr[-2000:]
    resolved = dict(line.split("==", 1) for line in out.stdout.splitlines() if "==" in line)
    major, minor = map(int, recipe.cuda.split("."))
    runtime = _runtime(resolved, major)
    assert runtime.release[0] == major
    if recipe.framework is None:  # a bare stack is exactly its CUDA release
        assert runtime.release[:2] == (major, minor)
        if recipe.cudnn:
            cudnn = Version(resolved[f"nvidia-cudnn-cu{major}"])
            assert ".".join(map(str, cudnn.release[:2])) == recipe.cudnn
    else:  # a framework build runs on its CUDA or a newer runtime of the same major
        assert runtime.release[:2] >= (major, minor)
