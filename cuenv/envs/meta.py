"""The format of an environment's meta.json: what cuenv records at create time, and reading it back.

One home for the format (issue 13): create writes it through :func:`build_meta`; the store, the
verdict and the lockfile read it through the functions here.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from cuenv import __version__
from cuenv.errors import CuenvError

TYPE_CHECKING = False  # no `typing` at run time: the start-up path does without it (issue 29)
if TYPE_CHECKING:
    from typing import Any, Final, Sequence

    from cuenv.envs.cudalayout import CudaLayout
    from cuenv.envs.plan import CreatePlan
    from cuenv.knowledge.stack import Stack

SCHEMA: Final = 1


def layout_to_json(layout: CudaLayout) -> dict[str, Any]:
    return {
        "prefix": str(layout.prefix),
        "kind": layout.kind,
        "bin_dirs": [str(p) for p in layout.bin_dirs],
        "lib_dirs": [str(p) for p in layout.lib_dirs],
        "include_dirs": [str(p) for p in layout.include_dirs],
        "cuda_home": str(layout.cuda_home) if layout.cuda_home else None,
    }


def layout_from_json(data: Mapping[str, Any]) -> CudaLayout:
    from cuenv.envs.cudalayout import CudaLayout  # on use: `list` reads meta without it (start-up, issue 29)

    return CudaLayout(
        prefix=Path(data["prefix"]),
        kind=data["kind"],
        bin_dirs=tuple(Path(p) for p in data.get("bin_dirs", ())),
        lib_dirs=tuple(Path(p) for p in data.get("lib_dirs", ())),
        include_dirs=tuple(Path(p) for p in data.get("include_dirs", ())),
        cuda_home=Path(data["cuda_home"]) if data.get("cuda_home") else None,
    )


def now() -> str:
    import datetime as _dt  # on use (start-up, issue 29)

    return _dt.datetime.now(_dt.timezone.utc).replace(microsecond=0).isoformat()


def build_meta(plan: CreatePlan, *, layout, fingerprint: str, size: int, lock_hash: str | None) -> dict[str, Any]:
    stack = plan.stack
    return {
        "schema": SCHEMA,
        "name": plan.name,
        "recipe": dict(plan.meta["recipe"]),
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
        "lock_hash": plan.lock_hash or lock_hash,
    }


def adopted_meta(*, name: str, prefix: Path, kind: str, engine: str, python: str | None, platform: str, stack: Stack,
                 evidence: Sequence[str], conflicts: Sequence[str], packages: Sequence[Any], layout: CudaLayout,
                 lock_hash: str) -> dict[str, Any]:
    """The meta of an environment cuenv did not build (cuenv.envs.adopt): the same format, with an
    ``adopted`` block naming the prefix it lives in and how its stack was read."""
    return {
        "schema": SCHEMA,
        "name": name,
        "recipe": {"name": "adopted", "version": None},
        "adopted": {"prefix": str(prefix), "kind": kind, "evidence": list(evidence), "conflicts": list(conflicts),
                    "adopted": now()},
        "engine": engine,
        "engine_reason": f"adopted {kind} environment",
        "python": python,
        "platform": platform,
        "cuda": stack.cuda,
        "cudnn": stack.cudnn,
        "framework": {"name": stack.framework, "version": stack.framework_version} if stack.framework else None,
        "stack": {
            "label": name, "cuda": stack.cuda, "cudnn": stack.cudnn, "sass": list(stack.sass),
            "ptx": list(stack.ptx), "has_nvcc": stack.has_nvcc, "os": list(stack.os),
            "framework": stack.framework, "framework_version": stack.framework_version, "variant": stack.variant,
        },
        "resolved": resolved_versions(packages),
        "requested": [],
        "created": now(),
        "cuenv_version": __version__,
        "validation": {"fingerprint": "", "findings": []},  # judged on first use, for the machine then
        "layout": layout_to_json(layout),
        "env_vars": {},
        "activate_scripts": [],
        "smoke_test": None,
        "size_bytes": None,
        "lock_hash": lock_hash,
    }


def adopted_prefix(meta: Mapping[str, Any]) -> Path | None:
    """Where an adopted environment really lives; None for one cuenv built (its folder is its prefix)."""
    adopted = meta.get("adopted")
    if isinstance(adopted, Mapping) and isinstance(adopted.get("prefix"), str) and adopted["prefix"]:
        return Path(adopted["prefix"])
    return None


def stack_from_meta(meta: Mapping[str, Any]) -> Stack:
    from cuenv.knowledge.stack import Stack  # on use (start-up, issue 29)

    s = meta.get("stack")
    if not isinstance(s, Mapping) or "cuda" not in s:
        name = meta.get("name", "?")
        raise CuenvError(f"The metadata of environment {name!r} is damaged (no stack recorded).",
                         hint=f"Recreate it: `cuenv create RECIPE -n {name} --force`.")
    return Stack(
        label=str(meta.get("name", "environment")), cuda=s["cuda"], cudnn=s.get("cudnn"), sass=tuple(s.get("sass", ())),
        ptx=tuple(s.get("ptx", ())), has_nvcc=bool(s.get("has_nvcc")), os=tuple(s.get("os", ("linux",))),
        framework=s.get("framework"), framework_version=s.get("framework_version"), variant=s.get("variant"),
    )


_CUDA_PACKAGES = {
    "libcudart": ("nvidia-cuda-runtime-cu11", "nvidia-cuda-runtime-cu12", "nvidia-cuda-runtime", "cuda-cudart", "cudatoolkit"),
    "cudnn": ("nvidia-cudnn-cu11", "nvidia-cudnn-cu12", "nvidia-cudnn-cu13", "cudnn"),
    "nvcc": ("nvidia-cuda-nvcc-cu11", "nvidia-cuda-nvcc-cu12", "nvidia-cuda-nvcc", "cuda-nvcc"),
}


def cuda_package_names(key: str) -> tuple[str, ...]:
    """The PyPI and conda names of one CUDA part ("libcudart", "cudnn", "nvcc"), as solutions list them."""
    return _CUDA_PACKAGES.get(key, ())


FRAMEWORK_PACKAGES: Final = (  # PyPI and conda names of frameworks, as solutions list them
    "torch", "pytorch", "paddlepaddle-gpu", "paddlepaddle", "tensorflow", "jax", "jaxlib")


def resolved_versions(packages: Sequence[Any]) -> dict[str, str]:
    """The versions that matter, read from the solution: CUDA runtime, cuDNN, nvcc, the framework."""
    by_name = {p.name.lower(): p.version for p in packages}
    out: dict[str, str] = {}
    for key, names in _CUDA_PACKAGES.items():
        for n in names:
            if n in by_name:
                out[key] = by_name[n]
                break
    for n in FRAMEWORK_PACKAGES:
        if n in by_name:
            out["framework"] = f"{n} {by_name[n]}"
            break
    return out


# -- the smoke test: a recipe's runs, an archive's only with the user's consent (issue 31 §4) -----------
TRUST_SMOKE_FLAG: Final = "--trust-smoke-test"


def smoke_test(meta: Mapping[str, Any]) -> Mapping[str, Any] | None:
    """The smoke test cuenv may run (`cuenv test`, the TUI, an image's health check): the recipe's; one
    that came in an archive only after `cuenv test NAME --trust-smoke-test`."""
    unpacked = meta.get("unpacked_from")
    if unpacked is not None and not (isinstance(unpacked, Mapping) and unpacked.get("smoke_test_trusted") is True):
        return None
    test = meta.get("smoke_test")
    return test if isinstance(test, Mapping) else None


def archived_smoke_test(meta: Mapping[str, Any]) -> Mapping[str, Any] | None:
    """The smoke test an archive brought that has not been trusted yet, or None."""
    unpacked = meta.get("unpacked_from")
    if not isinstance(unpacked, Mapping) or unpacked.get("smoke_test_trusted") is True:
        return None
    test = unpacked.get("smoke_test") or meta.get("smoke_test")  # the latter: unpacked by an older cuenv
    return test if isinstance(test, Mapping) and test else None


def trusted_smoke_test(meta: Mapping[str, Any]) -> dict[str, Any]:
    """``meta`` after the user's consent to the archive's smoke test."""
    out = dict(meta)
    unpacked = dict(out.get("unpacked_from") or {})
    out["smoke_test"] = archived_smoke_test(meta)
    unpacked["smoke_test_trusted"] = True
    unpacked.pop("smoke_test", None)
    out["unpacked_from"] = unpacked
    return out
