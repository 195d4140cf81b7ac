"""Changing an environment in place: add, remove and upgrade packages (issue 26 §1).

Every change is planned before anything is downloaded or installed:

1. the environment's packages as they are (``engine.installed``), its pins held: every installed
   package is a constraint (``name==version``) of the solve, so an add can never move the CUDA
   runtime, cuDNN or the framework build; an upgrade frees only the packages it names;
2. the new wheels resolved by uv against those pins (metadata only, no install);
3. the result checked: one CUDA major in the venv, the framework's CUDA build kept, the CUDA
   release of any new NVIDIA runtime package against this machine's driver (cuenv.knowledge.compat),
   a removal that nothing installed still needs. A refusal names the cause and the way forward.

Then :func:`apply` installs exactly the planned artifacts by URL and hash (``--no-deps``: nothing
else moves), records the new package set as the environment's solution (so `cuenv lock` writes
it) and the change in meta.json (``changes``), all under the environment's file lock.

Interruptions: before touching the prefix a journal (``.cuenv/change.json``) keeps the package
set before the change. Ctrl-C or a failure undoes the change at once; after a kill -9 the journal
is still there and the next change, lock or sync of that environment puts the previous packages
back first (:func:`recover`). An add never touches the files of installed packages, so the
environment stays usable even before that.
"""

from __future__ import annotations

import functools
import json
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Collection, Final, Mapping, Sequence

from cuenv.envs import folder
from cuenv.envs.changeplan import ChangePlan, ChangeRefused, cuda_of, dependants, held, removal, requirement_name, satisfied
from cuenv.envs.history import appended, asked_name, asked_now
from cuenv.errors import CuenvError, UsageError
from cuenv.knowledge.packages import canonical
from cuenv.plain import Plain

if TYPE_CHECKING:
    from cuenv.config import Settings
    from cuenv.engines import Request
    from cuenv.engines.venv import Begun
    from cuenv.envs.meta import EnvMeta
    from cuenv.envs.store import EnvRecord, Store
    from cuenv.knowledge.findings import Finding
    from cuenv.lock.drift import Drift
    from cuenv.machine.model import Machine

VERBS: Final = ("add", "remove", "upgrade")


def way_forward(settings: Settings | None = None, machine: Machine | None = None, *, name: str = "",
                asked: Sequence[str] = (), cuda: str | None = None) -> str:
    """The way forward from a refused change: a new environment beside this one. Where a framework was
    asked for, the recipe of it for this CUDA major; `cuenv suggest` only where a driver is here to pick by."""
    recipe = framework_recipe(settings, asked, cuda) if settings is not None else None
    if recipe is not None:
        return (f"For {recipe.framework.name} on CUDA {recipe.cuda}, make an environment from its recipe beside this one: "
                f"`cuenv create {recipe.name} -n {name}-{recipe.framework.name}` (`cuenv recipes show {recipe.name}` "
                "says what it holds).")
    suggest = "`cuenv suggest` names the recipe for this machine, " if machine is not None and machine.driver else ""
    return ("For another CUDA release or framework build, make a new environment beside this one: "
            f"{suggest}`cuenv recipes` lists them all.")


def framework_recipe(settings: Settings, asked: Sequence[str], cuda: str | None) -> Any:
    """The recipe of a framework among ``asked`` (canonical names) for the CUDA major of ``cuda`` (the
    nearest release), or None. Loads the catalogue only when a framework was asked for."""
    from cuenv.knowledge.packages import framework_packages
    from cuenv.knowledge.versions import Dotted

    wanted = {"pytorch" if n == "torch" else n for n in asked if n in framework_packages()}
    if not wanted or not cuda:
        return None
    from cuenv.recipes.catalogue import load_catalogue

    major = str(cuda).split(".")[0]
    fits = [r for r in load_catalogue(settings).all() if r.framework and r.cuda and str(r.cuda).split(".")[0] == major
            and ("pytorch" if r.framework.name == "torch" else r.framework.name) in wanted]
    here = Dotted.parse(str(cuda))
    older = [r for r in fits if Dotted.parse(str(r.cuda)) <= here]  # the driver that runs this CUDA runs these
    if older:
        return max(older, key=lambda r: (Dotted.parse(str(r.cuda)), r.name))
    return min(fits, key=lambda r: (Dotted.parse(str(r.cuda)), r.name), default=None)


