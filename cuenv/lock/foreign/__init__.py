"""Lockfiles written by other tools, installed exactly (no solve) as cuenv environments: issue 15 §3.

=============  ==============================  =========================================================
kind           files                           reader
=============  ==============================  =========================================================
conda-lock     conda-lock.yml (version 1)      :mod:`cuenv.lock.foreign.condalock`
pixi-lock      pixi.lock (every version)       :mod:`cuenv.lock.foreign.pixi` (py-rattler's LockFile)
pylock         pylock.toml, pylock.NAME.toml   :mod:`cuenv.lock.foreign.pylock` (packaging.pylock, PEP 751)
uv-lock        uv.lock                         :mod:`cuenv.lock.foreign.uvlock` (`uv export`, then pylock)
explicit       conda's @EXPLICIT list          :mod:`cuenv.lock.foreign.explicit` (``cuenv export --format explicit``)
=============  ==============================  =========================================================

:func:`detect` tells the kind from the content (the name only breaks ties), :func:`parse` turns
one environment and platform of the file into a validated :class:`~cuenv.lock.foreign.model.ForeignLock`,
:func:`cuenv.lock.foreign.stack.derive` reads the CUDA stack its packages need, and :func:`to_lock`
makes the cuenv :class:`~cuenv.lock.model.Lock` that `cuenv create --from-lock` installs: the same
path as a cuenv lockfile, with the hardware contract checked before the first download. Nothing
is downloaded and nothing is written beside the file: rattler reads a private temporary copy of a
pixi.lock, and uv exports a uv.lock offline in a private temporary folder.
"""

from __future__ import annotations

import hashlib
import re
from pathlib import PurePath
from typing import Any, Final

from cuenv.lock.foreign.model import ForeignLock, ForeignLockError, NoWheelForTarget, Where
from cuenv.lock.foreign.stack import Derived, derive
from cuenv.lock.model import is_cuenv_lock

KINDS: Final = ("conda-lock", "pixi-lock", "pylock", "uv-lock", "explicit")
LABELS: Final = {"conda-lock": "conda-lock.yml", "pixi-lock": "pixi.lock", "pylock": "pylock.toml", "uv-lock": "uv.lock",
                 "explicit": "@EXPLICIT list"}
_SNIFF: Final = (
    ("explicit", re.compile(r"^@EXPLICIT\s*$", re.MULTILINE)),
    ("pylock", re.compile(r"^lock-version\s*=", re.MULTILINE)),
    ("uv-lock", re.compile(r"^\[\[package\]\]\s*$", re.MULTILINE)),
    ("pixi-lock", re.compile(r"^environments:\s*$", re.MULTILINE)),
    ("conda-lock", re.compile(r"^package:\s*$", re.MULTILINE)),
)
_BY_NAME: Final = (
    ("pylock", re.compile(r"^pylock(\.[^.]+)?\.toml$")),
    ("uv-lock", re.compile(r"^uv\.lock$")),
    ("pixi-lock", re.compile(r"^pixi\.lock$")),
    ("conda-lock", re.compile(r"(^|[.-])conda-lock\.ya?ml$")),
)


def detect(name: str, source: str) -> str | None:
    """The kind of a lockfile (one of KINDS), or None for a cuenv lockfile or anything unknown.

    The content decides (a cuenv lock has a top-level ``recipe:``); the file name only when the
    content says nothing (an empty or broken file), so that its refusal speaks of the right format.
    """
    if is_cuenv_lock(source):
        return None
    for kind, pattern in _SNIFF:
        if pattern.search(source):
            if kind == "conda-lock" and not re.search(r"^metadata:", source, re.MULTILINE):
                continue
            if kind == "conda-lock" and re.search(r"^version:\s*[23]\s*$", source, re.MULTILINE):
                return "pixi-lock"  # pixi's locks before format 4 kept conda-lock's shape; py-rattler reads them
            return kind
    base = PurePath(name).name
    return next((kind for kind, pattern in _BY_NAME if pattern.search(base)), None)


def parse(source: str, *, kind: str, file: str, platform: str, python: str, environment: str | None = None) -> ForeignLock:
    """One environment and platform of a foreign lockfile, fully validated (ForeignLockError otherwise).

    ``python`` (X.Y) picks wheels in the Python-only formats; conda formats lock their own Python.
    """
    if kind == "conda-lock":
        from cuenv.lock.foreign import condalock

        return condalock.parse(source, file=file, platform=platform, environment=environment)
    if kind == "pixi-lock":
        from cuenv.lock.foreign import pixi

        return pixi.parse(source, file=file, platform=platform, environment=environment)
    if kind == "pylock":
        from cuenv.lock.foreign import pylock

        return pylock.parse(source, file=file, platform=platform, python=python, environment=environment)
    if kind == "uv-lock":
        from cuenv.lock.foreign import uvlock

        return uvlock.parse(source, file=file, platform=platform, python=python, environment=environment)
    if kind == "explicit":
        from cuenv.lock.foreign import explicit

        return explicit.parse(source, file=file, platform=platform, environment=environment)
    raise ValueError(f"unknown lockfile kind {kind!r}")


