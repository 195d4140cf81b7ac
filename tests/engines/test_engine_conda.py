"""mamba and micromamba through fake executables replaying recorded --json output.

Neither can be installed here (their compiled libmamba is not on PyPI); conda itself is tested for
real in test_engine_conda_real.py. The fakes (fake_conda.py) log their argv, so these tests pin the
exact command lines built.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from cuenv.engines import get_engine, resolve_engine
from cuenv.engines.base import (
    HashMismatch,
    Package,
    PackagesNotFound,
    Request,
    Target,
    Unsatisfiable,
)
from cuenv.engines.conda import FetchProgress, explicit_file, fetch_event, last_json
from cuenv.engines.events import Chunk, Download, Downloaded, Event, Output

TOOLS = ("mamba", "micromamba")
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
        _request(conda_channel).replace(engine="rattler"), target=TARGET, cache_dir=cache_dir)
    assert solution.packages == rattler.packages
    assert solution.engine == tool
    (call,) = fake_conda.calls()
    argv = call["argv"]
    prefix = argv[argv.index("--prefix") + 1]
    expected = ["create", "--dry-run", "--json", "--yes", "--prefix", prefix, "--override-channels",
                "-c", conda_channel.as_uri()]
    assert argv == expected + ["cuda-cudart", "cuda-version 12.1.*"]
    assert call["env"]["CONDA_OVERRIDE_CUDA"] == "12.4" and call["env"]["CONDA_OVERRIDE_GLIBC"] == "2.36"
    assert Path(call["env"]["CONDA_PKGS_DIRS"]).name == "pkgs"  # an empty cache: FETCH lists every package
    assert not Path(prefix).exists()


def test_python_and_platform_reach_the_command_line(fake_conda, conda_channel: Path, cache_dir: Path) -> None:
    engine = get_engine("micromamba", fake_conda.environ)
    request = _request(conda_channel, "cuda-version 12.1.*").replace(python="3.11", platform="linux-aarch64")
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
    solution = get_engine("micromamba", fake_conda.environ).solve(_request(conda_channel), target=TARGET, cache_dir=cache_dir)
    cudart, version = solution.packages
    md5_only = solution.replace(packages=(cudart, version.replace(sha256=None)))
    assert explicit_file(md5_only).splitlines()[2:] == [
        "@EXPLICIT", f"{cudart.url}#{cudart.sha256}", f"{version.url}#{version.md5}",
    ]
    with pytest.raises(HashMismatch):
        explicit_file(solution.replace(packages=(cudart.replace(sha256=None, md5=None),)))
    # a conda before 24.9 reads only md5 after the '#': the md5 wherever the lock has one
    assert explicit_file(solution, sha256=False).splitlines()[3:] == [f"{cudart.url}#{cudart.md5}", f"{version.url}#{version.md5}"]


def test_edited_hash_of_a_local_package_is_refused_before_the_tool_runs(fake_conda, conda_channel: Path, tmp_path: Path,
                                                                       cache_dir: Path) -> None:
    """conda copies a file:// package without checking it; cuenv checks such packages itself."""
    engine = get_engine("micromamba", fake_conda.environ)
    solution = engine.solve(_request(conda_channel), target=TARGET, cache_dir=cache_dir)
    edited = solution.replace(packages=tuple(p.replace(sha256="0" * 64) for p in solution.packages))
    with pytest.raises(HashMismatch) as info:
        engine.install(tmp_path / "p", edited, cache_dir=cache_dir)
    assert info.value.expected == "0" * 64 and info.value.actual == solution.packages[0].sha256
    assert engine.installed(tmp_path / "p") == ()
    assert "--file" not in fake_conda.calls()[-1]["argv"]  # the tool never ran


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


def _pkg(name: str, version: str, size: int | None) -> Package:
    return Package(name=name, version=version, kind="conda", url=f"https://c/linux-64/{name}-{version}-0.conda",
                   sha256="0" * 64, size=size)


def test_fetch_lines_give_bytes_per_package():
    packages = (_pkg("nvidia-cuda-nvcc-cu12", "12.1.105", 20 << 20), _pkg("libcublas", "12.1.3.1", 400 << 20),
                _pkg("twin-package-name-long-a", "1", 10), _pkg("twin-package-name-long-b", "1", 10))
    seen: list[Event] = []
    fetches = FetchProgress(packages, seen.append)
    for shown, size in (("nvidia-cuda-nvcc-cu12-12.1.105", "20.0 MB"), ("libcublas-12.1.3.1", "400.0 MB"),
                        ("twin-package-name-long-a-1", "10 B")):
        desc = f"{shown:<20.20} | {size:<9} | "  # conda's "%-20.20s | %-9s | "
        for fraction in ("0.000000", "0.250000", "0.750000"):
            fetches(f'\0{{"fetch":"{desc}","finished":false,"maxval":1,"progress":{fraction}}}')
        fetches(f'\0{{"fetch":"{desc}","finished":true,"maxval":1,"progress":1}}')
    fetches("Executing transaction: done")
    nvcc = [e for e in seen if getattr(e, "package", None) == "nvidia-cuda-nvcc-cu12"]  # cut to "nvidia-cuda-nvcc-cu1" by conda
    assert nvcc == [Download("nvidia-cuda-nvcc-cu12", 20 << 20), Chunk("nvidia-cuda-nvcc-cu12", 5 << 20),
                    Chunk("nvidia-cuda-nvcc-cu12", 10 << 20), Chunk("nvidia-cuda-nvcc-cu12", 5 << 20),
                    Downloaded("nvidia-cuda-nvcc-cu12", 20 << 20)]
    assert sum(e.nbytes for e in seen if isinstance(e, Chunk) and e.package == "libcublas") == 400 << 20
    assert Download("twin-package-name-lo", None) in seen  # two packages share the 20 characters: no size guessed
    assert seen[-1] == Output("Executing transaction: done")


def test_the_fetch_line_reader():
    line = '\0{"fetch":"nvidia-cuda-nvcc-cu1 | 19.1 MB   | ","finished":false,"maxval":1,"progress":0.250000}'
    assert fetch_event(line) == ("nvidia-cuda-nvcc-cu1", 0.25, False)
    assert fetch_event('{"fetch":"x | ","finished":true,"maxval":1,"progress":1}') == ("x", 1.0, True)
    for other in ("Preparing transaction: done", '{"fetch": 3}', '{"fetch":"x","progress":"a"}', "{", ""):
        assert fetch_event(other) is None


@given(st.text(max_size=120))
def test_any_line_of_conda_is_read_without_failing(text: str):
    found = fetch_event(text)
    assert found is None or 0.0 <= found[1] <= 1.0
    FetchProgress((), lambda *a, **k: None)(text)
