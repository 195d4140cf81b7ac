"""The venv engine: uv solves NVIDIA's real CUDA wheels from PyPI into a lock and installs it."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from cuenv.engines import get_engine
from cuenv.engines.base import (
    HashMismatch,
    MixedCudaMajors,
    Package,
    PackagesNotFound,
    Request,
    Solution,
    SolveError,
    Target,
    Unsatisfiable,
)
from cuenv.engines.events import Download, Downloaded, Event, Output, Step, Tick
from cuenv.engines.venv import (
    check_one_cuda_major,
    cuda_major_of,
    explain_uv_failure,
    index_args,
    parse_pylock,
    requirements_lines,
    uv_python_platform,
)
from cuenv.envs import folder
from cuenv.errors import UsageError
from tests.engines.diskuse import added_by

PYPI = ("https://pypi.org/simple",)
CU12 = ("nvidia-cuda-runtime-cu12==12.1.105", "nvidia-cuda-nvcc-cu12==12.1.105")
TARGET = Target(cuda="12.4", glibc="2.36")


def _pkg(name: str, version: str) -> Package:
    return Package(name=name, version=version, kind="pypi", url=f"https://x/{name}.whl", sha256="ab" * 32)


# -- pure helpers -------------------------------------------------------------------------------
@pytest.mark.parametrize(("platform", "glibc", "expected"), [
    ("linux-64", None, "x86_64-unknown-linux-gnu"),
    ("linux-64", "2.36", "x86_64-manylinux_2_36"),
    ("linux-64", "2.30", "x86_64-manylinux_2_28"),
    ("linux-64", "2.12", "x86_64-unknown-linux-gnu"),
    ("linux-64", "2.99", "x86_64-manylinux_2_40"),
    ("linux-aarch64", "2.28", "aarch64-manylinux_2_28"),
    ("win-64", None, "x86_64-pc-windows-msvc"),
])
def test_uv_python_platform(platform: str, glibc: str | None, expected: str) -> None:
    assert uv_python_platform(platform, glibc) == expected


def test_uv_python_platform_rejects_unknown() -> None:
    with pytest.raises(UsageError, match="linux-ppc64le"):
        uv_python_platform("linux-ppc64le", None)


def test_index_args_keep_priority_order() -> None:
    assert index_args(()) == []
    assert index_args(PYPI) == ["--default-index", PYPI[0]]
    assert index_args(("https://download.pytorch.org/whl/cu121", "https://pypi.org/simple")) == [
        "--default-index", "https://pypi.org/simple", "--index", "https://download.pytorch.org/whl/cu121",
        "--index-strategy", "unsafe-best-match",
    ]


@pytest.mark.parametrize(("name", "version", "major"), [
    ("nvidia-cuda-runtime-cu12", "12.1.105", 12), ("nvidia-cudnn-cu11", "8.9.0", 11),
    ("nvidia-cuda-runtime", "13.0.96", 13), ("nvidia-nvvm", "13.0.88", 13),
    ("nvidia-ml-py", "12.535.0", None), ("torch", "2.3.0", None), ("nvidia-cudnn-frontend", "1.5", None),
    # CUDA 13's cuFFT, cuSOLVER, cuSPARSE, cuRAND and cuFile wheels keep their libraries' own versions
    ("nvidia-cufft", "12.0.0.61", None), ("nvidia-cusolver", "12.0.4.66", None), ("nvidia-curand", "10.4.0.35", None),
    ("nvidia-cufile", "1.15.1.6", None), ("nvidia-cublas", "13.1.0.3", 13),
])
def test_cuda_major_of(name: str, version: str, major: int | None) -> None:
    assert cuda_major_of(name, version) == major


def test_mixed_cuda_majors_are_refused() -> None:
    assert check_one_cuda_major([_pkg("nvidia-cuda-runtime-cu12", "12.1.105"), _pkg("numpy", "2.0")]) == 12
    with pytest.raises(MixedCudaMajors) as info:
        check_one_cuda_major([_pkg("nvidia-cuda-runtime-cu12", "12.1.105"), _pkg("nvidia-cuda-runtime-cu11", "11.8.89")])
    assert info.value.message == (
        "One venv cannot hold NVIDIA wheels of several CUDA majors "
        "(CUDA 11: nvidia-cuda-runtime-cu11; CUDA 12: nvidia-cuda-runtime-cu12)."
    )


PYLOCK = '''lock-version = "1.0"
created-by = "uv"
requires-python = ">=3.11"

[[packages]]
name = "nvidia-cuda-runtime-cu12"
version = "12.1.105"
wheels = [{ url = "https://files.pythonhosted.org/packages/eb/d5/x/nvidia_cuda_runtime_cu12-12.1.105-py3-none-manylinux1_x86_64.whl", upload-time = 2023-04-19T15:47:22Z, size = 823596, hashes = { sha256 = "6e258468ddf5796e25f1dc591a31029fa317d97a0a94ed93468fc86301d61e40" } }]

[[packages]]
name = "some-thing"
version = "1.0"
sdist = { url = "https://files.pythonhosted.org/s/some_thing-1.0.tar.gz", hashes = { sha256 = "aa" } }
'''


def test_parse_pylock() -> None:
    rt, st = parse_pylock(PYLOCK, index_urls=PYPI)
    assert rt == Package(
        name="nvidia-cuda-runtime-cu12", version="12.1.105", kind="pypi",
        url="https://files.pythonhosted.org/packages/eb/d5/x/nvidia_cuda_runtime_cu12-12.1.105-py3-none-manylinux1_x86_64.whl",
        sha256="6e258468ddf5796e25f1dc591a31029fa317d97a0a94ed93468fc86301d61e40", index_url=PYPI[0],
        filename="nvidia_cuda_runtime_cu12-12.1.105-py3-none-manylinux1_x86_64.whl",
    )
    assert (st.name, st.url, st.sha256) == ("some-thing", "https://files.pythonhosted.org/s/some_thing-1.0.tar.gz", "aa")
    with pytest.raises(SolveError, match="not valid PEP 751"):  # packaging.pylock's own validation decides
        parse_pylock(PYLOCK.replace('name = "some-thing"', 'name = "Some_Thing"'))


def test_requirements_lines_require_a_hash() -> None:
    assert requirements_lines([_pkg("a", "1")]) == f"a @ https://x/a.whl --hash=sha256:{'ab' * 32}\n"
    with pytest.raises(HashMismatch):
        requirements_lines([_pkg("a", "1").replace(sha256=None)])


def test_uv_errors_become_typed() -> None:
    missing = "  × No solution found when resolving dependencies:\n  ╰─▶ Because nope-pkg was not found in the package registry and you require nope-pkg, we can conclude that your requirements are unsatisfiable."
    assert isinstance(explain_uv_failure(missing, where="PyPI"), PackagesNotFound)
    conflict = ("  × No solution found when resolving dependencies:\n  ╰─▶ Because a==1 depends on b==1 and c==1 depends on b==2, "
                "we can conclude that a==1 and c==1 are incompatible.")
    assert isinstance(explain_uv_failure(conflict, where="PyPI"), Unsatisfiable)
    mismatch = ("error: Failed to download `a @ https://x/a.whl`\n  Caused by: Hash mismatch for `a @ https://x/a.whl`\n\n"
                "Expected:\n  sha256:00\n\nComputed:\n  sha256:6e\n")
    err = explain_uv_failure(mismatch, where="PyPI")
    assert isinstance(err, HashMismatch) and (err.expected, err.actual) == ("sha256:00", "sha256:6e")


def test_requested_python_that_is_not_installed_names_the_ones_found(cache_dir: Path) -> None:
    engine = get_engine("venv", os.environ)
    with pytest.raises(UsageError, match=r"Python 3\.4 is not installed here \(found: .*3\.11"):
        engine.find_python("3.4", cache_dir=cache_dir)


# -- end to end with real wheels from PyPI --------------------------------------------------------
@pytest.fixture(scope="module")
def cu12_solution() -> Solution:
    engine = get_engine("venv", os.environ)
    cache = Path(os.environ.get("CUENV_TEST_CACHE", Path(__file__).resolve().parents[2] / ".test-cache"))
    return engine.solve(Request(engine="venv", python=None, index_urls=PYPI, requirements=CU12), target=TARGET, cache_dir=cache)


@pytest.mark.network
def test_solve_locks_urls_and_hashes(cu12_solution: Solution) -> None:
    assert [(p.name, p.version) for p in cu12_solution.packages] == [
        ("nvidia-cuda-nvcc-cu12", "12.1.105"), ("nvidia-cuda-runtime-cu12", "12.1.105"),
    ]
    rt = cu12_solution.find("nvidia-cuda-runtime-cu12")
    assert rt.sha256 == "6e258468ddf5796e25f1dc591a31029fa317d97a0a94ed93468fc86301d61e40"
    assert rt.url.startswith("https://files.pythonhosted.org/") and rt.url.endswith("manylinux1_x86_64.whl")
    assert cu12_solution.python == f"{sys.version_info.major}.{sys.version_info.minor}"


@pytest.mark.network
def test_install_loads_libcudart_12_1_and_runs_ptxas(cu12_solution: Solution, tmp_path: Path, cache_dir: Path) -> None:
    engine = get_engine("venv", os.environ)
    prefix = tmp_path / "envs" / "cuda-12.1"
    events: list[Event] = []
    engine.install(prefix, cu12_solution, cache_dir=cache_dir, progress=events.append)
    # steps, and uv's own lines, downloads and quiet moments in between
    assert [e.name for e in events if isinstance(e, Step)] == ["venv", "install", "done"]
    assert all(isinstance(e, (Step, Output, Tick, Download, Downloaded)) for e in events)
    layout = engine.layout(prefix)
    site = next(prefix.glob("lib/python3*/site-packages"))
    assert layout.bin_dirs == (prefix / "bin", site / "nvidia/cuda_nvcc/bin")
    assert site / "nvidia/cuda_runtime/lib" in layout.lib_dirs
    # A child process that sees only the layout's lib dirs loads *this* libcudart (not the system's 13.x).
    probe = ("import ctypes; lib = ctypes.CDLL('libcudart.so.12'); v = ctypes.c_int(); "
             "rc = lib.cudaRuntimeGetVersion(ctypes.byref(v)); "
             "path = [l.split()[-1] for l in open('/proc/self/maps') if 'libcudart' in l][0]; print(rc, v.value, path)")
    env = dict(os.environ, LD_LIBRARY_PATH=os.pathsep.join(map(str, layout.lib_dirs)))
    out = subprocess.run([str(prefix / "bin" / "python"), "-c", probe], env=env, capture_output=True, text=True, check=True)
    rc, version, path = out.stdout.split()
    assert (rc, version) == ("0", "12010")
    assert Path(path).resolve().is_relative_to(prefix.resolve())
    ptxas = subprocess.run([str(layout.bin_dirs[1] / "ptxas"), "--version"], capture_output=True, text=True, check=True)
    assert "release 12.1, V12.1.105" in ptxas.stdout
    # CUDA_HOME works for tools that expect a toolkit tree.
    home = layout.cuda_home
    assert home == prefix / ".cuenv" / "cuda"
    assert "CUDART_VERSION 12010" in (home / "include" / "cuda_runtime_api.h").read_text().replace("  ", " ")
    assert (home / "lib64" / "libcudart.so").resolve() == (site / "nvidia/cuda_runtime/lib/libcudart.so.12").resolve()
    assert (home / "bin" / "ptxas").exists() and (home / "nvvm").is_dir()
    folder.write_solution(prefix, cu12_solution.to_json())  # as create records it
    assert engine.installed(prefix) == cu12_solution.packages


@pytest.mark.network
def test_second_venv_from_warm_cache_downloads_nothing_and_is_small(cu12_solution: Solution, tmp_path: Path,
                                                                    cache_dir: Path) -> None:
    """What made the second environment fast: it comes from the cache alone (uv offline) and its files are
    links into the cache. Its time against bare uv is benchmarks/bench_create.py's."""
    get_engine("venv", os.environ).install(tmp_path / "one", cu12_solution, cache_dir=cache_dir)
    get_engine("venv", dict(os.environ, UV_OFFLINE="1")).install(tmp_path / "two", cu12_solution, cache_dir=cache_dir)
    first, added = added_by(tmp_path / "two", first=tmp_path / "one")
    assert added < 0.05 * first, f"the second venv adds {added / 1e6:.2f} MB on top of {first / 1e6:.1f} MB"


