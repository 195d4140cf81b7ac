"""System CUDA toolkits as activation targets: `cuenv use system:X.Y` (issue 5 §7).

Discovery is ``cuenv.toolkits.discover(environ)`` when that module exists; otherwise a small scan of
``/usr/local/cuda-*`` and ``/opt/cuda*`` (or the folders in CUENV_TOOLKIT_ROOTS, for tests and
unusual installs).
"""

from __future__ import annotations

import json
import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final, Mapping

from cuenv.errors import NotFound
from cuenv.layout import ActivationTarget, CudaLayout

PREFIX: Final = "system:"
DEFAULT_ROOTS: Final = ("/usr/local", "/opt")
_DIR_RE: Final = re.compile(r"cuda(?:-(\d+\.\d+(?:\.\d+)?))?")


@dataclass(frozen=True)
class SystemToolkit:
    version: str  # "12.1"
    root: Path


def _version_json(root: Path) -> str | None:
    try:
        data = json.loads((root / "version.json").read_text(encoding="utf-8"))
        full = str(data["cuda"]["version"])
    except (OSError, ValueError, KeyError, TypeError):
        return None
    return ".".join(full.split(".")[:2])


def _looks_like_toolkit(root: Path) -> bool:
    return any((root / p).exists() for p in ("bin/nvcc", "bin/ptxas", "version.json", "lib64", "targets"))


def _scan(parents: tuple[str, ...]) -> list[SystemToolkit]:
    found: dict[Path, SystemToolkit] = {}
    for parent in parents:
        try:
            names = sorted(os.listdir(parent))
        except OSError:
            continue
        for name in names:
            m = _DIR_RE.fullmatch(name)
            root = Path(parent) / name
            if not m or root.is_symlink() or not root.is_dir() or not _looks_like_toolkit(root):
                continue  # /usr/local/cuda is usually a link to one of the others
            version = _version_json(root) or (".".join(m.group(1).split(".")[:2]) if m.group(1) else None)
            if version:
                found[root] = SystemToolkit(version, root)
    return sorted(found.values(), key=lambda t: (tuple(int(x) for x in t.version.split(".")), str(t.root)))


def _adapt(item: Any) -> SystemToolkit | None:
    root = next((getattr(item, a) for a in ("root", "prefix", "path") if getattr(item, a, None)), None)
    version = getattr(item, "version", None)
    if root is None or not version:
        return None
    return SystemToolkit(".".join(str(version).split(".")[:2]), Path(root))


def discover(environ: Mapping[str, str]) -> list[SystemToolkit]:
    if not environ.get("CUENV_TOOLKIT_ROOTS"):
        try:
            from cuenv.toolkits import discover as shared_discover  # written by the toolkits work
        except ImportError:
            pass
        else:
            return [t for t in (_adapt(i) for i in shared_discover(environ)) if t]
    parents = tuple(p for p in environ.get("CUENV_TOOLKIT_ROOTS", "").split(":") if p) or DEFAULT_ROOTS
    return _scan(parents)


def toolkit_roots(environ: Mapping[str, str]) -> list[Path]:
    return [t.root for t in discover(environ)]


def is_system(name: str) -> bool:
    return name.startswith(PREFIX)


def layout_of(root: Path) -> CudaLayout:
    bins = [root / "bin"] + ([root / "nvvm" / "bin"] if (root / "nvvm" / "bin").is_dir() else [])
    libs = [root / d for d in ("lib64", "lib", "extras/CUPTI/lib64") if (root / d).is_dir()]
    return CudaLayout(prefix=root, kind="system", bin_dirs=tuple(bins), lib_dirs=tuple(libs),
                      include_dirs=(root / "include",), cuda_home=root)


def system_target(name: str, environ: Mapping[str, str]) -> ActivationTarget:
    """``system:12.1`` -> the toolkit's target; the newest match when several share a version."""
    wanted = name[len(PREFIX):]
    kits = discover(environ)
    matches = [t for t in kits if t.version == wanted or str(t.root) == wanted]
    if not matches:
        have = ", ".join(f"system:{t.version}" for t in kits) or "none found"
        raise NotFound(f"No system CUDA toolkit {wanted!r} on this machine (have: {have}).",
                       hint="Run `cuenv list --system` to see the toolkits cuenv found.")
    return ActivationTarget(name=f"{PREFIX}{matches[-1].version}", layout=layout_of(matches[-1].root))
