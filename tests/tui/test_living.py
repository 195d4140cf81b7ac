"""The TUI side of issue 26: the lock key asks before it writes over someone's lockfile, the detail's lock
status is `cuenv lock --check`'s answer right after the write, and Ctrl-C quits."""

from __future__ import annotations

import subprocess
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

    def pip_install(package: str) -> None:  # outside cuenv: the next change records it first, and says so
        done = subprocess.run([str(prefix / "bin" / "python"), "-m", "pip", "install", "-q", "--no-cache-dir", package],
                              capture_output=True, text=True, timeout=300)
        assert done.returncode == 0, done.stderr

    pip_install("idna")

    async def scenario(pilot, app):
        from cuenv.tui.screens.modals import ErrorScreen, PackagesScreen

        # a change that breaks the contract: refused in the error modal, nothing installed
        await pilot.press("a")
        assert isinstance(app.screen, PackagesScreen)
        assert not app.screen.query("#pypi")  # a venv's packages are all PyPI's: no pip-layer switch
        app.screen.query_one("#packages").value = "nvidia-cuda-runtime-cu11"
        await pilot.press("enter")
        await settle(pilot, app)
        assert isinstance(app.screen, ErrorScreen)
        assert "(Recorded before it, installed outside cuenv: idna " in app.screen.message
        await pilot.press("escape")
        await settle(pilot, app)
        pip_install("certifi")
        # an add: solved and checked, shown, installed on yes
        await pilot.press("a")
        app.screen.query_one("#packages").value = "six"
        await pilot.press("enter")
        await settle(pilot, app)
        assert isinstance(app.screen, ConfirmScreen) and app.screen.yes == "Install"
        shown.append(str(app.screen.detail))
        assert not list(site.glob("six-*.dist-info"))  # nothing installed before yes
        app.screen.dismiss(True)
        await settle(pilot, app)
        assert list(site.glob("six-*.dist-info"))
        await pilot.press("u")
        app.screen.query_one("#packages").value = "six"
        await pilot.press("enter")
        await settle(pilot, app)
        assert isinstance(app.screen, ConfirmScreen) and app.screen.yes == "Uninstall"
        app.screen.dismiss(True)
        await settle(pilot, app)

    seen = drive(app, scenario)
    assert shown[0].startswith("Recorded first, installed outside cuenv: certifi ") and shown[0].splitlines()[1].startswith("+ six ")
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


def test_the_help_dialog_scrolls_to_its_last_section_at_80x24(make_env, services: Services):
    """Its text is longer than the screen: the keys scroll it, and the last line shows above Close."""
    from textual.containers import VerticalScroll

    from cuenv.tui.screens.modals import HELP, HelpScreen

    from .test_snapshots import screen_text

    make_env("cuda-12.1")
    app = CuenvApp(services)
    last = [ln.strip() for ln in HELP.splitlines() if ln.strip()][-1]
    seen: list[list[str]] = []

    async def scenario(pilot, app):
        await pilot.press("question_mark")
        await settle(pilot, app)
        assert isinstance(app.screen, HelpScreen)
        seen.append(screen_text(app.export_screenshot()))
        await pilot.press("end")
        await settle(pilot, app)
        scroll, buttons = app.screen.query_one(VerticalScroll), app.screen.query_one(".buttons")
        assert scroll.region.bottom <= buttons.region.y <= 24 - buttons.region.height  # above Close, on the screen
        seen.append(screen_text(app.export_screenshot()))

    drive(app, scenario, size=(80, 24))
    assert not any(last in row for row in seen[0])  # hidden at first: there is more than fits
    assert any(last in row for row in seen[1])


def test_the_add_and_uninstall_keys_change_a_conda_prefix_s_pip_layer_with_its_switch(environ, services: Services,
                                                                                        tmp_path: Path):
    """A conda environment's dialog has the "PyPI (pip layer)" switch: turned on (tab, space), the keys act as
    `cuenv add --pypi` and `cuenv uninstall --pypi` (rattler against the suite's local channel; its Python is
    metadata only, so the prefix gets a real one laid over it as a venv, as tests/engines/test_change_conda.py does)."""
    import subprocess
    import sys

    import yaml
    from textual.widgets import Switch

    from cuenv.cli.main import main
    from cuenv.tui.screens.modals import PackagesScreen
    from tests.engines.channel import cached_channel

    recipe = yaml.safe_load((Path(__file__).resolve().parents[2] / "recipes" / "cuda-12.1.yaml").read_text())
    recipe["name"] = "local-cuda-12.1"
    recipe["install"]["conda"] = {"channels": [cached_channel().as_uri()], "specs": ["cuda-version=12.1", "cuda-cudart"],
                                  "nvcc": False}
    (tmp_path / "recipes").mkdir()
    (tmp_path / "recipes" / "local-cuda-12.1.yaml").write_text(yaml.safe_dump(recipe, sort_keys=False))
    assert main(["create", "local-cuda-12.1", "--engine", "rattler", "-n", "c", "--recipes", str(tmp_path / "recipes"), "-q"],
                environ=environ) == 0
    prefix = Path(environ["CUENV_HOME"]) / "envs" / "c"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(prefix)], check=True, timeout=120)
    site = next(prefix.glob("lib/python3*/site-packages"))
    app = CuenvApp(services)
    shown: list[str] = []

    async def change(pilot, key: str, text: str) -> None:
        await pilot.press(key)
        assert isinstance(app.screen, PackagesScreen)
        await pilot.press(*text)
        await pilot.press("tab", "space")  # the switch: PyPI (pip layer)
        assert app.screen.query_one("#pypi", Switch).value
        await pilot.press("tab", "enter")  # Check
        await settle(pilot, app)
        assert isinstance(app.screen, ConfirmScreen)
        shown.append(str(app.screen.detail))
        app.screen.dismiss(True)
        await settle(pilot, app)

    async def scenario(pilot, app):
        await change(pilot, "a", "six")
        assert list(site.glob("six-*.dist-info")) and not list(prefix.glob("conda-meta/six-*.json"))
        await change(pilot, "u", "six")

    seen = drive(app, scenario)
    assert shown[0].startswith("+ six ") and shown[1].startswith("- six "), shown
    assert not list(site.glob("six-*.dist-info"))
    done = [m.text for m in seen if isinstance(m, msg.ActionDone)]
    assert any(t.startswith("Changed c: + six ") for t in done) and any(t.startswith("Changed c: - six ") for t in done)
