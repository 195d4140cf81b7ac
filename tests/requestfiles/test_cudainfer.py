"""Which CUDA a pin says, how strongly, and one answer (or a refusal naming the lines) for a whole file."""

from __future__ import annotations

import pytest

from cuenv.recipes import cudainfer, envyml, pipreqs
from cuenv.recipes.pipreqs import RequestFileError


def pip(text: str, python: str = "3.11"):
    doc = pipreqs.parse_text(text)
    return [(e.strength, e.cuda, e.major, e.cudnn) for e in cudainfer.evidence_of(doc, python=python)]


def conda(spec: str):
    return [(e.strength, e.cuda, e.major, e.nvcc) for e in cudainfer.conda_evidence(envyml.parse_spec(spec, pipreqs.Where("f", 1)))]


@pytest.mark.parametrize("text, expected", [
    ("torch==2.1.0+cu121", [("exact", "12.1", 12, None)]),
    ("torchvision==0.16.0+cu118", [("exact", "11.8", 11, None)]),
    ("--extra-index-url https://download.pytorch.org/whl/cu124\ntorch==2.5.1", [("exact", "12.4", 12, None)]),
    ("--index-url https://download.pytorch.org/whl/cpu\ntorch", [("cpu", None, None, None)]),
    # a find-links page lists files; an index's root lists projects, where pip finds no wheel (held-out-17, hypertrack)
    ("-f https://download.pytorch.org/whl/cu118/torch_stable.html\ntorch==2.0.1", [("exact", "11.8", 11, None)]),
    ("-f https://download.pytorch.org/whl/cu118\ntorch==2.0.1", [("exact", "11.7", 11, None)]),
    # PyG's extensions from its per-build page: pip takes the page's +pt20cu118 wheel (held-out-17, hypertrack)
    ("-f https://data.pyg.org/whl/torch-2.0.0+cu118.html\ntorch-scatter==2.1.1", [("exact", "11.8", 11, None)]),
    ("-f https://data.pyg.org/whl/torch-1.12.0%2Bcpu.html\npyg-lib", [("cpu", None, None, None)]),
    ("torch-scatter==2.1.1", []),
    ("torch==2.3.0+cpu", [("cpu", None, None, None)]),
    ("torch", [("unknown", None, None, None)]),
    ("jax[cuda12]==0.4.30", [("exact", "12.3", 12, None)]),
    ("jax[cuda12_pip]==0.4.20", [("exact", "12.3", 12, None)]),
    ("jaxlib==0.4.13+cuda11.cudnn86", [("major", None, 11, "8.6")]),
    ("jax-cuda12-plugin==0.4.30", [("exact", "12.3", 12, None)]),
    # a wheel whose local tag names a major only (held-out-16, TorchEasyRec's faiss): CUDA 12, its minor unsaid
    ("faiss @ https://example.org/faiss-1.14.3%2Bcu12-cp311-cp311-manylinux_2_28_x86_64.whl", [("major", None, 12, None)]),
    ("faiss==1.14.3+cu13", [("major", None, 13, None)]),
    ("jax[cpu]", [("cpu", None, None, None)]),
    ("tensorflow[and-cuda]==2.15.0", [("exact", "12.2", 12, "8.9")]),
    ("tensorflow-cpu==2.15.0", [("cpu", None, None, None)]),
    ("paddlepaddle-gpu==2.6.1.post118", [("exact", "11.8", 11, "8.6")]),
    ("-i https://www.paddlepaddle.org.cn/packages/stable/cu126/\npaddlepaddle-gpu==3.0.0", [("exact", "12.6", 12, "9.5")]),
    ("nvidia-cuda-runtime-cu12==12.1.105", [("exact", "12.1", 12, None)]),
    ("nvidia-cuda-nvcc==13.0.88", [("exact", "13.0", 13, None)]),
    ("cuda-toolkit[cudart,cublas]==13.0.2", [("exact", "13.0", 13, None)]),  # torch 2.11+'s form (issue 27)
    ("torch==2.11.0", [("exact", "13.0", 13, None)]),  # its PyPI wheel requires cuda-toolkit[...]==13.0.2
    ("nvidia-cudnn-cu12==8.9.2.26", [("major", None, 12, "8.9")]),
    ("nvidia-cublas-cu11", [("major", None, 11, None)]),
    ("cupy-cuda12x", [("major", None, 12, None)]),
    ("cupy-cuda117", [("exact", "11.7", 11, None)]),
    ("cuml-cu11", [("major", None, 11, None)]),
    ("torch-scatter==2.1.2+pt21cu121", [("exact", "12.1", 12, None)]),
    ("torch==2.1.0+cu121; sys_platform == 'win32'", []),
    ("torch==2.1.0+cu121; python_version < '3.9'", []),
    ("numpy==1.26.4", []),
    # a package that installs torch, in a file that names no torch: the resolver's torch decides the CUDA
    ("accelerate\nnumpy", [("unknown", None, None, None)]),
    ("peft==0.10.0; sys_platform == 'win32'", []),
    ("torch==2.3.0+cpu\naccelerate", [("cpu", None, None, None)]),
    ("accelerate\ntorch==2.1.0+cu121", [("exact", "12.1", 12, None)]),
    # TensorFlow's tested build configurations go back to 1.13 (tensorflow/docs source.md): the GPU builds before
    # 2.12, which load CUDA from the system, read by them (held-out-13); older ones stay unknown, never CPU-only
    ("tensorflow==2.6.0", [("exact", "11.2", 11, "8.1")]),
    ("tensorflow==2.11.0", [("exact", "11.2", 11, "8.1")]),
    ("tensorflow==2.4.1", [("exact", "11.0", 11, "8.0")]),
    ("tensorflow==1.14.0", [("cpu", None, None, None)]),  # before 2.1 the GPU build was tensorflow-gpu
    ("tensorflow==2.0.1", [("cpu", None, None, None)]),
    ("tensorflow==1.15.0", [("exact", "10.0", 10, "7.4")]),  # 1.15.0 and 1.15.1 carried the GPU build
    ("tensorflow-gpu==1.14.0", [("exact", "10.0", 10, "7.4")]),
    ("tensorflow-gpu==2.6.0", [("exact", "11.2", 11, "8.1")]),
    ("tensorflow-gpu==1.12.0", [("unknown", None, None, None)]),  # the table gives only CUDA 9, a major
    # a wheel URL names its release (held-out-14: a tensorflow_gpu-1.3.0 URL was "the resolver's pick")
    ("tensorflow-gpu @ https://storage.googleapis.com/tensorflow/linux/gpu/tensorflow_gpu-2.6.0-cp38-cp38-manylinux2010_x86_64.whl",
     [("exact", "11.2", 11, "8.1")]),
    # torchvision/torchaudio pin one torch each (their wheels' METADATA): its PyPI wheel's CUDA (held-out-13)
    ("torch\ntorchvision==0.20.0", [("unknown", None, None, None), ("exact", "12.4", 12, None)]),
    ("torchaudio==2.0.2", [("exact", "11.7", 11, None)]),
    ("torchvision==0.99.0", [("unknown", None, None, None)]),  # a release the table does not list: the resolver's
    ("paddlepaddle-gpu==9.9.9", [("unknown", None, None, None)]),
    ("paddlepaddle-gpu", [("unknown", None, None, None)]),
    ("--extra-index-url https://www.paddlepaddle.org.cn/packages/stable/cu126/\npaddlepaddle-gpu", [("exact", "12.6", 12, None)]),
    ("onnxruntime-gpu==1.20.2", [("unknown", None, None, None)]),
    ("faiss-gpu", [("unknown", None, None, None)]),
    # held-out-6: an unpinned unsuffixed NVIDIA wheel (its version is the CUDA release) and TensorFlow's nightlies
    ("nvidia-cuda-nvcc", [("unknown", None, None, None)]),
    ("nvidia-cuda-runtime>=13", [("unknown", None, None, None)]),
    ("--pre\ntf-nightly[and-cuda]", [("unknown", None, None, None)]),
    ("tf-nightly-cpu", [("cpu", None, None, None)]),
    # held-out-7: an extra index whose builds stopped (cu118 at torch 2.7) beside PyPI: pip takes PyPI's newer
    # torch, uv the index's; an index that keeps up (cu130, cpu) or a --index-url decides; an exact pin decides
    ("--extra-index-url https://download.pytorch.org/whl/cu118\ntorch~=2.2", [("unknown", None, None, None)]),
    ("--extra-index-url https://download.pytorch.org/whl/cu118\ntorch", [("unknown", None, None, None)]),
    ("--extra-index-url https://download.pytorch.org/whl/cu130\ntorch", [("exact", "13.0", 13, None)]),
    ("--extra-index-url https://download.pytorch.org/whl/cpu\ntorch", [("cpu", None, None, None)]),
    ("--index-url https://download.pytorch.org/whl/cu118\ntorch", [("exact", "11.8", 11, None)]),
    ("--extra-index-url https://download.pytorch.org/whl/cu118\ntorch==2.0.1", [("exact", "11.8", 11, None)]),
    # an extra index with no build of the pinned torch (1.13 has cu116/cu117): pip takes PyPI's (held-out-13)
    ("--extra-index-url https://download.pytorch.org/whl/cu113\ntorch==1.13.0", [("exact", "11.7", 11, None)]),
    ("--extra-index-url https://download.pytorch.org/whl/cu113\ntorch==1.12.1", [("exact", "11.3", 11, None)]),
    ("--extra-index-url https://download.pytorch.org/whl/cu118\ntorch>=2.0,<2.6", [("exact", "11.8", 11, None)]),
    ("-f https://storage.googleapis.com/jax-releases/jax_cuda_releases.html\njax[cuda]==0.4.5", [("unknown", None, None, None)]),
])
def test_pip_pins(text, expected):
    assert pip(text) == expected


