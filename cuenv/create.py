"""`cuenv create`: validate -> solve -> lock -> install from the lock -> layout -> activation -> mark complete.

The environment is built in place (prefixes embed their path) and only the completion marker,
written last, makes it usable. Any failure, Ctrl-C included, removes what was built; a kill -9
leaves a folder without the marker, which `cuenv list` shows as incomplete and `create`/`remove`
clean up.
"""

from __future__ import annotations

import datetime as _dt
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Mapping, Sequence

from cuenv import __version__
from cuenv.errors import CuenvError, UsageError
from cuenv.stack import Finding, Stack
from cuenv.store import Store, layout_to_json, validate_name

# Findings that say "this machine cannot be judged" rather than "this stack is wrong for it":
# building on a GPU-less login node or CI runner is a normal use (issue 4 §1).
NOT_BLOCKING = frozenset({"no-driver", "no-gpu"})


class CheckFailed(CuenvError):
    def __init__(self, target: str, errors: Sequence[Finding]) -> None:
        first = errors[0]
        more = f" (and {len(errors) - 1} more)" if len(errors) > 1 else ""
        super().__init__(
            f"{target} will not run on this machine: {first.message}{more}",
            hint=(first.fix + " " if first.fix else "") + "Use --force to build anyway, or --target-driver/--target-gpu for another machine.",
        )
        self.findings = list(errors)


@dataclass
class CreatePlan:
    name: str
    recipe: Any
    version: str | None
    engine: str
    engine_reason: str
    stack: Stack
    findings: list[Finding]
    solution: Any = None
    prefix: Path | None = None
    meta: dict[str, Any] = field(default_factory=dict)


def blocking(findings: Sequence[Finding]) -> list[Finding]:
    return [f for f in findings if f.severity == "error" and f.code not in NOT_BLOCKING]


def now() -> str:
    return _dt.datetime.now(_dt.timezone.utc).replace(microsecond=0).isoformat()


def build_meta(plan: CreatePlan, *, layout, fingerprint: str, size: int, lock_hash: str | None) -> dict[str, Any]:
    stack = plan.stack
    recipe = plan.recipe
    return {
        "schema": 1,
        "name": plan.name,
        "recipe": {"name": recipe.name, "version": plan.version, "hash": recipe.content_hash()},
        "engine": plan.engine,
        "engine_reason": plan.engine_reason,
        "python": plan.solution.python,
        "platform": plan.solution.platform,
        "cuda": stack.cuda,
        "cudnn": stack.cudnn,
        "framework": {"name": stack.framework, "version": stack.framework_version} if stack.framework else None,
        "stack": {
            "label": stack.label, "cuda": stack.cuda, "cudnn": stack.cudnn, "sass": list(stack.sass),
            "ptx": list(stack.ptx), "has_nvcc": stack.has_nvcc, "os": list(stack.os),
            "framework": stack.framework, "framework_version": stack.framework_version, "variant": stack.variant,
        },
        "resolved": resolved_versions(plan.solution.packages),
        "requested": list(plan.meta.get("requested", [])),
        "created": now(),
        "cuenv_version": __version__,
        "validation": {"fingerprint": fingerprint, "findings": [f.to_json() for f in plan.findings]},
        "layout": layout_to_json(layout),
        "env_vars": dict(plan.meta.get("env_vars", {})),
        "activate_scripts": [],
        "smoke_test": plan.meta.get("smoke_test"),
        "size_bytes": size,
        "lock_hash": lock_hash,
    }


def stack_from_meta(meta: Mapping[str, Any]) -> Stack:
    s = meta["stack"]
    return Stack(
        label=f"env:{meta['name']}", cuda=s["cuda"], cudnn=s.get("cudnn"), sass=tuple(s.get("sass", ())),
        ptx=tuple(s.get("ptx", ())), has_nvcc=bool(s.get("has_nvcc")), os=tuple(s.get("os", ("linux",))),
        framework=s.get("framework"), framework_version=s.get("framework_version"), variant=s.get("variant"),
    )


_CUDA_PACKAGES = {
    "libcudart": ("nvidia-cuda-runtime-cu11", "nvidia-cuda-runtime-cu12", "nvidia-cuda-runtime", "cuda-cudart", "cudatoolkit"),
    "cudnn": ("nvidia-cudnn-cu11", "nvidia-cudnn-cu12", "nvidia-cudnn-cu13", "cudnn"),
    "nvcc": ("nvidia-cuda-nvcc-cu11", "nvidia-cuda-nvcc-cu12", "nvidia-cuda-nvcc", "cuda-nvcc"),
}
_FRAMEWORKS = ("torch", "pytorch", "paddlepaddle-gpu", "paddlepaddle", "tensorflow", "jax", "jaxlib")


def resolved_versions(packages: Sequence[Any]) -> dict[str, str]:
    """The versions that matter, read from the solution: CUDA runtime, cuDNN, nvcc, the framework."""
    by_name = {p.name.lower(): p.version for p in packages}
    out: dict[str, str] = {}
    for key, names in _CUDA_PACKAGES.items():
        for n in names:
            if n in by_name:
                out[key] = by_name[n]
                break
    for n in _FRAMEWORKS:
        if n in by_name:
            out["framework"] = f"{n} {by_name[n]}"
            break
    return out


def prepare_prefix(store: Store, name: str, *, force: bool) -> None:
    """Make room for ``name``: an incomplete leftover is cleaned, a usable one needs --force."""
    if not store.exists(name):
        return
    record = store.get(name, allow_incomplete=True)
    if record.complete and not force:
        raise UsageError(
            f"Environment {name!r} already exists.",
            hint=f"Use --force to replace it, -n OTHER for another name, or `cuenv remove {name}`.",
        )
    store.remove(name)


Reporter = Callable[[str, str], None]
