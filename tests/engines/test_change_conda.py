"""Living conda environments (issue 26 §1): add, upgrade and uninstall in a conda prefix made by rattler
and by the real conda (realconda.py), against the suite's local channel (channel.py) plus a few packages
built here: cuenv-hello 1.1 (an upgrade; its text file carries the prefix placeholder), cuenv-needs-hello
(a dependant), cuenv-cu11 (needs CUDA 11's runtime) and cuenv-many (3,000 files: an install slow enough
to be killed half-way). Each change is solved with the prefix's packages held, checked before any
download, made over a hard-linked copy of the prefix (cuenv.envs.snapshot) and recorded."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
import yaml

from cuenv.engines import get_engine
from tests.engines.channel import PLACEHOLDER, Payload, Spec, build_archive, copy_channel
from tests.envs.envkit import killable

ENGINES = ("rattler", "conda")
LOAD_CUDART = ("import ctypes; rt = ctypes.CDLL('libcudart.so.12'); v = ctypes.c_int(); "
               "print(v.value if rt.cudaRuntimeGetVersion(ctypes.byref(v)) == 0 else 'failed')")
EXTRA = (
    Spec("cuenv-hello", "1.1", "noarch", files=(Payload("etc/cuenv-hello.txt", text=f"prefix={PLACEHOLDER}\nv1.1\n"),)),
    Spec("cuenv-needs-hello", "1.0", "noarch", depends=("cuenv-hello",)),
    Spec("cuenv-cu11", "1.0", "linux-64", depends=("cuda-cudart 11.8.*",)),
    Spec("cuenv-many", "1.0", "noarch",
         files=tuple(Payload(f"share/cuenv-many/{i // 100}/f{i}.txt", text=f"{i}\n" * 50) for i in range(3000))),
)


@pytest.fixture(scope="session")
def change_channel(conda_channel: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The suite's channel and the packages above, indexed by rattler."""
    import rattler.index

    root = copy_channel(conda_channel, tmp_path_factory.mktemp("change-channel") / "channel")
    for spec in EXTRA:
        build_archive(spec, {}, root / spec.subdir)
    asyncio.run(rattler.index.index_fs(root, write_zst=False, write_shards=False))
    return root


@pytest.fixture(params=ENGINES)
def engine(request: pytest.FixtureRequest, tmp_path: Path) -> tuple[str, dict[str, str]]:
    """(engine, the environment cuenv runs in): the real conda first on PATH for conda, with a package
    cache of this test's own (so that a refusal can be seen to have downloaded nothing)."""
    environ = dict(os.environ, CUENV_CACHE_DIR=str(tmp_path / "cache"))
    if request.param == "conda":
        environ.update(request.getfixturevalue("conda_overlay"), CONDA_PKGS_DIRS=str(tmp_path / "pkgs"))
    return request.param, environ


@pytest.fixture
def made(cli, engine: tuple[str, dict[str, str]], change_channel: Path, tmp_path: Path, work: Path):
    """`cuenv create local-cuda-12.1 -n e` from the change channel; returns cuenv(*argv) -> (code, out, err)."""
    src = Path(__file__).resolve().parents[2] / "recipes" / "cuda-12.1.yaml"
    data = yaml.safe_load(src.read_text())
    data["name"] = "local-cuda-12.1"
    data["install"]["conda"] = {"channels": [change_channel.as_uri()],
                                "specs": ["cuda-version=12.1", "cuda-cudart", "cuda-nvcc-tools"], "nvcc": False}
    recipes = tmp_path / "recipes"
    recipes.mkdir()
    (recipes / "local-cuda-12.1.yaml").write_text(yaml.safe_dump(data, sort_keys=False))
    name, environ = engine

    def cuenv(*argv: str, env: dict[str, str] | None = None) -> tuple[int, str, str]:
        return cli(*argv, environ={**environ, **(env or {})})

    code, out, err = cuenv("create", "local-cuda-12.1", "--engine", name, "-n", "e", "--recipes", str(recipes))
    assert code == 0, err
    return cuenv


def _records(prefix: Path) -> list[str]:
    return sorted(p.name for p in (prefix / "conda-meta").glob("*.json"))


def _conda_sees(engine: tuple[str, dict[str, str]], prefix: Path) -> None:
    """The real conda still reads the prefix as its environment, with exactly what cuenv says it holds."""
    name, environ = engine
    if name != "conda":
        return
    done = subprocess.run(["conda", "list", "--json", "-p", str(prefix)], env=environ, capture_output=True, text=True,
                          timeout=300)
    assert done.returncode == 0, done.stdout + done.stderr
    listed = sorted((p["name"], p["version"]) for p in json.loads(done.stdout))
    assert listed == sorted((p.name, p.version) for p in get_engine("conda", environ).installed(prefix) if p.kind == "conda")


