"""An environment's meta.json as a type: :class:`EnvMeta`, read through :func:`EnvMeta.from_json` (which
upgrades every older shape in :func:`migrate`, the one place that knows them) and written through
:meth:`EnvMeta.to_json` (issue 24 §1).

The shape (``schema`` 2)::

    schema, name, recipe {name, version, hash}, engine, engine_reason, python, platform,
    stack {label, cuda, cudnn, sass, ptx, has_nvcc, os, framework, framework_version, variant},
    cuda, cudnn, framework {name, version} | null     (copies of stack, for readers of the file)
    resolved {libcudart, cudnn, nvcc, framework}, requested [..], created, cuenv_version,
    validation {fingerprint, findings [{code, severity, message, fix}]},
    layout {prefix, kind, bin_dirs, lib_dirs, include_dirs, cuda_home}, env_vars {..}, activate_scripts [..],
    smoke_test {python} | {command} | null   the test cuenv may run (an unpacked archive's only once trusted)
    size_bytes, lock_hash, compiler_hint, tools {TOOL: {source, path, toolkit}} | null,
    changes [{verb, asked, at, changes}], adopted {prefix, kind, evidence, conflicts, adopted} | null,
    unpacked_from {archive, source_prefix, proven_packages, proven_scripts, held_back_scripts, smoke_test,
                   smoke_test_trusted} | null

Plain classes with ``__slots__``, not dataclasses: `cuenv list` reads every environment's meta, and
importing ``dataclasses`` costs more than a bare interpreter's start (issue 29; cuenv/result.py).
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from cuenv import __version__
from cuenv.errors import CuenvError
from cuenv.knowledge.findings import Finding
from cuenv.knowledge.packages import CUDA_PARTS, canonical, framework_packages
from cuenv.plain import Plain

TYPE_CHECKING = False  # no `typing` at run time: the start-up path does without it (issue 29)
if TYPE_CHECKING:
    from typing import Final, Literal, Sequence

    from cuenv.activation.target import CudaLayout
    from cuenv.engines.base import Package
    from cuenv.knowledge.stack import Stack

    ToolSource = Literal["env", "system", "shim"]  # cuenv.activation.shims.Source

SCHEMA: Final = 2  # 1: every meta.json before issue 24 (an unpacked archive's smoke test could sit at the top)

_TOOL_SOURCES: Final[Mapping[str, ToolSource]] = {"env": "env", "system": "system", "shim": "shim"}
JSON = object  # a value json.loads returned: read through the checks below, never trusted


class MetaDamaged(CuenvError):
    """An environment's meta.json that cuenv cannot read: what is wrong, and how to get a sound one."""

    def __init__(self, name: str | None, detail: str) -> None:
        shown = f"environment {name!r}" if name else "an environment"
        fix = (f"`cuenv remove {name}` forgets it; create or adopt it again then." if name else
               "`cuenv list` names it; `cuenv remove` with that name forgets it.")
        super().__init__(f"The metadata of {shown} is damaged ({detail}).", hint=fix)
        self.name, self.detail = name, detail


class _Record(Plain):
    """Immutable by contract: fields are set once in ``__init__``; ``replace`` makes a changed copy."""

    __slots__ = ()

    def __setattr__(self, key: str, value: object) -> None:
        raise AttributeError(f"{type(self).__name__} is immutable; use replace()")

    def __delattr__(self, key: str) -> None:
        raise AttributeError(f"{type(self).__name__} is immutable")

    __hash__ = None  # type: ignore[assignment]  # holds mappings



def _init(obj: _Record, **values: object) -> None:
    put = object.__setattr__  # past the immutability guard, once per field
    for key, value in values.items():
        put(obj, key, value)


class RecipeRef(_Record):
    """The recipe an environment was made from: its name ("adopted" for one cuenv did not build), version, hash."""

    __slots__ = ("name", "version", "hash")
    name: str
    version: str | None
    hash: str | None

    def __init__(self, name: str, version: str | None = None, hash: str | None = None) -> None:  # noqa: A002 - the file's key
        _init(self, name=name, version=version, hash=hash)

    def label(self) -> str:
        return f"{self.name}@{self.version}" if self.version else self.name

    def to_json(self) -> dict[str, str | None]:
        return {"name": self.name, "version": self.version, "hash": self.hash}


