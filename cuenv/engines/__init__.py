"""Install engines behind one interface (see base.py), and the choice among them.

``auto`` picks a conda-family executable on PATH, else venv (issue 4 §2); what only conda packages
can build (an environment.yml) goes to rattler when no conda is on PATH (issue 15). Among the conda family
the order is micromamba, mamba, conda: all three solve with libmamba, so they agree on results, and
that order is the fastest start-up first (micromamba is one static binary; mamba and conda start a
Python interpreter, conda the heaviest one). For what both can build, ``auto`` stays "the conda the
user has, else uv" (issue 4); ask for rattler by name.
"""

from __future__ import annotations

import os
from pathlib import Path

from cuenv.engines.names import CHOICES, CONDA_FAMILY, ENGINE_NAMES
from cuenv.errors import UsageError

TYPE_CHECKING = False  # no `typing` at run time: the start-up path does without it (issue 29)
if TYPE_CHECKING:
    from typing import Any, Mapping

    from cuenv.engines.base import (
        DownloadFailed,
        Engine,
        EngineUnavailable,
        HashMismatch,
        MixedCudaMajors,
        Package,
        PackagesNotFound,
        Request,
        Solution,
        SolveError,
        Target,
        Unsatisfiable,
    )
    from cuenv.engines.mirrors import Mirrors

# The interface's names are re-exported on first use: `cuenv.engines.names` (what config and `check`
# need) must not bring the whole interface with it.
_FROM_BASE = frozenset({"DownloadFailed", "Engine", "EngineUnavailable", "HashMismatch", "MixedCudaMajors", "Package",
                        "PackagesNotFound", "Request", "Solution", "SolveError", "Target", "Unsatisfiable"})


def __getattr__(name: str) -> Any:
    if name in _FROM_BASE:
        from cuenv.engines import base

        return getattr(base, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")

__all__ = [
    "CHOICES", "CONDA_FAMILY", "ENGINE_NAMES", "DownloadFailed", "Engine", "EngineUnavailable", "HashMismatch", "MixedCudaMajors",
    "Package", "PackagesNotFound", "Request", "Solution", "SolveError", "Target", "Unsatisfiable",
    "available", "find_conda_executable", "get_engine", "resolve_engine",
]


def find_conda_executable(name: str, environ: Mapping[str, str]) -> Path | None:
    """``name`` on the caller's PATH; else the binary a shell hook exported (MAMBA_EXE, CONDA_EXE).

    ``conda activate`` makes ``conda`` a shell function and may leave only ``condabin`` on PATH;
    the hooks export the real executable, so look there too.
    """
    import shutil  # on use: `list` and `check` import this package for its names (start-up, issue 29)

    found = shutil.which(name, path=environ.get("PATH", os.defpath))
    if found:
        return Path(found)
    for var in ("MAMBA_EXE", "CONDA_EXE"):
        exe = environ.get(var)
        if exe and Path(exe).name == name and os.access(exe, os.X_OK):
            return Path(exe)
    return None


def get_engine(name: str, environ: Mapping[str, str], *, mirrors: Mirrors | None = None) -> Engine:
    """The engine called ``name`` (not ``auto``: resolve that first), fetching through ``mirrors``."""
    if name == "venv":
        from cuenv.engines.venv import VenvEngine

        return VenvEngine(environ, mirrors=mirrors)
    if name == "rattler":
        from cuenv.engines.rattler import RattlerEngine

        return RattlerEngine(environ, mirrors=mirrors)
    if name in CONDA_FAMILY:
        from cuenv.engines.conda import CondaEngine

        return CondaEngine(environ, tool=name, mirrors=mirrors)
    raise UsageError(
        f"Unknown engine {name!r}.", hint=f"Valid engines: auto, {', '.join(ENGINE_NAMES)}."
    )


def resolve_engine(requested: str | None, environ: Mapping[str, str], default: str = "auto",
                   families: tuple[str, ...] | None = None) -> tuple[str, str]:
    """Turn ``auto`` (or nothing) into an engine name, and say why (for ``doctor`` and ``info``).

    ``families``: the install sections what is being built has ("conda", "venv"); None means both.
    ``auto`` takes the conda the user has when a conda section exists, else venv; a build with only a
    conda section (an environment.yml, issue 15) goes to rattler when no conda is on PATH.
    """
    choice, origin = (requested, "requested") if requested else (default, "the configured default")
    if choice != "auto":
        if choice not in ENGINE_NAMES:
            get_engine(choice, environ)  # raises the UsageError listing valid names
        return choice, f"{choice}: {origin}"
    families = families or ("conda", "venv")
    if "conda" in families:
        for tool in CONDA_FAMILY:
            exe = find_conda_executable(tool, environ)
            if exe is not None:
                return tool, f"auto ({origin}): found {tool} at {exe}"
    if "venv" in families:
        return "venv", f"auto ({origin}): no {', '.join(CONDA_FAMILY)} on PATH, so venv (uv, PyPI wheels)"
    return "rattler", f"auto ({origin}): conda packages and no {', '.join(CONDA_FAMILY)} on PATH, so rattler (in-process)"


def available(environ: Mapping[str, str], *, cache_dir: Path | None = None) -> dict[str, dict[str, Any]]:
    """Which engines cuenv could use here: name -> {"available": bool, "path": str | None}.

    The one availability check: ``cuenv info``, ``create --engine auto`` (through
    :func:`find_conda_executable`) and the TUI all see the same conda executables. With ``cache_dir``
    (``cuenv info``), conda's entry also says its version and the solver cuenv's solves use with it
    (asked once, then cached there: see condatool.py).
    """
    import importlib.util

    found: dict[str, dict[str, Any]] = {}
    for name in sorted(CONDA_FAMILY, key=ENGINE_NAMES.index):
        exe = find_conda_executable(name, environ)
        found[name] = {"available": exe is not None, "path": str(exe) if exe else None}
        if name == "conda" and exe is not None and cache_dir is not None:
            from cuenv.engines import condatool
            from cuenv.errors import ToolError

            try:
                tool = condatool.probe(exe, environ, cache_dir=cache_dir)
            except ToolError:  # a conda that hangs or vanished: listed, not described
                continue
            found[name].update(version=tool.version, solver=tool.solver, solvers=list(tool.solvers))
    found["uv"] = {"available": False, "path": None}
    if importlib.util.find_spec("uv") is not None:
        try:
            from uv import find_uv_bin

            found["uv"] = {"available": True, "path": str(find_uv_bin())}
        except (ImportError, FileNotFoundError):
            pass
    import shutil

    if not found["uv"]["available"] and (uv_exe := shutil.which("uv", path=environ.get("PATH", os.defpath))):
        found["uv"] = {"available": True, "path": uv_exe}
    spec = importlib.util.find_spec("rattler")  # found, not imported: importing costs ~50 ms
    found["rattler"] = {"available": spec is not None, "path": spec.origin if spec else None}
    return found
