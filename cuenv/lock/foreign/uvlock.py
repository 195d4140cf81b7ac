"""uv's project lockfile (``uv.lock``) -> ForeignLock for one target, read by uv itself.

uv.lock's meaning (its graph, forks, resolution markers, groups, sources, revisions) is uv's: cuenv
asks uv to export it as PEP 751 (``uv export --frozen --offline --format pylock.toml``: the lock
as it stands, no resolve, no network) and reads that through :mod:`cuenv.lock.foreign.pylock`
(``packaging.pylock``), so a uv.lock and a pylock.toml are one code path.

uv exports from a project folder. The export runs in a private temporary folder holding a copy of
the lock and of the ``pyproject.toml`` beside it (whose ``[tool.uv]`` settings, default groups
among them, are the project's); with none beside it (a lock shared alone), a minimal
``pyproject.toml`` naming the lock's own root package stands in. Nothing is written next to the
user's files and uv's cache is private to the call. The project itself (an editable or virtual
root) is source, not a locked artifact: it is left out (``--no-emit-project``) and said so.

A lock whose wheels include some without a hash (an index that served none, as PyTorch's did for
some of its wheels) uv exports as PEP 751 only after downloading those wheels to hash them. Read
here, that lock is exported as uv's requirements instead (``--format requirements.txt --no-hashes``:
what `uv sync` installs, as pins with markers, which ``packaging`` judges for the target): enough to
say what it installs and what it needs; never enough to install, since nothing verifies a download.
"""

from __future__ import annotations

import functools
import re
import tempfile
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

from cuenv.knowledge.packages import canonical
from cuenv.lock.foreign.model import ForeignLock, Where, load_toml

KIND: Final = "uv-lock"
HINT: Final = "Regenerate it with `uv lock`, or export it for installers: `uv export --format pylock.toml`."
_TIMEOUT: Final = 120.0
_LOCK_TIMEOUT: Final = 600.0  # `uv lock` resolves: metadata of every package from the indexes
_ROOT_SOURCES: Final = ("editable", "virtual")


def parse(source: str, *, file: str, platform: str, python: str, environment: str | None = None) -> ForeignLock:
    from dataclasses import replace

    from cuenv.lock.foreign import pylock

    where = Where(file)
    if environment is not None:
        raise where.fail(f"a uv.lock has one environment, so --environment {environment} does not apply.",
                         "Leave out --environment.")
    project = _project_beside(file)
    exported = export(source, file=file, project=project)
    if exported.pylock is not None:
        found = pylock.parse("", file=file, platform=platform, python=python, data=exported.pylock)
    else:
        found = _from_pins(exported, where, platform=platform, python=python)
    roots = exported.roots
    lines = _lines_by_name(source)
    unusable = tuple(replace(u, where=replace(u.where, line=lines.get(canonical(u.name)), key=f"package {u.name}"))
                     for u in found.unusable)
    project_note = f"the project itself ({', '.join(roots)}) is not installed: it is source, not a locked artifact"
    return replace(found, kind=KIND, unusable=unusable, notes=(*found.notes, project_note))


def _lines_by_name(source: str) -> dict[str, int]:
    """The line of each package's ``[[package]]`` entry (the first, for a forked package), for refusals."""
    import re

    from cuenv.lock.foreign.model import table_lines

    names = re.findall(r'^\[\[package\]\]\s*\n\s*name\s*=\s*"([^"]+)"', source, re.MULTILINE)
    starts = table_lines(source, "package")
    found: dict[str, int] = {}
    for name, line in zip(names, starts):
        found.setdefault(canonical(name), line)
    return found


@dataclass(frozen=True)
class Exported:
    """What ``uv export`` gives for a lock: its PEP 751 document, or (where wheels in it have no hash)
    its pins without hashes; and the lock's facts the reading needs."""

    roots: tuple[str, ...]  # the project's root packages (not installed: source)
    pylock: dict[str, Any] | None = None
    pins: str | None = None  # uv's requirements export, --no-hashes
    unhashed: tuple[str, ...] = ()  # the packages with wheels the lock holds no hash for
    requires_python: str | None = None