def test_add_upgrade_uninstall_lock_and_a_teammates_sync(made, engine, envs: Path, work: Path) -> None:
    prefix = envs / "e"
    code, out, err = made("add", "-n", "e", "cuenv-hello=1.0")
    assert code == 0 and out.splitlines()[:2] == ["Added to 'e':", "  + cuenv-hello 1.0"], err
    assert (prefix / "etc" / "cuenv-hello.txt").read_text() == f"prefix={prefix}\n"  # linked by the engine itself
    assert made("add", "-n", "e", "cuenv-hello")[1].splitlines()[-1] == "Nothing to change in 'e'."
    assert made("lock", "e", "-o", "cuenv.lock")[0] == 0
    assert "name: cuenv-hello" in (work / "cuenv.lock").read_text()
    assert made("lock", "--check", "e", "cuenv.lock")[0] == 0
    _conda_sees(engine, prefix)

    code, out, err = made("upgrade", "-n", "e", "cuenv-hello")
    assert code == 0 and out.splitlines()[1] == "  ~ cuenv-hello 1.0 -> 1.1", err
    assert (prefix / "etc" / "cuenv-hello.txt").read_text() == f"prefix={prefix}\nv1.1\n"
    assert not (envs / ".changes").exists()  # the copy of before is gone once the change is recorded
    # drift: the lock on disk is of before the upgrade, and says how to clear it
    code, out, err = made("lock", "--check", "e", "cuenv.lock")
    assert code == 1 and any(ln.strip().startswith("~ cuenv-hello") for ln in out.splitlines()), out
    # the overwrite prompt: a different lock of this environment is not written over without --force
    code, out, err = made("lock", "e", "-o", "cuenv.lock")
    assert code == 2 and "holds a different lock of local-cuda-12.1" in err, err
    assert made("lock", "e", "-o", "cuenv.lock", "--force")[0] == 0
    assert made("lock", "--check", "e", "cuenv.lock")[0] == 0

    # a dependant keeps what it needs; the hint that removes both works as written
    assert made("add", "-n", "e", "cuenv-needs-hello")[0] == 0
    code, out, err = made("uninstall", "-n", "e", "cuenv-hello")
    assert code == 1 and "cuenv-hello is needed by cuenv-needs-hello" in err, err
    hint = err.split("`")[1]
    assert hint == "cuenv uninstall -n e cuenv-hello cuenv-needs-hello"
    code, out, err = made(*hint.split()[1:])
    assert code == 0 and not (prefix / "etc" / "cuenv-hello.txt").exists(), err
    assert not any(r.startswith("cuenv-") for r in _records(prefix))
    _conda_sees(engine, prefix)

    # what was recorded is what a teammate gets
    assert made("add", "-n", "e", "cuenv-hello")[0] == 0
    assert made("lock", "e", "-o", "cuenv.lock", "--force")[0] == 0
    code, out, err = made("sync", "cuenv.lock", "-n", "teammate")
    assert code == 0, err
    assert _records(envs / "teammate") == _records(prefix)
    meta = json.loads((prefix / ".cuenv" / "meta.json").read_text())
    assert [c["verb"] for c in meta["changes"]] == ["add", "upgrade", "add", "remove", "add"]
    assert "cuenv-hello" in meta["requested"]


def test_changes_that_break_the_contract_are_refused_before_any_download(made, engine, envs: Path, tmp_path: Path) -> None:
    prefix = envs / "e"
    before = _records(prefix)
    code, out, err = made("add", "-n", "e", "cuda-cudart=11.8")
    assert code == 1 and err.startswith("error: cuda-cudart is the environment's CUDA runtime (12.1.105)"), err
    assert "`cuenv recipes` lists them all" in err
    code, out, err = made("add", "-n", "e", "cuenv-cu11")
    assert code == 1 and "cuenv-cu11 cannot be installed into 'e' with its packages held (cuda-cudart 12.1.105, " in err, err
    code, out, err = made("upgrade", "-n", "e", "cuda-version")
    assert code == 1 and "cuda-version is the environment's CUDA release (12.1)" in err, err
    code, out, err = made("uninstall", "-n", "e", "cuda-cudart")
    assert code == 1 and "removing it would break what 'e' was checked for" in err, err
    # a machine whose driver runs CUDA 12.0 at most: the framework (needs __cuda >=12.1) is refused, and why
    code, out, err = made("add", "-n", "e", "pytorch", env={"CUENV_DRIVER": "525.60.13"})
    assert code == 1 and "hint: pytorch needs a newer NVIDIA driver than this machine's (it runs CUDA 12.0 at most)" in err, err
    assert made("add", "-n", "e", "pytorch", "--dry-run", env={"CUENV_DRIVER": "550.54.14"})[0] == 0
    code, out, err = made("add", "-n", "e", "no-such-package")
    assert code == 1 and "Not found in the channels" in err and "`cuenv info e`" in err, err
    assert _records(prefix) == before
    # nothing was fetched: no archive of any of them in the engine's caches
    fetched = [p.name for p in tmp_path.rglob("*") if p.name.startswith(("pytorch", "cuenv-cu11", "cuda-cudart-11"))]
    assert fetched == []


