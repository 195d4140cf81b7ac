"""Changing a conda prefix in place (issue 26 §1): its conda packages (conda, mamba, micromamba, rattler)
and its pip layer (``--pypi``). cuenv.envs.change plans venvs and checks every plan; this module plans
conda prefixes and runs a plan's engine calls; cuenv.envs.change applies it over a snapshot (cuenv.envs.snapshot).

Planning, before anything is downloaded:

- conda packages: the engine's own solver (``conda create --dry-run --json``, or rattler's solve) gets every
  installed package pinned exactly (``name==version=build``) plus what was asked; an upgrade frees only
  the packages it names. The solve reads repodata only. A package that would move the CUDA release
  (``cuda-version``), the CUDA runtime, cuDNN or the framework build is refused, as is one that no
  package set with them held satisfies (the solver's reason is shown). The machine's driver is the
  solve's ``__cuda``; with no driver here, the CUDA the environment was made for.
- the pip layer: uv resolves the asked requirements against the prefix's own Python with every
  installed distribution (conda's and the layer's) as a constraint, so a wheel can never replace a
  conda package; the wheels are locked by URL and hash.

Applying: the prefix is hard-linked aside, the engine changes it, the new package set is recorded as the
environment's solution (what `cuenv lock` writes) and in meta.json; an interruption swaps the copy back.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final, Mapping, Sequence

from cuenv.engines.events import Step
from cuenv.errors import CuenvError, UsageError

if TYPE_CHECKING:
    from cuenv.config import Settings
    from cuenv.envs.changeplan import ChangePlan
    from cuenv.envs.meta import EnvMeta
    from cuenv.envs.store import EnvRecord
    from cuenv.machine.model import Machine

CUDA_RELEASE: Final = "cuda-version"  # conda-forge's and nvidia's pin of the CUDA release


# -- the few facts of meta.json this module reads -----------------------------------------------
def _engine_name(meta: EnvMeta) -> str:
    return meta.engine


def _stack_cuda(meta: EnvMeta) -> str | None:
    return meta.cuda


def _platform(meta: EnvMeta) -> str:
    return meta.platform


# -- planning ---------------------------------------------------------------------------------
def held_conda(meta: EnvMeta, before: Sequence[Any]) -> dict[str, str]:
    """The conda packages a change may not move: the venv rules (runtime, cuDNN, framework) and the CUDA release."""
    from cuenv.envs.changeplan import held

    out = held(meta, before)
    if any(p.name == CUDA_RELEASE for p in before):
        out[CUDA_RELEASE] = "the environment's CUDA release"
    return out


def channels_of(packages: Sequence[Any]) -> tuple[str, ...]:
    """The channels the environment's packages came from, the one most of them came from first."""
    counts: dict[str, int] = {}
    for pkg in packages:
        if pkg.channel:
            counts[pkg.channel] = counts.get(pkg.channel, 0) + 1
    return tuple(sorted(counts, key=lambda c: -counts[c]))


def pinned_spec(pkg: Any) -> str:
    return f"{pkg.name}=={pkg.version}={pkg.build}" if pkg.build else f"{pkg.name}=={pkg.version}"


def satisfied(prefix: Path, installed: Any, spec: str) -> bool:
    """Whether the installed package (None: not installed) already is what ``spec`` asks for (as conda
    install leaves an installed package that matches alone)."""
    if installed is None:
        return False
    import rattler

    record = prefix / "conda-meta" / f"{installed.name}-{installed.version}-{installed.build}.json"
    try:
        return bool(rattler.MatchSpec(spec).matches(rattler.PrefixRecord.from_path(record)))
    except Exception:  # noqa: BLE001 - an unreadable record or spec: let the solve decide
        return False


