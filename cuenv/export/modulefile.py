"""What an HPC modulefile of an environment does, whatever language writes it (issue 7 §3).

The environment stays where it is (a shared filesystem every node mounts); the module applies the
same activation as `cuenv use` (cuenv.activation.plan.plan_for): the environment's bin and lib
directories in front of PATH and LD_LIBRARY_PATH, CUDA_HOME and the recipe's variables set (and
put back on unload), in the module family ``cuda`` so that two CUDA stacks are never loaded together.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Final

from cuenv.activation.plan import Plan
from cuenv.export import ExportSource

FAMILY: Final = "cuda"
# Site modules that bring another CUDA toolkit under these names (CUDA's, NVIDIA HPC SDK's).
CONFLICTS: Final = ("cuda", "cudatoolkit")
MODULE_DIR: Final = "cuenv"  # modules land at DIR/cuenv/NAME: `module load cuenv/NAME`


@dataclass(frozen=True)
class ModuleSpec:
    name: str
    prefix: str
    prepend: tuple[tuple[str, tuple[str, ...]], ...]  # (variable, dirs in the order they end up)
    set: tuple[tuple[str, str], ...]
    whatis: tuple[str, ...]
    help: str
    plan: Plan  # the activation plan: its strip rules are applied on load too (cuenv.export.modstrip)


def module_spec(source: ExportSource) -> ModuleSpec:
    from cuenv.activation.plan import plan_for
    from cuenv.knowledge import matrix

    record = source.record
    meta = record.meta
    plan = plan_for(record.target(), envs_dir=Path(source.home) / "envs")
    cuda = meta.cuda
    stack = meta.stack
    driver = matrix.min_driver(cuda) if cuda else None
    rows = [
        f"Name: cuenv environment {record.name}",
        f"Recipe: {meta.recipe.name}",
        f"CUDA: {cuda}",
        f"cuDNN: {meta.cudnn}" if meta.cudnn else "",
        f"Framework: {meta.framework}" if meta.framework else "",
        f"Driver: >= {driver}" if driver else "",
        f"GPUs: compute capability {', '.join(stack.sass)}" if stack.sass else "",
        f"Prefix: {record.prefix}",
    ]
    help_text = "\n".join([
        f"cuenv environment {record.name} ({stack.label or record.name}, CUDA {cuda}), built by cuenv at",
        f"  {record.prefix}",
        "Loading it puts the environment's tools and CUDA libraries first on PATH and LD_LIBRARY_PATH,",
        "takes other CUDA toolkits off them (unload puts them back) and sets CUDA_HOME.",
        "It is in the module family 'cuda': one CUDA stack at a time.",
        f"It needs an NVIDIA driver >= {driver} on the node." if driver else "",
        f"Check a node with: cuenv check {record.name}",
    ]).rstrip("\n")
    return ModuleSpec(
        name=record.name,
        prefix=str(record.prefix),
        prepend=tuple((e.var, e.prepend) for e in plan.paths if e.prepend),
        set=plan.set,
        whatis=tuple(r for r in rows if r),
        help=help_text.replace("\n\n", "\n"),
        plan=plan,
    )
