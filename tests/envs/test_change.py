"""Living environments (issue 26): add, upgrade and uninstall packages of a venv environment built from
NVIDIA's real wheels, pip inside it, a lock of the environment as it is, sync that asks, and no lockfile
written over without asking. Small pure-Python packages from PyPI keep it fast (six, python-dateutil)."""

from __future__ import annotations

import json
import os
import shlex
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
import yaml
from hypothesis import given
from hypothesis import strategies as st

from cuenv.envs import change
from cuenv.envs.changeplan import satisfied
from cuenv.envs.diskuse import disk_usage
from cuenv.errors import UsageError
from cuenv.knowledge.packages import canonical
from tests.envs.envkit import LOAD_CUDART, killable


@pytest.fixture
def env(cli, envs: Path) -> Path:
    code, out, err = cli("create", "cuda-12.1", "--engine", "venv", "-n", "live")
    assert code == 0, err
    return envs / "live"


def _site(prefix: Path) -> Path:
    return next(prefix.glob("lib/python3*/site-packages"))


def _names(prefix: Path) -> set[str]:
    return {p.name.split("-")[0].lower() for p in _site(prefix).glob("*.dist-info")}


def test_add_lock_then_a_teammates_sync_has_it(cli, env: Path, work: Path) -> None:
    code, out, err = cli("add", "-n", "live", "six", "--dry-run")
    assert (code, out.splitlines()[0]) == (0, "Would change 'live':") and "six" not in _names(env), err
    code, out, err = cli("add", "-n", "live", "six")
    assert code == 0, err
    assert out.splitlines()[0] == "Added to 'live':" and out.splitlines()[1].startswith("  + six ")
    assert "six" in _names(env)
    meta = json.loads((env / ".cuenv" / "meta.json").read_text())
    assert "six" in meta["requested"] and meta["changes"][-1]["verb"] == "add"
    assert meta["size_bytes"] == disk_usage(env)  # counted from six's RECORD, as a walk of it all says
    # an add of what is there changes nothing
    assert cli("add", "-n", "live", "six")[1].splitlines()[-1] == "Nothing to change in 'live'."
    code, out, err = cli("lock", "live", "-o", "cuenv.lock")
    assert code == 0, err
    assert "name: six" in (work / "cuenv.lock").read_text()
    assert cli("lock", "--check", "live", "cuenv.lock")[0] == 0
    code, out, err = cli("sync", "cuenv.lock", "-n", "teammate")
    assert code == 0, err
    assert "six" in _names(env.parent / "teammate")
    # the active environment is the default
    code, out, err = cli("uninstall", "six", environ={**os.environ, "CUENV_ACTIVE": "teammate"})
    assert code == 0 and "six" not in _names(env.parent / "teammate"), err


def test_changes_that_break_the_contract_are_refused_before_any_download(cli, env: Path) -> None:
    before = _names(env)
    code, out, err = cli("add", "-n", "live", "nvidia-cuda-runtime-cu11")
    assert code == 1 and err.startswith("error: nvidia-cuda-runtime-cu11 would pull CUDA 11 wheels"), err
    assert err.endswith("`cuenv recipes` lists them all.\n") and "`cuenv suggest`" not in err  # no driver here to pick by
    code, out, err = cli("add", "-n", "live", "nvidia-cuda-runtime-cu11", environ={**os.environ, "CUENV_DRIVER": "550.54.14"})
    assert code == 1 and "`cuenv suggest` names the recipe for this machine" in err, err
    code, out, err = cli("upgrade", "-n", "live", "nvidia-cuda-runtime-cu12")
    assert code == 1 and "is the environment's CUDA runtime (12.1.105)" in err, err
    code, out, err = cli("uninstall", "-n", "live", "nvidia-cuda-runtime-cu12")
    assert code == 1 and "removing it would break" in err, err
    code, out, err = cli("add", "-n", "live", "not a requirement!")
    assert code == 2 and "is not a package requirement" in err, err
    code, out, err = cli("upgrade", "-n", "live", "six")
    assert code == 2 and "`cuenv add -n live six`" in err, err
    assert _names(env) == before