def test_kill_9_mid_install_leaves_the_old_environment_and_the_next_command_puts_it_back(
        made, engine, envs: Path, work: Path, cuenv_exe: list[str]) -> None:
    name, environ = engine
    prefix = envs / "e"
    assert made("lock", "e", "-o", "before.lock")[0] == 0
    proc = subprocess.Popen([*cuenv_exe, "add", "-n", "e", "cuenv-many"], env=killable(environ, work.parent / "tmp"),
                            stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL, start_new_session=True)
    landing = prefix / "share" / "cuenv-many"
    deadline = time.monotonic() + 300
    while not landing.exists() and proc.poll() is None and time.monotonic() < deadline:
        time.sleep(0.001)
    running = proc.poll() is None
    os.killpg(proc.pid, signal.SIGKILL)  # cuenv and the conda it started
    proc.wait()
    assert running and landing.exists(), "the change ended before its files were being linked"
    # the next command on it (here: run) swaps the copy of before back, and the environment works. conda
    # runs in its own session, so it may outlive cuenv: till it ends, the environment is busy and run says so
    deadline = time.monotonic() + 300
    while True:
        ran = subprocess.run([*cuenv_exe, "run", "e", "--", sys.executable, "-c", LOAD_CUDART], env=environ,
                             capture_output=True, text=True, timeout=120)
        if "is being changed by another cuenv process" not in ran.stderr or time.monotonic() > deadline:
            break
        assert "The command runs on it as it is now." in ran.stderr, ran.stderr
        time.sleep(0.1)
    assert ran.stdout.strip() == "12010", ran.stderr
    assert not landing.exists() and not (envs / ".changes").exists(), ran.stderr
    assert made("lock", "e", "-o", "after.lock")[0] == 0
    assert (work / "after.lock").read_text() == (work / "before.lock").read_text()
    _conda_sees(engine, prefix)
    assert made("add", "-n", "e", "cuenv-hello")[0] == 0  # and it changes again as before


@pytest.mark.network
def test_the_pip_layer_of_a_conda_prefix(made, engine, envs: Path, work: Path) -> None:
    """--pypi: wheels next to conda's packages, with every installed distribution held. The suite's
    channel holds Python's metadata only, so this Python is laid over the prefix as a venv."""
    name, environ = engine
    prefix = envs / "e"
    code, out, err = made("add", "-n", "e", "--pypi", "six")
    assert code == 2 and err.startswith("error: 'e' has no Python, so it has no pip layer to change."), err
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(prefix)], check=True, timeout=120)
    code, out, err = made("add", "-n", "e", "--pypi", "six==1.16.0")
    assert code == 0 and out.splitlines()[1] == "  + six 1.16.0", err
    assert any(prefix.glob("lib/python3*/site-packages/six-1.16.0.dist-info"))
    code, out, err = made("upgrade", "-n", "e", "--pypi", "six<1.17")  # the bound asked for holds
    assert code == 0 and out.splitlines()[0] == "six is already the newest version that fits in 'e'.", out + err
    code, out, err = made("upgrade", "-n", "e", "--pypi", "six")
    assert code == 0 and out.splitlines()[1].startswith("  ~ six 1.16.0 -> "), err
    assert made("lock", "e", "-o", "cuenv.lock")[0] == 0
    text = (work / "cuenv.lock").read_text()
    assert "name: six" in text and "name: cuda-cudart" in text
    assert made("lock", "--check", "e", "cuenv.lock")[0] == 0
    code, out, err = made("add", "-n", "e", "--pypi", "nvidia-cuda-runtime-cu11")
    assert code == 1 and "would pull CUDA 11 wheels" in err, err
    code, out, err = made("uninstall", "-n", "e", "--pypi", "cuda-cudart")
    assert code == 2 and "`cuenv uninstall -n e cuda-cudart`" in err, err
    code, out, err = made("uninstall", "-n", "e", "--pypi", "six")
    assert code == 0 and not any(prefix.glob("lib/python3*/site-packages/six-*.dist-info")), err
    # pip itself (as the prefix's own pip would): seen, and locked from its index
    pip = subprocess.run([sys.executable, "-m", "pip", "--python", str(prefix / "bin" / "python"), "install", "-q",
                          "--no-cache-dir", "--disable-pip-version-check", "idna"], capture_output=True, text=True, timeout=300)
    assert pip.returncode == 0, pip.stderr
    code, out, err = made("lock", "e", "-o", "cuenv.lock", "--force")
    assert code == 0 and out.startswith("Installed outside cuenv, locked from their index: idna "), out + err
    assert "name: idna" in (work / "cuenv.lock").read_text()
    assert made("lock", "--check", "e", "cuenv.lock")[0] == 0
