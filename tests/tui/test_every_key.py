"""Every binding and every button of every screen, pressed at 80x24 and 120x36: nothing crashes.

Issue 18: `l` then Write crashed the app, and no test pressed that button. Here each screen
(the two tabs, the filter, and every modal: remove, export, lock, doctor, help, create, an error,
and the create panel's Cancel) is reached from a fresh start, and then each key the footer and
Textual consider active, and each button, is pressed in turn; after each one the app is brought
back to where it was. A crash fails the run (Textual re-raises it when the Pilot leaves); a
worker's error must be a CuenvError in a modal, never "internal error". A button is pressed by a
click at its place on the screen, so a button cut off at 80x24 fails too.

One app walks all the screens of a size (issue 24 §7): a new app only after a key that ends one (quit,
use), and the way back to a screen only when the last key changed something the next one starts from
(the screens open, the tab, the focus, the filter, a cursor or scroll, a running create); no way back
to the start when the key already left the app there (a modal's Close).
"""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from cuenv.tui.app import CuenvApp
from cuenv.tui.screens.modals import CreateScreen, ErrorScreen
from cuenv.tui.services import Services
from cuenv.tui.widgets.recipes import RecipesView

from .conftest import make_incomplete, settle, until
from .test_pilot import GatedServices

SIZES = {"80x24": (80, 24), "120x36": (120, 36)}

# screen -> how to reach it from a fresh start (the environments tab, its table focused): keys, or
# a step run on the app (the create dialog is opened on cuda-12.1, whose name is taken: pressing
# Create then ends in the "already exists" error, not in a download). In the order toured: remove
# last, as its Yes removes an environment the others use.
SCREENS: dict[str, tuple] = {
    "environments": (),
    "filter": ("slash",),
    "recipes": ("2",),
    "help": ("question_mark",),
    "export": ("e",),
    "lock": (lambda app: _select(app, "#env-table", "cuda-12.1"), "l"),  # a complete environment: Write writes
    "doctor": ("d",),
    "create": ("2", lambda app: _select(app, "#recipe-table", "cuda-12.1"), "c"),
    "remove": ("x",),
}


def _select(app, table_id: str, key: str) -> None:
    table = app.screen.query_one(table_id)
    table.move_cursor(row=table.get_row_index(key))


async def _reach(pilot, app, steps: tuple) -> None:
    for step in steps:
        if callable(step):
            step(app)
        else:
            await pilot.press(step)
        await settle(pilot, app)


async def _back_to_start(pilot, app) -> None:
    """Close every modal, stop a running create, clear the filter, back to the environments tab."""
    view = app.screen_stack[0].query_one(RecipesView)
    if view.creating:
        view.action_cancel()
        await until(pilot, lambda: view.creating is None, "cancel did not end the create")
    await settle(pilot, app)
    while len(app.screen_stack) > 1:
        app.pop_screen()
        await pilot.pause()
    app.screen.query_one("#env-filter").value = ""
    app.action_tab("envs")
    await settle(pilot, app)


def _state(app) -> tuple:
    """What the next key starts from: the screens open, the tab, the focus, a running create, the theme,
    and every widget's display, classes, scroll, input text and cursor. Equal to the arrival's: the app
    is where it arrived."""
    from textual.widgets import DataTable, Input, TabbedContent

    main = app.screen_stack[0]
    focused = app.focused

    def widget(w) -> tuple:
        own = (w.value, w.cursor_position) if isinstance(w, Input) else \
            (w.cursor_coordinate, w.row_count) if isinstance(w, DataTable) else ()
        return (w.id or type(w).__name__, w.display, tuple(sorted(w.classes)), w.scroll_offset, *own)

    return (
        tuple(type(s).__name__ for s in app.screen_stack),
        main.query_one(TabbedContent).active,
        None if focused is None else (type(focused).__name__, focused.id),
        main.query_one(RecipesView).creating,
        app.current_theme.name,
        tuple(widget(w) for s in app.screen_stack for w in s.query("*")),
    )


def _check(app, where: str) -> None:
    if isinstance(app.screen, ErrorScreen):
        text = str(app.screen.query_one("#error-message").render())
        assert "internal error" not in text, f"{where}: {text}"


def _shown(widget) -> bool:
    return all(node.display for node in widget.ancestors_with_self if hasattr(node, "display"))


# Textual's own moving, scrolling and text editing (cursor_*, scroll_*, delete_*, copy...): pressed too, but all in one go from
# one arrival, so the tour stays short; cuenv's bindings and focus moves each get their own.
_MOVES = ("cursor_", "scroll_", "page_", "copy", "screen.copy", "delete_", "cut", "paste", "select_all", "undo", "redo",
          "home", "end")


