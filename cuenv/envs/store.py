"""The environment registry: where each environment lives, its metadata, its lock, its state.

Layout under ``CUENV_HOME/envs``::

    NAME/                 the prefix itself (a conda prefix or a venv root; both embed this path)
    NAME/.cuenv/meta.json what cuenv knows about it (recipe, engine, layout, versions, validation)
    NAME/.cuenv/complete  written last: an environment without it is incomplete, never usable
    NAME/.cuenv/activate.{bash,zsh,fish}   activation scripts rendered at create time (the hook sources them)
    .locks/NAME.lock      one file lock per environment name
    .claims/NAME          cuenv is building NAME (see cuenv.envs.folder)

Deletion proves ownership (issue 14 §3): only a real folder (never a symlink) directly inside a real
``envs/`` that carries cuenv's ``.cuenv`` folder, or that cuenv claimed before building it, is ever
deleted; anything else is reported and left alone.

Prefixes embed their own path, so environments are built in place and the marker is written last
(STYLE.md §7) instead of being built elsewhere and renamed.
"""

from __future__ import annotations

import contextlib
import os
import re
from pathlib import Path

from cuenv import atomic
from cuenv.envs import folder
from cuenv.envs.meta import EnvMeta, MetaDamaged
from cuenv.errors import CuenvError, EnvironmentBusy, NotFound, UsageError
from cuenv.trust import limits

TYPE_CHECKING = False  # no `typing` at run time: the start-up path does without it (issue 29)
if TYPE_CHECKING:
    from typing import Any, Callable, Final, Iterator

    from cuenv.activation.target import ActivationTarget, CudaLayout

NAME_RE = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,63}")
META_DIR, META_FILE, COMPLETE = folder.META_DIR, folder.META_FILE, folder.COMPLETE


# How to make a first environment: the recipe is the user's choice, so the commands that list and pick one.
FIRST_ENVIRONMENT: Final = "`cuenv recipes` lists the recipes to create one from, `cuenv suggest` picks one for this machine"


def rebuild_hint(name: str, recipe: str | None) -> str:
    """The command that builds environment ``name`` again, from its recipe when that is known."""
    import shlex

    if recipe:
        return f"`cuenv create {shlex.quote(recipe)} -n {shlex.quote(name)} --force` rebuilds it"
    return f"`cuenv info {shlex.quote(name)}` names its recipe; create it again from that with -n {shlex.quote(name)} --force"


def with_an_environment(settings: Any, command: Callable[[str], str], lead: str = "Name one") -> str:
    """A hint naming an environment the user has: ``command`` of the first, the others listed (the choice is the
    user's); without any, how to make one."""
    import shlex

    names = [r.name for r in Store.from_settings(settings).list()]
    if not names:
        return f"There is no environment yet: {FIRST_ENVIRONMENT}."
    others = f" (or {', '.join(names[1:6])}{', ...' if len(names) > 6 else ''})" if len(names) > 1 else ""
    return f"{lead}: `{command(shlex.quote(names[0]))}`{others}."


class NotOurs(CuenvError):
    """A folder under envs/ that cuenv did not make: reported, never deleted or used."""

    def __init__(self, path: Path) -> None:
        super().__init__(f"{path} is not a cuenv environment (it has no .cuenv folder), so cuenv leaves it alone.",
                         hint="Move or delete it yourself if you do not need it; `cuenv list` shows your environments.")


def validate_name(name: str) -> str:
    if not isinstance(name, str) or not NAME_RE.fullmatch(name):
        raise UsageError(
            f"{_shown(name)} is not a valid environment name.",
            hint="Use 1-64 characters: letters, digits, '.', '_' or '-', starting with a letter or digit.",
        )
    return name


def _shown(value: object) -> str:
    """A value as an error shows it: repr, cut to one readable line (a 5,000-character name is not echoed)."""
    text = repr(value)
    return text if len(text) <= 80 else text[:77] + "..."


