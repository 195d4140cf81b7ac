"""The pip layer of a conda environment: an environment.yml's ``pip:`` section (issue 15 §1).

conda installs the ``pip:`` packages into the same prefix after the conda packages, with that prefix's
pip, which leaves alone what the conda packages already provide. cuenv does the same with uv and keeps
its lock-first rule:

resolve = ``uv pip install --dry-run`` against the prefix's own Python, after the conda packages are
          linked: what pip would add, and nothing conda already installed;
lock    = those exact versions as wheels with URL and sha256 (``uv pip compile --no-deps``), checked
          against the file's ``--hash`` values before any download;
install = ``uv pip install --no-deps --require-hashes`` of exactly the locked wheels.

Every index is fetched through cuenv's mirrors (settings.mirrors), as the venv engine does; the lock
names the canonical URLs.

From a lockfile (``create --from-lock``, ``sync``) the locked wheels are installed as they are, no resolve.
"""

from __future__ import annotations

import re
import tempfile
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Final

from cuenv.engines.base import (
    Package,
    Request,
    SolveError,
    check_requested_hashes,
    emit,
)
from cuenv.engines.events import Progress, Step
from cuenv.trust import limits

if TYPE_CHECKING:
    from cuenv.engines.mirrors import Mirrors

INSTALLER: Final = "uv"  # what uv writes into a dist-info's INSTALLER: how the layer's packages are told apart
_WOULD_INSTALL: Final = re.compile(r"^\s*\+\s*([A-Za-z0-9][A-Za-z0-9._-]*)==(\S+)\s*$", re.MULTILINE)


def prefix_python(prefix: Path) -> Path:
    python = prefix / "bin" / "python"
    if not python.exists():
        raise SolveError("The environment's pip packages need Python in it, and its conda packages hold none.",
                         hint="Add python (e.g. `python=3.11`) to the file's conda dependencies.")
    return python


def resolve(prefix: Path, layer: Request, *, environ: Mapping[str, str], cache_dir: Path, glibc: str | None,
            mirrors: Mirrors | None = None) -> tuple[Package, ...]:
    """What the pip layer adds to ``prefix`` (its conda packages installed), locked by URL and sha256."""
    from cuenv.engines.mirrors import PYPI_SIMPLE
    from cuenv.engines.venv import VenvEngine, index_args

    if not layer.requirements:
        return ()
    from cuenv.trust import requirements as trusted

    trusted.check_pip_request(layer, source="the pip layer")  # before uv reads them (issue 14)
    venv = VenvEngine(environ, mirrors=mirrors)
    indexes = layer.index_urls or (PYPI_SIMPLE,)
    fetch_from = tuple(venv.mirrors.to_mirror(u) for u in indexes)
    python = prefix_python(prefix)
    with tempfile.TemporaryDirectory(prefix="cuenv-piplayer-") as tmp:
        reqs = Path(tmp) / "requirements.in"
        reqs.write_text("".join(r + "\n" for r in layer.requirements), encoding="utf-8")
        args = ["pip", "install", "--dry-run", "--python", str(python), "-r", str(reqs), "--only-binary", ":all:",
                *index_args(fetch_from)]
        for url in layer.find_links:
            args += ["--find-links", url]
        for name in layer.allow_build:  # --allow-build: this package from its source distribution
            args += ["--no-binary", name]
        if layer.prerelease:
            args += ["--prerelease", "allow"]
        if layer.constraints:
            cons = Path(tmp) / "constraints.txt"
            cons.write_text("".join(c + "\n" for c in layer.constraints), encoding="utf-8")
            args += ["--constraint", str(cons)]
        where = "the pip layer's index" + ("es " if len(indexes) > 1 else " ") + ", ".join(
            u + (f" (mirror {m})" if m != u else "") for u, m in zip(indexes, fetch_from))
        done = venv.uv_run(args, cache_dir=cache_dir, timeout=600, where=where)
    pins = tuple(f"{name}=={version}" for name, version in _WOULD_INSTALL.findall(done.stderr + "\n" + done.stdout))
    if not pins:
        return ()
    version = _python_version(python)
    exact = layer.replace(requirements=pins, constraints=(), python=version)
    packages = venv.resolve_wheels(exact, python=version, glibc=glibc, cache_dir=cache_dir, no_deps=True)
    check_requested_hashes(packages, layer.hashes)
    return packages