def export(source: str, *, file: str, project: str | None) -> Exported:
    """What ``uv export`` writes for this lock (see :class:`Exported`)."""
    return _export(source, file, project)


@functools.lru_cache(maxsize=8)  # check tries several Pythons on one lock: uv runs once
def _export(source: str, file: str, project: str | None) -> Exported:
    where = Where(file)
    doc = load_toml(source, file, hint=HINT)
    entries = doc.get("package")
    if not isinstance(entries, list) or not all(isinstance(e, dict) for e in entries):
        raise where.at("package").fail("`package` must be an array of tables.", HINT)
    roots = tuple(str(e.get("name")) for e in entries
                  if isinstance(e.get("source"), dict) and set(e["source"]) & set(_ROOT_SOURCES))
    if not roots:
        raise where.fail("it has no workspace package (source = { editable } or { virtual }) to install for.",
                         "Regenerate it from the project with `uv lock`.")
    with tempfile.TemporaryDirectory(prefix="cuenv-uvlock-") as folder:
        work = Path(folder)
        (work / "uv.lock").write_text(source, encoding="utf-8")
        tries: list[Callable[[], str]] = [lambda: project] if project is not None else []
        tries.append(lambda: _stand_in(doc, entries, roots, where))  # the lock alone, or a project uv cannot read here
        failure = ""
        for text in tries:
            (work / "pyproject.toml").write_text(text(), encoding="utf-8")
            ok, out = _uv_export(work)
            if ok:
                return Exported(roots, pylock=load_toml(out, file, hint=HINT))
            if _UNHASHED in out:  # uv would download wheels to hash them: read the pins without hashes
                ok, pins = _uv_export(work, hashes=False)
                if ok:
                    requires = doc.get("requires-python")
                    return Exported(roots, pins=pins, unhashed=_without_hash(entries),
                                    requires_python=requires if isinstance(requires, str) else None)
            failure = failure or out
    raise where.fail(f"uv cannot read it: {failure}", HINT)


_UNHASHED: Final = "to compute missing hashes"  # uv's words where the lock holds wheels without a hash
_UNHASHED_HINT: Final = ("Export it with hashes where its indexes are reachable: in the project's folder, "
                         "`uv export --format pylock.toml -o pylock.toml` downloads the wheels without one to hash them; "
                         "then install from that pylock.toml.")


def _without_hash(entries: list[dict[str, Any]]) -> tuple[str, ...]:
    """The lock's packages with a wheel that has no ``hash`` (a field of uv.lock's entries, read as it is)."""
    return tuple(sorted({canonical(str(e.get("name"))) for e in entries if isinstance(e.get("wheels"), list)
                         and any(isinstance(w, dict) and "hash" not in w for w in e["wheels"])}))