def test_uninstall_refuses_to_break_a_dependant_and_its_hint_works(cli, env: Path) -> None:
    assert cli("add", "-n", "live", "python-dateutil")[0] == 0
    assert {"tzdata", "python_dateutil"} <= _names(env)  # python-dateutil 2.9.1 requires tzdata
    code, out, err = cli("uninstall", "-n", "live", "tzdata")
    assert code == 1 and "tzdata is needed by python-dateutil" in err, err
    hint = err.split("`")[1]
    assert hint == "cuenv uninstall -n live python-dateutil tzdata"
    code, out, err = cli(*hint.split()[1:])
    assert code == 0 and not {"tzdata", "python_dateutil"} & _names(env), err


def test_upgrade_moves_only_the_named_package(cli, env: Path) -> None:
    assert cli("add", "-n", "live", "six==1.16.0", "-q") == (0, "", "")  # -q: what was done is not reported
    code, out, err = cli("upgrade", "-n", "live", "six", "--dry-run", "-q")  # what a dry run would do is asked for
    assert code == 0 and out.startswith("Would change 'live':\n  ~ six 1.16.0 -> "), (out, err)
    code, out, err = cli("upgrade", "-n", "live", "six")
    assert code == 0, err
    assert out.splitlines()[1].startswith("  ~ six 1.16.0 -> ")
    solution = json.loads((env / ".cuenv" / "solution.json").read_text())
    versions = {p["name"]: p["version"] for p in solution["packages"]}
    assert versions["six"] != "1.16.0" and versions["nvidia-cuda-runtime-cu12"] == "12.1.105"
    meta = json.loads((env / ".cuenv" / "meta.json").read_text())
    assert meta["size_bytes"] == disk_usage(env)  # old files out, new in
    assert "six" in meta["requested"] and "six==1.16.0" not in meta["requested"]  # the upgrade moved past that pin
    assert cli("upgrade", "-n", "live", "six")[1].splitlines() == [
        "six is already the newest version that fits in 'live'.", "Nothing to change in 'live'."]


def test_an_add_never_moves_a_held_package_and_upgrade_keeps_its_bound(cli, env: Path) -> None:
    """A version pin of the CUDA runtime is a change of it, refused as its upgrade is; a pin it meets changes
    nothing. `upgrade` solves the spec it was given, not the bare name."""
    code, out, err = cli("add", "-n", "live", "nvidia-cuda-runtime-cu12==12.4.127", "--dry-run")
    assert code == 1 and err.startswith("error: nvidia-cuda-runtime-cu12 is the environment's CUDA runtime (12.1.105): "
                                        "changing it"), err
    assert cli("add", "-n", "live", "nvidia-cuda-runtime-cu12>=12.1")[1].splitlines()[-1] == "Nothing to change in 'live'."
    code, out, err = cli("add", "-n", "live", "nvidia-cuda-nvcc-cu12>=12.4", "--dry-run")  # nvcc is held as well
    assert code == 1 and "nvidia-cuda-nvcc-cu12 is the environment's nvcc (12.1.105)" in err, err
    assert cli("add", "-n", "live", "idna==3.6")[0] == 0
    code, out, err = cli("upgrade", "-n", "live", "idna<3.8")
    assert code == 0 and out.splitlines()[1] == "  ~ idna 3.6 -> 3.7", err
    code, out, err = cli("upgrade", "-n", "live", "idna<3.7")  # an upgrade never moves down; the hint does, as asked
    assert code == 2 and "would move idna down (3.7 -> 3.6)" in err, err
    hint = err.split("`")[1]
    assert hint == "cuenv add -n live 'idna==3.6'" and cli(*shlex.split(hint)[1:])[0] == 0


def test_an_add_of_an_installed_package_with_extras_installs_what_they_bring(cli, env: Path) -> None:
    assert cli("add", "-n", "live", "requests==2.32.3")[0] == 0
    code, out, err = cli("add", "-n", "live", "requests[socks]", "requests[socks]")
    assert code == 0 and out.splitlines()[1:2] == ["  + pysocks 1.7.1"] and "requests" not in out.split("\n", 2)[2], err
    assert {"requests", "pysocks"} <= _names(env)
    code, out, err = cli("add", "-n", "live", "requests[socks]")  # complete now: said so, nothing changed
    assert code == 0 and out.splitlines() == ["requests is already installed in 'live'.", "Nothing to change in 'live'."], out