@pytest.mark.network
def test_a_second_venv_gets_the_cuda_home_links_the_first_made(cu12_solution: Solution, tmp_path: Path,
                                                                cache_dir: Path) -> None:
    """The links of the first environment are kept and planted while uv installs the next one's wheels;
    a kept set that is wrong (a damaged cache, other files in a wheel) is put right after the install."""
    from cuenv.engines.cudahome import links
    from cuenv.engines.venv import nvidia_components, site_packages

    cache = tmp_path / "cache"  # a memo of its own, on the session's warm uv cache
    cache.mkdir()
    (cache / "uv").symlink_to(cache_dir / "uv")
    engine = get_engine("venv", os.environ)

    def home_links(prefix: Path) -> dict[str, str]:
        home = folder.cuda_home(prefix)
        return {str(p.relative_to(home)): os.readlink(p) for p in home.rglob("*") if p.is_symlink()}

    engine.install(tmp_path / "one", cu12_solution, cache_dir=cache)
    [memo] = (cache / "cuda-home").glob("*.json")
    site = site_packages(tmp_path / "one")
    assert site is not None
    made = links(folder.cuda_home(tmp_path / "one"), nvidia_components(site))
    assert json.loads(memo.read_text()) == made == home_links(tmp_path / "one") and "include/cuda_runtime_api.h" in made
    memo.write_text(json.dumps({**{k: v for k, v in made.items() if k != "bin/ptxas"}, "include/stale.h": "../x"}))
    engine.install(tmp_path / "two", cu12_solution, cache_dir=cache)
    assert home_links(tmp_path / "two") == made and json.loads(memo.read_text()) == made
    kept = memo.stat().st_mtime_ns
    engine.install(tmp_path / "three", cu12_solution, cache_dir=cache)
    assert home_links(tmp_path / "three") == made and memo.stat().st_mtime_ns == kept
    assert "CUDART_VERSION 12010" in (folder.cuda_home(tmp_path / "three") / "include" / "cuda_runtime_api.h").read_text().replace("  ", " ")