def plan(settings: Settings, environ: Mapping[str, str], *, name: str, verb: str, packages: Sequence[str],
         machine: Machine | None = None, pypi: bool = False, predict: bool = False, dry_run: bool = False) -> ChangePlan:
    """What ``verb`` of ``packages`` would do to environment ``name``: solved, checked, nothing installed.
    ``pypi``: in a conda prefix, the packages of its pip layer (a venv's are all PyPI's). ``machine``: this
    one, detected here when None and only where it is needed (a conda solve, a new CUDA release's driver
    check, a refusal's way forward): a venv's add of a plain package needs none (issue 26's benchmark).

    ``predict``, for a venv's add that is about to be applied: the plan may be made from uv's cache's answer
    while the index is still asked (:func:`_predicted`); :func:`apply` keeps it only if the index agrees.
    Packages pip installed since the last record are recorded first (the plan to be applied starts from them);
    ``dry_run`` writes nothing, and the plan names them (``recorded``)."""
    from cuenv.engines import get_engine
    from cuenv.envs.store import Store

    if verb not in VERBS:
        raise UsageError(f"Unknown change {verb!r}.", hint=f"Use one of: {', '.join(VERBS)}.")
    if not packages:
        raise UsageError(f"Name the packages to {verb}.", hint=f"cuenv {verb} -n {name} numpy")
    from cuenv.trust.requirements import looks_local

    for text in packages:
        if looks_local(text.strip()) and verb != "remove":
            import shlex

            shown = "~/" + shlex.quote(text.strip()[2:]) if text.strip().startswith("~/") else shlex.quote(text.strip())
            raise UsageError(f"{text[:80]!r} is a local path: a change installs from package indexes only, so that "
                             "a lock can pin what it installed.",
                             hint=f"Install it with the environment's own pip: `cuenv run {name} -- pip install "
                                  f"{shown}` (`cuenv lock` then names it as not lockable).")
    store = Store.from_settings(settings)
    record = recovered(settings, environ, store, name)
    engine = get_engine(record.meta.engine, environ, mirrors=settings.mirrors)
    here = functools.cache(lambda: machine if machine is not None else _detect(settings, environ))
    if engine.family != "venv":
        from cuenv.envs import condachange

        planner = condachange.plan_pip_layer if pypi else condachange.plan_conda
        text = way_forward(settings, here(), name=name, asked=[asked_name(p) for p in packages], cuda=record.meta.cuda)
        draft = planner(settings, environ, record, engine, verb=verb, packages=packages, machine=here(), forward=text)
        if draft.empty:
            return draft
        return draft.replace(findings=tuple(check(draft, record.meta, here, forward=lambda: text)))
    packages = list(dict.fromkeys(packages))
    names = [requirement_name(p) for p in packages]
    forward = functools.cache(lambda: way_forward(settings, here(), name=name, asked=names, cuda=record.meta.cuda))
    before = engine.installed(record.path)
    found = _recorded_drift(record, before)
    outside: tuple[str, ...] = ()
    if found and dry_run:  # a dry run writes nothing: what the change would record first is named
        outside = tuple(f"{p.name} {p.version}" for p in (*found.added, *(b for _, b in found.changed)))
    elif found is None or found:
        # packages pip installed since the last record pinned into it, before this change is planned on top of
        # them; read again: the installed packages carry the URLs and hashes just recorded
        outside = record_installed(settings, environ, name).pinned
        record = store.get(name)
        before = engine.installed(record.path)
    try:
        planned = _plan_venv(settings, record, engine, verb, packages, names, before, forward, here, predict)
    except CuenvError as exc:
        raise said_recorded(exc, () if dry_run else outside) from None
    return planned.replace(recorded=outside) if outside else planned


def said_recorded(exc: CuenvError, recorded: Sequence[str]) -> CuenvError:
    """``exc``, its message naming the packages installed outside cuenv that were recorded before the change
    failed (its record stands: they are installed): never recorded without a word (issue 26 §3)."""
    if recorded:
        exc.message += f" (Recorded before it, installed outside cuenv: {', '.join(recorded)}.)"
    return exc


def _plan_venv(settings: Settings, record: EnvRecord, engine: Any, verb: str, packages: list[str], names: list[str],
               before: tuple[Any, ...], forward: Callable[[], str], here: Callable[[], Machine], predict: bool) -> ChangePlan:
    """:func:`plan` of a venv, once its packages as installed are recorded."""
    from cuenv.engines.venv import INSTALLER

    name = record.name
    by_name = {p.name: p for p in before}
    hold = held(record.meta, before)
    if verb == "remove":
        return _plan_remove(record, names, before, hold)
    if verb == "upgrade":
        for n in names:
            seeded = _seeded_installer(record.path, before) if n not in by_name else None
            if seeded is not None and n == INSTALLER:
                raise UsageError(f"pip {seeded} is the installer seeded into {name!r} at its creation and kept out of its "
                                 "lock, not one of its packages.",
                                 hint=f"Upgrade it with itself: `cuenv run {name} -- pip install -U pip`.")
            if n not in by_name:
                raise UsageError(f"{n} is not installed in {name!r}, so there is nothing to upgrade.",
                                 hint=f"Add it: `cuenv add -n {name} {n}`.")
    # an add of what is installed, every spec of it met by the version installed, changes nothing (one with
    # extras is solved, that version held: the extras may bring packages)
    met = {n for n in names if n in by_name
           and all(satisfied(t, by_name[n].version) for m, t in zip(names, packages) if m == n)} if verb == "add" else set()
    seeded = _seeded_installer(record.path, before)
    if seeded is not None and INSTALLER in names and verb == "add" and \
            all(satisfied(t, seeded) for n, t in zip(names, packages) if n == INSTALLER):
        met.add(INSTALLER)  # the seeded pip is there, outside the lock: adding it again would lock it twice over
    already = tuple(dict.fromkeys(n for n, t in zip(names, packages) if n in met and not _extras(t)))
    for n in dict.fromkeys(names):
        if n in hold and n not in met:
            raise ChangeRefused(f"{n} is {hold[n]} ({by_name[n].version}): {'upgrading' if verb == 'upgrade' else 'changing'}"
                                f" it would change what {name!r} was checked for.", hint=forward())
    wanted = [t for n, t in zip(names, packages) if n not in already]
    if not wanted:
        return ChangePlan(name, verb, tuple(packages), before, already=already)
    provided = {p.name: p.version for p in before if p.name not in names or p.name in met}

    def drafted(solved: tuple[Any, ...]) -> ChangePlan:
        new = tuple(p for p in solved if not (p.name in by_name and by_name[p.name].version == p.version))
        if verb == "upgrade" and not new:  # already the newest that fits
            return ChangePlan(name, verb, tuple(packages), before, already=tuple(names))
        if verb == "upgrade":
            from packaging.version import Version

            down = [p for p in new if p.name in names and Version(p.version) < Version(by_name[p.name].version)]
            if down:
                raise UsageError(f"upgrade {' '.join(packages)} would move {down[0].name} down "
                                 f"({by_name[down[0].name].version} -> {down[0].version}); an upgrade only moves up.",
                                 hint=f"Ask for that version: `cuenv add -n {name} '{down[0].name}=={down[0].version}'`.")
        for pkg in new:  # an upgrade's dependencies stay held unless named; a solve that moved one is refused
            if pkg.name in hold and pkg.name not in names:
                raise ChangeRefused(f"{verb} {' '.join(packages)} would replace {pkg.name} ({hold[pkg.name]}, "
                                    f"{by_name[pkg.name].version}) with {pkg.version}.", hint=forward())
        elsewhere, had = _elsewhere(settings, record, engine, wanted, request.index_urls) if verb == "add" else ((), ())
        met_now = already if new else tuple(dict.fromkeys([*already, *(n for n in names if n in by_name)]))  # extras had too
        draft = ChangePlan(name, verb, tuple(packages), before, install=new, already=(*met_now, *had), elsewhere=elsewhere)
        return draft.replace(findings=tuple(check(draft, record.meta, here, forward=forward)))

    request, resolve = _resolver(settings, engine, record, wanted, provided, before)
    from cuenv.engines.venv import VenvEngine

    if predict and verb == "add" and isinstance(engine, VenvEngine):  # uv's cache answers while the index is asked

        def newest(requirements: tuple[str, ...]) -> Begun:
            return engine.begin_resolve(request.replace(requirements=requirements, prerelease=True), no_deps=True,
                                        cache_dir=settings.cache_dir, provided=provided,
                                        interpreter=record.path / "bin" / "python")

        asked = newest(request.requirements)
        try:
            guess = _predicted(resolve, drafted, asked, newest, names=frozenset(names))
        except BaseException:
            asked.cancel()
            raise
        if guess is not None:
            return guess
        asked.cancel()
    return drafted(_solve(resolve, name, wanted, forward))


