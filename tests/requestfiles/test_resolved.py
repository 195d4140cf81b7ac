"""A requirements file whose names leave the CUDA open is read from the set uv resolves (cuenv.recipes.resolved):
network-free it stays unknown, naming what was not resolved and the command that answers it; online what
cuenv reads equals what that command prints (differential), and a torch the file does not pin stays unknown."""

from __future__ import annotations

import os
import re
import shlex
import subprocess
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from cuenv import config
from cuenv.errors import CuenvError
from cuenv.recipes import cudainfer, pipreqs, projectfile

CORPUS = Path(__file__).parents[1] / "corpus" / "files"
MACHINE = ("--driver", "535.104.05", "--cc", "8.6", "--os", "linux")


def _write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "requirements.txt"
    path.write_text(text, encoding="utf-8")
    return path


def _need(path: Path, *, offline: bool) -> projectfile.ProjectNeed:
    # offline with a cache of its own: uv answers from its cache offline, and the suite's is shared with the online tests
    environ = dict(os.environ, UV_OFFLINE="1", CUENV_CACHE_DIR=str(path.parent / "cache")) if offline else dict(os.environ)
    return projectfile.read_need(path, environ=environ, settings=config.resolve({}, environ))


def test_offline_a_package_that_installs_torch_is_unknown_with_the_command_that_answers(tmp_path):
    """xformers==0.0.33.post2 installs torch 2.9.1, which only its metadata says: network-free no table decides it."""
    path = _write(tmp_path, "xformers==0.0.33.post2\n")
    need = _need(path, offline=True)
    assert need.stack.cuda is None
    with pytest.raises(CuenvError) as err:
        need.require_cuda()
    text = str(err.value)
    assert text.startswith(f"{path}:1: xformers==0.0.33.post2: a package that installs torch")
    assert "uv did not resolve the file (" in text and f"`uv pip compile {path} --python-version " in text
    assert "or pass --cuda (e.g. --cuda 12.1)" in (err.value.hint or "")


def test_offline_no_answer_is_never_taken_for_no_set(tmp_path):
    """uv offline says the file is "unsatisfiable" (nothing in its cache): that is no answer, so it can never make
    a torch count as pinned (the check that excludes the resolved torch and expects no set)."""
    from cuenv.recipes import resolved

    path = _write(tmp_path, "torch!=2.9.1\nxformers==0.0.33.post2\n")
    environ = dict(os.environ, UV_OFFLINE="1", CUENV_CACHE_DIR=str(tmp_path / "cache"))
    got = resolved.resolve(pipreqs.parse_file(path), file=str(path), python="3.11", environ=environ,
                           settings=config.resolve({}, environ))
    assert got.packages is None and not got.unsatisfiable and "not found in the cache" in got.failure


def test_offline_an_unpinned_torchvision_is_unknown_not_cpu_only(tmp_path):
    need = _need(_write(tmp_path, "numpy\ntorchvision\n"), offline=True)
    assert need.stack.cuda is None and [e.pin for e in need.undetermined] == ["torchvision"]


def test_without_settings_the_file_is_read_by_its_names_alone(tmp_path):
    need = projectfile.read_need(_write(tmp_path, "xformers==0.0.33.post2\n"))
    assert need.stack.cuda is None and need.undetermined and "uv" not in need.undetermined[0].says


# -- the fallback list only ever makes the answer unknown (property) -------------------------------------

_DECIDED = ["torch==2.5.1+cu121", "torch==2.4.1", "nvidia-cuda-runtime-cu12==12.6.77", "numpy==1.26.4", "requests",
            "tensorflow[and-cuda]==2.18.0", "cupy-cuda12x==13.3.0", "jax[cuda12]==0.4.35", "jax-cuda12-plugin==0.4.35"]
_FALLBACK = ["accelerate", "xformers==0.0.33.post2", "xgrammar>=0.1.33", "sglang[all]==0.5.2", "peft", "timm"]


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(lines=st.lists(st.sampled_from(_DECIDED), max_size=3, unique=True), extra=st.sampled_from(_FALLBACK))
def test_a_name_that_may_pull_torch_never_decides_the_cuda(tmp_path, lines, extra):
    """Adding a line of the fallback list to any file leaves a decided CUDA as it was, and turns an undecided
    one into unknown (never into "no CUDA")."""
    def infer(text: str) -> cudainfer.Inference | None:
        path = _write(tmp_path, text)
        try:
            return cudainfer.infer(pipreqs.parse_file(path), file=str(path), python="3.11")
        except CuenvError:  # two majors in one file: a refusal, with or without the extra line
            return None

    before, after = infer("".join(f"{x}\n" for x in lines)), infer("".join(f"{x}\n" for x in [*lines, extra]))
    if before is None:
        assert after is None
        return
    assert after is not None and after.cuda == before.cuda
    if before.cuda is None:
        assert after.undetermined


