"""Where the keys go: at start-up, across tab switches, in the filter, and across table refreshes.

A terminal delivers keys as they come, while workers still read the disk (the recipes after the
first frame, a reload of the environments); these tests hold those workers (HeldServices) or send
keys in one burst, as a fast typist does. The first screen itself is read before it is drawn.
"""

from __future__ import annotations

import asyncio
import threading

import pytest
from textual import events
from textual.widgets import TabbedContent

from cuenv.tui.app import CuenvApp
from cuenv.tui.services import Services

from .conftest import settle, until
from .test_pilot import SIZE, detail, table_names


class HeldServices(Services):
    """Real services whose reads wait for the test: ``start`` holds the recipes (read by a worker
    after the first frame); ``hold_next()`` holds the next environment read after it has read the
    disk. The first screen (machine, environments) is read on the UI thread and never held."""

    def __init__(self, *a, **kw) -> None:
        super().__init__(*a, **kw)
        self.start = threading.Event()
        self.release = threading.Event()
        self.held = threading.Event()
        self._hold = False

    def recipes(self, machine):
        self.start.wait(30)
        return super().recipes(machine)

    def environments(self):
        rows = super().environments()
        if self._hold:
            self._hold = False
            self.held.set()
            self.release.wait(30)
        return rows

    def hold_next(self) -> None:
        self.release.clear()
        self.held.clear()
        self._hold = True

    def open(self) -> None:
        self.start.set()
        self.release.set()


def run(app: CuenvApp, services: HeldServices, scenario) -> None:
    async def main() -> None:
        async with app.run_test(size=SIZE) as pilot:
            try:
                await scenario(pilot, app)
            finally:
                services.open()  # a failed assertion must not leave worker threads waiting

    asyncio.run(main())


async def burst(pilot, *keys: str) -> None:
    """Keys that arrive together, before the app has handled the first (Pilot.press waits between)."""
    for key in keys:
        event = events.Key(key, key if len(key) == 1 else None)
        event.set_sender(pilot.app)
        pilot.app._driver.send_message(event)
    await pilot.pause()


def where(app: CuenvApp) -> tuple[str, str | None]:
    """(the active tab, the id of the focused widget)"""
    return app.screen.query_one(TabbedContent).active, getattr(app.focused, "id", None)


@pytest.mark.parametrize("with_env", [False, True], ids=["empty-store", "one-environment"])
def test_the_keys_start_on_the_environments_table(with_env: bool, make_env, settings, environ):
    if with_env:
        make_env("cuda-12.1")
    services = HeldServices(settings, environ)
    app = CuenvApp(services)

    async def scenario(pilot, app):
        # The first frame: the environments are there, the recipes are still being read.
        assert table_names(app) == (["cuda-12.1"] if with_env else [])
        assert where(app) == ("envs", "env-table")
        await pilot.press("2")  # before the recipes are read (the tab may not even be mounted yet)
        assert where(app) in (("recipes", "recipe-table"), ("recipes", None))  # never the hidden tab's filter
        await until(pilot, lambda: where(app) == ("recipes", "recipe-table"), "the focus")  # mounted: there, recipes still held
        await pilot.press("1")
        assert where(app) == ("envs", "env-table")
        services.open()
        await settle(pilot, app)
        assert where(app) == ("envs", "env-table")  # the recipes' load does not move the focus
        await pilot.press("2")
        assert where(app) == ("recipes", "recipe-table")
        assert "cuda-12.1" in table_names(app, "#recipe-table")

    run(app, services, scenario)


