"""Verdicts on files with two truths, pairings cuenv cannot confirm, and CUDA from what is installed (issue 25)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from cuenv.errors import CuenvError
from cuenv.recipes import projectfile

MACHINE = ("--driver", "535.104.05", "--cc", "8.6")


def _write(tmp_path: Path, name: str, text: str) -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


def test_the_pip_layers_torch_decides_over_condas_cudatoolkit(tmp_path, cli):
    """NeMo's voice agent environment: conda cudatoolkit 11.8, and pip torch 2.7.1 (CUDA 12.6) with cu12 wheels."""
    path = _write(tmp_path, "environment.yml", "dependencies:\n  - python=3.10\n  - cudatoolkit=11.8.0\n  - pip\n"
                  "  - pip:\n    - nvidia-cuda-runtime-cu12==12.6.77\n    - torch==2.7.1\n")
    need = projectfile.read_need(path)
    assert need.stack.cuda == "12.6" and need.stack.framework_version == "2.7.1"
    assert any("environment.yml:3 (cudatoolkit=11.8.0)" in n and "torch==2.7.1" in n and "pip layer decides" in n
               for n in need.notes)
    code, out, err = cli("check", str(path), *MACHINE, "--json")
    assert code == 0 and json.loads(out)["cuda"] == "12.6"


def test_two_majors_without_a_pip_torch_stay_a_conflict_naming_both_lines(tmp_path):
    path = _write(tmp_path, "environment.yml", "dependencies:\n  - cudatoolkit=11.8\n  - pip\n"
                  "  - pip:\n    - nvidia-cuda-runtime-cu12==12.6.77\n")
    with pytest.raises(CuenvError) as err:
        projectfile.read_need(path)
    assert "environment.yml:5" in str(err.value) and "environment.yml:2 (cudatoolkit=11.8)" in str(err.value)


def test_a_cu_tag_does_not_say_which_cuda_the_torch_beside_it_brings(tmp_path):
    """text-generation-webui: llama.cpp wheels tagged +cu124 carry their own CUDA; the torch a dependent installs
    brings its own (read from the resolved set: tests/requestfiles/test_resolved.py)."""
    wheel = ("https://github.com/oobabooga/llama-cpp-binaries/releases/download/v0.1/"
             "llama_cpp_binaries-0.124.0+cu124-py3-none-linux_x86_64.whl")
    # by its names alone, a dependent's torch is whichever the resolver picks: the +cu124 tag does not say it
    need = projectfile.read_need(_write(tmp_path, "requirements.txt", f"xformers==0.0.33.post2\n{wheel}\n"))
    assert need.stack.cuda is None and need.undetermined[0].pin == "xformers==0.0.33.post2"
    need = projectfile.read_need(_write(tmp_path, "requirements.txt", f"accelerate==1.13.*\n{wheel}\n"))
    assert need.stack.cuda is None
    with pytest.raises(CuenvError) as err:
        need.require_cuda()
    assert "requirements.txt:1: accelerate==1.13.*" in str(err.value) and "or pass --cuda (e.g. --cuda 12.1)" in err.value.hint


@pytest.mark.parametrize("text, flags, asks", [
    ("dependencies:\n  - cudatoolkit=11.6\n  - pytorch=1.11.0\n", (), "conda search -c pytorch 'pytorch=1.11.0=*cuda11.6*'"),
    ("dependencies:\n  - python=3.9\n  - pytorch=1.12.1\n", ("--cuda", "11.7"), "pytorch=1.12.1=*cuda11.7*"),
])
def test_a_pairing_cuenv_does_not_know_is_unknown_with_the_next_step(tmp_path, cli, text, flags, asks):
    path = _write(tmp_path, "environment.yml", text)
    code, out, err = cli("check", str(path), *MACHINE, *flags)
    assert code == 0 and out.splitlines()[0].endswith(": unknown (a build or package set cuenv cannot confirm; no error found for its CUDA)")
    assert "build-unknown" in out and asks in out and "never built" not in out
    data = json.loads(cli("check", str(path), *MACHINE, *flags, "--json")[1])
    assert data["verdict"] == "unknown" and any(f["code"] == "build-unknown" for f in data["findings"])


def test_a_pip_torch_build_cuenv_does_not_know_is_unknown(tmp_path, cli):
    path = _write(tmp_path, "requirements.txt", "torch==1.11.0+cu116\n")
    data = json.loads(cli("check", str(path), *MACHINE, "--json")[1])
    assert data["verdict"] == "unknown" and data["cuda"] == "11.6"
    fix = next(f["fix"] for f in data["findings"] if f["code"] == "build-unknown")
    assert "https://download.pytorch.org/whl/cu116/torch/" in fix


