"""An environment.yml whose conda pytorch decides the CUDA and whose pip layer follows it: conda runs
`pip install -U` on that layer, which may install its own torch over conda's (held-out-3 corpus batch:
an unpinned torchvision, ml4gw requiring torch 2). cuenv reads whether pip keeps conda's torch from the
layer as uv resolves it (cuenv.recipes.resolved.pip_over_conda); where it cannot tell, the verdict is unknown."""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest

from cuenv import config
from cuenv.recipes import projectfile, resolved

MACHINE = ("--driver", "535.104.05", "--cc", "8.6", "--os", "linux")


def _env(tmp_path: Path, pip: list[str], pytorch: str = "pytorch=2.5.1") -> Path:
    path = tmp_path / "environment.yml"
    lines = "".join(f"      - {p}\n" for p in pip)
    path.write_text(f"name: x\nchannels: [pytorch, nvidia]\ndependencies:\n  - python=3.11\n  - {pytorch}\n"
                    f"  - pytorch-cuda=12.4\n  - pip\n  - pip:\n{lines}", encoding="utf-8")
    return path


def _need(path: Path, *, offline: bool) -> projectfile.ProjectNeed:
    environ = dict(os.environ, UV_OFFLINE="1", CUENV_CACHE_DIR=str(path.parent / "cache")) if offline else dict(os.environ)
    return projectfile.read_need(path, environ=environ, settings=config.resolve({}, environ))


@pytest.mark.parametrize("version, cuda, expected", [
    ("1.12.1.*", "11.3", "==1.12.1.*"),       # pytorch=1.12.1
    ("==2.0.1", "11.7", "==2.0.1"),            # pytorch==2.0.1 or a build-pinned spec
    ("2.5.*", "12.4", "==2.5.*"),
    (">=1.10,<2.0", "11.7", "==1.13.*"),       # the newest release in range that cuenv's tables list for CUDA 11.7
    (">=1.9.1", "11.1", "==1.11.*"),           # the newest torch the tables list for CUDA 11.1 (conda's 1.11.0 cuda11.1)
    (">=1.13", "11.1", None),                  # the tables list no torch >= 1.13 built for CUDA 11.1
    ("1.12.*|==1.13", "11.7", None),           # conda's own "or": not a PEP 440 range
    (None, "12.4", None),
])
def test_the_release_conda_installs(version, cuda, expected):
    assert resolved.conda_torch(version, cuda) == expected


def test_offline_a_pip_layer_beside_conda_torch_is_unknown_with_the_command_that_answers(tmp_path, cuenv_exe):
    path = _env(tmp_path, ["torchvision"])
    need = _need(path, offline=True)
    assert need.stack.cuda == "12.4"
    [finding] = [f for f in need.findings() if "pip" in f.message]
    assert finding.code == "build-unknown"
    assert "whether pip keeps conda's pytorch=2.5.1 is unknown: its pip layer was not resolved" in finding.message
    assert finding.fix == f"`cuenv check {path}` with the package index reachable resolves it"


def test_a_pin_in_the_pip_layer_or_a_flag_needs_no_resolution(tmp_path):
    assert not [f for f in _need(_env(tmp_path, ["torch==2.5.1"]), offline=True).findings() if "pip" in f.message]
    path = _env(tmp_path, ["torchvision"])
    environ = dict(os.environ, UV_OFFLINE="1")
    need = projectfile.read_need(path, cuda="12.4", environ=environ, settings=config.resolve({}, environ))
    assert not need.findings()


@pytest.mark.network
@pytest.mark.parametrize("pip, pytorch, kept", [
    (["numpy"], "pytorch=2.5.1", True),               # no torch in the layer's set
    (["torchvision"], "pytorch=1.12.1", False),       # the newest torchvision pins a newer torch
    # a release that accepts conda's torch 2.5 (accelerate 1.16, on PyPI since, needs torch>=2.6: the layer's
    # newest release is the resolver's, so an unpinned accelerate would make this test follow the index)
    (["accelerate==1.2.1"], "pytorch=2.5.1", True),
])
def test_online_pip_keeps_conda_torch_only_where_the_layers_newest_releases_accept_it(tmp_path, pip, pytorch, kept):
    path = _env(tmp_path, pip, pytorch)
    messages = [f.message for f in _need(path, offline=False).findings() if "pip" in f.message]
    if kept:
        assert not messages
    else:
        assert len(messages) == 1 and messages[0].split(": ", 1)[1].startswith("pip may install torch ")
        assert f"over conda's {pytorch}: the releases pip picks for the pip layer need another torch" in messages[0]
        assert re.search(r"with torch==1\.12\.1\.\* held: Because torchvision\S+ depends on torch", messages[0]), messages[0]


def test_uvs_reason_names_the_package_that_rules_conda_torch_out():
    failure = ("cause: Because kornia==0.8.2 depends on torch>=2.0.0 and torch==1.12.1.*, we can conclude that kornia==0.8.2 "
               "cannot be used. And because you require kornia==0.8.2, we can conclude that your requirements are unsatisfiable.")
    assert resolved._first_reason(failure) == ("Because kornia==0.8.2 depends on torch>=2.0.0 and torch==1.12.1.*, we can "
                                               "conclude that kornia==0.8.2 cannot be used")
    assert "; " not in resolved._first_reason("cause: Because a; b depends on torch. More.")


@pytest.mark.network
def test_a_layer_only_a_build_would_resolve_says_so_rather_than_send_the_user_online(tmp_path):
    """GuyTevet/motion-diffusion-model (held-out-4): chumpy 0.70 has only a source distribution, so uv cannot
    resolve the layer online either; the finding says that only a build would tell (cuenv builds nothing)."""
    path = _env(tmp_path, ["chumpy==0.70"], "pytorch=1.7.1")
    messages = [f.message + " " + (f.fix or "") for f in _need(path, offline=False).findings() if "pip" in f.message]
    assert len(messages) == 1 and "its pip layer was not resolved" in messages[0]
    assert "only building the layer's source-only packages would tell" in messages[0] and "reachable" not in messages[0]


@pytest.mark.network
def test_the_offline_hint_works_as_written(tmp_path, cuenv_exe):
    """The finding's fix, run as written with the index reachable: the layer is resolved (no torch in it)."""
    import subprocess

    path = _env(tmp_path, ["numpy"])
    offline = subprocess.run([*cuenv_exe, "check", str(path), *MACHINE], capture_output=True, text=True,
                             env=dict(os.environ, UV_OFFLINE="1", CUENV_CACHE_DIR=str(tmp_path / "cold")))
    assert "its pip layer was not resolved" in offline.stdout and "build-unknown" in offline.stdout
    online = subprocess.run([*cuenv_exe, "check", str(path), *MACHINE], capture_output=True, text=True)
    assert online.returncode == 0 and "was not resolved" not in online.stdout and "build-unknown" not in online.stdout, online.stdout


def test_cuenvs_own_create_reads_no_such_doubt(tmp_path):
    """`cuenv create -f` installs the pip layer against the conda packages already there (uv, not `pip -U`),
    which keeps conda's torch: the question is conda's, not cuenv's."""
    path = _env(tmp_path, ["torchvision"])
    environ = dict(os.environ, UV_OFFLINE="1")
    need = projectfile.read_need(path, environ=environ, settings=config.resolve({}, environ), as_conda=False)
    assert need.stack.cuda == "12.4" and not [f for f in need.findings() if "pip" in f.message]