class SmokeTest(_Record):
    """``python -c CODE`` or a command: what `cuenv test` runs inside the environment."""

    __slots__ = ("python", "command")
    python: str | None
    command: tuple[str, ...]

    def __init__(self, python: str | None = None, command: tuple[str, ...] = ()) -> None:
        _init(self, python=python, command=command)

    def argv(self) -> list[str] | None:
        if self.python:
            return ["python", "-c", self.python]
        return list(self.command) or None

    def to_json(self) -> dict[str, str | list[str]]:
        return {"python": self.python} if self.python is not None else {"command": list(self.command)}


class Validation(_Record):
    """The verdict cached for one machine fingerprint ("" = judged on first use, for the machine then)."""

    __slots__ = ("fingerprint", "findings")
    fingerprint: str
    findings: tuple[Finding, ...]

    def __init__(self, fingerprint: str = "", findings: tuple[Finding, ...] = ()) -> None:
        _init(self, fingerprint=fingerprint, findings=findings)

    def to_json(self) -> dict[str, object]:
        return {"fingerprint": self.fingerprint, "findings": [f.to_json() for f in self.findings]}


class Tool(_Record):
    """Where one CUDA tool of the environment comes from: ``env``, ``system`` (a toolkit) or ``shim``."""

    __slots__ = ("source", "path", "toolkit")
    source: ToolSource
    path: str | None
    toolkit: str | None

    def __init__(self, source: ToolSource, path: str | None = None, toolkit: str | None = None) -> None:
        _init(self, source=source, path=path, toolkit=toolkit)

    def to_json(self) -> dict[str, str | None]:
        return {"source": self.source, "path": self.path, "toolkit": self.toolkit}


class Change(_Record):
    """One `cuenv add/upgrade/uninstall`: the verb, what was asked, when, and the package lines it changed."""

    __slots__ = ("verb", "asked", "at", "lines")
    verb: str
    asked: tuple[str, ...]
    at: str
    lines: tuple[str, ...]

    def __init__(self, verb: str, asked: tuple[str, ...] = (), at: str = "", lines: tuple[str, ...] = ()) -> None:
        _init(self, verb=verb, asked=asked, at=at, lines=lines)

    def to_json(self) -> dict[str, object]:
        return {"verb": self.verb, "asked": list(self.asked), "at": self.at, "changes": list(self.lines)}


class Adopted(_Record):
    """An environment cuenv did not build (cuenv.envs.adopt): the prefix it lives in and how its stack was read."""

    __slots__ = ("prefix", "kind", "evidence", "conflicts", "adopted")
    prefix: Path
    kind: str
    evidence: tuple[str, ...]
    conflicts: tuple[str, ...]
    adopted: str

    def __init__(self, prefix: Path, kind: str, evidence: tuple[str, ...] = (), conflicts: tuple[str, ...] = (),
                 adopted: str = "") -> None:
        _init(self, prefix=prefix, kind=kind, evidence=evidence, conflicts=conflicts, adopted=adopted)

    def to_json(self) -> dict[str, object]:
        return {"prefix": str(self.prefix), "kind": self.kind, "evidence": list(self.evidence),
                "conflicts": list(self.conflicts), "adopted": self.adopted}