def _elsewhere(settings: Settings, record: EnvRecord, engine: Any, wanted: Sequence[str],
               indexes: Sequence[str]) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """Of the requirements ``wanted``, those whose marker leaves them out here, to record for a lock's other
    platforms, and those of them recorded already. Each new one is resolved (without its dependencies) from
    ``indexes`` for the first platform the environment's recipe can be locked for that it fits, so that
    what is recorded is there to lock; one that fits none of those platforms is refused."""
    from cuenv.envs.changeplan import applies_here

    away = [t for t in wanted if ";" in t and not applies_here(t, record.path)]
    if not away:
        return (), ()
    from packaging.requirements import Requirement

    from cuenv.engines import Request
    from cuenv.envs.history import net_asked
    from cuenv.lock.foreign.wheels import Target

    asked = {t for texts in net_asked(record.meta.changes)[1].values() for t in texts}
    new = [t for t in away if t not in asked]
    if not new:
        return (), tuple(away)
    python, platforms = _lockable(settings, record)
    for text in new:
        marker = Requirement(text).marker
        fits = [p for p in platforms if marker is None or marker.evaluate({**Target(python, p).markers(), "extra": ""})]
        if not fits:
            raise UsageError(f"{text!r} applies to no platform {record.name!r} can be locked for ({', '.join(platforms)}; "
                             f"Python {python}): there is nothing to install or record.",
                             hint=f"Check its marker, or add the package without it: `cuenv add -n {record.name} "
                                  f"{Requirement(text).name}`.")
        request = Request(engine="venv", python=python, platform=fits[0], requirements=(text,), index_urls=tuple(indexes))
        try:
            engine.resolve_wheels(request, python=python, glibc=None, cache_dir=settings.cache_dir, no_deps=True)
        except CuenvError as exc:
            raise ChangeRefused(f"{text!r} is for {', '.join(fits)}, and cannot be installed on {fits[0]}: "
                                f"{exc.message.splitlines()[0]}", hint=exc.hint or "Check the name and version on the index.") from None
    return tuple(new), tuple(t for t in away if t in asked)


def _lockable(settings: Settings, record: EnvRecord) -> tuple[str, tuple[str, ...]]:
    """The environment's Python (major.minor) and the platforms its recipe declares (all five where the
    recipe is gone: the lock then says why it cannot solve them)."""
    from cuenv.envs.changeplan import python_of
    from cuenv.lock.model import PLATFORMS
    from cuenv.recipes.catalogue import load_catalogue

    try:
        platforms = load_catalogue(settings).find(record.meta.recipe.name).platforms_for(record.meta.recipe.version)
    except (CuenvError, AttributeError):
        platforms = tuple(PLATFORMS)
    return python_of(record.path) or ".".join((record.meta.python or "3").split(".")[:2]), tuple(platforms)


def _seeded_installer(prefix: Path, before: Sequence[Any]) -> str | None:
    """The version of the pip seeded into the venv at its creation (which its packages leave out), else None."""
    from cuenv.engines.venv import INSTALLER, site_packages

    site = site_packages(prefix)
    if site is None or INSTALLER in {p.name for p in before}:
        return None
    found = sorted(site.glob(f"{INSTALLER}-*.dist-info"))
    return found[0].name[len(INSTALLER) + 1:-len(".dist-info")] if found else None


def _extras(text: str) -> bool:
    """Whether requirement ``text`` asks for extras (``requests[socks]``)."""
    return "[" in text.split(";", 1)[0].split("@", 1)[0]


def _detect(settings: Settings, environ: Mapping[str, str]) -> Machine:
    from cuenv.machine.driver import detect

    return detect(environ, cache_dir=settings.cache_dir)