@pytest.mark.parametrize("text", ["--index-url https://download.pytorch.org/whl/cu121\ntorch>=2.7.0",
                                  "--index-url https://download.pytorch.org/whl/cu121\ntorch==2.8.0"])
def test_an_index_that_replaces_pypi_and_has_no_build_the_pin_allows_is_refused(text):
    """held-out-13 (mistral_ner): the cu121 index alone, whose builds stop at torch 2.5, and a torch it cannot
    serve: pip finds no matching distribution, so cuenv names why instead of reading CUDA 12.1."""
    with pytest.raises(RequestFileError, match=r"cu121 builds stop at torch 2\.5: no torch it allows installs"):
        cudainfer.evidence_of(pipreqs.parse_text(text), python="3.11")
    assert pip("--index-url https://download.pytorch.org/whl/cu121\ntorch>=2.0") == [("exact", "12.1", 12, None)]


@pytest.mark.parametrize("text", ["onnxruntime-gpu==1.20.2", "tensorflow-gpu==1.12.0", "numpy\nfaiss-gpu"])
def test_a_gpu_build_of_unknown_cuda_alone_is_unknown_with_the_flag_that_answers(text):
    inference = cudainfer.infer(pipreqs.parse_text(text), file="r.txt", python="3.11")
    assert inference.cuda is None and inference.undetermined and "--cuda" in inference.how
    assert cudainfer.infer(pipreqs.parse_text(text), file="r.txt", python="3.11", cuda_flag="12.1").cuda == "12.1"


