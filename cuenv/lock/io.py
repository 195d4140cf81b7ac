"""The I/O around lockfiles, shared by `cuenv lock`, `cuenv sync`, `cuenv check` and `cuenv create --from-lock`.

A lockfile is cuenv's own (``cuenv.lock``) or another tool's (conda-lock.yml, pixi.lock,
pylock.toml, uv.lock: cuenv.lock.foreign); the content says which. Either way the reader gets a
cuenv Lock whose contract is checked before anything is downloaded.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

from cuenv import atomic
from cuenv.errors import CuenvError, NotFound, UsageError
from cuenv.plain import Plain

TYPE_CHECKING = False  # no `typing` at run time: `check` asks is_lockfile first (issue 29)
if TYPE_CHECKING:
    from typing import Any, Iterable, Mapping

    from cuenv.lock.foreign.model import ForeignLock
    from cuenv.lock.foreign.stack import Derived
    from cuenv.lock.model import Lock


def host_platform() -> str:
    """This machine's conda-style platform (linux-64, linux-aarch64, win-64, ...)."""
    from cuenv.lock.model import platform_of
    from cuenv.machine.host import arch

    os_name = "windows" if sys.platform.startswith("win") else "osx" if sys.platform == "darwin" else "linux"
    machine = arch()
    return platform_of(os_name, "x86_64" if machine == "unknown" else machine)


class LockRead(Plain):
    """A lockfile as read: the cuenv Lock to install, and for another tool's file what it was read from."""

    __slots__ = ("lock", "kind", "foreign", "derived", "notes", "warnings", "machine_cuda")

    def __init__(self, lock: Lock, kind: str = "cuenv", foreign: ForeignLock | None = None, derived: Derived | None = None,
                 notes: tuple[str, ...] = (), warnings: tuple[str, ...] = (),
                 machine_cuda: tuple[str, str] | None = None) -> None:
        self.lock = lock
        self.kind = kind  # cuenv, or one of cuenv.lock.foreign.KINDS
        self.foreign = foreign
        self.derived = derived  # the stack and where each number came from
        self.notes = notes  # what of the file was left out, and why
        self.warnings = warnings  # what disagrees, and what would stop an install
        # (CUDA, where written): what the project's tool requires of the machine's driver before it installs
        # (pixi's [system-requirements] cuda), whatever the packages need
        self.machine_cuda = machine_cuda

    def to_json(self) -> dict[str, Any]:
        from cuenv.lock.model import to_data

        data: dict[str, Any] = {"kind": self.kind, "contract": to_data(self.lock)["contract"],
                                "notes": list(self.notes), "warnings": list(self.warnings)}
        if self.foreign is not None and self.derived is not None:  # read together from another tool's file
            data.update(environment=self.foreign.environment, platform=self.foreign.platform,
                        evidence=list(self.derived.evidence), conflicts=list(self.derived.conflicts),
                        unusable=[f"{u.name} {u.why}" for u in self.foreign.unusable])
        return data


def read_lock(path: str | Path, *, platform: str | None = None, trusted_env: Iterable[str] = (),
              cache_dir: Path | None = None) -> Lock:
    """Read and validate a lockfile of any kind; refuses one without packages for ``platform``.
    ``trusted_env`` is the user's extension of the variables a lock may set (cuenv.trust.envvars)."""
    return read_any(path, platform=platform, trusted_env=trusted_env, cache_dir=cache_dir).lock


def read_any(path: str | Path, *, platform: str | None = None, environment: str | None = None,
             python: str | None = None, engine: str | None = None, environ: Mapping[str, str] | None = None,
             install: bool = True, trusted_env: Iterable[str] = (), cache_dir: Path | None = None) -> LockRead:
    """Read a lockfile: cuenv's own, or another tool's (``platform``, ``environment`` and ``python``
    choose what of it; ``engine`` is --engine). ``install`` False (a check) reports as
    warnings what an install would refuse: source builds, PyPI wheels over conda packages without a python."""
    from cuenv.lock.model import is_cuenv_lock, parse

    p = Path(path)
    text = _read_text(p)
    project_notes: tuple[str, ...] = ()
    machine_cuda = None
    project = project_kind(p.name, text)
    if project == "pixi-project":
        from cuenv.lock.foreign.piximanifest import system_cuda

        machine_cuda = system_cuda(text, name=p.name, environment=environment)
    if project is not None:  # a uv or pixi project: read through its lock, as uv and pixi install it
        p, text, project_notes = _project_lock(p, text, project, environ=environ)
    kind = None
    if not is_cuenv_lock(text):  # cuenv's own lock needs none of the other tools' readers (start-up, issue 29)
        from cuenv.lock import foreign

        kind = foreign.detect(p.name, text)
    if kind is None:
        if environment is not None or python is not None:
            flag = "--environment" if environment is not None else "--python"
            raise UsageError(f"{flag} does not apply to a cuenv lockfile: it holds one environment and its Python.",
                             hint=f"Leave out {flag}.")
        return LockRead(parse(text, file=str(p), platform=platform, trusted_env=trusted_env, cache_dir=cache_dir))
    read = _read_foreign(p, text, kind, platform=platform or host_platform(), environment=environment, python=python,
                         engine=engine, environ=environ or {}, install=install, cache_dir=cache_dir)
    if project_notes:
        read = read.replace(notes=project_notes + read.notes)
    return read.replace(machine_cuda=machine_cuda) if machine_cuda else read


