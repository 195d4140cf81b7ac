"""The I/O around lockfiles, shared by `cuenv lock`, `cuenv sync` and `cuenv create --from-lock`."""

from __future__ import annotations

import platform as _platform
import sys
from pathlib import Path
from typing import Iterable

from cuenv import atomic
from cuenv.errors import NotFound, UsageError


def host_platform() -> str:
    """This machine's conda-style platform (linux-64, linux-aarch64, win-64, ...)."""
    from cuenv.lock.model import platform_of

    os_name = "windows" if sys.platform.startswith("win") else "osx" if sys.platform == "darwin" else "linux"
    return platform_of(os_name, _platform.machine() or "x86_64")


def read_lock(path: str | Path, *, platform: str | None = None, trusted_env: Iterable[str] = ()):
    """Read and validate a lockfile (bounded: a lock is shared input); refuses one without packages for
    ``platform``. ``trusted_env`` is the user's extension of the variables a lock may set."""
    from cuenv.lock.model import parse
    from cuenv.trust import limits

    p = Path(path)
    try:
        text = limits.read_text(p, what="Lockfile", limit=limits.LOCK)
    except NotFound:
        raise NotFound(f"Lockfile {p} does not exist.", hint="Make one with `cuenv lock NAME -o FILE`.") from None
    return parse(text, file=str(p), platform=platform, trusted_env=trusted_env)


def write_text(path: Path, text: str) -> None:
    """Replace ``path`` atomically: a reader never sees half a lockfile."""
    try:
        atomic.write_text(path, text)
    except OSError as exc:
        raise UsageError(f"Cannot write {path}: {exc.strerror or exc}.") from None


def catalogue_extras(settings, lock) -> dict:
    """smoke_test and requested specs from the lock's recipe, when this catalogue has that exact recipe
    (same content hash); a lock made from a recipe the reader lacks installs all the same."""
    from cuenv.recipes.catalogue import load_catalogue

    try:
        recipe = load_catalogue(settings).find(lock.recipe["name"])
    except UsageError:
        return {}
    if recipe.content_hash() != lock.recipe.get("hash"):
        return {}
    version = lock.recipe.get("version")
    requested: list[str] = []
    if lock.engine == "venv" and recipe.venv is not None:
        requested = list(recipe.venv.requirements_for(version))
    elif lock.engine != "venv" and recipe.conda is not None:
        requested = list(recipe.conda.specs_for(version))
    return {"smoke_test": recipe.smoke_test.to_dict() if recipe.smoke_test else None, "requested": requested}
