"""Every package a recipe pins exists on PyPI, and PyPI-only recipes resolve there for each Linux platform.

download.pytorch.org and paddlepaddle.org.cn are not reachable from cuenv's build machine: for recipes
with their own index, the release itself is checked on PyPI (torch 2.3.1 for 2.3.1+cu121; Paddle's GPU
release through its CPU twin ``paddlepaddle``), and the cuXXX build is taken from the vendors' release
matrices (see each recipe's notes).
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from collections.abc import Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path

import pytest
from packaging.requirements import Requirement
from packaging.version import Version

from cuenv.recipes.catalogue import Catalogue, builtin_dir
from tests import sealing

pytestmark = pytest.mark.network

RECIPES = Catalogue(builtin_dir()).all()
# A GPU package published only on the vendor's index, and the PyPI package of the same release.
PYPI_TWIN = {"paddlepaddle-gpu": "paddlepaddle"}
UV_PLATFORM = {"linux-64": "x86_64-manylinux_2_28", "linux-aarch64": "aarch64-manylinux_2_28"}


def _pypi_name(recipe, name: str) -> str:
    return PYPI_TWIN.get(name, name) if recipe.venv.index_urls else name


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


def _resolvable():
    for recipe in RECIPES:
        if recipe.venv is None or recipe.venv.index_urls:
            continue
        for version in recipe.versions or (None,):
            for platform in recipe.platforms_for(version):
                if platform in UV_PLATFORM:
                    yield pytest.param(recipe, version, platform, id=f"{recipe.label(version)}:{platform}")


PINS = list(_pins())
RESOLVABLE = list(_resolvable())


def _versions(name: str, environ: dict[str, str]) -> subprocess.CompletedProcess:
    # every release, also those for a newer Python than the one running the tests (jax 0.11+ needs 3.12)
    return subprocess.run([sys.executable, "-m", "pip", "index", "versions", name, "--disable-pip-version-check",
                           "--ignore-requires-python"], capture_output=True, text=True, timeout=120, env=environ)


def _compile(recipe, version, platform, folder: Path, environ: dict[str, str]) -> subprocess.CompletedProcess:
    from uv import find_uv_bin

    python = recipe.python_for(version).default
    folder.mkdir()
    reqs = folder / "requirements.in"
    reqs.write_text("\n".join(recipe.venv.requirements_for(version)) + "\n")
    return subprocess.run([find_uv_bin(), "pip", "compile", str(reqs), "--python-version", python,
                           "--python-platform", UV_PLATFORM[platform], "--no-header", "--no-annotate", "-q"],
                          capture_output=True, text=True, timeout=300, env=environ)


@pytest.fixture(scope="module")
def asked(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Future]]:
    """PyPI's answers for the module's selected tests, every question asked at once, six at a time (each
    waits on the network far longer than it computes): a package name -> its `pip index versions`, a
    resolve's test id -> its `uv pip compile`."""
    root = tmp_path_factory.mktemp("pypi")
    with sealing.sealed(root / "sealed"):
        environ = dict(os.environ)
    selected = [item.callspec for item in request.session.items if item.nodeid.startswith(request.node.nodeid + "::")]
    names = {_pypi_name(c.params["recipe"], c.params["name"]) for c in selected if "name" in c.params}
    resolves = {c.id for c in selected if "platform" in c.params}
    with ThreadPoolExecutor(max_workers=6) as pool:
        futures = {name: pool.submit(_versions, name, environ) for name in sorted(names)}
        futures.update({p.id: pool.submit(_compile, *p.values, root / str(n), environ)
                        for n, p in enumerate(RESOLVABLE) if p.id in resolves})
        yield futures
        for future in futures.values():
            future.cancel()


@pytest.mark.parametrize(("recipe", "name", "version"), PINS)
def test_pinned_package_exists(recipe, name, version, asked):
    name = _pypi_name(recipe, name)
    out = asked[name].result()
    match = re.search(r"Available versions: (.*)", out.stdout)
    assert match, f"PyPI does not know {name}: {out.stderr.strip()[-300:]}"
    released = {v.strip() for v in match.group(1).split(",")}
    if recipe.venv.index_urls:
        # The vendor's build (torch 2.3.1+cu121) is on its own index; the release must exist on PyPI.
        wanted = Version(version)
        assert wanted.public in {Version(v).public for v in released}, f"{name} {wanted.public} is not a release on PyPI"
    else:
        assert version in released, f"{name}=={version} is not on PyPI"


def _runtime(resolved: dict[str, str], major: int) -> Version:
    name = "nvidia-cuda-runtime" if major >= 13 else f"nvidia-cuda-runtime-cu{major}"
    assert name in resolved, f"{name} not in the resolution: {sorted(resolved)}"
    return Version(resolved[name])


@pytest.mark.parametrize(("recipe", "version", "platform"), RESOLVABLE)
def test_pypi_only_recipe_resolves(recipe, version, platform, asked, request):
    """uv resolves the requirements for that platform, and the CUDA runtime it picks is the recipe's."""
    out = asked[request.node.callspec.id].result()
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
