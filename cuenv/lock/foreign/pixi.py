"""pixi's lockfile (``pixi.lock``, versions 4 to 7) -> ForeignLock for one environment and platform.

The versions differ in how packages are written (rattler_lock's ``FileFormatVersion``, whose
latest is 7; pixi writes 6 or 7 today, and 4-5 files are still common in repositories):

=======  ==========================================================================================
version  what changed
=======  ==========================================================================================
4, 5     ``packages: [{kind: conda|pypi, name, version, build, subdir, url, sha256, md5, depends}]``;
         5 adds the environment's PyPI ``indexes``
6        ``packages: [{conda: URL, sha256, md5, depends, ...}, {pypi: URL, name, version, sha256}]``:
         name, version and build are read from the file name when left out
7        a top-level ``platforms: [{name, subdir, virtual-packages}]``: an environment's packages are
         keyed by these names (``cuda-linux-64``), which may differ from the subdir (``linux-64``)
=======  ==========================================================================================

The environment is ``default`` unless --environment says otherwise, and the platform is this
machine's unless --platform names another (a v7 platform name or a subdir), as `pixi install` does.
Packages pixi builds from source (``conda_source``, path and editable packages, sdists) are
described but never installed: building them would run their code.
"""

from __future__ import annotations

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
    size,
    url,
    wheel_package,
)

KIND: Final = "pixi-lock"
VERSIONS: Final = (4, 5, 6, 7)
HINT: Final = "Regenerate it with `pixi lock` (pixi writes version 6 or 7), or create from an environment.yml."
_SOURCE_HINT: Final = "Install it inside the environment afterwards (`cuenv run NAME -- pip install ...`), or lock a built package."


def looks_like(data: Any) -> bool:
    return isinstance(data, dict) and isinstance(data.get("environments"), dict) and "packages" in data


def parse(source: str, *, file: str, platform: str, environment: str | None = None, data: Any = None) -> ForeignLock:
    where = Where(file)
    doc = load_yaml(source, file, hint=HINT) if data is None else data
    if not isinstance(doc, dict):
        raise where.fail("not a pixi lockfile (expected a mapping).", HINT)
    version = doc.get("version")
    if version not in VERSIONS or isinstance(version, bool):
        newer = isinstance(version, int) and not isinstance(version, bool) and version > max(VERSIONS)
        raise where.at("version", _line(doc, "version")).fail(
            f"pixi.lock version {version!r} is not one cuenv reads (it reads {', '.join(map(str, VERSIONS))}).",
            "Upgrade cuenv to read it." if newer else "Rewrite it with a current pixi: `pixi lock`.")
    envs = doc.get("environments")
    if not isinstance(envs, dict) or not envs:
        raise where.at("environments", _line(doc, "environments")).fail("`environments` must name environments.", HINT)
    env_name = environment or "default"
    if env_name not in envs:
        raise where.at("environments", _line(envs, env_name) or _line(doc, "environments")).fail(
            f"it has no environment {env_name!r} (it has {', '.join(map(str, envs))}).",
            "Choose one with --environment " + " | ".join(map(str, envs)) + ".")
    env = envs[env_name]
    env_where = where.at(f"environments.{env_name}", _line(envs, env_name))
    if not isinstance(env, dict) or not isinstance(env.get("packages"), dict):
        raise env_where.fail("an environment must map platforms to packages.", HINT)
    subdirs, virtual = _platforms(doc, version, env["packages"], where)
    key = _choose(platform, subdirs)
    if key is None:
        listed = ", ".join(sorted(subdirs))
        raise env_where.fail(f"environment {env_name!r} has no packages for {platform} (it has {listed}).",
                             f"Choose one with --platform ({listed}), or add {platform} to the workspace's "
                             "platforms and run `pixi lock`.")
    subdir = subdirs[key]
    selectors = seq(env["packages"].get(key), env_where.at(f"environments.{env_name}.packages.{key}"), key, hint=HINT)
    indexes = tuple(i for i in seq(env.get("indexes"), env_where, "indexes", hint=HINT) if isinstance(i, str))
    channels = tuple(c.get("url") if isinstance(c, dict) else c
                     for c in seq(env.get("channels"), env_where, "channels", hint=HINT))
    table = _package_table(doc.get("packages"), version, where)
    packages: dict[tuple[str, str], Any] = {}
    depends: dict[str, tuple[str, ...]] = {}
    unusable: list[Unusable] = []
    for i, selector in enumerate(selectors):
        at = where.at(f"environments.{env_name}.packages.{key}[{i}]",
                      selectors.line_of(i) if isinstance(selectors, LineList) else None)
        if not isinstance(selector, dict):
            raise at.fail("a package entry must be a mapping.", HINT)
        kind = next((k for k in ("conda", "pypi", "conda_source") if k in selector), None)
        if kind == "conda_source" or kind is None:
            name = str(selector.get("conda_source") or "?").split("[")[0].split("@")[0].strip()
            unusable.append(Unusable(name, "is built from source by pixi; cuenv installs built packages only.", at,
                                     _SOURCE_HINT))
            continue
        location = selector[kind]
        record, record_at = _find(table, kind, location, selector)
        if record is None:
            raise at.fail(f"{location} is listed for {key} but missing from the `packages` list.", HINT)
        pkg_at = where.at(f"packages[{record_at[0]}]", record_at[1], record)
        made = _package(kind, record, location, subdir, indexes, pkg_at)
        if isinstance(made, Unusable):
            unusable.append(made)
            continue
        if made.kind == "conda":
            specs = seq(record.get("depends"), pkg_at.part("depends"), "depends", hint=HINT) + \
                seq(record.get("constrains"), pkg_at.part("constrains"), "constrains", hint=HINT)
            depends[made.name] = tuple(s for s in specs if isinstance(s, str))
        packages[(made.kind, made.name)] = made
    chosen = tuple(sorted(packages.values(), key=lambda p: p.key))
    return ForeignLock(kind=KIND, file=file, platform=subdir, platforms=tuple(subdirs), packages=chosen,
                       environment=env_name, environments=tuple(map(str, envs)), python=python_of(chosen),
                       channels=tuple(c for c in channels if isinstance(c, str)), indexes=indexes, depends=depends,
                       virtual_packages=virtual.get(key, ()), unusable=tuple(unusable),
                       platform_name=key if key != subdir else None)


