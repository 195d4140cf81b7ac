"""Recipes: named CUDA stacks read from YAML, and the catalogue that finds them by name.

A recipe file is ``<name>.yaml``; the format is ``cuenv/recipes/recipe.schema.json`` and
docs/reference/recipes.md. Loading validates with ``cuenv.recipes.lint`` and raises at the first problem
(``cuenv recipes lint`` lists them all). The catalogue only parses the files it needs: ``get`` reads one
file, so ``cuenv check NAME`` stays fast.
"""

from __future__ import annotations

import os
import re
from enum import Enum
from pathlib import Path

from cuenv.errors import NotFound, UsageError
from cuenv.knowledge.stack import Stack
from cuenv.plain import Plain

TYPE_CHECKING = False  # no `typing` at run time: `check RECIPE` reads one recipe at start-up (issue 29)
if TYPE_CHECKING:
    from collections.abc import Iterable
    from typing import Any, Final

    from cuenv.config import Settings

    RecipeData = dict[str, Any]  # a recipe file's parsed YAML, once lint found no problem in it

_PKG: Final = Path(__file__).resolve().parents[1]  # the cuenv package
SUFFIX: Final = ".yaml"
_OS_OF_PLATFORM: Final = {"linux-64": "linux", "linux-aarch64": "linux", "win-64": "windows"}
# The code a recipe's check runs (cuenv.recipes.lint and what it reads): a kept check is redone when it changes.
_CHECKED_BY: Final = tuple(_PKG / f for f in ("recipes/lint.py", "recipes/recipe.schema.json", "recipes/catalogue.py",
                                               "trust/envvars.py", "trust/requirements.py", "trust/limits.py"))


def builtin_dir() -> Path:
    """The shipped recipes: package data when installed, else the repository's recipes/ folder."""
    installed = _PKG / "_data" / "recipes"
    return installed if installed.is_dir() else _PKG.parent / "recipes"


class RecipeError(UsageError):
    """A recipe file that does not load; carries the first problem, names the lint command."""


class _Unset(Enum):
    """An override field left out: the top level's value holds (None is a value: "no cuDNN")."""

    UNSET = "unset"


_UNSET: Final = _Unset.UNSET

# The records below are plain classes (cuenv.plain): read-only by convention, compared by value.


class Arch(Plain):
    __slots__ = ("sass", "ptx")

    def __init__(self, sass: tuple[str, ...], ptx: tuple[str, ...] = ()) -> None:
        self.sass, self.ptx = sass, ptx

    def to_dict(self) -> dict[str, object]:
        return {"sass": list(self.sass), "ptx": list(self.ptx)}


class Python(Plain):
    """The recipe's Python: its default and the range it supports. ``minors``: the releases of
    :data:`PYTHON_MINORS` the range allows, as ``packaging`` answered when the file was checked (kept
    with a shipped recipe's check), so that a create need not import it; not part of the content."""

    __slots__ = ("default", "supported", "minors")

    def __init__(self, default: str, supported: str | None = None, minors: tuple[str, ...] | None = None) -> None:
        self.default, self.supported, self.minors = default, supported, minors

    def to_dict(self) -> dict[str, object]:
        return {"default": self.default, "supported": self.supported}

    def _values(self) -> tuple[object, ...]:  # equality and hash: the content, not the answers kept with it
        return self.default, self.supported

    def allows(self, minor: str) -> bool:
        """Whether ``supported`` (none: any) allows Python ``minor`` ("3.11"), prereleases included."""
        if not self.supported:
            return True
        if self.minors is not None and minor in PYTHON_MINORS:
            return minor in self.minors
        from packaging.specifiers import SpecifierSet

        return SpecifierSet(self.supported).contains(minor, prereleases=True)


PYTHON_MINORS: Final = tuple(f"3.{m}" for m in range(6, 30))  # the releases a range is answered for ahead