class UnpackedFrom(_Record):
    """An environment unpacked from an archive (`cuenv unpack`), and what of the archive may run (issue 31 §4):
    the conda activation scripts of packages proven against the package itself, and its smoke test only
    once the user trusted it (until then it waits here, and EnvMeta.smoke_test is None)."""

    __slots__ = ("archive", "source_prefix", "proven_packages", "proven_scripts", "held_back_scripts", "smoke_test",
                 "smoke_test_trusted")
    archive: str
    source_prefix: str
    proven_packages: tuple[int, int] | None  # (proven against the package itself, conda packages in all)
    proven_scripts: tuple[str, ...]  # relative to the prefix
    held_back_scripts: tuple[str, ...]  # the others: never run
    smoke_test: SmokeTest | None
    smoke_test_trusted: bool

    def __init__(self, archive: str, source_prefix: str = "", proven_packages: tuple[int, int] | None = None,
                 proven_scripts: tuple[str, ...] = (), held_back_scripts: tuple[str, ...] = (),
                 smoke_test: SmokeTest | None = None, smoke_test_trusted: bool = False) -> None:
        _init(self, archive=archive, source_prefix=source_prefix, proven_packages=proven_packages,
              proven_scripts=proven_scripts, held_back_scripts=held_back_scripts, smoke_test=smoke_test,
              smoke_test_trusted=smoke_test_trusted)

    def to_json(self) -> dict[str, object]:
        out: dict[str, object] = {"archive": self.archive, "source_prefix": self.source_prefix,
                                  "proven_scripts": list(self.proven_scripts),
                                  "held_back_scripts": list(self.held_back_scripts),
                                  "smoke_test_trusted": self.smoke_test_trusted}
        if self.proven_packages is not None:
            out["proven_packages"] = list(self.proven_packages)
        if self.smoke_test is not None:
            out["smoke_test"] = self.smoke_test.to_json()
        return out


class EnvMeta(_Record):
    """What cuenv knows about one environment: written at create, adopt, unpack and change, read everywhere."""

    __slots__ = ("name", "recipe", "engine", "engine_reason", "python", "platform", "stack", "resolved", "requested",
                 "created", "cuenv_version", "validation", "layout", "env_vars", "activate_scripts", "smoke_test",
                 "size_bytes", "lock_hash", "compiler_hint", "tools", "changes", "adopted", "unpacked_from")
    name: str
    recipe: RecipeRef
    engine: str
    engine_reason: str
    python: str | None
    platform: str
    stack: Stack  # as recorded: its label is the recipe's (stack_from_meta names the environment instead)
    resolved: Mapping[str, str]  # libcudart, cudnn, nvcc, framework: what the solution installed
    requested: tuple[str, ...]
    created: str
    cuenv_version: str
    validation: Validation
    layout: CudaLayout
    env_vars: Mapping[str, str]
    activate_scripts: tuple[str, ...]
    smoke_test: SmokeTest | None  # the recipe's, or an archive's once trusted; see runnable_smoke_test
    size_bytes: int | None
    lock_hash: str | None
    compiler_hint: str | None  # how to get nvcc for it (doctor's nvcc-runtime-mismatch fix names it)
    tools: Mapping[str, Tool] | None  # None: made before cuenv recorded its tools
    changes: tuple[Change, ...]
    adopted: Adopted | None
    unpacked_from: UnpackedFrom | None

    def __init__(self, *, name: str, recipe: RecipeRef, engine: str, stack: Stack, layout: CudaLayout,
                 engine_reason: str = "", python: str | None = None, platform: str = "linux-64",
                 resolved: Mapping[str, str] | None = None, requested: tuple[str, ...] = (), created: str = "",
                 cuenv_version: str = "", validation: Validation | None = None, env_vars: Mapping[str, str] | None = None,
                 activate_scripts: tuple[str, ...] = (), smoke_test: SmokeTest | None = None,
                 size_bytes: int | None = None, lock_hash: str | None = None, compiler_hint: str | None = None,
                 tools: Mapping[str, Tool] | None = None, changes: tuple[Change, ...] = (),
                 adopted: Adopted | None = None, unpacked_from: UnpackedFrom | None = None) -> None:
        _init(self, name=name, recipe=recipe, engine=engine, engine_reason=engine_reason, python=python,
              platform=platform, stack=stack, resolved={} if resolved is None else resolved, requested=requested,
              created=created, cuenv_version=cuenv_version, validation=validation or Validation(), layout=layout,
              env_vars={} if env_vars is None else env_vars, activate_scripts=activate_scripts, smoke_test=smoke_test,
              size_bytes=size_bytes, lock_hash=lock_hash, compiler_hint=compiler_hint, tools=tools, changes=changes,
              adopted=adopted, unpacked_from=unpacked_from)

    # -- derived, one home each ---------------------------------------------------------------
    @property
    def cuda(self) -> str | None:
        return self.stack.cuda

    @property
    def cudnn(self) -> str | None:
        return self.stack.cudnn

    @property
    def framework(self) -> str | None:
        """"torch 2.1.0", or None for an environment without a framework."""
        s = self.stack
        return f"{s.framework} {s.framework_version or ''}".strip() if s.framework else None

    def runnable_smoke_test(self) -> SmokeTest | None:
        """The smoke test cuenv may run (`cuenv test`, the TUI, an image's health check): the recipe's; one
        that came in an archive only after `cuenv test NAME --trust-smoke-test`."""
        if self.unpacked_from is not None and not self.unpacked_from.smoke_test_trusted:
            return None
        return self.smoke_test

    def archived_smoke_test(self) -> SmokeTest | None:
        """The smoke test an archive brought that has not been trusted yet, or None."""
        u = self.unpacked_from
        return u.smoke_test if u is not None and not u.smoke_test_trusted else None

    def trusted(self) -> EnvMeta:
        """This meta after the user's consent to the archive's smoke test."""
        if self.unpacked_from is None:
            return self
        return self.replace(smoke_test=self.archived_smoke_test() or self.smoke_test,
                            unpacked_from=self.unpacked_from.replace(smoke_test=None, smoke_test_trusted=True))

    def proven_scripts(self) -> frozenset[str] | None:
        """The conda activation scripts the environment may run: None (all) for one cuenv installed; for an
        unpacked archive only those it recorded as proven (none for one unpacked before it recorded them)."""
        return None if self.unpacked_from is None else frozenset(self.unpacked_from.proven_scripts)

    # -- the file -------------------------------------------------------------------------------
    @classmethod
    def from_json(cls, data: JSON) -> EnvMeta:
        """Read meta.json's data of any schema cuenv wrote; MetaDamaged (a CuenvError) names what is wrong."""
        return _parse(migrate(data))

    def to_json(self) -> dict[str, object]:
        s = self.stack
        return {
            "schema": SCHEMA, "name": self.name, "recipe": self.recipe.to_json(), "engine": self.engine,
            "engine_reason": self.engine_reason, "python": self.python, "platform": self.platform,
            "cuda": s.cuda, "cudnn": s.cudnn,
            "framework": {"name": s.framework, "version": s.framework_version} if s.framework else None,
            "stack": stack_to_json(s), "resolved": dict(self.resolved), "requested": list(self.requested),
            "created": self.created, "cuenv_version": self.cuenv_version, "validation": self.validation.to_json(),
            "layout": layout_to_json(self.layout), "env_vars": dict(self.env_vars),
            "activate_scripts": list(self.activate_scripts),
            "smoke_test": None if self.smoke_test is None else self.smoke_test.to_json(),
            "size_bytes": self.size_bytes, "lock_hash": self.lock_hash, "compiler_hint": self.compiler_hint,
            "tools": None if self.tools is None else {k: t.to_json() for k, t in self.tools.items()},
            "changes": [c.to_json() for c in self.changes],
            "adopted": None if self.adopted is None else self.adopted.to_json(),
            "unpacked_from": None if self.unpacked_from is None else self.unpacked_from.to_json(),
        }


