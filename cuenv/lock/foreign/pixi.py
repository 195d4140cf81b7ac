"""pixi's lockfile (``pixi.lock``) -> ForeignLock for one environment and platform, read by py-rattler.

What the file means is py-rattler's ``rattler.LockFile`` (rattler_lock, the library pixi itself
writes and reads the file with): every format version it knows (4 to 7 today; 7 names platforms
such as ``cuda-linux-64`` that solve for a subdir with virtual packages), every environment,
every platform, conda and PyPI packages. cuenv adds only its own checks on the untrusted values
(:mod:`cuenv.lock.foreign.model`: URL scheme, no credentials, hashes present, file names that match
the package) and its choice of what to read:

- the environment is ``default`` unless --environment names another, as `pixi install` does; an
  empty ``default`` beside other environments is refused with their names, never read as "nothing";
- the platform is this machine's unless --platform names another (a version 7 platform name or a
  subdir); the other environments and platforms the file locks are named in the notes, with the
  flag that picks each;
- a PyPI URL with a ``#sha256=HEX`` fragment (as pixi writes wheel URLs from an index page) is that
  URL and that hash;
- packages pixi builds from source (``conda_source``, git/path PyPI packages, sdists, editables)
  are described but never installed: building them would run their code.
"""

from __future__ import annotations

import re
import tempfile
from pathlib import Path
from typing import Any, Final

from cuenv.lock.foreign.model import (
    ForeignLock,
    ForeignLockError,
    Unusable,
    Where,
    conda_package,
    index_for,
    python_of,
    url,
    wheel_package,
)

KIND: Final = "pixi-lock"
HINT: Final = "Regenerate it with `pixi lock`, or create from an environment.yml."
_SOURCE_HINT: Final = "Install it inside the environment afterwards (`cuenv run` with pip install), or lock a built package."
_FRAGMENT: Final = re.compile(r"#sha256=([0-9a-fA-F]{64})$")
# An anchor or alias starts a node. rattler's YAML reader follows aliases; a small hostile file would
# expand into a huge one, and no pixi writes them, so they are refused before rattler sees the text.
_ALIAS: Final = re.compile(r"(?:^\s*-\s+|:\s+|[\[{,]\s*|^)[&*][^\s,\]}]", re.MULTILINE)


def parse(source: str, *, file: str, platform: str, environment: str | None = None, data: Any = None) -> ForeignLock:
    """``data`` (a parsed document, for tests) is written out as YAML and read like a file."""
    if data is not None:
        import yaml

        source = yaml.safe_dump(data, sort_keys=False)
    where = Where(file)
    lock = _load(source, where)
    envs = dict(sorted(lock.environments(), key=lambda item: (item[0] != "default", item[0])))
    env_name = environment or "default"
    if env_name not in envs:
        listed = ", ".join(envs) or "none"
        raise where.at("environments").fail(f"it has no environment {env_name!r} (it has {listed}).",
                                            "Choose one with --environment " + " | ".join(envs) + "." if envs else HINT)
    env = envs[env_name]
    env_where = where.at(f"environments.{env_name}")
    platforms = {p.name: p for p in env.platforms()}
    if not platforms:
        others = [n for n in envs if n != env_name and envs[n].platforms()]
        if others:
            raise env_where.fail(f"environment {env_name!r} locks no packages; it locks environments "
                                 f"{', '.join(others)}.", f"Choose one with --environment {others[0]}"
                                 + (f" (or {', '.join(others[1:])})." if others[1:] else "."))
        raise env_where.fail(f"environment {env_name!r} locks no packages for any platform.",
                             "Add dependencies to the pixi workspace and run `pixi lock`.")
    key = _choose(platform, {name: p.subdir for name, p in platforms.items()})
    if key is None:
        listed = ", ".join(sorted(platforms))
        raise env_where.fail(f"environment {env_name!r} has no packages for {platform} (it has {listed}).",
                             f"Choose one with --platform ({listed}), or add {platform} to the workspace's "
                             "platforms and run `pixi lock`.")
    chosen_platform = platforms[key]
    subdir = str(chosen_platform.subdir)
    channels = tuple(str(c).rstrip("/") for c in env.channels())
    packages: dict[tuple[str, str], Any] = {}
    depends: dict[str, tuple[str, ...]] = {}
    constrains: dict[str, tuple[str, ...]] = {}
    unusable: list[Unusable] = []
    for pkg in env.packages(chosen_platform) or ():
        at = where.at(f"environments.{env_name}.packages.{key}")
        made = _package(pkg, subdir, at)
        if isinstance(made, Unusable):
            unusable.append(made)
            continue
        if made.kind == "conda":
            record = pkg.repo_data_record()
            depends[made.name] = tuple(map(str, record.depends))
            if record.constrains:
                constrains[made.name] = tuple(map(str, record.constrains))
        packages[(made.kind, made.name)] = made
    chosen = tuple(sorted(packages.values(), key=lambda p: p.key))
    return ForeignLock(kind=KIND, file=file, platform=subdir, platforms=tuple(platforms), packages=chosen,
                       environment=env_name, environments=tuple(envs), python=python_of(chosen), channels=channels,
                       indexes=tuple(dict.fromkeys(p.index_url for p in chosen if p.kind == "pypi" and p.index_url)),
                       depends=depends, constrains=constrains, virtual_packages=tuple(map(str, chosen_platform.virtual_packages or ())),
                       unusable=tuple(sorted(unusable, key=lambda u: u.name)), notes=_others(envs, env_name, platforms, key),
                       platform_name=key if key != subdir else None)


