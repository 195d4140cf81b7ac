"""SVG snapshots of the main screens at 80x24 and 120x36 (Textual's export_screenshot).

pytest-textual-snapshot needs pytest < 9 (through syrupy 4), so this is the same idea in a few
lines: a fixed fake machine (CUENV_DRIVER/CUENV_GPUS), fixed environment names, paths shown as
$CUENV_HOME, no clock; every worker has finished before the picture is taken. Refresh the files
with CUENV_UPDATE_SNAPSHOTS=1 and look at them (docs/assets holds the same files).
"""

from __future__ import annotations

import asyncio
import difflib
import html
import os
import re
import shutil
from pathlib import Path

import pytest

from cuenv.tui.app import CuenvApp

from .conftest import make_incomplete, settle, until

HERE = Path(__file__).resolve().parent
SNAPS = HERE / "snapshots"
DOCS = HERE.parents[1] / "docs" / "assets"
UPDATE = os.environ.get("CUENV_UPDATE_SNAPSHOTS") == "1"


def screen_text(svg: str) -> list[str]:
    """The characters of an exported screen, line by line (for a readable diff)."""
    rows: dict[str, list[tuple[float, str]]] = {}
    for y, x, text in re.findall(r'<text [^>]*x="([\d.]+)" y="([\d.]+)"[^>]*>([^<]*)</text>', svg):
        rows.setdefault(x, []).append((float(y), html.unescape(text).replace("\xa0", " ")))
    return ["".join(t for _, t in sorted(parts)) for _, parts in sorted(rows.items(), key=lambda kv: float(kv[0]))]


def normalized(svg: str) -> list[str]:
    """What a viewer sees: every background cell and every glyph run with its resolved style.

    Class numbers and styles used by no visible glyph (Textual emits some for blank cells, in an
    order that varies between runs) are left out; everything visible is compared.
    """
    styles = dict(re.findall(r"\.terminal-\d+-(r\d+) \{ ([^}]*)\}", svg))
    out = [f"rect {fill} {x} {y} {w}" for fill, x, y, w in
           re.findall(r'<rect fill="(#\w+)" x="([\d.]+)" y="([\d.]+)" width="([\d.]+)"', svg)]
    for cls, x, y, text in re.findall(r'<text class="terminal-\d+-(r\d+)" x="([\d.]+)" y="([\d.]+)"[^>]*>([^<]*)</text>', svg):
        visible = html.unescape(text).replace("\xa0", " ").strip()
        out.append(f"text {x} {y} {styles.get(cls, '').strip() if visible else ''} {text}")
    return out


def compare(name: str, svg: str, tmp_path: Path) -> None:
    path = SNAPS / f"{name}.svg"
    if UPDATE:
        SNAPS.mkdir(exist_ok=True)
        path.write_text(svg, encoding="utf-8")
        DOCS.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(path, DOCS / f"tui-{name}.svg")
        return
    assert path.exists(), f"no snapshot {path.name}: run with CUENV_UPDATE_SNAPSHOTS=1 and review it"
    want = path.read_text(encoding="utf-8")
    if normalized(svg) != normalized(want):
        (tmp_path / path.name).write_text(svg, encoding="utf-8")
        diff = list(difflib.unified_diff(screen_text(want), screen_text(svg), "snapshot", "now", lineterm=""))
        if not diff:  # the same characters: colours or places differ
            diff = list(difflib.unified_diff(normalized(want), normalized(svg), "snapshot", "now", lineterm="", n=0))
        pytest.fail(f"{path.name} changed (new picture in {tmp_path / path.name}):\n" + "\n".join(diff[:60]))


@pytest.fixture
def world(make_env, environ):
    make_env("cuda-12.1")
    make_incomplete(Path(environ["CUENV_HOME"]) / "envs", "broken", make_env("train"))


def shoot(services, size, steps) -> str:
    app = CuenvApp(services)
    shot: list[str] = []

    async def main() -> None:
        async with app.run_test(size=size) as pilot:
            await settle(pilot, app)
            await steps(pilot, app)
            await settle(pilot, app)
            from textual.widgets import Input

            for field in app.screen.query(Input):  # a blinking cursor is on or off by chance: held on
                field.cursor_blink = False
            # A DataTable sizes its columns when idle: on a loaded machine the first picture can come
            # before that. Take pictures until two in a row agree (a condition, not a clock).
            previous = None
            for _ in range(100):
                await pilot.pause(0.02)
                picture = app.export_screenshot()
                if previous is not None and normalized(picture) == normalized(previous):
                    break
                previous = picture
            shot.append(picture)

    asyncio.run(main())
    return shot[0]