class EnvRecord:
    """One environment as the store found it: its folder, whether it is complete, and its meta.

    ``meta`` raises the damage (a CuenvError with its fix) when meta.json is missing or unreadable;
    ``known`` is the meta or None, for views that show incomplete and damaged environments too."""

    __slots__ = ("name", "path", "complete", "known", "damage")

    def __init__(self, name: str, path: Path, complete: bool, known: EnvMeta | None,
                 damage: CuenvError | None = None) -> None:
        self.name, self.path, self.complete, self.known, self.damage = name, path, complete, known, damage

    def __repr__(self) -> str:
        return f"EnvRecord(name={self.name!r}, path={self.path!r}, complete={self.complete!r})"

    @property
    def broken(self) -> CuenvError | None:
        """Why an environment that was built (its marker is there) cannot be used: its meta.json is damaged."""
        if self.damage is not None and (self.path / META_DIR / COMPLETE).is_file():
            return self.damage
        return None

    @property
    def meta(self) -> EnvMeta:
        if self.known is None:
            raise self.damage or MetaDamaged(self.name, "no meta.json")
        return self.known

    @property
    def meta_dir(self) -> Path:
        return self.path / META_DIR

    @property
    def prefix(self) -> Path:
        """Where the environment's packages are: its own folder, or an adopted prefix elsewhere
        (cuenv.envs.adopt), which cuenv reads and never writes unless asked."""
        adopted = self.known.adopted if self.known is not None else None
        return adopted.prefix if adopted is not None and str(adopted.prefix) else self.path

    @property
    def adopted(self) -> bool:
        return self.prefix != self.path

    def layout(self) -> CudaLayout:
        return self.meta.layout

    def target(self) -> ActivationTarget:
        from cuenv.activation.target import ActivationTarget  # on use: `list` needs none (start-up, issue 29)

        meta = self.meta
        return ActivationTarget(
            name=self.name,
            layout=meta.layout,
            env_vars=dict(meta.env_vars),
            activate_scripts=tuple(Path(p) for p in meta.activate_scripts),
            shims_dir=folder.shims_dir(self.path) if meta.tools else None,
            conda_scripts=meta.proven_scripts(),
        )