def allowed_minors(supported: str) -> list[str] | None:
    """The releases of :data:`PYTHON_MINORS` that ``supported`` allows, as ``packaging`` answers; None for a
    range it cannot read (the create that needs it says so)."""
    from packaging.specifiers import InvalidSpecifier, SpecifierSet

    try:
        spec = SpecifierSet(supported)
    except InvalidSpecifier:
        return None
    return [m for m in PYTHON_MINORS if spec.contains(m, prereleases=True)]


class Framework(Plain):
    __slots__ = ("name", "version", "versions")

    def __init__(self, name: str, version: str, versions: tuple[str, ...]) -> None:
        self.name = name
        self.version = version  # the default
        self.versions = versions  # every version @VERSION may pick; includes ``version``

    def to_dict(self) -> dict[str, object]:
        return {"name": self.name, "version": self.version, "versions": list(self.versions)}


class SmokeTest(Plain):
    __slots__ = ("python", "command")

    def __init__(self, python: str | None = None, command: tuple[str, ...] | None = None) -> None:
        self.python, self.command = python, command

    def to_dict(self) -> dict[str, object]:
        return {"python": self.python} if self.python is not None else {"command": list(self.command or ())}


class Override(Plain):
    """What differs for one framework version; ``_UNSET`` fields inherit the top level."""

    __slots__ = ("cudnn", "arch", "python", "platforms")

    def __init__(self, cudnn: str | None | _Unset = _UNSET, arch: Arch | _Unset = _UNSET, python: Python | _Unset = _UNSET,
                 platforms: tuple[str, ...] | _Unset = _UNSET) -> None:
        self.cudnn, self.arch, self.python, self.platforms = cudnn, arch, python, platforms

    def to_dict(self) -> dict[str, object]:
        out: dict[str, object] = {}
        if self.cudnn is not _UNSET:
            out["cudnn"] = self.cudnn
        if self.arch is not _UNSET:
            out["arch"] = self.arch.to_dict()
        if self.python is not _UNSET:
            out["python"] = self.python.to_dict()
        if self.platforms is not _UNSET:
            out["platforms"] = list(self.platforms)
        return out


class CondaInstall(Plain):
    __slots__ = ("channels", "specs", "nvcc", "versions")

    def __init__(self, channels: tuple[str, ...], specs: tuple[str, ...], nvcc: bool = False,
                 versions: tuple[str, ...] | None = None) -> None:
        self.channels = channels
        self.specs = specs  # may hold {version}
        self.nvcc = nvcc
        self.versions = versions  # None: every framework version

    def specs_for(self, version: str | None) -> tuple[str, ...]:
        return _fill(self.specs, version)

    def to_dict(self) -> dict[str, object]:
        return {"channels": list(self.channels), "specs": list(self.specs), "nvcc": self.nvcc,
                "versions": None if self.versions is None else list(self.versions)}


class VenvInstall(Plain):
    __slots__ = ("requirements", "index_urls", "nvcc", "versions")

    def __init__(self, requirements: tuple[str, ...], index_urls: tuple[str, ...] = (), nvcc: bool = False,
                 versions: tuple[str, ...] | None = None) -> None:
        self.requirements = requirements  # may hold {version}
        self.index_urls = index_urls  # searched before PyPI, in order
        self.nvcc = nvcc
        self.versions = versions

    def requirements_for(self, version: str | None) -> tuple[str, ...]:
        return _fill(self.requirements, version)

    def to_dict(self) -> dict[str, object]:
        return {"index_urls": list(self.index_urls), "requirements": list(self.requirements), "nvcc": self.nvcc,
                "versions": None if self.versions is None else list(self.versions)}


def _fill(items: Iterable[str], version: str | None) -> tuple[str, ...]:
    return tuple(i.replace("{version}", version) if version is not None else i for i in items)


ENGINES: Final = ("conda", "venv")


