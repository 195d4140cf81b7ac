"""conda-lock's unified lockfile (``conda-lock.yml``, schema ``version: 1``) -> ForeignLock.

Hand-written, unlike the pixi.lock, pylock.toml and uv.lock readers: py-rattler's ``LockFile`` refuses
conda-lock's own files (both fixtures: "data did not match any variant of untagged enum MapOrVec",
py-rattler 0.28), and conda-lock itself is a heavy dependency (pydantic, its solvers) for one parser.

The keys read, as conda-lock 2-4 write them (``conda_lock/lockfile/v1/models.py``)::

    version: 1
    metadata: {platforms: [linux-64, ...], channels: [{url: conda-forge, used_env_vars: []}], ...}
    package:
    - {name, version, manager: conda|pip, platform, dependencies: {name: spec}, url,
       hash: {md5, sha256}, category: main, optional: false, build?, source?}

Like ``conda-lock install`` (whose ``--dev`` is on by default), the packages of categories
``main`` and ``dev`` are installed; other optional categories are left out and said so.
"""

from __future__ import annotations

import re
from typing import Any, Final

from cuenv.lock.foreign.model import (
    ForeignLock,
    LineDict,
    LineList,
    Unusable,
    Where,
    conda_package,
    index_for,
    load_yaml,
    python_of,
    seq,
    table,
    url,
    wheel_package,
)

KIND: Final = "conda-lock"
HINT: Final = "Regenerate it with `conda-lock lock`, or create from its source: `cuenv create -f environment.yml`."
_INSTALLED_CATEGORIES: Final = ("main", "dev")
_VCS: Final = re.compile(r"^(?:git|hg|svn|bzr)\+", re.IGNORECASE)


def parse(source: str, *, file: str, platform: str, environment: str | None = None, data: Any = None) -> ForeignLock:
    where = Where(file)
    if environment is not None:
        raise where.fail(f"a conda-lock file has one environment, so --environment {environment} does not apply.",
                         "Leave out --environment.")
    doc = load_yaml(source, file, hint=HINT) if data is None else data
    if not isinstance(doc, dict):
        raise where.fail("not a conda-lock file (expected a mapping).", HINT)
    version = doc.get("version")
    if version != 1 or isinstance(version, bool):
        raise where.at("version", _line(doc, "version")).fail(
            f"conda-lock schema version {version!r} is not one cuenv reads (it reads version 1).",
            "Regenerate it with conda-lock 2 or newer (`conda-lock lock`), which writes version 1.")
    meta = doc.get("metadata")
    if not isinstance(meta, dict):
        raise where.at("metadata", _line(doc, "metadata")).fail("`metadata` must be a mapping.", HINT)
    platforms = meta.get("platforms")
    if not isinstance(platforms, list) or not platforms or not all(isinstance(p, str) for p in platforms):
        raise where.at("metadata.platforms", _line(meta, "platforms")).fail("`platforms` must list platforms.", HINT)
    if platform not in platforms:
        raise where.at("metadata.platforms", _line(meta, "platforms")).fail(
            f"it has no packages for {platform} (it holds {', '.join(platforms)}).",
            f"Choose one with --platform ({', '.join(platforms)}), or lock for {platform}: "
            f"`conda-lock lock -p {platform}`.")
    channels = _channels(meta, where)
    entries = doc.get("package")
    if not isinstance(entries, list):
        raise where.at("package", _line(doc, "package")).fail("`package` must be a list.", HINT)
    packages: dict[tuple[str, str], Any] = {}
    depends: dict[str, tuple[str, ...]] = {}
    unusable: list[Unusable] = []
    skipped: set[str] = set()
    for i, entry in enumerate(entries):
        at = where.at(f"package[{i}]", entries.line_of(i) if isinstance(entries, LineList) else None, entry)
        if not isinstance(entry, dict):
            raise at.fail("a package must be a mapping.", HINT)
        if entry.get("platform") != platform:
            if not isinstance(entry.get("platform"), str):
                raise at.part("platform").fail("`platform` must be a platform name.", HINT)
            continue
        category, optional = entry.get("category", "main"), entry.get("optional", False)
        if optional and category not in _INSTALLED_CATEGORIES:
            skipped.add(str(category))
            continue
        manager = entry.get("manager")
        hashes = entry.get("hash")
        if not isinstance(hashes, dict):
            raise at.part("hash").fail("`hash` must map md5/sha256 to digests.", HINT)
        if manager == "conda":
            pkg = conda_package(name=entry.get("name"), version=entry.get("version"), build=entry.get("build"),
                                location=entry.get("url"), sha256=hashes.get("sha256"), md5=hashes.get("md5"),
                                subdir=None, where=at, hint=HINT)
            deps = table(entry.get("dependencies"), at.part("dependencies"), "dependencies", hint=HINT)
            depends[pkg.name] = tuple(f"{k} {v}".strip() for k, v in sorted(deps.items()) if isinstance(v, str))
        elif manager == "pip":
            raw = entry.get("url")
            if isinstance(raw, str) and _VCS.match(raw):  # git+https://...@COMMIT, its "sha256" the commit: never fetched
                built = "a VCS checkout"
            else:
                link, filename = url(raw, at.part("url"), hint=HINT)
                built = "a source distribution or VCS checkout" if entry.get("source") is not None \
                    or not filename.endswith(".whl") else ""
            if built:
                unusable.append(Unusable(
                    str(entry.get("name")), f"is locked as {built}: installing it would run its build code.", at,
                    "Lock a wheel for it (pip/uv with --only-binary :all:), or install it later inside the environment."))
                continue
            pkg = wheel_package(name=entry.get("name"), version=entry.get("version"), location=link,
                                sha256=hashes.get("sha256"), index=index_for(link, ()), where=at, hint=HINT)
        else:
            raise at.part("manager").fail(
                f"manager {manager!r} is neither conda nor pip.", HINT)
        key = (pkg.kind, pkg.name)
        if key in packages and packages[key] != pkg:
            raise at.fail(f"{pkg.name} is locked twice for {platform}, differently.", HINT)
        packages[key] = pkg
    chosen = tuple(sorted(packages.values(), key=lambda p: p.key))
    notes = tuple(f"left out the optional category {c!r} (conda-lock installs it with --extras {c})" for c in sorted(skipped))
    return ForeignLock(kind=KIND, file=file, platform=platform, platforms=tuple(platforms), packages=chosen,
                       python=python_of(chosen), channels=channels, depends=depends, unusable=tuple(unusable),
                       notes=notes)


def _channels(meta: dict[str, Any], where: Where) -> tuple[str, ...]:
    found = []
    for item in seq(meta.get("channels"), where.at("metadata.channels", _line(meta, "channels")), "channels", hint=HINT):
        value = item.get("url") if isinstance(item, dict) else item
        if not isinstance(value, str) or not value:
            raise where.at("metadata.channels", _line(meta, "channels")).fail("a channel must have a `url`.", HINT)
        found.append(value)
    return tuple(found)


def _line(data: Any, key: str) -> int | None:
    return data.line_of(key) if isinstance(data, LineDict) else None