def test_a_gpu_build_of_unknown_cuda_beside_a_decided_one_leaves_it_unconfirmed():
    # torch decides CUDA 12.6; onnxruntime-gpu may need another (its newest builds are CUDA 13's)
    inference = cudainfer.infer(pipreqs.parse_text("torch==2.7.0+cu126\nonnxruntime-gpu>=1.20.0"), file="r.txt",
                                python="3.11")
    assert inference.cuda == "12.6"
    assert len(inference.unconfirmed) == 1
    assert "onnxruntime-gpu>=1.20.0" in inference.unconfirmed[0] and "--cuda" in inference.unconfirmed[0]


@pytest.mark.parametrize("spec, expected", [
    ("cudatoolkit=11.3", [("exact", "11.3", 11, False)]),
    ("conda-forge::cudatoolkit==11.3.*", [("exact", "11.3", 11, False)]),
    ("pytorch::pytorch-cuda=11.8", [("exact", "11.8", 11, False)]),
    ("cuda-version>=12.0,<13.0a0", [("major", None, 12, False)]),
    ("cuda-version>=12.4", [("min", "12.4", 12, False)]),
    ("nvcc_linux-64=11.8", [("exact", "11.8", 11, True)]),
    ("cuda-nvcc", [("none", None, None, True)]),
    ("cudatoolkit-dev=11.6", [("exact", "11.6", 11, True)]),
    ("pytorch=1.11.0=py3.9_cuda11.3_cudnn8.2.0_0", [("exact", "11.3", 11, False)]),
    ("pytorch=2.5.1=cuda126_mkl_py312_h1234567_300", [("exact", "12.6", 12, False)]),  # conda-forge, as locks read it
    ("pytorch 2.1.* *cuda*", [("unknown", None, None, False)]),
    ("pytorch", [("unknown", None, None, False)]),
    ("pytorch=2.1.0=py3.11_cpu_0", [("cpu", None, None, False)]),
    # the channels' metapackages: they pick the build of the pytorch beside them
    ("cpuonly", [("cpu", None, None, False)]),
    ("conda-forge::pytorch-cpu", [("cpu", None, None, False)]),
    ("pytorch-mutex=1.0=cpu", [("cpu", None, None, False)]),
    ("pytorch-mutex=1.0=cuda", []),
    # any package's build string that names its CUDA (held-out-6: planetary-computer's gpu-tensorflow)
    ("tensorflow>=2.14.0=*cuda118*", [("exact", "11.8", 11, False)]),
    ("cudnn=7.6.0=cuda10.1_0", [("none", None, None, False), ("exact", "10.1", 10, False)]),  # cuDNN 7.6, for CUDA 10.1
    ("jaxlib=*=cuda*", [("unknown", None, None, False)]),
    ("tensorflow", [("unknown", None, None, False)]),  # conda-forge's has CUDA and CPU builds: the solver's pick
    ("tensorflow=2.15=cpu*", []),
    # an exact build string of a package whose CUDA builds name it (held-out-15, PhaseNet's exports): a CPU build
    ("tensorflow=2.11.0=mkl_py310hb40ee82_0", [("cpu", None, None, False)]),
    ("tensorflow=2.11.0=eigen_py310h6363ca7_0", [("cpu", None, None, False)]),
    ("jaxlib=0.4.23=cpu_py311h1234567_0", [("cpu", None, None, False)]),
    ("tensorflow=2.4.1=gpu_py38h8a7d6ce_0", [("unknown", None, None, False)]),  # Anaconda's GPU build: CUDA unknown
    ("tensorflow=2.11.0=mkl_py310*", [("unknown", None, None, False)]),  # a pattern, not one build
    ("cupy=13.1.0=py311h9b4d7b5_0", [("unknown", None, None, False)]),  # cupy is built for CUDA only
    ("pytorch-gpu=1.10", [("unknown", None, None, False)]),
    # the toolkit's compiler meta-package, versioned as its release (held-out-14, libparallelproj's `cuda-compiler =13`)
    ("cuda-compiler=12.4.1", [("exact", "12.4", 12, True)]),
    ("cuda-compiler =13", [("major", None, 13, True)]),
])
def test_conda_pins(spec, expected):
    assert conda(spec) == expected