def _actions(app) -> list[tuple[str, str]]:
    """("key", k) for each enabled binding ("keys", "a b c" for Textual's moves), ("button", id) for
    each shown, enabled button."""
    from textual.widgets import Button

    bound = {k: b for k, b in app.screen.active_bindings.items() if b.enabled}
    moves = sorted(k for k, b in bound.items() if type(b.node).__module__.startswith("textual")
                   and b.binding.action.startswith(_MOVES))
    keys = sorted(set(bound) - set(moves))
    buttons = [b.id for b in app.screen.query(Button) if _shown(b) and not b.disabled and b.id]
    return [("key", k) for k in keys] + ([("keys", " ".join(moves))] if moves else []) + \
        [("button", b) for b in buttons]


async def _do(pilot, app, action: tuple[str, str], where: str, *, wait: bool = True) -> None:
    kind, what = action
    if kind == "key":
        await pilot.press(what)
    elif kind == "keys":
        await pilot.press(*what.split())
    else:
        button = app.screen.query_one(f"#{what}")
        assert button.region.size.area and app.screen.region.contains_region(button.region), \
            f"{where}: button #{what} is not wholly on the screen ({button.region} of {app.screen.region})"
        assert await pilot.click(button), f"{where}: button #{what} is covered by something"
    if wait:
        await settle(pilot, app)
    else:  # a held create is running: settle() would wait for it
        for _ in range(5):
            await pilot.pause(0.05)


def _ended(app) -> bool:
    return not app.is_running or app.return_value is not None or bool(app._exit_renderables)


class TourServices(Services):
    """The real services, but the create dialog's download size is not solved on each of the many
    arrivals at that dialog (test_create_dialog_shows_the_download solves it for real)."""

    def download_size(self, ref: str, *, engine: str | None, machine) -> str:  # noqa: ANN001 - as Services.download_size
        return "19.9 MiB in 2 packages"


def tour(services, size: tuple[int, int], screens: tuple[str, ...] = tuple(SCREENS)) -> dict[str, list[str]]:
    """Every action of ``screens``, each from the screen's arrival state, in one app; a new app after
    an action that ends it (use, quit). Returns screen -> what was pressed there."""
    pressed: dict[str, list[str]] = {}
    todo = [(screen, None) for screen in screens]  # None: list the screen's actions on arrival

    async def session() -> None:
        app = CuenvApp(services)
        async with app.run_test(size=size) as pilot:
            await settle(pilot, app)
            start = _state(app)
            arrived: tuple[str, tuple] | None = None  # (screen, its arrival state)
            while todo:
                screen, action = todo.pop(0)
                now = _state(app)
                if arrived is None or arrived[0] != screen or now != arrived[1]:
                    if now != start:  # a modal closed by the key leaves the app at the start already
                        await _back_to_start(pilot, app)
                    await _reach(pilot, app, SCREENS[screen])
                    arrived = (screen, _state(app))
                if action is None:
                    todo[:0] = [(screen, a) for a in _actions(app)]
                    continue
                where = f"{screen} at {size[0]}x{size[1]}, {action[0]} {action[1]!r}"
                await _do(pilot, app, action, where)
                pressed.setdefault(screen, []).append(action[1])
                if _ended(app):
                    return
                _check(app, where)

    while todo:
        asyncio.run(session())
    return pressed


