"""What a requirements file installs, as uv resolves it, and the CUDA of that set (issue 25 §6).

A file's names alone do not say what it installs: ``xgrammar`` requires torch, ``sglang[all]==0.5.2`` pins
torch 2.8.0, whose PyPI wheel is built for CUDA 12.8. :func:`resolve` asks cuenv's own uv (the venv
engine's ``uv pip compile --only-binary :all:``: nothing is built, no code from the file runs; cuenv's
mirrors and the file's validated indexes apply) for the set the file installs on Linux x86_64, and the CUDA
is read from that set as from a lockfile's packages (cuenv.lock.foreign.stack.derive).

A torch the set holds is the file's only when the file allows no other: uv is asked once more with that
release excluded, and where it still resolves, which torch (and CUDA) installs is the resolver's pick of the
day, as for an unpinned ``torch`` line; the answer is then unknown, never a guess.

The same resolution answers an environment.yml's question (:func:`pip_over_conda`): whether the ``pip:`` layer,
which conda installs with ``pip install -U``, keeps the torch of the conda layer or installs its own over it.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from cuenv.engines.base import Package
from cuenv.knowledge.stack import Stack
from cuenv.recipes.pipreqs import RequirementsFile

PLATFORM = "linux-64"  # what `cuenv check FILE` reads a project for
UV_PLATFORM = "x86_64-manylinux_2_28"
# uv's words for "no answer without a build" and "no answer offline": not that no set satisfies the file
_NEEDS_BUILD = ("no usable wheels", "building from source", "source distribution")
_NO_ANSWER = (*_NEEDS_BUILD, "network was disabled", "not found in the cache")


@dataclass(frozen=True)
class Resolution:
    """The set uv resolved (``packages``), or why it could not (``failure``, uv's words), and the command
    that shows the user the same answer."""

    packages: tuple[Package, ...] | None
    failure: str
    command: str
    # uv answered that no set satisfies the file, not that it could not ask (offline, a cache without it), nor that
    # only a build would tell (a package with no wheel for the target: pip would build it, and might find a set)
    unsatisfiable: bool = False
    # uv's reason is a package with no wheel for the target: only a build would tell (pip would build it)
    needs_build: bool = False


@dataclass(frozen=True)
class Reading:
    """The CUDA of a resolved set: ``stack``, how it was read, and whether the file decides it (``pinned``:
    False when another release of the framework that sets it would resolve too)."""

    stack: Stack
    how: str
    pinned: bool


def command(file: str, python: str) -> str:
    """The uv command that shows what ``file`` installs, as cuenv resolves it (it builds nothing)."""
    return f"uv pip compile {file} --python-version {python} --python-platform {UV_PLATFORM} --only-binary :all:"


def resolve(doc: RequirementsFile, *, file: str, python: str, environ: Mapping[str, str], settings: Any,
            constraints: tuple[str, ...] = ()) -> Resolution:
    """The packages ``doc`` installs with ``python`` on Linux x86_64, through cuenv's uv and mirrors."""
    from cuenv.engines import Request
    from cuenv.engines.base import Unsatisfiable
    from cuenv.engines.venv import VenvEngine
    from cuenv.errors import CuenvError

    o = doc.options
    request = Request(engine="venv", python=python, platform=PLATFORM, requirements=doc.requirement_texts(),
                      index_urls=o.index_urls, find_links=o.find_links, prerelease=o.pre,
                      constraints=(*(c.text for c in doc.constraints), *constraints))
    shown = command(file, python)
    try:
        packages = VenvEngine(environ, mirrors=settings.mirrors).resolve_wheels(request, python=python, glibc="2.28",
                                                                               cache_dir=settings.cache_dir)
    except CuenvError as exc:
        said = str(exc)
        unanswered = any(words in said for words in _NO_ANSWER)
        return Resolution(None, _first_cause(said), shown, isinstance(exc, Unsatisfiable) and not unanswered,
                          needs_build=any(words in said for words in _NEEDS_BUILD))
    return Resolution(tuple(packages), "", shown)


def read(resolution: Resolution, doc: RequirementsFile, *, file: str, python: str, environ: Mapping[str, str],
         settings: Any) -> Reading:
    """The CUDA of a resolved set, and whether the file pins the torch that sets it."""
    from cuenv.lock.foreign.stack import derive

    assert resolution.packages is not None
    derived = derive(resolution.packages, platform=PLATFORM, label=file)
    count = len(resolution.packages)
    how = f"`{resolution.command}` installs {count} package{'' if count == 1 else 's'}: {derived.evidence[0]}"
    torch = next((p for p in resolution.packages if p.name.lower() == "torch"), None)
    if derived.stack.cuda is None or torch is None:
        return Reading(derived.stack, how, True)
    other = resolve(doc, file=file, python=python, environ=environ, settings=settings,
                    constraints=(f"torch!={torch.version}",))
    # uv refuses any other torch: the file's pins decide it; any other answer (another torch, or no answer) does not
    pinned = other.packages is None and other.unsatisfiable
    return Reading(derived.stack, how, pinned)


def conda_torch(version: str | None, cuda: str) -> str | None:
    """The torch release conda installs for ``pytorch`` at ``version`` (rattler's reading of the spec) beside
    CUDA ``cuda``, as a PEP 440 specifier: the pinned release, else the newest in the range that cuenv's tables
    list for that CUDA (conda takes the newest); None where neither says."""
    import re

    from packaging.specifiers import InvalidSpecifier, SpecifierSet

    from cuenv.knowledge import matrix

    if version is None:
        return None
    exact = re.fullmatch(r"==?(\d+(?:\.\d+)*)|(\d+(?:\.\d+)*)\.\*", version)
    if exact:
        return f"=={exact.group(1)}" if exact.group(1) else f"=={exact.group(2)}.*"
    try:
        allowed = SpecifierSet(version)
    except InvalidSpecifier:  # conda's own forms (1.12|1.13): not a range PEP 440 writes
        return None
    variant = "cu" + cuda.replace(".", "")
    built = [r for r in matrix.torch_releases() if variant in matrix.torch_variants(r) and allowed.contains(f"{r}.0")]
    return f"=={built[-1]}.*" if built else None


def pip_over_conda(pip: RequirementsFile, conda: str, *, pinned: str | None, provided: frozenset[str], file: str,
                   python: str, environ: Mapping[str, str], settings: Any) -> str | None:
    """Why pip may install its own torch over conda's ``conda`` (``pytorch=1.12.1``, as written), or None where
    it keeps it. ``pinned``: the release conda installs (:func:`conda_torch`), None if unknown; ``provided``:
    the names conda's layer installs (torchvision beside pytorch), which pip keeps where they fit.

    conda runs ``pip install -U -r`` on the layer (conda.env.installers.pip): pip takes the newest release of
    each package, and keeps an installed torch only where every package it picks accepts it. uv's set for the
    layer answers it: without a torch, or resolvable still with each package the layer names held at its newest
    (conda's own left to fit) and torch at conda's release, conda's torch stays; else pip installs a PyPI torch
    over it (or may: which, is pip's order)."""
    from cuenv.knowledge.packages import canonical

    first = resolve(pip, file=file, python=python, environ=environ, settings=settings)
    if first.packages is None:
        fix = ("only building the layer's source-only packages would tell, and cuenv builds nothing to read a file"
               if first.needs_build and not environ.get("UV_OFFLINE") else
               f"`cuenv check {file}` with the package index reachable resolves it")
        return f"whether pip keeps conda's {conda} is unknown: its pip layer was not resolved ({first.failure}); {fix}"
    torch = next((p for p in first.packages if canonical(p.name) == "torch"), None)
    if torch is None:
        return None
    named = any(canonical(r.name) == "torch" for r in pip.requirements)
    uv_says = ""
    if pinned is not None and not named:
        named_here = {canonical(r.name) for r in pip.requirements} - provided  # -U: the newest of each one named
        held = (*(f"{p.name}=={p.version}" for p in first.packages if canonical(p.name) in named_here),
                f"torch{pinned}")
        kept = resolve(pip, file=file, python=python, environ=environ, settings=settings, constraints=held)
        if kept.packages is not None:
            return None
        if not kept.unsatisfiable:  # no answer (no wheel of that torch for this Python): not a "no"
            return (f"whether pip keeps conda's {conda} is unknown: uv could not try the layer with torch{pinned} "
                    f"({kept.failure}); pin torch in the pip layer to conda's release, so that pip keeps it")
        uv_says = f", and with torch{pinned} held: {_first_reason(kept.failure)}"
    why = ("the pip layer names torch, and pip -U installs its newest" if named else
           f"the releases pip picks for the pip layer need another torch than conda's {conda}" if pinned else
           f"the pip layer needs torch, and cuenv cannot tell which release conda's {conda} installs")
    return (f"pip may install torch {torch.version} over conda's {conda}: {why} (uv resolves the layer with torch "
            f"{torch.version}{uv_says}); pin the pip layer's packages to releases that accept conda's torch")


def _first_reason(failure: str) -> str:
    """The first sentence of uv's derivation (_first_cause's text), which names the package whose release
    rules torch out; no "; " (a finding's text is "what; fix") and no closing period."""
    return failure.removeprefix("cause: ").split(". ", 1)[0].rstrip(".").replace("; ", ", ")


def _first_cause(message: str) -> str:
    """uv's reason in a sentence or two: its cause and hint lines, without cuenv's heading for a failed solve."""
    lines = [ln.strip() for ln in message.splitlines() if ln.strip() and not ln.startswith("The requested packages")]
    text = " ".join(lines[:3])
    return text if len(text) <= 300 else text[:300].rsplit(" ", 1)[0] + " ..."


__all__ = ["PLATFORM", "Reading", "Resolution", "command", "conda_torch", "pip_over_conda", "read", "resolve"]
