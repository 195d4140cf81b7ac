"""Sealed tests (issue 31 §10): what every test's environment points at, and the session's check that
nothing outside the tests' temporary folders changed.

``sealed_environ`` is the one list of variables the ``isolated`` fixture sets (or drops) for every test:
HOME, every XDG_* variable, and the cache and config variables of uv, pip and conda. The package caches
that keep real downloads warm (uv's, pip's, conda's) are one folder per run, the repository's
``.test-cache`` (or ``CUENV_TEST_CACHE``): never the user's own.

``fingerprint`` is a cheap picture (path, type, size, mtime) of the user's real files a test could
touch by mistake: the shell rc files, cuenv's, uv's, pip's, conda's and fish's folders under the real
HOME and XDG folders, and a canary folder made for the run outside the tests' temporary folders. The
session compares the picture before and after and fails the run naming what changed.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Iterable, Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path

import pytest

# The package caches every test shares (uv, pip, conda, wheels): warm across runs, never the user's own.
TEST_CACHE = Path(os.environ.get("CUENV_TEST_CACHE", str(Path(__file__).resolve().parents[1] / ".test-cache")))
XDG_HOMES = {  # XDG variable -> where under the sealed HOME it points (the spec's defaults)
    "XDG_CONFIG_HOME": ".config",
    "XDG_CACHE_HOME": ".cache",
    "XDG_DATA_HOME": ".local/share",
    "XDG_STATE_HOME": ".local/state",
}
# Files under HOME (or an XDG folder) that cuenv, its hooks or the tools it runs could write (conda keeps its
# notices in the cache; rustup's proxies, on PATH as cargo and rustc, write their settings on first use).
HOME_FILES = (".bashrc", ".bash_profile", ".profile", ".zshrc", ".zprofile", ".zshenv", ".condarc", ".mambarc",
              ".netrc", ".cuenv", ".conda", ".config/cuenv", ".config/fish", ".config/uv", ".config/pip", ".config/conda",
              ".cache/cuenv", ".cache/uv", ".cache/pip", ".cache/rattler", ".local/share/cuenv", ".local/share/uv",
              ".local/state/cuenv", "micromamba", ".cache/conda", ".rustup/settings.toml")
XDG_FILES = {"XDG_CONFIG_HOME": ("cuenv", "fish", "uv", "pip", "conda"),
             "XDG_CACHE_HOME": ("cuenv", "uv", "pip", "rattler", "conda"),
             "XDG_DATA_HOME": ("cuenv", "uv"),
             "XDG_STATE_HOME": ("cuenv",)}
MAX_ENTRIES = 200_000  # per watched path: a huge real cache is sampled, not walked to the end


def sealed_environ(root: Path, cache: Path, environ: Mapping[str, str]) -> tuple[dict[str, str], list[str]]:
    """(variables to set, variables to drop) so that a test reads and writes only under ``root`` and
    ``cache``. ``environ`` is the caller's, to find the XDG_* and tool variables it must drop."""
    home = root / "user"
    put = {"HOME": str(home)}
    for name, sub in XDG_HOMES.items():
        put[name] = str(home / sub)
    put["XDG_RUNTIME_DIR"] = str(root / "run")
    put["XDG_CONFIG_DIRS"] = str(root / "etc-xdg")  # no system-wide pip.conf or uv.toml
    put["XDG_DATA_DIRS"] = str(root / "share") + ":/usr/local/share:/usr/share"  # shells find their own files
    put.update(
        UV_CACHE_DIR=str(cache / "uv"),
        UV_NO_CONFIG="1",  # no uv.toml of the user's or the system's
        UV_PYTHON_INSTALL_DIR=str(home / ".local/share/uv/python"),
        UV_TOOL_DIR=str(home / ".local/share/uv/tools"),
        PIP_CONFIG_FILE=os.devnull,  # pip reads no config file at all
        PIP_CACHE_DIR=str(cache / "pip"),
        CONDA_PKGS_DIRS=str(cache / "conda-pkgs"),
        CONDARC=str(root / "condarc"),
        MAMBARC=str(root / "mambarc"),
        MAMBA_ROOT_PREFIX=str(root / "mamba-root"),
        RATTLER_CACHE_DIR=str(cache / "rattler"),
    )
    drop = [k for k in environ if k.startswith("XDG_") and k not in put]
    drop += [k for k in ("UV_CONFIG_FILE", "CONDA_ENVS_PATH", "CONDA_ENVS_DIRS", "PIP_REQUIRE_VIRTUALENV") if k in environ]
    return put, drop


