"""A project's own file -> the CUDA stack it needs (issue 15 §3-4): the one question `cuenv check FILE`,
`cuenv suggest --for FILE` and `cuenv create -f/-r` all ask first.

:func:`kind_of` tells the kinds apart by file name (or ``kind=`` when the name says nothing);
:data:`READERS` maps each kind to a reader returning a :class:`ProjectNeed`. Lockfile kinds are named in
``KINDS`` so that a lockfile is never misread as an environment file; cuenv.lock.check reads them.
"""

from __future__ import annotations

import re
import sys
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

from cuenv.errors import UsageError
from cuenv.knowledge.findings import Finding
from cuenv.knowledge.stack import Stack
from cuenv.recipes.pipreqs import PYPI, RequirementsFile, Unsupported

if TYPE_CHECKING:
    from cuenv.recipes.cudainfer import Evidence

# Finding codes a project file adds to `cuenv check` (docs/reference/findings.md): a verdict with one is "unknown".
CODES: Final = ("build-unknown",)

# (kind, file-name pattern), tried in order; the lockfile kinds are named here so that a file of one is
# never mistaken for an environment.yml or a requirements file.
KINDS: Final[tuple[tuple[str, str], ...]] = (
    ("conda-lock", r"(^|\.)conda-lock\.ya?ml$"),
    ("pixi-lock", r"^pixi\.lock$"),
    ("pylock", r"^pylock(\.[^.]+)?\.toml$"),
    ("uv-lock", r"^uv\.lock$"),
    ("environment-yml", r"\.ya?ml$"),
    ("requirements", r"(\.txt|\.in|^requirements[^/]*)$"),
)


@dataclass(frozen=True)
class ProjectNeed:
    """What a project file asks of a machine, and how cuenv read it."""

    file: str
    kind: str  # one of KINDS
    stack: Stack  # the hardware contract (cuda None: CPU-only)
    how: str  # how the CUDA was found, for the user
    engine_family: str  # conda | venv: which engines can build it
    mixed: bool = False  # conda packages plus a pip layer
    evidence: tuple[Evidence, ...] = ()
    notes: tuple[str, ...] = ()
    unsupported: tuple[Unsupported, ...] = ()
    undetermined: tuple[Evidence, ...] = ()  # GPU packages whose CUDA the resolver would pick
    document: Any = None  # the parsed file (EnvironmentFile, RequirementsFile, ...)
    unconfirmed: tuple[str, ...] = ()  # framework/CUDA pairings cuenv cannot confirm, each with where to ask

    def findings(self) -> list[Finding]:
        """What the file itself adds to the machine check: each pairing cuenv cannot confirm makes the
        verdict "unknown" (``build-unknown``), never "runs"."""
        return [Finding("build-unknown", "warning", text.split("; ", 1)[0] + ".", fix=text.split("; ", 1)[-1].rstrip("."))
                for text in self.unconfirmed]

    def require_cuda(self) -> None:
        """Refuse a project whose CUDA cannot be told (an unpinned torch), rather than call it CPU-only."""
        if self.stack.cuda is None and self.undetermined:
            e = self.undetermined[0]
            example = "cuda-version=12.1 or pytorch-cuda=12.1" if self.kind == "environment-yml" else "torch==2.5.1+cu121"
            hint = ("Pass the CUDA it was built for with --cuda (e.g. --cuda 12.1)." if e.uncovered
                    else f"Pin a CUDA build in the file (e.g. {example}), or pass --cuda (e.g. --cuda 12.1).")
            raise UsageError(f"{e.where}: {e.pin}: {e.says}, and no other pin says which CUDA it brings.", hint=hint)

    def describe(self, closest: Stack | None = None) -> list[str]:
        """What the file needs and how cuenv read it, as indented lines (`check FILE`, `suggest --for`)."""
        s = self.stack
        parts = [f"CUDA {s.cuda}" if s.cuda else "no CUDA"]
        if s.cudnn:
            parts.append(f"cuDNN {'.'.join(s.cudnn.split('.')[:2])}")
        if s.framework:
            parts.append(f"{s.framework} {s.framework_version or ''}".strip())
        if s.has_nvcc:
            parts.append("nvcc")
        built = "conda packages and a pip layer" if self.mixed else (
            "conda packages" if self.engine_family == "conda" else "PyPI wheels (venv)")
        lines = [f"  needs: {', '.join(parts)}; built from {built}", f"  how: {self.how}"]
        if closest is not None:
            lines.append(f"  closest recipe: {closest.label} (`cuenv create {closest.label}`)")
        lines += [f"  note: {n}" for n in self.notes]
        lines += [f"  cannot install: {u}" for u in self.unsupported]
        return lines

    def to_json(self) -> dict[str, Any]:
        s = self.stack
        return {
            "file": self.file, "kind": self.kind, "engine_family": self.engine_family, "mixed": self.mixed,
            "cuda": s.cuda, "cudnn": s.cudnn, "has_nvcc": s.has_nvcc, "framework": s.framework,
            "framework_version": s.framework_version, "how": self.how,
            "evidence": [str(e) for e in self.evidence], "notes": list(self.notes),
            "unsupported": [str(u) for u in self.unsupported], "unconfirmed": list(self.unconfirmed),
        }