def project_kind(name: str, text: str) -> str | None:
    """``uv-project`` or ``pixi-project`` for a project manifest cuenv reads through its lock, else None:
    a ``pixi.toml``, or a ``pyproject.toml`` with ``[tool.pixi.*]`` (pixi), ``[tool.uv.*]`` or a
    ``[project]`` table (uv: it locks any PEP 621 project)."""
    import re

    if name == "pixi.toml":
        return "pixi-project"
    if not name.endswith(".toml") or "lock-version" in text[:4096]:
        return None
    if re.search(r"^\[+\s*tool\.pixi[.\]]", text, re.MULTILINE):
        return "pixi-project"
    if re.search(r"^\[+\s*(tool\.uv[.\]]|project\s*\])", text, re.MULTILINE):
        return "uv-project"
    return None


def head_text(file: str | Path) -> str:
    """The first 64 KiB of a file as text (what tells a project manifest's kind); "" where unreadable."""
    try:
        with open(file, "rb") as fh:
            return fh.read(65536).decode("utf-8", errors="replace")
    except OSError:
        return ""


def refuse_poetry_only(file: str | Path) -> None:
    """A ``pyproject.toml`` whose dependencies only Poetry reads (``[tool.poetry.dependencies]``, no ``[project]``
    table; neither uv nor pixi reads it) is refused with the export that writes a file cuenv reads."""
    import re

    name = Path(file).name
    if not name.endswith(".toml"):
        return
    text = head_text(file)
    if re.search(r"^\[+\s*tool\.poetry[.\]]", text, re.MULTILINE) and project_kind(name, text) is None:
        raise UsageError(f"{file} is a Poetry project: its dependencies are in [tool.poetry.dependencies], which uv, "
                         "and so cuenv, does not read.",
                         hint="Export its locked pins in its folder, with Poetry's export plugin: `poetry export "
                              "-f requirements.txt --output requirements.txt`; then `cuenv check requirements.txt`.")


def _project_lock(manifest: Path, text: str, project: str, *,
                  environ: Mapping[str, str] | None) -> tuple[Path, str, tuple[str, ...]]:
    """The lock a uv or pixi project installs from: the one beside the manifest; for a uv project without
    one, the lock `uv lock` writes in a private copy (it resolves: network); a pixi manifest without
    pixi.lock is refused with the command that writes it."""
    from cuenv.lock.foreign.model import load_toml

    load_toml(text, str(manifest), hint="Fix the TOML, then check it again.")  # broken TOML: its line, said now
    if project == "pixi-project":
        beside = manifest.parent / "pixi.lock"
        if not beside.is_file():
            raise UsageError(f"{manifest} is a pixi project with no pixi.lock beside it; cuenv reads a pixi project "
                             "through its lock.",
                             hint=f"Write the lock with `pixi lock --manifest-path {manifest}`, then run this again.")
        return beside, _read_text(beside), (f"read through {beside.name} beside {manifest.name} (pixi's lock of it)",)
    beside = manifest.parent / "uv.lock"
    if beside.is_file():
        return beside, _read_text(beside), (f"read through {beside.name} beside {manifest.name} (uv's lock of it)",)
    import os

    from cuenv.lock.foreign.uvlock import lock_project

    locked = lock_project(text, file=str(manifest), environ=os.environ if environ is None else environ)
    return manifest.parent / "uv.lock", locked, (
        f"no uv.lock beside {manifest.name}: locked now by `uv lock` in a private copy (nothing written here); "
        f"`uv lock` in {manifest.parent} writes the lock to share",)


