"""An environment's folder: every file cuenv keeps inside it, named here and nowhere else.

Layout under ``CUENV_HOME/envs``::

    NAME/                             the prefix itself (a conda prefix or a venv root; both embed this path)
    NAME/.cuenv/meta.json             what cuenv knows about it (cuenv.envs.meta is the format)
    NAME/.cuenv/solution.json         the exact solution it was installed from (its own lock)
    NAME/.cuenv/verdict               the hook's cached verdict: fingerprint, then one finding a line
    NAME/.cuenv/activate.{bash,zsh,fish}   activation scripts rendered at create time (the hook sources them)
    NAME/.cuenv/shims/                the CUDA tools the environment lacks, as shims (cuenv.activation.shims)
    NAME/.cuenv/cuda/                 a venv's CUDA_HOME: symlinks into its nvidia-* wheels (cuenv.engines.cudahome)
    NAME/.cuenv/bin/cuenv-smoke-test  in an image only (cuenv.export.imagespec): the recipe's smoke test,
    NAME/.cuenv/smoke_test.py         and its Python script, if it has one
    NAME/.cuenv/complete              written last: an environment without it is incomplete, never usable
    NAME/.cuenv/change.json           while `cuenv add/upgrade/uninstall` changes it: the packages before
                                      (a kill -9 leaves it; the next change or lock undoes the change)
    .changes/NAME.before              a conda prefix's hard-linked copy while it changes (cuenv.envs.snapshot)
    .locks/NAME.lock                  one file lock per environment name, while it is held
    .claims/NAME                      "cuenv is building NAME": written before the engine makes the prefix,
                                      removed once NAME/.cuenv/complete proves it (a kill -9 leaves it)

The hook (shell/cuenv.sh, shell/cuenv.fish) spells the same names in shell; a test holds them equal.
Every write into ``.cuenv`` goes through this module (atomic, durable where it is a record); the engines
only read the solution here and build ``.cuenv/cuda`` at the path named here. It imports nothing of
cuenv's above ``cuenv.atomic`` at load, so that every layer may name these paths (tests/test_architecture.py).
"""

from __future__ import annotations

import json
from pathlib import Path

from cuenv import atomic

TYPE_CHECKING = False  # no `typing` at run time: the start-up path does without it (issue 29)
if TYPE_CHECKING:
    from collections.abc import Mapping
    from typing import Any, Final

META_DIR: Final = ".cuenv"
META_FILE: Final = "meta.json"
SOLUTION_FILE: Final = "solution.json"
VERDICT_FILE: Final = "verdict"
COMPLETE: Final = "complete"
LOCKS_DIR: Final = ".locks"
CLAIMS_DIR: Final = ".claims"
SHIMS_DIR: Final = "shims"
CHANGE_FILE: Final = "change.json"
CUDA_DIR: Final = "cuda"
BIN_DIR: Final = "bin"
SMOKE_TOOL: Final = "cuenv-smoke-test"
SMOKE_SCRIPT: Final = "smoke_test.py"
SHIM_MARK: Final = "# cuenv-shim"  # second line of every shim (cuenv.activation.shims writes them): how one is recognised


def meta_dir(prefix: Path) -> Path:
    return prefix / META_DIR


def activate_script(meta: Path, shell: str) -> Path:
    """The activation script for ``shell`` inside an environment's meta folder."""
    return meta / f"activate.{shell}"


def write_activation(meta: Path, scripts: Mapping[str, str]) -> None:
    """Write the activation scripts (shell -> text, cuenv.activation.render.render_scripts) into ``meta``."""
    meta.mkdir(parents=True, exist_ok=True)
    for shell, text in scripts.items():
        atomic.write_text(activate_script(meta, shell), text)


def shims_dir(prefix: Path) -> Path:
    """Where the shims of the CUDA tools an environment lacks live (put on PATH after its own bin folders)."""
    return prefix / META_DIR / SHIMS_DIR


def change_journal(prefix: Path) -> Path:
    """Where an unfinished change of the environment's packages keeps what was installed before it."""
    return prefix / META_DIR / CHANGE_FILE


def solution_path(prefix: Path) -> Path:
    return prefix / META_DIR / SOLUTION_FILE


def cuda_home(prefix: Path) -> Path:
    """A venv's CUDA_HOME: a tree of symlinks into its nvidia-* wheels, for tools that want one."""
    return prefix / META_DIR / CUDA_DIR


def read_solution_text(prefix: Path) -> str:
    """The environment's own lock as text: a regular file of at most limits.LOCK (else ValueError, naming why)."""
    from cuenv.errors import CuenvError
    from cuenv.trust import limits

    try:
        return limits.read_text(solution_path(prefix), what="Environment lock", limit=limits.LOCK)
    except CuenvError as exc:
        raise ValueError(exc.message) from None


def read_solution(prefix: Path) -> dict[str, Any]:
    """The environment's own lock as JSON data (cuenv.engines.Solution.from_json reads it)."""
    data = json.loads(read_solution_text(prefix))
    if not isinstance(data, dict):
        raise ValueError(f"{solution_path(prefix)} is not a JSON object")
    return data


def own_solution(prefix: Path, name: str) -> dict[str, Any]:
    """:func:`read_solution`, or an error that says so and how to recreate environment ``name``."""
    from cuenv.errors import CuenvError

    try:
        return read_solution(prefix)
    except (OSError, ValueError) as exc:
        raise CuenvError(f"Environment {name!r} has no readable {SOLUTION_FILE} ({exc}).",
                         hint=f"Recreate it: `cuenv info {name}` names its recipe; create it again from that with -n {name} --force.") from None


def write_solution(prefix: Path, solution_json: Any) -> str:
    """Write the environment's own lock; returns its hash (``sha256:...``), which meta records."""
    text, digest = solution_text(solution_json)
    write_solution_text(prefix, text)
    return digest


def solution_text(solution_json: Any) -> tuple[str, str]:
    """The environment's own lock as written, and its hash (``sha256:...``)."""
    text = json.dumps(solution_json, indent=2, sort_keys=True) + "\n"
    import hashlib  # on use: OpenSSL's load is a few ms of every start-up (issue 29)

    return text, "sha256:" + hashlib.sha256(text.encode()).hexdigest()


def write_solution_text(prefix: Path, text: str) -> None:
    atomic.write_text(solution_path(prefix), text, durable=True)


def write_json(path: Path, data: Any) -> None:
    atomic.write_text(path, json.dumps(data, indent=2, sort_keys=True) + "\n", durable=True)


def is_shim(path: Path) -> bool:
    """Is this file a cuenv shim (and not the real tool)?"""
    try:
        with path.open("rb") as f:
            head = f.read(256)
    except OSError:
        return False
    return head.startswith(b"#!/bin/sh\n" + SHIM_MARK.encode())


def write_shims(shims_dir: Path, scripts: Mapping[str, str]) -> None:
    """Replace the shims folder's content with ``scripts`` (tool -> text), each written atomically;
    a file there that is not a shim (the user's) is kept."""
    shims_dir.mkdir(parents=True, exist_ok=True)
    for old in shims_dir.iterdir():
        if old.name not in scripts and old.is_file() and is_shim(old):
            old.unlink()
    for tool, text in scripts.items():
        atomic.write_text(shims_dir / tool, text, mode=0o755)