class Recipe(Plain):
    __slots__ = ("name", "summary", "framework", "cuda", "cudnn", "python", "arch", "platforms", "env", "smoke_test",
                 "overrides", "conda", "venv", "notes", "path", "origin")

    def __init__(self, name: str, summary: str, framework: Framework | None, cuda: str, cudnn: str | None, python: Python,
                 arch: Arch, platforms: tuple[str, ...], env: tuple[tuple[str, str], ...], smoke_test: SmokeTest,
                 overrides: tuple[tuple[str, Override], ...] = (), conda: CondaInstall | None = None,
                 venv: VenvInstall | None = None, notes: tuple[str, ...] = (), path: Path | None = None,
                 origin: str = "builtin") -> None:
        self.name, self.summary, self.framework, self.cuda, self.cudnn = name, summary, framework, cuda, cudnn
        self.python, self.arch, self.platforms, self.env, self.smoke_test = python, arch, platforms, env, smoke_test
        self.overrides, self.conda, self.venv, self.notes = overrides, conda, venv, notes
        self.path = path  # where it was read; not part of its value (nor is origin)
        self.origin = origin  # builtin | user | derived (cuenv.recipes.beyond)

    def _values(self) -> tuple[object, ...]:
        return tuple(getattr(self, k) for k in self.__slots__[:-2])  # equal content, wherever it was read

    # -- versions -------------------------------------------------------------------------------

    @property
    def versions(self) -> tuple[str, ...]:
        return self.framework.versions if self.framework else ()

    @property
    def default_version(self) -> str | None:
        return self.framework.version if self.framework else None

    def check_version(self, version: str | None) -> str | None:
        """The framework version to use: ``version`` if supported, the default if None; else a UsageError."""
        if version is None:
            return self.default_version
        if self.framework is None:
            raise UsageError(f"Recipe {self.name!r} has no framework, so it takes no @VERSION.",
                             hint=f"Use `{self.name}` without @{version}.")
        if version not in self.framework.versions:
            raise UsageError(
                f"Recipe {self.name!r} does not support {self.framework.name} {version}.",
                hint=f"Supported versions: {', '.join(self.framework.versions)} (default {self.framework.version}).")
        return version

    def _override(self, version: str | None) -> Override:
        return dict(self.overrides).get(version, Override()) if version else Override()

    def cudnn_for(self, version: str | None = None) -> str | None:
        o = self._override(self.check_version(version))
        return self.cudnn if o.cudnn is _UNSET else o.cudnn

    def arch_for(self, version: str | None = None) -> Arch:
        o = self._override(self.check_version(version))
        return self.arch if o.arch is _UNSET else o.arch

    def python_for(self, version: str | None = None) -> Python:
        o = self._override(self.check_version(version))
        return self.python if o.python is _UNSET else o.python

    def platforms_for(self, version: str | None = None) -> tuple[str, ...]:
        o = self._override(self.check_version(version))
        return self.platforms if o.platforms is _UNSET else o.platforms

    # -- engines --------------------------------------------------------------------------------

    def engines(self, version: str | None = None) -> tuple[str, ...]:
        """Engines that can install this recipe (at ``version``)."""
        version = self.check_version(version)
        out = []
        for name in ENGINES:
            section = getattr(self, name)
            if section is not None and (section.versions is None or version in section.versions):
                out.append(name)
        return tuple(out)

    def install_plan(self, version: str | None = None) -> dict[str, dict[str, Any]]:
        """What each engine would install at ``version``: {"conda": {...}, "venv": {...}} (absent engines left out)."""
        version = self.check_version(version)
        plan: dict[str, dict[str, Any]] = {}
        usable = self.engines(version)
        if self.conda is not None and "conda" in usable:
            plan["conda"] = {"channels": list(self.conda.channels), "specs": list(self.conda.specs_for(version)),
                             "nvcc": self.conda.nvcc}
        if self.venv is not None and "venv" in usable:
            plan["venv"] = {"index_urls": list(self.venv.index_urls),
                            "requirements": list(self.venv.requirements_for(version)), "nvcc": self.venv.nvcc}
        return plan

    # -- the hardware contract --------------------------------------------------------------------

    def label(self, version: str | None = None) -> str:
        version = self.check_version(version)
        return self.name if version == self.default_version else f"{self.name}@{version}"

    def stack(self, version: str | None = None, *, engine: str | None = None) -> Stack:
        """What this recipe (at ``version``, installed by ``engine``) asks of a machine.

        ``engine`` is "conda" or "venv"; without it, ``has_nvcc`` is true when any engine ships nvcc
        (the conservative answer for a check made before the engine is known).
        """
        version = self.check_version(version)
        arch = self.arch_for(version)
        sections: list[CondaInstall | VenvInstall | None] = (
            [self.conda if engine == "conda" else self.venv] if engine in ENGINES else [self.conda, self.venv])
        os_names: list[str] = []
        for p in self.platforms_for(version):
            if _OS_OF_PLATFORM[p] not in os_names:
                os_names.append(_OS_OF_PLATFORM[p])
        major, minor = self.cuda.split(".")
        # torch's arch list differs per platform (issue 27): the recipe's is the x86_64 wheel's, and the
        # aarch64 (SBSA) one comes from the knowledge base where it was read, else it stays unknown there
        aarch64, x86_only = None, False
        if self.framework is not None and self.framework.name == "torch" and version:
            from cuenv.knowledge import matrix

            built = matrix.torch_build(version, f"cu{major}{minor}")
            aarch64, x86_only = (built.aarch64 if built else None), True
        return Stack(
            label=self.label(version),
            cuda=self.cuda,
            cudnn=self.cudnn_for(version),
            sass=arch.sass,
            ptx=arch.ptx,
            has_nvcc=any(s is not None and s.nvcc for s in sections),
            os=tuple(os_names),
            framework=self.framework.name if self.framework else None,
            framework_version=version,
            variant=f"cu{major}{minor}",
            arch_x86_only=x86_only,
            arch_aarch64=aarch64,
        )

    # -- identity ---------------------------------------------------------------------------------

    @property
    def env_vars(self) -> dict[str, str]:
        return dict(self.env)

    def to_dict(self) -> dict[str, object]:
        """The canonical document: every key, defaults filled in (what ``content_hash`` digests)."""
        return {
            "name": self.name,
            "summary": self.summary,
            "framework": self.framework.to_dict() if self.framework else None,
            "cuda": self.cuda,
            "cudnn": self.cudnn,
            "python": self.python.to_dict(),
            "arch": self.arch.to_dict(),
            "platforms": list(self.platforms),
            "env": dict(self.env),
            "smoke_test": self.smoke_test.to_dict(),
            "overrides": {v: o.to_dict() for v, o in self.overrides},
            "install": {n: getattr(self, n).to_dict() for n in ENGINES if getattr(self, n) is not None},
            "notes": list(self.notes),
        }

    def content_hash(self) -> str:
        """sha256 of the canonical content: formatting and comments do not count, any value does."""
        import hashlib
        import json

        text = json.dumps(self.to_dict(), sort_keys=True, separators=(",", ":"), ensure_ascii=False)
        return "sha256:" + hashlib.sha256(text.encode("utf-8")).hexdigest()


