"""Environments cuenv did not build (issue 30): an existing conda prefix or venv, registered in place.

An adopted environment has a folder of its own under ``CUENV_HOME/envs/NAME`` that holds only
cuenv's records (``.cuenv/``: meta, the packages read, activation scripts, the cached verdict); the
prefix itself stays where it is and is never written: cuenv reads its stack from its files
(conda-meta records, the installed wheels' metadata) and, where asked, the GPU code in its
libraries. `cuenv remove NAME` deletes cuenv's folder only (the prefix is not inside it).

Discovery looks where the tools themselves keep their lists: conda's ``environments.txt`` and
``envs_dirs`` (CONDA_ENVS_PATH, ``~/.conda/envs``, ``~/miniconda3/envs`` ...), pixi's
``.pixi/envs`` and ``.venv`` folders under the folder you name.
"""

from __future__ import annotations

import os
import shlex
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Iterable, Mapping

from cuenv.activation.target import CudaLayout
from cuenv.engines.base import Package, Solution
from cuenv.envs.store import Store, validate_name
from cuenv.errors import UsageError
from cuenv.lock.foreign.stack import Derived, derive

if TYPE_CHECKING:
    from cuenv.config import Settings

KINDS = ("conda", "venv", "python")
# Engines that read (and, only when the user asks, change) each kind of prefix; a plain Python
# installation (a cloud image's /usr, a pyenv version) is read like a venv.
ENGINE_OF = {"conda": "rattler", "venv": "venv", "python": "venv"}
_SITE_GLOBS = ("lib/python3*/site-packages", "lib/python3*/dist-packages", "local/lib/python3*/dist-packages",
               "local/lib/python3*/site-packages")
_MAX_DEPTH = 4  # how deep discovery looks for .venv / .pixi under a folder
_SKIP = frozenset({"node_modules", ".git", "site-packages", "__pycache__", ".tox", ".nox"})


@dataclass(frozen=True)
class Found:
    """What an existing prefix holds, read from its own files."""

    prefix: Path
    kind: str  # conda | venv
    python: str | None
    packages: tuple[Package, ...]
    derived: Derived
    layout: CudaLayout


@dataclass(frozen=True)
class Candidate:
    path: Path
    kind: str
    source: str  # where discovery found it: "conda environments.txt", "pixi", ".venv under DIR"


def kind_of(path: Path) -> str | None:
    """conda for a folder with conda-meta/, venv for one with pyvenv.cfg, python for an interpreter's
    own prefix (bin/python3 and a site-packages or dist-packages folder), else None."""
    if (path / "conda-meta").is_dir():
        return "conda"
    if (path / "pyvenv.cfg").is_file():
        return "venv"
    if any((path / "bin").glob("python3*")) and site_dirs(path):
        return "python"
    return None


def site_dirs(prefix: Path) -> list[Path]:
    """Where a prefix's Python keeps installed distributions (Debian's dist-packages included)."""
    return sorted({p for pattern in _SITE_GLOBS for p in prefix.glob(pattern) if p.is_dir()})


def _python_version(prefix: Path, kind: str) -> str | None:
    if kind == "venv":
        try:
            text = (prefix / "pyvenv.cfg").read_text(encoding="utf-8", errors="replace")[:64 * 1024]
        except OSError:
            text = ""
        for line in text.splitlines():
            key, _, value = line.partition("=")
            if key.strip() in ("version", "version_info") and value.strip():
                return ".".join(value.strip().split(".")[:2])
    found = [d for d in site_dirs(prefix) if d.parent.name.startswith("python3.")]
    return found[0].parent.name.removeprefix("python") if found else None


def _wheels(prefix: Path) -> tuple[Package, ...]:
    from cuenv.engines.venv import dist_info_package

    out = []
    for site in site_dirs(prefix):
        for dist in sorted(site.glob("*.dist-info")):
            pkg = dist_info_package(dist)
            if pkg is not None and pkg.version:
                out.append(pkg)
    return tuple(out)