class Store:
    def __init__(self, envs_dir: Path) -> None:
        self.envs_dir = envs_dir

    @classmethod
    def from_settings(cls, settings: Any) -> Store:
        return cls(settings.envs_dir)

    def path(self, name: str) -> Path:
        return self.envs_dir / validate_name(name)

    def exists(self, name: str) -> bool:
        return self.path(name).exists() or self.path(name).is_symlink()

    def _claim_file(self, name: str) -> Path:
        return self.envs_dir / folder.CLAIMS_DIR / validate_name(name)

    def owns(self, name: str) -> bool:
        """Whether ``name`` is a folder cuenv made: a real folder with a real ``.cuenv`` folder, or claimed."""
        path = self.path(name)
        if path.is_symlink() or not path.is_dir():
            return False
        meta = path / META_DIR
        return (meta.is_dir() and not meta.is_symlink()) or self._claim_file(name).is_file()

    def claim(self, name: str) -> None:
        """Record that cuenv is about to build ``name`` (before any engine writes the prefix): an empty marker
        made in place, fsynced. An empty file has no half to hide, and a temporary file beside it was what a
        kill -9 could leave in ``.claims`` for good."""
        path = self._claim_file(name)
        path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_NOFOLLOW, 0o644)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)

    def _release(self, name: str) -> None:
        with contextlib.suppress(FileNotFoundError):
            self._claim_file(name).unlink()

    def _read(self, name: str) -> EnvRecord:
        path = self.path(name)
        meta_dir = path / META_DIR
        complete = (meta_dir / COMPLETE).is_file()
        try:
            # Bounded, regular files only (issue 31 §8): a FIFO here hung `list`, /dev/zero grew it to 24 GB.
            data = limits.load_json(limits.read_bytes(meta_dir / META_FILE, what="Environment metadata",
                                                      limit=limits.ENV_STATE), what="Environment metadata",
                                    file=str(meta_dir / META_FILE))
            return EnvRecord(name, path, complete, EnvMeta.from_json(data))
        except CuenvError as exc:  # a marker without readable metadata is not usable either
            return EnvRecord(name, path, False, None, exc)
        except (OSError, ValueError) as exc:
            return EnvRecord(name, path, False, None, MetaDamaged(name, str(exc) or type(exc).__name__))

    def get(self, name: str, *, allow_incomplete: bool = False) -> EnvRecord:
        if not self.path(name).is_dir():
            raise NotFound(f"No environment named {name!r}.", hint=self._names_hint(name))
        if not self.owns(name):
            raise NotOurs(self.path(name))
        record = self._read(name)
        if not record.complete and not allow_incomplete:
            if record.broken is not None:
                raise record.broken  # built, then its meta.json was damaged: say what is wrong
            raise CuenvError(
                f"Environment {name!r} is incomplete (its creation was interrupted or failed).",
                hint=f"{rebuild_hint(name, record.known.recipe.name if record.known else None)}; or `cuenv remove {name}`.",
            )
        return record

    def list(self) -> list[EnvRecord]:
        try:
            entries = sorted(os.scandir(self.envs_dir), key=lambda e: e.name)
        except FileNotFoundError:
            return []
        return [self._read(e.name) for e in entries
                if e.is_dir(follow_symlinks=False) and NAME_RE.fullmatch(e.name) and self.owns(e.name)]

    def _names_hint(self, name: str) -> str:
        import difflib
        import shlex

        if "/" not in name and Path(name).is_file():  # `cuenv info pixi.lock` in the lock's folder
            return f"{name} is a file here, not an environment: `cuenv check {shlex.quote(name)}` reads it."

        names = [r.name for r in self.list()]
        close = difflib.get_close_matches(name, names, n=3)
        if close:
            return "Did you mean " + ", ".join(close) + "? `cuenv list` shows all environments."
        return f"Run `cuenv list` to see your environments; {FIRST_ENVIRONMENT}."

    # -- mutation -----------------------------------------------------------------------
    @contextlib.contextmanager
    def locked(self, name: str) -> Iterator[None]:
        """Hold the environment's file lock; a second holder fails at once instead of interleaving. The
        tools the thread starts meanwhile hold it too (cuenv.runner.held_locks)."""
        import fcntl

        lock_dir = self.envs_dir / folder.LOCKS_DIR
        lock_dir.mkdir(parents=True, exist_ok=True)
        path = lock_dir / f"{validate_name(name)}.lock"
        while True:
            fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                os.close(fd)
                raise EnvironmentBusy(
                    f"Environment {name!r} is being changed by another cuenv process (or a tool one started).",
                    hint="Wait for it to finish, then try again.",
                ) from None
            try:  # the holder before us may have unlinked the file after we opened it: lock the live one
                if os.stat(path).st_ino == os.fstat(fd).st_ino:
                    break
            except FileNotFoundError:
                pass
            os.close(fd)
        from cuenv.runner import held_locks

        held = held_locks()
        held.add(fd)  # the tools this thread starts hold it too, till they end (a kill -9 of cuenv included)
        try:
            yield
        finally:
            held.discard(fd)
            with contextlib.suppress(OSError):
                path.unlink()  # still holding the lock: no lock file is left behind (issue 14)
            os.close(fd)

    def write_meta(self, name: str, meta: EnvMeta) -> None:
        """The one writer of an environment's meta.json (atomic, durable)."""
        write_meta(self.path(name), meta)

    def mark_complete(self, name: str) -> None:
        atomic.write_text(self.path(name) / META_DIR / COMPLETE, "", durable=True)
        self._release(name)  # the .cuenv folder proves it from now on

    def mark_incomplete(self, name: str) -> None:
        meta = self.path(name) / META_DIR
        if meta.is_symlink() or not meta.is_dir():
            return  # never through a link: the marker lives in our own folder or nowhere
        with contextlib.suppress(FileNotFoundError):
            (meta / COMPLETE).unlink()

    def remove(self, name: str) -> None:
        """Delete an environment's folder: only a real folder cuenv made, directly inside a real envs/."""
        path = self.path(name)
        if self.envs_dir.is_symlink():
            raise CuenvError(f"Refusing to delete {path}: {self.envs_dir} is a symlink, so it may point outside "
                             f"cuenv's home.", hint="Point CUENV_HOME at the real folder, then remove it again.")
        if path.is_symlink():
            path.unlink()  # a link named like an environment: drop the link, never its target
            self._release(name)
            return
        if not path.exists():
            self._release(name)
            return
        if not self.owns(name):
            raise NotOurs(path)
        self.mark_incomplete(name)  # a half-deleted environment must never look usable
        # Claimed while it is deleted: rmtree may take .cuenv before the rest, and a kill -9 then would
        # leave a folder nobody could prove was cuenv's (the next `create --force` refused it as not ours).
        self.claim(name)
        import shutil  # on use (start-up, issue 29)

        shutil.rmtree(path)  # rmtree does not follow symlinks inside the tree
        from cuenv.envs import snapshot

        snapshot.discard(self.envs_dir, name)  # a copy of it from an interrupted change must not come back
        self._release(name)



def write_meta(path: Path, meta: EnvMeta) -> None:
    """Write ``meta`` as the meta.json of the environment folder ``path`` (a read-only one raises OSError)."""
    meta_dir = path / META_DIR
    meta_dir.mkdir(parents=True, exist_ok=True)
    folder.write_json(meta_dir / META_FILE, meta.to_json())
