"""`cuenv add` plans from uv's cache while it asks the index (issue 26's benchmark): the cached answer,
checked, is installed at once and kept only when the index has nothing newer than it; when the index
moved, the guess is undone and the index's answer is planned, checked and installed as if there had
been none.

A real local index (laid out by tests/engines/pypimirror.py) serves small wheels, its pages late as a
far index's are; between two adds it gets a new version, so uv's cache and the index disagree. What is
installed then is compared with what uv itself resolves against that index."""

from __future__ import annotations

import http.server
import json
import logging
import os
import time
from pathlib import Path
from typing import NamedTuple

import pytest

from cuenv.envs import change
from cuenv.envs.changeplan import ChangePlan, ChangeRefused
from cuenv.errors import ToolError
from tests.binaries.binkit import make_wheel
from tests.engines import pypimirror


@pytest.fixture
def env(cli, envs: Path) -> Path:
    code, out, err = cli("create", "cuda-12.1", "--engine", "venv", "-n", "live")
    assert code == 0, err
    return envs / "live"


def _version(prefix: Path, name: str) -> str | None:
    found = list(prefix.glob(f"lib/python3*/site-packages/{name}-*.dist-info"))
    return found[0].name.removesuffix(".dist-info").split("-")[1] if found else None


def _publish(root: Path, wheels: list[Path]) -> None:
    """The index now lists ``wheels``; its pages dated later than any earlier copy (http.server answers
    a revalidation by whole seconds of the file's time)."""
    pypimirror.build_mirror(root, wheels)
    later = time.time() + 5
    for page in root.glob("simple/**/index.html"):
        os.utime(page, (later, later))


class _FarIndex(http.server.SimpleHTTPRequestHandler):
    """Pages 0.3 s late, each to be asked again every time (``no-cache``, as this machine's proxy
    behaves): uv revalidates them, so the index's answer can differ from its cache's."""

    def end_headers(self) -> None:
        self.send_header("Cache-Control", "no-cache")
        super().end_headers()

    def do_GET(self) -> None:  # noqa: N802 - http.server's name
        if self.path.startswith("/simple/"):
            time.sleep(0.3)
        super().do_GET()

    def log_message(self, *args: object) -> None:
        pass


