"""Build real environments for the shell tests: a uv venv with NVIDIA's CUDA wheels from PyPI."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Mapping

from cuenv.activation.render import render_scripts
from cuenv.activation.shims import release
from cuenv.activation.target import ActivationTarget, CudaLayout
from cuenv.envs import cudatools, folder
from cuenv.envs.meta import EnvMeta, RecipeRef, layout_to_json
from cuenv.envs.store import Store
from cuenv.knowledge.stack import Stack

WHEELS = {
    "12.1": ["nvidia-cuda-runtime-cu12==12.1.105", "nvidia-cuda-nvcc-cu12==12.1.105"],
    "12.4": ["nvidia-cuda-runtime-cu12==12.4.127"],
}


def download(cache: Path, spec: str) -> Path:
    """One wheel, downloaded once per machine into the shared test cache."""
    dist, version = spec.split("==")
    stem = dist.replace("-", "_") + "-" + version + "-"
    import fcntl

    cache.mkdir(parents=True, exist_ok=True)
    with open(cache / ".download.lock", "w") as lock:  # pytest-xdist workers share the cache
        fcntl.flock(lock, fcntl.LOCK_EX)
        found = sorted(cache.glob(stem + "*.whl"))
        if not found:
            subprocess.run([sys.executable, "-m", "pip", "download", "-q", "--no-deps", "-d", str(cache), spec],
                           check=True, capture_output=True)
            found = sorted(cache.glob(stem + "*.whl"))
    return found[0]


def uv() -> str:
    from uv import find_uv_bin

    return find_uv_bin()


def make_venv(prefix: Path, wheels: list[Path], uv_cache: Path) -> Path:
    env = {**os.environ, "UV_CACHE_DIR": str(uv_cache), "UV_NO_CONFIG": "1", "UV_OFFLINE": "1"}
    env.pop("VIRTUAL_ENV", None)
    subprocess.run([uv(), "venv", "-q", "--python", sys.executable, str(prefix)], check=True, env=env, capture_output=True)
    subprocess.run([uv(), "pip", "install", "-q", "--no-deps", "--python", str(prefix / "bin" / "python"),
                    *map(str, wheels)], check=True, env=env, capture_output=True)
    return next((prefix / "lib").glob("python3*/site-packages"))


def venv_layout(prefix: Path, site: Path) -> CudaLayout:
    nv = site / "nvidia"
    bins = [prefix / "bin"] + sorted(p for p in nv.glob("*/bin") if p.is_dir())
    libs = sorted(p for p in nv.glob("*/lib") if p.is_dir())
    return CudaLayout(prefix=prefix, kind="venv", bin_dirs=tuple(bins), lib_dirs=tuple(libs),
                      include_dirs=tuple(sorted(nv.glob("*/include"))), cuda_home=None)


def register(envs_dir: Path, name: str, layout: CudaLayout, env_vars: dict[str, str] | None = None,
             *, prompt: bool = True, toolkits_environ: Mapping[str, str] | None = None) -> ActivationTarget:
    """Write meta.json, the CUDA tool shims, the activation scripts and the completion marker, as
    `cuenv create` does; system toolkits are looked for in ``toolkits_environ`` (none when not given)."""
    store = Store(envs_dir)
    cuda = release(name.split("-", 1)[-1]) if name.startswith("cuda-") else None
    stack = Stack(label=name, cuda=cuda, sass=("7.0", "8.0", "9.0"), ptx=("9.0",))
    meta = EnvMeta(name=name, recipe=RecipeRef(name), engine=layout.kind, stack=stack, layout=layout,
                   env_vars=env_vars or {})
    toolkits = cudatools.system_toolkits(toolkits_environ) if toolkits_environ is not None else []
    meta = meta.replace(tools=cudatools.install(name=name, layout=layout, meta=meta, toolkits=toolkits,
                                                shims_dir=folder.shims_dir(store.path(name)), compiler_hint=None))
    store.write_meta(name, meta)
    target = store.get(name, allow_incomplete=True).target()
    folder.write_activation(folder.meta_dir(store.path(name)),
                            render_scripts(target, envs_dir=envs_dir, prompt=prompt, environ=os.environ))
    store.mark_complete(name)
    return target


def build_cuda_env(envs_dir: Path, name: str, cuda: str, wheel_cache: Path, template: Path | None = None,
                   env_vars: dict[str, str] | None = None, toolkits_environ: Mapping[str, str] | None = None) -> ActivationTarget:
    """A real venv environment NAME with the CUDA `cuda` wheels; copied from ``template`` when given."""
    prefix = envs_dir / name
    if template is not None:
        shutil.copytree(template, prefix, symlinks=True)
        # venvs embed their path: this copy is only used for its CUDA libraries and tools
        site = next((prefix / "lib").glob("python3*/site-packages"))
    else:
        wheels = [download(wheel_cache, s) for s in WHEELS[cuda]]
        site = make_venv(prefix, wheels, wheel_cache / "uv")
    return register(envs_dir, name, venv_layout(prefix, site), env_vars, toolkits_environ=toolkits_environ)


def dump_layout(target: ActivationTarget) -> str:
    return json.dumps(layout_to_json(target.layout), indent=1)
