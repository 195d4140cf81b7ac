"""Benchmark (issue 26): adding one small package to a warm environment, `cuenv add` against `uv pip install`.

Both put the same package into the same venv (a cuda-12.1 environment made by `cuenv create`, NVIDIA's
wheels) with the same warm uv cache; after each run the package is uninstalled again (not timed).
`cuenv add` does more: every installed package held as a constraint of the solve, the CUDA checks,
an install by URL and hash, the solution and meta.json recorded. (uv's cache answers the solve; that
answer, checked, is installed while the index is asked, in one round trip, whether it has anything newer,
and kept when it has not.) The runs are paired, A B A B, so that a machine getting busier or quieter
touches both alike; the figure is the median of the per-pair ratios, with their spread (alternating
which goes first; the uninstalls are not timed). A second row times what an add that asks the index for
a full solve must wait for (as `cuenv add` did until 2026-12-04): a Python start and uv's online resolve
alone, two round trips (the index page, then the wheel's metadata) where the question above takes one.

A third row serves the package from a local index that sends PyPI's own caching header on its pages
(``Cache-Control: max-age=600``), through ``--mirror pypi=...`` for cuenv and ``--index-url`` for uv. There
uv answers from its cache without asking the index (as against pypi.org itself); an index or proxy that
sends no such header (as this project's build machine has) makes every resolve ask again, and that
round trip, paid by both sides, dominates the first row.

    python benchmarks/bench_add.py [--pairs 9] [--package six]
"""

from __future__ import annotations

import argparse
import contextlib
import hashlib
import http.server
import os
import subprocess
import sys
import tempfile
import urllib.request
from pathlib import Path

from common import HEADER, Ms, as_users_run, paired, time_command  # benchmarks/ is the script's folder, first on sys.path

REPO = Path(__file__).resolve().parent.parent


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--pairs", type=int, default=9)
    ap.add_argument("--package", default="six")
    args = ap.parse_args()
    from uv import find_uv_bin

    uv = find_uv_bin()
    cache = Path(os.environ.get("CUENV_CACHE_DIR", REPO / ".test-cache"))
    with tempfile.TemporaryDirectory(prefix="cuenv-bench-add-") as tmp:
        env = dict(as_users_run(os.environ), CUENV_HOME=str(Path(tmp) / "home"), CUENV_CACHE_DIR=str(cache),
                   UV_CACHE_DIR=str(cache / "uv"))
        cuenv = [sys.executable, "-m", "cuenv"]
        subprocess.run([*cuenv, "create", "cuda-12.1", "--engine", "venv", "-n", "bench", "-q"], env=env, check=True)
        python = str(Path(tmp) / "home" / "envs" / "bench" / "bin" / "python")

        a = [*cuenv, "add", "-n", "bench", args.package, "-q"]
        a_undo = [*cuenv, "uninstall", "-n", "bench", args.package, "-q"]
        b = [uv, "pip", "install", "--python", python, args.package, "-q"]
        b_undo = [uv, "pip", "uninstall", "--python", python, args.package, "-q"]
        result = paired(f"cuenv add {args.package}", lambda: undone(a, a_undo, env), lambda: undone(b, b_undo, env),
                        pairs=args.pairs, baseline="uv pip install", warmup=1)  # warm-up: bytecode, caches, index
        # What an add that has the index solve in full waits for at least: a Python that starts, imports what
        # running a tool takes, and has uv resolve the package online (no install, no record).
        reqs = Path(tmp) / "add.in"
        reqs.write_text(args.package + "\n", encoding="utf-8")
        resolve = [uv, "pip", "compile", str(reqs), "--format", "pylock.toml", "-o", str(Path(tmp) / "pylock.toml"),
                   "--no-header", "--quiet", "--only-binary", ":all:", "--python", python]
        floor_argv = [sys.executable, "-c", f"import json, pathlib, re, subprocess; subprocess.run({resolve!r}, check=True)"]
        floor = paired("python + uv's online solve alone", lambda: time_command(floor_argv, env), lambda: undone(b, b_undo, env),
                       pairs=args.pairs, baseline="uv pip install", warmup=1)
        # The bound of any add that checks before it installs with uv, with no Python at all: uv resolves, and
        # then installs what it resolved, by URL and hash from its cache (--offline, --no-deps), as cuenv does.
        pinned = Path(tmp) / "pinned.txt"
        install = [uv, "pip", "install", "-r", str(pinned), "--python", python, "--require-hashes", "--no-deps",
                   "--offline", "-q"]
        with _caching_index(Path(tmp), args.package, resolve, env, pinned) as simple:
            bound = paired("bound: uv resolve, then uv install", lambda: two_step(resolve, install, b_undo, env),
                           lambda: undone(b, b_undo, env), pairs=args.pairs, baseline="uv pip install", warmup=1)
            mirrored = dict(env, CUENV_MIRRORS=f"pypi={simple}")
            b_cached = [*b, "--index-url", simple]
            cached = paired("the same, an index uv may cache (max-age=600)",
                            lambda: undone(a, a_undo, mirrored), lambda: undone(b_cached, b_undo, env),
                            pairs=args.pairs, baseline="uv pip install", warmup=1)
            resolve_cached = [*resolve, "--index-url", simple]
            bound_cached = paired("bound, the index uv may cache", lambda: two_step(resolve_cached, install, b_undo, env),
                                  lambda: undone(b_cached, b_undo, env), pairs=args.pairs, baseline="uv pip install",
                                  warmup=1)
    print(f"one package ({args.package}) into a warm cuda-12.1 venv, {args.pairs} interleaved pairs:")
    print(HEADER)
    print(result.line() + f"  goal <= 1.3x: {'met' if result.ratio <= 1.3 else 'MISSED'}")
    print(floor.line())
    print(bound.line())
    print(cached.line())
    print(bound_cached.line())


