"""`cuenv add` plans from uv's cache while it asks the index (issue 26's benchmark): the cached answer,
checked, is installed at once and kept only when the index's answer is the same; when the index moved,
the guess is undone and the index's answer is planned, checked and installed as if there had been none.

A real local index (laid out by tests/engines/pypimirror.py) serves a small wheel, its pages a second
and a half late as a far index's are (so uv's cache answers first); between two adds it gets a new version,
so uv's cache and the index disagree."""

from __future__ import annotations

import http.server
import json
import logging
import os
import time
from pathlib import Path

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
    """Pages a second and a half late, each to be asked again every time (``no-cache``, as this machine's proxy
    behaves): uv revalidates them, so the index's answer can differ from its cache's."""

    def end_headers(self) -> None:
        self.send_header("Cache-Control", "no-cache")
        super().end_headers()

    def do_GET(self) -> None:  # noqa: N802 - http.server's name
        if self.path.startswith("/simple/"):
            time.sleep(1.5)
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


def test_a_dry_run_asks_the_index_only(cli, env: Path, caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.INFO, logger="cuenv.envs.change")
    code, out, err = cli("add", "-n", "live", "six", "--dry-run")
    assert code == 0 and "Would change 'live'" in out, err
    assert "uv's cached answer" not in caplog.text and _version(env, "six") is None


def _draft(install: tuple[str, ...]) -> ChangePlan:
    return ChangePlan("live", "add", ("x",), (), install=install)


class _Index:
    """The index's answer (cuenv.engines.venv.Begun's part that change._predicted uses)."""

    def __init__(self, answer: tuple[str, ...] | None) -> None:
        self.answer, self.cancelled = answer, False

    def result(self) -> tuple[str, ...]:
        if self.answer is None:
            raise ToolError("the index could not be reached")
        return self.answer

    def cancel(self) -> None:
        self.cancelled = True


def _refused(_answer: tuple[str, ...]) -> ChangePlan:
    raise ChangeRefused("would pull CUDA 13 wheels")


def _no_cache(*, offline: bool = False) -> tuple[str, ...]:
    raise ToolError("uv: no cached page (offline)")


def _cached(*, offline: bool = False) -> tuple[str, ...]:
    return ("x-0",)


def test_the_index_decides_where_the_cache_cannot_answer_or_its_answer_is_refused() -> None:
    index = _Index(("x-1",))
    assert change._predicted(_no_cache, _draft, index) is None
    assert change._predicted(_cached, _refused, index) is None  # the index may know better: no refusal from a cache
    assert change._predicted(_cached, lambda a: _draft(()), index) is None  # nothing to install
    guess = change._predicted(_cached, _draft, index)
    assert guess is not None and guess.install == ("x-0",)
    assert guess.guess is not None and guess.guess.confirmed() is False  # the index says x-1
    same = change._predicted(lambda offline=False: ("x-1",), _draft, index)
    assert same is not None and same.guess is not None and same.guess.confirmed() is True
    same.guess.cancel()
    assert index.cancelled


def test_an_index_that_fails_never_confirms_a_guess() -> None:
    guess = change._predicted(_cached, _draft, _Index(None))
    assert guess is not None and guess.guess is not None and guess.guess.confirmed() is False


def test_a_change_that_fails_before_the_index_answered_stops_asking_it(cli, env: Path) -> None:
    """The environment's lock is busy: apply fails at once, and the resolve begun for the guess is ended
    and its files removed; nothing was installed."""
    from cuenv.config import resolve
    from cuenv.envs.store import Store
    from cuenv.errors import EnvironmentBusy

    assert cli("add", "-n", "live", "six")[0] == 0 and cli("uninstall", "-n", "live", "six")[0] == 0  # uv's cache has it
    environ = dict(os.environ)
    settings = resolve({}, environ)
    planned = change.plan(settings, environ, name="live", verb="add", packages=["six"], predict=True)
    assert planned.guess is not None
    begun = planned.guess._cancel.__self__  # type: ignore[attr-defined]  # the engine's Begun
    with Store.from_settings(settings).locked("live"), pytest.raises(EnvironmentBusy):
        change.apply(settings, environ, planned)
    assert begun._child.proc.returncode is not None and not Path(begun._tmp.name).exists()
    assert _version(env, "six") is None
