"""What a `cuenv check TARGET` names, decided without printing (issue 24 §4): an environment (its recorded
stack), a recipe, a package spec, or a path whose kernels are read (a wheel, a shared object, a folder).

Lockfiles and project files are read by cuenv.lock.check and cuenv.recipes.projectfile before this.
"""

from __future__ import annotations

from pathlib import Path

from cuenv.errors import NotFound, UsageError
from cuenv.plain import Plain

TYPE_CHECKING = False  # no `typing` at run time: `check` starts here (issue 29)
if TYPE_CHECKING:
    from collections.abc import Callable

    from cuenv.config import Settings
    from cuenv.envs.store import EnvRecord
    from cuenv.knowledge.stack import Stack


class Target(Plain):
    """A resolved TARGET: exactly one of ``stack`` (with ``record`` for an environment) and ``path``."""

    __slots__ = ("text", "stack", "record", "path", "note")

    def __init__(self, text: str, stack: Stack | None = None, record: EnvRecord | None = None, path: Path | None = None,
                 note: str | None = None) -> None:
        self.text = text
        self.stack = stack  # an environment's recorded stack, a recipe's, or a spec's
        self.record = record  # the environment, when TARGET names one
        self.path = path  # a wheel, a shared object or a folder, read for its kernels
        self.note = note  # how a recipe version read from PyPI on the fly was derived (cuenv.recipes.beyond)


def resolve(text: str, settings: Settings, *, index: str | None = None) -> Target:
    """The target ``text`` names; bad input (no such file, nothing cuenv knows) raises with the fix."""
    path = path_target(text)
    if path is not None:
        return Target(text, path=path)
    record = environment(text, settings)
    if record is not None:  # what is installed, which may differ from its recipe's default
        from cuenv.envs.meta import stack_from_meta  # only for an environment: a recipe or spec needs none of it

        return Target(text, stack=stack_from_meta(record.meta), record=record)
    for resolver in RESOLVERS:
        stack = resolver(text, settings, index)
        if stack is not None:
            return Target(text, stack=stack, note=_derived_note(text, settings) if stack.label == text else None)
    if Path(text).is_dir():  # a folder in the current one, named without ./: nothing else by that name
        return Target(text, path=path_target(f"./{text}"))
    if _named_like_a_file(text):  # `cuenv check requirements.txt` in a folder without one
        raise NotFound(f"No file {text!r} in {Path.cwd()}.", hint="Run it in the folder that holds the file, or give the file's path.")
    import difflib

    from cuenv.knowledge.specs import EXAMPLES
    from cuenv.recipes.catalogue import load_catalogue

    close = difflib.get_close_matches(text.split("@", 1)[0], load_catalogue(settings).names(), n=3)
    hint = ("Did you mean " + ", ".join(close) + "? " if close else "") + \
        f"Give a recipe (`cuenv recipes`), an environment, or a package spec such as {EXAMPLES}."
    raise UsageError(f"cuenv does not know the target {text!r}.", hint=hint)


def _from_recipe(text: str, settings: Settings, index: str | None) -> Stack | None:
    from cuenv.knowledge.specs import looks_like_spec

    if looks_like_spec(text):  # no recipe name has '==' or '[': the catalogue is not even imported
        return None
    from cuenv.recipes.beyond import resolve as resolve_version
    from cuenv.recipes.catalogue import load_catalogue

    catalogue = load_catalogue(settings)
    name = text.split("@", 1)[0]
    if name not in catalogue.names():
        return None
    recipe, version = resolve_version(catalogue, text)
    return recipe.stack(version)


def _from_spec(text: str, settings: Settings, index: str | None) -> Stack | None:
    from cuenv.knowledge.specs import looks_like_spec, parse_spec

    return parse_spec(text, index) if looks_like_spec(text) else None


# After an environment (what is installed), tried in order; the first that answers wins.
RESOLVERS: list[Callable[[str, Settings, str | None], Stack | None]] = [_from_recipe, _from_spec]


