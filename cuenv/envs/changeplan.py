"""A planned change of an environment's packages, and the facts every engine's planner shares (issue 26 §1):
what a change asks, what it would install and remove, which packages are held, and which installed
Python packages need another. Pure data and file reading: cuenv.envs.change plans venvs and applies every
plan, cuenv.envs.condachange plans conda prefixes, and both build on this.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Iterator, Mapping, Sequence

from cuenv.errors import CuenvError, UsageError
from cuenv.knowledge.packages import canonical
from cuenv.plain import Plain

if TYPE_CHECKING:
    from cuenv.envs.meta import EnvMeta


class ChangeRefused(CuenvError):
    """A change that would break the environment's CUDA contract: refused before any download."""


class Guess:
    """A plan made from uv's cache while the index is still asked (cuenv.envs.change.plan's ``predict``)."""

    __slots__ = ("_same", "_cancel")

    def __init__(self, same: Callable[[], bool], cancel: Callable[[], None]) -> None:
        self._same, self._cancel = same, cancel

    def confirmed(self) -> bool:
        """Waits for the index: whether it gave exactly the wheels uv's cache did (False on its error too)."""
        return self._same()

    def cancel(self) -> None:
        """Stop asking the index (nothing to do once it answered)."""
        self._cancel()


class ChangePlan(Plain):
    __slots__ = ("name", "verb", "asked", "before", "install", "uninstall", "already", "findings", "guess", "recorded",
                 "elsewhere")

    def __init__(self, name: str, verb: str, asked: tuple[str, ...], before: tuple[Any, ...], install: tuple[Any, ...] = (),
                 uninstall: tuple[str, ...] = (), already: tuple[str, ...] = (), findings: tuple[Any, ...] = (),
                 guess: Guess | None = None, recorded: tuple[str, ...] = (), elsewhere: tuple[str, ...] = ()) -> None:
        self.name, self.verb, self.asked = name, verb, asked
        self.before = before  # cuenv.engines.Package: the environment's packages now
        self.install = install  # exact artifacts to install (new, or replacing one of the same name)
        self.uninstall = uninstall  # names to remove
        self.already = already  # names asked for, already satisfied; requirement texts already recorded elsewhere
        self.findings = findings  # warnings the change goes on with
        self.guess = guess  # where ``install`` is uv's cached answer while the index is still asked; None: the index's
        self.recorded = recorded  # installed outside cuenv (pip), recorded before this change was planned on top
        self.elsewhere = elsewhere  # added requirements whose marker leaves them out here: recorded for a lock's other platforms

    @property
    def after(self) -> tuple[Any, ...]:
        gone = set(self.uninstall) | {p.name for p in self.install}
        return tuple(sorted([p for p in self.before if p.name not in gone] + list(self.install), key=lambda p: p.name))

    @property
    def empty(self) -> bool:
        return not (self.install or self.uninstall or self.elsewhere)

    def lines(self) -> list[str]:
        old = {p.name: p for p in self.before}
        out = []
        for pkg in self.install:
            prev = old.get(pkg.name)
            out.append(f"~ {pkg.name} {prev.version} -> {pkg.version}" if prev else f"+ {pkg.name} {pkg.version}")
        out += [f"- {n} {old[n].version}" for n in self.uninstall if n in old]
        out += [f"- {t} (not for this platform: dropped from the lock's others)" if self.verb == "remove" else
                f"+ {t} (not for this platform: recorded for the lock's others)" for t in self.elsewhere]
        return out

    def to_json(self) -> dict[str, Any]:
        return {"name": self.name, "verb": self.verb, "asked": list(self.asked),
                "install": [p.to_json() for p in self.install], "uninstall": list(self.uninstall),
                "already": list(self.already), "elsewhere": list(self.elsewhere), "recorded": list(self.recorded),
                "changes": self.lines()}


def requirement_name(text: str) -> str:
    """The project a requirement names (``numpy>=2`` -> ``numpy``); a bad one is refused in one line."""
    from cuenv.trust import requirements as trusted

    problem = trusted.requirement_problem(text)
    if problem:
        raise UsageError(f"{text[:80]!r} is not a package requirement ({problem}).",
                         hint="Write it as pip does, e.g. `numpy` or `numpy>=2,<3`.")
    bare = trusted.bare_name(text.strip())
    if bare is not None:
        return canonical(bare)
    from packaging.requirements import InvalidRequirement, Requirement

    try:
        return canonical(Requirement(text).name)
    except InvalidRequirement as exc:
        raise UsageError(f"{text[:80]!r} is not a package requirement ({exc}).",
                         hint="Write it as pip does, e.g. `numpy` or `numpy>=2,<3`.") from None


def satisfied(text: str, version: str) -> bool:
    """Whether an installed ``version`` meets requirement ``text`` (prereleases count); a bare name asks no parser."""
    from cuenv.trust.requirements import bare_name

    if bare_name(text.strip()) is not None:
        return True
    from packaging.requirements import Requirement

    return Requirement(text).specifier.contains(version, prereleases=True)


