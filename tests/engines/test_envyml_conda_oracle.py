"""cuenv's environment.yml reader against conda's own meaning of the same files (issue 28 §4).

conda (the real one: realconda.py) reads each file with its own environment-spec plugin
(``conda.env.specs.yaml_file.YamlFileSpec``, what ``conda env create -f`` uses), and cuenv's
:func:`cuenv.recipes.envyml.parse_text` must read the same channels, specs, ``pip:`` requirements and
variables. Here, beside the engine tests, because that is where the real conda fixture lives.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from cuenv.recipes.envyml import parse_text

READ = """
import json, sys
from conda.env.specs.yaml_file import YamlFileSpec
out = []
for path in sys.argv[1:]:
    env = YamlFileSpec(filename=path).env
    out.append({"channels": list(env.config.channels), "variables": env.variables or {},
                "pip": env.external_packages.get("pip") or [], "name": env.name,
                "specs": [[s.name, str(s.version) if s.version else None, s.get_raw_value("build"),
                           str(s.get_raw_value("channel")) if s.get_raw_value("channel") else None]
                          for s in env.requested_packages]})
print(json.dumps(out))
"""

FILES = {
    "nodefaults, channel::pkg, selectors in comments, pip and variables": """\
name: demo
channels:
  - conda-forge
  - nodefaults
dependencies:
  - python=3.11
  - pytorch::pytorch-cuda=12.1
  - cudatoolkit  # [linux]
  - cuda-version 12.1.*
  - cudnn >=8.9,<9  # [not osx]
  - pip
  - pip:
    - einops==0.3.0
    - --extra-index-url https://download.pytorch.org/whl/cu121
    - torch==2.5.1+cu121
variables:
  TORCH_CUDA_ARCH_LIST: "8.0;9.0"
  CUDA_MODULE_LOADING: LAZY
""",
    "build strings and exact pins": """\
channels: [pytorch, nvidia, conda-forge]
dependencies:
  - pytorch=2.5.1=py3.11_cuda12.1_cudnn9.1.0_0
  - pytorch-cuda 12.1.*
  - nvidia/label/cuda-12.1.0::cuda-nvcc
  - python >= 3.10
  - numpy[version=">=1.24"]
""",
    "a pip list alone, conda adds pip": """\
channels: [conda-forge]
dependencies:
  - python=3.12
  - pip:
    - jax[cuda12]==0.4.30
    - flax
""",
}


@pytest.fixture(scope="module")
def conda_readings(real_conda: Path, tmp_path_factory: pytest.TempPathFactory) -> dict[str, dict]:
    folder = tmp_path_factory.mktemp("envyml")
    paths = []
    for i, text in enumerate(FILES.values()):
        paths.append(folder / f"environment-{i}.yml")
        paths[-1].write_text(text)
    done = subprocess.run([str(real_conda.parent / "python"), "-c", READ, *map(str, paths)], capture_output=True,
                          text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    return dict(zip(FILES, json.loads(done.stdout.splitlines()[-1])))  # after conda's own warnings


def _exact(version: str | None) -> str | None:
    """rattler writes an exact pin ``==2.5.1``; conda's MatchSpec says ``2.5.1``: the same version."""
    return version[2:] if version and version.startswith("==") and "," not in version else version


def _url(channel: str | None) -> str | None:
    return channel if channel is None or "://" in channel else f"https://conda.anaconda.org/{channel}"


@pytest.mark.parametrize("case", list(FILES))
def test_cuenv_reads_what_conda_reads(case: str, conda_readings: dict[str, dict]) -> None:
    conda = conda_readings[case]
    cuenv = parse_text(FILES[case])
    assert cuenv.name == conda["name"]
    # specs: same names, versions, builds and channels (conda writes a spec's channel as its URL)
    ours = [[s.name, _exact(s.version), s.build, _url(s.channel)] for s in cuenv.specs]
    theirs = [[n, v, b, _url(c.rstrip("/")) if c else None] for n, v, b, c in conda["specs"]]
    if not cuenv.spec("pip") and cuenv.pip:  # conda adds pip to a file with a pip: list ("I'm adding one for you")
        theirs = [s for s in theirs if s[0] != "pip"]
    assert sorted(ours, key=str) == sorted(theirs, key=str)
    # channels: conda keeps `nodefaults` for its solver to drop; cuenv drops it and appends spec channels
    listed = [c for c in conda["channels"] if c != "nodefaults"]
    assert list(cuenv.channels[:len(listed)]) == listed
    assert set(cuenv.channels[len(listed):]) == {s.channel for s in cuenv.specs if s.channel} - set(listed)
    # pip: the same requirements in the same order; conda passes option lines to pip, cuenv reads them
    requirements = [r.text for r in cuenv.pip.requirements] if cuenv.pip else []
    assert requirements == [x for x in conda["pip"] if not x.startswith("-")]
    extra = [x.split(None, 1)[1] for x in conda["pip"] if x.startswith("--extra-index-url")]
    assert set(extra) <= set(cuenv.pip.options.index_urls if cuenv.pip else ())
    assert dict(cuenv.variables) == conda["variables"]


def test_conda_solves_the_file_as_cuenv_reads_it(conda_environ: dict[str, str], conda_channel: Path,
                                                 tmp_path: Path) -> None:
    """Against the local channel: the packages conda would install for the file are those cuenv's reading
    asks for (by name, with their dependencies). (No `nodefaults` here: the tested conda, 26.7.2.dev0, fetches
    it as a channel named nodefaults in `conda env create`; its env installer's own filter is not reached.)"""
    text = (f"channels:\n  - {conda_channel.as_uri()}\ndependencies:\n  - cuda-version=12.1\n"
            "  - cuda-cudart  # [linux]\n  - cuda-nvcc\n")
    (tmp_path / "environment.yml").write_text(text)
    done = subprocess.run(["conda", "env", "create", "--dry-run", "--json", "-f", "environment.yml", "-p",
                           str(tmp_path / "env")], env=conda_environ, cwd=tmp_path, capture_output=True, text=True,
                          timeout=300)
    assert done.returncode == 0, done.stdout + done.stderr
    data = json.loads(done.stdout[done.stdout.index("{"):])
    linked = {a["name"] for a in data["actions"]["LINK"]}
    read = parse_text(text)
    assert read.channels == (conda_channel.as_uri(),)
    assert {s.name for s in read.specs} <= linked == {"cuda-version", "cuda-cudart", "cuda-nvcc", "cuda-nvcc-tools"}