# ---------------------------------------------------------------------------------------------
# Loading
# ---------------------------------------------------------------------------------------------

def _arch(d: RecipeData) -> Arch:
    return Arch(sass=tuple(d.get("sass") or ()), ptx=tuple(d.get("ptx") or ()))


def _python(d: RecipeData) -> Python:
    minors = d.get(_MINORS)
    return Python(default=d["default"], supported=d.get("supported"), minors=None if minors is None else tuple(minors))


_MINORS: Final = "\0minors"  # where _with_minors puts a Python's allowed_minors (over any a file held)


def _with_minors(data: RecipeData) -> RecipeData:
    """``data`` with each Python range's :func:`allowed_minors` beside it (a shipped recipe's, kept with its check)."""
    overrides = data.get("overrides") or {}
    for python in [data.get("python"), *(o.get("python") for o in overrides.values() if isinstance(o, dict))]:
        if isinstance(python, dict) and isinstance(python.get("supported"), str):
            python[_MINORS] = allowed_minors(python["supported"])
    return data


def _versions(value: list[str] | None) -> tuple[str, ...] | None:
    return None if value is None else tuple(value)


def from_data(data: RecipeData, *, path: Path | None = None, origin: str = "builtin") -> Recipe:
    """Build the record from data that passed validation."""
    fw = data.get("framework")
    framework = None
    if fw:
        framework = Framework(fw["name"], fw["version"], tuple(fw.get("versions") or (fw["version"],)))
    overrides = []
    for version, o in (data.get("overrides") or {}).items():
        overrides.append((version, Override(
            cudnn=o["cudnn"] if "cudnn" in o else _UNSET,
            arch=_arch(o["arch"]) if "arch" in o else _UNSET,
            python=_python(o["python"]) if "python" in o else _UNSET,
            platforms=tuple(o["platforms"]) if "platforms" in o else _UNSET,
        )))
    install = data["install"]
    conda = venv = None
    if "conda" in install:
        c = install["conda"]
        conda = CondaInstall(tuple(c["channels"]), tuple(c["specs"]), bool(c.get("nvcc", False)),
                             _versions(c.get("versions")))
    if "venv" in install:
        v = install["venv"]
        venv = VenvInstall(tuple(v["requirements"]), tuple(v.get("index_urls") or ()), bool(v.get("nvcc", False)),
                           _versions(v.get("versions")))
    smoke = data["smoke_test"]
    return Recipe(
        name=data["name"],
        summary=data["summary"],
        framework=framework,
        cuda=data["cuda"],
        cudnn=data["cudnn"],
        python=_python(data["python"]),
        arch=_arch(data["arch"]),
        platforms=tuple(data["platforms"]),
        env=tuple((k, v) for k, v in (data.get("env") or {}).items()),
        smoke_test=SmokeTest(python=smoke.get("python"),
                             command=tuple(smoke["command"]) if "command" in smoke else None),
        overrides=tuple(overrides),
        conda=conda,
        venv=venv,
        notes=tuple(data.get("notes") or ()),
        path=path,
        origin=origin,
    )


