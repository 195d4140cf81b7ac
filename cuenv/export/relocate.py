"""An environment's recorded paths moved to another prefix (issue 7: images, pack/unpack).

Pure: a path under the old prefix gets the new prefix, anything else is kept. The prefix's own
files are moved by the well-kept tools (conda-pack, or a re-install from the lock); only what
cuenv itself records (meta.json's layout, conda activate.d scripts) is rewritten here.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Mapping

from cuenv.envs.cudalayout import CudaLayout


def moved(path: str | Path, old: str | Path, new: str | Path) -> str:
    """``path`` with its ``old`` prefix replaced by ``new`` (unchanged when not under ``old``)."""
    text, root = str(path), str(old).rstrip("/") or "/"
    if text == root:
        return str(new)
    if text.startswith(root + "/"):
        return str(new).rstrip("/") + text[len(root):]
    return text


def moved_layout(layout: CudaLayout, new: str | Path) -> CudaLayout:
    old = layout.prefix

    def each(paths: tuple[Path, ...]) -> tuple[Path, ...]:
        return tuple(Path(moved(p, old, new)) for p in paths)

    return CudaLayout(
        prefix=Path(new),
        kind=layout.kind,
        bin_dirs=each(layout.bin_dirs),
        lib_dirs=each(layout.lib_dirs),
        include_dirs=each(layout.include_dirs),
        cuda_home=Path(moved(layout.cuda_home, old, new)) if layout.cuda_home else None,
    )


def moved_meta(meta: Mapping[str, Any], *, name: str, new: str | Path) -> dict[str, Any]:
    """meta.json of the same environment registered as ``name`` at prefix ``new``."""
    from cuenv.envs.meta import layout_from_json, layout_to_json

    layout = layout_from_json(meta["layout"])
    out = dict(meta)
    out["name"] = name
    out["layout"] = layout_to_json(moved_layout(layout, new))
    out["activate_scripts"] = [moved(p, layout.prefix, new) for p in meta.get("activate_scripts", ())]
    # which CUDA tools it has and what stands in for the others is the new place's fact: recomputed there
    out.pop("tools", None)
    return out
