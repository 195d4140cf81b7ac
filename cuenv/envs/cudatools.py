"""An environment's CUDA tools, as they really are (issue 17 §1, §3).

At create time (and `cuenv sync`) this finds which CUDA tools the environment has, which system
toolkits of the same release exist, writes the shims for the rest (cuenv.activation.shims), and
returns the record kept in the environment's metadata under ``tools``: what `info`, `list`, doctor
and the TUI show, instead of what the recipe nominally promised.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path

from cuenv.activation import shims
from cuenv.envs import folder
from cuenv.envs.meta import Tool

TYPE_CHECKING = False  # no `typing` at run time: the start-up path does without it (issue 29)
if TYPE_CHECKING:
    from typing import Final

    from cuenv.activation.target import CudaLayout
    from cuenv.envs.meta import EnvMeta
    from cuenv.machine.toolkits import SystemToolkit


def env_release(meta: EnvMeta) -> str | None:
    """The CUDA release the environment really has: its resolved runtime, else the recipe's."""
    return shims.release(meta.resolved.get("libcudart")) or shims.release(meta.cuda)


def system_toolkits(environ: Mapping[str, str], found: Sequence[SystemToolkit] | None = None) -> list[shims.Toolkit]:
    """The system toolkits as shims choose among them; ``found``: what ``discover(environ)`` answered already."""
    from cuenv.machine import toolkits

    out = []
    for kit in toolkits.discover(environ) if found is None else found:
        root = Path(kit.path)
        tools = shims.scan_tools([root / "bin"])
        if kit.nvcc and "nvcc" not in tools:
            tools["nvcc"] = kit.nvcc
        out.append(shims.Toolkit(kit.path, kit.version, tools))
    return out


def install(*, name: str, layout: CudaLayout, meta: EnvMeta, shims_dir: Path,
            toolkits: Sequence[shims.Toolkit], compiler_hint: str | None) -> dict[str, Tool]:
    """Write the shims of environment ``name``; returns where each tool comes from (meta's ``tools``)."""
    rel = env_release(meta)
    choices = shims.choose(env_tools=shims.scan_tools(layout.bin_dirs), env_release=rel, toolkits=toolkits)
    scripts = {
        c.tool: shims.script(choice=c, env_name=name, env_release=rel, shims_dir=str(shims_dir),
                             remedies=shims.remedy_lines(tool=c.tool, env_name=name, env_release=rel,
                                                         compiler_hint=compiler_hint if c.tool == "nvcc" else None))
        for c in shims.shimmed(choices)
    }
    folder.write_shims(shims_dir, scripts)
    return {c.tool: Tool(c.source, c.path, c.toolkit) for c in choices}


def install_here(*, name: str, prefix: Path, layout: CudaLayout, meta: EnvMeta, environ: Mapping[str, str],
                 compiler_hint: str | None, found: Sequence[SystemToolkit] | None = None) -> dict[str, Tool]:
    """``install`` for an environment of this machine, with the system toolkits found here (``found``, when
    ``discover(environ)`` answered already)."""
    return install(name=name, layout=layout, meta=meta, shims_dir=folder.shims_dir(prefix),
                   toolkits=system_toolkits(environ, found), compiler_hint=compiler_hint)


def nvcc_summary(meta: EnvMeta) -> str:
    """ "12.1 (the environment's)", "12.1 (system toolkit /usr/local/cuda-12.1)", "none" or "unknown":
    one cell for `list` and the TUI."""
    nvcc = meta.tools.get("nvcc") if meta.tools is not None else None
    if nvcc is None:
        return "unknown"  # made before cuenv recorded its tools
    rel = env_release(meta) or "?"
    if nvcc.source == "env":
        return f"{rel} (own)"
    if nvcc.source == "system":
        return f"{rel} (system {nvcc.toolkit})"
    return "none"


def nvcc_note(name: str, meta: EnvMeta, compiler_hint: str | None) -> str | None:
    """What `create` says when the environment has no nvcc of its own: a shim or a system toolkit's
    answers to the name instead (None when it has one, or its tools were not recorded)."""
    nvcc = meta.tools.get("nvcc") if meta.tools is not None else None
    if nvcc is None or nvcc.source == "env":
        return None
    rel = env_release(meta) or "unknown"
    if nvcc.source == "system":
        return f"{name} has no nvcc of its own; `nvcc` in it runs {nvcc.path} (system toolkit, CUDA {rel})."
    get = (f"`{compiler_hint}`" if compiler_hint else
           f"install a CUDA {rel} toolkit and run `cuenv use system:{rel}`")
    if compiler_hint and "--engine venv" not in compiler_hint:  # a conda route: it downloads from conda-forge
        get += " (it downloads from conda-forge: that channel reachable, or mirrored as docs/guides/mirrors.md shows)"
    return (f"{name} has no nvcc (CUDA {rel}): `nvcc` in it is a cuenv stand-in that runs no other CUDA release; "
            f"for nvcc {rel}: {get}.")


NOMINAL: Final = " (nominal)"  # a recipe's promise, shown when the installed version is unknown


def facts(meta: EnvMeta | None) -> dict[str, str]:
    """What is really installed, for `info`, `list` and the TUI: ``cuda`` (the resolved runtime's
    release), ``cudnn`` and ``nvcc``; a value read only from the recipe is marked " (nominal)".
    None (an environment whose meta cannot be read) knows nothing."""
    if meta is None:
        return {"cuda": "-", "cudnn": "-", "nvcc": "unknown"}
    runtime = shims.release(meta.resolved.get("libcudart"))
    cuda = runtime or (f"{meta.cuda}{NOMINAL}" if meta.cuda else "-")
    cudnn = meta.resolved.get("cudnn") or (f"{meta.cudnn}{NOMINAL}" if meta.cudnn else "-")
    return {"cuda": cuda, "cudnn": cudnn, "nvcc": nvcc_summary(meta)}
