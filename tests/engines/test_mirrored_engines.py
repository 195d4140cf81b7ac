"""Every engine through mirrors on 127.0.0.1 (issue 19 §1): a PyPI mirror of NVIDIA's real wheels
and the local conda test channel, each served by ``python -m http.server``.

What an engine reports (and so every lock) names the canonical URLs; what it downloads comes from
the mirror, as the server's request log shows; every hash is the real one.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from cuenv.engines import HashMismatch, Package, Request, Solution, Target
from cuenv.engines import mirrors as m
from cuenv.engines.conda import explicit_file, solve_argv
from cuenv.engines.rattler import RattlerEngine
from cuenv.engines.venv import VenvEngine
from cuenv.envs import folder
from tests.engines import channel, pypimirror

RUNTIME = "nvidia-cuda-runtime-cu12==12.1.105"
RUNTIME_SHA = channel.WHEELS[RUNTIME]
RUNTIME_FILE = "nvidia_cuda_runtime_cu12-12.1.105-py3-none-manylinux1_x86_64.whl"
# PyPI's own URL of that file (its path is the file's blake2b-256; checked against PyPI's index).
RUNTIME_URL = ("https://files.pythonhosted.org/packages/eb/d5/c68b1d2cdfcc59e72e8a5949a37ddb22ae6cade80cd4a57a84d4c8b55472/"
               + RUNTIME_FILE)
TARGET = Target(cuda="12.4", glibc="2.36")
LOCKED_RUNTIME = Package(name="nvidia-cuda-runtime-cu12", version="12.1.105", kind="pypi", url=RUNTIME_URL,
                         sha256=RUNTIME_SHA, index_url=m.PYPI_SIMPLE, filename=RUNTIME_FILE)


@pytest.fixture(scope="module")
def runtime_wheel() -> Path:
    return channel.ensure_wheels(wanted=(RUNTIME,))[RUNTIME]


def pypi_mirror(base: str) -> m.Mirrors:
    return m.merge([("test", [(m.PYPI_SIMPLE, base + "/simple")])])


def env() -> dict[str, str]:
    return dict(os.environ)


def test_venv_solves_and_installs_through_a_pypi_mirror(tmp_path: Path, runtime_wheel: Path) -> None:
    root = pypimirror.build_mirror(tmp_path / "mirror", [runtime_wheel])
    log = tmp_path / "access.log"
    with pypimirror.serve(root, log=log) as base:
        engine = VenvEngine(env(), mirrors=pypi_mirror(base))
        solution = engine.solve(Request(engine="venv", python=None, requirements=(RUNTIME,)), target=TARGET,
                                cache_dir=tmp_path / "cache")
        pkg = solution.find("nvidia-cuda-runtime-cu12")
        # the request named no index (uv's default, PyPI): the package names none either; a lock says PyPI
        assert (pkg.url, pkg.index_url, pkg.sha256, pkg.filename) == (RUNTIME_URL, None, RUNTIME_SHA, RUNTIME_FILE)
        engine.install(tmp_path / "env", solution, cache_dir=tmp_path / "cache")
    assert f"GET /packages/eb/d5/c68b1d2cdfcc59e72e8a5949a37ddb22ae6cade80cd4a57a84d4c8b55472/{RUNTIME_FILE}" in log.read_text()
    folder.write_solution(tmp_path / "env", solution.to_json())  # as create records it
    assert engine.installed(tmp_path / "env") == solution.packages  # no drift against the canonical lock


def test_a_canonical_lock_installs_behind_a_mirror_that_keeps_no_pypi_paths(tmp_path: Path, runtime_wheel: Path) -> None:
    root = pypimirror.build_mirror(tmp_path / "mirror", [runtime_wheel], layout="flat")
    locked = Solution(engine="venv", platform="linux-64", python=None, packages=(
        LOCKED_RUNTIME,))
    log = tmp_path / "access.log"
    with pypimirror.serve(root, log=log) as base:
        engine = VenvEngine(env(), mirrors=pypi_mirror(base))
        engine.install(tmp_path / "env", locked, cache_dir=tmp_path / "cache")
        # and a solve behind this mirror locks the project's page on PyPI: the file's PyPI path is unknown
        solved = engine.solve(Request(engine="venv", python=None, requirements=(RUNTIME,)), target=TARGET,
                              cache_dir=tmp_path / "cache2")
    assert f"GET /files/{RUNTIME_FILE}" in log.read_text()
    assert solved.find("nvidia-cuda-runtime-cu12").url == "https://pypi.org/simple/nvidia-cuda-runtime-cu12/"
    folder.write_solution(tmp_path / "env", locked.to_json())  # as create records it
    assert engine.installed(tmp_path / "env") == locked.packages


def test_a_wrong_file_on_the_mirror_is_refused(tmp_path: Path, runtime_wheel: Path) -> None:
    other = channel.ensure_wheels(wanted=("nvidia-cuda-runtime-cu11==11.8.89",))["nvidia-cuda-runtime-cu11==11.8.89"]
    fake = tmp_path / "wheels" / RUNTIME_FILE
    fake.parent.mkdir()
    fake.write_bytes(other.read_bytes())  # a mirror serving other bytes under the locked name
    root = pypimirror.build_mirror(tmp_path / "mirror", [fake], layout="flat")
    locked = Solution(engine="venv", platform="linux-64", python=None, packages=(
        LOCKED_RUNTIME,))
    with pypimirror.serve(root) as base, pytest.raises(HashMismatch):
        VenvEngine(env(), mirrors=pypi_mirror(base)).install(tmp_path / "env", locked, cache_dir=tmp_path / "cache")


@pytest.fixture
def served_channel(tmp_path: Path):
    root = tmp_path / "srv"
    channel.copy_channel(channel.cached_channel(), root / "cuenv-test")
    log = tmp_path / "channel.log"
    with pypimirror.serve(root, log=log) as base:
        yield base, log


def test_rattler_solves_and_installs_through_a_channel_mirror(tmp_path: Path, served_channel) -> None:
    base, log = served_channel
    canonical = "https://conda.anaconda.org/cuenv-test"
    mirrors = m.merge([("test", [(canonical, base + "/cuenv-test")])])
    engine = RattlerEngine(env(), mirrors=mirrors)
    solution = engine.solve(Request(engine="rattler", python=None, conda_channels=("cuenv-test",),
                                    conda_specs=("cuda-cudart 12.1.*",)), target=TARGET, cache_dir=tmp_path / "cache")
    assert solution.packages and all(p.url.startswith(canonical + "/") and p.channel == canonical for p in solution.packages)
    engine.install(tmp_path / "prefix", solution, cache_dir=tmp_path / "cache2")
    assert "GET /cuenv-test/linux-64/cuda-cudart-12.1.105" in log.read_text()
    installed = {p.name: p for p in engine.installed(tmp_path / "prefix")}
    assert {p.name: p.url for p in solution.packages} == {n: p.url for n, p in installed.items()}


def test_conda_tools_get_mirrored_channels_and_urls(tmp_path: Path) -> None:
    mirrors = m.merge([("test", [(m.CHANNEL_ALIAS, "https://mirror.example/anaconda/cloud")])])
    request = Request(engine="conda", python=None, conda_channels=("conda-forge", "https://repo.example/ch"),
                      conda_specs=("cuda-cudart",))
    argv = solve_argv("conda", "conda", request, tmp_path / "p", mirrors=mirrors)
    assert argv[argv.index("-c"):argv.index("-c") + 4] == ["-c", "https://mirror.example/anaconda/cloud/conda-forge",
                                                          "-c", "https://repo.example/ch"]
    pkg = Package(name="x", version="1", kind="conda", url="https://conda.anaconda.org/conda-forge/noarch/x-1-0.conda",
                  sha256="0" * 64, build="0", channel="https://conda.anaconda.org/conda-forge", subdir="noarch")
    text = explicit_file(Solution(engine="conda", platform="linux-64", python=None, packages=(pkg,)), mirrors=mirrors)
    assert "https://mirror.example/anaconda/cloud/conda-forge/noarch/x-1-0.conda#" + "0" * 64 in text


def test_install_lists_fetch_through_the_mirrors() -> None:
    """The list uv installs from, and the one an image build or `cuenv export --format requirements` writes."""
    from cuenv.engines.venv import requirements_lines

    torch = Package(name="torch", version="2.4.1+cu121", kind="pypi", sha256="1" * 64,
                    url="https://download.pytorch.org/whl/cu121/torch-2.4.1%2Bcu121-cp311-cp311-linux_x86_64.whl",
                    index_url="https://download.pytorch.org/whl/cu121")
    page = Package(name="x", version="1", kind="pypi", sha256="2" * 64, url="https://pypi.org/simple/x/",
                   index_url=m.PYPI_SIMPLE)
    assert requirements_lines([LOCKED_RUNTIME, torch]) == (
        f"nvidia-cuda-runtime-cu12 @ {RUNTIME_URL} --hash=sha256:{RUNTIME_SHA}\n"
        f"torch @ {torch.url} --hash=sha256:{'1' * 64}\n")
    mirrors = m.merge([("test", [(m.PYPI_SIMPLE, "http://mirror.example/simple"),
                                 ("https://download.pytorch.org/whl", "http://mirror.example/pytorch-wheels")])])
    assert requirements_lines([LOCKED_RUNTIME, torch, page], mirrors=mirrors) == (
        "--index-url http://mirror.example/simple\n"
        f"nvidia-cuda-runtime-cu12==12.1.105 --hash=sha256:{RUNTIME_SHA}\n"
        "torch @ http://mirror.example/pytorch-wheels/cu121/torch-2.4.1%2Bcu121-cp311-cp311-linux_x86_64.whl "
        f"--hash=sha256:{'1' * 64}\n"
        f"x==1 --hash=sha256:{'2' * 64}\n")
    # a lock naming only a project page installs by name from that index even without a mirror
    assert requirements_lines([page]) == f"--index-url https://pypi.org/simple\nx==1 --hash=sha256:{'2' * 64}\n"