@pytest.mark.network
def test_edited_hash_is_refused_and_nothing_is_installed(cu12_solution: Solution, tmp_path: Path, cache_dir: Path) -> None:
    bad = cu12_solution.replace(packages=tuple(
        p.replace(sha256="0" * 64) if p.name == "nvidia-cuda-runtime-cu12" else p for p in cu12_solution.packages
    ))
    engine = get_engine("venv", os.environ)
    with pytest.raises(HashMismatch) as info:
        engine.install(tmp_path / "bad", bad, cache_dir=cache_dir)
    assert info.value.expected == "sha256:" + "0" * 64
    assert info.value.actual == "sha256:6e258468ddf5796e25f1dc591a31029fa317d97a0a94ed93468fc86301d61e40"
    assert engine.installed(tmp_path / "bad") == ()


@pytest.mark.network
def test_solve_refuses_two_cuda_majors_and_missing_packages(cache_dir: Path) -> None:
    engine = get_engine("venv", os.environ)
    both = Request(engine="venv", python=None, index_urls=PYPI,
                   requirements=("nvidia-cuda-runtime-cu12==12.1.105", "nvidia-cuda-runtime-cu11==11.8.89"))
    with pytest.raises(MixedCudaMajors):
        engine.solve(both, target=TARGET, cache_dir=cache_dir)
    nope = Request(engine="venv", python=None, index_urls=PYPI, requirements=("nvidia-cuda-runtime-cu12==99.0",))
    with pytest.raises((PackagesNotFound, Unsatisfiable), match="nvidia-cuda-runtime-cu12"):
        engine.solve(nope, target=TARGET, cache_dir=cache_dir)


