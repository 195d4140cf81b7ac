from __future__ import annotations

import os
import threading
from pathlib import Path

import pytest

from cuenv.activation.target import CudaLayout
from cuenv.envs.meta import layout_from_json, layout_to_json
from cuenv.envs.store import Store, validate_name
from cuenv.errors import CuenvError, EnvironmentBusy, NotFound, UsageError
from tests.envs.metakit import make_meta


@pytest.fixture
def store(tmp_path):
    return Store(tmp_path / "home" / "envs")


def _make(store: Store, name: str, *, complete: bool = True) -> None:
    store.path(name).mkdir(parents=True)
    store.write_meta(name, make_meta(name, prefix=store.path(name)))
    if complete:
        store.mark_complete(name)


@pytest.mark.parametrize("name", ["a", "torch-cu121", "A.b_c-1", "x" * 64])
def test_valid_names(name):
    assert validate_name(name) == name


@pytest.mark.parametrize("name", ["", "-x", ".hidden", "a/b", "../x", "a b", "x" * 65, "é", "a\nb"])
def test_invalid_names(name):
    with pytest.raises(UsageError) as exc:
        validate_name(name)
    assert exc.value.exit_code == 2 and "not a valid environment name" in exc.value.message


def test_layout_round_trip(tmp_path):
    layout = CudaLayout(prefix=tmp_path, kind="conda", bin_dirs=(tmp_path / "bin",), lib_dirs=(tmp_path / "lib",),
                        include_dirs=(tmp_path / "include",), cuda_home=tmp_path)
    assert layout_from_json(layout_to_json(layout)) == layout


def test_incomplete_is_never_usable(store):
    _make(store, "half", complete=False)
    with pytest.raises(CuenvError) as exc:
        store.get("half")
    assert "incomplete" in exc.value.message and "--force" in exc.value.hint
    assert store.get("half", allow_incomplete=True).complete is False
    assert [(r.name, r.complete) for r in store.list()] == [("half", False)]


def test_marker_without_metadata_is_incomplete(store):
    store.path("x").mkdir(parents=True)
    (store.path("x") / ".cuenv").mkdir()
    (store.path("x") / ".cuenv" / "complete").write_text("")
    assert store.get("x", allow_incomplete=True).complete is False


def test_unknown_env_suggests_close_names(store):
    _make(store, "torch-cu121")
    with pytest.raises(NotFound) as exc:
        store.get("torch-cu12")
    assert "torch-cu121" in exc.value.hint


def test_remove_does_not_follow_symlink_out(store, tmp_path):
    outside = tmp_path / "precious"
    outside.mkdir()
    (outside / "keep.txt").write_text("data")
    store.envs_dir.mkdir(parents=True)
    os.symlink(outside, store.path("evil"))
    store.remove("evil")
    assert (outside / "keep.txt").read_text() == "data"
    assert not store.path("evil").exists()


def test_remove_does_not_follow_symlinks_inside(store, tmp_path):
    outside = tmp_path / "precious"
    outside.mkdir()
    (outside / "keep.txt").write_text("data")
    _make(store, "env")
    os.symlink(outside, store.path("env") / "link")
    store.remove("env")
    assert (outside / "keep.txt").read_text() == "data"
    assert not store.path("env").exists()


def test_a_remove_killed_half_way_is_still_ours(store, monkeypatch):
    """rmtree may take .cuenv before the rest: a kill -9 there must not leave a folder that no one can
    prove was cuenv's (the next `create --force` refused it as not ours; seen in .ci/run)."""
    import shutil

    _make(store, "victim")
    (store.path("victim") / "bin").mkdir()
    (store.path("victim") / "bin" / "python").write_text("")

    rmtree = shutil.rmtree

    def killed(path, *args, **kwargs):
        rmtree(Path(path) / ".cuenv")  # the first entries go, then the process dies
        raise SystemExit("killed")

    monkeypatch.setattr(shutil, "rmtree", killed)
    with pytest.raises(SystemExit):
        store.remove("victim")
    monkeypatch.undo()
    assert store.path("victim").is_dir() and not (store.path("victim") / ".cuenv").exists()
    assert store.owns("victim")  # claimed while it was being deleted
    store.remove("victim")
    assert not store.path("victim").exists() and not store.owns("victim")