def _recorded_drift(record: EnvRecord, installed: Sequence[Any]) -> Drift | None:
    """How ``installed`` differs from the environment's recorded solution; None when it has none readable."""
    from cuenv.engines import Solution
    from cuenv.lock.drift import drift

    try:
        own = Solution.from_json(folder.read_solution(record.path))
    except (OSError, ValueError, UsageError):
        return None
    return drift(own.packages, installed)


def _plan_remove(record: EnvRecord, names: list[str], before: tuple[Any, ...], hold: Mapping[str, str]) -> ChangePlan:
    have = {p.name for p in before}
    missing = [n for n in names if n not in have]
    from cuenv.engines.venv import INSTALLER

    if INSTALLER in missing and _seeded_installer(record.path, before) is not None:
        raise UsageError(f"pip is the installer seeded into {record.name!r} at its creation and kept out of its lock, "
                         "not one of its packages.",
                         hint=f"Remove it anyway with itself: `cuenv run {record.name} -- pip uninstall -y pip`.")
    elsewhere = _recorded_elsewhere(record, missing)
    if not_here := [n for n in missing if n not in elsewhere]:
        raise UsageError(f"Not installed in {record.name!r}: {', '.join(not_here)}.",
                         hint=f"`cuenv info {record.name}` lists what is.")
    here = [n for n in names if n in have]
    planned = removal(record.name, here, before, hold, dependants(record.path, set(here)))
    return planned.replace(asked=tuple(names), elsewhere=tuple(t for n in missing for t in elsewhere[n]))


def _recorded_elsewhere(record: EnvRecord, names: Sequence[str]) -> dict[str, tuple[str, ...]]:
    """Of ``names``, those added for a lock's other platforms only (a marker that leaves them out here):
    name -> those requirements."""
    from cuenv.envs.changeplan import applies_here
    from cuenv.envs.history import net_asked

    asked = net_asked(record.meta.changes)[1]
    found = {n: tuple(t for t in asked.get(n, ()) if not applies_here(t, record.path)) for n in names}
    return {n: texts for n, texts in found.items() if texts}


def _resolver(settings: Settings, engine: Any, record: EnvRecord, wanted: Sequence[str], provided: Mapping[str, str],
              before: Sequence[Any]) -> tuple[Request, Callable[..., tuple[Any, ...]]]:
    """The request of the new wheels and its solve, ``offline`` or not: ``wanted`` resolved with every
    other installed package pinned, from the indexes the environment's packages came from and PyPI last (numpy for a torch
    environment is on PyPI), for the environment's own interpreter (its Python, platform and glibc, as uv
    reads them)."""
    from cuenv.engines import Request
    from cuenv.engines.mirrors import PYPI_SIMPLE

    indexes = tuple(dict.fromkeys([*(p.index_url.rstrip("/") for p in before if p.index_url), PYPI_SIMPLE]))
    request = Request(engine="venv", python=record.meta.python, platform=record.meta.platform,
                      requirements=tuple(wanted), index_urls=indexes)

    def resolve(*, offline: bool = False, meanwhile: Callable[[], object] | None = None) -> tuple[Any, ...]:
        return tuple(engine.resolve_wheels(request, python=request.python or "3", glibc=None, cache_dir=settings.cache_dir,
                                           provided=provided, interpreter=record.path / "bin" / "python", offline=offline,
                                           meanwhile=meanwhile))

    return request, resolve


def _solve(resolve: Callable[[], tuple[Any, ...]], name: str, wanted: Sequence[str], forward: Callable[[], str]) -> tuple[Any, ...]:
    """The index's answer to ``resolve``; one that cannot be satisfied is refused with its explanation."""
    from cuenv.engines import Unsatisfiable

    try:
        return resolve()
    except Unsatisfiable as exc:
        raise ChangeRefused(
            f"{' '.join(wanted)} cannot be installed into {name!r} with its packages held:\n{exc.explanation}",
            hint="Ask for an older version that fits the held packages (a '<' pin below the version named above). " + forward(),
        ) from None


def _predicted(resolve: Callable[..., tuple[Any, ...]], drafted: Callable[[tuple[Any, ...]], ChangePlan],
               asked: Begun, newest: Callable[[tuple[str, ...]], Begun], *, names: Collection[str]) -> ChangePlan | None:
    """The plan made from uv's cache's answer to ``resolve``, its ``guess`` saying whether the index
    gives exactly the same wheels; None where the cache cannot answer, its answer is refused (the index
    may know better), or there is nothing to install: the index's own answer decides then.

    The index is asked about the cache's answer alone, which takes one round trip where a solve takes
    two (issue 26's benchmark): the newest wheel of each of its packages, read from the index pages only
    (``newest``: uv with ``--no-deps`` and pre-releases allowed, every installed package held as in the
    solve): what was asked for (``asked``, begun before the cache answered; ``names``) as it was asked,
    every other package at its version or later. The solve would pick the same wheels exactly when each
    is the one the cache chose: uv picks the newest versions that fit, and a wheel's dependencies never
    change (its sha256 names its file). Anything newer or different, a pre-release included, counts as
    moved, and the index is then asked in full (:func:`apply`): a cautious no, never a wrong yes."""
    from cuenv.envs.changeplan import Guess

    try:
        cached = resolve(offline=True, meanwhile=_checker)
        draft = drafted(cached)
    except CuenvError:
        return None
    if draft.empty:
        return None
    rest = tuple(f"{p.name}>={p.version.split('+')[0]}" for p in cached if p.name not in names)
    checks = (asked, newest(rest)) if rest else (asked,)

    def same() -> bool:
        try:
            answered = {p.name: p for check in checks for p in check.result()}
        except CuenvError:  # the index's own answer, or its error, comes from planning again
            return False
        return answered == {p.name: p for p in cached}

    def cancel() -> None:
        for check in checks:
            check.cancel()

    return draft.replace(guess=Guess(same, cancel))