def conda_dependants(prefix: Path, names: set[str]) -> dict[str, set[str]]:
    """{name: installed conda packages (outside ``names``) whose ``depends`` name it}, from conda-meta."""
    from cuenv.engines.condaprefix import spec_name
    from cuenv.trust import limits

    out: dict[str, set[str]] = {}
    for path in sorted((prefix / "conda-meta").glob("*.json")):
        try:
            record = json.loads(limits.read_bytes(path, what="Package record", limit=limits.META))
            own, depends = str(record["name"]), [str(d) for d in record.get("depends") or ()]
        except (OSError, ValueError, KeyError, TypeError, AttributeError, CuenvError):
            continue  # not a package record
        if own in names:
            continue
        for dep in depends:
            if spec_name(dep) in names:
                out.setdefault(spec_name(dep), set()).add(own)
    return out


def target_for(machine: Machine, meta: EnvMeta) -> Any:
    """The solve's machine: this one's driver; with none here, a driver for the environment's own CUDA
    (conda would otherwise drop every package that needs ``__cuda``, the framework among them)."""
    from cuenv.engines import Target

    target = Target.from_machine(machine)
    cuda = _stack_cuda(meta)
    return target.replace(cuda=cuda) if target.cuda is None and cuda else target


def plan_conda(settings: Settings, environ: Mapping[str, str], record: EnvRecord, engine: Any, *, verb: str,
               packages: Sequence[str], machine: Machine, forward: str) -> ChangePlan:
    """``verb`` of conda ``packages`` (specs for add, names otherwise) in a conda prefix: solved, the held
    packages kept (cuenv.envs.change.check judges the rest). ``forward``: the way forward of a refusal."""
    from cuenv.engines import PackagesNotFound, Request, Unsatisfiable
    from cuenv.engines.base import cuda_hint
    from cuenv.engines.condaprefix import spec_name
    from cuenv.envs.changeplan import ChangePlan, ChangeRefused
    from cuenv.trust import requirements as trusted

    before = engine.installed(record.path)
    conda_before = [p for p in before if p.kind == "conda"]
    by_name = {p.name: p for p in conda_before}
    hold = held_conda(record.meta, conda_before)
    names = [spec_name(s) for s in packages]
    channels = channels_of(conda_before)
    trusted.check_conda_request(channels, tuple(packages), source="the command line")
    if verb == "remove":
        return _plan_remove(record, names, tuple(before), {p.name for p in conda_before}, hold, "conda")
    for n in names:
        if verb == "upgrade" and n not in by_name:
            raise UsageError(f"{n} is not installed in {record.name!r}, so there is nothing to upgrade.",
                             hint=f"Add it: `cuenv add -n {record.name} {n}`.")
        if n in hold:
            raise ChangeRefused(f"{n} is {hold[n]} ({by_name[n].version}): {'upgrading' if verb == 'upgrade' else 'changing'} "
                                f"it would change what {record.name!r} was checked for.", hint=forward)
    already = tuple(n for n, spec in zip(names, packages) if verb == "add" and satisfied(record.path, by_name.get(n), spec))
    if already and len(already) == len(names):
        return ChangePlan(record.name, verb, tuple(packages), tuple(before), already=already)
    moving = set(names) - set(already)
    specs = [pinned_spec(p) for p in conda_before if p.name not in moving]
    specs += [s for n, s in zip(names, packages) if n in moving] if verb == "add" else names
    request = Request(engine=_engine_name(record.meta), python=None, conda_channels=channels, conda_specs=tuple(specs),
                      platform=_platform(record.meta))
    target = target_for(machine, record.meta)
    try:
        solution = engine.solve(request, target=target, cache_dir=settings.cache_dir)
    except PackagesNotFound as exc:
        raise PackagesNotFound(exc.names, where="the channels " + ", ".join(channels), hint=(
            "Check the spelling and version; cuenv looks for it in the channels the environment's packages "
            f"came from. `cuenv info {record.name}` lists what is installed.")) from None
    except Unsatisfiable as exc:
        driver = (f"{' '.join(packages)} needs a newer NVIDIA driver than this machine's (it runs CUDA {target.cuda} "
                  "at most): update the driver, or " if target.cuda and exc.hint == cuda_hint(target.cuda) else "")
        raise ChangeRefused(
            f"{' '.join(packages)} cannot be installed into {record.name!r} with its packages held "
            f"({', '.join(f'{n} {by_name[n].version}' for n in sorted(hold))}):\n{exc.explanation}",
            hint=f"{driver or 'A'}{'a' if driver else ''}sk for an older version that fits the held packages "
                 f"(a '<' spec below the version named above). " + forward,
        ) from None
    new = tuple(p for p in solution.packages if p.name not in by_name or by_name[p.name].key != p.key)
    gone = tuple(n for n in by_name if solution.find(n) is None)
    for n in [p.name for p in new] + list(gone):
        if n in hold and n not in names:
            raise ChangeRefused(f"{verb} {' '.join(packages)} would {'replace' if solution.find(n) else 'remove'} {n} "
                                f"({hold[n]}, {by_name[n].version}).", hint=forward)
    if not new and not gone:
        return ChangePlan(record.name, verb, tuple(packages), tuple(before), already=tuple(names))
    return ChangePlan(record.name, verb, tuple(packages), tuple(before), install=new, uninstall=gone, already=already)


