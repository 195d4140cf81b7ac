"""`cuenv check FILE` and `cuenv suggest --for FILE` on real project files, against described machines."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

FIXTURES = Path(__file__).parent / "fixtures"
A100_NEW = ("--driver", "550.54.14", "--gpu", "A100")
OLD = ("--driver", "450.80.02", "--cc", "7.0")


@pytest.mark.parametrize("name, machine, code, closest", [
    ("pytorch__serve/requirements/torch_cu121_linux.txt", A100_NEW, 0, "torch-cu121@2.4.1"),
    ("pytorch__serve/requirements/torch_cu121_linux.txt", OLD, 1, "torch-cu121@2.4.1"),
    ("facebookresearch__dinov2/conda.yaml", A100_NEW, 0, "torch-cu118@2.0.1"),
    ("keras-team__keras/requirements-tensorflow-cuda.txt", A100_NEW, 0, "tensorflow-cu125@2.18.1"),
    ("rapidsai__cudf/conda/environments/all_cuda-118_arch-x86_64.yaml", A100_NEW, 0, "cuda-11.8"),
    ("rapidsai__cudf/conda/environments/all_cuda-125_arch-x86_64.yaml", OLD, 1, "cuda-12.4"),
])
def test_check_a_project_file(cli, name, machine, code, closest):
    path = str(FIXTURES / name)
    got, out, err = cli("check", path, *machine)
    assert got == code, err
    lines = out.splitlines()
    assert lines[0].startswith(f"{path}: ") and lines[1].startswith("  machine: ")
    assert lines[2].startswith("  needs: CUDA ") and lines[3].startswith("  how: from ")
    assert f"  closest recipe: {closest} (`cuenv create {closest}`)" in out
    got, out, err = cli("check", path, *machine, "--json")
    data = json.loads(out)
    assert data["closest_recipe"] == closest and data["how"].startswith("from ")


def test_check_says_what_cannot_be_installed(cli):
    code, out, err = cli("check", str(FIXTURES / "graphdeco-inria__gaussian-splatting/environment.yml"), *A100_NEW)
    assert code == 0
    assert "needs: CUDA 11.6, torch 1.12.1, nvcc; built from conda packages and a pip layer" in out
    assert out.count("  cannot install: ") == 2 and "Anaconda's repository" in out


def test_an_unpinned_framework_needs_a_cuda_flag(cli):
    path = str(FIXTURES / "openai__whisper/requirements.txt")
    code, out, err = cli("check", path, *A100_NEW)
    assert code == 2 and err.startswith(f"error: {path}:3: torch: ") and "or pass --cuda (e.g. --cuda 12.1)" in err
    code, out, err = cli("check", path, *A100_NEW, "--cuda", "12.1")
    assert code == 0 and "how: from --cuda 12.1" in out


def test_check_names_the_lines_create_would_refuse_and_a_torch_it_cannot_see(cli):
    """alpaca-lora lists accelerate (which installs PyPI's torch, a CUDA build) and a git+ line: `check` asks
    for the CUDA instead of calling it CPU-only, and names the VCS line as `create` would refuse it."""
    path = str(FIXTURES / "tloen__alpaca-lora/requirements.txt")
    code, out, err = cli("check", path, *A100_NEW)
    assert code == 2 and err.startswith(f"error: {path}:1: accelerate: a package that installs torch") and not out
    code, out, err = cli("check", path, *A100_NEW, "--cuda", "12.1")
    assert code == 0 and "cpu-only" not in out
    assert f"  cannot install: {path}:9: peft @ git+https://github.com/huggingface/peft.git: is a VCS checkout" in out
    code, _, err = cli("create", "-r", path, "--cuda", "12.1", "--dry-run")
    assert code == 2 and f"error: {path}:9: peft @ git+" in err and "--skip-unsupported" in err


def test_cuda_flag_is_for_files_only(cli):
    code, out, err = cli("check", "cuda-12.1", "--cuda", "12.1")
    assert code == 2 and "--cuda goes with a project file" in err


def test_suggest_for_a_file_takes_its_framework(cli):
    path = str(FIXTURES / "pytorch__serve/requirements/torch_cu118_linux.txt")
    code, out, err = cli("suggest", "--for", path, *OLD)
    lines = out.splitlines()
    assert lines[0] == f"{path}: its own stack runs here"
    assert any(line.startswith("best torch build: ") for line in lines)
    code, out, err = cli("suggest", "--for", str(FIXTURES / "rapidsai__cudf/conda/environments/all_cuda-125_arch-x86_64.yaml"),
                         *OLD, "--json")
    data = json.loads(out)
    assert data["framework"] == "cuda" and data["file_runs"] is False and data["closest_recipe"] == "cuda-12.4"


def test_suggest_for_a_lockfile_reads_it_as_check_does(cli, tmp_path):
    """A lockfile (told by its content, whatever its name) gives suggest its framework and its own stack."""
    locks = Path(__file__).parent.parent / "lockfiles" / "foreign" / "fixtures"
    renamed = tmp_path / "lock-from-a-colleague"
    renamed.write_bytes((locks / "gausstwin-v6.pixi.lock").read_bytes())
    code, out, err = cli("suggest", "--for", str(renamed), *OLD)
    lines = out.splitlines()
    assert code == 0 and lines[0].startswith(f"{renamed}: its own stack does not run here: torch 2.6.0+cu124 needs a driver")
    assert "  Closest recipe: torch-cu124 (`cuenv create torch-cu124`)" in lines
    assert any(line.startswith("best torch build: ") for line in lines)
    code, out, err = cli("suggest", "--for", str(locks / "yi.conda-lock.yml"), *A100_NEW, "--json")
    data = json.loads(out)
    assert (data["framework"], data["file_runs"], data["closest_recipe"]) == ("torch", True, "torch-cu118@2.0.1")
    assert data["file"]["cuda"] == "11.8"
    code, out, err = cli("suggest", "--for", str(renamed), "--cuda", "12.4")
    assert code == 2 and "--cuda does not apply to a lockfile" in err
    code, out, err = cli("create", "-f", str(renamed), "--dry-run")
    assert code == 2 and f"`cuenv create --from-lock {renamed}`" in err


def test_suggest_takes_a_framework_or_a_file(cli):
    code, out, err = cli("suggest", "torch", "--for", str(FIXTURES / "openai__whisper/requirements.txt"))
    assert code == 2 and "Give a framework or --for and a file, not both." in err
    code, out, err = cli("suggest", "--cuda", "12.1")
    assert code == 2 and "--cuda goes with --for and a file." in err


_EXPORT = ("name: x\nchannels: [pytorch, nvidia, conda-forge]\ndependencies:\n"
           "  - addict=2.4.0=pyhd8ed1ab_2\n  - pyyaml=6.0.1=py39h2bbff1b_0\n  - pytorch-cuda=11.8=h24eeafa_5\n{prefix}")


@pytest.mark.parametrize("prefix, refused", [
    ("prefix: C:\\Users\\me\\miniconda3\\envs\\x\n", True),  # `conda env export` on Windows: its builds
    ("prefix: /home/me/miniconda3/envs/x\n", False),
    ("", False),
])
def test_a_windows_export_with_its_builds_is_refused_naming_the_re_export(cli, tmp_path, prefix, refused):
    path = tmp_path / "environment.yml"
    path.write_text(_EXPORT.format(prefix=prefix))
    code, out, err = cli("check", str(path), *A100_NEW)
    if refused:
        assert code == 2 and f"{path}:7: prefix: says `conda env export` made this file on Windows" in err
        assert "pyyaml=6.0.1=py39h2bbff1b_0" in err and "`conda env export --no-builds`" in err
    else:
        assert code == 0, err
    # without the builds (`--no-builds`), the same Windows prefix is read as any environment.yml
    path.write_text(_EXPORT.format(prefix=prefix).replace("=pyhd8ed1ab_2", "").replace("=py39h2bbff1b_0", "")
                    .replace("=h24eeafa_5", ""))
    assert cli("check", str(path), *A100_NEW)[0] == 0


@pytest.mark.parametrize("line", ["  - vc=14.3\n", "  - ucrt=10.0.22621.0=h57928b3_0\n", "  - pywin32=305\n"])
def test_a_package_published_for_windows_only_says_the_file_is_a_windows_export(cli, tmp_path, line):
    """held-out-17 (and DeepSTORM3D's): a `--no-builds` export has no builds and often no prefix, but the MSVC runtime,
    the UCRT and pywin32 exist for Windows only; the hint, taking those lines out, makes the file readable."""
    path = tmp_path / "environment.yml"
    text = "name: x\nchannels: [pytorch, nvidia, conda-forge]\ndependencies:\n  - python=3.10\n  - pytorch-cuda=11.8\n"
    path.write_text(text + line)
    code, out, err = cli("check", str(path), *A100_NEW)
    assert code == 2 and f"{path}:6: {line.strip()[2:]}: " in err and "published for Windows only" in err
    assert "`conda env export --from-history`" in err
    path.write_text(text)  # the Windows-only line taken out, as the hint says
    assert cli("check", str(path), *A100_NEW)[0] == 0
