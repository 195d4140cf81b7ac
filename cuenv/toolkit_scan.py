"""System CUDA toolkits as activation targets: `cuenv use system:X.Y` (issue 5 §7).

Discovery is cuenv.toolkits.discover (CUDA_HOME/CUDA_PATH, /usr/local/cuda*, /opt/cuda*, or the
parents in CUENV_TOOLKIT_ROOTS); this module turns a found toolkit into an activation target.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Final, Mapping

from cuenv.errors import NotFound
from cuenv.layout import ActivationTarget, CudaLayout

PREFIX: Final = "system:"


@dataclass(frozen=True)
class SystemToolkit:
    version: str  # "12.1"
    root: Path


def discover(environ: Mapping[str, str]) -> list[SystemToolkit]:
    """The system toolkits that can be activated: those with a root folder and a known version,
    oldest first (cuenv.toolkits finds them)."""
    from cuenv.toolkits import discover as find_all

    kits = {Path(t.path): t.version for t in find_all(environ) if t.version and Path(t.path).is_dir()}
    return sorted((SystemToolkit(v, root) for root, v in kits.items()),
                  key=lambda t: (tuple(int(x) for x in t.version.split(".")), str(t.root)))


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
