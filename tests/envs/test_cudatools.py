"""What `create` says about an environment's nvcc (cuenv.envs.cudatools.nvcc_note), from its recorded tools."""

from __future__ import annotations

from typing import TYPE_CHECKING

from cuenv.envs.cudatools import nvcc_note
from cuenv.envs.meta import EnvMeta, Tool
from tests.envs.metakit import make_meta

if TYPE_CHECKING:
    from cuenv.envs.meta import ToolSource


def _meta(source: ToolSource, path: str | None = None) -> EnvMeta:
    return make_meta("a", resolved={"libcudart": "12.1.105"}, tools={"nvcc": Tool(source, path)})


def test_its_own_nvcc_or_unrecorded_tools_say_nothing() -> None:
    assert nvcc_note("a", _meta("env", "/e/bin/nvcc"), None) is None
    assert nvcc_note("a", make_meta("a"), None) is None


def test_a_same_release_system_toolkit_is_named() -> None:
    note = nvcc_note("a", _meta("system", "/usr/local/cuda-12.1/bin/nvcc"), None)
    assert note == "a has no nvcc of its own; `nvcc` in it runs /usr/local/cuda-12.1/bin/nvcc (system toolkit, CUDA 12.1)."


def test_a_shim_names_the_command_that_gives_one() -> None:
    hint = "cuenv create cuda-12.1 --with-nvcc --engine rattler -n a-nvcc"
    assert nvcc_note("a", _meta("shim"), hint).endswith(
        f"for nvcc 12.1: `{hint}` (it downloads from conda-forge: that channel reachable, or mirrored as docs/guides/mirrors.md shows).")
    assert nvcc_note("a", _meta("shim"), None).endswith(
        "for nvcc 12.1: install a CUDA 12.1 toolkit and run `cuenv use system:12.1`.")