def _plan_remove(record: EnvRecord, names: list[str], before: tuple[Any, ...], removable: set[str],
                 hold: Mapping[str, str], kind: str) -> ChangePlan:
    """Take ``names`` out: each installed (of ``kind``), none held, none that another package still needs."""
    from cuenv.envs.changeplan import dependants, removal

    pypi = kind == "pypi"
    flag = " --pypi" if pypi else ""
    missing = [n for n in names if n not in removable]
    if missing:
        other = {p.name for p in before if p.kind != kind} & set(missing)
        raise UsageError(f"Not installed in {record.name!r}{' by pip' if pypi else ' by conda'}: {', '.join(missing)}.",
                         hint=(f"{', '.join(sorted(other))} {'is a' if len(other) == 1 else 'are'} "
                               f"{'conda' if pypi else 'pip-layer'} package{'' if len(other) == 1 else 's'}: "
                               f"`cuenv uninstall -n {record.name}"
                               f"{'' if pypi else ' --pypi'} {' '.join(sorted(other))}`." if other else
                               f"`cuenv info {record.name}` lists what is."))
    needed = dependants(record.path, set(names)) if pypi else conda_dependants(record.path, set(names))
    return removal(record.name, names, before, hold, needed, flag=flag)


def plan_pip_layer(settings: Settings, environ: Mapping[str, str], record: EnvRecord, engine: Any, *, verb: str,
                    packages: Sequence[str], machine: Machine, forward: str) -> ChangePlan:
    """``verb`` of PyPI ``packages`` in the pip layer of a conda prefix, every installed distribution held."""
    from cuenv.engines import Request, Unsatisfiable, piplayer
    from cuenv.engines.mirrors import PYPI_SIMPLE
    from cuenv.engines.venv import dist_info_package
    from cuenv.envs.changeplan import ChangePlan, ChangeRefused, held, requirement_name
    from cuenv.knowledge.packages import canonical

    if not (record.path / "bin" / "python").exists():
        raise UsageError(f"{record.name!r} has no Python, so it has no pip layer to change.",
                         hint=f"Add conda's Python first: `cuenv add -n {record.name} python`, then the PyPI packages.")
    before = engine.installed(record.path)
    layer = {p.name: p for p in before if p.kind == "pypi"}
    names = [requirement_name(p) for p in packages]
    if verb == "remove":
        return _plan_remove(record, names, tuple(before), set(layer), held(record.meta, list(layer.values())), "pypi")
    dists = [pkg for d in sorted(record.path.glob("lib/python3*/site-packages/*.dist-info"))
             if (pkg := dist_info_package(d)) is not None]
    installed = {canonical(p.name): p.version for p in dists}
    hold = held(record.meta, list(layer.values()))
    for n in names:
        if verb == "upgrade" and n not in layer:
            raise UsageError(f"{n} is not in the pip layer of {record.name!r}, so there is nothing to upgrade.",
                             hint=f"Add it: `cuenv add -n {record.name} --pypi {n}`.")
        if n in hold:
            raise ChangeRefused(f"{n} is {hold[n]} ({layer[n].version}): {'upgrading' if verb == 'upgrade' else 'changing'} "
                                f"it would change what {record.name!r} was checked for.", hint=forward)
    # an upgrade: a newer version than the installed one, within what was asked (`idna<3.8`)
    wanted = list(packages) if verb == "add" else [*(f"{n}>{layer[n].version}" for n in names), *packages]
    pins = tuple(f"{n}=={v}" for n, v in sorted(installed.items()) if n not in names)
    indexes = tuple(dict.fromkeys([*(p.index_url.rstrip("/") for p in layer.values() if p.index_url), PYPI_SIMPLE]))
    request = Request(engine="venv", python=None, requirements=tuple(wanted), constraints=pins, index_urls=indexes)
    try:
        wheels = piplayer.resolve(record.path, request, environ=environ, cache_dir=settings.cache_dir, glibc=None,
                                  mirrors=settings.mirrors)
    except Unsatisfiable as exc:
        if verb == "upgrade":  # no newer version fits with the rest held
            return ChangePlan(record.name, verb, tuple(packages), tuple(before), already=tuple(names))
        raise ChangeRefused(
            f"{' '.join(packages)} cannot be installed into {record.name!r} with its packages held (conda's "
            f"among them: a wheel never replaces one):\n{exc.explanation}",
            hint="Ask for an older version that fits the held packages (a '<' pin below the version named above). " + forward,
        ) from None
    conda_owned = sorted({canonical(w.name) for w in wheels} & (set(installed) - set(layer)))
    if conda_owned:  # uv keeps the constraints; this says so should a wheel ever name one anyway
        raise ChangeRefused(f"{' '.join(packages)} would replace conda's {', '.join(conda_owned)} with wheels.",
                            hint=f"Change it with conda's packages: `cuenv upgrade -n {record.name} {' '.join(conda_owned)}`.")
    if not wheels:
        return ChangePlan(record.name, verb, tuple(packages), tuple(before), already=tuple(names))
    return ChangePlan(record.name, verb, tuple(packages), tuple(before), install=tuple(wheels))