# -- online: what cuenv reads equals what `uv pip compile` resolves (differential) -----------------------

def _uv_compile(command: str) -> dict[str, str]:
    """The command cuenv names, run as written (with this environment's uv): name -> version it resolves."""
    from uv import find_uv_bin

    argv = shlex.split(command)
    assert argv[:3] == ["uv", "pip", "compile"]
    done = subprocess.run([find_uv_bin(), *argv[1:], "--no-header", "--quiet"], capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr
    return {m.group(1).lower(): m.group(2) for m in re.finditer(r"^([A-Za-z0-9_.-]+)==(\S+)", done.stdout, re.M)}


def _cuda_of(resolved: dict[str, str]) -> str | None:
    runtime = next((v for n, v in resolved.items() if re.fullmatch(r"nvidia-cuda-runtime(-cu\d+)?", n)), None)
    return ".".join(runtime.split(".")[:2]) if runtime else None


@pytest.mark.network
@pytest.mark.parametrize("text, torch", [("xformers==0.0.33.post2\n", "2.9.1")])
def test_a_torch_the_files_pins_decide_is_read_from_the_resolved_set(tmp_path, text, torch):
    need = _need(_write(tmp_path, text), offline=False)
    command = need.how.split("`")[1]
    resolved = _uv_compile(command)
    assert resolved["torch"] == torch and need.stack.framework_version == torch
    assert need.stack.cuda == _cuda_of(resolved) and need.stack.cuda is not None
    assert not need.undetermined


@pytest.mark.network
@pytest.mark.parametrize("text", ["torchvision==0.20.1\n", "torch\ntorchvision==0.15.2\n", "torchaudio==2.8.0\n"])
def test_a_torch_companion_read_from_the_table_is_what_uv_resolves(tmp_path, text):
    """Network-free, a pinned torchvision/torchaudio says its torch (the table from their wheels' METADATA);
    differential: the CUDA read equals the CUDA runtime of the set `uv pip compile` resolves for Linux x86_64."""
    path = _write(tmp_path, text)
    need = _need(path, offline=True)
    resolved = _uv_compile(f"uv pip compile {path} --python-version 3.11 --python-platform x86_64-manylinux_2_28")
    assert need.stack.cuda == _cuda_of(resolved) and need.stack.framework_version == resolved["torch"]


@pytest.mark.network
def test_a_torch_the_file_does_not_pin_stays_unknown_naming_todays_pick():
    """lmdeploy's requirements/common.txt: xgrammar requires torch, any release: uv picks today's."""
    path = CORPUS / "InternLM__lmdeploy/requirements/common.txt"
    need = _need(path, offline=False)
    assert need.stack.cuda is None and need.undetermined
    says = need.undetermined[0].says
    command = says.split("`")[1]
    resolved = _uv_compile(command)
    assert f"torch {resolved['torch']} (CUDA {_cuda_of(resolved)})" in says and "allows other torch releases" in says


@pytest.mark.network
def test_a_file_only_a_build_would_resolve_is_unknown_naming_why(cli):
    """verl's requirements_sglang.txt: sglang[all]==0.5.2 requires flashinfer-python 0.3.1, which has no wheel."""
    path = str(CORPUS / "volcengine__verl/requirements_sglang.txt")
    code, out, err = cli("check", path, *MACHINE, environ=dict(os.environ))
    assert code == 2 and "flashinfer-python" in err and f"`uv pip compile {path} " in err and "or pass --cuda (e.g. --cuda 12.1)" in err


@pytest.mark.network
def test_a_package_with_no_wheel_for_the_target_leaves_a_cpu_reading_unknown(cli):
    """held-out-15 (Confucius4-TTS): vllm 0.16.0's only Linux wheel is manylinux_2_31, so uv resolves nothing for
    the target and the names alone said CPU-only; what that package requires (torch 2.9.1) is unknown, and the
    command cuenv names shows uv's answer. (Network-free the set is not resolved either: the corpus keeps the file
    as known_wrong for that.)"""
    path = str(CORPUS / "keboqi__Confucius4-TTS/requirements-vllm.txt")
    code, out, err = cli("check", path, *MACHINE, environ=dict(os.environ))
    assert code == 2 and "vllm" in err and "no usable wheels" in err and "so what that package requires is unknown" in err
    assert f"`uv pip compile {path} " in err and "--cuda" in err