def _load(source: str, where: Where) -> Any:
    """The text through ``rattler.LockFile`` (which reads paths only: a private temporary copy)."""
    from rattler import LockFile

    alias = _ALIAS.search(source)
    if alias:
        line = source.count("\n", 0, alias.start()) + 1
        raise ForeignLockError("YAML anchors and aliases (&name, *name) are not read in a lockfile.", file=where.file,
                               line=line, hint=HINT)
    if "\0" in source:
        raise where.fail("it is binary, not a pixi lockfile (YAML).", HINT)
    with tempfile.TemporaryDirectory(prefix="cuenv-pixi-") as folder:
        path = Path(folder) / "pixi.lock"
        path.write_text(source, encoding="utf-8")
        try:
            return LockFile.from_path(path)
        except Exception as exc:  # rattler raises its own ParseCondaLockError (and others) for any bad file
            message = (str(exc).strip().splitlines() or [type(exc).__name__])[0]
            newer = re.search(r"newer lockfile format version (\d+)", message)
            hint = "Upgrade cuenv (its py-rattler) to read it." if newer else HINT
            at = re.search(r"at line (\d+)", message)
            raise ForeignLockError(f"not a pixi lockfile cuenv reads: {message}.", file=where.file,
                                   line=int(at.group(1)) if at else None, hint=hint) from None


def _choose(platform: str, subdirs: dict[str, Any]) -> str | None:
    """The platform key for ``platform``: a key of that name (``linux-64``, or v7's ``cuda-linux-64``),
    else the first key of that subdir."""
    if platform in subdirs:
        return platform
    return next((k for k, sub in subdirs.items() if str(sub) == platform), None)


def _others(envs: dict[str, Any], env_name: str, platforms: dict[str, Any], key: str) -> tuple[str, ...]:
    """What else the file locks, with the flag that reads it (a lock is never read for one silently)."""
    notes = []
    other_platforms = sorted(p for p in platforms if p != key)
    if other_platforms:
        notes.append(f"read for platform {key}; it also locks {', '.join(other_platforms)} (--platform picks one)")
    other_envs = [n for n in envs if n != env_name and envs[n].platforms()]
    if other_envs:
        notes.append(f"read environment {env_name}; it also locks {', '.join(other_envs)} (--environment picks one)")
    return tuple(notes)


def _sha256(pkg: Any) -> str | None:
    try:
        digest = pkg.hashes.sha256 if pkg.hashes is not None else None
    except AttributeError:  # rattler's PackageHashes wrapper around no hashes
        return None
    return digest.hex() if digest else None


def _md5(pkg: Any) -> str | None:
    try:
        digest = pkg.hashes.md5 if pkg.hashes is not None else None
    except AttributeError:
        return None
    return digest.hex() if digest else None


def _package(pkg: Any, subdir: str, at: Where) -> Any:
    from rattler.lock import CondaLockedBinaryPackage, PypiLockedPackage

    location = str(pkg.location)
    name = str(pkg.name)
    if isinstance(pkg, CondaLockedBinaryPackage):
        record = pkg.repo_data_record()
        location = str(record.url)  # `location` is a path for a file:// URL; the record keeps the URL
        scheme = location.split(":", 1)[0].lower() if ":" in location else ""
        if scheme not in ("http", "https", "file"):
            return Unusable(name, f"is a local conda package ({location}), which pixi builds.", at, _SOURCE_HINT)
        return conda_package(name=name, version=str(record.version), build=str(record.build), location=location,
                             sha256=_sha256(pkg), md5=_md5(pkg), subdir=str(record.subdir or subdir), where=at, hint=HINT)
    if not isinstance(pkg, PypiLockedPackage):  # CondaLockedSourcePackage: pixi builds it
        return Unusable(name, "is built from source by pixi; cuenv installs built packages only.", at, _SOURCE_HINT)
    sha = _sha256(pkg)
    fragment = _FRAGMENT.search(location)
    if fragment:
        location, sha = location[: fragment.start()], sha or fragment.group(1).lower()
    if location.startswith("/") and location.endswith(".whl"):  # rattler's path for a file:// wheel URL
        from pathlib import PurePosixPath

        location = PurePosixPath(location).as_uri()
    scheme = location.split(":", 1)[0].lower() if ":" in location else ""
    if scheme not in ("http", "https", "file"):
        what = "a VCS checkout" if "+" in scheme else "a local path"
        return Unusable(name, f"is {what} ({location.split('#')[0]}), which pixi builds from source.", at,
                        _SOURCE_HINT)
    link, filename = url(location, at, hint=HINT)
    if not filename.endswith(".whl"):
        return Unusable(name, "is a source distribution or editable package: installing it would run its build code.",
                        at, "Lock a wheel for it, or install it inside the environment afterwards.")
    return wheel_package(name=name, version=str(pkg.version), location=link, sha256=sha,
                         index=index_for(link, ()), where=at, hint=HINT)
