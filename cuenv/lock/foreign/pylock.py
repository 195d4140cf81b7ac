"""PEP 751 lockfiles (``pylock.toml``, ``pylock.NAME.toml``) -> ForeignLock, read by ``packaging.pylock``.

What the file means is ``packaging``'s: ``Pylock.from_dict`` validates it (lock-version, keys, types,
names, versions, markers, hashes) and ``Pylock.select`` picks what an installer installs for a
target (requires-python, ``environments``, package markers with the default groups, duplicate
packages, the best wheel for the target's tags), exactly as PEP 751 tells an installer to.

What stays here is what ``packaging`` does not do:

- the target is not this interpreter: a Python X.Y and a conda-style platform (``linux-64``) become
  a marker environment and a list of wheel tags (:class:`cuenv.lock.foreign.wheels.Target`);
- a wheel ``path`` is relative to the lockfile's folder (the PEP says so; ``packaging`` keeps the text);
- cuenv's checks on untrusted values before any download (:mod:`cuenv.lock.foreign.model`: http(s)
  or file URLs only, no credentials, a sha256, a file name that is the package);
- what is selected but is not a wheel (an sdist, a VCS checkout, a directory, a non-wheel archive)
  is described, never installed: building it would run its code;
- the refusal names the line of the ``[[packages]]`` entry (``packaging`` names its index).
"""

from __future__ import annotations

import shlex
from pathlib import Path
from typing import Any, Final

from cuenv.lock.foreign.model import (
    ForeignLock,
    NoWheelForTarget,
    Unusable,
    Where,
    load_toml,
    python_patch,
    size,
    table_lines,
    wheel_package,
)
from cuenv.lock.foreign.wheels import Target

KIND: Final = "pylock"
HINT: Final = "Regenerate it (`uv export --format pylock.toml`, `pip lock`), or install from requirements.txt."
_SOURCE_HINT: Final = "Lock a wheel for it (`--only-binary :all:`), or install it inside the environment afterwards."


def _wheel_targets(package: Any) -> list[tuple[str, str]]:
    """(platform, Python) pairs a package's wheels are for, read from their file names (cuenv's platform
    names; free-threaded and abi-less tags left out): where a lock for another target can be read."""
    from cuenv.knowledge.derive import platform_key, python_key, sort_pythons, wheel_name

    found: dict[str, set[str]] = {}
    for wheel in package.wheels or ():
        parsed = wheel_name(wheel.name or str(wheel.url or wheel.path or "").rsplit("/", 1)[-1])
        if parsed is None:
            continue
        pythons = {v for t in parsed.pythons if (v := python_key(t)) and not v.endswith("t")}
        for plat in filter(None, map(platform_key, parsed.platforms)):
            if pythons:
                found.setdefault(plat, set()).update(pythons)
    return [(plat, v) for plat in sorted(found) for v in reversed(sort_pythons(found[plat]))]


