"""What conda-family engines share: reading a prefix's conda-meta, its CUDA layout, the specs.

Pure file reading, no rattler import: conda, mamba, micromamba and rattler all write
``conda-meta/<name>-<version>-<build>.json`` with url, md5 and (recent versions) sha256.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any, Iterable, Mapping

from cuenv.activation.target import CudaLayout
from cuenv.engines.base import Package, Request, Solution, emit
from cuenv.engines.events import Progress, Step
from cuenv.engines.mirrors import Mirrors, channel_url
from cuenv.errors import CuenvError
from cuenv.trust import limits

_SPEC_NAME = re.compile(r"^\s*([A-Za-z0-9_.\-]+(?:::[A-Za-z0-9_.\-]+)?)")


def spec_name(spec: str) -> str:
    match = _SPEC_NAME.match(spec)
    return match.group(1).split("::")[-1].lower() if match else spec.strip().lower()


def specs_with_python(request: Request) -> tuple[str, ...]:
    """The request's specs, plus ``python X.Y.*`` when a Python was asked for and no spec names it."""
    specs = tuple(request.conda_specs)
    if request.python and not any(spec_name(s) == "python" for s in specs):
        specs += (f"python {request.python}.*",)
    return specs


def package_from_record(data: Mapping[str, Any]) -> Package:
    """A conda repodata / conda-meta / FETCH-action record -> Package."""
    url = str(data.get("url") or "")
    filename = data.get("fn") or data.get("file_name") or (url.rsplit("/", 1)[-1] if url else None)
    channel = str(data.get("channel") or "").rstrip("/") or None
    subdir = data.get("subdir") or None
    if channel and subdir and channel.endswith("/" + subdir):
        channel = channel[: -len(subdir) - 1]  # conda's FETCH actions name the channel with its subdir
    return Package(
        name=str(data["name"]),
        version=str(data["version"]),
        kind="conda",
        url=url,
        sha256=data.get("sha256") or None,
        md5=data.get("md5") or None,
        build=data.get("build") or data.get("build_string") or None,
        channel=channel,
        subdir=subdir,
        filename=filename,
        size=data["size"] if isinstance(data.get("size"), int) and data["size"] > 0 else None,
    )


def channel_sources(channels: tuple[str, ...], mirrors: Mirrors) -> tuple[str, ...]:
    """A recipe's channels as the solver should fetch them: a mirrored channel by its mirror's URL,
    any other as written (a name, a URL or a folder)."""
    out = []
    for channel in channels:
        url = channel_url(channel)
        out.append(mirrors.to_mirror(url) if mirrors.rule_for(url) else channel)
    return tuple(out)


def canonical(pkg: Package, mirrors: Mirrors) -> Package:
    """A package a solver reported through a channel mirror -> its canonical URL and channel."""
    url, channel = mirrors.to_upstream(pkg.url), mirrors.to_upstream(pkg.channel) if pkg.channel else None
    return pkg if (url, channel) == (pkg.url, pkg.channel) else pkg.replace(url=url, channel=channel)


def restore_urls(prefix: Path, packages: Iterable[Package]) -> None:
    """conda-meta must name where a package came from (its canonical URL), not the cache copy or the
    mirror it was linked from: drift checks compare it with the lock."""
    for pkg in packages:
        meta = prefix / "conda-meta" / f"{pkg.name}-{pkg.version}-{pkg.build}.json"
        try:
            data = json.loads(limits.read_bytes(meta, what="Package record", limit=limits.META))
        except (OSError, ValueError, CuenvError):
            continue
        if not isinstance(data, dict):
            continue
        data["url"] = pkg.url
        if pkg.channel:
            data["channel"] = pkg.channel
        meta.write_text(json.dumps(data, indent=2) + "\n", encoding="utf-8")


def read_conda_meta(prefix: Path) -> tuple[Package, ...]:
    meta = prefix / "conda-meta"
    if not meta.is_dir():
        return ()
    packages = []
    for path in sorted(meta.glob("*.json")):
        try:  # bounded, regular files only (issue 31 §8)
            record = json.loads(limits.read_bytes(path, what="Package record", limit=limits.META))
            packages.append(package_from_record(record))
        except (OSError, ValueError, KeyError, TypeError, AttributeError, CuenvError):
            continue  # not a package record (or a broken one: drift checks then report it missing)
    return tuple(sorted(packages, key=lambda p: p.key))


def conda_layout(prefix: Path) -> CudaLayout:
    """bin, lib, include and CUDA's ``targets/<arch>-linux/{lib,include}``; CUDA_HOME is the prefix."""
    targets = sorted(prefix.glob("targets/*-linux"))
    return CudaLayout(
        prefix=prefix,
        kind="conda",
        bin_dirs=(prefix / "bin",),
        lib_dirs=(prefix / "lib", *[t / "lib" for t in targets if (t / "lib").is_dir()]),
        include_dirs=tuple(p for p in (prefix / "include", *[t / "include" for t in targets]) if p.is_dir()),
        cuda_home=prefix,
    )


def with_pip_layer(prefix: Path, solution: Solution, layer: Request | None, *, environ: Mapping[str, str],
                   cache_dir: Path, mirrors: Mirrors, progress: Progress | None = None) -> Solution | None:
    """After a conda engine linked ``solution``'s conda packages: install its locked wheels (from a lock),
    or resolve and install ``layer`` (an environment.yml's ``pip:`` section), through ``mirrors``. Returns the solution with the
    layer's wheels added, or None when nothing was added to it."""
    from cuenv.engines import piplayer

    locked = tuple(p for p in solution.packages if p.kind == "pypi")
    if locked:
        piplayer.install(prefix, locked, environ=environ, cache_dir=cache_dir, progress=progress, mirrors=mirrors)
        return None
    if layer is None or not layer.requirements:
        return None
    emit(progress, Step("solve", f"pip layer: {len(layer.requirements)} requirements against {prefix}"))
    wheels = piplayer.resolve(prefix, layer, environ=environ, cache_dir=cache_dir, glibc=None, mirrors=mirrors)
    piplayer.install(prefix, wheels, environ=environ, cache_dir=cache_dir, progress=progress, mirrors=mirrors)
    return solution.replace(packages=solution.packages + wheels)