@pytest.mark.parametrize("deps, cuda, undetermined", [
    # cpuonly requires pytorch-mutex * cpu: the solver's pytorch, torchvision and torchaudio are CPU builds
    (["pytorch", "torchvision", "cpuonly"], None, 0),
    (["pytorch=2.1", "conda-forge::pytorch-cpu"], None, 0),
    # a CPU selector says nothing of other GPU packages: cupy's CUDA is still the solver's
    (["pytorch", "cpuonly", "cupy"], None, 1),
    # pytorch-gpu is a CUDA build whose CUDA the solver picks: unknown, never "CPU-only"
    (["pytorch-gpu=1.10", "python=3.9"], None, 1),
    (["pytorch-gpu=1.10", "cudatoolkit=11.1"], "11.1", 0),
])
def test_a_conda_metapackage_decides_the_pytorch_build(deps, cuda, undetermined):
    text = "dependencies:\n" + "".join(f"  - {d}\n" for d in deps)
    found = cudainfer.infer(envyml.parse_text(text), file="environment.yml", python="3.11")
    assert (found.cuda, len(found.undetermined)) == (cuda, undetermined)


def infer_text(text: str, cuda: str | None = None):
    return cudainfer.infer(pipreqs.parse_text(text), file="requirements.txt", python="3.11", cuda_flag=cuda)