# -- reading: one migration, then one parser of the current shape ------------------------------------
def migrate(data: JSON) -> dict[str, object]:
    """meta.json's data of any schema cuenv wrote, upgraded to SCHEMA's shape (not yet checked).

    Schema 1 (no ``schema`` key reads as 1; keys were added over time, so any may be missing): an archive
    unpacked before issue 31 §4 kept its smoke test at the top, now it waits in ``unpacked_from`` until
    trusted; ``tools``, ``changes``, ``compiler_hint``, ``adopted`` and ``unpacked_from`` may be absent."""
    if not isinstance(data, dict):
        raise MetaDamaged(None, "not a JSON object")
    name = data.get("name") if isinstance(data.get("name"), str) else None
    schema = data.get("schema", 1)
    if not isinstance(schema, int) or isinstance(schema, bool) or schema < 1:
        raise MetaDamaged(name, f"schema {schema!r} is not a version")
    if schema > SCHEMA:
        raise CuenvError(f"The metadata of environment {name!r} was written by a newer cuenv (schema {schema}; this "
                         f"one reads up to {SCHEMA}).", hint="Upgrade cuenv: `pip install --upgrade cuenv`.")
    out = dict(data)
    if schema < 2:
        unpacked = out.get("unpacked_from")
        if isinstance(unpacked, dict) and unpacked.get("smoke_test_trusted") is not True:
            moved = dict(unpacked)
            if not moved.get("smoke_test") and out.get("smoke_test"):  # unpacked by an older cuenv
                moved["smoke_test"] = out["smoke_test"]
            out["smoke_test"] = None  # never run on the archive's word
            out["unpacked_from"] = moved
    out["schema"] = SCHEMA
    return out