def _checker() -> None:
    """The reader :func:`_major` tells a PyPI wheel's CUDA build with (~11 ms to import), loaded while uv solves."""
    import cuenv.recipes.cudainfer  # noqa: F401 - loaded now for later, no name used here


def _major(pkg: Any) -> int | None:
    """The CUDA major of a package a change installs: a CUDA package's (:func:`cuda_of`), or the one a PyPI
    wheel is a build of (``cupy-cuda11x``, a ``+cu121`` torch: cuenv.recipes.cudainfer.wheel_cuda_major)."""
    found = cuda_of(pkg)
    if found is not None or pkg.kind != "pypi":
        return found[0] if found else None
    from cuenv.recipes.cudainfer import wheel_cuda_major

    return wheel_cuda_major(pkg.name, pkg.version)


def check(draft: ChangePlan, meta: EnvMeta, machine: Callable[[], Machine], *, forward: Callable[[], str]) -> list[Finding]:
    """Refuse a change that breaks the contract; return the warnings it goes on with. ``machine`` and
    ``forward`` (the way forward of a refusal) are asked for only when needed: the driver check of a new
    CUDA release, a refusal."""
    from cuenv.knowledge.packages import framework_packages

    stack_cuda = meta.cuda
    new = {p.name: m for p in draft.install if (m := _major(p)) is not None}
    majors = {c[0] for p in draft.after if p.name not in new and (c := cuda_of(p)) is not None} | set(new.values())
    if stack_cuda:
        majors.add(int(str(stack_cuda).split(".")[0]))
    if len(majors) > 1:
        want = int(str(stack_cuda).split(".")[0]) if stack_cuda else min(majors)
        odd = [p for p in draft.install if new.get(p.name, want) != want]
        if not odd:  # the other major is installed already (pip put it there): that is what to take out
            there = [p for p in draft.before if (c := cuda_of(p)) is not None and c[0] != want]
            pip = " --pypi" if meta.engine != "venv" else ""
            raise ChangeRefused(
                f"{draft.name!r} is a CUDA {stack_cuda or want} environment, but holds CUDA "
                f"{', '.join(sorted({str(c[0]) for p in there if (c := cuda_of(p))}))} packages installed outside cuenv "
                f"({', '.join(f'{p.name} {p.version}' for p in there)}); one environment holds one CUDA major.",
                hint=f"Take them out first: `cuenv uninstall -n {draft.name}{pip} {' '.join(p.name for p in there)}`.")
        kind = "wheels" if all(p.kind == "pypi" for p in odd) else "packages"
        framework_asked = any(asked_name(a) in framework_packages() for a in draft.asked)  # the way forward names its recipe
        raise ChangeRefused(
            f"{' '.join(draft.asked)} would pull CUDA {max(majors - {want})} {kind} "
            f"({', '.join(f'{p.name} {p.version}' for p in odd)}) into {draft.name!r}, a CUDA {stack_cuda or want} "
            "environment; one environment holds one CUDA major.",
            hint=(f"Ask for its CUDA {want} build (often named ...-cu{want} or ...-cuda{want}x). "
                  if kind == "wheels" and not framework_asked else "") + forward())
    framework = meta.stack.variant
    for pkg in draft.install:
        local = pkg.version.partition("+")[2]
        if pkg.name in ("torch",) and framework and local.startswith("cu") and local != framework:
            raise ChangeRefused(f"{pkg.name} {pkg.version} is a {local} build; {draft.name!r} holds the {framework} one.",
                                hint=forward())
    # A new CUDA package of a later release than the environment's may need a newer driver.
    releases = [c[1] for pkg in draft.install if (c := cuda_of(pkg)) is not None and c[1]]
    if not releases:
        return []
    from cuenv.knowledge.versions import Dotted

    newest = max(releases, key=Dotted.parse)
    if not stack_cuda or Dotted.parse(newest) > Dotted.parse(str(stack_cuda)):
        from cuenv.envs.meta import stack_from_meta
        from cuenv.knowledge.compat import check as compat_check

        stack = stack_from_meta(meta).replace(cuda=newest)
        findings = [f for f in compat_check(stack, machine()) if f.code.startswith("driver")]
        errors = [f for f in findings if f.severity == "error"]
        if errors:
            pinned = " ".join(f"'{p.name}=={stack_cuda}.*'" for p in draft.install
                              if p.kind == "pypi" and p.name.startswith("nvidia-cuda-"))
            raise ChangeRefused(
                f"{' '.join(draft.asked)} brings CUDA {newest} packages: {errors[0].message}",
                hint=(f"Ask for the environment's CUDA {stack_cuda}: `cuenv add -n {draft.name} {pinned}`, or "
                      if stack_cuda and pinned else "") + (errors[0].fix or "update the NVIDIA driver."))
        return [f for f in findings if f.severity == "warning"]
    return []


# -- applying ---------------------------------------------------------------------------------
def journal_path(prefix: Path) -> Path:
    return folder.change_journal(prefix)


def apply(settings: Settings, environ: Mapping[str, str], change: ChangePlan, *, progress: Any = None) -> ChangePlan:
    """Install ``change`` (planned by :func:`plan`) into its environment and record it; the change made.
    A plan from uv's cache (``change.guess``) is recorded only once the index gave the same answer; else
    it is undone and the change planned again from the index's answer and applied (that plan returned)."""
    try:
        return _apply(settings, environ, change, progress)
    finally:
        if change.guess is not None:  # a failure before the index answered: stop asking it
            change.guess.cancel()