def test_the_newest_of_one_major_wins_and_says_so():
    inference = infer_text("torch==2.4.0+cu121\nnvidia-cuda-runtime-cu12==12.4.127\n")
    assert inference.cuda == "12.4" and "12.1 and 12.4" in inference.notes[0]
    assert "requirements.txt:2" in inference.how


def test_two_majors_are_refused_naming_both_lines():
    with pytest.raises(RequestFileError) as err:
        infer_text("torch==2.1.0+cu118\nnumpy\njax[cuda12]==0.4.30\n")
    assert str(err.value).startswith("requirements.txt:3: jax[cuda12]==0.4.30: needs CUDA 12.3")
    assert "requirements.txt:1 (torch==2.1.0+cu118)" in str(err.value)


def test_the_flag_wins_within_a_major_but_not_across():
    assert infer_text("torch==2.1.0+cu121\n", cuda="12.4").cuda == "12.4"
    assert infer_text("cuml-cu12\n", cuda="12.1").how == "from --cuda 12.1"
    with pytest.raises(RequestFileError, match="--cuda 12.1 was given"):
        infer_text("torch==2.1.0+cu118\n", cuda="12.1")
    with pytest.raises(Exception, match="not a CUDA version"):
        infer_text("numpy\n", cuda="twelve")


def test_a_major_alone_asks_for_the_minor():
    with pytest.raises(RequestFileError) as err:
        infer_text("cuml-cu11\n")
    assert "--cuda 11." in err.value.hint


def test_a_floor_is_checked_at_its_lowest():
    env = envyml.parse_text("channels: [c]\ndependencies: ['cudatoolkit>=11.8']\n")
    inference = cudainfer.infer(env, file="environment.yml", python="3.11")
    assert inference.cuda == "11.8" and "oldest allowed" in inference.how


@pytest.mark.parametrize(("pin", "cuda", "says"), [
    # rattler's own matching over the releases the driver table knows: `>10.0` admits 10.0.130 (held-out-9)
    ("cudatoolkit<10.2,>10.0", "10.0", "CUDA 10.0 or 10.1 (the releases <10.2,>10.0 admits); cuenv checks the oldest"),
    ("cudatoolkit>=11.2,<11.3", "11.2", "CUDA 11.2"),
    ("cuda-version<12.5,>=12.1", "12.1", "CUDA 12.1 to 12.4 (the releases <12.5,>=12.1 admits); cuenv checks the oldest"),
    ("cuda-version>=12.1,<12.5", "12.1", "CUDA 12.1 or newer; cuenv checks the oldest"),  # the same set, either order
    ("pytorch-cuda>12", "12.0", "CUDA 12.0 or newer (the releases >12 admits)"),  # a strict bound: 12.0.1 is > 12
])
def test_a_conda_range_is_read_by_rattler(pin, cuda, says):
    env = envyml.parse_text(f"channels: [c]\ndependencies: ['{pin}']\n")
    inference = cudainfer.infer(env, file="environment.yml", python="3.11")
    assert inference.cuda == cuda and says in inference.how, inference.how


@pytest.mark.parametrize("spec", ["cudf==22.10.*", "rapids=24.02", "cuml", "rapidsai::cugraph"])
def test_a_rapids_conda_package_without_a_cuda_pin_is_a_gpu_build_of_unknown_cuda(spec):
    """held-out-10 (virtual_dataframe): `cudf==22.10.*` alone read CPU-only; RAPIDS builds conda packages for
    CUDA only, so the CUDA is the solver's, and cuenv asks for it."""
    env = envyml.parse_text(f"channels: [rapidsai, conda-forge]\ndependencies: ['{spec}']\n")
    found = cudainfer.infer(env, file="environment.yml", python="3.11")
    assert found.cuda is None and [e.pin for e in found.undetermined] == [spec]
    assert "whose CUDA build the solver picks" in found.undetermined[0].says
    env = envyml.parse_text(f"channels: [rapidsai, conda-forge]\ndependencies: ['{spec}', 'cuda-version=12.0']\n")
    assert cudainfer.infer(env, file="environment.yml", python="3.11").cuda == "12.0"  # a pin beside it decides