# cuenv's own overrides a caller may have set: none reaches a test unless the test sets it.
CUENV_OVERRIDES = ("CUENV_DRIVER", "CUENV_GPUS", "CONDA_OVERRIDE_CUDA", "CUENV_ACTIVE", "CUENV_ENGINE", "CUENV_RECIPES",
                   "CUENV_MIRRORS", "CUENV_FRAMEWORK_INDEX")


def seal(monkeypatch: pytest.MonkeyPatch, root: Path, cache: Path = TEST_CACHE) -> Path:
    """Point every cuenv location, HOME and the XDG and tool variables at ``root`` (the package caches at
    ``cache``) and drop the caller's machine overrides: what the ``isolated`` fixture does for each test."""
    put, drop = sealed_environ(root, cache, os.environ)
    for name, value in put.items():
        monkeypatch.setenv(name, value)
    for name in drop:
        monkeypatch.delenv(name)
    Path(put["HOME"]).mkdir(parents=True)
    Path(put["XDG_RUNTIME_DIR"]).mkdir(mode=0o700)
    monkeypatch.setenv("CUENV_HOME", str(root / "home"))
    monkeypatch.setenv("CUENV_CONFIG", str(root / "config.yaml"))
    # One shared cache for the whole run keeps real downloads (uv, rattler) warm across tests.
    monkeypatch.setenv("CUENV_CACHE_DIR", str(cache))
    for name in CUENV_OVERRIDES:
        monkeypatch.delenv(name, raising=False)
    # The machine's own uv/pip/conda mirrors stay out of tests (tests that want them pass them in).
    monkeypatch.setenv("CUENV_MIRRORS_FROM_TOOLS", "0")
    return root


@contextmanager
def sealed(root: Path, cache: Path = TEST_CACHE) -> Iterator[Path]:
    """``os.environ`` sealed at ``root`` for a block, then restored: for a module or session fixture that
    builds a world once for many tests (it runs before any test's own ``isolated``, so it seals itself)."""
    with pytest.MonkeyPatch.context() as monkeypatch:
        yield seal(monkeypatch, root, cache)


def watched(home: Path, environ: Mapping[str, str]) -> list[Path]:
    """The user's real paths a test must never change (existing or not)."""
    paths = [home / p for p in HOME_FILES]
    for var, names in XDG_FILES.items():
        base = environ.get(var)
        if base:
            paths += [Path(base) / n for n in names]
    return sorted(set(paths))


def fingerprint(paths: Iterable[Path]) -> dict[str, tuple[int, int, int]]:
    """path -> (mode, size, mtime_ns) for every path and everything under it (links not followed)."""
    out: dict[str, tuple[int, int, int]] = {}
    for top in paths:
        todo = [top]
        seen = 0
        while todo and seen < MAX_ENTRIES:
            path = todo.pop()
            try:
                st = path.lstat()
            except OSError:
                continue
            seen += 1
            # A folder's own mtime moves when an entry is added or removed; its size says nothing.
            out[str(path)] = (stat.S_IFMT(st.st_mode), 0 if stat.S_ISDIR(st.st_mode) else st.st_size, st.st_mtime_ns)
            if stat.S_ISDIR(st.st_mode):
                try:
                    todo.extend(path.iterdir())
                except OSError:
                    pass
    return out


def changes(before: Mapping[str, tuple[int, int, int]], after: Mapping[str, tuple[int, int, int]]) -> list[str]:
    """One line per path added, removed or changed between two fingerprints, sorted."""
    lines = [f"added   {p}" for p in after.keys() - before.keys()]
    lines += [f"removed {p}" for p in before.keys() - after.keys()]
    lines += [f"changed {p}" for p in before.keys() & after.keys() if before[p] != after[p]]
    return sorted(lines, key=lambda line: line[8:])


def make_canary(folder: Path) -> None:
    """A folder of files outside the tests' temporary folders that no test has a reason to touch."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "keep.txt").write_text("a test that changes this file wrote outside its temporary folder\n")
    (folder / "sub").mkdir(exist_ok=True)
    (folder / "sub" / "keep.json").write_text("{}\n")