def is_lockfile(target: str) -> bool:
    """Whether ``target`` names a lockfile on disk of a kind cuenv reads (told by its content)."""
    from cuenv.trust.limits import LOCK, codec_of

    path = Path(target)
    try:
        if not path.is_file():
            return False
        with path.open("rb") as fh:
            start = fh.read(8192)
            codec = codec_of(start)  # UTF-16 (PowerShell's `>`) is sniffed too: its reader then says so
            if b"\0" in start and codec != "utf-16":  # a wheel or a shared object: no lockfile is binary, and it may be gigabytes
                return False
            head = (start + fh.read(LOCK)).decode(codec, errors="replace")  # past the bound the reader refuses it
    except OSError:
        return False
    from cuenv.lock.model import is_cuenv_lock

    if is_cuenv_lock(head):
        return True
    from cuenv.lock import foreign  # only for a file: `cuenv check torch==2.1.0+cu121` imports none of it

    return foreign.detect(path.name, head) is not None or project_kind(path.name, head) is not None


def _read_text(p: Path) -> str:
    """The file's text, bounded (a lockfile is shared input: cuenv.trust.limits.LOCK)."""
    from cuenv.trust import limits

    try:
        return limits.read_text(p, what="Lockfile", limit=limits.LOCK)
    except NotFound:
        raise NotFound(f"Lockfile {p} does not exist.", hint=f"Make it with `cuenv lock` of an environment or a recipe, and -o {p}.") from None


def _read_foreign(p: Path, text: str, kind: str, *, platform: str, environment: str | None, python: str | None,
                  engine: str | None, environ: Mapping[str, str], install: bool, cache_dir: Path | None = None) -> LockRead:
    from cuenv.knowledge.versions import Dotted
    from cuenv.lock import foreign

    if python is not None:
        if kind in ("conda-lock", "pixi-lock", "explicit"):
            raise UsageError(f"--python does not apply to a {foreign.LABELS[kind]}: it locks its own Python.",
                             hint="Leave out --python.")
        Dotted.parse(python, what="Python version")
    here = f"{sys.version_info.major}.{sys.version_info.minor}"
    tries = [(python, None)] if python is not None else foreign.pythons(text, kind, here)
    first: foreign.NoWheelForTarget | None = None
    for chosen, picked in tries:  # as uv would: the first Python the lock installs every package for
        try:
            found = foreign.parse(text, kind=kind, file=str(p), platform=platform, environment=environment,
                                  python=chosen)
            if first is not None:
                picked = (f"read for Python {chosen}, which the lock installs: for {tries[0][0]}, "
                          f"{first.message.split(': ', 1)[-1]} --python picks another")
            break
        except foreign.NoWheelForTarget as exc:
            first = first or exc
    else:
        assert first is not None
        raise first
    if install and any(pk.kind == "conda" and not (pk.sha256 or pk.md5) for pk in found.packages):
        import tempfile

        from cuenv.lock.foreign.repodata import with_channel_hashes

        # an @EXPLICIT list without hashes: each package pinned to the sha256 its channel lists, before any download
        if cache_dir is not None:
            found = with_channel_hashes(found, cache_dir=cache_dir)
        else:
            with tempfile.TemporaryDirectory(prefix="cuenv-repodata-") as tmp:
                found = with_channel_hashes(found, cache_dir=Path(tmp))
    derived = foreign.describe(found)
    warnings = [f"{c}; cuenv goes by {derived.evidence[0]}" for c in derived.conflicts]
    try:
        family = foreign.engine_kind(found)
        foreign.require_installable(found)
    except foreign.ForeignLockError as exc:
        if install:
            raise
        warnings.append(f"an install would stop here: {exc.message}")
        family = "conda" if "conda" in found.kinds else "venv"
    lock = foreign.to_lock(found, derived, name=foreign.default_name(str(p.resolve()), found.environment),
                           engine=_engine_for(family, engine, environ, file=p.name), source=text)
    return LockRead(lock, kind=kind, foreign=found, derived=derived, notes=found.notes + ((picked,) if picked else ()),
                    warnings=tuple(dict.fromkeys(warnings)))


def _engine_for(family: str, requested: str | None, environ: Mapping[str, str], *, file: str) -> str:
    """The engine that installs a foreign lock: venv for PyPI wheels; for conda packages --engine, else
    rattler (no conda needed), else the conda-family tool on PATH."""
    from cuenv.engines import get_engine, resolve_engine

    requested = None if requested in (None, "auto") else requested
    if family == "venv":
        if requested not in (None, "venv"):
            raise UsageError(f"{file} locks PyPI wheels; the {requested} engine installs conda packages.",
                             hint="Leave out --engine: the venv engine installs wheels.")
        return "venv"
    if requested == "venv":
        raise UsageError(f"{file} locks conda packages; the venv engine installs PyPI wheels only.",
                         hint="Use --engine rattler (or conda, mamba, micromamba).")
    if requested is not None:
        return requested
    if get_engine("rattler", environ).available():
        return "rattler"
    name, _ = resolve_engine("auto", environ)
    if name == "venv":
        raise UsageError(f"{file} locks conda packages, and no conda engine is available here.",
                         hint="Install py-rattler into cuenv's Python (`pip install py-rattler`), or put conda, "
                         "mamba or micromamba on PATH.")
    return name