def parse(text: str, *, file: str = "<recipe>", stem: str | None = None, origin: str = "builtin",
          path: Path | None = None, trusted_env: Iterable[str] = ()) -> Recipe:
    """Parse and validate; raise ``RecipeError`` at the first problem.

    ``trusted_env``: the user's extension of the variables a recipe may set (cuenv.trust.envvars)."""
    return from_data(_checked(text, file, stem, tuple(trusted_env)), path=path, origin=origin)


def _checked(text: str, file: str, stem: str | None, trusted_env: tuple[str, ...]) -> RecipeData:
    """The recipe's data once lint finds no problem; else a RecipeError naming the first."""
    from cuenv.recipes.lint import check_text

    data, problems = check_text(text, file, stem=stem, thorough=False, trusted_env=trusted_env)
    if problems:
        first = sorted(problems.items, key=lambda p: (p.line or 0, p.key))[0]
        more = f" ({len(problems) - 1} more)" if len(problems) > 1 else ""
        raise RecipeError(f"Recipe {first}{more}.", hint=f"Run `cuenv recipes lint {file}` to list every problem.")
    assert data is not None  # no problem: a mapping
    return data


def load(path: Path, *, origin: str = "builtin", trusted_env: Iterable[str] = ()) -> Recipe:
    """One recipe file, read within cuenv's limits (a recipe folder may come from anyone).

    A shipped recipe's checked data is kept between runs (cuenv.shipped); any other is checked every time."""
    trusted = tuple(trusted_env)
    stem = path.name[: -len(SUFFIX)] if path.name.endswith(SUFFIX) else path.stem

    def checked(file: Path) -> RecipeData:
        from cuenv.trust import Untrusted, limits

        try:
            text = limits.read_text(file, what="Recipe file", limit=limits.RECIPE)
        except (Untrusted, NotFound) as exc:  # a RecipeError: one broken file (or dangling link) hides only itself
            raise RecipeError(exc.message, hint=f"Run `cuenv recipes lint {file}`, or fix or remove the file.") from None
        return _checked(text, str(file), stem, trusted)

    if path.parent == builtin_dir():  # shipped with cuenv (a catalogue's "builtin" folder may be any)
        from cuenv import shipped

        # the Python ranges answered with the check: a create of a shipped recipe needs no `packaging`
        data = shipped.load(path, lambda file: _with_minors(checked(file)), salt="\0".join(trusted), depends=_CHECKED_BY)
    else:
        data = checked(path)
    return from_data(data, path=path, origin=origin)


