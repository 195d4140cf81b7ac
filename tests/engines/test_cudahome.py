"""A venv's CUDA_HOME: the links its NVIDIA wheels' folders make, and the ones kept for the next environment."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from cuenv.engines.cudahome import build_cuda_home, links, memo_key, plant, remember, remembered


def component(site: Path, name: str, files: dict[str, list[str]]) -> Path:
    comp = site / "nvidia" / name
    for sub, names in files.items():
        (comp / sub).mkdir(parents=True, exist_ok=True)
        for n in names:
            (comp / sub / n).write_text(f"{name}/{sub}/{n}")
    (comp / "__init__.py").write_text("")
    return comp


@pytest.fixture
def tree(tmp_path: Path) -> tuple[Path, list[Path]]:
    site = tmp_path / "env" / "lib" / "python3.11" / "site-packages"
    nvcc = component(site, "cuda_nvcc", {"bin": ["nvcc", "ptxas"], "include": ["crt", "cuda.h"], "nvvm": ["libdevice"]})
    rt = component(site, "cuda_runtime", {"include": ["cuda.h", "cuda_runtime_api.h", "__init__.py"],
                                          "lib": ["libcudart.so.12", "libcudart.so.12.1"]})
    return tmp_path / "env" / ".cuenv" / "cuda", [nvcc, rt]


def test_links_name_each_file_once_the_first_component_keeping_a_name(tree: tuple[Path, list[Path]]) -> None:
    home, comps = tree
    found = links(home, comps)
    assert sorted(found) == ["bin/nvcc", "bin/ptxas", "include/crt", "include/cuda.h", "include/cuda_runtime_api.h",
                             "lib", "lib64/libcudart.so", "lib64/libcudart.so.12", "lib64/libcudart.so.12.1", "nvvm"]
    assert found["lib"] == "lib64" and found["lib64/libcudart.so"] == "libcudart.so.12"
    assert not home.exists()  # listed, nothing made
    build_cuda_home(home, comps)
    assert (home / "include" / "cuda.h").read_text() == "cuda_nvcc/include/cuda.h"
    assert (home / "lib" / "libcudart.so").read_text() == "cuda_runtime/lib/libcudart.so.12"
    assert (home / "nvvm" / "libdevice").is_file() and (home / "bin" / "ptxas").is_file()


def test_links_planted_before_the_files_are_kept_when_right_and_replaced_when_not(tree: tuple[Path, list[Path]]) -> None:
    home, comps = tree
    right = links(home, comps)
    plant(home, right)
    before = os.lstat(home / "include" / "cuda.h").st_ino
    assert build_cuda_home(home, comps, planted=right) == right
    assert os.lstat(home / "include" / "cuda.h").st_ino == before  # kept, not made again
    wrong = {**right, "include/stale.h": "../nowhere/stale.h"}
    del wrong["bin/nvcc"]
    plant(home, wrong)
    assert build_cuda_home(home, comps, planted=wrong) == right
    assert sorted(str(p.relative_to(home)) for p in home.rglob("*") if p.is_symlink()) == sorted(right)


def test_remembered_links_round_trip_and_a_damaged_memo_is_none(tmp_path: Path, tree: tuple[Path, list[Path]]) -> None:
    home, comps = tree
    key = memo_key([("nvidia-cuda-runtime-cu12", "12.1.105", "ab" * 32)], home, comps[0].parents[1])
    assert remembered(tmp_path, key) is None
    remember(tmp_path, key, links(home, comps))
    assert remembered(tmp_path, key) == links(home, comps)
    memo = tmp_path / "cuda-home" / f"{key}.json"
    for damaged in ("{", "[]", json.dumps({"include/x.h": 3}), json.dumps({"../../.bashrc": "x"}),
                    json.dumps({"include/../../x": "y"}), json.dumps({"/etc/x": "y"}), json.dumps({"include/..": "y"}),
                    json.dumps({"include/x.h": "a\0b"}), json.dumps({"include/x.h": ""})):
        memo.write_text(damaged)
        assert remembered(tmp_path, key) is None, damaged


def test_the_key_tells_wheel_builds_and_interpreters_apart(tmp_path: Path) -> None:
    home = tmp_path / "env" / ".cuenv" / "cuda"
    site = tmp_path / "env" / "lib" / "python3.11" / "site-packages"
    one = memo_key([("nvidia-a", "1", "aa"), ("nvidia-b", "2", "bb")], home, site)
    assert one == memo_key([("nvidia-b", "2", "bb"), ("nvidia-a", "1", "aa")], home, site)  # order does not matter
    assert one != memo_key([("nvidia-a", "1", "ab"), ("nvidia-b", "2", "bb")], home, site)
    assert one != memo_key([("nvidia-a", "1", "aa"), ("nvidia-b", "2", "bb")], home, site.parents[1] / "python3.12" / "site-packages")


@given(st.dictionaries(st.text(max_size=12), st.text(max_size=12), max_size=6))
def test_remembered_never_returns_a_path_out_of_the_home(tmp_path_factory: pytest.TempPathFactory, data: dict[str, str]) -> None:
    cache = tmp_path_factory.mktemp("memo")
    remember(cache, "k", data)
    found = remembered(cache, "k")
    for path, target in (found or {}).items():
        assert target and "\0" not in target
        assert path in ("lib", "nvvm") or (path.split("/")[0] in ("bin", "include", "lib64") and path.count("/") == 1
                                           and path.split("/")[1] not in ("", ".", ".."))