def kind_of(path: Path, kind: str | None = None) -> str:
    if kind is not None:
        if kind not in dict(KINDS):
            raise UsageError(f"Unknown file kind {kind!r}.", hint=f"Use one of: {', '.join(k for k, _ in KINDS)}.")
        return kind
    for name, pattern in KINDS:
        if re.search(pattern, path.name):
            return name
    raise UsageError(f"cuenv cannot tell what kind of file {path.name} is.",
                     hint="Name it environment.yml or requirements*.txt (or a lockfile: conda-lock.yml, pixi.lock, "
                     "pylock.toml, uv.lock; or a uv or pixi project: pyproject.toml, pixi.toml).")


def read_need(path: Path, *, cuda: str | None = None, kind: str | None = None,
              environ: Mapping[str, str] | None = None, settings: Any = None, as_conda: bool = True) -> ProjectNeed:
    """The need of ``path``; ``cuda`` (--cuda) overrides what the pins say within their CUDA major.
    With ``environ`` and ``settings`` (mirrors, cache), a requirements file whose names leave the CUDA open
    is resolved with uv (cuenv.recipes.resolved); without them it is read by its names alone. ``as_conda``:
    an environment.yml's pip layer as conda installs it (`pip install -U` over conda's torch: `check`); cuenv's
    own create installs it against the conda packages, which keeps them."""
    if _is_lockfile(path):  # by its content: an @EXPLICIT list named *.txt, a pixi.lock renamed
        raise UsageError(f"{path} is a lockfile, not an environment.yml or requirements file.",
                         hint=f"Install it exactly with `cuenv create --from-lock {path}`; `cuenv check {path}` "
                         "shows the stack it needs.")
    from cuenv.lock.io import refuse_poetry_only

    refuse_poetry_only(path)
    found = kind_of(path, kind)
    reader = READERS.get(found)
    if reader is None:  # named like a lockfile, but not one by its content
        raise UsageError(f"{path} is named like a {found} lockfile, not an environment.yml or requirements file.",
                         hint=f"`cuenv check {path}` reads a lockfile and says what is wrong with it.")
    if settings is None:
        return reader(path, cuda)
    if found == "environment-yml":
        return _environment_yml(path, cuda, environ or {}, settings if as_conda else None)
    return reader(path, cuda, environ or {}, settings)


def _is_lockfile(path: Path) -> bool:
    from cuenv.lock.io import is_lockfile

    return is_lockfile(str(path))


def python_of(doc: object) -> str:
    """The Python a file asks for (``python=3.9``, ``python>=3.10,<3.12``: the lowest it allows), else
    this interpreter's: markers are evaluated for it."""
    from cuenv.recipes.envyml import EnvironmentFile

    if isinstance(doc, EnvironmentFile):
        spec = doc.spec("python")
        match = re.search(r"(3\.\d{1,2})", spec.version or "") if spec else None
        if match:
            return match.group(1)
    return f"{sys.version_info.major}.{sys.version_info.minor}"