def split_ref(ref: str) -> tuple[str, str | None]:
    """ "torch-cu121@2.3.1" -> ("torch-cu121", "2.3.1"); "cuda-12.1" -> ("cuda-12.1", None)."""
    name, sep, version = ref.partition("@")
    if not name or (sep and not version):
        raise UsageError(f"{ref!r} is not a recipe reference.",
                         hint="Write a recipe's name, or name@version: torch-cu121@2.3.1 (`cuenv recipes` lists them).")
    return name, (version if sep else None)


USER_PREFIX: Final = "user:"  # `user:NAME`: the user's recipe NAME, also when a built-in has that name


class Catalogue(Plain):
    """Built-in recipes plus user folders (``user_dirs`` earlier in the tuple win among themselves).

    A user recipe never replaces a built-in one silently (issue 31 §6): ``NAME`` is the built-in when
    cuenv ships one, and the user's recipe of that name is chosen only by writing ``user:NAME``. Such a
    recipe is listed as ``user:NAME`` and flagged by `recipes`, `recipes show` and `create`
    (``shadow_warning``). A folder listing entry that is not a readable regular file (a FIFO, a
    folder, a dangling link) is one recipe that does not load, never the catalogue's end."""

    __slots__ = ("builtin", "user_dirs", "trusted_env")

    def __init__(self, builtin: Path, user_dirs: tuple[Path, ...] = (), trusted_env: tuple[str, ...] = ()) -> None:
        self.builtin = builtin
        self.user_dirs = user_dirs
        self.trusted_env = trusted_env  # the user's extension of the variables a recipe may set

    def _dirs(self) -> list[tuple[Path, str]]:
        return [(d, "user") for d in self.user_dirs] + [(self.builtin, "builtin")]

    def _file(self, name: str) -> tuple[Path, str] | None:
        if name.startswith(USER_PREFIX):
            return self._user_file(name[len(USER_PREFIX):])
        builtin = self.builtin / f"{name}{SUFFIX}"
        if _present(builtin):
            return builtin, "builtin"
        return self._user_file(name)

    def _user_file(self, name: str) -> tuple[Path, str] | None:
        for folder in self.user_dirs:
            candidate = folder / f"{name}{SUFFIX}"
            # Anything listed under the name (a broken link, a FIFO, a folder) is a recipe that does not load
            # (load says why, without blocking), as names() lists it: not an unknown name.
            if _present(candidate):
                return candidate, "user"
        return None

    def _listed(self, folder: Path) -> set[str]:
        try:
            return {p.name[: -len(SUFFIX)] for p in folder.iterdir() if p.name.endswith(SUFFIX) and not p.name.startswith(".")}
        except OSError:  # a user folder that does not exist (yet) holds no recipes
            return set()

    def names(self) -> list[str]:
        """Every recipe reference, sorted: NAME for each, and ``user:NAME`` for a user recipe that has a
        built-in's name. Reads folder listings only."""
        builtin = self._listed(self.builtin)
        user: set[str] = set()
        for folder in self.user_dirs:
            user |= self._listed(folder)
        found = builtin | user | {USER_PREFIX + n for n in user & builtin}
        return sorted(found, key=_sort_key)

    def shadowing(self, name: str) -> Path | None:
        """The user's file with the name of built-in ``name`` (or of ``user:name``'s built-in), or None."""
        bare = name[len(USER_PREFIX):] if name.startswith(USER_PREFIX) else name
        if not _present(self.builtin / f"{bare}{SUFFIX}"):
            return None
        hit = self._user_file(bare)
        return hit[0] if hit else None

    def shadow_warning(self, ref: str) -> str | None:
        """What `recipes`, `recipes show` and `create` say when ``ref`` meets a user recipe with a built-in's name."""
        name = split_ref(ref)[0]
        path = self.shadowing(name)
        if path is None:
            return None
        bare = name[len(USER_PREFIX):] if name.startswith(USER_PREFIX) else name
        if name.startswith(USER_PREFIX):
            return f"Using your recipe {path}, which has the name of the built-in recipe {bare} (you wrote {name})."
        return (f"Your recipe {path} has the name of the built-in recipe {bare}; the built-in is used. "
                f"Write {USER_PREFIX}{bare} to use yours, or rename it.")

    def find(self, name: str) -> Recipe:
        hit = self._file(name)
        if hit is None:
            import difflib

            names = self.names()
            close = difflib.get_close_matches(name, names, n=3, cutoff=0.5)
            hint = f"Closest: {', '.join(close)}. " if close else ""
            raise NotFound(f"Unknown recipe {name!r}.", hint=hint + "Run `cuenv recipes` for the list.")
        path, origin = hit
        return load(path, origin=origin, trusted_env=self.trusted_env)

    def get(self, ref: str) -> tuple[Recipe, str | None]:
        """Resolve "NAME" or "NAME@VERSION" to (recipe, framework version or None for bare stacks).

        Only versions the recipe lists; cuenv.recipes.beyond.resolve also takes newer releases.
        """
        name, version = split_ref(ref)
        recipe = self.find(name)
        return recipe, recipe.check_version(version)

    def all(self, broken: list[RecipeError] | None = None) -> list[Recipe]:
        """Every recipe; with ``broken``, a recipe that does not load is collected there and skipped."""
        out = []
        for name in self.names():
            try:
                out.append(self.find(name))
            except RecipeError as exc:
                if broken is None:
                    raise
                broken.append(exc)
        return out

    def shadowed(self, name: str) -> list[Path]:
        """Files of ``name`` that lose to the one in use (for `recipes show`)."""
        hit = self._file(name)
        bare = name[len(USER_PREFIX):] if name.startswith(USER_PREFIX) else name
        files = [f / f"{bare}{SUFFIX}" for f, _ in self._dirs()]
        return [f for f in files if f.is_file() and (hit is None or f != hit[0])]


def _present(path: Path) -> bool:
    """An entry is there (a file, a folder, a FIFO, a dangling link): never opened here."""
    return os.path.lexists(path)


def _sort_key(name: str) -> tuple[tuple[int, int] | tuple[int, str], ...]:
    # cuda-12.10 after cuda-12.9: compare digit runs as numbers.
    return tuple((0, int(t)) if t.isdigit() else (1, t) for t in re.split(r"(\d+)", name))


def load_catalogue(settings: Settings, extra_dirs: Iterable[Path] = ()) -> Catalogue:
    """The catalogue for these settings: ``extra_dirs`` first, then ``settings.recipe_dirs``, then built-ins."""
    dirs = tuple(extra_dirs) + tuple(getattr(settings, "recipe_dirs", ()) or ())
    return Catalogue(builtin=builtin_dir(), user_dirs=tuple(dict.fromkeys(Path(d) for d in dirs)),
                     trusted_env=tuple(getattr(settings, "trusted_env_vars", ()) or ()))


__all__ = ["Arch", "Catalogue", "CondaInstall", "Framework", "Override", "Python", "Recipe", "RecipeError",
           "SmokeTest", "VenvInstall", "builtin_dir", "from_data", "load", "load_catalogue", "parse", "split_ref"]