def test_a_conda_range_across_majors_or_unread_says_nothing():
    assert cudainfer.conda_range("<12")[-1] == "11.8" and cudainfer.conda_range("not a [spec") == ()
    for spec in ("<12", "!=11.8"):  # neither one major nor every release from one on: no floor to check at
        env = envyml.parse_text(f"channels: [c]\ndependencies: ['cudatoolkit{spec}']\n")
        assert cudainfer.infer(env, file="environment.yml", python="3.11").cuda is None


def test_an_nvidia_wheel_floor_above_the_framework_build_raises_the_need():
    """held-out-9 (maxtext): jax[cuda12]'s plugin is built with 12.3, but nvidia-cuda-runtime-cu12>=12.9.79
    installs 12.9 or newer, and the environment needs that."""
    inference = infer_text("jax[cuda12]\nnvidia-cuda-runtime-cu12>=12.9.79\n")
    assert inference.cuda == "12.9" and "installs CUDA 12.9 or newer, above jax[cuda12]'s 12.3" in inference.notes[-1]
    assert infer_text("nvidia-cuda-runtime-cu12>=12.4\n").cuda == "12.4"  # a floor alone: its oldest
    assert infer_text("jax[cuda12]\nnvidia-cuda-runtime-cu12>=12.1\n").cuda == "12.3"  # below the build: no change
    with pytest.raises(RequestFileError):  # a floor of another major than the name's says only the name's major
        infer_text("nvidia-cuda-runtime-cu12>=11.8\n")


def test_a_framework_pin_gives_the_whole_build():
    stack = infer_text("torch==2.5.1+cu121\n").stack("requirements.txt")
    assert (stack.label, stack.cuda, stack.framework, stack.framework_version) == ("requirements.txt", "12.1", "torch", "2.5.1")
    assert stack.sass  # the wheel's arch list, from the knowledge base


@pytest.mark.parametrize("text, strength", [("12.1", "exact"), ("==11.3.*", "exact"), ("12.1.105", "exact"),
                                            ("12", "major"), ("12.*", "major"), (">=12.0,<13.0a0", "major"),
                                            (">=11.8", "min"), ("*", "none"), (None, "none")])
def test_cuda_of_version(text, strength):
    assert cudainfer.cuda_of_version(text)[0] == strength


def test_nvidias_three_digit_wheel_suffixes_name_a_release():
    """held-out-11 (pharml): pypi.nvidia.com's nvidia-tensorflow era named wheels `nvidia-cublas-cu116`; the
    suffix read as "CUDA 116" and the file was refused asking for "--cuda 116.0"."""
    from cuenv.engines.venv import cuda_major_of
    from cuenv.knowledge.packages import suffix_major

    assert [suffix_major(d) for d in ("11", "12", "116", "115", "129")] == [11, 12, 11, 11, 12]
    assert cuda_major_of("nvidia-cublas-cu116", "11.8.1.74") == 11
    assert infer_text("nvidia-cublas-cu116==11.8.1.74\nnvidia-cuda-runtime-cu116==11.6.55\n").cuda == "11.6"
    with pytest.raises(RequestFileError) as err:
        infer_text("nvidia-cublas-cu116==11.8.1.74\n")
    assert "CUDA 11 (major only)" in str(err.value) and "--cuda 11.8" in err.value.hint