def test_lock_is_exclusive(store):
    store.envs_dir.mkdir(parents=True)
    entered = threading.Event()
    release = threading.Event()

    def hold():
        with store.locked("a"):
            entered.set()
            release.wait(5)

    t = threading.Thread(target=hold)
    t.start()
    entered.wait(5)
    # flock locks belong to open file descriptions, so a second open in this process conflicts too
    with pytest.raises(EnvironmentBusy):
        with store.locked("a"):
            pass
    with store.locked("b"):
        pass
    release.set()
    t.join()
    with store.locked("a"):
        pass


def test_a_tool_started_under_the_lock_holds_it_after_cuenv_is_killed(store, tmp_path) -> None:
    """conda and uv run in their own session, so a kill -9 of cuenv leaves them running: while one lives,
    the environment stays locked (the next command must not swap the environment back under it)."""
    import signal
    import subprocess
    import sys
    import time

    pidfile = tmp_path / "tool.pid"
    script = ("import sys\nfrom pathlib import Path\nfrom cuenv import runner\nfrom cuenv.envs.store import Store\n"
              f"with Store(Path({str(store.envs_dir)!r})).locked('a'):\n"
              f"    runner.stream(['sh', '-c', 'echo $$ > {pidfile}; exec sleep 60'], timeout=120)\n")
    holder = subprocess.Popen([sys.executable, "-c", script], cwd=Path(__file__).resolve().parents[2])
    deadline = time.monotonic() + 60
    while not (pidfile.is_file() and pidfile.read_text().strip()) and time.monotonic() < deadline:
        time.sleep(0.01)
    tool = int(pidfile.read_text())
    holder.kill()  # kill -9 of cuenv alone: the tool it started lives on
    holder.wait()
    try:
        with pytest.raises(EnvironmentBusy) as busy:
            with store.locked("a"):
                pass
        assert "(or a tool one started)" in busy.value.message
    finally:
        os.kill(tool, signal.SIGKILL)
    for _ in range(6000):  # the tool's death frees the lock (the kernel closes its files as it exits)
        try:
            with store.locked("a"):
                break
        except EnvironmentBusy:
            time.sleep(0.01)
    else:
        pytest.fail("the lock outlived the tool")


def test_the_hook_spells_the_folder_names_of_cuenv_envs_folder() -> None:
    """The hook reads an environment's files without Python: its names must be folder's names."""
    from cuenv.envs import folder

    repo = Path(__file__).resolve().parents[2]
    for hook in ("cuenv.sh", "cuenv.fish"):
        text = (repo / "shell" / hook).read_text()
        assert f"/{folder.META_DIR}" in text
        for name in (folder.COMPLETE, folder.VERDICT_FILE, "activate."):
            assert f"/{name}" in text, (hook, name)
    assert folder.activate_script(Path("m"), "bash") == Path("m/activate.bash")


def test_no_other_module_spells_an_environment_file_name() -> None:
    """One home per name (issue 24 §4): code outside cuenv.envs.folder asks it for every path inside an
    environment. Exceptions: the completion's shell text (held to folder's names below) and a project's
    own ``.cuenv`` pin file (cuenv.envs.project.PROJECT_FILE, a file in the user's folder, not an environment's)."""
    import ast

    import cuenv
    from cuenv.envs import folder

    root = Path(cuenv.__file__).parent
    names = {folder.META_DIR, folder.META_FILE, folder.SOLUTION_FILE, folder.CHANGE_FILE, folder.SMOKE_SCRIPT}
    found = []
    for path in sorted(root.rglob("*.py")):
        rel = path.relative_to(root).as_posix()
        if rel in ("envs/folder.py", "cli/completion.py"):
            continue
        tree = ast.parse(path.read_text(encoding="utf-8"))
        docstrings = {id(n.value) for n in ast.walk(tree) if isinstance(n, ast.Expr)}
        found += [(rel, n.lineno) for n in ast.walk(tree) if isinstance(n, ast.Constant) and isinstance(n.value, str)
                  and id(n) not in docstrings and (n.value in names or f"/{folder.META_DIR}" in n.value
                                                   or n.value.startswith(f"{folder.META_DIR}/"))]
    from cuenv.envs.project import PROJECT_FILE

    assert PROJECT_FILE == folder.META_DIR and [rel for rel, _ in found] == ["envs/project.py"]


def test_completion_spells_the_folder_names_of_cuenv_envs_folder() -> None:
    """TAB lists environments by their completion marker without Python: the same names as folder's."""
    from cuenv.cli import completion
    from cuenv.envs import folder

    for script in (completion._POSIX_CORE, completion._FISH_CORE):  # noqa: SLF001 - the shell text itself is under test
        assert f"/{folder.META_DIR}/{folder.COMPLETE}" in script