def install(prefix: Path, packages: tuple[Package, ...], *, environ: Mapping[str, str], cache_dir: Path,
            progress: Progress | None = None, mirrors: Mirrors | None = None) -> None:
    """Exactly ``packages`` (pypi wheels) into ``prefix``'s Python, every hash verified, no resolve;
    each fetched through its mirror where one is configured."""
    from cuenv.engines.venv import VenvEngine, requirements_lines

    if not packages:
        return
    venv = VenvEngine(environ, mirrors=mirrors)
    text = requirements_lines(packages, mirrors=venv.mirrors)  # refuses a wheel without a hash before anything runs
    python = prefix_python(prefix)
    emit(progress, Step("install", f"{len(packages)} pip packages into {prefix}"))
    with tempfile.TemporaryDirectory(prefix="cuenv-piplayer-") as tmp:
        reqs = Path(tmp) / "requirements.txt"
        reqs.write_text(text, encoding="utf-8")
        venv.uv_run(
            ["pip", "install", "--python", str(python), "--no-deps", "--require-hashes", "-r", str(reqs),
             "--index-strategy", "unsafe-best-match"],
            cache_dir=cache_dir, timeout=3600, where="the locked URLs")


def installed(prefix: Path) -> tuple[Package, ...]:
    """The layer's packages now in ``prefix``: the dist-infos uv installed (cuenv's own changes), and those
    pip installed (`pip install` inside `cuenv use`) unless a conda package's files list them (conda
    marks its own INSTALLER ``conda``, but not every build does). One installed by name and hash from an
    index (through a mirror) has no direct_url.json: its entry in the installed solution is the artifact
    uv verified."""
    from cuenv.engines.venv import dist_info_package, recorded_packages

    by_name = {(p.name, p.version): p for p in recorded_packages(prefix) if p.kind == "pypi"}
    owned: set[str] | None = None
    out = []
    for dist_info in sorted(prefix.glob("lib/python3*/site-packages/*.dist-info")):
        try:
            mark = limits.read_small(dist_info / "INSTALLER", limit=4096).strip()
        except (OSError, ValueError):
            continue
        if mark not in (INSTALLER, "pip"):
            continue
        if mark != INSTALLER:
            owned = _conda_owned(prefix) if owned is None else owned
            if dist_info.name in owned:
                continue
        pkg = dist_info_package(dist_info)
        if pkg is not None:
            out.append(by_name.get((pkg.name, pkg.version), pkg) if not pkg.url else pkg)
    return tuple(out)


def _conda_owned(prefix: Path) -> set[str]:
    """The dist-info folder names that conda packages installed (their conda-meta ``files``)."""
    import json

    from cuenv.errors import CuenvError

    owned: set[str] = set()
    for path in (prefix / "conda-meta").glob("*.json"):
        try:
            files = json.loads(limits.read_bytes(path, what="Package record", limit=limits.META)).get("files") or ()
        except (OSError, ValueError, AttributeError, CuenvError):
            continue
        owned.update(part for f in files if isinstance(f, str) and ".dist-info/" in f
                     for part in f.split("/") if part.endswith(".dist-info"))
    return owned


def _python_version(python: Path) -> str:
    """The prefix's Python as X.Y, from its versioned lib folder (no interpreter start)."""
    found = sorted(p.name[len("python"):] for p in (python.parent.parent / "lib").glob("python3.*") if p.is_dir())
    if not found:
        raise SolveError(f"Cannot tell which Python {python} is (no lib/python3.X folder).",
                         hint="Add python to the file's conda dependencies.")
    return found[-1]