def _platforms(doc: dict, version: int, env_packages: dict, where: Where) -> tuple[dict[str, str], dict[str, tuple[str, ...]]]:
    """Platform key -> conda subdir, and key -> virtual packages (version 7's named platforms)."""
    if version < 7:
        return {str(k): str(k) for k in env_packages}, {}
    listed = doc.get("platforms")
    if not isinstance(listed, list):
        raise where.at("platforms", _line(doc, "platforms")).fail("a version 7 lockfile must list `platforms`.", HINT)
    subdirs: dict[str, str] = {}
    virtual: dict[str, tuple[str, ...]] = {}
    for i, item in enumerate(listed):
        if not isinstance(item, dict) or not isinstance(item.get("name"), str):
            raise where.at(f"platforms[{i}]", listed.line_of(i) if isinstance(listed, LineList) else None).fail(
                "a platform needs a `name`.", HINT)
        subdirs[item["name"]] = str(item.get("subdir") or item["name"])
        vps = seq(item.get("virtual-packages"), where.at(f"platforms[{i}]"), "virtual-packages", hint=HINT)
        virtual[item["name"]] = tuple(str(v) for v in vps)
    return {k: v for k, v in subdirs.items() if k in env_packages}, virtual


def _choose(platform: str, subdirs: dict[str, str]) -> str | None:
    """The platform key for ``platform``: a key of that name (``linux-64``, or v7's ``cuda-linux-64``),
    else the first key of that subdir."""
    if platform in subdirs:
        return platform
    return next((k for k, sub in subdirs.items() if sub == platform), None)


def _package_table(entries: Any, version: int, where: Where) -> dict[tuple[str, str], list[tuple[dict, tuple[int, int | None]]]]:
    """(kind, location) -> [(record, (index, line))] over the top-level ``packages`` list."""
    if not isinstance(entries, list):
        raise where.at("packages").fail("`packages` must be a list.", HINT)
    table: dict[tuple[str, str], list] = {}
    for i, record in enumerate(entries):
        line = entries.line_of(i) if isinstance(entries, LineList) else None
        if not isinstance(record, dict):
            raise where.at(f"packages[{i}]", line).fail("a package must be a mapping.", HINT)
        if version <= 5:
            kind = record.get("kind")
            location = record.get("url") or record.get("path")
        else:
            kind = next((k for k in ("conda", "pypi", "conda_source") if k in record), None)
            location = record.get(kind) if kind else None
        if kind not in ("conda", "pypi", "conda_source") or not isinstance(location, str):
            raise where.at(f"packages[{i}]", line).fail("a package needs a conda or pypi location.", HINT)
        table.setdefault((kind, location), []).append((record, (i, line)))
    return table


def _find(table: dict, kind: str, location: Any, selector: dict) -> tuple[dict | None, tuple[int, int | None]]:
    found = table.get((kind, location)) if isinstance(location, str) else None
    if not found:
        return None, (0, None)
    for record, at in found:  # version 6 selectors may disambiguate by name/version/build/subdir
        if all(selector.get(k) is None or str(record.get(k, selector[k])) == str(selector[k])
               for k in ("name", "version", "build", "subdir")):
            return record, at
    return found[0]


def _package(kind: str, record: dict, location: str, subdir: str, indexes: tuple[str, ...], at: Where) -> Any:
    size(record.get("size"), at.part("size"), hint=HINT)
    scheme = location.split(":", 1)[0].lower() if ":" in location else ""
    if scheme not in ("http", "https", "file"):
        name = record.get("name") or location.rstrip("/").rsplit("/", 1)[-1]
        what = "a VCS checkout" if "+" in scheme else "a local path"
        return Unusable(str(name), f"is {what} ({location.split('#')[0]}), which pixi builds from source.", at,
                        _SOURCE_HINT)
    if kind == "conda":
        if record.get("package_build_source") or record.get("input") or record.get("sources"):
            return Unusable(str(record.get("name") or location), "is built from source by pixi.", at, _SOURCE_HINT)
        return conda_package(name=record.get("name"), version=record.get("version"), build=record.get("build"),
                             location=location, sha256=record.get("sha256"), md5=record.get("md5"),
                             subdir=record.get("subdir"), where=at, hint=HINT)
    link, filename = url(location, at, hint=HINT)
    if record.get("editable") or not filename.endswith(".whl"):
        return Unusable(str(record.get("name") or filename), "is a source distribution or editable package: "
                        "installing it would run its build code.", at,
                        "Lock a wheel for it, or install it inside the environment afterwards.")
    index = record.get("index") if isinstance(record.get("index"), str) else index_for(link, indexes)
    return wheel_package(name=record.get("name"), version=record.get("version"), location=link,
                         sha256=record.get("sha256"), index=index, where=at, hint=HINT)


def _line(data: Any, key: str) -> int | None:
    return data.line_of(key) if isinstance(data, LineDict) else None
