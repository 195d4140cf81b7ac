"""A framework version newer than a recipe's catalogue: facts read from PyPI's metadata on the fly.

The recipes here are the built-in ones with their newest versions cut off (as the catalogue looked
before those releases), so the versions asked for are real releases on PyPI.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
import yaml

from cuenv.recipes import beyond
from cuenv.recipes.catalogue import builtin_dir, load

pytestmark = pytest.mark.network


def _older(tmp_path: Path, name: str, new_name: str, keep: list[str]) -> dict[str, str]:
    """The built-in recipe ``name`` as ``new_name`` listing only ``keep`` (the catalogue of an earlier day)."""
    data = yaml.safe_load((builtin_dir() / f"{name}.yaml").read_text())
    data["name"] = new_name
    data["framework"].update(version=keep[-1], versions=keep)
    data["overrides"] = {v: o for v, o in (data.get("overrides") or {}).items() if v in keep}
    folder = tmp_path / "recipes"
    folder.mkdir(exist_ok=True)
    (folder / f"{new_name}.yaml").write_text(yaml.safe_dump(data, sort_keys=False))
    return {**os.environ, "CUENV_RECIPES": str(folder)}


def test_torch_release_past_the_catalogue_is_checked_with_its_wheel_facts(cli, tmp_path: Path) -> None:
    env = _older(tmp_path, "torch-cu132", "early-cu132", ["2.12.1", "2.13.0"])
    code, out, err = cli("check", "early-cu132@2.15.0", "--driver", "595.45.04", "--cc", "8.9", "--json", environ=env)
    data = json.loads(out)
    assert (code, err, data["ok"]) == (0, "", True)
    assert "its facts come from its PyPI metadata (pypi:torch==2.15.0)" in data["note"]
    assert "CUDA 13.2, cuDNN 9.26, Python >=3.11,<3.16" in data["note"]
    # checked as any recipe: a CUDA 13.2 build needs a 580+ driver
    code, out, _ = cli("check", "early-cu132@2.15.0", "--driver", "535.104.05", "--cc", "8.9", environ=env)
    assert code == 1 and "error: driver-too-old" in out and "note: torch 2.15.0 is newer than the catalogue" in out


def test_a_version_pypi_does_not_have_is_two_lines_with_a_hint(cli, tmp_path: Path) -> None:
    env = _older(tmp_path, "torch-cu132", "early-cu132", ["2.12.1", "2.13.0"])
    code, out, err = cli("check", "early-cu132@2.99.0", "--driver", "595.45.04", environ=env)
    assert (code, out) == (2, "")
    assert err.splitlines() == [
        "error: torch 2.99.0 is not a release on PyPI, and recipe 'early-cu132' lists up to 2.13.0.",
        "hint: Pick a released version (`cuenv recipes show early-cu132` lists the known ones).",
    ]
    code, _, _ = cli("recipes", "show", "early-cu132", environ=env)  # the hint's command works
    assert code == 0


def test_an_older_unlisted_version_is_still_refused(tmp_path: Path) -> None:
    recipe = load(builtin_dir() / "torch-cu132.yaml")
    assert not beyond.is_newer(recipe, "2.13.1")
    assert beyond.is_newer(recipe, "2.16.0")


def test_jax_release_past_the_catalogue_resolves_and_says_so(cli, tmp_path: Path) -> None:
    env = _older(tmp_path, "jax-cu13", "early-jax13", ["0.9.2", "0.10.2"])
    code, out, err = cli("create", "early-jax13@0.12.0.1", "--dry-run", "--target-driver", "595.45.04",
                         "--target-cc", "8.9", environ=env)
    assert code == 0, err
    assert "note: jax 0.12.0.1 is newer than the catalogue (which ends at 0.10.2)" in err
    assert "pypi:jax-cuda13-plugin==0.12.0.1" in err and "Python >=3.12" in err
    assert "jax 0.12.0.1" in out and "nvidia-cudnn-cu13" in out