def _apply(settings: Settings, environ: Mapping[str, str], change: ChangePlan, progress: Any) -> ChangePlan:
    from cuenv.envs.store import Store

    store = Store.from_settings(settings)
    with store.locked(change.name):
        record = recovered(settings, environ, store, change.name, locked=True)
        if change.empty:
            return change
        if record.meta.engine != "venv":  # a conda prefix: changed over a hard-linked copy of itself
            _apply_over_snapshot(settings, environ, store, record, change, progress)
            return change
        journal = journal_path(record.path)
        folder.write_json(journal, {"verb": change.verb, "before": [p.to_json() for p in change.before],
                                    "install": [p.to_json() for p in change.install],
                                    "uninstall": list(change.uninstall)})
        try:
            size = _run(settings, environ, record.path, change, progress, size_before=record.meta.size_bytes)
            write_record = staged_record(settings, environ, store, record, change, size_bytes=size)  # the index may still be asked
            moved = change.guess is not None and not change.guess.confirmed()
            if change.guess is not None:
                from cuenv import runner

                runner.log(__name__, "info", "uv's cached answer %s", "differs from the index's: undone, planned again"
                           if moved else "is the index's too")
            if moved:
                _restore(settings, environ, record.path, change.before, change.after)
            else:
                write_record()
        except BaseException:
            try:
                _restore(settings, environ, record.path, change.before, change.after)
            except Exception:  # noqa: BLE001 - the journal stays: the next change, lock or sync puts them back
                pass
            else:  # undone: a journal left now would undo, later, what pip installs meanwhile
                journal.unlink()
            raise
        journal.unlink()
    if moved:  # the index answered otherwise than uv's cache: planned again from the index, as without a guess
        return apply(settings, environ, plan(settings, environ, name=change.name, verb=change.verb,
                                             packages=change.asked), progress=progress)
    return change


def _apply_over_snapshot(settings: Settings, environ: Mapping[str, str], store: Store, record: EnvRecord,
                         change: ChangePlan, progress: Any) -> None:
    """A conda prefix's change (under its lock, held by the caller): the prefix hard-linked aside, the
    journal written, the engine run, the result recorded; any failure, Ctrl-C included, swaps the copy back."""
    from cuenv.engines import get_engine
    from cuenv.envs import condachange, snapshot

    copy = snapshot.before_path(store.envs_dir, record.name)
    snapshot.take(record.path, copy)
    snapshot.begin(record.path, copy, {"verb": change.verb, "asked": list(change.asked)})
    try:
        engine = get_engine(record.meta.engine, environ, mirrors=settings.mirrors)
        condachange.run_change(settings, environ, engine, record.path, change, progress)
        record_change(settings, environ, store, record, change)
    except BaseException:
        snapshot.restore(record.path, copy)
        raise
    snapshot.commit(record.path, copy)


def recovered(settings: Settings, environ: Mapping[str, str], store: Store, name: str, *, locked: bool = False) -> EnvRecord:
    """Environment ``name``'s record, after undoing a change a kill -9 interrupted: a conda prefix's copy
    swapped back (cuenv.envs.snapshot), a venv's packages put back (:func:`recover`). ``locked``: the
    caller holds the environment's lock; else it is taken for the repair (only when there is one)."""
    from cuenv.envs import snapshot

    def repair() -> EnvRecord:
        snapshot.recover(store.envs_dir, name)
        record = store.get(name)
        recover(settings, environ, record)
        return record

    if not (snapshot.needs_recovery(store.envs_dir, name) or journal_path(store.path(name)).exists()):
        return store.get(name)
    if locked:
        return repair()
    with store.locked(name):
        return repair()


def recover(settings: Settings, environ: Mapping[str, str], record: EnvRecord) -> str | None:
    """Undo a change a kill -9 interrupted (its journal is still there); the line to say, or None."""
    from cuenv.engines import Package

    journal = journal_path(record.path)
    if not journal.is_file():
        return None
    try:
        data = json.loads(journal.read_text(encoding="utf-8"))
        before = tuple(Package.from_json(p) for p in data["before"])
        now = tuple(Package.from_json(p) for p in data["install"])
        gone = set(data["uninstall"]) | {p.name for p in now}
        after = tuple([p for p in before if p.name not in gone] + list(now))
    except (OSError, ValueError, KeyError, TypeError):
        journal.unlink()
        return None
    _restore(settings, environ, record.path, before, after)
    journal.unlink()
    return f"An interrupted `{data.get('verb', 'change')}` of {record.name!r} was undone."


def _uv(settings: Settings, environ: Mapping[str, str]) -> Any:
    from cuenv.engines import get_engine

    return get_engine("venv", environ, mirrors=settings.mirrors)