def test_keys_typed_together_follow_the_tab_and_digits_in_the_filter_are_text(make_env, settings, environ):
    make_env("cuda-12.1")
    make_env("train")
    services = HeldServices(settings, environ)
    services.open()
    app = CuenvApp(services)

    async def scenario(pilot, app):
        await settle(pilot, app)
        await pilot.press("2")
        await settle(pilot, app)
        await burst(pilot, "1", "down")  # the Down belongs to the environments table, now shown
        await settle(pilot, app)
        assert where(app) == ("envs", "env-table")
        assert app.screen.query_one("#recipe-table").cursor_row == 0
        assert app.screen.query_one("#env-table").cursor_row == 1
        assert detail(app).startswith("train  cuda-12.1 | venv")
        await pilot.press("slash", "1", "2", ".", "1")  # names and versions hold digits: text here
        assert where(app) == ("envs", "env-filter")
        assert app.screen.query_one("#env-filter").value == "12.1"
        await pilot.press("down")  # back to the table, the filter kept
        assert where(app) == ("envs", "env-table")
        await pilot.press("slash", "t", "r", "a")
        assert table_names(app) == ["train"]
        await pilot.press("escape")  # clears the filter and returns
        assert where(app) == ("envs", "env-table")
        assert table_names(app) == ["cuda-12.1", "train"]
        await pilot.press("2")  # at once: the table has the keys again
        assert where(app) == ("recipes", "recipe-table")
        await pilot.click("#--content-tab-envs")  # a click on a tab gives the keys to its table too
        await pilot.pause()
        assert where(app) == ("envs", "env-table")

    run(app, services, scenario)


def test_a_refresh_keeps_the_cursor_and_never_shows_a_stale_read(make_env, settings, environ):
    for name in ("a-env", "b-env", "c-env"):
        make_env(name)
    services = HeldServices(settings, environ)
    services.open()
    app = CuenvApp(services)
    table = lambda: app.screen.query_one("#env-table")  # noqa: E731 - a one-line query, re-run at each use

    async def scenario(pilot, app):
        await settle(pilot, app)
        await pilot.press("down", "x", "left", "enter")  # remove b-env: the cursor takes the row that took its place
        await settle(pilot, app)
        assert table_names(app) == ["a-env", "c-env"]
        assert table().cursor_row == 1 and detail(app).startswith("c-env  cuda-12.1")

        services.hold_next()
        await pilot.press("r")  # a reload, held after reading the disk...
        await until(pilot, services.held.is_set, "the held read")
        await pilot.press("up")  # ...while the user moves
        services.release.set()
        await settle(pilot, app)
        assert table().cursor_row == 0 and detail(app).startswith("a-env  cuda-12.1")

        services.hold_next()
        await pilot.press("r")  # this read saw a-env...
        await until(pilot, services.held.is_set, "the held read")
        await pilot.press("x", "left", "enter")  # ...which is removed, and a newer read lists c-env alone
        await until(pilot, lambda: table_names(app) == ["c-env"], "the newer read")
        services.release.set()  # the older read arrives last
        await settle(pilot, app)
        assert table_names(app) == ["c-env"]  # a removed environment never comes back
        assert detail(app).startswith("c-env  cuda-12.1")

    run(app, services, scenario)


def test_a_tab_pressed_before_its_table_is_mounted_keeps_the_keys_off_the_hidden_tab(monkeypatch, settings, environ):
    """On a loaded machine `2` can come before the recipes tab is mounted (Lazy): the environments table is
    hidden then, and Textual moved the focus to its sibling, the hidden filter, whose focus switched the tab
    back to the environments (CI, 2026-12-03). Here the mount is held until the test lets it go."""
    from textual.lazy import Lazy

    mounted = asyncio.Event()
    mount = Lazy.mount_composed_widgets

    async def held(self, widgets):
        async def later():
            await mounted.wait()
            await mount(self, widgets)

        self.run_worker(later())

    monkeypatch.setattr(Lazy, "mount_composed_widgets", held)
    services = HeldServices(settings, environ)
    app = CuenvApp(services)

    async def scenario(pilot, app):
        assert not app.screen.query("#recipe-table")
        await pilot.press("2")
        for _ in range(5):
            await pilot.pause()
            assert where(app) == ("recipes", None)  # on the recipes tab; a key typed now goes to no widget
        mounted.set()
        await until(pilot, lambda: where(app) == ("recipes", "recipe-table"), "the focus")

    run(app, services, scenario)