def _environment_yml(path: Path, cuda: str | None, environ: Mapping[str, str] | None = None,
                     settings: Any = None) -> ProjectNeed:
    from cuenv.recipes import cudainfer, envyml

    doc = envyml.parse_file(path)
    _refuse_a_windows_export(doc)
    python = python_of(doc)
    inference = cudainfer.infer(doc, file=str(path), python=python, cuda_flag=cuda)
    family = "venv" if doc.kind == "pip" else "conda"
    unsupported = _cannot_install(doc.pip) if doc.pip else ()
    stack = inference.stack(str(path))
    unconfirmed = inference.unconfirmed + _requires_unknown(doc.pip, stack, inference.undetermined)
    if settings is not None and cuda is None:
        unconfirmed += _pip_over_conda(doc, inference, path, python, environ or {}, settings)
    return ProjectNeed(file=str(path), kind="environment-yml", stack=stack, how=inference.how,
                       engine_family=family, mixed=doc.kind == "mixed", evidence=inference.evidence,
                       notes=_notes(doc.notes + inference.notes, unsupported), unsupported=unsupported,
                       undetermined=inference.undetermined, document=doc, unconfirmed=unconfirmed)


def _pip_over_conda(doc: Any, inference: Any, path: Path, python: str, environ: Mapping[str, str],
                    settings: Any) -> tuple[str, ...]:
    """Where conda's pytorch decides the CUDA and a pip layer follows it: whether pip keeps that torch
    (cuenv.recipes.resolved.pip_over_conda); when it may not, the reading is unconfirmed (verdict unknown).
    A torch pinned in the pip layer already decides (cudainfer: the pip layer wins)."""
    from cuenv.knowledge.packages import canonical
    from cuenv.recipes import resolved

    spec = doc.spec("pytorch")
    from_pip = doc.pip is not None and any(r.name == "torch" and r.exact_version() for r in doc.pip.requirements)
    if doc.kind != "mixed" or spec is None or inference.cuda is None or from_pip:
        return ()
    # the lines cuenv cannot install (VCS checkouts, source archives: `check` lists them) only a build would describe
    layer = doc.pip.without(u.where for u in _cannot_install(doc.pip))
    if not layer.requirements:
        return ()
    pinned = resolved.conda_torch(spec.version, inference.cuda)
    provided = frozenset({"torch", *(canonical(s.name) for s in doc.specs)})  # conda's pytorch is PyPI's torch
    why = resolved.pip_over_conda(layer, spec.text, pinned=pinned, provided=provided, file=str(path), python=python,
                                  environ=environ, settings=settings)
    return () if why is None else (f"{layer.requirements[0].where}: {why}",)


def _refuse_a_windows_export(doc: Any) -> None:
    """A `conda env export` made on Windows: its ``prefix:`` with that machine's builds, or (``--no-builds`` too) a
    package conda publishes for Windows only (vc, ucrt, pywin32): conda on linux-64 finds a build only where the
    channels publish it for linux-64 or noarch."""
    from cuenv.knowledge.packages import CONDA_WINDOWS_ONLY
    from cuenv.recipes.pipreqs import RequestFileError

    built = [s for s in doc.specs if s.build and not any(c in s.build for c in "*?")]
    if doc.windows_prefix is not None and built:
        # the example: a build that is not a noarch Python one (pyh..., py_0), which Linux would have too
        shown = next((s for s in built if not re.match(r"^(pyh|py_\d)", s.build or "")), built[0])
        raise RequestFileError(doc.windows_prefix, "prefix", "says `conda env export` made this file on Windows, and it "
                               f"pins that machine's builds (e.g. {shown.text}): conda on Linux finds only the builds "
                               "its channels publish for linux-64 or noarch.",
                               hint="Export it again without the builds: `conda env export --no-builds` (or "
                               "`--from-history`) on the Windows machine.")
    windows = next((s for s in doc.specs if s.name in CONDA_WINDOWS_ONLY), None)
    if windows is not None:  # held-out-17: --no-builds exports, and DeepSTORM3D's, have no Windows prefix to tell
        raise RequestFileError(windows.where, windows.text, f"{windows.name} is a conda package published for Windows "
                               "only, so this file was exported on Windows: conda on Linux finds no such package.",
                               hint="On the Windows machine, export what was asked for: `conda env export "
                               "--from-history`; or take the Windows-only lines out.")