def _run(settings: Settings, environ: Mapping[str, str], prefix: Path, change: ChangePlan, progress: Any, *,
         size_before: int | None = None) -> int | None:
    """Uninstall and install what ``change`` plans; the environment's size after it (``size_before`` less
    what went, plus what came: the RECORDs of those packages, no walk of the whole), None where unknown."""
    from cuenv.engines.base import emit, total_size
    from cuenv.engines.events import Step, package_count
    from cuenv.engines.venv import INSTALL_TIMEOUT, requirements_lines, site_packages
    from cuenv.envs.diskuse import dists_usage

    engine = _uv(settings, environ)
    python = str(prefix / "bin" / "python")
    site = site_packages(prefix)
    old = {p.name for p in change.before}
    size = None if site is None or size_before is None else \
        size_before - dists_usage(site, [*change.uninstall, *(p.name for p in change.install if p.name in old)])
    if change.uninstall:
        emit(progress, Step("remove", ", ".join(change.uninstall)))
        engine.uv_run(["pip", "uninstall", "--python", python, *change.uninstall], cache_dir=settings.cache_dir,
                      timeout=600, where="uv pip uninstall")
    if change.install:
        emit(progress, Step("install", package_count(len(change.install)), total_size(change.install)))
        with tempfile.TemporaryDirectory(prefix="cuenv-change-") as tmp:
            reqs = Path(tmp) / "requirements.txt"
            reqs.write_text(requirements_lines(change.install, mirrors=engine.mirrors), encoding="utf-8")
            engine._uv_stream(  # noqa: SLF001 - the engine's own streaming of uv, with its progress events
                ["pip", "install", "-r", str(reqs), "--python", python, "--require-hashes", "--no-deps",
                 "--link-mode", "hardlink", "--index-strategy", "unsafe-best-match"],
                cache_dir=settings.cache_dir, timeout=INSTALL_TIMEOUT, where="the solved URLs", progress=progress,
                sizes={p.name: p.size for p in change.install}, cached_first=True)
    if size is None or site is None:
        return None
    return max(0, size + dists_usage(site, [p.name for p in change.install]))


def _restore(settings: Settings, environ: Mapping[str, str], prefix: Path, before: Sequence[Any],
             after: Sequence[Any]) -> None:
    """Put ``before`` back where ``after`` was (fully or half) installed: uninstall what is new, install
    again by URL and hash what was replaced or removed (uv's cache has it)."""
    from cuenv.engines.venv import requirements_lines

    engine = _uv(settings, environ)
    python = str(prefix / "bin" / "python")
    old = {p.name: p for p in before}
    new_names = [p.name for p in after if p.name not in old]
    if new_names:
        engine.uv_run(["pip", "uninstall", "--python", python, *new_names], cache_dir=settings.cache_dir,
                      timeout=600, where="uv pip uninstall")
    back = [p for p in before if p.sha256 and p.url and p not in set(after)]
    back += [p for p in before if p.sha256 and p.url and p.name not in {q.name for q in after}]
    back = list({p.name: p for p in back}.values())
    if back:
        with tempfile.TemporaryDirectory(prefix="cuenv-undo-") as tmp:
            reqs = Path(tmp) / "requirements.txt"
            reqs.write_text(requirements_lines(back, mirrors=engine.mirrors), encoding="utf-8")
            engine.uv_run(["pip", "install", "-r", str(reqs), "--python", python, "--require-hashes", "--no-deps",
                           "--reinstall", "--link-mode", "hardlink", "--index-strategy", "unsafe-best-match"],
                          cache_dir=settings.cache_dir, timeout=600, where="the recorded URLs")


def record_change(settings: Settings, environ: Mapping[str, str], store: Any, record: EnvRecord, change: ChangePlan, *,
                  size_bytes: int | None = None) -> None:
    """The new package set becomes the environment's solution (what `cuenv lock` writes); meta.json
    says what was asked and when; the layout and activation scripts follow new NVIDIA folders.
    ``size_bytes``: the environment's size after the change, where the caller counted it; else a walk of it."""
    staged_record(settings, environ, store, record, change, size_bytes=size_bytes)()


def staged_record(settings: Settings, environ: Mapping[str, str], store: Any, record: EnvRecord, change: ChangePlan, *,
                  size_bytes: int | None = None) -> Callable[[], None]:
    """:func:`record_change`, all but its writes done now (the installed change read, the solution and
    meta.json made); its writes when the returned function is called: an add from uv's cache prepares
    its record while the index is still asked (issue 26's benchmark)."""
    from cuenv.engines import Solution, get_engine
    from cuenv.engines.venv import nvidia_components, site_packages
    from cuenv.envs.meta import Change, now, resolved_versions

    try:
        old = Solution.from_json(folder.read_solution(record.path))
        python, platform = old.python, old.platform
    except (OSError, ValueError):
        python, platform = record.meta.python, record.meta.platform
    after = tuple(p for p in change.after if p.sha256 or p.md5)  # a local or editable install: no lock can pin it
    solution = Solution(engine=record.meta.engine, platform=platform, python=python, packages=after)
    text, lock_hash = folder.solution_text(solution.to_json())
    meta = record.meta
    new = Change(change.verb, tuple(change.asked), now(), tuple(change.lines()))
    site = site_packages(record.path)
    moved = any(p.name.startswith("nvidia-") for p in change.install) or any(n.startswith("nvidia-") for n in change.uninstall)
    if size_bytes is None:
        from cuenv.envs.diskuse import disk_usage

        size_bytes = disk_usage(record.path)
    rebuild = site is not None and moved and meta.engine == "venv"  # only NVIDIA wheels add or take away CUDA_HOME's folders
    updated = meta.replace(requested=asked_now(meta.requested, new), changes=appended(meta.changes, new),
                           resolved=resolved_versions(after), lock_hash=lock_hash, size_bytes=size_bytes)
    layout = None if rebuild else get_engine(meta.engine, environ).layout(record.path)

    def write() -> None:
        nonlocal layout
        folder.write_solution_text(record.path, text)
        if rebuild and site is not None:  # 0.3 s; the layout follows the folders it makes
            from cuenv.engines.cudahome import build_cuda_home

            build_cuda_home(folder.cuda_home(record.path), nvidia_components(site))
            layout = get_engine(meta.engine, environ).layout(record.path)
        store.write_meta(record.name, updated.replace(layout=layout))
        if layout != meta.layout:  # new library folders: the activation scripts name them
            from cuenv.envs.create import render_activation

            render_activation(store, record.name, settings, environ)

    return write