def test_the_cached_answer_is_kept_when_the_index_agrees_and_undone_when_it_moved(
        cli, env: Path, tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    wheels = tmp_path / "wheels"
    one = make_wheel(wheels, "tinypkg", "1.0", {"tinypkg/__init__.py": b"V = 1\n"})
    two = make_wheel(wheels, "tinypkg", "2.0", {"tinypkg/__init__.py": b"V = 2\n"})
    root = tmp_path / "index"
    _publish(root, [one])
    caplog.set_level(logging.INFO, logger="cuenv.envs.change")
    with pypimirror.serve_with(root, _FarIndex) as base:
        environ = dict(os.environ, CUENV_MIRRORS=f"pypi={base}/simple")
        code, out, err = cli("add", "-n", "live", "tinypkg", environ=environ)  # uv's cache has no page yet
        assert code == 0 and "+ tinypkg 1.0" in out, err
        assert "uv's cached answer" not in caplog.text
        assert cli("uninstall", "-n", "live", "tinypkg", environ=environ)[0] == 0

        code, out, err = cli("add", "-n", "live", "tinypkg", environ=environ)  # cache and index agree
        assert code == 0 and "+ tinypkg 1.0" in out, err
        assert "uv's cached answer is the index's too" in caplog.text
        assert cli("uninstall", "-n", "live", "tinypkg", environ=environ)[0] == 0

        _publish(root, [one, two])  # the index moved; uv's cache still says 1.0
        caplog.clear()
        code, out, err = cli("add", "-n", "live", "tinypkg", environ=environ)
        assert code == 0, err + out
        assert "differs from the index's: undone, planned again" in caplog.text, out
        assert "+ tinypkg 2.0" in out and "1.0" not in out, out
    assert _version(env, "tinypkg") == "2.0"
    solution = json.loads((env / ".cuenv" / "solution.json").read_text(encoding="utf-8"))
    assert [p["version"] for p in solution["packages"] if p["name"] == "tinypkg"] == ["2.0"]
    meta = json.loads((env / ".cuenv" / "meta.json").read_text(encoding="utf-8"))
    assert [c["verb"] for c in meta["changes"]] == ["add", "remove", "add", "remove", "add"]  # the guess is not recorded
    assert not (env / ".cuenv" / "change.json").exists()


def _uvs_pick(env: Path, index: str, requirement: str) -> dict[str, str]:
    """What uv itself resolves ``requirement`` to on ``index`` for the environment's Python, asking the
    index afresh (``--no-cache``): name -> version."""
    import subprocess

    from uv import find_uv_bin

    from cuenv.engines.venv import pylock_reader

    tomllib = pylock_reader()[0]  # tomli on Python 3.10

    done = subprocess.run([find_uv_bin(), "pip", "compile", "-", "--format", "pylock.toml", "--no-header", "--quiet",
                           "--no-cache", "--index-url", index, "--python", str(env / "bin" / "python")],
                          input=requirement + "\n", capture_output=True, text=True, check=True)
    return {p["name"]: p["version"] for p in tomllib.loads(done.stdout)["packages"]}


@pytest.mark.parametrize("moved", ["a newer dependency", "a pre-release of what was asked for"])
def test_an_index_that_moved_where_the_solve_only_would_see_it_installs_what_uv_picks(
        cli, env: Path, tmp_path: Path, caplog: pytest.LogCaptureFixture, moved: str) -> None:
    """The index is asked only whether anything newer than uv's cached answer is there (one round trip,
    no wheel's metadata). A newer version of a dependency, or a pre-release (which the solve itself
    passes over), counts as moved: the change is then planned from the index's full answer, and what is
    installed is what uv itself resolves against the same index."""
    wheels = tmp_path / "wheels"
    pkg = make_wheel(wheels, "tinypkg", "1.0", {"tinypkg/__init__.py": b"V = 1\n"}, requires=("tinydep>=1",))
    dep = make_wheel(wheels, "tinydep", "1.0", {"tinydep/__init__.py": b"V = 1\n"})
    newer = make_wheel(wheels, "tinydep", "1.1", {"tinydep/__init__.py": b"V = 11\n"}) if moved.endswith("dependency") \
        else make_wheel(wheels, "tinypkg", "2.0rc1", {"tinypkg/__init__.py": b"V = 2\n"}, requires=("tinydep>=1",))
    root = tmp_path / "index"
    _publish(root, [pkg, dep])
    caplog.set_level(logging.INFO, logger="cuenv.envs.change")
    with pypimirror.serve_with(root, _FarIndex) as base:
        environ = dict(os.environ, CUENV_MIRRORS=f"pypi={base}/simple")
        for _ in range(2):  # the first fills uv's cache; the second is answered from it, the index agreeing
            code, out, err = cli("add", "-n", "live", "tinypkg", environ=environ)
            assert code == 0 and "+ tinypkg 1.0" in out and "+ tinydep 1.0" in out, err + out
            assert cli("uninstall", "-n", "live", "tinypkg", "tinydep", environ=environ)[0] == 0, moved
        assert "uv's cached answer is the index's too" in caplog.text

        _publish(root, [pkg, dep, newer])
        caplog.clear()
        code, out, err = cli("add", "-n", "live", "tinypkg", environ=environ)
        assert code == 0, err + out
        assert "differs from the index's: undone, planned again" in caplog.text, out
        picked = _uvs_pick(env, f"{base}/simple", "tinypkg")
    assert picked == ({"tinypkg": "1.0", "tinydep": "1.1"} if moved.endswith("dependency") else
                      {"tinypkg": "1.0", "tinydep": "1.0"})  # uv leaves a pre-release out unless asked
    assert {n: _version(env, n) for n in picked} == picked
    assert all(f"+ {n} {v}" in out for n, v in picked.items()), out


def test_a_dry_run_asks_the_index_only(cli, env: Path, caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.INFO, logger="cuenv.envs.change")
    code, out, err = cli("add", "-n", "live", "six", "--dry-run")
    assert code == 0 and "Would change 'live'" in out, err
    assert "uv's cached answer" not in caplog.text and _version(env, "six") is None


class _P(NamedTuple):
    """A package as the plan holds it (cuenv.engines.Package's name and version)."""

    name: str
    version: str


X1, X2, DEP = _P("x", "1.0"), _P("x", "2.0"), _P("dep", "1.0")


def _draft(install: tuple[_P, ...]) -> ChangePlan:
    return ChangePlan("live", "add", ("x",), (), install=install)


class _Index:
    """The index's answer to one question (cuenv.engines.venv.Begun's part that change._predicted uses)."""

    def __init__(self, answer: tuple[_P, ...] | None) -> None:
        self.answer, self.cancelled = answer, False

    def result(self) -> tuple[_P, ...]:
        if self.answer is None:
            raise ToolError("the index could not be reached")
        return self.answer

    def cancel(self) -> None:
        self.cancelled = True


def _refused(_answer: tuple[_P, ...]) -> ChangePlan:
    raise ChangeRefused("would pull CUDA 13 wheels")


def _no_cache(**_: object) -> tuple[_P, ...]:
    raise ToolError("uv: no cached page (offline)")


def _cached(**_: object) -> tuple[_P, ...]:
    return (X1,)


def _unasked(requirements: tuple[str, ...]) -> _Index:
    raise AssertionError(f"nothing else to ask the index about, yet asked for {requirements}")


def test_the_index_decides_where_the_cache_cannot_answer_or_its_answer_is_refused() -> None:
    index = _Index((X2,))
    assert change._predicted(_no_cache, _draft, index, _unasked, names={"x"}) is None
    assert change._predicted(_cached, _refused, index, _unasked, names={"x"}) is None  # the index may know better
    assert change._predicted(_cached, lambda a: _draft(()), index, _unasked, names={"x"}) is None  # nothing to install
    guess = change._predicted(_cached, _draft, index, _unasked, names={"x"})
    assert guess is not None and guess.install == (X1,)
    assert guess.guess is not None and guess.guess.confirmed() is False  # the index says x 2.0
    same = change._predicted(lambda **_: (X2,), _draft, index, _unasked, names={"x"})
    assert same is not None and same.guess is not None and same.guess.confirmed() is True
    same.guess.cancel()
    assert index.cancelled


def test_an_index_that_fails_never_confirms_a_guess() -> None:
    guess = change._predicted(_cached, _draft, _Index(None), _unasked, names={"x"})
    assert guess is not None and guess.guess is not None and guess.guess.confirmed() is False


@pytest.mark.parametrize(("newest", "same"), [
    ((DEP,), True),                        # nothing newer on the index
    ((_P("dep", "1.1"),), False),          # a newer dependency: the solve would pick it
    ((DEP, _P("other", "1.0")), False),    # an answer that is not the cache's package set
])
def test_each_package_not_asked_for_is_asked_about_at_its_version_or_later(newest: tuple[_P, ...], same: bool) -> None:
    asked: list[tuple[str, ...]] = []
    begun: list[_Index] = []

    def ask(requirements: tuple[str, ...]) -> _Index:
        asked.append(requirements)
        begun.append(_Index(newest))
        return begun[-1]

    first = _Index((X1,))
    guess = change._predicted(lambda **_: (X1, DEP), _draft, first, ask, names={"x"})
    assert asked == [("dep>=1.0",)]  # begun at once, before the install
    assert guess is not None and guess.guess is not None and guess.guess.confirmed() is same
    guess.guess.cancel()
    assert first.cancelled and begun[0].cancelled


def test_a_local_version_is_asked_about_by_its_public_part() -> None:
    asked: list[tuple[str, ...]] = []

    def ask(requirements: tuple[str, ...]) -> _Index:
        asked.append(requirements)
        return _Index(())

    change._predicted(lambda **_: (X1, _P("torch", "2.1.0+cu121")), _draft, _Index((X1,)), ask, names={"x"})
    assert asked == [("torch>=2.1.0",)]  # PEP 440 allows no local version after >=


def test_a_change_that_fails_before_the_index_answered_stops_asking_it(
        cli, env: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The environment's lock is busy: apply fails at once, and the questions begun to the index for the
    guess are ended and their files removed; nothing was installed."""
    from cuenv.config import resolve
    from cuenv.engines.venv import VenvEngine
    from cuenv.envs.store import Store
    from cuenv.errors import EnvironmentBusy

    assert cli("add", "-n", "live", "six")[0] == 0 and cli("uninstall", "-n", "live", "six")[0] == 0  # uv's cache has it
    begun = []
    real = VenvEngine.begin_resolve

    def recorded(self: VenvEngine, *args: object, **kwargs: object) -> object:
        begun.append(real(self, *args, **kwargs))  # type: ignore[arg-type]  # passed on as given
        return begun[-1]

    monkeypatch.setattr(VenvEngine, "begin_resolve", recorded)
    environ = dict(os.environ)
    settings = resolve({}, environ)
    planned = change.plan(settings, environ, name="live", verb="add", packages=["six"], predict=True)
    assert planned.guess is not None and len(begun) == 1  # six alone, as asked: nothing else to ask about
    with Store.from_settings(settings).locked("live"), pytest.raises(EnvironmentBusy):
        change.apply(settings, environ, planned)
    assert begun[0]._child.proc.returncode is not None and not Path(begun[0]._tmp.name).exists()
    assert _version(env, "six") is None