def _requirements(path: Path, cuda: str | None, environ: Mapping[str, str] | None = None,
                  settings: Any = None) -> ProjectNeed:
    from cuenv.recipes import cudainfer, pipreqs

    doc = pipreqs.parse_file(path)
    python = python_of(doc)
    inference = cudainfer.infer(doc, file=str(path), python=python, cuda_flag=cuda)
    stack, how, undetermined = inference.stack(str(path)), inference.how, inference.undetermined
    if inference.cuda is None and cuda is None and settings is not None:
        stack, how, undetermined = _resolved(doc, path, python, environ or {}, settings, (stack, how, undetermined))
    unsupported = _cannot_install(doc)
    return ProjectNeed(file=str(path), kind="requirements", stack=stack, how=how,
                       engine_family="venv", evidence=inference.evidence,
                       notes=_notes(doc.notes + inference.notes, unsupported),
                       unsupported=unsupported, undetermined=undetermined, document=doc,
                       unconfirmed=inference.unconfirmed + _requires_unknown(doc, stack, undetermined))


_Read = tuple[Stack, str, tuple[Any, ...]]  # (stack, how, undetermined Evidence)


def _resolved(doc: Any, path: Path, python: str, environ: Mapping[str, str], settings: Any, by_names: _Read) -> _Read:
    """A file whose names leave the CUDA open: the set uv resolves it to decides, or the answer stays unknown.
    Unresolved (offline, an index unreachable, a package only a build would describe), the names' reading
    stands, each unknown line saying what was not resolved and the command that answers it; a name that only
    may pull in a CUDA framework (cudainfer's fallback list) never decides, it only makes the answer unknown."""
    from dataclasses import replace

    from cuenv.recipes import cudainfer, resolved
    from cuenv.recipes.pipreqs import Where

    resolution = resolved.resolve(doc, file=str(path), python=python, environ=environ, settings=settings)
    stack, how, undetermined = by_names
    if resolution.packages is None:
        unresolved = f"; uv did not resolve the file ({resolution.failure}); `{resolution.command}` lists what it installs"
        if resolution.needs_build and stack.cuda is None and not undetermined:
            # a package with no wheel for the target (vllm's only wheels are manylinux_2_31, held-out-15): what it
            # requires (a torch too) is unknown, so the names' "no CUDA" is no answer
            return stack, how, (cudainfer.Evidence(Where(str(path)), "uv's resolution", "needs a build ("
                                                   f"{resolution.failure}), so what that package requires is unknown "
                                                   f"(`{resolution.command}` shows it)", "unknown", uncovered=True),)
        # a GPU build cuenv's tables do not cover: what uv would resolve does not say its CUDA either
        return stack, how, tuple(e if e.uncovered else replace(e, says=e.says + unresolved) for e in undetermined)
    reading = resolved.read(resolution, doc, file=str(path), python=python, environ=environ, settings=settings)
    if reading.pinned:  # a GPU build cuenv's tables do not cover stays unknown: its version does not say its CUDA
        return reading.stack, reading.how, tuple(e for e in undetermined if e.uncovered)
    torch = next(p for p in resolution.packages if p.name.lower() == "torch")
    today = (f"uv resolves the file today to torch {torch.version} (CUDA {reading.stack.cuda}), and the file allows "
             f"other torch releases (`{resolution.command}`)")
    if undetermined:
        return stack, how, tuple(replace(e, says=f"{e.says}; {today}") for e in undetermined)
    return stack, how, (cudainfer.Evidence(Where(str(path)), f"torch {torch.version}", f"a torch the file does not pin: {today}",
                                           "unknown"),)


