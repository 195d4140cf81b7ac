"""Real project files (tests/requestfiles/fixtures, sources in SOURCES.yaml) read as cuenv reads them:
the CUDA stack each one needs, how it was found, and what cuenv cannot install from it."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest
import yaml

from cuenv.recipes import projectfile

FIXTURES = Path(__file__).parent / "fixtures"


def test_every_fixture_has_its_source_recorded():
    sources = yaml.safe_load((FIXTURES / "SOURCES.yaml").read_text(encoding="utf-8"))
    listed = {s["file"] for s in sources}
    on_disk = {str(p.relative_to(FIXTURES)) for p in FIXTURES.rglob("*") if p.is_file() and p.name != "SOURCES.yaml"}
    assert listed == on_disk
    for s in sources:
        assert s["repository"].count("/") == 1 and len(s["commit"]) == 40 and s["file"].endswith(s["path"])
        # unmodified: the bytes are still the ones taken from the repository
        assert hashlib.sha256((FIXTURES / s["file"]).read_bytes()).hexdigest() == s["sha256"], s["file"]


# file -> (kind, engine family, mixed, cuda, has nvcc, framework, framework version, unsupported lines)
EXPECTED = {
    "CompVis__stable-diffusion/environment.yaml": ("environment-yml", "conda", True, "11.3", False, "torch", "1.11.0", 3),
    "NVlabs__stylegan3/environment.yml": ("environment-yml", "conda", True, "11.1", False, "torch", "1.9.1", 0),
    "lllyasviel__ControlNet/environment.yaml": ("environment-yml", "conda", True, "11.3", False, "torch", "1.12.1", 0),
    "graphdeco-inria__gaussian-splatting/environment.yml": ("environment-yml", "conda", True, "11.6", True, "torch", "1.12.1", 2),
    "facebookresearch__dinov2/conda.yaml": ("environment-yml", "conda", True, "11.7", False, "torch", "2.0.0", 1),
    "facebookresearch__dinov2/conda-extras.yaml": ("environment-yml", "conda", True, "11.7", False, "torch", "2.0.0", 1),
    "facebookresearch__dinov2/requirements.txt": ("requirements", "venv", False, "11.7", False, "torch", "2.0.0", 0),
    "rapidsai__cudf/conda/environments/all_cuda-118_arch-x86_64.yaml": ("environment-yml", "conda", False, "11.8", True, None, None, 0),
    "rapidsai__cudf/conda/environments/all_cuda-125_arch-x86_64.yaml": ("environment-yml", "conda", False, "12.5", True, None, None, 0),
    "pytorch__serve/requirements/torch_cu118_linux.txt": ("requirements", "venv", False, "11.8", False, "torch", "2.4.0", 0),
    "pytorch__serve/requirements/torch_cu121_linux.txt": ("requirements", "venv", False, "12.1", False, "torch", "2.4.0", 0),
    "pytorch__serve/requirements/torch_cu101_linux.txt": ("requirements", "venv", False, "10.1", False, "torch", "1.8.1", 0),
    "pytorch__serve/requirements/torch_linux.txt": ("requirements", "venv", False, None, False, None, None, 0),
    "keras-team__keras/requirements-jax-cuda.txt": ("requirements", "venv", False, "12.3", False, "jax", "0.4.28", 0),
    "keras-team__keras/requirements-torch-cuda.txt": ("requirements", "venv", False, "12.1", False, "torch", "2.5.1", 0),
    "keras-team__keras/requirements-tensorflow-cuda.txt": ("requirements", "venv", False, "12.5", False, "tensorflow", "2.18.0", 0),
    "keras-team__keras/requirements-common.txt": ("requirements", "venv", False, None, False, None, None, 0),
    "pytorch__serve/requirements/torch_common.txt": ("requirements", "venv", False, None, False, None, None, 0),
}
# file -> (the line that leaves the CUDA to the resolver: `check` and `create` ask for --cuda, unsupported lines)
UNDETERMINED = {
    "openai__whisper/requirements.txt": ("requirements.txt:3: torch", 0),
    "pytorch__serve/examples/speech2text_wav2vec2/environment.yml": ("environment.yml:9: pytorch", 0),
    "tloen__alpaca-lora/requirements.txt": ("requirements.txt:1: accelerate", 1),
    "facebookresearch__dinov2/requirements-extras.txt": ("requirements-extras.txt:1: mmcv-full==1.5.0", 0),
}


def test_every_real_file_is_read_or_refused_for_a_reason():
    on_disk = {str(p.relative_to(FIXTURES)) for p in FIXTURES.rglob("*") if p.is_file() and p.name != "SOURCES.yaml"}
    assert on_disk == set(EXPECTED) | set(UNDETERMINED) and len(on_disk) >= 20


@pytest.mark.parametrize("name", sorted(UNDETERMINED))
def test_a_file_that_leaves_its_cuda_to_the_resolver_is_not_called_cpu_only(name):
    line, unsupported = UNDETERMINED[name]
    need = projectfile.read_need(FIXTURES / name)
    assert need.stack.cuda is None and need.undetermined and len(need.unsupported) == unsupported
    with pytest.raises(Exception) as err:
        need.require_cuda()
    assert f"{line}: " in str(err.value) and "or pass --cuda (e.g. --cuda 12.1)" in err.value.hint
    assert projectfile.read_need(FIXTURES / name, cuda="12.1").stack.cuda == "12.1"


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_the_stack_each_real_file_needs(name):
    kind, family, mixed, cuda, nvcc, framework, version, unsupported = EXPECTED[name]
    need = projectfile.read_need(FIXTURES / name)
    assert (need.kind, need.engine_family, need.mixed) == (kind, family, mixed)
    assert (need.stack.cuda, need.stack.has_nvcc) == (cuda, nvcc)
    assert (need.stack.framework, need.stack.framework_version) == (framework, version)
    assert len(need.unsupported) == unsupported
    if cuda:
        assert cuda in need.how and f"{FIXTURES / name}:" in need.how  # says which line told it


def test_a_pin_through_an_include_and_a_marker():
    """torch_cu118_linux.txt: the CUDA comes from a `sys_platform == 'linux'` pin; numpy's Windows pin in the
    included torch_common.txt does not apply to the Linux build."""
    need = projectfile.read_need(FIXTURES / "pytorch__serve/requirements/torch_cu118_linux.txt")
    doc = need.document
    assert doc.files[1].endswith("torch_common.txt")
    assert doc.options.index_urls == ("https://download.pytorch.org/whl/cu118", "https://pypi.org/simple")
    assert [r.text for r in doc.requirements if r.name == "numpy"] == [
        'numpy==1.24.3; sys_platform != "win32"', 'numpy==1.26.4; sys_platform == "win32"']


def test_two_extra_indexes_keep_their_order():
    """dinov2's requirements.txt has two --extra-index-url lines (the case that once ended in an internal error)."""
    doc = projectfile.read_need(FIXTURES / "facebookresearch__dinov2/requirements.txt").document
    assert doc.options.index_urls == ("https://download.pytorch.org/whl/cu117", "https://pypi.nvidia.com",
                                      "https://pypi.org/simple")