def _from_pins(exported: Exported, where: Where, *, platform: str, python: str) -> ForeignLock:
    """The lock for ``python`` on ``platform`` from uv's pins without hashes (``name==version ; marker``,
    the markers judged by ``packaging``): every package by name and version, for reading; nothing of it
    installable (no pin carries a hash), which the first package without a hashed wheel says."""
    from packaging.requirements import InvalidRequirement, Requirement
    from packaging.specifiers import InvalidSpecifier, SpecifierSet

    from cuenv.engines import Package
    from cuenv.lock.foreign.model import Unusable, python_patch
    from cuenv.lock.foreign.wheels import Target

    requires = exported.requires_python
    try:
        spec = SpecifierSet(requires) if requires is not None else None
    except InvalidSpecifier:
        raise where.at("requires-python").fail(f"{str(requires)[:80]!r} is not a version specifier.", HINT) from None
    markers = Target(python=python, platform=platform, patch=python_patch(spec, python, where)).markers()
    packages: dict[str, Package] = {}
    for line in (exported.pins or "").splitlines():
        text = line.strip()
        if not text or text.startswith(("#", "-")):  # uv's comments; -e of a workspace member; index options
            continue
        try:
            req = Requirement(text)
        except InvalidRequirement as exc:
            raise where.fail(f"uv's export of it holds a line cuenv cannot read ({exc}).", HINT) from None
        if req.marker is not None and not req.marker.evaluate(markers):
            continue
        exact = [spec.version for spec in req.specifier if spec.operator in ("==", "===")]
        version = exact[0] if exact else (_wheel_version(req.url) if req.url else None)
        if version is None:
            raise where.fail(f"uv's export of it pins {req.name} to no version ({text[:80]!r}).", HINT)
        name = canonical(req.name)
        packages[name] = Package(name=name, version=version, kind="pypi", url=req.url or "", sha256=None)
    first = exported.unhashed[0] if exported.unhashed else "a package"
    more = f" ({len(exported.unhashed) - 1} more like it)" if len(exported.unhashed) > 1 else ""
    why = (f"has wheels the lock holds no hash for{more} (their index served none): read without hashes, so "
           "nothing of it can be installed verified.")
    return ForeignLock(kind=KIND, file=where.file, platform=platform, platforms=(platform,), python=python,
                       packages=tuple(sorted(packages.values(), key=lambda p: p.key)),
                       unusable=(Unusable(first, why, where, _UNHASHED_HINT),),
                       notes=(f"read through uv's export without hashes (`uv export --format requirements.txt "
                              f"--no-hashes`): {first} has wheels without a hash in the lock",))


def _wheel_version(url: str) -> str | None:
    from urllib.parse import unquote

    from packaging.utils import InvalidWheelFilename, parse_wheel_filename

    try:
        return str(parse_wheel_filename(unquote(url.rsplit("/", 1)[-1]))[1])
    except InvalidWheelFilename:
        return None


def lock_project(pyproject: str, *, file: str, environ: Mapping[str, str]) -> str:
    """The uv.lock `uv lock --no-build` writes for a project that has none, in a private folder holding
    the project's dependencies as a virtual project (this resolves: it reaches the project's indexes).
    Nothing is built: not the project (its [build-system] is left out, ``tool.uv.package = false``),
    not an sdist (--no-build); what only a build would tell is refused, with uv's words."""
    from cuenv.errors import ToolError
    from cuenv.runner import run, stderr_tail

    where = Where(file)
    hint = f"Write its lock with `uv lock` in {Path(file).parent} (where its indexes are reachable), then run this again."
    with tempfile.TemporaryDirectory(prefix="cuenv-uvproject-") as folder:
        work = Path(folder)
        (work / "pyproject.toml").write_text(_virtual(pyproject, where, hint), encoding="utf-8")
        try:
            from uv import find_uv_bin

            uv = find_uv_bin()
        except (ImportError, FileNotFoundError):
            raise where.fail("the uv package (a dependency of cuenv) has no uv binary here.", hint) from None
        from cuenv.engines.mirrors import uv_index_env

        # the caller's environment (proxies, CA bundles) without its index variables: the project names its indexes
        env = {**uv_index_env(environ), "UV_CACHE_DIR": str(work / ".cache"), "UV_NO_CONFIG": "1", "NO_COLOR": "1",
               "UV_PYTHON_DOWNLOADS": "never"}
        try:
            # --no-build: reading a shared file runs no one's build code (no sdist or dynamic metadata is built)
            done = run([uv, "lock", "--no-build", "--directory", str(work)], timeout=_LOCK_TIMEOUT, env=env, cwd=work,
                       check=False)
        except ToolError as exc:
            raise where.fail(f"`uv lock` did not finish: {exc.message}", hint) from None
        lock = work / "uv.lock"
        if done.returncode != 0 or not lock.is_file():
            said = _uv_error(done.stderr or done.stdout) or stderr_tail(done.stderr or done.stdout, lines=2)
            if _NO_INTERPRETER.search(said):  # uv finds a Python for requires-python before it resolves anything
                project = load_toml(pyproject, file, hint=hint).get("project")
                wanted = str(project.get("requires-python", "?"))[:80] if isinstance(project, dict) else "?"
                raise where.fail(f"`uv lock` needs a Python that its requires-python ({wanted}) allows and finds none "
                                 "here (cuenv lets uv download none to read a file).",
                                 f"Write its lock with `uv lock` in {Path(file).parent} (uv fetches such a Python), "
                                 "then run this again.")
            raise where.fail(f"`uv lock` cannot lock it: {said}", hint)
        return lock.read_text(encoding="utf-8")