def _platform() -> str:
    import platform

    return "linux-aarch64" if platform.machine() in ("aarch64", "arm64") else "linux-64"


def inspect(prefix: Path, *, label: str) -> Found:
    """Read an existing prefix without writing to it. Raises UsageError when it is neither kind."""
    from cuenv.engines.condaprefix import conda_layout, read_conda_meta
    from cuenv.engines.venv import nvidia_components

    prefix = prefix.absolute()
    kind = kind_of(prefix)
    if kind is None:
        raise UsageError(f"{prefix} is neither a conda environment (no conda-meta folder), a virtualenv (no pyvenv.cfg) "
                         "nor a Python installation (bin/python3 and site-packages).",
                         hint="Name the environment's root folder, the one with conda-meta/ or pyvenv.cfg in it; "
                              f"`cuenv adopt --scan {shlex.quote(str(prefix))}` lists the ones under it.")  # runs as written
    # A conda prefix's pip layer counts too: what Python imports decides (issue 25 §2).
    packages = (read_conda_meta(prefix) if kind == "conda" else ()) + _wheels(prefix)
    nvidia = tuple(c for site in site_dirs(prefix) for c in nvidia_components(site))
    if kind == "conda":
        base = conda_layout(prefix)
        layout = CudaLayout(prefix=prefix, kind="conda", bin_dirs=base.bin_dirs,
                            lib_dirs=(*base.lib_dirs, *[c / "lib" for c in nvidia if (c / "lib").is_dir()]),
                            include_dirs=base.include_dirs, cuda_home=base.cuda_home)
    else:
        layout = CudaLayout(prefix=prefix, kind="venv",  # a venv, or an interpreter's own prefix
                            bin_dirs=(prefix / "bin", *[c / "bin" for c in nvidia if (c / "bin").is_dir()]),
                            lib_dirs=tuple(c / "lib" for c in nvidia if (c / "lib").is_dir()),
                            include_dirs=tuple(c / "include" for c in nvidia if (c / "include").is_dir()),
                            cuda_home=None)
    derived = derive(packages, platform=_platform(), label=label)
    return Found(prefix=prefix, kind=kind, python=_python_version(prefix, kind), packages=packages,
                 derived=derived, layout=layout)


def default_name(prefix: Path) -> str:
    """The folder's name (or its parent's, for a project's `.venv`), made a valid environment name."""
    base = prefix.parent.name if prefix.name in (".venv", "venv", "env", "default") else prefix.name
    cleaned = "".join(c if c.isalnum() or c in "._-" else "-" for c in base).lstrip("._-")[:64]
    return cleaned or "adopted"


def adopt(settings: Settings, environ: Mapping[str, str], prefix: Path, *, name: str | None = None) -> tuple[str, Found]:
    """Register ``prefix`` as environment ``name``: cuenv's records only, the prefix is not written."""
    from cuenv.envs import cudatools, folder
    from cuenv.envs.create import render_activation
    from cuenv.envs.meta import adopted_meta

    store = Store.from_settings(settings)
    prefix = Path(os.path.expanduser(str(prefix))).absolute()
    if not prefix.is_dir():
        raise UsageError(f"No folder {str(prefix)!r}.", hint="Name an existing conda environment or virtualenv folder.")
    name = validate_name(name or default_name(prefix))
    envs_dir = store.envs_dir.resolve() if store.envs_dir.exists() else store.envs_dir
    if prefix.resolve().is_relative_to(envs_dir):
        raise UsageError(f"{prefix} is inside cuenv's own environments folder: it is already cuenv's.",
                         hint="`cuenv list` shows it.")
    for record in store.list():
        adopted = record.known.adopted if record.known is not None else None
        if adopted is not None and str(adopted.prefix) and adopted.prefix.resolve() == prefix.resolve():
            raise UsageError(f"{prefix} is already adopted as {record.name!r}.",
                             hint=f"`cuenv info {record.name}` shows it; `cuenv remove {record.name}` forgets it.")
    if store.exists(name):
        raise UsageError(f"An environment named {name!r} exists already.",
                         hint=f"Pick another name: `cuenv adopt {prefix} -n {name}-2`.")
    found = inspect(prefix, label=name)
    store.envs_dir.mkdir(parents=True, exist_ok=True)
    with store.locked(name):
        store.claim(name)
        try:
            own = store.path(name)
            own.mkdir()
            solution = Solution(engine=ENGINE_OF[found.kind], platform=_platform(), python=found.python,
                                packages=found.packages)
            lock_hash = folder.write_solution(own, solution.to_json())
            meta = adopted_meta(name=name, prefix=found.prefix, kind=found.kind, engine=ENGINE_OF[found.kind],
                                python=found.python, platform=_platform(), stack=found.derived.stack,
                                evidence=found.derived.evidence, conflicts=found.derived.conflicts,
                                packages=found.packages, layout=found.layout, lock_hash=lock_hash)
            meta = meta.replace(tools=cudatools.install_here(name=name, prefix=own, layout=found.layout, meta=meta,
                                                             environ=environ, compiler_hint=None))
            store.write_meta(name, meta)
            render_activation(store, name, settings, environ)
            store.mark_complete(name)
        except BaseException:
            store.remove(name)
            raise
    return name, found


