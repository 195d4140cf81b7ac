"""`cuenv tui`: time to first full paint with 1, 100 and 1,000 environments (issues 9, 29: under 1 s at 100).

One real environment is made with `cuenv create cuda-12.1` (venv engine); its .cuenv metadata is
copied into more folders with the names rewritten, until the store holds each size in turn.

Three numbers per size:
- headless: CuenvApp under Textual's Pilot (``App.run_test()``) at 120x36, from constructing the app
  to the moment the machine bar, every row of the table and the first detail pane are painted (every
  worker done);
- terminal: `cuenv tui` started in a real tmux pane (new Python process, imports included) until
  capture-pane shows the machine line, the first environment and the first detail;
- the same for a bare Textual app with the same kinds of widgets and as many rows: Textual's own floor.
The terminal runs are interleaved with the floor's (A B A B ...); the ratio is the median per pair.

Run: python benchmarks/bench_tui.py [--runs N] [--sizes 1,100,1000]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import shlex
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "benchmarks"))
from common import as_users_run, load  # noqa: E402 - after sys.path is set above

FIRST = "env-0000"


def make_store(home: Path, env: dict[str, str]) -> None:
    from cuenv.cli.main import main

    if main(["create", "cuda-12.1", "-n", FIRST, "--engine", "venv", "-q"], environ=env) != 0:
        raise SystemExit("cuenv create cuda-12.1 failed")


def grow(home: Path, n: int) -> None:
    """Copy the first environment's metadata until the store holds ``n`` environments."""
    envs = home / "envs"
    src = envs / FIRST / ".cuenv"
    for i in range(sum(1 for p in envs.iterdir() if not p.name.startswith(".")), n):
        name = f"env-{i:04d}"
        dest = envs / name / ".cuenv"
        shutil.copytree(src, dest, ignore=shutil.ignore_patterns("cuda"))
        meta_file = dest / "meta.json"
        text = meta_file.read_text().replace(str(envs / FIRST), str(envs / name))
        meta = json.loads(text)
        meta["name"] = name
        meta_file.write_text(json.dumps(meta, indent=2, sort_keys=True) + "\n")


def headless_ms(env: dict[str, str], n: int) -> float:
    from textual.widgets import DataTable

    from cuenv import config
    from cuenv.tui.app import CuenvApp
    from cuenv.tui.services import Services

    settings = config.resolve({}, env)

    async def once() -> float:
        t0 = time.perf_counter()
        app = CuenvApp(Services(settings, env))
        async with app.run_test(size=(120, 36)) as pilot:
            while True:
                await pilot.pause(0.005)
                table = app.screen.query_one("#env-table", DataTable)
                detail = str(app.screen.query_one("#env-detail-text").render())
                if table.row_count == n and app.machine is not None and "Packages" in detail:
                    break
            await pilot.pause()  # the frame with all of it
            return (time.perf_counter() - t0) * 1000

    return asyncio.run(once())


# The floor: a bare Textual app with the same kinds of widgets and as many rows, in the same
# terminal, so the figure says what cuenv adds to Textual's own start (imports, CSS, first layout).
FLOOR_APP = """
import sys
from textual.app import App
from textual.widgets import DataTable, Footer, Input, Static, TabbedContent, TabPane
class Floor(App):
    CSS = "DataTable { height: 20; }"  # the table scrolls, as cuenv's does: the detail below stays on screen
    def compose(self):
        yield Static("driver 550.54.14")
        with TabbedContent():
            with TabPane("Environments"):
                yield Input()
                yield DataTable(id="t")
                yield Static("Packages")
            with TabPane("Recipes"):
                yield Static("recipes")
        yield Footer()
    def on_mount(self):
        t = self.query_one(DataTable)
        t.add_columns("Name", "Recipe", "CUDA", "Status")
        for i in range(int(sys.argv[1])):
            t.add_row(f"env-{i:04d}", "cuda-12.1", "12.1", "ok")
Floor().run()
"""


def terminal_ms(command: list[str], env: dict[str, str], tmp: Path) -> float | None:
    """From starting ``command`` in a new tmux pane until the pane shows the machine line, the first
    environment and the first detail."""
    if shutil.which("tmux") is None:
        return None
    sock = Path(tempfile.mkdtemp(dir=tmp)) / "tmux.sock"  # one server per run
    t0 = time.perf_counter()
    subprocess.run(["tmux", "-S", str(sock), "new-session", "-d", "-s", "b", "-x", "120", "-y", "200",  # the detail pane shows
                    shlex.join(command)], env={**env, "TERM": "xterm-256color", "PYTHONPATH": str(REPO)}, check=True)
    try:
        while True:
            screen = subprocess.run(["tmux", "-S", str(sock), "capture-pane", "-p", "-t", "b"], capture_output=True,
                                    text=True).stdout
            if "driver 550.54.14" in screen and FIRST in screen and "Packages" in screen:
                return (time.perf_counter() - t0) * 1000
            if time.perf_counter() - t0 > 30:
                print(f"{command[-2:]} did not paint within 30 s:\n{screen}", file=sys.stderr)
                return None
            # Each poll starts a tmux client: every 10 ms took so much of this 2-core machine that the
            # TUI looked 0.5 s slower than it is; 25 ms adds at most 25 ms to a figure.
            time.sleep(0.025)
    finally:
        subprocess.run(["tmux", "-S", str(sock), "kill-server"], capture_output=True)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--sizes", default="1,100,1000")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        home = Path(tmp) / "home"
        env = dict(as_users_run(os.environ), CUENV_HOME=str(home), CUENV_CONFIG=str(Path(tmp) / "none.yaml"),
                   CUENV_DRIVER="550.54.14", CUENV_GPUS="NVIDIA A100-SXM4-80GB")
        env.setdefault("CUENV_CACHE_DIR", str(REPO / ".test-cache"))
        make_store(home, env)
        print(f"cuenv tui, first full paint, median of {args.runs} (goal: under 1000 ms at 100 environments)")
        print(f"{'environments':>12} {'headless':>9} {'terminal':>9} {'bare app':>9}  ratio [min-max]  load")
        for n in (int(x) for x in args.sizes.split(",")):
            grow(home, n)
            headless_ms(env, n)  # warm-up: verdicts computed once and cached, as after any first run
            heads = [headless_ms(env, n) for _ in range(args.runs)]
            before = load()
            runs = []
            cuenv_tui, bare = [sys.executable, "-m", "cuenv", "tui"], [sys.executable, "-c", FLOOR_APP, str(n)]
            for i in range(args.runs):  # interleaved, alternating which goes first
                if i % 2:
                    floor = terminal_ms(bare, env, Path(tmp))
                    term = terminal_ms(cuenv_tui, env, Path(tmp))
                else:
                    term = terminal_ms(cuenv_tui, env, Path(tmp))
                    floor = terminal_ms(bare, env, Path(tmp))
                runs.append((term, floor))
            line = f"{n:>12} {statistics.median(heads):>7.0f}ms"
            pairs = [(t, f) for t, f in runs if t is not None and f is not None]
            if pairs:  # no tmux: no terminal figures
                ratios = [t / f for t, f in pairs]
                line += (f" {statistics.median(t for t, _ in pairs):>7.0f}ms {statistics.median(f for _, f in pairs):>7.0f}ms"
                         f"  {statistics.median(ratios):.2f}x [{min(ratios):.2f}-{max(ratios):.2f}]")
            print(line + f"  {before} -> {load()}", flush=True)


if __name__ == "__main__":
    main()
