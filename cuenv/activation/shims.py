"""Which CUDA tool a name resolves to inside an environment (issue 17 §1).

`cuenv use cuda-12.1` on a machine with a system CUDA 13.0 toolkit must not leave ``nvcc`` pointing
at 13.0. For every CUDA tool a user runs by name (CUDA_TOOLS) ``choose`` decides, from facts passed
in, what that name is inside the environment:

  ``env``     the environment has it (a conda ``cuda-nvcc``, a CUDA 13 wheel's ``bin/nvcc``);
  ``system``  a system toolkit of the same CUDA release has it: a shim runs that one (named);
  ``shim``    nothing matching: a shim explains, in one message, that this environment has no such
              tool, which CUDA the next one on PATH belongs to, and how to get a matching one.

Shims live in one folder inside the environment that activation puts right after the environment's
own bin folders, so they win over ``/usr/local/bin`` (which cannot be stripped from PATH). At run
time a shim still runs the next tool on PATH when it is of the environment's release (a toolkit
installed after `create`), or any of them when ``CUENV_ALLOW_FOREIGN_NVCC=1`` is set: the
documented escape. Everything here is pure except ``scan_tools``; ``cuenv.envs.folder.write_shims`` writes them.
"""

from __future__ import annotations

import os
import re
import shlex
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path

from cuenv.envs.folder import META_DIR, SHIM_MARK, SHIMS_DIR, is_shim
from cuenv.plain import Plain

TYPE_CHECKING = False  # no `typing` at run time: the start-up path does without it (issue 29)
if TYPE_CHECKING:
    from typing import Final, Literal

    Source = Literal["env", "system", "shim"]

# The CUDA toolkit's command-line tools (CUDA Toolkit documentation, "CUDA Binary Utilities" and
# "NVCC": https://docs.nvidia.com/cuda/cuda-binary-utilities/, https://docs.nvidia.com/cuda/cuda-compiler-driver-nvcc/).
CUDA_TOOLS: Final = (
    "nvcc", "ptxas", "nvlink", "fatbinary", "cudafe++", "bin2c", "nvprune",
    "cuobjdump", "nvdisasm", "cu++filt", "cuda-gdb", "compute-sanitizer",
)
ESCAPE_VAR: Final = "CUENV_ALLOW_FOREIGN_NVCC"  # =1: run the next tool on PATH, whatever its release
SHIM_EXIT: Final = 127  # "command not found": build systems treat the tool as missing
_RELEASE_RE: Final = re.compile(r"^(\d+)\.(\d+)")



class Toolkit(Plain):
    """A system CUDA toolkit as far as tool resolution cares (a plain class: `list` imports this module)."""

    __slots__ = ("release", "root", "tools")

    def __init__(self, root: str, release: str | None, tools: Mapping[str, str]) -> None:
        self.root = root
        self.release = release  # "12.1"
        self.tools = tools  # tool name -> absolute path of that tool in this toolkit


class ToolChoice(Plain):
    __slots__ = ("path", "source", "tool", "toolkit")

    def __init__(self, tool: str, source: Source, path: str | None, toolkit: str | None = None) -> None:
        self.tool = tool
        self.source = source
        self.path = path  # the environment's tool, or the same-release toolkit's; None for a bare shim
        self.toolkit = toolkit  # the root of that toolkit when source == "system"


def release(version: str | None) -> str | None:
    """ "12.1.105" -> "12.1"; None when it is not a version."""
    match = _RELEASE_RE.match(version or "")
    return f"{int(match.group(1))}.{int(match.group(2))}" if match else None


def choose(*, env_tools: Mapping[str, str], env_release: str | None, toolkits: Sequence[Toolkit]) -> tuple[ToolChoice, ...]:
    """One choice per CUDA tool, in CUDA_TOOLS order.

    A system toolkit is used only when its release equals the environment's; the first one (in the
    caller's order) that has the tool wins. An environment of unknown release gets shims throughout.
    """
    wanted = release(env_release)
    same = [t for t in toolkits if wanted is not None and release(t.release) == wanted]
    out = []
    for tool in CUDA_TOOLS:
        if tool in env_tools:
            out.append(ToolChoice(tool, "env", env_tools[tool]))
            continue
        kit = next((t for t in same if tool in t.tools), None)
        if kit is not None:
            out.append(ToolChoice(tool, "system", kit.tools[tool], kit.root))
        else:
            out.append(ToolChoice(tool, "shim", None))
    return tuple(out)


def shimmed(choices: Iterable[ToolChoice]) -> tuple[ToolChoice, ...]:
    """The choices that need a file in the shims folder."""
    return tuple(c for c in choices if c.source != "env")


