"""Speed of a `cuenv use` + `cuenv deactivate` cycle in bash, side by side with direnv, Lmod and a venv.

    PYTHONPATH=. python benchmarks/bench_activation.py [--cycles N]

Each tool activates an equivalent environment (two bin dirs on PATH, two library dirs on
LD_LIBRARY_PATH, CUDA_HOME, a recipe variable) and deactivates it again, many times inside ONE bash
process; the time per cycle is measured in bash itself ($EPOCHREALTIME), so process start-up of the
benchmark does not count. cuenv runs through its real hook (`cuenv shell-init bash`) with the
validation verdict already cached, which is the common path of issue 5.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from cuenv.activation.render import hook_text, render_scripts  # noqa: E402 - after sys.path is set above
from cuenv.activation.target import CudaLayout  # noqa: E402 - after sys.path is set above
from cuenv.envs import folder  # noqa: E402 - after sys.path is set above
from cuenv.envs.meta import layout_to_json
from cuenv.envs.store import Store  # noqa: E402 - after sys.path is set above

LMOD_INIT = Path("/usr/share/lmod/lmod/init/bash")
TIMER = r"""
__t0=$EPOCHREALTIME
for ((__i = 0; __i < {n}; __i++)); do
{body}
done
__t1=$EPOCHREALTIME
echo "RESULT $(( (${{__t1/./}} - ${{__t0/./}}) ))"
"""


def _env_tree(root: Path) -> tuple[Path, list[Path], list[Path]]:
    prefix = root / "envs" / "bench"
    bins = [prefix / "bin", prefix / "nvidia" / "cuda_nvcc" / "bin"]
    libs = [prefix / "nvidia" / "cuda_runtime" / "lib", prefix / "nvidia" / "cudnn" / "lib"]
    for d in bins + libs:
        d.mkdir(parents=True, exist_ok=True)
    return prefix, bins, libs


def _bash(script: str, env: dict[str, str], cwd: Path) -> float:
    out = subprocess.run(["bash", "--norc", "--noprofile", "-c", script], env=env, cwd=cwd,
                         capture_output=True, text=True, timeout=600)
    line = [ln for ln in out.stdout.splitlines() if ln.startswith("RESULT ")]
    if out.returncode != 0 or not line:
        raise RuntimeError(f"benchmark shell failed ({out.returncode}): {out.stderr[-2000:]}")
    return int(line[-1].split()[1]) / 1e6  # seconds


def _cycle(setup: str, body: str, n: int, env: dict[str, str], cwd: Path) -> float:
    """Seconds per cycle, after one warm-up cycle."""
    script = setup + "\n" + body + "\n" + TIMER.format(n=n, body=body)
    return _bash(script, env, cwd) / n


def bench_cuenv(root: Path, env: dict[str, str], n: int) -> float:
    home = root / "cuenv-home"
    prefix, bins, libs = _env_tree(home)
    layout = CudaLayout(prefix=prefix, kind="venv", bin_dirs=tuple(bins), lib_dirs=tuple(libs),
                        cuda_home=prefix / "nvidia" / "cuda_nvcc")
    store = Store(home / "envs")
    stack = {"cuda": "12.1", "cudnn": "9.1", "sass": ["8.0", "9.0"], "ptx": ["9.0"], "has_nvcc": False,
             "os": ["linux"], "framework": None, "framework_version": None, "variant": "cu121"}
    store.write_meta("bench", {"name": "bench", "stack": stack, "layout": layout_to_json(layout),
                               "env_vars": {"CUDA_MODULE_LOADING": "LAZY"}, "activate_scripts": []})
    folder.write_activation(folder.meta_dir(prefix), render_scripts(store.get("bench", allow_incomplete=True).target(),
                                                                    envs_dir=home / "envs", prompt=True))
    store.mark_complete("bench")
    hook = root / "hook.bash"
    hook.write_text(hook_text("bash", home=home, auto_activate=False))
    log = root / "cuenv-starts.log"
    bin_dir = root / "bin"
    bin_dir.mkdir(exist_ok=True)
    exe = bin_dir / "cuenv"
    exe.write_text(f'#!/bin/sh\nprintf "%s\\n" "$*" >>"{log}"\nPYTHONPATH="{REPO}" exec "{sys.executable}" -m cuenv "$@"\n')
    exe.chmod(0o755)
    e = dict(env, PATH=f"{bin_dir}:{env['PATH']}", CUENV_HOME=str(home))
    # the first use computes and caches the verdict (Python); the timed cycles must not start Python
    seconds = _cycle(f". '{hook}'", "cuenv use bench; cuenv deactivate", n, e, root)
    starts = log.read_text().splitlines() if log.exists() else []
    if len(starts) != 1:
        raise RuntimeError(f"the timed cuenv cycles started Python: {starts}")
    return seconds


def bench_venv(root: Path, env: dict[str, str], n: int) -> float:
    venv = root / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    return _cycle("", f". '{venv}/bin/activate'; deactivate", n, env, root)


def bench_direnv(root: Path, env: dict[str, str], n: int) -> float | None:
    if shutil.which("direnv") is None:
        return None
    proj = root / "direnv-project"
    prefix, bins, libs = _env_tree(proj)
    (proj / ".envrc").write_text(
        "".join(f"PATH_add '{b}'\n" for b in reversed(bins))
        + "".join(f"path_add LD_LIBRARY_PATH '{d}'\n" for d in reversed(libs))
        + f"export CUDA_HOME='{prefix}/nvidia/cuda_nvcc' CUDA_PATH='{prefix}/nvidia/cuda_nvcc'\n"
        + f"export VIRTUAL_ENV='{prefix}' CUDA_MODULE_LOADING=LAZY\n"
    )
    subprocess.run(["direnv", "allow", str(proj)], env=env, check=True, capture_output=True)
    body = (f"cd '{proj}'; eval \"$(direnv export bash 2>/dev/null)\"; "
            f"cd '{root}'; eval \"$(direnv export bash 2>/dev/null)\"")
    return _cycle("", body, n, env, root)


def bench_lmod(root: Path, env: dict[str, str], n: int) -> float | None:
    if not LMOD_INIT.exists():
        return None
    mods = root / "modulefiles"
    prefix, bins, libs = _env_tree(root / "lmod-tree")
    (mods / "bench").mkdir(parents=True)
    (mods / "bench" / "1.0.lua").write_text(
        "".join(f'prepend_path("PATH", "{b}")\n' for b in reversed(bins))
        + "".join(f'prepend_path("LD_LIBRARY_PATH", "{d}")\n' for d in reversed(libs))
        + f'setenv("CUDA_HOME", "{prefix}/nvidia/cuda_nvcc")\nsetenv("CUDA_PATH", "{prefix}/nvidia/cuda_nvcc")\n'
        + f'setenv("VIRTUAL_ENV", "{prefix}")\nsetenv("CUDA_MODULE_LOADING", "LAZY")\n'
    )
    setup = f". '{LMOD_INIT}'; module use '{mods}'"
    return _cycle(setup, "module load bench; module unload bench", n, env, root)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cycles", type=int, default=2000, help="cycles for cuenv and venv (direnv, Lmod: /20)")
    args = parser.parse_args(argv)
    slow = max(10, args.cycles // 20)
    with tempfile.TemporaryDirectory(prefix="cuenv-bench-") as tmp:
        root = Path(tmp)
        env = {
            "HOME": str(root), "PATH": "/usr/local/bin:/usr/bin:/bin", "LANG": "C.UTF-8",
            "XDG_CONFIG_HOME": str(root / "xdg-config"), "XDG_DATA_HOME": str(root / "xdg-data"),
            "XDG_CACHE_HOME": str(root / "xdg-cache"), "CUENV_CONFIG": str(root / "none.yaml"),
            "LD_LIBRARY_PATH": "/usr/local/cuda/lib64",
        }
        results = {
            "cuenv use + deactivate (hook, no Python)": bench_cuenv(root, env, args.cycles),
            "venv activate + deactivate": bench_venv(root, env, args.cycles),
            "direnv enter + leave": bench_direnv(root, env, slow),
            "Lmod module load + unload": bench_lmod(root, env, slow),
        }
    cuenv = results["cuenv use + deactivate (hook, no Python)"]
    print(f"{'per cycle, bash ' + os.uname().machine:44} {'ms':>9} {'vs cuenv':>9}")
    for name, sec in results.items():
        if sec is None:
            print(f"{name:44} {'(not installed)':>9}")
            continue
        print(f"{name:44} {sec * 1e3:9.3f} {sec / cuenv:8.1f}x")
    ok = True
    for name, goal in (("direnv enter + leave", 10), ("Lmod module load + unload", 20)):
        if results[name] is not None:
            ratio = results[name] / cuenv
            ok &= ratio >= goal
            print(f"goal: cuenv >= {goal}x faster than {name.split()[0]}: {'met' if ratio >= goal else 'MISSED'} ({ratio:.0f}x)")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
