"""Helpers shared by the export tests (imported by name: `conftest` is ambiguous across test folders)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]

# Space, both quotes, $VAR, $(cmd), backslash (also trailing), ${x}, [tcl], a glob, UTF-8, braces.
HOSTILE = "it's \"q\" $HOME $(id) `id` a\\b ${x} [expr 1] *.py ünï {brace} end\\"


def cuenv(*args: str, env: dict[str, str] | None = None, check: bool = True) -> subprocess.CompletedProcess:
    run_env = {**os.environ, "PYTHONPATH": str(REPO), **(env or {})}
    done = subprocess.run([sys.executable, "-m", "cuenv", *args], capture_output=True, text=True, env=run_env)
    if check and done.returncode != 0:
        raise AssertionError(f"cuenv {' '.join(args)} failed ({done.returncode}): {done.stderr}")
    return done


def recipe_with_env(dest: Path, *, name: str, conda_channel: Path | None = None) -> Path:
    """cuda-12.1's recipe as `name`, with HOSTILE in a variable; with a channel, a conda-only recipe."""
    import yaml

    data = yaml.safe_load((REPO / "recipes" / "cuda-12.1.yaml").read_text())
    data["name"] = name
    data["env"] = {"NCCL_SOCKET_IFNAME": HOSTILE}
    if conda_channel is not None:
        data["install"] = {"conda": {"channels": [str(conda_channel)], "nvcc": False,
                                     "specs": ["cuda-version=12.1", "cuda-cudart", "cuda-nvcc-tools", "cuenv-hello"]}}
        data["smoke_test"] = {"python": "import ctypes\nctypes.CDLL('libcudart.so.12')\nprint('ok')\n"}
    dest.mkdir(parents=True, exist_ok=True)
    (dest / f"{name}.yaml").write_text(yaml.safe_dump(data, sort_keys=False))
    return dest


def meta_of(name: str) -> dict:
    return json.loads((Path(os.environ["CUENV_HOME"]) / "envs" / name / ".cuenv" / "meta.json").read_text())


def have(*tools: str) -> bool:
    return all(shutil.which(t) for t in tools)
