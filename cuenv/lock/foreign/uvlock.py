"""uv's project lockfile (``uv.lock``, ``version = 1``) -> ForeignLock for one target.

uv.lock is universal: it holds every package for every platform and Python it supports, and
`uv sync` picks. cuenv picks the same way: start at the workspace's own packages (``source =
{ editable | virtual }``, which are the project and are not installed), follow ``dependencies``
and the ``dev`` group (uv's default group) whose markers hold for the target, tell apart forked
versions by ``version``/``source`` or their ``resolution-markers``, and take each package's best
wheel. Packages from git, a path or only an sdist are described but never installed: building
them would run their code.
"""

from __future__ import annotations

from typing import Any, Final

from cuenv.lock.foreign.model import (
    ForeignLock,
    Unusable,
    Where,
    load_toml,
    seq,
    size,
    table,
    table_lines,
    wheel_package,
)
from cuenv.lock.foreign.wheels import Target, best_wheel, marker_holds

KIND: Final = "uv-lock"
HINT: Final = "Regenerate it with `uv lock`, or export it for installers: `uv export --format pylock.toml`."
_SOURCE_HINT: Final = "Install it inside the environment afterwards (`cuenv run NAME -- uv pip install ...`)."
_DEFAULT_GROUPS: Final = ("dev",)
_ROOT_SOURCES: Final = ("editable", "virtual")


def looks_like(data: Any) -> bool:
    return isinstance(data, dict) and isinstance(data.get("package"), list) and "lock-version" not in data \
        and isinstance(data.get("version"), int)


def parse(source: str, *, file: str, platform: str, python: str, environment: str | None = None,
          data: Any = None) -> ForeignLock:
    where = Where(file)
    if environment is not None:
        raise where.fail(f"a uv.lock has one environment, so --environment {environment} does not apply.",
                         "Leave out --environment.")
    doc = load_toml(source, file, hint=HINT) if data is None else data
    if doc.get("version") != 1:
        raise where.at("version").fail(f"uv.lock version {doc.get('version')!r} is not one cuenv reads (it reads 1).",
                                       "Upgrade cuenv, or regenerate the file with uv.")
    target = Target(python=python, platform=platform)
    _check_python(doc, target, where)
    entries = doc.get("package")
    if not isinstance(entries, list) or not all(isinstance(e, dict) for e in entries):
        raise where.at("package").fail("`package` must be an array of tables.", HINT)
    lines = table_lines(source, "package") if data is None else []
    by_name: dict[str, list[int]] = {}
    for i, entry in enumerate(entries):
        if not isinstance(entry.get("name"), str):
            raise where.at(f"package[{i}]", lines[i] if i < len(lines) else None).fail("a package needs a name.", HINT)
        by_name.setdefault(_canon(entry["name"]), []).append(i)
    roots = [i for i, e in enumerate(entries) if isinstance(e.get("source"), dict) and set(e["source"]) & set(_ROOT_SOURCES)]
    if not roots:
        raise where.fail("it has no workspace package (source = { editable } or { virtual }) to install for.",
                         "Regenerate it from the project with `uv lock`.")

    def at(i: int) -> Where:
        return where.at(f"package[{i}]", lines[i] if i < len(lines) else None)

    def deps_of(i: int, extras: frozenset[str], root: bool) -> list[tuple[dict, Where]]:
        entry, here = entries[i], at(i)
        found = [(d, here) for d in seq(entry.get("dependencies"), here, "dependencies", hint=HINT)]
        optional = table(entry.get("optional-dependencies"), here, "optional-dependencies", hint=HINT)
        for extra in sorted(extras):
            found += [(d, here) for d in seq(optional.get(extra), here, f"optional-dependencies.{extra}", hint=HINT)]
        if root:
            groups = table(entry.get("dev-dependencies"), here, "dev-dependencies", hint=HINT)
            for group in _DEFAULT_GROUPS:
                found += [(d, here) for d in seq(groups.get(group), here, f"dev-dependencies.{group}", hint=HINT)]
        return found

    seen: set[tuple[int, frozenset[str]]] = set()
    install: list[int] = []
    queue: list[tuple[int, frozenset[str], bool]] = [(i, frozenset(), True) for i in roots]
    while queue:
        i, extras, root = queue.pop()
        if (i, extras) in seen:
            continue
        seen.add((i, extras))
        if not root:
            install.append(i)
        for dep, dep_at in deps_of(i, extras, root):
            if not isinstance(dep, dict) or not isinstance(dep.get("name"), str):
                raise dep_at.fail("a dependency needs a name.", HINT)
            try:
                if not marker_holds(dep.get("marker"), target):
                    continue
            except ValueError as exc:
                raise dep_at.fail(f"marker {dep.get('marker')!r} is not PEP 508: {exc}.", HINT) from None
            j = _resolve(dep, by_name, entries, target, dep_at)
            extras_wanted = seq(dep.get("extra"), dep_at, "extra", hint=HINT)
            queue.append((j, frozenset(e for e in extras_wanted if isinstance(e, str)), j in roots))
    packages: dict[str, Any] = {}
    unusable: list[Unusable] = []
    for i in sorted(set(install)):
        made = _package(entries[i], target, at(i))
        if isinstance(made, Unusable):
            unusable.append(made)
        else:
            packages[_canon(made.name)] = made
    chosen = tuple(sorted(packages.values(), key=lambda p: p.key))
    project = ", ".join(sorted(entries[i]["name"] for i in roots))
    return ForeignLock(kind=KIND, file=file, platform=platform, platforms=(platform,), packages=chosen, python=python,
                       indexes=tuple(dict.fromkeys(p.index_url for p in chosen if p.index_url)), unusable=tuple(unusable),
                       notes=(f"the project itself ({project}) is not installed: it is source, not a locked artifact",))