def parse(source: str, *, file: str, platform: str, python: str, environment: str | None = None,
          data: Any = None) -> ForeignLock:
    from packaging.pylock import Pylock, PylockSelectError, PylockUnsupportedVersionError, PylockValidationError

    where = Where(file)
    if environment is not None:
        raise where.fail(f"a pylock.toml has one environment, so --environment {environment} does not apply.",
                         "Leave out --environment (a named lock is its own file: pylock.NAME.toml).")
    doc = load_toml(source, file, hint=HINT) if data is None else data
    lines = table_lines(source, "packages") if data is None else []

    def at(index: int | None) -> Where:
        if index is None:
            return where
        return where.at(f"packages[{index}]", lines[index] if index < len(lines) else None)

    try:
        lock = Pylock.from_dict(doc)
    except PylockUnsupportedVersionError as exc:
        raise where.at("lock-version").fail(f"{_said(exc)} (cuenv reads 1.x, PEP 751).",
                                            "Upgrade cuenv, or regenerate the file in the PEP 751 1.0 format.") from None
    except PylockValidationError as exc:
        raise at(_index(exc.context)).fail(f"not a PEP 751 lockfile: {_said(exc)}.", HINT) from None
    except (TypeError, ValueError, AttributeError) as exc:  # a value packaging did not expect at all
        raise where.fail(f"not a PEP 751 lockfile: {exc}.", HINT) from None
    target = Target(python=python, platform=platform, patch=python_patch(lock.requires_python, python, where))  # ==3.12.8: the markers say 3.12.8
    index_of = {id(p): i for i, p in enumerate(lock.packages)}
    try:
        selected = list(lock.select(environment=target.markers(), tags=target.supported()))  # type: ignore[arg-type]  # a dict of every marker key, not packaging's TypedDict
    except PylockSelectError as exc:
        said = _said(exc)
        found = _index(said)
        if "environments specified" in said:
            raise where.at("environments").fail(
                f"none of its environments is Python {python} on {platform}: "
                f"{'; '.join(map(str, lock.environments or ()))}.",
                "Choose the matching Python or platform with --python / --platform.") from None
        if said.startswith("No wheel found"):
            name = lock.packages[found].name if found is not None else "a package"
            targets = _wheel_targets(lock.packages[found]) if found is not None else []
            hint = (f"Its wheels are for {', '.join(f'Python {v} on {p}' for p, v in targets[:3])}: "
                    f"`cuenv check {shlex.quote(file)} --platform {targets[0][0]} --python {targets[0][1]}` reads the lock "
                    "for that target; or lock for this one." if targets else
                    "Choose another --python or --platform, or lock for this one.")
            raise at(found).fail(f"{name} has no wheel for Python {python} on {platform} (and no sdist): "
                                 "the lock cannot install it there.", hint, kind=NoWheelForTarget) from None
        raise at(found).fail(f"{said}.", "Choose another --python or --platform, or regenerate the lock.") from None
    base = Path(file).resolve().parent
    packages: dict[str, Any] = {}
    unusable: list[Unusable] = []
    elsewhere: list[Any] = []  # packages whose wheels are all for other targets: their sdists are taken here
    for package, artifact in selected:
        here = at(index_of.get(id(package)))
        made = _package(package, artifact, base, here)
        if isinstance(made, Unusable):
            unusable.append(made)
            if package.wheels:
                elsewhere.append(package)
        else:
            packages[made.name.lower()] = made
    left_out = len(lock.packages) - len(selected)
    chosen = tuple(sorted(packages.values(), key=lambda p: p.key))
    indexes = tuple(dict.fromkeys(p.index_url for p in chosen if p.index_url))
    notes: tuple[str, ...] = (f"left out {left_out} packages whose markers do not hold for Python {python} on {platform}",) \
        if left_out else ()
    if elsewhere and (targets := _wheel_targets(elsewhere[0])):
        plat, version = targets[0]
        notes += (f"packages with wheels only for other targets ({len(elsewhere)}; Python {version} on {plat} first) "
                  f"would be built from their sdists on {platform}; "
                  f"`cuenv check {shlex.quote(file)} --platform {plat} --python {version}` reads it for the target its wheels are for",)
    return ForeignLock(kind=KIND, file=file, platform=platform, platforms=(platform,), packages=chosen, python=python,
                       indexes=indexes, unusable=tuple(unusable), notes=notes)


def _package(package: Any, artifact: Any, base: Path, at: Where) -> Any:
    from packaging.pylock import PackageArchive, PackageWheel

    name, version = str(package.name), str(package.version) if package.version is not None else None
    if isinstance(artifact, (PackageWheel, PackageArchive)):
        link = _location(artifact, base)
        if isinstance(artifact, PackageWheel) or (link and link.split("?")[0].endswith(".whl")):
            size(artifact.size, at.part("size"), hint=HINT)
            return wheel_package(name=name, version=version, location=link, sha256=artifact.hashes.get("sha256"),
                                 index=package.index, where=at, hint=HINT)
    kind = {"PackageSdist": "an sdist", "PackageVcs": "a vcs checkout", "PackageDirectory": "a directory",
            "PackageArchive": "an archive"}.get(type(artifact).__name__, "a source")
    return Unusable(name, f"is locked as {kind}: installing it would run its build code.", at, _SOURCE_HINT)


def _location(item: Any, base: Path) -> str | None:
    if item.url:
        return str(item.url)
    if item.path:
        path = Path(item.path)
        return (path if path.is_absolute() else base / path).resolve().as_uri()
    return None


def _said(exc: Exception) -> str:
    return (str(exc).strip().splitlines() or [type(exc).__name__])[0].rstrip(".")


def _index(context: str | None) -> int | None:
    """The package index in packaging's context (``packages[3].wheels[0]``), when it names one."""
    import re

    found = re.search(r"packages\[(\d+)\]", context or "")
    return int(found.group(1)) if found else None