class _Reader:
    """Reads one JSON object, naming the first key that is damaged (never a KeyError or TypeError)."""

    __slots__ = ("data", "name", "where")

    def __init__(self, data: object, name: str | None, where: str) -> None:
        if not isinstance(data, dict):
            raise MetaDamaged(name, f"{where.rstrip('.') or 'it'} is not an object")
        self.data: dict[str, object] = data
        self.name, self.where = name, where

    def _bad(self, key: str, want: str) -> MetaDamaged:
        return MetaDamaged(self.name, f"{self.where}{key} is not {want}")

    def has(self, key: str) -> bool:
        return self.data.get(key) is not None

    def sub(self, key: str) -> _Reader:
        return _Reader(self.data.get(key), self.name, f"{self.where}{key}.")

    def text(self, key: str, default: str | None = None) -> str:
        v = self.data.get(key, default)
        if not isinstance(v, str):
            raise self._bad(key, "a string")
        return v

    def opt_text(self, key: str) -> str | None:
        v = self.data.get(key)
        if v is not None and not isinstance(v, str):
            raise self._bad(key, "a string")
        return v

    def whole(self, key: str) -> int | None:
        v = self.data.get(key)
        if v is not None and (not isinstance(v, int) or isinstance(v, bool)):
            raise self._bad(key, "a whole number")
        return v

    def flag(self, key: str) -> bool:
        v = self.data.get(key, False)
        if not isinstance(v, bool):
            raise self._bad(key, "true or false")
        return v

    def texts(self, key: str, default: Sequence[str] = ()) -> tuple[str, ...]:
        v = self.data.get(key)
        if v is None:
            return tuple(default)
        if type(v) is not list:
            raise self._bad(key, "a list of strings")
        for x in v:  # a loop, not all(...): `cuenv list` reads every environment's meta (issue 29)
            if type(x) is not str:
                raise self._bad(key, "a list of strings")
        return tuple(v)

    def text_map(self, key: str) -> dict[str, str]:
        v = self.data.get(key)
        if v is None:
            return {}
        if type(v) is not dict:
            raise self._bad(key, "an object of strings")
        for x in v.values():
            if type(x) is not str:
                raise self._bad(key, "an object of strings")
        return dict(v)

    def objects(self, key: str) -> list[_Reader]:
        v = self.data.get(key)
        if v is None:
            return []
        if not isinstance(v, list):
            raise self._bad(key, "a list")
        return [_Reader(x, self.name, f"{self.where}{key}[{i}].") for i, x in enumerate(v)]


def _smoke(r: _Reader) -> SmokeTest:
    return SmokeTest(python=r.opt_text("python"), command=r.texts("command"))


def _layout(r: _Reader) -> CudaLayout:
    from cuenv.activation.target import CudaLayout  # a plain class, imported once on first use

    home = r.opt_text("cuda_home")
    return CudaLayout(prefix=Path(r.text("prefix")), kind=r.text("kind"),
                      bin_dirs=tuple(Path(p) for p in r.texts("bin_dirs")),
                      lib_dirs=tuple(Path(p) for p in r.texts("lib_dirs")),
                      include_dirs=tuple(Path(p) for p in r.texts("include_dirs")),
                      cuda_home=Path(home) if home else None)


def _stack(r: _Reader, label: str) -> Stack:
    from cuenv.knowledge.stack import Stack

    if "cuda" not in r.data:
        raise MetaDamaged(r.name, "no stack recorded")
    return Stack(label=r.text("label", label), cuda=r.opt_text("cuda"), cudnn=r.opt_text("cudnn"), sass=r.texts("sass"),
                 ptx=r.texts("ptx"), has_nvcc=r.flag("has_nvcc"), os=r.texts("os", ("linux",)),
                 framework=r.opt_text("framework"), framework_version=r.opt_text("framework_version"),
                 variant=r.opt_text("variant"))


