"""Helpers for the knowledge-base and check tests: the vendored reference and a machine builder."""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path

import yaml

from cuenv.machine.model import Driver, Gpu, Machine

# Verbatim copy of /work/shared/reference/cuda-facts.yaml, the sourced reference the KB is built
# from. The KB is tested row by row against it, so a drifting table fails.
REFERENCE = Path(__file__).with_name("reference") / "cuda-facts.yaml"


@lru_cache(maxsize=1)
def reference() -> dict:
    return yaml.load(REFERENCE.read_text(), Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))


def machine(driver: str | None, *ccs: str, os: str = "linux", max_cuda: str | None = None) -> Machine:
    """GPUs by compute capability; driver None = no driver; driver "" + max_cuda = CONDA_OVERRIDE_CUDA."""
    if driver is None and max_cuda is None:
        d = None
    else:
        d = Driver(driver or "", max_cuda, "flag" if driver else "override")
    return Machine(driver=d, gpus=tuple(Gpu(i, f"GPU {i}", cc) for i, cc in enumerate(ccs)), os=os)