@pytest.mark.parametrize("text, flags, verdict", [
    ("dependencies:\n  - cudatoolkit=11.1\n  - pytorch=1.11.0\n", (), "runs"),  # the pytorch channel built it
    ("dependencies:\n  - cudatoolkit=11.0\n  - pytorch=1.7.1\n", (), "runs"),  # sm_80 kernels run on 8.6
    ("dependencies:\n  - cudatoolkit=10.2\n  - pytorch=1.9.0\n", (), "unknown"),  # CUDA 10.2 predates 8.6: PTX only
])
def test_torch_1x_conda_builds_are_known_by_the_cuda_they_were_built_for(tmp_path, cli, text, flags, verdict):
    """Releases 1.0-1.12 are in the tables by their builds (previous-versions page, the conda builds); their
    arch lists are not, so a CUDA 10.x build on compute capability 8.6 stays unknown (only PTX runs there)."""
    path = _write(tmp_path, "environment.yml", text)
    data = json.loads(cli("check", str(path), *MACHINE, *flags, "--json")[1])
    assert data["verdict"] == verdict, data["findings"]
    if verdict == "unknown":
        assert any("predates the GPU 0 (8.6)" in f["message"] for f in data["findings"] if f["code"] == "build-unknown")


@pytest.mark.parametrize("cc, code", [("8.6", "build-unknown"), ("8.0", "build-unknown"), ("7.0", "arch-unknown")])
def test_a_cuda_older_than_the_nvcc_table_is_judged_by_the_gpus_first_cuda(tmp_path, cli, cc, code):
    """held-out-11 (an @EXPLICIT list of cudatoolkit 9.0): the nvcc table starts at CUDA 10.0, so a 9.0 build
    read "runs" on 8.6 with only "arch unknown". Ampere's first CUDA is 11.0 (sm_80), so 9.0 predates it;
    Volta's first is before the table's first row, so there cuenv still says only that it does not know."""
    path = _write(tmp_path, "environment.yml", "dependencies:\n  - cudatoolkit=9.0\n")
    data = json.loads(cli("check", str(path), "--driver", "535.104.05", "--cc", cc, "--json")[1])
    assert code in {f["code"] for f in data["findings"]}, data["findings"]
    assert data["verdict"] == ("unknown" if code == "build-unknown" else "runs")


def test_a_known_build_is_a_plain_verdict(tmp_path, cli):
    path = _write(tmp_path, "requirements.txt", "torch==2.1.0+cu121\n")
    data = json.loads(cli("check", str(path), *MACHINE, "--json")[1])
    assert data["verdict"] == "runs" and not any(f["code"] == "build-unknown" for f in data["findings"])
    data = json.loads(cli("check", str(path), "--driver", "470.82.01", "--cc", "8.6", "--json")[1])
    assert data["verdict"] == "does-not-run"


def test_a_conda_range_on_the_toolkit_is_a_major(tmp_path):
    """conda-lock's test-cuda environment: `cudatoolkit >=11,<12` asks for CUDA 11.x, it is not CPU-only."""
    need_path = _write(tmp_path, "environment.yml", "dependencies:\n  - cudatoolkit >=11,<12\n")
    with pytest.raises(CuenvError) as err:
        projectfile.read_need(need_path)
    assert "no pin says which CUDA 11.x" in str(err.value) and "--cuda 11." in err.value.hint


def test_several_pip_lists_are_read_as_conda_reads_them(tmp_path):
    """conda's Dependencies.parse keeps one `pip` key: each `pip:` list replaces the one before, so conda
    installs the last list only (checked against conda 26.7: {'pip': ['c==3']} for three lists). cuenv reads
    the file the same way instead of refusing it, and names the lists conda leaves out."""
    path = _write(tmp_path, "environment.yml", "dependencies:\n  - python=3.10\n  - pip:\n    - a==1\n  - pip\n"
                  "  - pip:\n    - b==2\n  - pip:\n    - torch==2.1.0+cu121\n")
    need = projectfile.read_need(path)
    assert [r.text for r in need.document.pip.requirements] == ["torch==2.1.0+cu121"]
    assert need.stack.cuda == "12.1"
    note = next(n for n in need.notes if "`pip:` lists" in n)
    assert note.startswith(f"{path}:8: the file has 3 `pip:` lists") and "lines 3, 6" in note


def test_a_conda_build_string_names_a_build_that_exists(tmp_path, cli):
    """PARIS: pytorch=1.11.0=py3.9_cuda11.3_cudnn8.2.0_0 is a build the pytorch channel published: no unknown."""
    path = _write(tmp_path, "environment.yml", "dependencies:\n  - cudatoolkit=11.3.1\n"
                  "  - pytorch=1.11.0=py3.9_cuda11.3_cudnn8.2.0_0\n")
    data = json.loads(cli("check", str(path), *MACHINE, "--json")[1])
    assert data["verdict"] == "runs" and data["cuda"] == "11.3"


