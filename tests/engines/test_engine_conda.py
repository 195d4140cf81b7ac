"""conda, mamba and micromamba through fake executables replaying recorded --json output.

The fakes (fake_conda.py) log their argv, so these tests pin the exact command lines built.
"""

from __future__ import annotations

import dataclasses
import os
from pathlib import Path

import pytest

from cuenv.engines import get_engine, resolve_engine
from cuenv.engines.base import (
    HashMismatch,
    PackagesNotFound,
    Request,
    Target,
    Unsatisfiable,
)
from cuenv.engines.conda import explicit_file, last_json

TOOLS = ("conda", "mamba", "micromamba")
TARGET = Target(cuda="12.4", glibc="2.36")


def _request(channel: Path, *specs: str) -> Request:
    return Request(engine="conda", python=None, conda_channels=(channel.as_uri(),),
                   conda_specs=specs or ("cuda-cudart", "cuda-version 12.1.*"))


@pytest.mark.parametrize("tool", TOOLS)
def test_solve_parses_the_dry_run_into_a_lock(tool, fake_conda, conda_channel: Path, cache_dir: Path) -> None:
    engine = get_engine(tool, fake_conda.environ)
    assert engine.available()
    solution = engine.solve(_request(conda_channel), target=TARGET, cache_dir=cache_dir)
    # Same URLs, hashes and channels as rattler reads from the channel's repodata.
    rattler = get_engine("rattler", os.environ).solve(
        dataclasses.replace(_request(conda_channel), engine="rattler"), target=TARGET, cache_dir=cache_dir)
    assert solution.packages == rattler.packages
    assert solution.engine == tool
    (call,) = fake_conda.calls()
    argv = call["argv"]
    prefix = argv[argv.index("--prefix") + 1]
    expected = ["create", "--dry-run", "--json", "--yes", "--prefix", prefix, "--override-channels",
                "-c", conda_channel.as_uri()]
    expected += ["--solver=libmamba"] if tool == "conda" else []
    assert argv == expected + ["cuda-cudart", "cuda-version 12.1.*"]
    assert call["env"]["CONDA_OVERRIDE_CUDA"] == "12.4" and call["env"]["CONDA_OVERRIDE_GLIBC"] == "2.36"
    assert Path(call["env"]["CONDA_PKGS_DIRS"]).name == "pkgs"  # an empty cache: FETCH lists every package
    assert not Path(prefix).exists()


def test_python_and_platform_reach_the_command_line(fake_conda, conda_channel: Path, cache_dir: Path) -> None:
    engine = get_engine("micromamba", fake_conda.environ)
    request = dataclasses.replace(_request(conda_channel, "cuda-version 12.1.*"), python="3.11", platform="linux-aarch64")
    engine.solve(request, target=Target(cuda=None, glibc=None), cache_dir=cache_dir)
    (call,) = fake_conda.calls()
    assert call["argv"][-4:] == ["--platform", "linux-aarch64", "cuda-version 12.1.*", "python 3.11.*"]
    assert call["env"]["CONDA_OVERRIDE_CUDA"] == ""  # no driver: no __cuda
    assert "CONDA_OVERRIDE_GLIBC" not in call["env"]


@pytest.mark.parametrize("tool", TOOLS)
def test_not_found(tool, fake_conda, conda_channel: Path, cache_dir: Path) -> None:
    env = dict(fake_conda.environ, FAKE_CONDA_SCENARIO="notfound")
    with pytest.raises(PackagesNotFound) as info:
        get_engine(tool, env).solve(_request(conda_channel, "nope-pkg"), target=TARGET, cache_dir=cache_dir)
    assert info.value.names == ("nope-pkg",)
    assert info.value.message == f"Not found in the channels {conda_channel.as_uri()}: nope-pkg."


@pytest.mark.parametrize("tool", TOOLS)
def test_unsatisfiable(tool, fake_conda, conda_channel: Path, cache_dir: Path) -> None:
    env = dict(fake_conda.environ, FAKE_CONDA_SCENARIO="unsatisfiable")
    target = Target(cuda="11.8", glibc="2.36")
    with pytest.raises(Unsatisfiable) as info:
        get_engine(tool, env).solve(_request(conda_channel), target=target, cache_dir=cache_dir)
    assert "__cuda >=12" in info.value.explanation
    assert "critical libmamba" not in info.value.explanation
    assert len(info.value.explanation.splitlines()) <= 15
    assert info.value.hint.startswith("The target driver supports CUDA 11.8; this stack needs a newer one.")
    if tool == "micromamba":
        assert "The following packages are incompatible" in info.value.explanation


@pytest.mark.parametrize("tool", TOOLS)
def test_install_from_the_lock_with_hashes(tool, fake_conda, conda_channel: Path, tmp_path: Path, cache_dir: Path) -> None:
    engine = get_engine(tool, fake_conda.environ)
    solution = engine.solve(_request(conda_channel), target=TARGET, cache_dir=cache_dir)
    prefix = tmp_path / "envs" / "cu121"
    engine.install(prefix, solution, cache_dir=cache_dir)
    install = fake_conda.calls()[-1]["argv"]
    explicit = install[install.index("--file") + 1]
    assert install == ["create", "--json", "--yes", "--prefix", str(prefix), "--file", explicit]
    assert engine.installed(prefix) == solution.packages
    assert engine.layout(prefix).cuda_home == prefix


def test_explicit_file_carries_sha256_else_md5(fake_conda, conda_channel: Path, cache_dir: Path) -> None:
    solution = get_engine("conda", fake_conda.environ).solve(_request(conda_channel), target=TARGET, cache_dir=cache_dir)
    cudart, version = solution.packages
    md5_only = dataclasses.replace(solution, packages=(cudart, dataclasses.replace(version, sha256=None)))
    assert explicit_file(md5_only).splitlines()[2:] == [
        "@EXPLICIT", f"{cudart.url}#{cudart.sha256}", f"{version.url}#{version.md5}",
    ]
    with pytest.raises(HashMismatch):
        explicit_file(dataclasses.replace(solution, packages=(dataclasses.replace(cudart, sha256=None, md5=None),)))


def test_edited_hash_is_refused_by_the_tool(fake_conda, conda_channel: Path, tmp_path: Path, cache_dir: Path) -> None:
    engine = get_engine("conda", fake_conda.environ)
    solution = engine.solve(_request(conda_channel), target=TARGET, cache_dir=cache_dir)
    edited = dataclasses.replace(solution, packages=tuple(dataclasses.replace(p, sha256="0" * 64) for p in solution.packages))
    with pytest.raises(HashMismatch) as info:
        engine.install(tmp_path / "p", edited, cache_dir=cache_dir)
    assert info.value.expected == "0" * 64
    assert engine.installed(tmp_path / "p") == ()


def test_auto_picks_the_fake_micromamba(fake_conda) -> None:
    name, why = resolve_engine("auto", fake_conda.environ)
    assert (name, why) == ("micromamba", f"auto (requested): found micromamba at {fake_conda.bin / 'micromamba'}")


def test_missing_tool(tmp_path: Path, conda_channel: Path) -> None:
    engine = get_engine("mamba", {"PATH": str(tmp_path)})
    assert not engine.available()
    with pytest.raises(Exception, match="'mamba' was not found on PATH"):
        engine.solve(_request(conda_channel), target=TARGET, cache_dir=tmp_path)


def test_last_json_takes_the_final_object() -> None:
    assert last_json('DryRunExit: Dry run.\n{"a": {"b": 1}}\n{"c": 2}\n') == {"c": 2}