def _cannot_install(pip: RequirementsFile) -> tuple[Unsupported, ...]:
    """What `create` would refuse, said by `check` too: the lines the parser could not take, then those that
    parse but that cuenv's wheel-only, hash-locked installs cannot honour (VCS checkouts, source archives)."""
    out = list(pip.unsupported)
    for req in _built_from_source(pip):
        what = "a VCS checkout" if req.vcs else "a source archive"
        out.append(Unsupported(req.where, req.text, f"is {what}, built from source when installed; cuenv installs "
                               "only wheels, each locked by URL and sha256.",
                               "Pin a released version (NAME==VERSION) or a wheel's URL instead."))
    out += _local_versions_on_pypi(pip)
    files: dict[str, int] = {}
    for u in out:
        files.setdefault(u.where.file, len(files))
    return tuple(sorted(out, key=lambda u: (files[u.where.file], u.where.line or 0)))  # in file order


def _local_versions_on_pypi(pip: RequirementsFile) -> list[Unsupported]:
    """Pins of a local version (``torch==2.6.0+cu118``, ``torch-scatter==2.1.1+pt20cu117``) in a file whose only index
    is PyPI: PyPI accepts no local versions (PEP 440: they are not for public index servers, and PyPI refuses their
    upload), so pip and uv find no such file (held-out-15: protein-frame-flow's torch-scatter). The torch family's
    name the PyTorch index of their variant."""
    from cuenv.knowledge import matrix
    from cuenv.knowledge.packages import PYPI_TORCH_FAMILY

    options = pip.options
    if options.no_index or options.find_links or options.index_urls != (PYPI,):
        return []
    out = []
    for req in pip.requirements:
        version = req.exact_version() if not req.url else None
        local = (version or "").partition("+")[2]
        if not local:
            continue
        served = (matrix.pytorch_index(local)
                  if req.name in PYPI_TORCH_FAMILY and re.fullmatch(r"cu\d{3}|cpu", local) else None)
        out.append(Unsupported(req.where, req.text, f"pins the local version +{local}, and PyPI, the only index the file "
                               "names, serves no local versions: pip and uv find no such file.",
                               f"Name the index that serves it (`--extra-index-url {served}` on a line of its own)."
                               if served else "Name the index or the page (--find-links) that serves it."))
    return out


def _built_from_source(pip: RequirementsFile) -> list[Any]:
    """The requirements pip builds from source: VCS checkouts and source archives (a URL that is no wheel)."""
    return [r for r in pip.requirements
            if r.vcs or (r.url and not r.url.split("#", 1)[0].split("?", 1)[0].endswith(".whl"))]


def _requires_unknown(pip: RequirementsFile | None, stack: Stack, undetermined: tuple[Any, ...]) -> tuple[str, ...]:
    """Where the names say no CUDA, the packages built from source still may install a CUDA framework: what they
    require is known only once built (held-out-15: evodiff's git OmegaFold requires torch), so the reading is
    unconfirmed (verdict unknown), never "CPU-only"."""
    if pip is None or stack.cuda is not None or undetermined:
        return ()
    return tuple(f"{r.where}: {r.text} is built from source, so what it requires (a CUDA framework too) is known only "
                 "once it is built; read its own requirements (the pyproject.toml or setup.py it is built from), and where "
                 "they name torch, pin a CUDA build of it in the file or pass --cuda"
                 for r in _built_from_source(pip))


def _notes(notes: tuple[str, ...], unsupported: tuple[Unsupported, ...]) -> tuple[str, ...]:
    """The notes, less those on a line that cannot be installed anyway (its refusal says what matters)."""
    lines = tuple(f"{u.where}: " for u in unsupported)
    return tuple(n for n in notes if not n.startswith(lines)) if lines else notes


READERS: Final[dict[str, Callable[..., ProjectNeed]]] = {  # (path, cuda[, environ, settings])
    "environment-yml": _environment_yml,
    "requirements": _requirements,
}


# -- frameworks ------------------------------------------------------------------------------------

def framework_family(name: str | None) -> str | None:
    """ "paddlepaddle-gpu" -> "paddle", "pytorch" -> "torch": recipes and builds name frameworks differently."""
    from cuenv.knowledge.packages import family

    return (family(name) or name) if name else None


__all__ = ["CODES", "KINDS", "READERS", "ProjectNeed", "framework_family", "kind_of", "python_of", "read_need"]