def _finding(r: _Reader) -> Finding:
    return Finding(code=r.text("code"), severity=r.text("severity"), message=r.text("message"), fix=r.opt_text("fix"))


def _unpacked(r: _Reader) -> UnpackedFrom:
    proven = r.data.get("proven_packages")
    if proven is not None and not (isinstance(proven, list) and len(proven) == 2
                                   and all(isinstance(x, int) and not isinstance(x, bool) for x in proven)):
        raise MetaDamaged(r.name, "unpacked_from.proven_packages is not two whole numbers")
    return UnpackedFrom(archive=r.opt_text("archive") or "", source_prefix=r.opt_text("source_prefix") or "",
                        proven_packages=None if proven is None else (proven[0], proven[1]),
                        proven_scripts=r.texts("proven_scripts"), held_back_scripts=r.texts("held_back_scripts"),
                        smoke_test=_smoke(r.sub("smoke_test")) if r.has("smoke_test") else None,
                        smoke_test_trusted=r.flag("smoke_test_trusted"))


def _parse(data: dict[str, object]) -> EnvMeta:
    name = data.get("name")
    r = _Reader(data, name if isinstance(name, str) else None, "")
    name = r.text("name")
    if not r.has("stack"):
        raise MetaDamaged(name, "no stack recorded")
    if not r.has("layout"):
        raise MetaDamaged(name, "no layout recorded")
    recipe = r.sub("recipe") if r.has("recipe") else None
    validation = r.sub("validation") if r.has("validation") else None
    tools = r.sub("tools") if r.has("tools") else None
    adopted = r.sub("adopted") if r.has("adopted") else None
    return EnvMeta(
        name=name,
        recipe=RecipeRef("?") if recipe is None else RecipeRef(recipe.text("name", "?"), recipe.opt_text("version"),
                                                                 recipe.opt_text("hash")),
        engine=r.text("engine"), engine_reason=r.text("engine_reason", ""), python=r.opt_text("python"),
        platform=r.text("platform", "linux-64"), stack=_stack(r.sub("stack"), name), resolved=r.text_map("resolved"),
        requested=r.texts("requested"), created=r.text("created", ""), cuenv_version=r.text("cuenv_version", ""),
        validation=Validation() if validation is None else Validation(
            validation.text("fingerprint", ""), tuple(_finding(f) for f in validation.objects("findings"))),
        layout=_layout(r.sub("layout")), env_vars=r.text_map("env_vars"), activate_scripts=r.texts("activate_scripts"),
        smoke_test=_smoke(r.sub("smoke_test")) if r.has("smoke_test") else None, size_bytes=r.whole("size_bytes"),
        lock_hash=r.opt_text("lock_hash"), compiler_hint=r.opt_text("compiler_hint"),
        tools=None if tools is None else {k: _tool(tools.sub(k)) for k in tools.data},
        changes=tuple(Change(c.text("verb"), c.texts("asked"), c.text("at", ""), c.texts("changes"))
                      for c in r.objects("changes")),
        adopted=None if adopted is None else Adopted(Path(adopted.text("prefix")), adopted.text("kind"),
                                                     adopted.texts("evidence"), adopted.texts("conflicts"),
                                                     adopted.text("adopted", "")),
        unpacked_from=_unpacked(r.sub("unpacked_from")) if r.has("unpacked_from") else None,
    )


def _tool(r: _Reader) -> Tool:
    source = _TOOL_SOURCES.get(r.text("source"))
    if source is None:
        raise r._bad("source", "one of " + ", ".join(_TOOL_SOURCES))
    return Tool(source=source, path=r.opt_text("path"), toolkit=r.opt_text("toolkit"))


# -- pieces other formats share -----------------------------------------------------------------------
def stack_to_json(s: Stack) -> dict[str, object]:
    return {"label": s.label, "cuda": s.cuda, "cudnn": s.cudnn, "sass": list(s.sass), "ptx": list(s.ptx),
            "has_nvcc": s.has_nvcc, "os": list(s.os), "framework": s.framework,
            "framework_version": s.framework_version, "variant": s.variant}