def environment(text: str, settings: Settings) -> EnvRecord | None:
    """The environment named ``text``, if there is one (a recipe or a spec is not even looked up in the store)."""
    if "/" in text or not (settings.envs_dir / text).is_dir():  # a recipe or a spec: no store import
        return None
    from cuenv.envs.store import NAME_RE, Store

    if not NAME_RE.fullmatch(text):
        return None
    store = Store.from_settings(settings)
    return store.get(text) if store.path(text).is_dir() else None


def path_target(text: str) -> Path | None:
    """A TARGET written as a path (it has a slash, or names a wheel or a shared object; must exist), or a file
    that exists: `cuenv check pixi.lock` in the lock's folder reads that file, never a recipe of that name."""
    from cuenv.binaries.names import looks_binary

    if "/" not in text and text != "." and not text.endswith(".whl") and not looks_binary(text) \
            and not Path(text).is_file():
        return None
    path = Path(text).expanduser()
    hint = "Give a wheel, a shared object or a folder to read the kernels of, or a recipe, an environment or a spec."
    if not path.exists():
        raise NotFound(f"No file or folder {text!r}.", hint=hint)
    if not path.is_file() and not path.is_dir():  # a FIFO, a socket, a device: nothing to read kernels from
        raise UsageError(f"{text} is neither a file nor a folder.", hint=hint)
    if path.is_dir():
        _refuse_file_named_folder(path)
    if path.is_file() and not text.endswith(".whl") and not looks_binary(path.name) and not _is_elf(path):
        # What reaches here was not read as a lockfile or a project file either (`check` tries those first).
        from cuenv.lock.foreign import LABELS
        from cuenv.lock.io import refuse_poetry_only

        refuse_poetry_only(text)

        kinds = ", ".join(["cuenv.lock", *LABELS.values()])
        raise UsageError(f"{text} is not a wheel, a shared object, a fat binary, a lockfile or a project file cuenv reads.",
                         hint=hint + f" Lockfiles: {kinds}; project files: environment.yml, requirements.txt, "
                         "pyproject.toml (uv, pixi), pixi.toml.")
    return path


def _named_like_a_file(name: str) -> bool:
    """Whether ``name`` is named as a file cuenv reads (``uv.lock``, ``environment.yml``, ``requirements-gpu.txt``);
    one without a dot (a ``requirements/`` folder of requirement files) is not."""
    import re

    from cuenv.recipes.projectfile import KINDS

    named = name in ("pyproject.toml", "pixi.toml", "cuenv.lock") or any(re.search(p, name) for _, p in KINDS)
    return named and "." in name


def _refuse_file_named_folder(path: Path) -> None:
    """A folder named as a file cuenv reads (``uv.lock``, ``environment.yml``, a link to a folder so named) is
    refused: read for its kernels it would say "no CUDA kernels" of what the user meant as a lockfile."""
    if _named_like_a_file(path.name):
        raise UsageError(f"{path} is a folder, not a file; cuenv reads a file of that name.",
                         hint="Give the path of the file itself; a folder is read for the CUDA kernels in it.")


def _is_elf(path: Path) -> bool:
    """Whether a file named like nothing cuenv scans still is one (an ELF shared object or cubin)."""
    try:
        with path.open("rb") as fh:
            return fh.read(4) == b"\x7fELF"
    except OSError:
        return False


def _derived_note(text: str, settings: Settings) -> str | None:
    """The note of a recipe version read from PyPI on the fly (cuenv.recipes.beyond), if the target is one."""
    if "@" not in text:
        return None
    from cuenv.recipes.beyond import derived_note
    from cuenv.recipes.beyond import resolve as resolve_version
    from cuenv.recipes.catalogue import load_catalogue

    catalogue = load_catalogue(settings)
    if text.split("@", 1)[0] not in catalogue.names():
        return None
    return derived_note(resolve_version(catalogue, text)[0])