def test_onnxruntime_gpu_says_its_cuda_major_from_the_table():
    """PyPI's onnxruntime-gpu 1.21+ records the CUDA it was built with; it loads the environment's libraries,
    so it says the major (and conflicts with another), never the minor: torch's pin decides that."""
    assert infer_text("torch==2.5.1\n--extra-index-url https://download.pytorch.org/whl/cu121\n"
                      "onnxruntime-gpu==1.22.0\n").cuda == "12.1"
    with pytest.raises(RequestFileError) as err:
        infer_text("onnxruntime-gpu==1.22.0\n")
    assert "CUDA 12 (PyPI's onnxruntime-gpu 1.22.0 is built with 12.2" in str(err.value)
    with pytest.raises(RequestFileError, match="one environment holds one CUDA major"):
        infer_text("torch==2.0.1+cu118\nonnxruntime-gpu==1.22.0\n")
    nightly = infer_text("torch==2.5.1+cu121\nonnxruntime-gpu==1.25.0.dev20260210001\n")
    assert nightly.cuda == "12.1" and nightly.unconfirmed  # not in the table: a GPU build cuenv cannot place


@pytest.mark.parametrize(("line", "cuda"), [
    ("torch~=2.1.0", "12.1"),         # held-out-12 (VAR): every 2.1.x PyPI wheel is CUDA 12.1
    ("torch>=2.5,<2.7", "12.4"),      # 2.5 and 2.6: both 12.4
    ("torch==2.1.*", "12.1"),
    ("torch>=2.4", None),             # admits releases newer than the tables know: the resolver's pick
    ("torch>=2.6,<2.8", None),        # 2.6 is 12.4, 2.7 is 12.6: two CUDAs
])
def test_a_torch_range_whose_releases_share_one_pypi_cuda_is_that_cuda(line, cuda):
    assert infer_text(line + "\n").cuda == cuda


def test_an_export_that_held_two_cuda_majors_is_read_for_the_newest_and_names_both():
    """held-out-13 (skyrim): `conda env export` of an environment holding cudatoolkit 11.8 (libcudart.so.11.0)
    beside cuda-cudart 12.1 (libcudart.so.12): it existed, so the two majors are named, not refused; the
    driver must serve the newest. The same pins written as a request (no builds) are still refused."""
    export = ("channels: [pytorch, nvidia, defaults]\ndependencies:\n  - cuda-cudart=12.1.105=0\n"
              "  - cudatoolkit=11.8.0=h6a678d5_0\n  - python=3.10.14=h955ad1f_1\n")
    found = cudainfer.infer(envyml.parse_text(export), file="environment.yml", python="3.11")
    assert found.cuda == "12.1" and any("The export holds CUDA 11 (cudatoolkit=11.8.0" in n for n in found.notes)
    with pytest.raises(RequestFileError, match="one environment holds one CUDA major"):
        cudainfer.infer(envyml.parse_text("channels: [nvidia]\ndependencies: [cuda-cudart=12.1.105, cudatoolkit=11.8.0]\n"),
                        file="environment.yml", python="3.11")


def test_a_conda_pytorch_build_keeps_its_own_cuda_beside_a_newer_cuda_version():
    """A pytorch py3.11_cuda12.1 build beside cuda-version 12.8: asked for (a request file), the solver aligns the
    CUDA packages to 12.8, so the environment needs 12.8's driver, and the torch is still the cu121 build (its arch
    list), never +cu128. Exported (held-out-13, TinyXRA: cuda-opencl 12.8 pulled cuda-version), the installed
    libraries say the release, 12.1: a cuda-version of their major installs none and only bounds the driver."""
    request = "channels: [pytorch, nvidia]\ndependencies: [cuda-version=12.8, pytorch=2.2.2=py3.11_cuda12.1_cudnn8.9.2_0]\n"
    found = cudainfer.infer(envyml.parse_text(request), file="environment.yml", python="3.11")
    stack = found.stack("environment.yml")
    assert (found.cuda, stack.cuda, stack.variant, stack.framework_version) == ("12.8", "12.8", "cu121", "2.2.2")
    assert stack.sass  # the cu121 build's arch list, which the tables know
    export = ("channels: [pytorch, nvidia]\ndependencies:\n  - cuda-cudart=12.1.105=0\n  - cuda-version=12.8=3\n"
              "  - pytorch=2.2.2=py3.11_cuda12.1_cudnn8.9.2_0\n")
    found = cudainfer.infer(envyml.parse_text(export), file="environment.yml", python="3.11")
    assert (found.cuda, found.stack("environment.yml").variant) == ("12.1", "cu121")


