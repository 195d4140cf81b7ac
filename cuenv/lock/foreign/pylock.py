"""PEP 751 lockfiles (``pylock.toml``, ``pylock.NAME.toml``, ``lock-version = "1.x"``) -> ForeignLock.

Read as the PEP tells an installer to: refuse an unknown major ``lock-version``; check
``environments`` and ``requires-python`` against the target; keep the packages whose ``marker``
holds (extras none, dependency groups the file's ``default-groups``); for each, take the best wheel
for the target, or an ``archive`` that is a wheel. Packages only available as an sdist, a VCS
checkout or a directory are described but never installed: building them would run their code.
Wheel ``path``s are relative to the lockfile's folder, as the PEP says.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Final

from cuenv.lock.foreign.model import (
    ForeignLock,
    Unusable,
    Where,
    load_toml,
    seq,
    size,
    table_lines,
    wheel_package,
)
from cuenv.lock.foreign.wheels import Target, best_wheel, marker_holds

KIND: Final = "pylock"
HINT: Final = "Regenerate it (`uv export --format pylock.toml`, `pip lock`), or install from requirements.txt."
_SOURCE_HINT: Final = "Lock a wheel for it (`--only-binary :all:`), or install it inside the environment afterwards."


def looks_like(data: Any) -> bool:
    return isinstance(data, dict) and "lock-version" in data


def parse(source: str, *, file: str, platform: str, python: str, environment: str | None = None,
          data: Any = None) -> ForeignLock:
    where = Where(file)
    if environment is not None:
        raise where.fail(f"a pylock.toml has one environment, so --environment {environment} does not apply.",
                         "Leave out --environment (a named lock is its own file: pylock.NAME.toml).")
    doc = load_toml(source, file, hint=HINT) if data is None else data
    version = doc.get("lock-version")
    if not isinstance(version, str) or not version.split(".")[0].isdigit():
        raise where.at("lock-version").fail(f"lock-version {version!r} is not a version.", HINT)
    if version.split(".")[0] != "1":
        raise where.at("lock-version").fail(f"lock-version {version} is not one cuenv reads (it reads 1.x, PEP 751).",
                                            "Upgrade cuenv, or regenerate the file in the PEP 751 1.0 format.")
    target = Target(python=python, platform=platform)
    _check_environment(doc, target, where)
    groups = tuple(g for g in seq(doc.get("default-groups"), where.at("default-groups"), "default-groups", hint=HINT)
                   if isinstance(g, str))
    entries = seq(doc.get("packages"), where.at("packages"), "packages", hint=HINT)
    lines = table_lines(source, "packages") if data is None else []
    base = Path(file).resolve().parent
    packages: dict[str, Any] = {}
    unusable: list[Unusable] = []
    left_out = 0
    for i, entry in enumerate(entries):
        at = where.at(f"packages[{i}]", lines[i] if i < len(lines) else None)
        if not isinstance(entry, dict):
            raise at.fail("a package must be a table.", HINT)
        try:
            applies = marker_holds(entry.get("marker"), target, groups=groups)
        except ValueError as exc:
            raise at.fail(f"marker {entry.get('marker')!r} is not a PEP 508 marker: {exc}.", HINT) from None
        if not applies:
            left_out += 1
            continue
        made = _package(entry, target, base, at)
        if isinstance(made, Unusable):
            unusable.append(made)
            continue
        if made.name.lower() in packages:
            raise at.fail(f"two entries for {made.name} apply to Python {python} on {platform}.", HINT)
        packages[made.name.lower()] = made
    chosen = tuple(sorted(packages.values(), key=lambda p: p.key))
    indexes = tuple(dict.fromkeys(p.index_url for p in chosen if p.index_url))
    notes = (f"left out {left_out} packages whose markers do not hold for Python {python} on {platform}",) if left_out else ()
    return ForeignLock(kind=KIND, file=file, platform=platform, platforms=(platform,), packages=chosen, python=python,
                       indexes=indexes, unusable=tuple(unusable), notes=notes)


def _check_environment(doc: dict, target: Target, where: Where) -> None:
    from packaging.specifiers import InvalidSpecifier, SpecifierSet

    requires = doc.get("requires-python")
    if requires is not None:
        try:
            ok = SpecifierSet(str(requires)).contains(f"{target.python}.0", prereleases=True)
        except InvalidSpecifier:
            raise where.at("requires-python").fail(f"requires-python {requires!r} is not a version specifier.", HINT) from None
        if not ok:
            raise where.at("requires-python").fail(f"it needs Python {requires}, not {target.python}.",
                                                   "Choose a matching Python with --python X.Y.")
    environments = seq(doc.get("environments"), where.at("environments"), "environments", hint=HINT)
    if environments:
        try:
            holds = any(marker_holds(str(m), target) for m in environments)
        except ValueError as exc:
            raise where.at("environments").fail(f"an environment marker is not PEP 508: {exc}.", HINT) from None
        if not holds:
            raise where.at("environments").fail(
                f"none of its environments is Python {target.python} on {target.platform}: {'; '.join(map(str, environments))}.",
                "Choose the matching Python or platform with --python / --platform.")


def _package(entry: dict, target: Target, base: Path, at: Where) -> Any:
    name = entry.get("name")
    index = entry.get("index") if isinstance(entry.get("index"), str) else None
    wheels = seq(entry.get("wheels"), at.part("wheels"), "wheels", hint=HINT)
    if wheels:
        links = [_location(w, base) for w in wheels if isinstance(w, dict)]
        if len(links) != len(wheels) or any(link is None for link in links):
            raise at.fail("every wheel needs a `url` or a `path`.", HINT)
        filenames = [str(w.get("name") or str(link).rsplit("/", 1)[-1]) for w, link in zip(wheels, links)]
        chosen = best_wheel(filenames, target)
        if chosen is None:
            return Unusable(str(name), f"has no wheel for Python {target.python} on {target.platform}.", at,
                            "Choose another --python or --platform, or lock for this one.")
        wheel = wheels[chosen]
        size(wheel.get("size"), at.part("size"), hint=HINT)
        return wheel_package(name=name, version=entry.get("version"), location=links[chosen],
                             sha256=_sha256(wheel, at), index=index, where=at, hint=HINT)
    archive = entry.get("archive")
    if isinstance(archive, dict):
        link = _location(archive, base)
        if link is not None and link.split("?")[0].endswith(".whl"):
            return wheel_package(name=name, version=entry.get("version"), location=link, sha256=_sha256(archive, at),
                                 index=index, where=at, hint=HINT)
    kind = next((k for k in ("sdist", "vcs", "directory", "archive") if k in entry), None)
    if kind is None:
        raise at.fail("names no wheel, archive, sdist, vcs or directory to install from.", HINT)
    return Unusable(str(name), f"is locked as {'an' if kind == 'archive' else 'a'} {kind}: installing it would run "
                    "its build code.", at, _SOURCE_HINT)


def _location(item: dict, base: Path) -> str | None:
    if isinstance(item.get("url"), str):
        return item["url"]
    if isinstance(item.get("path"), str):
        path = Path(item["path"])
        return (path if path.is_absolute() else base / path).resolve().as_uri()
    return None


def _sha256(item: dict, at: Where) -> Any:
    hashes = item.get("hashes")
    if not isinstance(hashes, dict):
        raise at.fail("a wheel needs `hashes` with a sha256.", HINT)
    return hashes.get("sha256")