# uv's words when no interpreter fits (none installed; a pyenv shim of an uninstalled version answers 127)
_NO_INTERPRETER: Final = re.compile(r"No interpreter found for Python|Failed to (inspect|query) Python interpreter")


def _uv_error(text: str) -> str:
    """uv's own error and its cause, not what else was printed on the way (a pyenv shim's notes on a
    Python it looked for: "Note: See 'pyenv help global'..." said nothing about the project)."""
    lines = [ln.strip() for ln in text.splitlines() if ln.strip()]
    start = next((i for i, ln in enumerate(lines) if ln.startswith("error:")), None)
    if start is None:
        return ""
    return " ".join(ln for ln in lines[start:start + 3] if not ln.startswith(("Note:", "pyenv:", "hint:")))[:400]


def _virtual(pyproject: str, where: Where, hint: str) -> str:
    """The project's dependencies, sources and indexes as a virtual project: what `uv lock` needs and
    nothing that runs a build backend."""
    doc = load_toml(pyproject, where.file, hint=hint)
    project: dict[str, Any] = doc["project"] if isinstance(doc.get("project"), dict) else {}
    dynamic: list[Any] = project["dynamic"] if isinstance(project.get("dynamic"), list) else []
    if {"dependencies", "optional-dependencies"} & set(dynamic):
        raise where.fail("its dependencies are dynamic: only a build of the project (its code) says what they are.",
                         hint)
    kept = {k: project[k] for k in ("requires-python", "dependencies", "optional-dependencies") if k in project}
    out: dict[str, Any] = {"project": {"name": str(project.get("name") or "project"), "version": str(project.get("version") or "0"),
                       **kept}}
    tool: dict[str, Any] = doc["tool"] if isinstance(doc.get("tool"), dict) else {}
    uv: dict[str, Any] = dict(tool["uv"]) if isinstance(tool.get("uv"), dict) else {}
    uv.pop("workspace", None)  # its members are folders beside the file, not copied
    sources: dict[str, Any] = uv["sources"] if isinstance(uv.get("sources"), dict) else {}
    for name, source in sources.items():
        local = next((s for s in (source if isinstance(source, list) else [source])
                      if isinstance(s, dict) and (s.get("workspace") is True or "path" in s)), None)
        if local is not None:  # uv would say "references a workspace ... not a member": of the copy, not the project
            said = "a member of its workspace" if local.get("workspace") is True else f"the local path {str(local['path'])[:120]}"
            raise where.fail(f"{str(name)[:80]} comes from {said} (tool.uv.sources), which only the project's own "
                             "folder holds: cuenv locks a copy of the file alone.", hint)
    out["tool"] = {"uv": {**uv, "package": False}}
    if isinstance(doc.get("dependency-groups"), dict):
        out["dependency-groups"] = doc["dependency-groups"]
    return "".join(f"[{table}]\n" + "".join(f"{_key(k)} = {_inline(v)}\n" for k, v in body.items()) + "\n"
                   for table, body in (("project", out["project"]), ("tool.uv", out["tool"]["uv"]),
                                       ("dependency-groups", out.get("dependency-groups", {}))) if body)


def _key(key: object) -> str:
    import json

    return json.dumps(str(key))


