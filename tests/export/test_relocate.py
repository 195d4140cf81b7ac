"""cuenv.export.relocate: recorded paths moved to a new prefix, nothing else touched."""

from __future__ import annotations

from pathlib import Path

from cuenv.activation.target import CudaLayout
from cuenv.envs.meta import EnvMeta, RecipeRef, Tool
from cuenv.export.relocate import moved, moved_layout, moved_meta
from cuenv.knowledge.stack import Stack


def test_moved() -> None:
    assert moved("/a/envs/x/bin", "/a/envs/x", "/b/y") == "/b/y/bin"
    assert moved("/a/envs/x", "/a/envs/x/", "/b/y") == "/b/y"
    assert moved("/a/envs/xy/bin", "/a/envs/x", "/b/y") == "/a/envs/xy/bin"  # a sibling with a longer name
    assert moved("/usr/bin", "/a/envs/x", "/b/y") == "/usr/bin"


def test_moved_layout_and_meta() -> None:
    old = CudaLayout(Path("/h/envs/e"), "venv", (Path("/h/envs/e/bin"), Path("/usr/local/bin")),
                     (Path("/h/envs/e/lib"),), (Path("/h/envs/e/include"),), Path("/h/envs/e/.cuenv/cuda"))
    new = moved_layout(old, "/n/envs/f")
    assert new == CudaLayout(Path("/n/envs/f"), "venv", (Path("/n/envs/f/bin"), Path("/usr/local/bin")),
                             (Path("/n/envs/f/lib"),), (Path("/n/envs/f/include"),), Path("/n/envs/f/.cuenv/cuda"))
    meta = EnvMeta(name="e", recipe=RecipeRef("cuda-12.1"), engine="venv", stack=Stack(label="e", cuda="12.1"),
                   layout=old, activate_scripts=("/h/envs/e/etc/conda/activate.d/x.sh",), tools={"nvcc": Tool("shim")})
    out = moved_meta(meta, name="f", new="/n/envs/f")
    # the tools are the new place's fact: found again there
    assert out == meta.replace(name="f", layout=new, activate_scripts=("/n/envs/f/etc/conda/activate.d/x.sh",), tools=None)
    assert meta.name == "e"  # the input is not changed