def undone(argv: list[str], undo: list[str], env: dict[str, str]) -> Ms:
    """``argv`` timed, then ``undo`` (not timed), so that every run adds the package anew."""
    ms = time_command(argv, env)
    subprocess.run(undo, env=env, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return ms


def two_step(resolve: list[str], install: list[str], undo: list[str], env: dict[str, str]) -> Ms:
    """``resolve`` then ``install`` timed back to back (their sum, wall and CPU), then ``undo`` (not timed)."""
    first = time_command(resolve, env)
    second = undone(install, undo, env)
    out = Ms(first + second)
    out.cpu = (first.cpu or 0.0) + (second.cpu or 0.0)
    return out


class _Cacheable(http.server.SimpleHTTPRequestHandler):
    """Files, with the header PyPI sends on its simple pages: a client may reuse them for 10 minutes."""

    def end_headers(self) -> None:
        self.send_header("Cache-Control", "max-age=600, public")
        super().end_headers()

    def log_message(self, *args: object) -> None:
        pass


@contextlib.contextmanager
def _caching_index(tmp: Path, package: str, resolve: list[str], env: dict[str, str], pinned: Path):  # noqa: ANN202 - a context manager
    """A one-package PEP 503 index on localhost: the wheel uv's resolve names (its hash checked), served
    with PyPI's Cache-Control header; yields the index's URL. ``pinned``: that wheel's requirement line with
    its URL and hash is written there."""
    import tomllib

    subprocess.run(resolve, env=env, check=True)
    lock = tomllib.loads((tmp / "pylock.toml").read_text(encoding="utf-8"))
    root = tmp / "index"
    page = root / "simple" / package
    page.mkdir(parents=True)
    links = []
    for wheel in next(p for p in lock["packages"] if p["name"] == package)["wheels"]:
        data = urllib.request.urlopen(wheel["url"], timeout=60).read()  # noqa: S310 - the https URL uv resolved
        sha = wheel["hashes"]["sha256"]
        if hashlib.sha256(data).hexdigest() != sha:
            raise SystemExit(f"{wheel['url']}: the download does not match its sha256")
        name = wheel["url"].rsplit("/", 1)[1]
        (root / name).write_bytes(data)
        links.append(f'<a href="../../{name}#sha256={sha}">{name}</a>\n')
        pinned.write_text(f"{package} @ {wheel['url']} --hash=sha256:{sha}\n", encoding="utf-8")
    (page / "index.html").write_text("".join(links), encoding="utf-8")
    from tests.engines.pypimirror import serve_with  # the tests' own local index (the source tree is on sys.path)

    with serve_with(root, _Cacheable) as base:
        yield f"{base}/simple"


if __name__ == "__main__":
    main()
