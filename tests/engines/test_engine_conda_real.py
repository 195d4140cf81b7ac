"""The conda engine against a real conda (issue 28): conda's own source with its classic solver,
installed from PyPI by the vendored install.sh (realconda.py), and the local channel of NVIDIA's real
libcudart and ptxas (channel.py). Nothing here is recorded.

One environment (`cuenv create cuda-12.1 --engine conda`, as a user runs it) is made once for the
module and shared: the classic solve and install take a few seconds.
"""

from __future__ import annotations

import contextlib
import functools
import http.server
import io
import json
import os
import signal
import subprocess
import sys
import threading
import time
from dataclasses import dataclass
from pathlib import Path

import pytest

from cuenv.engines import condatool, get_engine
from cuenv.engines.base import HashMismatch, PackagesNotFound, Request, Target, Unsatisfiable
from cuenv.engines.events import Event, Step, Tick
from tests.engines.channel import REPO, copy_channel
from tests.engines.pypimirror import serve

TARGET = Target(cuda="12.4", glibc="2.36")


@dataclass(frozen=True)
class Made:
    environ: dict[str, str]
    root: Path
    mirrors: tuple[str, ...]
    created: subprocess.CompletedProcess[str]

    def cuenv(self, *argv: str, check: bool = True) -> subprocess.CompletedProcess[str]:
        """cuenv in-process (a second Python start per call would double these tests' time)."""
        from cuenv.cli.main import main

        out, err = io.StringIO(), io.StringIO()
        here = Path.cwd()
        os.chdir(self.root)
        try:
            with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
                code = main(list(argv), environ=dict(self.environ))
        finally:
            os.chdir(here)
        assert not check or code == 0, err.getvalue()
        return subprocess.CompletedProcess(list(argv), code, out.getvalue(), err.getvalue())

    def prefix(self, name: str) -> Path:
        return Path(self.environ["CUENV_HOME"]) / "envs" / name

    def conda(self, *argv: str, environ: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
        return subprocess.run(["conda", *argv], env=environ or self.environ, cwd=self.root, capture_output=True,
                              text=True, timeout=600)


@pytest.fixture(scope="module")
def made(conda_overlay: dict[str, str], conda_channel: Path, tmp_path_factory: pytest.TempPathFactory) -> Made:
    """`cuenv -v create cuda-12.1 --engine conda -n cc1` with conda-forge and nvidia mirrored to the local channel."""
    root = tmp_path_factory.mktemp("conda-real")
    environ = {k: v for k, v in os.environ.items() if not k.startswith(("CONDA_", "MAMBA_", "CUENV_"))}
    environ.update(conda_overlay, CUENV_HOME=str(root / "home"), CUENV_CONFIG=str(root / "config.yaml"),
                   CUENV_CACHE_DIR=os.environ.get("CUENV_TEST_CACHE", str(REPO / ".test-cache")),
                   CUENV_MIRRORS_FROM_TOOLS="0")
    environ["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{environ['PATH']}"  # the hook runs `cuenv`
    mirrors = ("--mirror", f"conda-forge={conda_channel.as_uri()}", "--mirror", f"nvidia={conda_channel.as_uri()}")
    created = subprocess.run([sys.executable, "-m", "cuenv", "-v", "create", "cuda-12.1", "--engine", "conda", "-n", "cc1",
                              *mirrors], env=environ, cwd=root, capture_output=True, text=True, timeout=600)
    return Made(environ, root, mirrors, created)


def _conda_list(made: Made, prefix: Path) -> list[tuple[str, str, str]]:
    done = made.conda("list", "--json", "-p", str(prefix))
    assert done.returncode == 0, done.stdout + done.stderr
    return sorted((p["name"], p["version"], p["build_string"]) for p in json.loads(done.stdout))


def _records(prefix: Path) -> list[str]:
    """What conda linked into ``prefix``, by its own records (conda-meta/NAME-VERSION-BUILD.json)."""
    return sorted(p.name for p in (prefix / "conda-meta").glob("*.json"))


def test_a_recipe_installs_with_the_real_conda(made: Made) -> None:
    assert made.created.returncode == 0, made.created.stderr
    assert "Created 'cc1' (cuda-12.1, conda, 6 packages" in made.created.stdout + made.created.stderr
    prefix = made.prefix("cc1")
    assert (prefix / "lib" / "libcudart.so.12").resolve().is_file() and os.access(prefix / "bin" / "ptxas", os.X_OK)
    # conda's own reading of the prefix is what cuenv says it installed
    installed = get_engine("conda", made.environ).installed(prefix)
    assert _conda_list(made, prefix) == sorted((p.name, p.version, p.build or "") for p in installed)
    assert {p.name for p in installed} == {"cuda-cudart", "cuda-nvcc", "cuda-nvcc-tools", "cuda-version", "pip", "python"}
    # the lock names the upstream channel, never the mirror the bytes came from
    assert all(p.url.startswith("https://conda.anaconda.org/conda-forge/") for p in installed)


def test_a_classic_only_conda_never_sees_a_libmamba_flag(made: Made) -> None:
    err = made.created.stderr
    assert "solver classic (conda's configured solver; this conda has no libmamba)" in err
    solve = next(line for line in err.splitlines() if "create --dry-run" in line)
    assert "--solver" not in solve and "--override-channels" in solve
    info = json.loads(made.cuenv("info", "--json").stdout)["engines"]["conda"]
    assert info["solver"] == "classic" and info["solvers"] == ["classic"]
    assert info["version"] == made.conda("--version").stdout.split()[-1]
    assert f"conda {info['version']} ({info['path']}, solver classic)" in made.cuenv("info").stdout


def test_use_in_bash_gives_its_libcudart_and_ptxas(made: Made) -> None:
    prefix = made.prefix("cc1")
    probe = ("import ctypes; ctypes.CDLL('libcudart.so.12'); "
             "print(next(line.split()[-1] for line in open('/proc/self/maps') if 'libcudart' in line))")
    script = f"""
        eval "$(cuenv shell-init bash)"
        cuenv use cc1 2>/dev/null || exit 9
        "{sys.executable}" -c "{probe}"
        command -v ptxas
        ptxas --version | grep release
    """
    done = subprocess.run(["bash", "--norc", "--noprofile", "-c", script], env=made.environ, capture_output=True,
                          text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    lib, ptxas, release = done.stdout.splitlines()
    assert Path(lib).resolve() == (prefix / "targets" / "x86_64-linux" / "lib" / "libcudart.so.12").resolve()
    assert ptxas == str(prefix / "bin" / "ptxas")
    assert "release 12.1, V12.1.105" in release


def test_lock_sync_and_remove(made: Made) -> None:
    made.cuenv("lock", "cc1", "-o", "cc1.lock")
    synced = made.cuenv("sync", "cc1.lock", "-n", "cc2", "--engine", "conda", *made.mirrors, check=False)
    assert synced.returncode == 0, synced.stderr
    assert _records(made.prefix("cc2")) == _records(made.prefix("cc1"))
    assert made.cuenv("lock", "--check", "cc2", "cc1.lock").returncode == 0
    made.cuenv("remove", "cc2", "--yes")
    assert not made.prefix("cc2").exists()
    assert "cc2" not in made.cuenv("list").stdout


def test_exports_read_back_by_conda(made: Made) -> None:
    prefix = made.prefix("cc1")
    expected = _records(prefix)
    # explicit: conda create --file installs exactly the locked archives (from the mirror the export names)
    (made.root / "explicit.txt").write_text(made.cuenv("export", "cc1", "-F", "explicit", *made.mirrors).stdout)
    done = made.conda("create", "--json", "--yes", "-p", str(made.root / "from-explicit"), "--file", "explicit.txt")
    assert done.returncode == 0, done.stdout
    assert _records(made.root / "from-explicit") == expected
    # environment.yml names the upstream channel; conda reaches it through its own mirror settings
    (made.root / "environment.yml").write_text(made.cuenv("export", "cc1", "-F", "environment-yml").stdout)
    alias = made.root / "alias"
    alias.mkdir()
    (alias / "conda-forge").symlink_to(Path(made.mirrors[1].split("=", 1)[1].removeprefix("file://")))
    mirrored = dict(made.environ, CONDA_CHANNEL_ALIAS=alias.as_uri(),
                    CONDA_MIGRATED_CHANNEL_ALIASES="https://conda.anaconda.org")
    done = made.conda("env", "create", "--json", "-f", "environment.yml", "-p", str(made.root / "from-yml"), environ=mirrored)
    assert done.returncode == 0, done.stdout
    assert _records(made.root / "from-yml") == expected


def test_pack_and_unpack(made: Made) -> None:
    """conda's prefix (with its conda-meta/history and created_at) packs and unpacks under another name."""
    made.cuenv("pack", "cc1", "-o", "cc1.cuenv.tar")
    made.cuenv("unpack", "cc1.cuenv.tar", "-n", "moved")
    moved = made.prefix("moved")
    assert _records(moved) == _records(made.prefix("cc1"))
    assert (moved / "lib" / "libcudart.so.12").resolve().is_relative_to(moved) and os.access(moved / "bin" / "ptxas", os.X_OK)
    assert made.conda("list", "--json", "-p", str(moved)).returncode == 0  # still a conda environment to conda
    made.cuenv("remove", "moved", "--yes")


def test_a_framework_shaped_recipe(cli, conda_environ: dict[str, str], conda_channel: Path, envs: Path) -> None:
    """torch-cu121 from the pytorch channel's shape: pytorch needs the driver's __cuda, so a GPU-less solve
    fails with conda's reason and the fix, and one for a target driver installs."""
    mirrors = ("--mirror", f"https://conda.anaconda.org/pytorch={conda_channel.as_uri()}",
               "--mirror", f"nvidia={conda_channel.as_uri()}")
    code, out, err = cli("create", "torch-cu121", "--engine", "conda", "-n", "t", *mirrors, environ=conda_environ)
    assert code == 1 and "pytorch==2.5.1 -> __cuda[version='>=12.1']" in err, err
    assert "hint: No NVIDIA driver was given; pass --target-driver for the machine the environment is for." in err
    assert not (envs / "t").exists()
    code, out, err = cli("create", "torch-cu121", "--engine", "conda", "-n", "t", "--target-driver", "550.54.14", *mirrors,
                         environ=conda_environ)
    assert code == 0, err
    code, out, err = cli("info", "t", "--json", environ=conda_environ)
    info = json.loads(out)
    assert info["resolved"] == {"framework": "pytorch 2.5.1", "libcudart": "12.1.105"}, info  # read from what conda installed
    built = {p.name: p.build for p in get_engine("conda", conda_environ).installed(envs / "t")}
    assert built["pytorch"] == "py3.11_cuda12.1_cudnn9.1.0_0" and "cuda-cudart" in built
    assert (envs / "t" / "lib" / "python3.11" / "site-packages" / "torch" / "version.py").is_file()


def _request(channel: str, *specs: str) -> Request:
    return Request(engine="conda", python=None, conda_channels=(channel,), conda_specs=specs)


def test_a_package_not_found(conda_environ: dict[str, str], conda_channel: Path, tmp_path: Path) -> None:
    with pytest.raises(PackagesNotFound) as info:
        get_engine("conda", conda_environ).solve(_request(conda_channel.as_uri(), "cuda-cudart", "nope-pkg"),
                                                 target=TARGET, cache_dir=tmp_path)
    assert info.value.names == ("nope-pkg",)
    assert info.value.message == f"Not found in the channels {conda_channel.as_uri()}: nope-pkg."


def test_an_unsatisfiable_request(conda_environ: dict[str, str], conda_channel: Path, tmp_path: Path) -> None:
    with pytest.raises(Unsatisfiable) as info:
        get_engine("conda", conda_environ).solve(_request(conda_channel.as_uri(), "cuda-version 12.1.*", "cuda-cudart 11.8.*"),
                                                 target=TARGET, cache_dir=tmp_path)
    # conda's classic solver, as it says it
    lines = [line.strip() for line in info.value.explanation.splitlines()]
    assert lines[0] == "The following specifications were found to be incompatible with each other:"
    assert "cuda-cudart=11.8 -> cuda-version[version='>=11.8,<11.9.0a0']" in lines
    assert "Package cuda-version conflicts for:" in lines


def test_the_classic_solver_lets_a_cuda_constraint_pass(conda_environ: dict[str, str], conda_channel: Path,
                                                        tmp_path: Path) -> None:
    """What docs/concepts/engines.md says of the classic solver: cuda-version 12.1 constrains __cuda >=12,
    and with a CUDA 11.8 driver conda solves anyway (rattler refuses: test_engine_rattler.py)."""
    solution = get_engine("conda", conda_environ).solve(_request(conda_channel.as_uri(), "cuda-version 12.1.*"),
                                                        target=Target(cuda="11.8", glibc="2.36"), cache_dir=tmp_path)
    assert [(p.name, p.version) for p in solution.packages] == [("cuda-version", "12.1")]


def test_install_over_http_and_conda_checks_every_hash(conda_environ: dict[str, str], conda_channel: Path,
                                                       tmp_path: Path) -> None:
    with serve(conda_channel) as url:
        engine = get_engine("conda", conda_environ)
        solution = engine.solve(_request(url, "cuda-cudart", "cuda-version 12.1.*"), target=TARGET, cache_dir=tmp_path)
        seen: list[Event] = []
        engine.install(tmp_path / "envs" / "a", solution, cache_dir=tmp_path, progress=seen.append)
        # conda writes its JSON download lines only to a terminal (JSONProgressBar is enabled by is_tty()):
        # through cuenv's pipe it prints nothing, not even a summary; cuenv shows the whole download's size
        steps = [e for e in seen if not isinstance(e, Tick)]
        assert [e.name for e in steps if isinstance(e, Step)] == ["install", "done"] and len(steps) == 2
        assert steps[0] == Step(steps[0].name, steps[0].detail, sum(p.size or 0 for p in solution.packages))
        assert engine.installed(tmp_path / "envs" / "a") == solution.packages
        # a lock edited after the solve: conda downloads, compares, refuses; cuenv says which package
        edited = solution.replace(packages=tuple(p.replace(sha256="0" * 64) for p in solution.packages))
        with pytest.raises(HashMismatch) as info:
            engine.install(tmp_path / "envs" / "b", edited, cache_dir=tmp_path / "other")
    assert info.value.expected == "0" * 64 and info.value.actual in {p.sha256 for p in solution.packages}
    assert info.value.what.startswith(url) and not (tmp_path / "envs" / "b" / "conda-meta").is_dir()


def test_a_local_package_whose_bytes_changed_is_refused_before_conda_runs(conda_environ: dict[str, str],
                                                                         conda_channel: Path, tmp_path: Path) -> None:
    """conda copies a file:// package into its cache unchecked; cuenv checks those against the lock."""
    channel = copy_channel(conda_channel, tmp_path / "channel")
    engine = get_engine("conda", conda_environ)
    solution = engine.solve(_request(channel.as_uri(), "cuda-version 12.1.*"), target=TARGET, cache_dir=tmp_path)
    (archive,) = channel.glob("noarch/cuda-version-12.1-*")
    archive.write_bytes(archive.read_bytes() + b"\0")
    with pytest.raises(HashMismatch) as info:
        engine.install(tmp_path / "envs" / "a", solution, cache_dir=tmp_path)
    assert info.value.expected == solution.packages[0].sha256 and not (tmp_path / "envs" / "a").exists()


def test_the_probe_is_cached(conda_environ: dict[str, str], real_conda: Path, tmp_path: Path,
                             monkeypatch: pytest.MonkeyPatch) -> None:
    condatool.forget()
    first = condatool.probe(real_conda, conda_environ, cache_dir=tmp_path)
    assert first.solvers == ("classic",) and first.solver == "classic" and not first.solver_args()
    assert first.configured_solver == "classic" and first.sha256_explicit
    first.check_options()  # every option cuenv passes is one this conda has
    assert first.platform_args("linux-aarch64") == ["--platform", "linux-aarch64"]
    condatool.forget()

    def no_run(*args: object, **kwargs: object) -> None:
        raise AssertionError("probed again")

    monkeypatch.setattr("cuenv.runner.run", no_run)
    assert condatool.probe(real_conda, conda_environ, cache_dir=tmp_path) == first  # from the cache file
    with pytest.raises(AssertionError, match="probed again"):  # another configured solver: asked again
        condatool.forget()
        condatool.probe(real_conda, dict(conda_environ, CONDA_SOLVER="libmamba"), cache_dir=tmp_path)


PLUGIN = """
import os
from conda import plugins
from conda.core.solve import Solver


class Marked(Solver):  # conda's classic solver, leaving a mark that conda chose it
    def solve_final_state(self, *args, **kwargs):
        open(os.environ["CUENV_TEST_SOLVER_MARK"], "a").write("libmamba\\n")
        return super().solve_final_state(*args, **kwargs)


@plugins.hookimpl
def conda_solvers():
    yield plugins.types.CondaSolver(name="libmamba", backend=Marked)
"""


def test_a_conda_with_a_libmamba_solver_is_asked_for_it(conda_environ: dict[str, str], real_conda: Path,
                                                         conda_channel: Path, tmp_path: Path) -> None:
    """The real conda with a solver plugin registered as "libmamba" (the classic solver underneath: the
    real libmamba is not on PyPI), through conda's own plugin entry points."""
    site = tmp_path / "site"
    (site / "cuenv_test_solver-0.dist-info").mkdir(parents=True)
    (site / "cuenv_test_solver.py").write_text(PLUGIN)
    (site / "cuenv_test_solver-0.dist-info" / "METADATA").write_text("Metadata-Version: 2.1\nName: cuenv-test-solver\nVersion: 0\n")
    (site / "cuenv_test_solver-0.dist-info" / "entry_points.txt").write_text("[conda]\ncuenv_test_solver = cuenv_test_solver\n")
    python = real_conda.parent / "python"
    (tmp_path / "bin").mkdir()
    exe = tmp_path / "bin" / "conda"
    exe.write_text(f'#!/bin/sh\nPYTHONPATH={site} exec {python} -m conda "$@"\n')
    exe.chmod(0o755)
    mark = tmp_path / "mark"
    environ = dict(conda_environ, PATH=f"{exe.parent}:{conda_environ['PATH']}", CUENV_TEST_SOLVER_MARK=str(mark))
    engine = get_engine("conda", environ)
    tool = engine.conda_tool(cache_dir=tmp_path)
    assert tool is not None and tool.solvers == ("classic", "libmamba") and tool.solver_args() == ["--solver=libmamba"]
    solution = engine.solve(_request(conda_channel.as_uri(), "cuda-version 12.1.*"), target=TARGET, cache_dir=tmp_path)
    assert [p.name for p in solution.packages] == ["cuda-version"]
    assert mark.read_text() == "libmamba\n"  # conda solved with the solver cuenv asked for


class _SlowArchives(http.server.SimpleHTTPRequestHandler):
    """The channel's repodata at once, its archives 8 KiB every quarter second; ``started`` is set
    when the first archive is asked for; ``asked`` and ``in_full`` list the archives asked for and
    those sent to the last byte."""

    started: threading.Event
    asked: list[str]
    in_full: list[str]

    def log_message(self, *args: object) -> None:
        pass

    def copyfile(self, source, outputfile) -> None:  # noqa: ANN001 - http.server's file objects
        if not self.path.endswith((".conda", ".tar.bz2")):
            return super().copyfile(source, outputfile)
        self.asked.append(self.path)
        self.started.set()
        try:
            while block := source.read(8 << 10):
                outputfile.write(block)
                time.sleep(0.25)
            outputfile.flush()
            self.in_full.append(self.path)
        except (BrokenPipeError, ConnectionResetError):
            pass


def test_ctrl_c_mid_install_ends_conda_and_leaves_nothing(conda_environ: dict[str, str], conda_channel: Path) -> None:
    started = threading.Event()
    asked: list[str] = []
    in_full: list[str] = []
    handler = type("Handler", (_SlowArchives,), {"started": started, "asked": asked, "in_full": in_full})
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(handler, directory=str(conda_channel)))
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        proc = subprocess.Popen([sys.executable, "-m", "cuenv", "create", "cuda-12.1", "--engine", "conda", "-n", "slow",
                                 "--mirror", f"conda-forge=http://127.0.0.1:{server.server_port}"],
                                env=conda_environ, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        assert started.wait(timeout=120), proc.stderr.read() if proc.poll() is not None else "no download began"
        time.sleep(0.3)
        proc.send_signal(signal.SIGINT)
        code = proc.wait(timeout=120)  # only a hang's bound: the archives alone take far longer
        rest = proc.stderr.read()
    finally:
        server.shutdown()
    assert code == 130, rest
    # the verdict is the server's: an archive still in flight was cut off (a Ctrl-C that waited for conda's
    # downloads would let every one finish); the time it takes is benchmarks/bench_guards.py's
    assert set(asked) - set(in_full), f"every archive conda asked for was sent in full: {asked}"
    prefix = Path(conda_environ["CUENV_HOME"]) / "envs" / "slow"
    assert not prefix.exists(), "a half-built environment was left"
    assert not [p for p in Path("/proc").iterdir() if p.name.isdigit() and _mentions(p, str(prefix))]


def _mentions(proc: Path, text: str) -> bool:
    try:
        return text in (proc / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
    except OSError:
        return False