@pytest.fixture
def world(make_env, environ, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # lock and export write beside the user: here, not in the checkout
    make_env("cuda-12.1")
    make_incomplete(Path(environ["CUENV_HOME"]) / "envs", "broken", make_env("train"))


# The screens in three tours per size, each one app: six tests the two parallel workers share evenly (one
# tour of all nine screens per size kept one worker busy for minutes while the other had finished).
GROUPS = {"browse": ("environments", "filter", "recipes"), "dialogs": ("help", "export", "lock"),
          "actions": ("doctor", "create", "remove")}


def test_the_groups_cover_every_screen_once() -> None:
    assert sorted(s for group in GROUPS.values() for s in group) == sorted(SCREENS)


@pytest.mark.parametrize("group", list(GROUPS))
@pytest.mark.parametrize("size", list(SIZES))
def test_every_action_of_every_screen(size: str, group: str, world, settings, environ):
    services = TourServices(settings, environ)
    screens = GROUPS[group]
    pressed = tour(services, SIZES[size], screens)
    assert set(pressed) == set(screens), f"offered nothing to press: {set(screens) - set(pressed)}"
    for screen in {"help", "remove", "export", "lock", "doctor", "create"} & set(screens):
        assert "escape" in pressed[screen] and any(p in pressed[screen] for p in ("close", "cancel", "no")), \
            (screen, pressed[screen])
    if "lock" in screens:
        assert Path("cuenv.lock").is_file()  # Write in the lock dialog wrote the lockfile (it once crashed instead)


def test_typing_at_the_table_never_leaves_or_removes(world, services, environ):
    """Words typed at the environments table (the filter is on `/`) open a dialog at most."""
    app = CuenvApp(services)
    envs = Path(environ["CUENV_HOME"]) / "envs"
    before = sorted(p.name for p in envs.iterdir())

    async def main() -> None:
        async with app.run_test(size=SIZES["80x24"]) as pilot:
            await settle(pilot, app)
            for word in ("ubuntu", "cuda 12.1", "torch", "oxygen", "xy", "delete", "use train"):
                await pilot.press(*["space" if c == " " else "full_stop" if c == "." else c for c in word])
                await settle(pilot, app)
                assert not _ended(app), f"typing {word!r} left the app"
                _check(app, f"typing {word!r}")
                await _back_to_start(pilot, app)

    asyncio.run(main())
    assert app.return_value is None
    assert sorted(p.name for p in envs.iterdir()) == before


@pytest.mark.parametrize("size", list(SIZES))
def test_every_action_while_a_create_runs(size: str, settings, environ):
    """While a create is held at its install step: the keys that leave it running, then the panel's
    Cancel button; again with escape. Cancel is gone once nothing runs."""
    services = GatedServices(settings, environ)
    app = CuenvApp(services)
    prefix = Path(environ["CUENV_HOME"]) / "envs" / "fresh"

    async def start(pilot, view) -> None:
        services.reached.clear()
        view.start_create("cuda-12.1", name="fresh", engine="venv")
        await until(pilot, services.reached.is_set, "the create did not reach its install step")

    async def main() -> None:
        async with app.run_test(size=SIZES[size]) as pilot:
            await settle(pilot, app)
            await pilot.press("2")
            view = app.screen.query_one(RecipesView)
            for cancel in [("button", "create-cancel"), ("key", "escape")]:
                await start(pilot, view)
                for key in ("r", "question_mark", "escape", "1", "2"):  # escape closes the help here
                    await _do(pilot, app, ("key", key), f"create running at {size}, {key}", wait=False)
                    _check(app, f"create running, {key}")
                    assert view.creating == "fresh", f"{key} stopped the create: "
                await _do(pilot, app, cancel, f"create running at {size}, {cancel}", wait=False)
                await until(pilot, lambda: view.creating is None, f"{cancel} did not stop the create")
                await settle(pilot, app)
                assert view.creating is None and not prefix.exists(), f"{cancel} did not stop the create"
                button = app.screen.query_one("#create-cancel")
                assert not button.display, "Cancel stays after the create ended"

    asyncio.run(main())


@pytest.mark.parametrize("size", list(SIZES))
def test_every_action_of_the_error_modal(size: str, services):
    """A create with a bad name opens the error modal; its keys and its Close button."""

    async def open_error(pilot, app) -> None:
        await pilot.press("2")
        await settle(pilot, app)
        app.screen.query_one(RecipesView).start_create("cuda-12.1", name="bad name", engine="venv")
        await until(pilot, lambda: isinstance(app.screen, ErrorScreen), "no error modal")
        await settle(pilot, app)

    app = CuenvApp(services)

    async def main() -> None:
        async with app.run_test(size=SIZES[size]) as pilot:
            await settle(pilot, app)
            for action in [("key", "escape"), ("key", "enter"), ("key", "q"), ("button", "close")]:
                await open_error(pilot, app)
                await _do(pilot, app, action, f"error modal at {size}, {action}")
                assert not isinstance(app.screen, ErrorScreen), f"{action} did not close the error"
                assert not _ended(app), f"{action} on the error modal ended the app"

    asyncio.run(main())


@pytest.mark.network
def test_create_dialog_shows_the_download(services):
    """The dialog solves (no install, no lock taken) and shows the size before the user commits."""
    app = CuenvApp(services)

    async def main() -> None:
        async with app.run_test(size=SIZES["80x24"]) as pilot:
            await settle(pilot, app)
            await _reach(pilot, app, SCREENS["create"])
            assert isinstance(app.screen, CreateScreen)
            def sized() -> bool:
                return any(w in str(app.screen.query_one("#create-size").render()) for w in ("packages", "unknown"))

            await until(pilot, sized, "the create dialog never showed a size")
            text = str(app.screen.query_one("#create-size").render())
            assert text.startswith("Download: 19.9 MiB in 2 packages"), text
            await pilot.click("#go")  # at once: the size's solve holds no lock that create needs
            await settle(pilot, app)
            assert not isinstance(app.screen, ErrorScreen) or "already exists" in str(
                app.screen.query_one("#error-message").render())

    asyncio.run(main())
