"""A CUDA_HOME for environments whose CUDA is spread over wheels (issue 4 §4).

NVIDIA's wheels put each component in its own ``site-packages/nvidia/<component>/{bin,include,lib}``
(CUDA 13: one ``nvidia/cu13`` tree). Tools that want ``$CUDA_HOME/include/cuda_runtime_api.h`` and
``$CUDA_HOME/lib64/libcudart.so`` (torch cpp extensions, CMake's FindCUDAToolkit, CuPy) get a small
tree of relative symlinks: ``bin/``, ``include/``, ``lib64/`` (+ ``lib`` -> ``lib64``), ``nvvm/``.
"""

from __future__ import annotations

import os
import re
import shutil
from pathlib import Path

TYPE_CHECKING = False  # no `typing` at run time (issue 29)
if TYPE_CHECKING:
    from typing import Final, Iterable, Mapping

_SUBDIRS: Final = (("bin", "bin"), ("include", "include"), ("lib", "lib64"), ("lib64", "lib64"))
_SKIP: Final = ("__init__.py", "__pycache__")
_VERSIONED_SO: Final = r"^(lib[^/]+\.so)\.\d+(\.\d+)*$"


def links(home: Path, components: Iterable[Path]) -> dict[str, str]:
    """The links of ``components``' CUDA_HOME: each path in ``home`` -> its relative target. Only the
    components' folders are listed: nothing is made. The first component to provide a name keeps it
    (components come cu13-first, sorted).

    Strings and one relative path per folder rather than pathlib per entry: a CUDA 12 venv links ~80
    files, and this runs on every create (issue 29)."""
    found: dict[str, str] = {"lib": "lib64"}
    for comp in components:
        for src_name, dest_name in _SUBDIRS:
            src = os.path.join(comp, src_name)
            names = [n for n in _names(src) if n not in _SKIP]
            if names:
                rel = os.path.relpath(src, os.path.join(home, dest_name))
                for name in names:
                    found.setdefault(f"{dest_name}/{name}", os.path.join(rel, name))
        if (comp / "nvvm").is_dir():
            found.setdefault("nvvm", os.path.relpath(comp / "nvvm", home))
    for path in sorted(p for p in found if p.startswith("lib64/")):  # libcudart.so -> libcudart.so.12
        match = re.match(_VERSIONED_SO, path[len("lib64/"):])
        if match:
            found.setdefault(f"lib64/{match.group(1)}", match.group(0))
    return found


def plant(home: Path, planned: Mapping[str, str]) -> None:
    """``home`` made afresh as exactly the links ``planned`` (a tree there before is removed: only
    symlinks we made, which rmtree does not follow). A link may point at a file not there yet."""
    if home.is_symlink() or home.is_file():
        home.unlink()
    elif home.is_dir():
        shutil.rmtree(home)
    for sub in ("bin", "include", "lib64"):
        os.makedirs(os.path.join(home, sub), exist_ok=True)
    for path, target in planned.items():
        os.symlink(target, os.path.join(home, path))


def build_cuda_home(home: Path, components: Iterable[Path], *, planted: Mapping[str, str] | None = None) -> dict[str, str]:
    """(Re)build ``home`` as symlinks into ``components``; returns its links. ``planted``: the links
    :func:`plant` already made there (from a prediction, while the components were being installed),
    kept when they are exactly the ones the components need, else replaced."""
    wanted = links(home, components)
    if planted != wanted:
        plant(home, wanted)
    return wanted


def _names(folder: str) -> list[str]:
    """The entries of ``folder`` (followed if a link) sorted, or none where it is no folder."""
    try:
        return sorted(os.listdir(folder))
    except (FileNotFoundError, NotADirectoryError):
        return []


# A second environment of the same NVIDIA wheels gets the same links: those of the first are kept in
# cuenv's cache and planted while uv installs the wheels, and only checked (the folders listed) after
# it; planting them after the install was a tenth of a warm create (issue 29).
def remembered(cache_dir: Path, key: str) -> dict[str, str] | None:
    """The links kept for ``key`` (:func:`memo_key`), or None; any that could reach out of the
    CUDA_HOME (a damaged cache) makes it None."""
    import json

    try:
        found = json.loads((cache_dir / "cuda-home" / f"{key}.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if not isinstance(found, dict) or not all(isinstance(t, str) and t and "\0" not in t and _inside(p) for p, t in found.items()):
        return None
    return found


def remember(cache_dir: Path, key: str, made: Mapping[str, str]) -> None:
    import json

    from cuenv import atomic

    try:
        atomic.write_text(cache_dir / "cuda-home" / f"{key}.json", json.dumps(made, sort_keys=True))
    except OSError:
        pass  # a cache only: the next create builds them again


def memo_key(wheels: Iterable[tuple[str, str, str]], home: Path, site: Path) -> str:
    """The key of the links ``wheels`` ((name, version, sha256) of the NVIDIA ones) make in ``home``
    for a site-packages at ``site``."""
    import hashlib

    text = "\n".join([os.path.relpath(site, home), *sorted("\t".join(w) for w in wheels)])
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:32]


def _inside(path: object) -> bool:
    if not isinstance(path, str):
        return False
    if path in ("lib", "nvvm"):
        return True
    folder, _, name = path.partition("/")
    return folder in ("bin", "include", "lib64") and name not in ("", ".", "..") and "/" not in name and "\0" not in name
