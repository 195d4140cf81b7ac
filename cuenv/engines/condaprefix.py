"""What conda-family engines share: reading a prefix's conda-meta, its CUDA layout, the specs.

Pure file reading, no rattler import: conda, mamba, micromamba and rattler all write
``conda-meta/<name>-<version>-<build>.json`` with url, md5 and (recent versions) sha256.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any, Mapping

from cuenv.engines.base import Package, Request
from cuenv.envs.cudalayout import CudaLayout

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


def read_conda_meta(prefix: Path) -> tuple[Package, ...]:
    meta = prefix / "conda-meta"
    if not meta.is_dir():
        return ()
    packages = []
    for path in sorted(meta.glob("*.json")):
        try:
            packages.append(package_from_record(json.loads(path.read_text(encoding="utf-8"))))
        except (OSError, ValueError, KeyError):
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