def layout_to_json(layout: CudaLayout) -> dict[str, object]:
    return {
        "prefix": str(layout.prefix),
        "kind": layout.kind,
        "bin_dirs": [str(p) for p in layout.bin_dirs],
        "lib_dirs": [str(p) for p in layout.lib_dirs],
        "include_dirs": [str(p) for p in layout.include_dirs],
        "cuda_home": str(layout.cuda_home) if layout.cuda_home else None,
    }


def layout_from_json(data: JSON) -> CudaLayout:
    """A layout as meta.json records it (MetaDamaged when it is not one)."""
    return _layout(_Reader(data, None, "layout."))


def now() -> str:
    import datetime as _dt  # on use (start-up, issue 29)

    return _dt.datetime.now(_dt.timezone.utc).replace(microsecond=0).isoformat()


def stack_from_meta(meta: EnvMeta) -> Stack:
    """The recorded stack, labelled with the environment's name (what its findings name)."""
    from cuenv.knowledge.stack import Stack

    s = meta.stack
    return Stack(label=meta.name, cuda=s.cuda, cudnn=s.cudnn, sass=s.sass, ptx=s.ptx, has_nvcc=s.has_nvcc, os=s.os,
                 framework=s.framework, framework_version=s.framework_version, variant=s.variant)


# -- writing -----------------------------------------------------------------------------------------------
def built_meta(*, name: str, recipe: RecipeRef, engine: str, engine_reason: str, python: str | None, platform: str,
               stack: Stack, packages: Sequence[Package], requested: Sequence[str], validation: Validation,
               layout: CudaLayout, env_vars: Mapping[str, str], smoke_test: SmokeTest | None, lock_hash: str | None,
               compiler_hint: str | None, changes: tuple[Change, ...] = ()) -> EnvMeta:
    """The meta of an environment cuenv just built (cuenv.envs.create); tools and size are added as they are known."""
    return EnvMeta(name=name, recipe=recipe, engine=engine, engine_reason=engine_reason, python=python,
                   platform=platform, stack=stack, resolved=resolved_versions(packages), requested=tuple(requested),
                   created=now(), cuenv_version=__version__, validation=validation, layout=layout,
                   env_vars=dict(env_vars), smoke_test=smoke_test, lock_hash=lock_hash, compiler_hint=compiler_hint,
                   changes=changes)


def adopted_meta(*, name: str, prefix: Path, kind: str, engine: str, python: str | None, platform: str, stack: Stack,
                 evidence: Sequence[str], conflicts: Sequence[str], packages: Sequence[Package], layout: CudaLayout,
                 lock_hash: str) -> EnvMeta:
    """The meta of an environment cuenv did not build (cuenv.envs.adopt): the same format, with an
    ``adopted`` block naming the prefix it lives in and how its stack was read."""

    return EnvMeta(
        name=name, recipe=RecipeRef("adopted"),
        adopted=Adopted(prefix=prefix, kind=kind, evidence=tuple(evidence), conflicts=tuple(conflicts), adopted=now()),
        engine=engine, engine_reason=f"adopted {kind} environment", python=python, platform=platform,
        stack=stack.replace(label=name), resolved=resolved_versions(packages), created=now(),
        cuenv_version=__version__, validation=Validation(),  # judged on first use, for the machine then
        layout=layout, lock_hash=lock_hash)


def resolved_versions(packages: Sequence[Package]) -> dict[str, str]:
    """The versions that matter, read from the solution: CUDA runtime, cuDNN, nvcc, the framework."""
    by_name = {canonical(p.name) if p.kind == "pypi" else p.name: p.version for p in packages}  # conda's names are exact
    out: dict[str, str] = {}
    for key, names in CUDA_PARTS.items():
        for n in names:
            if n in by_name:
                out[key] = by_name[n]
                break
    for n in framework_packages():
        if n in by_name:
            out["framework"] = f"{n} {by_name[n]}"
            break
    return out


# -- the smoke test: a recipe's runs, an archive's only with the user's consent (issue 31 §4) -----------
TRUST_SMOKE_FLAG: Final = "--trust-smoke-test"