async def _envs(pilot, app):
    await pilot.press("down")  # cuda-12.1: a complete environment in the detail pane


async def _recipes(pilot, app):
    await pilot.press("2")
    await settle(pilot, app)
    table = app.screen.query_one("#recipe-table")  # cuda-13.0: does not run on driver 550 (by name: the catalogue grows)
    table.move_cursor(row=table.get_row_index("cuda-13.0"))


async def _remove(pilot, app):
    await pilot.press("down", "down", "x")


async def _help(pilot, app):
    await pilot.press("question_mark")


async def _created(pilot, app):
    from cuenv.tui.widgets.recipes import RecipesView

    await pilot.press("2", "down")
    await settle(pilot, app)
    view = app.screen.query_one(RecipesView)
    view.start_create("cuda-12.1", name="fresh", engine="venv")
    await until(pilot, lambda: view.creating is None, "the create did not end")


async def _created_then_table(pilot, app):
    """The Environments table after a create: every column kept (issue 26: names shrank to `cuda / torc`)."""
    await _created(pilot, app)
    await pilot.press("1")
    await settle(pilot, app)


async def _removed(pilot, app):
    """The table after `train` was removed through its dialog: every column kept, the verdict on screen."""
    from cuenv.tui.screens.modals import ConfirmScreen

    await pilot.press("down", "down", "down", "x")  # train
    await until(pilot, lambda: isinstance(app.screen, ConfirmScreen), "the remove dialog did not open")
    await pilot.press("left", "enter")  # from No to the remove button
    await until(pilot, lambda: "train" not in [k.value for k in app.screen.query_one("#env-table").rows],
                "train was not removed")


async def _light(pilot, app):
    await pilot.press("down", "ctrl+t")


async def _export(pilot, app):
    await pilot.press("down", "e")


async def _lock(pilot, app):
    await pilot.press("down", "l")


async def _create_dialog(pilot, app):
    from cuenv.tui.screens.modals import CreateScreen

    await pilot.press("2")
    await settle(pilot, app)
    await pilot.press("down", "c")  # cuda-12.1
    await until(pilot, lambda: isinstance(app.screen, CreateScreen)  # the dialog solves what the create would download
                and "packages" in str(app.screen.query_one("#create-size").render()), "the dialog showed no download size")


async def _error(pilot, app):
    from cuenv.tui.widgets.recipes import RecipesView

    await pilot.press("2")
    await settle(pilot, app)
    app.screen.query_one(RecipesView).start_create("cuda-12.1", name="bad name", engine="venv")


SCREENS = {
    "environments-80x24": ((80, 24), _envs),
    "environments-120x36": ((120, 36), _envs),
    "recipes-80x24": ((80, 24), _recipes),
    "recipes-120x36": ((120, 36), _recipes),
    "remove-80x24": ((80, 24), _remove),
    "help-80x24": ((80, 24), _help),
    "create-120x36": ((120, 36), _created),
    "created-80x24": ((80, 24), _created_then_table),
    "created-120x36": ((120, 36), _created_then_table),
    "removed-80x24": ((80, 24), _removed),
    "removed-120x36": ((120, 36), _removed),
    "light-120x36": ((120, 36), _light),
    "export-80x24": ((80, 24), _export),
    "lock-80x24": ((80, 24), _lock),
    "create-dialog-80x24": ((80, 24), _create_dialog),
    "error-80x24": ((80, 24), _error),
}


@pytest.mark.parametrize("name", list(SCREENS))
def test_snapshot(name: str, world, services, tmp_path: Path):
    size, steps = SCREENS[name]
    compare(name, shoot(services, size, steps), tmp_path)


def test_docs_show_the_snapshots():
    """docs/guides/tui.md embeds these pictures; they must be the current snapshots."""
    guide = (HERE.parents[1] / "docs" / "guides" / "tui.md").read_text()
    for name in SCREENS:
        doc = DOCS / f"tui-{name}.svg"
        assert doc.read_bytes() == (SNAPS / f"{name}.svg").read_bytes(), f"run with CUENV_UPDATE_SNAPSHOTS=1 ({doc})"
        assert f"../assets/tui-{name}.svg" in guide
