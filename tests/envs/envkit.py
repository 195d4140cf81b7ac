"""Shared by the environment tests (imported by name: `conftest` is ambiguous across test folders)."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

TESTS = Path(__file__).resolve().parents[1]

# Load libcudart.so.<major> with ctypes and print cudaRuntimeGetVersion (12010 for CUDA 12.1).
LOAD_CUDART = (
    "import ctypes, sys; rt = ctypes.CDLL('libcudart.so.' + sys.argv[1]); v = ctypes.c_int(); "
    "rc = rt.cudaRuntimeGetVersion(ctypes.byref(v)); print(v.value if rc == 0 else 'rc%d' % rc)"
)


def killable(environ: Mapping[str, str], folder: Path) -> dict[str, str]:
    """The environment of a cuenv a test kills -9: the temporary files nothing can remove after such a kill
    (a solve's, an install's) go to ``folder``, the test's own (made here), not to the machine's /tmp."""
    folder.mkdir(parents=True, exist_ok=True)
    return dict(environ, TMPDIR=str(folder))


def windows_too(recipes: Path) -> Path:
    """The cuda-12.1 recipe as ``cu121-win``, declared for win-64 as well as linux-64, in ``recipes`` (made
    here; point CUENV_RECIPES at it): uv solves Windows wheels from Linux, so one lock can hold both."""
    recipes.mkdir(parents=True, exist_ok=True)
    text = (TESTS.parent / "recipes" / "cuda-12.1.yaml").read_text()
    (recipes / "cu121-win.yaml").write_text(
        text.replace("name: cuda-12.1", "name: cu121-win").replace('platforms: ["linux-64"]', 'platforms: ["linux-64", "win-64"]'))
    return recipes