def held(meta: EnvMeta, before: Sequence[Any]) -> dict[str, str]:
    """The packages a change may not move or remove, with why: the CUDA runtime, cuDNN, nvcc and the
    framework that the environment was checked and recorded for (of its CUDA major: one of another, put
    there by pip, is no part of it)."""
    from cuenv.knowledge.packages import cuda_package_names, framework_packages, nvidia_major

    major = int(str(meta.cuda).split(".")[0]) if meta.cuda else None

    def own(p: Any) -> bool:
        found = cuda_of(p) or ((nvidia_major(p.name), None) if p.kind == "pypi" else None)
        return major is None or found is None or found[0] in (None, major)

    out: dict[str, str] = {}
    for part, why in (("libcudart", "CUDA runtime"), ("cudnn", "cuDNN"), ("nvcc", "nvcc")):
        out.update({p.name: f"the environment's {why}" for p in before if p.name in cuda_package_names(part) and own(p)})
    names = {p.name for p in before}
    out.update({n: "the environment's framework build" for n in framework_packages() if n in names})
    return out


def cuda_of(pkg: Any) -> tuple[int, str | None] | None:
    """(CUDA major, its X.Y release where the package names one) of a CUDA package, None for any other:
    NVIDIA's wheels (nvidia-*-cuNN, versions of nvidia-cuda-*), conda's cuda-* packages and cudatoolkit."""
    from cuenv.engines.venv import cuda_major_of

    parts = pkg.version.split(".")
    release = f"{parts[0]}.{parts[1]}" if len(parts) > 1 and parts[0].isdigit() and parts[1].isdigit() else None
    if pkg.kind == "conda":
        if not (pkg.name == "cudatoolkit" or pkg.name.startswith("cuda-")) or not parts[0].isdigit():
            return None
        return int(parts[0]), release
    major = cuda_major_of(pkg.name, pkg.version)
    if major is None:
        return None
    return major, release if pkg.name.startswith("nvidia-cuda-") else None



def dependants(prefix: Path, names: set[str]) -> dict[str, set[str]]:
    """{name: installed packages (outside ``names``) whose requirements name it}."""
    out: dict[str, set[str]] = {}
    for own, needed in _requirements(prefix):
        if own not in names and needed in names:
            out.setdefault(needed, set()).add(own)
    return out


def required(prefix: Path) -> set[str]:
    """Every package that an installed package's requirements name: what is left is installed for its own sake."""
    return {needed for _, needed in _requirements(prefix)}


def applies_here(text: str, prefix: Path) -> bool:
    """Whether requirement ``text`` applies to the environment at ``prefix`` (its marker, judged as
    :func:`_requirements` judges them; an unreadable one applies)."""
    from packaging.requirements import InvalidRequirement, Requirement

    try:
        marker = Requirement(text).marker
        return marker is None or bool(marker.evaluate(_marker_env(prefix)))
    except (InvalidRequirement, Exception):  # noqa: BLE001 - a marker on a variable we do not set: it applies
        return True


def python_of(prefix: Path) -> str | None:
    """The environment's Python, major.minor, read from its site-packages folder's name; None without one."""
    from cuenv.engines.venv import site_packages

    site = site_packages(prefix)
    return site.parent.name.removeprefix("python") if site is not None else None


def _marker_env(prefix: Path) -> dict[str, str]:
    """The marker variables of the environment's interpreter that differ from this process's: its Python,
    and no extras."""
    py = python_of(prefix)
    return {"python_version": py, "python_full_version": py + ".0", "extra": ""} if py else {"extra": ""}


def _requirements(prefix: Path) -> Iterator[tuple[str, str]]:
    """(installed package, a package its requirements name), canonical, markers judged for the environment's
    interpreter with no extras."""
    from packaging.requirements import InvalidRequirement, Requirement

    from cuenv.engines.venv import site_packages

    site = site_packages(prefix)
    if site is None:
        return
    env = _marker_env(prefix)
    for dist in site.glob("*.dist-info"):
        try:
            text = (dist / "METADATA").read_text(encoding="utf-8", errors="replace")
        except OSError:
            continue
        head = text.split("\n\n", 1)[0]
        own = canonical(next((ln.split(":", 1)[1].strip() for ln in head.splitlines() if ln.lower().startswith("name:")),
                             dist.name.split("-")[0]))
        for line in head.splitlines():
            if not line.lower().startswith("requires-dist:"):
                continue
            try:
                req = Requirement(line.split(":", 1)[1].strip())
            except InvalidRequirement:
                continue
            try:
                if req.marker is not None and not req.marker.evaluate(env):
                    continue
            except Exception:  # noqa: BLE001 - a marker on a variable we do not set: count the requirement
                pass
            yield own, canonical(req.name)


def removal(name: str, names: Sequence[str], before: tuple[Any, ...], hold: Mapping[str, str],
            needed: Mapping[str, set[str]], *, flag: str = "") -> ChangePlan:
    """The plan that removes ``names`` from environment ``name``, refused when one is held (``hold``: name ->
    why) or another installed package still needs it (``needed``: name -> those); ``flag`` (" --pypi") goes
    into the command the refusal names."""
    for n in names:
        if n in hold:
            raise ChangeRefused(f"{n} is {hold[n]}: removing it would break what {name!r} was checked for.",
                                hint=f"Remove the whole environment with `cuenv remove {name}`, or keep it.")
    if needed:
        listed = "; ".join(f"{n} is needed by {', '.join(sorted(by))}" for n, by in sorted(needed.items()))
        together = " ".join(sorted(set(names) | {b for by in needed.values() for b in by}))
        raise ChangeRefused(f"Removing it would break installed packages: {listed}.",
                            hint=f"Remove them together: `cuenv uninstall -n {name}{flag} {together}`.")
    return ChangePlan(name, "remove", tuple(names), before, uninstall=tuple(names))
