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
    from typing import Final, Iterable

_SUBDIRS: Final = (("bin", "bin"), ("include", "include"), ("lib", "lib64"), ("lib64", "lib64"))
_SKIP: Final = ("__init__.py", "__pycache__")
_VERSIONED_SO: Final = r"^(lib[^/]+\.so)\.\d+(\.\d+)*$"


def _link(dest: str, target: str) -> None:
    """``dest`` -> ``target`` (relative), unless ``dest`` is taken: the first component to provide a name keeps
    it (components come cu13-first, sorted)."""
    try:
        os.symlink(target, dest)
    except FileExistsError:
        pass


def _names(folder: str) -> list[str]:
    """The entries of ``folder`` (followed if a link) sorted, or none where it is no folder."""
    try:
        return sorted(os.listdir(folder))
    except (FileNotFoundError, NotADirectoryError):
        return []


def build_cuda_home(home: Path, components: Iterable[Path]) -> Path:
    """(Re)build ``home`` as symlinks into ``components``; returns ``home``.

    Strings and one relative path per folder rather than pathlib per entry: a CUDA 12 venv links ~80 files,
    and this ran on every create (issue 29)."""
    if home.is_symlink() or home.is_file():
        home.unlink()
    elif home.is_dir():
        shutil.rmtree(home)  # only symlinks we made: rmtree does not follow them
    for sub in ("bin", "include", "lib64"):
        (home / sub).mkdir(parents=True, exist_ok=True)
    (home / "lib").symlink_to("lib64")
    for comp in components:
        for src_name, dest_name in _SUBDIRS:
            src, dest = os.path.join(comp, src_name), os.path.join(home, dest_name)
            names = [n for n in _names(src) if n not in _SKIP]
            if names:
                rel = os.path.relpath(src, dest)
                for name in names:
                    _link(os.path.join(dest, name), os.path.join(rel, name))
        if (comp / "nvvm").is_dir():
            _link(os.path.join(home, "nvvm"), os.path.relpath(comp / "nvvm", home))
    _add_dev_links(os.path.join(home, "lib64"))
    return home


def _add_dev_links(lib64: str) -> None:
    """``libcudart.so`` -> ``libcudart.so.12``: the wheels ship only the versioned names, and
    ``-lcudart`` needs the plain one."""
    for name in _names(lib64):
        match = re.match(_VERSIONED_SO, name)
        if match:
            _link(os.path.join(lib64, match.group(1)), name)