# -- applying -----------------------------------------------------------------------------------
def run_change(settings: Settings, environ: Mapping[str, str], engine: Any, prefix: Path, change: ChangePlan,
               progress: Any) -> None:
    """Make ``change`` in the conda prefix: its conda packages by the engine, then its pip layer by uv."""
    from cuenv.engines import piplayer
    from cuenv.engines.base import emit
    from cuenv.engines.venv import VenvEngine

    kinds = {p.name: p.kind for p in change.before}
    conda_in = tuple(p for p in change.install if p.kind == "conda")
    conda_out = tuple(n for n in change.uninstall if kinds.get(n) == "conda")
    if conda_in or conda_out:
        engine.change(prefix, install=conda_in, remove=conda_out, cache_dir=settings.cache_dir, progress=progress)
    pip_out = [n for n in change.uninstall if kinds.get(n) == "pypi"]
    if pip_out:
        emit(progress, Step("remove", ", ".join(pip_out)))
        VenvEngine(environ, mirrors=settings.mirrors).uv_run(
            ["pip", "uninstall", "--python", str(piplayer.prefix_python(prefix)), *pip_out],
            cache_dir=settings.cache_dir, timeout=600, where="uv pip uninstall")
    piplayer.install(prefix, tuple(p for p in change.install if p.kind == "pypi"), environ=environ,
                     cache_dir=settings.cache_dir, progress=progress, mirrors=settings.mirrors)