def test_a_pinned_torch_older_than_the_tables_is_not_called_the_resolvers_pick(tmp_path):
    need = projectfile.read_need(_write(tmp_path, "requirements.txt", "torch==1.11.0\n"))
    with pytest.raises(CuenvError) as err:
        need.require_cuda()
    assert "torch 1.11.0 from PyPI, whose CUDA build cuenv's tables do not cover" in str(err.value)
    assert "resolver picks" not in str(err.value) and "or pass --cuda (e.g. --cuda 12.1)" in err.value.hint


def test_cuda_12_and_13_wheels_side_by_side_need_the_newest(tmp_path):
    need = projectfile.read_need(_write(tmp_path, "requirements.txt",
                                        "nvidia-nvtx-cu12==12.8.90\nnvidia-cuda-runtime==13.0.96\n"))
    assert need.stack.cuda == "13.0" and any("nvidia/cu13/" in n for n in need.notes)
    with pytest.raises(CuenvError) as err:  # cu11 and cu12 wheels write the same folders
        projectfile.read_need(_write(tmp_path, "requirements.txt",
                                     "nvidia-cuda-runtime-cu11==11.8.89\nnvidia-cuda-runtime-cu12==12.1.105\n"))
    assert "requirements.txt:2" in str(err.value) and "requirements.txt:1" in str(err.value)


@pytest.mark.parametrize("name, text", [
    ("requirements.txt", "numpy\nOmegaFold @ git+https://github.com/HeliXonProtein/OmegaFold.git\n"),
    ("requirements.txt", "numpy\nrobosuite @ https://github.com/cheng-chi/robosuite/archive/277ab9588.tar.gz\n"),
    ("environment.yml", "dependencies:\n  - python=3.8\n  - pip\n  - pip:\n"
                        "    - git+https://github.com/microsoft/protein-sequence-models.git\n    - tqdm\n"),
])
def test_a_package_built_from_source_leaves_a_cpu_reading_unknown(tmp_path, cli, monkeypatch, name, text):
    """held-out-15 (evodiff): the names say no CUDA, but a package built from a VCS checkout or a source archive
    requires what only its build shows (OmegaFold requires torch): unknown, naming the line, never CPU-only.
    Network-free (uv would only fail to fetch the sources: cuenv builds nothing to read a file)."""
    monkeypatch.setenv("UV_OFFLINE", "1")
    path = _write(tmp_path, name, text)
    code, out, err = cli("check", str(path), *MACHINE, "--json")
    data = json.loads(out)
    assert data["verdict"] == "unknown", out
    unknown = [f for f in data["findings"] if f["code"] == "build-unknown"]
    assert unknown and "is built from source" in unknown[0]["message"] and "--cuda" in unknown[0]["fix"]


def test_a_package_built_from_source_beside_a_decided_cuda_changes_nothing(tmp_path, cli):
    path = _write(tmp_path, "requirements.txt", "torch==2.5.1+cu121\nOmegaFold @ git+https://github.com/HeliXonProtein/OmegaFold.git\n")
    code, out, err = cli("check", str(path), *MACHINE, "--json")
    data = json.loads(out)
    assert (data["verdict"], data["cuda"]) == ("runs", "12.1"), out


def test_a_local_version_on_pypi_alone_cannot_install_and_the_hint_clears_it(tmp_path, cli, monkeypatch):
    """held-out-15: `torch==2.6.0+cu118` with no index is read as CUDA 11.8, but PyPI accepts no local versions, so
    pip finds no such file; check lists the line, create stops at it, and the index its hint names clears it."""
    monkeypatch.setenv("UV_OFFLINE", "1")
    path = _write(tmp_path, "requirements.txt", "torch==2.6.0+cu118\ntorch-scatter==2.1.1+pt20cu117\nnumpy\n")
    code, out, err = cli("check", str(path), *MACHINE, "--json")
    data = json.loads(out)
    assert data["cuda"] == "11.8" and [u.split(": ")[1] for u in data["unusable"]] == [
        "torch==2.6.0+cu118", "torch-scatter==2.1.1+pt20cu117"], data["unusable"]
    code, out, err = cli("create", "-r", str(path), "-n", "x", "--dry-run")
    assert code == 2 and "PyPI, the only index the file names, serves no local versions" in err
    assert "`--extra-index-url https://download.pytorch.org/whl/cu118` on a line of its own" in err
    path.write_text("--extra-index-url https://download.pytorch.org/whl/cu118\n" + path.read_text())
    data = json.loads(cli("check", str(path), *MACHINE, "--json")[1])
    assert data["unusable"] == [] and data["cuda"] == "11.8"  # an index is named: it may serve them
    path.write_text("-f https://data.pyg.org/whl/torch-2.0.0+cu117.html\ntorch-scatter==2.1.1+pt20cu117\n")
    assert json.loads(cli("check", str(path), *MACHINE, "--json")[1])["unusable"] == []