# -- the environment as it is -----------------------------------------------------------------
class AsInstalled(Plain):
    """An environment's packages as installed now, each with where it came from (issue 26 §3)."""

    __slots__ = ("solution", "pinned", "unpinned", "changed")

    def __init__(self, solution: Any, pinned: tuple[str, ...], unpinned: tuple[tuple[str, str], ...], changed: bool) -> None:
        self.solution = solution  # cuenv.engines.Solution: what `cuenv lock` writes
        self.pinned = pinned  # installed outside cuenv (pip, uv pip), found by name and version on an index
        self.unpinned = unpinned  # (package, why): installed, but no URL and hash can say where from
        self.changed = changed  # differs from the recorded solution


def as_installed(settings: Settings, environ: Mapping[str, str], record: EnvRecord) -> AsInstalled:
    """The recorded solution brought up to what is installed: packages installed by pip or uv pip are
    pinned by URL and hash from the index their version is on; a local path or an editable install
    cannot be, and is named. In a conda prefix the same holds for its pip layer (what pip installed there
    is seen by cuenv.engines.piplayer); its conda packages carry their URL and hash in conda-meta."""
    from cuenv.engines import Request, Solution, get_engine
    from cuenv.engines.mirrors import PYPI_SIMPLE
    from cuenv.lock.drift import drift

    own = Solution.from_json(folder.own_solution(record.path, record.name))
    engine = get_engine(record.meta.engine, environ, mirrors=settings.mirrors)
    now = engine.installed(record.path)
    found = drift(own.packages, now)
    if not found:
        return AsInstalled(own, (), (), False)
    keep = {p.name: p for p in now}
    pinned, unpinned = [], []
    todo = [p for p in found.added] + [b for _, b in found.changed]
    indexes = tuple(dict.fromkeys([*(p.index_url.rstrip("/") for p in own.packages if p.index_url), PYPI_SIMPLE]))
    for pkg in todo:
        if pkg.kind == "conda" and pkg.url and (pkg.sha256 or pkg.md5):
            continue  # conda installed it (by hand too): conda-meta says where from, with its hash
        if pkg.url and pkg.sha256 and not pkg.url.startswith("file:"):
            continue  # installed by URL with its hash: where it came from is known
        if pkg.url.startswith("file:"):
            why = "an editable install" if _editable(record.path, pkg.name) else "installed from a local file"
            unpinned.append((pkg.name, f"{why} ({pkg.url[:120]})"))
            del keep[pkg.name]
            continue
        request = Request(engine="venv", python=own.python, platform=own.platform,
                          requirements=(f"{pkg.name}=={pkg.version}",), index_urls=indexes)
        try:
            got = _uv(settings, environ).resolve_wheels(request, python=own.python or "3", glibc=None,
                                                        cache_dir=settings.cache_dir, no_deps=True,
                                                        interpreter=record.path / "bin" / "python")
        except CuenvError as exc:
            unpinned.append((pkg.name, f"{pkg.version} is on none of {', '.join(indexes)} ({exc.message.splitlines()[0]})"))
            del keep[pkg.name]
            continue
        keep[pkg.name] = next((g for g in got if g.name == pkg.name), pkg)
        pinned.append(f"{pkg.name} {pkg.version}")
    solution = Solution(engine=own.engine, platform=own.platform, python=own.python,
                        packages=tuple(sorted(keep.values(), key=lambda p: p.name)))
    return AsInstalled(solution, tuple(pinned), tuple(unpinned), True)


def _editable(prefix: Path, name: str) -> bool:
    from cuenv.engines.venv import site_packages

    site = site_packages(prefix)
    for dist in (site.glob("*.dist-info") if site else ()):
        if canonical(dist.name.split("-")[0]) == name:
            try:
                data = json.loads((dist / "direct_url.json").read_text(encoding="utf-8"))
            except (OSError, ValueError):
                return False
            info = data.get("dir_info") if isinstance(data, dict) else None
            return bool(isinstance(info, dict) and info.get("editable"))
    return False


def record_installed(settings: Settings, environ: Mapping[str, str], name: str) -> AsInstalled:
    """:func:`as_installed`, written back as the environment's solution (under its lock) when it changed,
    so that drift checks and the next lock start from it; an interrupted change is undone first."""
    from cuenv.envs.store import Store

    store = Store.from_settings(settings)
    with store.locked(name):
        record = recovered(settings, environ, store, name, locked=True)
        got = as_installed(settings, environ, record)
        if got.changed:
            from cuenv.envs.meta import resolved_versions

            lock_hash = folder.write_solution(record.path, got.solution.to_json())
            store.write_meta(name, record.meta.replace(lock_hash=lock_hash,
                                                       resolved=resolved_versions(got.solution.packages)))
    return got


def drift_warning(settings: Settings, environ: Mapping[str, str], name: str) -> str | None:
    """What an export or image of environment ``name`` would leave out or get wrong: the packages installed
    since its solution was recorded (pip, uv pip) or removed from it; None when it is as recorded."""
    from cuenv.engines import get_engine
    from cuenv.envs.store import Store

    record = Store.from_settings(settings).get(name)
    found = _recorded_drift(record, get_engine(record.meta.engine, environ).installed(record.path))
    if not found:
        return None
    listed = "; ".join(found.lines()[:6]) + ("; ..." if len(found.lines()) > 6 else "")
    return (f"{name!r} drifted from its lock ({listed}): the export holds the locked packages. "
            f"`cuenv lock {name} -o {name}.lock` records the environment as it is; then export again.")