def test_channel_prefixed_cuda_pin_and_pip_section_in_dinov2():
    need = projectfile.read_need(FIXTURES / "facebookresearch__dinov2/conda.yaml")
    env = need.document
    spec = env.spec("pytorch-cuda")
    assert (spec.channel, spec.version) == ("pytorch", "11.7.0.*")
    assert env.channels[:2] == ("https://repo.anaconda.com/pkgs/main", "https://repo.anaconda.com/pkgs/r")
    assert any("Anaconda's repository" in n for n in need.notes)
    assert [r.text for r in env.pip.requirements] == ["submitit @ git+https://github.com/facebookincubator/submitit",
                                                      "cuml-cu11"]
    assert env.pip.options.extra_index_urls == ("https://pypi.nvidia.com",)


def test_local_projects_are_kept_as_unsupported_lines():
    need = projectfile.read_need(FIXTURES / "graphdeco-inria__gaussian-splatting/environment.yml")
    assert [u.construct for u in need.unsupported] == ["submodules/diff-gaussian-rasterization", "submodules/simple-knn"]
    assert [u.where.line for u in need.unsupported] == [17, 18]
    assert "cudatoolkit-dev" in str(next(e for e in need.evidence if e.nvcc))


def test_unpinned_torch_is_unknown_not_cpu():
    need = projectfile.read_need(FIXTURES / "openai__whisper/requirements.txt")
    assert need.stack.cuda is None and need.undetermined
    with pytest.raises(Exception) as err:
        need.require_cuda()
    assert "requirements.txt:3: torch" in str(err.value)
    assert projectfile.read_need(FIXTURES / "openai__whisper/requirements.txt", cuda="12.1").stack.cuda == "12.1"


def test_an_unpinned_conda_pytorch_is_unknown_too():
    need = projectfile.read_need(FIXTURES / "pytorch__serve/examples/speech2text_wav2vec2/environment.yml")
    with pytest.raises(Exception) as err:
        need.require_cuda()
    assert "environment.yml:9: pytorch: " in str(err.value) and "cuda-version=12.1" in err.value.hint


def test_the_cpu_build_of_torchserve_needs_no_cuda():
    need = projectfile.read_need(FIXTURES / "pytorch__serve/requirements/torch_linux.txt")
    assert need.stack.cuda is None and not need.undetermined
    need.require_cuda()
