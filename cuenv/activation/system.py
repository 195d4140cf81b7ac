"""System CUDA toolkits as activation targets: `cuenv use system:X.Y` (issue 5 §7).

Discovery is cuenv.machine.toolkits.discover (CUDA_HOME/CUDA_PATH, /usr/local/cuda*, /opt/cuda*, or the
parents in CUENV_TOOLKIT_ROOTS); this module only turns a found toolkit into an activation target.
"""

from __future__ import annotations

from pathlib import Path
from typing import Final, Mapping, Sequence

from cuenv.activation.target import ActivationTarget, CudaLayout
from cuenv.errors import NotFound
from cuenv.machine.toolkits import SystemToolkit, discover

PREFIX: Final = "system:"


def _version_key(kit: SystemToolkit) -> tuple[tuple[int, ...], str]:
    return tuple(int(x) for x in (kit.version or "0").split(".")), kit.path


def activatable(environ: Mapping[str, str], found: Sequence[SystemToolkit] | None = None) -> list[SystemToolkit]:
    """The system toolkits that can be activated: those with a root folder and a known version, oldest first.
    ``found``: what ``discover(environ)`` answered already (create asks once, while uv installs)."""
    kits = {kit.path: kit for kit in (discover(environ) if found is None else found)
            if kit.version and Path(kit.path).is_dir()}
    return sorted(kits.values(), key=_version_key)


def toolkit_roots(environ: Mapping[str, str], found: Sequence[SystemToolkit] | None = None) -> list[Path]:
    return [Path(kit.path) for kit in activatable(environ, found)]


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
    kits = activatable(environ)
    matches = [t for t in kits if t.version == wanted or t.path == wanted]
    if not matches:
        have = ", ".join(f"system:{t.version}" for t in kits) or "none found"
        raise NotFound(f"No system CUDA toolkit {wanted!r} on this machine (have: {have}).",
                       hint="Run `cuenv list --system` to see the toolkits cuenv found.")
    return ActivationTarget(name=f"{PREFIX}{matches[-1].version}", layout=layout_of(Path(matches[-1].path)))