def test_an_export_whose_other_major_is_only_cuda_version_is_still_refused():
    """cuda-version installs no library: an export with cuda-cudart 11.8 beside cuda-version 12.8 (JonasKlotz's
    conda-lock render, first round) names the conflict as before; only libraries of both majors show coexistence."""
    export = ("channels: [pytorch, nvidia]\ndependencies:\n  - cuda-cudart=11.8.89=0\n  - cuda-version=12.8=3\n"
              "  - pytorch=2.5.1=py3.12_cuda11.8_cudnn9.1.0_0\n")
    with pytest.raises(RequestFileError, match="one environment holds one CUDA major"):
        cudainfer.infer(envyml.parse_text(export), file="environment.yml", python="3.11")


@pytest.mark.parametrize(("requirements", "cuda"), [
    ("--extra-index-url https://download.pytorch.org/whl/cu118\n-c constraints.txt\ntorch>=2.4\n", "11.8"),
    ("-c constraints.txt\ntorchvision\n", "11.8"),  # torchvision installs a torch, which the constraint pins
])
def test_a_constraint_that_pins_one_version_decides_the_build(tmp_path, requirements, cuda):
    """held-out-14 (vjepa2): `torch>=2.4` alone is the resolver's pick; `-c` of torch==2.7.1+cu118 decides it."""
    (tmp_path / "constraints.txt").write_text("torch==2.7.1+cu118\nnumpy==1.26.4\n")
    (tmp_path / "requirements.txt").write_text(requirements)
    found = cudainfer.infer(pipreqs.parse_file(tmp_path / "requirements.txt"), file="requirements.txt", python="3.11")
    assert found.cuda == cuda and "constraints.txt" in found.how
    (tmp_path / "requirements.txt").write_text("-c constraints.txt\nnumpy\n")  # constrains, installs no torch
    assert cudainfer.infer(pipreqs.parse_file(tmp_path / "requirements.txt"), file="requirements.txt",
                           python="3.11").cuda is None


@pytest.mark.parametrize(("conda", "cuda"), [
    ("cuda-version=12.5", "12.5"),    # held-out-14 (SampleDisco): RAPIDS still loads the 12.5 libraries
    ("pytorch-cuda=12.1", "12.4"),    # conda's torch selector: the pip torch replaces conda's torch
    ("cudatoolkit=11.8", "12.4"),     # another major: Python imports the pip torch
])
def test_a_pip_torch_over_conda_keeps_the_conda_cuda_its_other_packages_load(conda, cuda):
    text = (f"channels: [nvidia, conda-forge]\ndependencies:\n  - {conda}\n  - pip\n  - pip:\n"
            "    - --extra-index-url https://download.pytorch.org/whl/cu124\n    - torch==2.5.1+cu124\n")
    assert cudainfer.infer(envyml.parse_text(text), file="environment.yml", python="3.11").cuda == cuda


@pytest.mark.parametrize("text", [
    "--extra-index-url https://download.pytorch.org/whl/cu121\ntorch\njax[cuda12]<=0.4.26\n",
    "torch>=2.0\njax[cuda12]==0.4.30\n",
    "torch\ncupy-cuda12x==13.3.0\n",
])
def test_a_cuda_pin_of_another_framework_does_not_decide_an_unpinned_torch(text):
    """held-out-15 (multicamera_keypoints): `jax[cuda12]` beside an unpinned torch read CUDA 12.3 from jax; pip's
    newest torch brings its own CUDA (another major's, today), so the answer is the resolver's pick."""
    found = infer_text(text)
    assert found.cuda is None and found.undetermined and found.undetermined[0].pin.startswith("torch")


@pytest.mark.parametrize("text, cuda", [
    ("torch\nnvidia-cuda-runtime-cu12==12.4.127\njax[cuda12]==0.4.30\n", "12.4"),  # torch pins its NVIDIA wheels
    ("torch==2.5.1+cu121\njax[cuda12]==0.4.30\n", "12.3"),
])
def test_a_pin_that_chooses_the_torch_build_still_decides(text, cuda):
    assert infer_text(text).cuda == cuda
