"""A sound EnvMeta for tests that need one and care about only a few of its fields."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from cuenv.activation.target import CudaLayout
from cuenv.envs.meta import EnvMeta, RecipeRef
from cuenv.knowledge.stack import Stack


def make_meta(name: str = "e", *, cuda: str | None = "12.1", prefix: Path | str | None = None, kind: str = "venv",
              **fields: Any) -> EnvMeta:
    root = Path(prefix if prefix is not None else f"/h/envs/{name}")
    base = EnvMeta(name=name, recipe=RecipeRef(f"cuda-{cuda}" if cuda else "cpu"), engine="venv",
                   stack=Stack(label=name, cuda=cuda, sass=("8.0",)),
                   layout=CudaLayout(prefix=root, kind=kind, bin_dirs=(root / "bin",)))
    return base.replace(**fields) if fields else base