def write_text(path: Path, text: str) -> None:
    """Replace ``path`` atomically: a reader never sees half a lockfile."""
    try:
        atomic.write_text(path, text)
    except OSError as exc:
        raise UsageError(f"Cannot write {path}: {exc.strerror or exc}.") from None


class OverwriteRefused(UsageError):
    """Writing would replace someone's different file: asked first (a prompt, a dialog) or refused."""

    def __init__(self, problem: str, *, hint: str | None = None) -> None:
        super().__init__(f"Not written: {problem}.", hint=hint)
        self.problem = problem


def output_file(output: str) -> Path:
    """The file ``-o OUTPUT`` names, refused (with the fix, quoted for a shell) where nothing can be written:
    an empty name, a folder, a folder that does not exist (a mistyped path: never made here), a file or a
    broken link where a folder should be."""
    import shlex

    from cuenv.trust.shown import shown

    def sh(p: Path) -> str:
        text = shlex.quote(str(p))
        return f"-- {text}" if text.startswith("-") else text

    if not output:
        raise UsageError("-o names no file.", hint="Name the lock's file: `-o cuenv.lock`.")
    path = Path(output)
    if path.is_dir():
        raise UsageError(f"{shown(path)} is a folder, not a file to write the lock to.",
                         hint=f"Name a file in it: `-o {shlex.quote(str(path / 'cuenv.lock'))}`.")
    if path.exists():  # a FIFO would block the write, /dev/zero the overwrite check's read
        from cuenv.trust.limits import regular_file_problem

        kind = regular_file_problem(path)
        if kind is not None:
            raise UsageError(f"{shown(path)} {kind}, so the lock is not written to it.",
                             hint="Name a regular file with -o, or `-o -` to print the lock.")
    as_folder = output.endswith(("/", os.sep))  # `-o locks/`
    folder = path if as_folder else path.parent
    if folder.is_dir():
        if as_folder:  # made since it was looked at
            raise UsageError(f"{shown(output)} is a folder, not a file to write the lock to.",
                             hint=f"Name a file in it: `-o {shlex.quote(str(path / 'cuenv.lock'))}`.")
        return path
    blocking = next((a for a in (folder, *folder.parents) if a.exists() or a.is_symlink()), None)
    if blocking is not None and not blocking.is_dir():
        what = "a broken link" if not blocking.exists() else "a file"
        raise UsageError(f"{shown(blocking)} is {what}, not a folder, so the lock cannot be written to {shown(output)}.",
                         hint="Name a file in a folder with -o.")
    problem = f"{shown(output)} names a folder that does not exist" if as_folder else \
        f"{shown(folder)} is not a folder, so the lock cannot be written to {shown(path)}"
    raise UsageError(f"{problem}.", hint=f"Create it first (`mkdir -p {sh(folder)}`), or name another file with -o.")


def overwrite_problem(path: Path, text: str) -> str | None:
    """Why writing ``text`` to ``path`` would lose someone's file (issue 26 §4), or None: no file there, or
    the same text, or a lock that installs the same (its comments and the machine it was made on aside). A cuenv
    lockfile there says whose it is; anything else is just "a different file"."""
    from cuenv.trust import limits

    try:  # bounded: a lockfile is at most limits.LOCK, so a larger file there is no lock of cuenv's
        old = limits.read_text(path, what="Lockfile", limit=limits.LOCK)
    except NotFound:
        return None
    except CuenvError as exc:
        return f"{path} already exists and is not this lock ({exc.message.rstrip('.')})"
    if old == text:
        return None
    from cuenv.lock import model as lockfile

    def parsed(content: str) -> Any:
        try:
            return lockfile.parse(content)
        except (UsageError, ValueError):
            return None

    def owner(lock: Any) -> str | None:
        if lock is None:
            return None
        counts = ", ".join(f"{len(s.packages)} packages" for s in lock.solutions)
        return f"{lock.recipe.name} ({lock.engine}; {counts})"

    old_lock, new_lock = parsed(old), parsed(text)
    if old_lock is not None and new_lock is not None and lockfile.content_hash(old_lock) == lockfile.content_hash(new_lock):
        return None  # the same packages and contract: only what the lock says about itself changes
    theirs, ours = owner(old_lock), owner(new_lock)
    if theirs is None:
        return f"{path} already exists and is not this lock"
    if ours is not None and theirs.split(" ")[0] != ours.split(" ")[0]:
        return f"{path} holds the lock of {theirs}, another environment than this one ({ours})"
    return f"{path} holds a different lock of {theirs}"