def pythons(source: str, kind: str, here: str) -> list[tuple[str, str | None]]:
    """The Pythons (X.Y) to read a pylock.toml or uv.lock for when --python is not given, in order, each
    with the note that says why: ``here`` first when the file's ``requires-python`` allows it, then every
    other 3.X it allows, nearest first (uv, too, picks an interpreter the lock supports). The caller
    takes the first for which every locked package has a wheel. A file it cannot read is left to its
    parser to refuse."""
    from packaging.specifiers import InvalidSpecifier, SpecifierSet

    from cuenv.knowledge.versions import admitted_patch
    from cuenv.lock.foreign.model import load_toml

    if kind not in ("pylock", "uv-lock"):
        return [(here, None)]
    try:
        requires = load_toml(source, "", hint="").get("requires-python")
        spec = SpecifierSet(requires) if isinstance(requires, str) else SpecifierSet()
    except (ForeignLockError, InvalidSpecifier):
        return [(here, None)]
    now = int(here.split(".")[1])
    allowed = [m for m in range(8, 20) if admitted_patch(spec, f"3.{m}") is not None]
    found: list[tuple[str, str | None]] = [(here, None)] if now in allowed else []
    for minor in sorted((m for m in allowed if m != now), key=lambda m: (abs(m - now), -m)):
        why = (f"its requires-python ({requires}) does not allow {here}" if now not in allowed
               else f"not every locked package has a wheel for {here}")
        found.append((f"3.{minor}", f"read for Python 3.{minor}: {why} (this Python); --python "
                                    "picks another"))
    return found or [(here, None)]


def describe(foreign: ForeignLock) -> Derived:
    """The stack the locked packages need, labelled like ``pixi.lock [default, linux-64]``."""
    where = filter(None, (foreign.environment, foreign.platform_name or foreign.platform))
    label = PurePath(foreign.file).name + " [" + ", ".join(where) + "]"
    return derive(foreign.packages, platform=foreign.platform, label=label, depends=foreign.depends,
                  constrains=foreign.constrains, virtual_packages=foreign.virtual_packages)


def engine_kind(foreign: ForeignLock) -> str:
    """conda | venv: which engine family installs these packages; refuses what no engine can.

    PyPI wheels on top of conda packages (pixi's and conda-lock's ``pypi`` entries) are a conda
    environment's pip layer: a conda engine links the conda packages, then installs exactly those
    wheels, hashes required, into the prefix's Python (cuenv.engines.piplayer), as pixi does."""
    where = Where(foreign.file)
    kinds = foreign.kinds
    if not kinds:
        raise where.fail(f"it locks no installable package for {foreign.platform}.",
                         "Check --platform and --environment, or regenerate the lock.")
    if "conda" in kinds:
        if "pypi" in kinds and not any(p.kind == "conda" and p.name == "python" for p in foreign.packages):
            raise where.fail("it locks PyPI packages on top of conda packages that hold no python to install them into.",
                             "Regenerate the lock with python among its conda dependencies.")
        return "conda"
    return "venv"


def require_installable(foreign: ForeignLock) -> None:
    """Refuse, naming the first, when some locked package cannot be installed without building it."""
    if foreign.unusable:
        first = foreign.unusable[0]
        more = f" ({len(foreign.unusable) - 1} more like it)" if len(foreign.unusable) > 1 else ""
        raise first.where.fail(f"{first.name} {first.why}{more}", first.hint)


def to_lock(foreign: ForeignLock, derived: Derived, *, name: str, engine: str, source: str) -> Any:
    """The cuenv Lock that installs exactly ``foreign``'s packages: one platform, its contract, and the
    file's sha256 as the recipe hash (so a changed file is a different lock)."""
    from cuenv.engines import Solution
    from cuenv.lock.model import Lock, LockRecipe, contract_for

    packages = tuple(p.replace(index_url=p.index_url or p.url.rsplit("/", 1)[0]) if p.kind == "pypi" else p
                     for p in foreign.packages)
    solution = Solution(engine=engine, platform=foreign.platform, python=foreign.python, packages=packages)
    digest = "sha256:" + hashlib.sha256(source.encode()).hexdigest()
    return Lock(
        recipe=LockRecipe(name, None, digest), engine=engine, python=foreign.python,
        channels=tuple(sorted({p.channel.rstrip("/") for p in packages if p.kind == "conda" and p.channel})),
        indexes=tuple(sorted({p.index_url.rstrip("/") for p in packages if p.kind == "pypi" and p.index_url})),
        contract=contract_for(derived.stack, [foreign.platform]), solutions=(solution,), made_on=None,
    )


def default_name(file: str, environment: str | None) -> str:
    """An environment name from the lockfile's folder (and a non-default pixi environment)."""
    folder = PurePath(file).parent.name or "project"
    stem = re.sub(r"[^a-z0-9._-]+", "-", folder.lower()).strip("-._") or "project"
    if environment and environment != "default":
        stem += "-" + (re.sub(r"[^a-z0-9._-]+", "-", environment.lower()).strip("-._") or "env")
    return stem[:64]


__all__ = [
    "KINDS",
    "LABELS",
    "Derived",
    "ForeignLock",
    "ForeignLockError",
    "NoWheelForTarget",
    "default_name",
    "pythons",
    "describe",
    "detect",
    "engine_kind",
    "parse",
    "require_installable",
    "to_lock",
]
