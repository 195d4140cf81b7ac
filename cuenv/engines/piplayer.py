"""The pip layer of a conda environment: an environment.yml's ``pip:`` section (issue 15 §1).

conda installs the ``pip:`` packages into the same prefix after the conda packages, with that prefix's
pip, which leaves alone what the conda packages already provide. cuenv does the same with uv and keeps
its lock-first rule:

resolve = ``uv pip install --dry-run`` against the prefix's own Python, after the conda packages are
          linked: what pip would add, and nothing conda already installed;
lock    = those exact versions as wheels with URL and sha256 (``uv pip compile --no-deps``), checked
          against the file's ``--hash`` values before any download;
install = ``uv pip install --no-deps --require-hashes`` of exactly the locked wheels.

From a lockfile (``create --from-lock``, ``sync``) the locked wheels are installed as they are, no resolve.
"""

from __future__ import annotations

import re
import tempfile
from collections.abc import Mapping
from dataclasses import replace
from pathlib import Path
from typing import Final

from cuenv.engines.base import (
    Package,
    Progress,
    Request,
    SolveError,
    check_requested_hashes,
    emit,
)

INSTALLER: Final = "uv"  # what uv writes into a dist-info's INSTALLER: how the layer's packages are told apart
_WOULD_INSTALL: Final = re.compile(r"^\s*\+\s*([A-Za-z0-9][A-Za-z0-9._-]*)==(\S+)\s*$", re.MULTILINE)


def prefix_python(prefix: Path) -> Path:
    python = prefix / "bin" / "python"
    if not python.exists():
        raise SolveError("The environment's pip packages need Python in it, and its conda packages hold none.",
                         hint="Add python (e.g. `python=3.11`) to the file's conda dependencies.")
    return python


def resolve(prefix: Path, layer: Request, *, environ: Mapping[str, str], cache_dir: Path, glibc: str | None) -> tuple[Package, ...]:
    """What the pip layer adds to ``prefix`` (its conda packages installed), locked by URL and sha256."""
    from cuenv.engines.venv import VenvEngine, index_args

    if not layer.requirements:
        return ()
    from cuenv.trust import requirements as trusted

    trusted.check_pip_request(layer, source="the pip layer")  # before uv reads them (issue 14)
    venv = VenvEngine(environ)
    python = prefix_python(prefix)
    with tempfile.TemporaryDirectory(prefix="cuenv-piplayer-") as tmp:
        reqs = Path(tmp) / "requirements.in"
        reqs.write_text("".join(r + "\n" for r in layer.requirements), encoding="utf-8")
        args = ["pip", "install", "--dry-run", "--python", str(python), "-r", str(reqs), "--only-binary", ":all:",
                *index_args(layer.index_urls)]
        for url in layer.find_links:
            args += ["--find-links", url]
        if layer.prerelease:
            args += ["--prerelease", "allow"]
        if layer.constraints:
            cons = Path(tmp) / "constraints.txt"
            cons.write_text("".join(c + "\n" for c in layer.constraints), encoding="utf-8")
            args += ["--constraint", str(cons)]
        done = venv.uv_run(args, cache_dir=cache_dir, timeout=600, where="the pip layer's indexes")
    pins = tuple(f"{name}=={version}" for name, version in _WOULD_INSTALL.findall(done.stderr + "\n" + done.stdout))
    if not pins:
        return ()
    version = _python_version(python)
    exact = replace(layer, requirements=pins, constraints=(), python=version)
    packages = venv.resolve_wheels(exact, python=version, glibc=glibc, cache_dir=cache_dir, no_deps=True)
    check_requested_hashes(packages, layer.hashes)
    return packages


def install(prefix: Path, packages: tuple[Package, ...], *, environ: Mapping[str, str], cache_dir: Path,
            progress: Progress | None = None) -> None:
    """Exactly ``packages`` (pypi wheels) into ``prefix``'s Python, every hash verified, no resolve."""
    from cuenv.engines.venv import VenvEngine, requirements_lines

    if not packages:
        return
    text = requirements_lines(packages)  # refuses a wheel without a hash before anything runs
    python = prefix_python(prefix)
    emit(progress, "install", f"{len(packages)} pip packages into {prefix}")
    with tempfile.TemporaryDirectory(prefix="cuenv-piplayer-") as tmp:
        reqs = Path(tmp) / "requirements.txt"
        reqs.write_text(text, encoding="utf-8")
        VenvEngine(environ).uv_run(
            ["pip", "install", "--python", str(python), "--no-deps", "--require-hashes", "-r", str(reqs)],
            cache_dir=cache_dir, timeout=3600, where="the locked URLs")


def installed(prefix: Path) -> tuple[Package, ...]:
    """The layer's packages now in ``prefix``: the dist-infos uv installed (conda's own carry no uv mark)."""
    from cuenv.engines.venv import dist_info_package

    out = []
    for dist_info in sorted(prefix.glob("lib/python3*/site-packages/*.dist-info")):
        try:
            mark = (dist_info / "INSTALLER").read_text(encoding="utf-8").strip()
        except OSError:
            continue
        if mark == INSTALLER:
            pkg = dist_info_package(dist_info)
            if pkg is not None:
                out.append(pkg)
    return tuple(out)


def _python_version(python: Path) -> str:
    """The prefix's Python as X.Y, from its versioned lib folder (no interpreter start)."""
    found = sorted(p.name[len("python"):] for p in (python.parent.parent / "lib").glob("python3.*") if p.is_dir())
    if not found:
        raise SolveError(f"Cannot tell which Python {python} is (no lib/python3.X folder).",
                         hint="Add python to the file's conda dependencies.")
    return found[-1]