# -- discovery -----------------------------------------------------------------------------------

def _conda_lists(environ: Mapping[str, str], home: Path) -> Iterable[tuple[Path, str]]:
    """conda's own records of its environments: environments.txt, then the envs folders."""
    txt = home / ".conda" / "environments.txt"
    try:
        lines = txt.read_text(encoding="utf-8", errors="replace")[:1024 * 1024].splitlines()
    except OSError:
        lines = []
    for line in lines:
        if line.strip() and not line.startswith("#"):
            yield Path(line.strip()), "conda environments.txt"
    dirs = [d for d in environ.get("CONDA_ENVS_PATH", environ.get("CONDA_ENVS_DIRS", "")).split(os.pathsep) if d]
    dirs += [str(home / ".conda" / "envs")]
    dirs += [str(home / base / "envs") for base in ("miniconda3", "anaconda3", "miniforge3", "mambaforge", "micromamba")]
    if environ.get("CONDA_PREFIX"):
        dirs.append(str(Path(environ["CONDA_PREFIX"]) / "envs"))
    for d in dirs:
        parent = Path(d)
        if parent.is_dir():
            for child in sorted(parent.iterdir()):
                yield child, "conda envs folder"


def _under(root: Path) -> Iterable[tuple[Path, str]]:
    """`.venv` (and `venv`) folders and pixi's `.pixi/envs/*` under ``root``, a few levels deep."""
    stack = [(root, 0)]
    while stack:
        folder_, depth = stack.pop()
        try:
            children = sorted(p for p in folder_.iterdir() if p.is_dir() and not p.is_symlink())
        except OSError:
            continue
        for child in children:
            if child.name in (".venv", "venv") and kind_of(child) == "venv":
                yield child, f".venv under {root}"
            elif child.name == ".pixi" and (child / "envs").is_dir():
                for env in sorted((child / "envs").iterdir()):
                    yield env, "pixi"
            elif kind_of(child) is not None:
                yield child, f"under {root}"
            elif depth + 1 < _MAX_DEPTH and child.name not in _SKIP:
                stack.append((child, depth + 1))


def discover(environ: Mapping[str, str], roots: Iterable[Path] = ()) -> list[Candidate]:
    """Every conda environment and venv conda knows of or found under ``roots``, each once."""
    home = Path(environ.get("HOME") or os.path.expanduser("~"))
    seen: dict[Path, Candidate] = {}
    sources = list(_conda_lists(environ, home))
    for root in roots:
        sources += list(_under(Path(root).absolute()))
    for path, source in sources:
        kind = kind_of(path)
        if kind is None:
            continue
        try:
            real = path.resolve()
        except OSError:
            continue
        seen.setdefault(real, Candidate(path=path, kind=kind, source=source))
    return list(seen.values())
