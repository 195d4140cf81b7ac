"""The TUI side of issue 26: the lock key asks before it writes over someone's lockfile, the detail's lock
status is `cuenv lock --check`'s answer right after the write, and Ctrl-C quits."""

from __future__ import annotations

from pathlib import Path

from cuenv.envs.locksync import check_drift
from cuenv.tui import messages as msg
from cuenv.tui.app import CuenvApp
from cuenv.tui.screens.modals import ConfirmScreen, PathScreen
from cuenv.tui.services import Services

from .conftest import settle
from .test_pilot import detail, drive


def test_lock_asks_before_overwriting_and_the_detail_then_says_what_lock_check_says(
        make_env, services: Services, settings, tmp_path: Path, monkeypatch):
    make_env("cuda-12.1")
    monkeypatch.chdir(tmp_path)
    theirs = "# the team's torch lock\n"
    (tmp_path / "cuenv.lock").write_text(theirs)
    app = CuenvApp(services)
    answers: list[str] = []

    async def scenario(pilot, app):
        await pilot.press("l")
        assert isinstance(app.screen, PathScreen)
        await pilot.press("enter")
        await settle(pilot, app)
        assert isinstance(app.screen, ConfirmScreen)  # asked, nothing written yet
        assert (tmp_path / "cuenv.lock").read_text() == theirs
        await pilot.press("escape")  # no
        await settle(pilot, app)
        assert (tmp_path / "cuenv.lock").read_text() == theirs
        await pilot.press("l")
        await pilot.press("enter")
        await settle(pilot, app)
        assert isinstance(app.screen, ConfirmScreen)
        app.screen.dismiss(True)  # yes
        await settle(pilot, app)
        answers.append(detail(app))

    seen = drive(app, scenario)
    done = [m.text for m in seen if isinstance(m, msg.ActionDone)]
    assert done == ["Kept cuenv.lock; nothing written.", f"Wrote the lockfile of cuda-12.1 to {Path('cuenv.lock')}."]
    assert (tmp_path / "cuenv.lock").read_text().startswith("# cuenv lockfile")
    assert check_drift(settings, services.environ, name="cuda-12.1", lock_path="cuenv.lock").matches
    assert "lockfile cuenv.lock: matches" in answers[0]


def test_ctrl_c_quits(make_env, services: Services):
    make_env("cuda-12.1")
    app = CuenvApp(services)

    quit_asked: list[bool] = []

    async def scenario(pilot, app):
        app.exit = lambda *a, **k: quit_asked.append(True)  # type: ignore[method-assign]  # seen, not done: run_test ends it
        await pilot.press("ctrl+c")
        await pilot.pause()

    drive(app, scenario)
    assert quit_asked == [True]


def test_add_and_uninstall_keys_check_show_ask_then_install(make_env, services: Services):
    prefix = make_env("cuda-12.1")
    app = CuenvApp(services)
    site = next(prefix.glob("lib/python3*/site-packages"))
    shown: list[str] = []

    async def scenario(pilot, app):
        from cuenv.tui.screens.modals import ErrorScreen, PackagesScreen

        # a change that breaks the contract: refused in the error modal, nothing installed
        await pilot.press("a")
        assert isinstance(app.screen, PackagesScreen)
        app.screen.query_one("#packages").value = "nvidia-cuda-runtime-cu11"
        await pilot.press("enter")
        await settle(pilot, app)
        assert isinstance(app.screen, ErrorScreen)
        await pilot.press("escape")
        await settle(pilot, app)
        # an add: solved and checked, shown, installed on yes
        await pilot.press("a")
        app.screen.query_one("#packages").value = "six"
        await pilot.press("enter")
        await settle(pilot, app)
        assert isinstance(app.screen, ConfirmScreen)
        shown.append(str(app.screen.detail))
        assert not list(site.glob("six-*.dist-info"))  # nothing installed before yes
        app.screen.dismiss(True)
        await settle(pilot, app)
        assert list(site.glob("six-*.dist-info"))
        await pilot.press("u")
        app.screen.query_one("#packages").value = "six"
        await pilot.press("enter")
        await settle(pilot, app)
        assert isinstance(app.screen, ConfirmScreen)
        app.screen.dismiss(True)
        await settle(pilot, app)

    seen = drive(app, scenario)
    assert shown[0].startswith("+ six ")
    assert not list(site.glob("six-*.dist-info"))
    done = [m.text for m in seen if isinstance(m, msg.ActionDone)]
    assert any(t.startswith("Changed cuda-12.1: + six ") for t in done)
    assert any(t.startswith("Changed cuda-12.1: - six ") for t in done)


def test_enter_on_no_in_the_remove_dialog_says_nothing_was_removed(make_env, services: Services):
    path = make_env("kept")
    app = CuenvApp(services)

    async def scenario(pilot, app):
        await pilot.press("x")
        assert isinstance(app.screen, ConfirmScreen)
        await pilot.press("enter")  # the focus starts on No
        await settle(pilot, app)
        assert not isinstance(app.screen, ConfirmScreen)

    seen = drive(app, scenario)
    assert path.is_dir()
    assert [m.text for m in seen if isinstance(m, msg.ActionDone)] == ["Kept kept; nothing removed."]