def _check_python(doc: dict, target: Target, where: Where) -> None:
    from packaging.specifiers import InvalidSpecifier, SpecifierSet

    requires = doc.get("requires-python")
    if requires is None:
        return
    try:
        ok = SpecifierSet(str(requires)).contains(f"{target.python}.0", prereleases=True)
    except InvalidSpecifier:
        raise where.at("requires-python").fail(f"requires-python {requires!r} is not a version specifier.", HINT) from None
    if not ok:
        raise where.at("requires-python").fail(f"it needs Python {requires}, not {target.python}.",
                                               "Choose a matching Python with --python X.Y.")


def _resolve(dep: dict, by_name: dict[str, list[int]], entries: list[dict], target: Target, at: Where) -> int:
    candidates = by_name.get(_canon(dep["name"]), [])
    if "version" in dep:
        candidates = [i for i in candidates if entries[i].get("version") == dep["version"]]
    if "source" in dep:
        candidates = [i for i in candidates if entries[i].get("source") == dep["source"]]
    if len(candidates) > 1:
        fitting = []
        for i in candidates:
            markers = seq(entries[i].get("resolution-markers"), at, "resolution-markers", hint=HINT)
            try:
                if not markers or any(marker_holds(str(m), target) for m in markers):
                    fitting.append(i)
            except ValueError as exc:
                raise at.fail(f"a resolution marker of {dep['name']} is not PEP 508: {exc}.", HINT) from None
        candidates = fitting or candidates
    if not candidates:
        raise at.fail(f"depends on {dep['name']}, which the lock does not hold.", HINT)
    return candidates[0]


def _package(entry: dict, target: Target, at: Where) -> Any:
    raw = entry.get("source")
    source: dict = raw if isinstance(raw, dict) else {}
    name = entry.get("name")
    if "registry" not in source and "url" not in source:
        kind = next(iter(source), "an unknown source")
        return Unusable(str(name), f"comes from {kind} ({source.get(kind)}): installing it would run its build code.",
                        at, _SOURCE_HINT)
    wheels = [w for w in seq(entry.get("wheels"), at, "wheels", hint=HINT) if isinstance(w, dict)]
    filenames = [str(w.get("url", "")).rsplit("/", 1)[-1] for w in wheels]
    chosen = best_wheel(filenames, target)
    if chosen is None:
        return Unusable(str(name), f"has no wheel for Python {target.python} on {target.platform} (only an sdist).", at,
                        "Lock a wheel for it (`uv lock` with `no-build = true`), or choose another --python/--platform.")
    wheel = wheels[chosen]
    size(wheel.get("size"), at, hint=HINT)
    digest = wheel.get("hash")
    if not isinstance(digest, str) or not digest.startswith("sha256:"):
        raise at.fail(f"wheel {filenames[chosen]} has no sha256 hash.", HINT)
    index = source.get("registry") if isinstance(source.get("registry"), str) else None
    return wheel_package(name=name, version=entry.get("version"), location=wheel.get("url"),
                         sha256=digest.split(":", 1)[1], index=index, where=at, hint=HINT)


def _canon(name: str) -> str:
    import re

    return re.sub(r"[-_.]+", "-", name).lower()
