"""`cuenv create -f/-r` from project files: real builds from PyPI and the local test channel, plans (stack,
contract, engine, request) for the real public files whose channels are out of reach here, round trips."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from cuenv.engines import get_engine

FIXTURES = Path(__file__).parent / "fixtures"
RUNTIME = "nvidia-cuda-runtime-cu12==12.1.105"
RUNTIME_SHA = "sha256:6e258468ddf5796e25f1dc591a31029fa317d97a0a94ed93468fc86301d61e40"


def installed(envs: Path, name: str, engine: str) -> set[tuple]:
    return {(p.name, p.version, p.url) for p in get_engine(engine, os.environ).installed(envs / name)}


# -- conda-only files: auto picks rattler, --engine overrides --------------------------------------------

def conda_file(channel: Path) -> str:
    return (f"name: from-yml\nchannels:\n  - {channel.as_uri()}\n  - nodefaults\ndependencies:\n"
            f"  - python=3.11\n  - {channel.as_uri()}::cuda-cudart\n  - cuda-version=12.1\n"
            "variables:\n  CUDA_MODULE_LOADING: LAZY\n  FROM_YML_TEST: 'yes'\n")


def test_conda_only_file_builds_with_rattler_when_no_conda_is_here(cli, work, envs, local_channel, no_conda):
    (work / "environment.yml").write_text(conda_file(local_channel))
    code, out, err = cli("create", "-f", "environment.yml", "--json", environ=no_conda)
    assert code == 0, err
    data = json.loads(out)
    assert data["engine"] == "rattler" and "rattler" in data["engine_reason"]
    assert {p["name"] for p in data["packages"]} >= {"cuda-cudart", "cuda-version", "python"}
    assert data["source"]["cuda_from"].startswith("from cuda-version=12.1 (environment.yml:8)")
    meta = json.loads((envs / "from-yml" / ".cuenv" / "meta.json").read_text())
    # a project file is shared input: a variable outside the CUDA stack is left out, with a note
    assert meta["cuda"] == "12.1" and meta["env_vars"] == {"CUDA_MODULE_LOADING": "LAZY"}
    assert any("FROM_YML_TEST is not set" in n and "trusted_env_vars" in n for n in data["source"]["notes"])


def test_a_trusted_variable_of_a_project_file_is_set(cli, work, envs, local_channel, no_conda):
    (work / "environment.yml").write_text(conda_file(local_channel))
    code, _, err = cli("create", "-f", "environment.yml", "--json", environ=dict(no_conda, CUENV_TRUSTED_ENV_VARS="FROM_YML_*"))
    assert code == 0, err
    meta = json.loads((envs / "from-yml" / ".cuenv" / "meta.json").read_text())
    assert meta["env_vars"] == {"CUDA_MODULE_LOADING": "LAZY", "FROM_YML_TEST": "yes"}


def test_engine_flag_overrides_the_file(cli, work, local_channel, no_conda):
    (work / "environment.yml").write_text(conda_file(local_channel))
    code, out, err = cli("create", "-f", "environment.yml", "--engine", "venv", "--dry-run", environ=no_conda)
    assert code == 2 and "has no venv install section, so engine 'venv' cannot build it" in err


def test_conda_round_trip_through_environment_yml(cli, work, envs, local_channel, no_conda):
    (work / "environment.yml").write_text(conda_file(local_channel))
    assert cli("create", "-f", "environment.yml", "-n", "first", environ=no_conda)[0] == 0
    code, out, err = cli("export", "first", "--format", "environment-yml")
    assert code == 0, err
    (work / "exported.yml").write_text(out)
    code, out, err = cli("create", "-f", "exported.yml", "-n", "second", environ=no_conda)
    assert code == 0, err
    assert installed(envs, "second", "rattler") == installed(envs, "first", "rattler")


def test_a_pip_layer_needs_python_in_the_prefix(cli, work, envs, local_channel, no_conda):
    """The local channel's python is metadata only: the layer's refusal is clean and nothing is left."""
    (work / "environment.yml").write_text(conda_file(local_channel) .replace(
        "variables:", f"  - pip:\n    - {RUNTIME}\nvariables:"))
    code, out, err = cli("create", "-f", "environment.yml", environ=no_conda)
    assert code != 0 and "pip packages need Python in it" in err and "Traceback" not in err
    assert not (envs / "from-yml").exists()


@pytest.mark.network
def test_a_pip_layer_installs_into_the_conda_prefix_after_the_conda_packages(cli, work, envs, local_channel,
                                                                             venv_python_channel, no_conda):
    import sys

    version = f"{sys.version_info.major}.{sys.version_info.minor}"
    (work / "environment.yml").write_text(
        f"name: mixed\nchannels:\n  - {venv_python_channel.as_uri()}\n  - {local_channel.as_uri()}\n"
        f"dependencies:\n  - python={version}\n  - cuda-version=12.1\n  - cuda-cudart\n  - pip:\n"
        f"    - {RUNTIME} --hash={RUNTIME_SHA}\n")
    code, out, err = cli("create", "-f", "environment.yml", "--dry-run", environ=no_conda)
    assert code == 0, err
    assert out.splitlines()[-2:] == ["then, with pip's rules against those conda packages, the pip: section:",
                                     f"  {RUNTIME}"]  # after the conda packages and their download size
    code, out, err = cli("create", "-f", "environment.yml", "--json", environ=no_conda)
    assert code == 0, err
    data = json.loads(out)
    kinds = {(p["name"], p["kind"]) for p in data["packages"]}
    assert {("cuda-cudart", "conda"), ("python", "conda"), ("nvidia-cuda-runtime-cu12", "pypi")} <= kinds
    have = get_engine("rattler", os.environ).installed(envs / "mixed")
    assert {(p.name, p.kind) for p in have} >= {("cuda-cudart", "conda"), ("nvidia-cuda-runtime-cu12", "pypi")}
    assert list((envs / "mixed").glob("lib/python3*/site-packages/nvidia/cuda_runtime/lib/libcudart.so.12"))
    lock = json.loads((envs / "mixed" / ".cuenv" / "solution.json").read_text())
    assert [p["sha256"] for p in lock["packages"] if p["name"] == "nvidia-cuda-runtime-cu12"] == [RUNTIME_SHA[7:]]

    # The mixed environment exports to an environment.yml with a pip: section that builds it again.
    code, out, err = cli("export", "mixed", "--format", "environment-yml")
    assert code == 0, err
    (work / "again.yml").write_text(out)
    code, out, err = cli("create", "-f", "again.yml", "-n", "again", environ=no_conda)
    assert code == 0, err
    assert {(p.name, p.version, p.kind) for p in get_engine("rattler", os.environ).installed(envs / "again")} == \
        {(p.name, p.version, p.kind) for p in have}



@pytest.mark.network
def test_the_pip_layer_fetches_through_cuenvs_pypi_mirror(cli, work, envs, tmp_path, local_channel, venv_python_channel,
                                                         no_conda):
    """A mirror of PyPI (configured once, as for every engine) serves the pip: section too: the resolve and the
    download go to the mirror, and the environment's lock names PyPI's own URL of the wheel."""
    from tests.engines import channel, pypimirror

    wheel = channel.ensure_wheels(wanted=(RUNTIME,))[RUNTIME]
    version = f"{sys.version_info.major}.{sys.version_info.minor}"
    (work / "environment.yml").write_text(
        f"name: mirrored\nchannels:\n  - {venv_python_channel.as_uri()}\n  - {local_channel.as_uri()}\n"
        f"dependencies:\n  - python={version}\n  - cuda-version=12.1\n  - cuda-cudart\n  - pip:\n    - {RUNTIME}\n")
    log = tmp_path / "mirror.log"
    with pypimirror.serve(pypimirror.build_mirror(tmp_path / "mirror", [wheel]), log=log) as base:
        environ = dict(no_conda, CUENV_MIRRORS=f"pypi={base}/simple", CUENV_CACHE_DIR=str(tmp_path / "cold"))
        code, out, err = cli("create", "-f", "environment.yml", "--json", environ=environ)
    assert code == 0, err
    fetched = log.read_text()
    assert "GET /simple/nvidia-cuda-runtime-cu12/" in fetched and f"/{wheel.name} HTTP" in fetched
    lock = json.loads((envs / "mirrored" / ".cuenv" / "solution.json").read_text())
    [pkg] = [p for p in lock["packages"] if p["name"] == "nvidia-cuda-runtime-cu12"]
    assert pkg["url"].startswith("https://files.pythonhosted.org/packages/") and pkg["url"].endswith("/" + wheel.name)
    assert pkg["sha256"] == RUNTIME_SHA[7:] and "127.0.0.1" not in json.dumps(lock)
    assert list((envs / "mirrored").glob("lib/python3*/site-packages/nvidia/cuda_runtime/lib/libcudart.so.12"))


@pytest.mark.network
def test_a_foreign_lock_with_pypi_wheels_over_conda_packages_installs_both(cli, work, envs, local_channel,
                                                                          venv_python_channel, no_conda):
    """pixi and conda-lock lock PyPI wheels on top of conda packages (most ML projects' locks do): cuenv links the
    conda packages, then installs exactly the locked wheels into that prefix's Python, each hash verified."""
    import yaml

    version = f"{sys.version_info.major}.{sys.version_info.minor}"
    (work / "environment.yml").write_text(
        f"name: base\nchannels:\n  - {venv_python_channel.as_uri()}\n  - {local_channel.as_uri()}\n"
        f"dependencies:\n  - python={version}\n  - cuda-version=12.1\n  - cuda-cudart\n")
    assert cli("create", "-f", "environment.yml", environ=no_conda)[0] == 0
    code, out, err = cli("export", "base", "--format", "conda-lock")
    assert code == 0, err
    lock = yaml.safe_load(out)
    wheel = ("https://files.pythonhosted.org/packages/eb/d5/c68b1d2cdfcc59e72e8a5949a37ddb22ae6cade80cd4a57a84d4c8b55472/"
             "nvidia_cuda_runtime_cu12-12.1.105-py3-none-manylinux1_x86_64.whl")
    lock["package"].append({"name": "nvidia-cuda-runtime-cu12", "version": "12.1.105", "manager": "pip",
                            "platform": "linux-64", "dependencies": {}, "url": wheel, "hash": {"sha256": RUNTIME_SHA[7:]},
                            "category": "main", "optional": False})
    (work / "conda-lock.yml").write_text(yaml.safe_dump(lock))
    code, out, err = cli("check", "conda-lock.yml", "--driver", "550.54.14", "--gpu", "A100")
    assert code == 0 and "an install would stop here" not in out, out
    code, out, err = cli("create", "--from-lock", "conda-lock.yml", "-n", "mixed-lock", environ=no_conda)
    assert code == 0, err
    have = {(p.name, p.kind, p.url) for p in get_engine("rattler", os.environ).installed(envs / "mixed-lock")}
    assert ("nvidia-cuda-runtime-cu12", "pypi", wheel) in have and any(k == "conda" and n == "cuda-cudart" for n, k, _ in have)
    assert list((envs / "mixed-lock").glob("lib/python3*/site-packages/nvidia/cuda_runtime/lib/libcudart.so.12"))
    code, out, err = cli("lock", "--check", "mixed-lock", "conda-lock.yml")
    assert code == 0, out + err

    # behind a PyPI mirror that keeps no PyPI paths, the locked wheel comes from the mirror, checked by its hash
    from tests.engines import channel, pypimirror

    served = channel.ensure_wheels(wanted=(RUNTIME,))[RUNTIME]
    log = work.parent / "mirror.log"
    with pypimirror.serve(pypimirror.build_mirror(work.parent / "mirror", [served], layout="flat"), log=log) as base:
        environ = dict(no_conda, CUENV_MIRRORS=f"pypi={base}/simple", CUENV_CACHE_DIR=str(work.parent / "cold"))
        code, out, err = cli("create", "--from-lock", "conda-lock.yml", "-n", "mirrored-lock", environ=environ)
    assert code == 0, err
    assert f"GET /files/{served.name} HTTP" in log.read_text()
    assert ("nvidia-cuda-runtime-cu12", "pypi", wheel) in {
        (p.name, p.kind, p.url) for p in get_engine("rattler", os.environ).installed(envs / "mirrored-lock")}
    code, out, err = cli("lock", "--check", "mirrored-lock", "conda-lock.yml")  # no drift against the canonical lock
    assert code == 0, out + err

    # a wheel whose bytes are not the locked ones stops the install, and no environment is left
    lock["package"][-1]["hash"]["sha256"] = "0" * 64
    (work / "conda-lock.yml").write_text(yaml.safe_dump(lock))
    code, out, err = cli("create", "--from-lock", "conda-lock.yml", "-n", "tampered", environ=no_conda)
    assert code != 0 and "Traceback" not in err and not (envs / "tampered").exists()
    assert "nvidia-cuda-runtime-cu12" in err and "0" * 64 in err, err

# -- real public files whose channels and indexes are out of reach: the plan, before any download ------

def plan(path: Path, *, driver: str = "550.54.14", cc: str = "8.0", engine: str | None = None, cuda: str | None = None,
         skip: bool = False, environ: dict | None = None):
    from cuenv.cli.machine_flags import described_machine
    from cuenv.config import resolve
    from cuenv.envs.create import plan_create
    from cuenv.recipes.requestfiles import from_file

    environ = environ if environ is not None else dict(os.environ)
    settings = resolve({}, environ)
    built = from_file(path, kind=None, name="p", cuda=cuda, skip_unsupported=skip)
    return built, plan_create(settings, environ, ref=None, name="p", engine=engine, python=None,
                              machine=described_machine(driver, [], [cc]), force=False, recipe=built.recipe,
                              stack=built.stack, request_extras=built.request_extras)


def test_dinov2_conda_file_plans_a_mixed_build(no_conda):
    built, p = plan(FIXTURES / "facebookresearch__dinov2/conda.yaml", skip=True, environ=no_conda)
    request = p.request
    assert p.engine == "rattler" and p.stack.cuda == "11.7" and p.stack.framework == "torch"
    assert request.conda_channels[:2] == ("https://repo.anaconda.com/pkgs/main", "https://repo.anaconda.com/pkgs/r")
    assert "pytorch::pytorch-cuda=11.7.0" in request.conda_specs
    assert request.index_urls == ("https://pypi.nvidia.com", "https://pypi.org/simple")
    assert request.requirements == ("cuml-cu11",)  # without the git+ line (--skip-unsupported)


def test_a_vcs_line_is_refused_by_line_and_can_be_skipped(no_conda):
    with pytest.raises(Exception) as err:
        plan(FIXTURES / "facebookresearch__dinov2/conda-extras.yaml", environ=no_conda)
    assert "conda-extras.yaml:20: submitit @ git+https://github.com/facebookincubator/submitit: is a VCS checkout" \
        in str(err.value) and "--skip-unsupported" in err.value.hint
    built, p = plan(FIXTURES / "facebookresearch__dinov2/conda-extras.yaml", skip=True, environ=no_conda)
    assert p.request.requirements == ("cuml-cu11", "mmcv-full==1.5.0", "mmsegmentation==0.27.0")
    assert any("skipped" in n and "submitit" in n for n in built.notes)


def test_rapids_file_plans_nvcc_and_refuses_an_old_driver(no_conda):
    built, p = plan(FIXTURES / "rapidsai__cudf/conda/environments/all_cuda-125_arch-x86_64.yaml", environ=no_conda)
    assert (p.engine, p.stack.cuda, p.stack.has_nvcc) == ("rattler", "12.5", True)
    assert p.request.conda_channels == ("rapidsai", "rapidsai-nightly", "dask/label/dev", "conda-forge", "nvidia")
    with pytest.raises(Exception, match="will not run on the target machine"):
        plan(FIXTURES / "rapidsai__cudf/conda/environments/all_cuda-125_arch-x86_64.yaml", driver="450.80.02",
             environ=no_conda)


def test_torchserve_requirements_plan_a_venv_with_pytorchs_index():
    built, p = plan(FIXTURES / "pytorch__serve/requirements/torch_cu118_linux.txt")
    request = p.request
    assert (p.engine, p.stack.cuda, p.stack.framework_version) == ("venv", "11.8", "2.4.0")
    assert request.index_urls == ("https://download.pytorch.org/whl/cu118", "https://pypi.org/simple")
    assert 'torch==2.4.0+cu118; sys_platform == "linux"' in request.requirements


def test_jax_find_links_and_a_gpu_too_old_for_cuda_12(no_conda):
    built, p = plan(FIXTURES / "keras-team__keras/requirements-jax-cuda.txt")
    assert p.request.find_links == ("https://storage.googleapis.com/jax-releases/jax_cuda_releases.html",)
    assert p.stack.cuda == "12.3"
    with pytest.raises(Exception, match="will not run"):
        plan(FIXTURES / "keras-team__keras/requirements-jax-cuda.txt", driver="470.82.01")


@pytest.mark.parametrize("content, message", [
    ("numpy\n--no-binary torch\ncupy-cuda12x\n", "requirements.txt:2: --no-binary torch asks pip to build from source"),
    ("--no-index\ncupy-cuda12x\n", "requirements.txt:1: --no-index leaves only --find-links pages"),
    ("--require-hashes\ncupy-cuda12x==13.0.0\n", "requirements.txt:2: cupy-cuda12x==13.0.0: --require-hashes is on"),
    ("cupy-cuda12x\nhttps://example.org/pkgs/fairscale-0.4.13.tar.gz\n",
     "requirements.txt:2: fairscale @ https://example.org/pkgs/fairscale-0.4.13.tar.gz: is a source archive"),
])
def test_pip_options_cuenv_cannot_honour_are_refused_by_line(cli, work, envs, content, message):
    (work / "requirements.txt").write_text(content)
    code, out, err = cli("create", "-r", "requirements.txt", "-n", "x", "--cuda", "12.1", "--dry-run")
    assert code == 2 and err.replace("fairscale@ ", "fairscale @ ").startswith("error: " + message), err
    assert err.count("\n") == 2 and "hint: " in err and not (envs / "x").exists()


# -- real builds from PyPI -----------------------------------------------------------------------------

@pytest.mark.network
def test_requirements_with_includes_constraints_hashes_and_two_indexes(cli, work, envs):
    (work / "base.txt").write_text(f"{RUNTIME} \\\n    --hash={RUNTIME_SHA}\n")
    (work / "pins.txt").write_text("nvidia-cuda-runtime-cu12<12.2\n")
    (work / "requirements.txt").write_text(
        "# two indexes: PyPI twice under two spellings is still two indexes\n"
        "--index-url https://pypi.org/simple\n--extra-index-url https://pypi.org/simple/\n"
        "-r base.txt\n-c pins.txt\nnumpy==1.26.4 ; sys_platform == 'win32'\n")
    code, out, err = cli("create", "-r", "requirements.txt", "-n", "rt", "--engine", "venv")
    assert code == 0, err
    assert "CUDA 12.1: from nvidia-cuda-runtime-cu12==12.1.105 (" in err and "base.txt:1" in err
    assert {p[0] for p in installed(envs, "rt", "venv")} == {"nvidia-cuda-runtime-cu12"}
    meta = json.loads((envs / "rt" / ".cuenv" / "meta.json").read_text())
    assert meta["cuda"] == "12.1"


@pytest.mark.network
def test_a_wrong_hash_stops_before_any_download(cli, work, envs):
    (work / "requirements.txt").write_text(f"{RUNTIME} --hash=sha256:{'0' * 64}\n")
    code, out, err = cli("create", "-r", "requirements.txt", "-n", "bad", "--engine", "venv")
    assert code != 0 and "Hash mismatch for nvidia-cuda-runtime-cu12 12.1.105" in err
    assert not (envs / "bad").exists()


@pytest.mark.network
def test_venv_round_trips_and_real_pip_accepts_the_export(cli, work, envs):
    (work / "requirements.txt").write_text(f"{RUNTIME}\n")
    assert cli("create", "-r", "requirements.txt", "-n", "orig")[0] == 0
    want = installed(envs, "orig", "venv")

    code, out, err = cli("export", "orig", "--format", "requirements")
    assert code == 0, err
    (work / "exported.txt").write_text(out)
    code, out, err = cli("create", "-r", "exported.txt", "-n", "from-reqs")  # CUDA read from the pins
    assert code == 0, err
    assert installed(envs, "from-reqs", "venv") == want

    code, out, err = cli("export", "orig", "--format", "environment-yml")
    (work / "exported.yml").write_text(out)
    code, out, err = cli("create", "-f", "exported.yml", "-n", "from-yml", "--json")
    assert code == 0, err
    assert json.loads(out)["engine"] == "venv"  # Python and pip: packages only: a venv builds it
    assert {(n, v) for n, v, _ in installed(envs, "from-yml", "venv")} == {(n, v) for n, v, _ in want}

    # The real pip reads the exported file in hash-checking mode.
    done = subprocess.run([sys.executable, "-m", "pip", "install", "--dry-run", "--ignore-installed", "--no-deps",
                           "--require-hashes", "--disable-pip-version-check", "-r", str(work / "exported.txt")],
                          capture_output=True, text=True, timeout=600, check=False)
    assert done.returncode == 0, done.stderr
    assert "Would install nvidia-cuda-runtime-cu12-12.1.105" in done.stdout


@pytest.mark.network
def test_an_unpinned_framework_that_resolves_to_another_cuda_is_refused(cli, work, envs):
    (work / "requirements.txt").write_text("nvidia-cuda-runtime<14\n")  # CUDA 13: the unsuffixed name, newest first
    code, out, err = cli("create", "-r", "requirements.txt", "-n", "x", "--cuda", "12.1", "--dry-run")
    assert code == 2 and "The resolver picked CUDA 13 wheels (nvidia-cuda-runtime" in err


@pytest.mark.network
def test_a_real_file_from_pypi_resolves_in_a_dry_run(cli):
    """alpaca-lora's requirements: the git+ line skipped by flag, the unpinned torch given a CUDA; whatever PyPI's
    newest wheels are, every NVIDIA wheel resolved is of that CUDA major, or the create says which one is not."""
    from cuenv.engines.venv import cuda_major_of

    path = str(FIXTURES / "tloen__alpaca-lora/requirements.txt")
    code, out, err = cli("create", "-r", path, "-n", "alpaca", "--skip-unsupported", "--cuda", "13.0", "--dry-run",
                         "--target-driver", "580.65.06", "--target-cc", "9.0", "--json")
    skipped = "requirements.txt:9: peft @ git+https://github.com/huggingface/peft.git: is a VCS checkout"
    if code == 2:
        assert "The resolver picked CUDA " in err and " wheels (" in err
        return
    assert code == 0, err
    data = json.loads(out)  # with --json the notes are in the document, not on stderr
    assert data["engine"] == "venv" and data["source"]["cuda_from"] == "from --cuda 13.0"
    assert [n for n in data["source"]["notes"] if skipped in n]
    names = {p["name"] for p in data["packages"]}
    assert {"torch", "transformers", "gradio"} <= names and "peft" not in names
    assert {cuda_major_of(p["name"], p["version"]) for p in data["packages"]} <= {None, 13}


@pytest.mark.network
def test_a_pin_with_no_wheel_says_cuenv_installs_wheels_and_where_to_find_one(cli):
    """dinov2's requirements-extras.txt pins mmcv-full 1.5.0, which PyPI serves as a source archive only
    (OpenMMLab publishes its wheels on its own pages): the refusal names it and the way out."""
    path = str(FIXTURES / "facebookresearch__dinov2/requirements-extras.txt")
    code, out, err = cli("create", "-r", path, "-n", "mm", "--cuda", "11.8", "--dry-run", "--target-driver", "550.54.14")
    assert code != 0 and "Traceback" not in err
    assert ("hint: mmcv-full publishes no wheel on the package index https://pypi.org/simple for this Python and "
            "platform, and cuenv installs only wheels") in err and "(with -f or --extra-index-url)" in err