def _inline(value: object) -> str:
    """A TOML value, inline (JSON's string escapes are TOML's)."""
    import datetime
    import json

    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{_key(k)} = {_inline(v)}" for k, v in value.items()) + "}"
    if isinstance(value, list):
        return "[" + ", ".join(_inline(v) for v in value) + "]"
    if isinstance(value, (datetime.date, datetime.time)):
        return value.isoformat()
    if isinstance(value, (int, float)):
        return repr(value)
    return json.dumps(str(value))


def _uv_export(work: Path, *, hashes: bool = True) -> tuple[bool, str]:
    """uv's PEP 751 export of the project in ``work``; ``hashes=False``: its requirements export without hashes."""
    from cuenv.errors import ToolError
    from cuenv.runner import run, stderr_tail

    try:
        from uv import find_uv_bin

        uv = find_uv_bin()
    except (ImportError, FileNotFoundError):
        return False, "the uv package (a dependency of cuenv) has no uv binary here"
    env = {"UV_CACHE_DIR": str(work / ".cache"), "UV_NO_CONFIG": "1", "UV_OFFLINE": "1", "NO_COLOR": "1",
           "UV_PYTHON_DOWNLOADS": "never", "PATH": "/usr/bin:/bin", "HOME": str(work)}
    form = ["--format", "pylock.toml"] if hashes else ["--format", "requirements.txt", "--no-hashes"]
    argv = [uv, "export", "--frozen", "--offline", *form, "--no-header", "--no-emit-project",
            "--no-emit-workspace", "--directory", str(work)]
    try:
        done = run(argv, timeout=_TIMEOUT, env=env, cwd=work, check=False)
    except ToolError as exc:
        return False, exc.message
    if done.returncode != 0:
        return False, stderr_tail(done.stderr or done.stdout, lines=2)
    return True, done.stdout


def _stand_in(doc: dict[str, Any], entries: list[dict[str, Any]], roots: tuple[str, ...], where: Where) -> str:
    """A minimal pyproject.toml for the lock's workspace root, so that uv finds a project to export: the
    package at ``.`` (`uv sync` installs the workspace root by default), or the lock's only package."""
    import json
    import shlex

    at_root = [e for e in entries if isinstance(e.get("source"), dict)
               and any(e["source"].get(k) == "." for k in _ROOT_SOURCES)]
    if at_root:
        root = at_root[0]
    elif len(roots) == 1:
        root = next(e for e in entries if str(e.get("name")) == roots[0])
    else:  # a virtual workspace root: which member is installed is the user's choice (uv sync --package)
        raise where.fail(f"its workspace root is not a package, and it holds {len(roots)} members "
                         f"({', '.join(roots[:5])}{', ...' if len(roots) > 5 else ''}): which one is installed, "
                         "`uv sync --package` says.",
                         "Export the member you install, in the project's folder (here the first of them): "
                         f"`uv export --package {shlex.quote(roots[0][:100])} --format pylock.toml -o pylock.toml`; "
                         "then check that pylock.toml.")
    name = str(root.get("name"))
    lines = ["[project]", f"name = {json.dumps(name)}", f"version = {json.dumps(str(root.get('version') or '0'))}"]
    requires = doc.get("requires-python")
    if isinstance(requires, str):
        lines.append(f"requires-python = {json.dumps(requires)}")
    if len(roots) > 1:
        lines += ["", "[tool.uv.workspace]", "members = []"]
    return "\n".join(lines) + "\n"


def _project_beside(file: str) -> str | None:
    """The project's pyproject.toml beside the lock (bounded read), when there is one."""
    from cuenv.errors import CuenvError
    from cuenv.trust import limits

    path = Path(file).parent / "pyproject.toml"
    try:
        if not path.is_file():
            return None
        return limits.read_text(path, what="pyproject.toml", limit=limits.LOCK)
    except (OSError, CuenvError):  # unreadable or oversized beside the lock: the stand-in reads the lock alone
        return None