def test_unreachable_index_is_one_clear_line():
    """uv's text when an index host cannot be resolved (seen with download.pytorch.org offline)."""
    from cuenv.engines import DownloadFailed
    from cuenv.engines.venv import explain_uv_failure

    stderr = (
        "error: Request failed after 3 retries in 8.0s\n"
        "  cause: Failed to fetch: https://download.pytorch.org/whl/cu128/torch/\n"
        "  cause: error sending request for url (https://download.pytorch.org/whl/cu128/torch/)\n"
        "  cause: client error (Connect)\n  cause: dns error\n  cause: error resolving DNS\n"
        "  cause: failed to lookup address information: Name or service not known\n"
    )
    err = explain_uv_failure(stderr, where="the index")
    assert isinstance(err, DownloadFailed)
    assert err.message == ("Could not download https://download.pytorch.org/whl/cu128/torch/: "
                           "failed to lookup address information: Name or service not known.")


@pytest.mark.parametrize(("reqs", "pins"), [
    (("nvidia-cuda-runtime-cu12==12.1.105", "Nvidia_Cuda_Nvcc_cu12 == 12.1.105"),
     {"nvidia-cuda-runtime-cu12": "12.1.105", "nvidia-cuda-nvcc-cu12": "12.1.105"}),
    (("torch==2.8.0+cu128",), {"torch": "2.8.0+cu128"}),
    (("torch>=2.8",), None),
    (("torch==2.8.*",), None),
    (("jax[cuda12]==0.4.30",), None),  # extras pull more than the pins
    (("torch==2.8.0; sys_platform == 'linux'",), None),
    ((), None),
])
def test_exact_pins(reqs, pins) -> None:
    from cuenv.engines.venv import exact_pins

    assert exact_pins(reqs) == pins


@pytest.mark.network
def test_exact_pins_solve_from_the_cache_without_the_index(cu12_solution: Solution, monkeypatch: pytest.MonkeyPatch) -> None:
    """Once uv's cache knows the pinned wheels, a solve needs no index: with every connection sent to a
    dead proxy, the same solution still comes back (and an unpinned request would fail)."""
    cache = Path(os.environ.get("CUENV_TEST_CACHE", Path(__file__).resolve().parents[2] / ".test-cache"))
    dead = {"HTTPS_PROXY": "http://127.0.0.1:9", "HTTP_PROXY": "http://127.0.0.1:9", "ALL_PROXY": "http://127.0.0.1:9"}
    engine = get_engine("venv", {**os.environ, **dead})
    for k, v in dead.items():
        monkeypatch.setenv(k, v)
    again = engine.solve(Request(engine="venv", python=None, index_urls=PYPI, requirements=CU12), target=TARGET, cache_dir=cache)
    assert again == cu12_solution