def test_a_wheel_built_for_another_cuda_major_is_refused_by_its_name_or_local_version(cli, env: Path) -> None:
    """Not only NVIDIA's wheels: a wheel that is a build for CUDA 11 (cupy-cuda11x, as a requirements file's pin
    of it reads) is refused in a CUDA 12 environment; its CUDA 12 build is not."""
    code, out, err = cli("add", "-n", "live", "cupy-cuda11x", "--dry-run")
    assert code == 1 and "would pull CUDA 11 wheels (cupy-cuda11x " in err, err
    code, out, err = cli("add", "-n", "live", "cupy-cuda12x", "--dry-run")
    assert code == 0 and "+ cupy-cuda12x " in out, err


def test_an_interrupted_change_undone_at_once_leaves_no_journal(cli, env: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Ctrl-C after the install: the change is undone and its journal with it (a journal left behind would
    undo, at the next change, what pip installed meanwhile). Where the undo itself fails, it stays."""
    from cuenv.config import resolve

    settings = resolve({}, dict(os.environ))

    def interrupted(*args: object, **kwargs: object) -> None:
        raise KeyboardInterrupt

    monkeypatch.setattr(change, "staged_record", interrupted)
    planned = change.plan(settings, os.environ, name="live", verb="add", packages=["six"])
    with pytest.raises(KeyboardInterrupt):
        change.apply(settings, os.environ, planned)
    assert "six" not in _names(env) and not change.journal_path(env).exists()

    def broken(*args: object, **kwargs: object) -> None:
        raise OSError("disk full")

    monkeypatch.setattr(change, "_restore", broken)
    with pytest.raises(KeyboardInterrupt):
        change.apply(settings, os.environ, planned)
    assert change.journal_path(env).exists()


def test_pip_inside_run_installs_into_the_environment_and_lock_records_it(cli, cuenv_exe, env: Path, work: Path) -> None:
    where = subprocess.run([*cuenv_exe, "run", "live", "--", "python", "-m", "pip", "--version"],
                           capture_output=True, text=True, timeout=120)
    assert str(env) in where.stdout, where.stderr
    pip = subprocess.run([*cuenv_exe, "run", "live", "--", "pip", "install", "-q", "--no-cache-dir", "six"],
                         capture_output=True, text=True, timeout=300)
    assert pip.returncode == 0, pip.stderr
    assert "six" in _names(env)
    code, out, err = cli("lock", "live", "-o", "cuenv.lock")
    assert code == 0 and out.startswith("Installed outside cuenv, locked from their index: six "), err
    text = (work / "cuenv.lock").read_text()
    assert "name: six" in text and "name: pip\n" not in text  # pip is the environment's tool, not its package
    assert cli("lock", "--check", "live", "cuenv.lock")[0] == 0
    assert cli("add", "-n", "live", "pip")[1].splitlines()[0] == "pip is already installed in 'live'."
    seeded = sorted(p.name for p in env.glob("lib/python*/site-packages/pip-*.dist-info"))
    assert cli("add", "-n", "live", "pip>=20")[1].splitlines()[0] == "pip is already installed in 'live'."  # met: not reinstalled
    assert sorted(p.name for p in env.glob("lib/python*/site-packages/pip-*.dist-info")) == seeded
    code, out, err = cli("upgrade", "-n", "live", "pip")  # not "not installed", nor a hint to add what is there
    assert code == 2 and "pip " in err and "is the installer seeded into 'live'" in err, err
    assert err.split("`")[1] == "cuenv run live -- pip install -U pip"
    done = subprocess.run([*cuenv_exe, *err.split("`")[1].split()[1:]], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    code, out, err = cli("uninstall", "-n", "live", "pip")
    assert code == 2 and "pip is the installer seeded into 'live'" in err, err
    hint = err.split("`")[1]
    assert hint == "cuenv run live -- pip uninstall -y pip"
    assert subprocess.run([*cuenv_exe, *hint.split()[1:]], capture_output=True, timeout=120).returncode == 0
    assert "pip" not in _names(env) and cli("lock", "--check", "live", "cuenv.lock")[0] == 0


def test_a_lock_promises_the_cuda_runtime_pip_left_and_refuses_two_majors(cli, cuenv_exe, env: Path, work: Path) -> None:
    """pip can do what `cuenv add` refuses. A second CUDA major is named and the lock refused, with the
    command that takes it out (run as written here); a runtime pip moved within the major makes the lock's
    contract that runtime's, with a note."""
    def pip(*args: str) -> None:
        done = subprocess.run([*cuenv_exe, "run", "live", "--", "pip", "install", "-q", "--no-cache-dir", *args],
                              capture_output=True, text=True, timeout=300)
        assert done.returncode == 0, done.stderr

    pip("nvidia-cuda-runtime-cu11==11.8.89")
    code, out, err = cli("add", "-n", "live", "six", "--dry-run")  # any change names what pip put in
    assert code == 1 and "holds CUDA 11 packages installed outside cuenv (nvidia-cuda-runtime-cu11 11.8.89)" in err, err
    assert err.split("`")[1] == "cuenv uninstall -n live nvidia-cuda-runtime-cu11"
    code, out, err = cli("lock", "live", "-o", "cuenv.lock")
    assert code == 2 and "holds CUDA runtimes of two majors" in err and not (work / "cuenv.lock").exists(), err
    hint = err.split("`")[1]
    assert hint == "cuenv run live -- pip uninstall -y nvidia-cuda-runtime-cu11"
    assert cli("uninstall", "-n", "live", "nvidia-cuda-runtime-cu11")[0] == 0  # the add's hint
    pip("nvidia-cuda-runtime-cu11==11.8.89")
    assert subprocess.run([*cuenv_exe, *hint.split()[1:]], capture_output=True, timeout=300).returncode == 0  # the lock's
    pip("nvidia-cuda-runtime-cu12==12.4.127")
    code, out, err = cli("lock", "live", "-o", "cuenv.lock")
    assert code == 0 and "note: 'live' holds the CUDA 12.4 runtime (nvidia-cuda-runtime-cu12 12.4.127)" in err, err
    assert yaml.safe_load((work / "cuenv.lock").read_text())["contract"]["cuda"] == "12.4"


def test_the_drift_fixes_clear_a_package_pip_installed_from_a_local_file(cli, cuenv_exe, env: Path, work: Path) -> None:
    """No lock can pin a wheel installed from a local file: `lock --check` names it, and its second fix takes it out
    before it records the environment, so that, run as written, the check passes."""
    def run(*argv: str) -> None:
        done = subprocess.run([*cuenv_exe, "run", "live", "--", *argv], capture_output=True, text=True, timeout=300)
        assert done.returncode == 0, done.stderr

    run("pip", "download", "-q", "--no-deps", "--no-cache-dir", "six==1.16.0", "-d", str(work / "wh"))
    wheel = f"./wh/{next((work / 'wh').glob('six-*.whl')).name}"  # as typed in the project folder
    code, out, err = cli("add", "-n", "live", wheel)  # a change installs from indexes: the refusal says how else
    assert code == 2 and err.startswith(f"error: '{wheel}' is a local path: a change installs from package indexes"), err
    hint = err.split("`")[1]
    assert hint == f"cuenv run live -- pip install {wheel}"
    run(*hint.split()[3:])
    code, out, err = cli("lock", "live", "-o", "cuenv.lock")
    assert code == 0 and "six is installed but not locked" in err, err
    code, out, err = cli("lock", "--check", "live", "cuenv.lock")
    fix = next(ln for ln in out.splitlines() if ln.startswith("Fix it:")).split("`")
    assert code == 1 and fix[3:6:2] == ["cuenv uninstall -n live six", "cuenv lock live -o cuenv.lock --force"], out
    for command in fix[3:6:2]:
        assert cli(*command.split()[1:])[0] == 0
    assert cli("lock", "--check", "live", "cuenv.lock")[0] == 0 and "six" not in _names(env)


def test_a_change_on_top_of_what_pip_installed_pins_it_first(cli, cuenv_exe, env: Path, work: Path) -> None:
    pip = subprocess.run([*cuenv_exe, "run", "live", "--", "pip", "install", "-q", "--no-cache-dir", "six"],
                         capture_output=True, text=True, timeout=300)
    assert pip.returncode == 0, pip.stderr
    own = {f.name: f.read_bytes() for f in (env / ".cuenv").iterdir() if f.is_file()}
    code, out, err = cli("add", "-n", "live", "idna", "--dry-run")  # a dry run writes nothing, and says what an add records
    assert code == 0 and out.startswith("Installed outside cuenv since the last record (the change records them first): six "), out
    assert {f.name: f.read_bytes() for f in (env / ".cuenv").iterdir() if f.is_file()} == own, err
    code, out, err = cli("add", "-n", "live", "idna", "--dry-run", "--json")
    assert code == 0 and [r.split()[0] for r in json.loads(out)["recorded"]] == ["six"], out
    code, out, err = cli("add", "-n", "live", "no-such-package-cuenv-test")  # a failed add names what it recorded first
    assert code == 1 and "(Recorded before it, installed outside cuenv: six " in err, err
    pip = subprocess.run([*cuenv_exe, "run", "live", "--", "pip", "install", "-q", "--no-cache-dir", "idna"],
                         capture_output=True, text=True, timeout=300)
    assert pip.returncode == 0, pip.stderr
    code, out, err = cli("add", "-n", "live", "certifi")  # idna is installed, not recorded: the add records it too
    assert code == 0 and out.startswith("Recorded first, installed outside cuenv and locked from their index: idna "), err
    solution = json.loads((env / ".cuenv" / "solution.json").read_text())
    assert all({p["name"]: bool(p.get("sha256")) for p in solution["packages"]}.get(n) for n in ("six", "idna", "certifi"))
    code, out, err = cli("lock", "live", "-o", "cuenv.lock")
    assert code == 0 and "name: six" in (work / "cuenv.lock").read_text(), err


def test_sync_names_what_it_would_remove_and_asks(cli, env: Path, work: Path) -> None:
    assert cli("lock", "live", "-o", "cuenv.lock")[0] == 0
    assert cli("add", "-n", "live", "six")[0] == 0
    code, out, err = cli("lock", "--check", "live", "cuenv.lock")
    assert code == 1 and any(ln.startswith("  + six ") and ln.endswith("(not in the lock)") for ln in out.splitlines())
    fixes = [ln for ln in out.splitlines() if ln.startswith("Fix it:")][0]
    sync_fix, relock_fix = fixes.split("`")[1::2]
    code, out, err = cli("sync", "cuenv.lock", "-n", "live")  # stdin is not a terminal under pytest
    assert code == 2 and any(ln.startswith("  - six ") and ln.endswith("(installed, not in cuenv.lock: removed)")
                             for ln in err.splitlines()), err
    assert "six" in _names(env)
    assert sync_fix == "cuenv sync cuenv.lock -n live -y"
    assert cli(*sync_fix.split()[1:])[0] == 0 and "six" not in _names(env)
    assert cli("lock", "--check", "live", "cuenv.lock")[0] == 0
    # the other fix clears it too: the lock follows the environment
    assert cli("add", "-n", "live", "six")[0] == 0
    assert cli(*relock_fix.split()[1:])[0] == 0
    assert cli("lock", "--check", "live", "cuenv.lock")[0] == 0


def test_a_different_lockfile_is_not_overwritten_without_asking(cli, env: Path, work: Path) -> None:
    (work / "cuenv.lock").write_text("# the team's torch lock\n")
    code, out, err = cli("lock", "live", "-o", "cuenv.lock")
    assert code == 2 and err.splitlines() == [
        "error: Not written: cuenv.lock already exists and is not this lock.",
        "hint: Write over it with `cuenv lock live -o cuenv.lock --force`, or choose another file with -o."]
    assert (work / "cuenv.lock").read_text() == "# the team's torch lock\n"
    assert cli("lock", "live", "-o", "cuenv.lock", "--force")[0] == 0
    assert cli("lock", "live", "-o", "cuenv.lock")[0] == 0  # the same lock again: nothing lost, no question
    lock = work / "cuenv.lock"
    lock.write_text("# not locked: a package since removed\n" + lock.read_text())
    assert cli("lock", "live", "-o", "cuenv.lock")[0] == 0  # the same packages: only a comment changes, no question
    (work / "locks").mkdir()
    code, out, err = cli("lock", "live", "-o", "locks")
    assert (code, err) == (2, f"error: locks is a folder, not a file to write the lock to.\nhint: Name a file in it: "
                              f"`-o {Path('locks') / 'cuenv.lock'}`.\n")
    code, out, err = cli("lock", "live", "-o", "team locks/x.lock")  # a folder not made: refused, never made here
    assert code == 2 and err.splitlines() == [
        "error: team locks is not a folder, so the lock cannot be written to team locks/x.lock.",
        "hint: Create it first (`mkdir -p 'team locks'`), or name another file with -o."] and not (work / "team locks").exists()
    subprocess.run(err.split("`")[1], shell=True, check=True, cwd=work)  # the hint, as written
    assert cli("lock", "live", "-o", "team locks/x.lock")[0] == 0 and (work / "team locks" / "x.lock").is_file()
    (work / "team locks" / "x.lock").write_text("# someone's\n")  # the --force hint, quoted for a shell, run as written
    code, out, err = cli("lock", "live", "-o", "team locks/x.lock")
    assert code == 2 and "`cuenv lock live -o 'team locks/x.lock' --force`" in err, err
    assert cli(*shlex.split(err.split("`")[1])[1:])[0] == 0 and "# someone's" not in (work / "team locks" / "x.lock").read_text()
    (work / "a-file").write_text("")
    for output, first in [("", "error: -o names no file."),
                          ("new/", "error: new/ names a folder that does not exist."),
                          ("a-file/x.lock", "error: a-file is a file, not a folder, so the lock cannot be written to a-file/x.lock."),
                          ("-odd/x.lock", "error: -odd is not a folder, so the lock cannot be written to -odd/x.lock.")]:
        code, out, err = cli("lock", "live", f"--output={output}")
        assert code == 2 and err.splitlines()[0] == first, err
        if "mkdir" in err:  # `mkdir -p -- -odd`: a name that starts with a dash is not taken for an option
            subprocess.run(err.split("`")[1], shell=True, check=True, cwd=work)
            assert cli("lock", "live", f"--output={output}")[0] == 0 or output.endswith("/")
    assert (work / "-odd" / "x.lock").is_file() and (work / "new").is_dir() and not (work / "a-file").stat().st_size
    assert cli("add", "-n", "live", "six")[0] == 0
    code, out, err = cli("lock", "live", "-o", "cuenv.lock")
    assert code == 2 and "holds a different lock of cuda-12.1" in err, err


def test_lock_o_over_what_is_no_file_or_no_lock_ends_at_once_and_changes_nothing(cli, env: Path, work: Path) -> None:
    """-o given by someone else's script: a FIFO (the write blocked), a link to /dev/zero (the overwrite check read
    it without end), a file over the lock size limit (sparse, 33 MiB), a binary file: each refused, none touched."""
    os.mkfifo(work / "pipe.lock")
    (work / "zero.lock").symlink_to("/dev/zero")
    with open(work / "huge.lock", "wb") as f:
        f.truncate(33 * 1024 * 1024)
    (work / "bin.lock").write_bytes(b"\x00\xff")
    for name, says in [("pipe.lock", "pipe.lock is a FIFO (named pipe), not a regular file"),
                       ("zero.lock", "zero.lock is a device, not a regular file"),
                       ("huge.lock", "huge.lock already exists and is not this lock (Lockfile huge.lock is larger than"),
                       ("bin.lock", "bin.lock already exists and is not this lock (Lockfile bin.lock is a binary file")]:
        code, out, err = cli("lock", "live", "-o", name)
        assert code == 2 and says in err and len(err.splitlines()) == 2, err
    assert (work / "pipe.lock").is_fifo() and (work / "zero.lock").is_symlink()
    assert (work / "huge.lock").stat().st_size == 33 * 1024 * 1024 and (work / "bin.lock").read_bytes() == b"\x00\xff"


def test_kill_9_mid_change_leaves_the_environment_usable_and_the_next_change_undoes_it(
        cli, cuenv_exe, env: Path, work: Path) -> None:
    assert cli("lock", "live", "-o", "before.lock")[0] == 0
    journal = change.journal_path(env)
    proc = subprocess.Popen([*cuenv_exe, "add", "-n", "live", "python-dateutil"], stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL, start_new_session=True, env=killable(os.environ, work.parent / "tmp"))
    deadline = time.monotonic() + 120
    while not journal.exists() and proc.poll() is None and time.monotonic() < deadline:
        time.sleep(0.005)
    assert journal.exists(), "the change ended before it could be interrupted"
    os.killpg(proc.pid, signal.SIGKILL)
    proc.wait()
    # the environment still works: its CUDA runtime loads
    ran = subprocess.run([*cuenv_exe, "run", "live", "--", "python", "-c", LOAD_CUDART, "12"],
                         capture_output=True, text=True, timeout=120)
    assert ran.stdout.strip() == "12010", ran.stderr
    # the next lock puts the packages of before the change back, and locks exactly them
    assert cli("lock", "live", "-o", "after.lock")[0] == 0
    assert not journal.exists() and not {"tzdata", "python_dateutil"} & _names(env)
    assert (work / "after.lock").read_text() == (work / "before.lock").read_text()


def test_requirement_names_are_read_as_pip_reads_them() -> None:
    assert change.requirement_name("Python_Dateutil>=2") == "python-dateutil"
    with pytest.raises(UsageError, match="not a package requirement"):
        change.requirement_name("numpy; rm -rf /")


@given(st.from_regex(r"[A-Za-z0-9]([A-Za-z0-9._-]{0,20}[A-Za-z0-9])?", fullmatch=True))
def test_a_bare_name_is_read_without_a_parser_as_packaging_reads_it(text: str) -> None:
    """`cuenv add six` asks packaging nothing (its import was a fifth of the add); packaging agrees."""
    from packaging.requirements import Requirement

    assert change.requirement_name(text) == canonical(Requirement(text).name)
    assert satisfied(text, "1.0") and Requirement(text).specifier.contains("1.0", prereleases=True)


@given(st.text(max_size=60))
def test_any_text_is_a_requirement_name_or_a_one_line_refusal(text: str) -> None:
    try:
        name = change.requirement_name(text)
    except UsageError as exc:
        assert "\n" not in exc.message.replace(repr(text[:80]), "")
    else:
        assert name == canonical(name) and name


def test_export_warns_when_the_environment_drifted_from_its_lock(cli, env: Path, work: Path) -> None:
    from uv import find_uv_bin

    subprocess.run([find_uv_bin(), "pip", "install", "-q", "--python", str(env / "bin" / "python"), "six"], check=True,
                   env={**os.environ, "UV_CACHE_DIR": str(Path(os.environ["CUENV_CACHE_DIR"]) / "uv")}, timeout=120)
    code, out, err = cli("export", "live", "--format", "requirements")
    assert code == 0 and "six" not in out
    assert err.startswith("warning: 'live' drifted from its lock (+ six "), err
    hint = err.split("`")[1]
    assert hint == "cuenv lock live -o live.lock"
    code, out, err = cli(*hint.split()[1:])
    assert code == 0, err
    code, out, err = cli("export", "live", "--format", "requirements")
    assert code == 0 and "six @ https://" in out and err == ""


def test_after_cuenv_use_pip_is_the_environments_own(cuenv_exe, env: Path, tmp_path: Path) -> None:
    import shutil

    bash = shutil.which("bash")
    if bash is None:
        pytest.skip("no bash here")
    bindir = tmp_path / "bin"  # `cuenv` on PATH as a user has it
    bindir.mkdir()
    (bindir / "cuenv").write_text(f"#!/bin/sh\nexec {sys.executable} -m cuenv \"$@\"\n")
    (bindir / "cuenv").chmod(0o755)
    script = ('eval "$(cuenv shell-init bash)"; cuenv use live >/dev/null 2>&1; command -v pip; '
              'python -m pip --version; cuenv deactivate; command -v pip || echo none')
    done = subprocess.run([bash, "--norc", "--noprofile", "-c", script], capture_output=True, text=True, timeout=120,
                          env={**os.environ, "PATH": f"{bindir}:/usr/bin:/bin"})
    lines = done.stdout.splitlines()
    assert lines[0] == str(env / "bin" / "pip"), done.stderr
    assert f"from {_site(env) / 'pip'} " in lines[1]
    assert lines[2] != lines[0]
