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
from typing import Final, Iterable

_SUBDIRS: Final = (("bin", "bin"), ("include", "include"), ("lib", "lib64"), ("lib64", "lib64"))
_SKIP: Final = ("__init__.py", "__pycache__")
_VERSIONED_SO: Final = re.compile(r"^(lib[^/]+\.so)\.\d+(\.\d+)*$")


def _link(dest: Path, target: Path) -> None:
    if dest.exists() or dest.is_symlink():
        return  # the first component to provide a name keeps it (components come cu13-first, sorted)
    dest.symlink_to(os.path.relpath(target, dest.parent))


def build_cuda_home(home: Path, components: Iterable[Path]) -> Path:
    """(Re)build ``home`` as symlinks into ``components``; returns ``home``."""
    if home.is_symlink() or home.is_file():
        home.unlink()
    elif home.is_dir():
        shutil.rmtree(home)  # only symlinks we made: rmtree does not follow them
    for sub in ("bin", "include", "lib64"):
        (home / sub).mkdir(parents=True, exist_ok=True)
    (home / "lib").symlink_to("lib64")
    for comp in components:
        for src_name, dest_name in _SUBDIRS:
            src = comp / src_name
            if not src.is_dir():
                continue
            for entry in sorted(src.iterdir()):
                if entry.name not in _SKIP:
                    _link(home / dest_name / entry.name, entry)
        if (comp / "nvvm").is_dir():
            _link(home / "nvvm", comp / "nvvm")
    _add_dev_links(home / "lib64")
    return home


def _add_dev_links(lib64: Path) -> None:
    """``libcudart.so`` -> ``libcudart.so.12``: the wheels ship only the versioned names, and
    ``-lcudart`` needs the plain one."""
    for entry in sorted(lib64.iterdir()):
        match = _VERSIONED_SO.match(entry.name)
        if match:
            _link(lib64 / match.group(1), lib64 / entry.name)