def describe(choice: ToolChoice, env_release: str | None) -> str:
    """One line for `info` and doctor: what the name resolves to."""
    if choice.source == "env":
        return f"{choice.path} (the environment's own)"
    if choice.source == "system":
        return f"{choice.path} (system toolkit {choice.toolkit}, CUDA {release(env_release)})"
    return f"none in this environment: a cuenv shim names the next one on PATH and refuses another release ({ESCAPE_VAR}=1 runs it)"


def remedy_lines(*, tool: str, env_name: str, env_release: str | None, compiler_hint: str | None) -> tuple[str, ...]:
    """How to get a matching tool: the shim prints these lines as they are. ``compiler_hint`` is a
    cuenv command that builds this environment's recipe with its compiler, when one exists."""
    rel = release(env_release)
    lines = []
    if compiler_hint:
        lines.append(f"get one: `{compiler_hint}`")
    if rel:
        lines.append(f"or install a CUDA {rel} toolkit and run `cuenv use system:{rel}` (`cuenv list --system` shows those found)")
    lines.append(f"run the other one anyway: {ESCAPE_VAR}=1 {tool} ...")
    return tuple(lines)


def script(*, choice: ToolChoice, env_name: str, env_release: str | None, shims_dir: str, remedies: Sequence[str]) -> str:
    """A POSIX sh shim for one tool (see the module docstring for what it does at run time).

    It walks PATH itself (no ``which``: not on every system), skips every cuenv shims folder (no loops
    between two environments), and learns the next tool's release from its ``--version`` output
    ("Cuda compilation tools, release 13.0, V13.0.88").
    """
    tool = choice.tool
    rel = release(env_release) or ""
    q = shlex.quote
    head = f"cuenv: environment {env_name} (CUDA {rel or 'unknown'}) has no {tool}"
    other = f"is CUDA ${{__cuenv_other:-of an unknown release}}, not {rel or 'this environment'}'s."
    same = choice.path if choice.source == "system" and choice.path else ""
    body = "\n".join(f"    printf '%s\\n' {q('  ' + line)} >&2" for line in remedies)
    return f"""#!/bin/sh
{SHIM_MARK} {tool}: environment {env_name} (CUDA {rel or 'unknown'}) has no {tool} of its own.
# Written by cuenv; `cuenv create --force` rewrites it. Escape: {ESCAPE_VAR}=1.
__cuenv_tool={q(tool)}
__cuenv_rel={q(rel)}
__cuenv_same={q(same)}
if [ -n "$__cuenv_same" ] && [ -x "$__cuenv_same" ]; then exec "$__cuenv_same" "$@"; fi
__cuenv_next=
__cuenv_rest=${{PATH-}}
while [ -n "$__cuenv_rest" ]; do
    __cuenv_d=${{__cuenv_rest%%:*}}
    case $__cuenv_rest in *:*) __cuenv_rest=${{__cuenv_rest#*:}} ;; *) __cuenv_rest= ;; esac
    case $__cuenv_d in ''|{q(shims_dir)}|*/{META_DIR}/{SHIMS_DIR}) continue ;; esac
    if [ -f "$__cuenv_d/$__cuenv_tool" ] && [ -x "$__cuenv_d/$__cuenv_tool" ]; then
        __cuenv_next=$__cuenv_d/$__cuenv_tool
        break
    fi
done
if [ -n "$__cuenv_next" ] && [ "${{{ESCAPE_VAR}-}}" = 1 ]; then exec "$__cuenv_next" "$@"; fi
__cuenv_other=
if [ -n "$__cuenv_next" ]; then
    __cuenv_other=$("$__cuenv_next" --version 2>/dev/null </dev/null | sed -n 's/.*release \\([0-9][0-9]*\\.[0-9][0-9]*\\).*/\\1/p' | head -n 1)
    if [ -n "$__cuenv_rel" ] && [ "$__cuenv_other" = "$__cuenv_rel" ]; then exec "$__cuenv_next" "$@"; fi
fi
{{
    if [ -z "$__cuenv_next" ]; then
        printf '%s\\n' {q(f"{head}, and there is no other {tool} on PATH.")}
    else
        printf '%s\\n' "{head}; the next {tool} on PATH, $__cuenv_next, {other}"
    fi
{body}
}} >&2
exit {SHIM_EXIT}
"""


# ---- the edge: read an environment's bin folders (cuenv.envs.folder.write_shims writes the shims) ----


def scan_tools(bin_dirs: Iterable[Path]) -> dict[str, str]:
    """The CUDA tools found in ``bin_dirs`` (first folder wins), shims excluded."""
    found: dict[str, str] = {}
    for folder in bin_dirs:
        for tool in CUDA_TOOLS:
            path = Path(folder) / tool
            if tool not in found and path.is_file() and os.access(path, os.X_OK) and not is_shim(path):
                found[tool] = str(path)
    return found
