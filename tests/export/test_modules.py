"""Lmod and Tcl modulefiles, loaded in a real bash with Lmod; the Tcl file also through tclsh."""

from __future__ import annotations

import os
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from cuenv.export.lmod import lua
from cuenv.export.tcl import tcl
from tests.export.exportkit import HOSTILE, REPO, cuenv, have, meta_of

LMOD_INIT = Path("/usr/share/lmod/lmod/init/bash")
needs_lmod = pytest.mark.skipif(not LMOD_INIT.is_file(), reason="Lmod is not installed")
needs_tclsh = pytest.mark.skipif(not have("tclsh"), reason="tclsh is not installed")
TRICKY = [HOSTILE, "", "tab\there", "new\nline", "cr\rbell\a1", "]]", "\\", "$", "[", "{", "}", '"', "9\x019"]
BASE_PATH = "/usr/local/bin:/usr/bin:/bin"
UTF8 = {"PATH": BASE_PATH, "LANG": "C.UTF-8"}  # tclsh reads scripts in the encoding LANG names


@pytest.mark.skipif(not have("lua"), reason="lua is not installed")
def test_lua_strings_round_trip() -> None:
    script = "\n".join(f"io.write({lua(v)}, '\\0')" for v in TRICKY)
    out = subprocess.run(["lua", "-"], input=script.encode(), capture_output=True, check=True).stdout
    assert out.decode().split("\0")[:-1] == TRICKY


@needs_tclsh
def test_tcl_words_round_trip() -> None:
    script = "fconfigure stdout -translation binary\n" + "\n".join(
        f"puts -nonewline [encoding convertto utf-8 [string cat {tcl(v)} \\0]]" for v in TRICKY)
    out = subprocess.run(["tclsh"], input=script.encode(), capture_output=True, check=True, env=UTF8).stdout
    assert out.decode().split("\0")[:-1] == TRICKY


def bash(script: str, env: dict[str, str]) -> str:
    full = f"source {LMOD_INIT}\n{script}"
    done = subprocess.run(["bash", "--norc", "--noprofile", "-c", full], capture_output=True, env=env)
    done = subprocess.CompletedProcess(done.args, done.returncode, done.stdout.decode("utf-8", "replace"), done.stderr.decode("utf-8", "replace"))
    assert done.returncode == 0, done.stderr
    return done.stdout


def lmod_env(tmp_path: Path) -> dict[str, str]:
    return {"PATH": BASE_PATH, "HOME": str(tmp_path), "LMOD_CACHE_DIR": str(tmp_path / "lmodcache"),
            "CUDA_HOME": "/opt/site/cuda-11.0", "LANG": "C.UTF-8", "PYTHONNOUSERSITE": "1"}


@needs_lmod
@pytest.mark.network
@pytest.mark.parametrize("fmt", ["lmod", "tcl"])
def test_module_load_finds_the_environments_cuda_and_unload_restores(fmt: str, venv_env: str, tmp_path: Path) -> None:
    mods = tmp_path / "modules"
    wrote = cuenv("export", venv_env, "--format", fmt, "-o", str(mods)).stdout
    assert (mods / "cuenv" / (f"{venv_env}.lua" if fmt == "lmod" else venv_env)).is_file()
    # the note names the folder written to, so the shell below runs it as written (issue 30 §4)
    [use_it] = [line.removeprefix("Use it: ") for line in wrote.splitlines() if line.startswith("Use it: ")]
    assert use_it == f"module use {shlex.quote(str(mods.resolve()))} && module load cuenv/{venv_env}"
    prefix = meta_of(venv_env)["layout"]["prefix"]
    python = subprocess.run(["python3", "-c", "import sys; print(sys.executable)"], capture_output=True, text=True).stdout.strip()
    probe = ("import ctypes; r = ctypes.CDLL('libcudart.so.12'); v = ctypes.c_int(); r.cudaRuntimeGetVersion(ctypes.byref(v)); "
             "print(v.value, next(l.split()[-1] for l in open('/proc/self/maps') if 'libcudart' in l))")
    out = bash(f"""
        echo "before=$PATH|$CUDA_HOME"
        {use_it}
        echo "ptxas=$(command -v ptxas)"
        {shlex.quote(python)} -c {shlex.quote(probe)}
        printf 'hostile=%s\\n' "$NCCL_SOCKET_IFNAME"
        echo "home=$CUDA_HOME active=$CUENV_ACTIVE"
        module unload cuenv/{venv_env}
        echo "after=$PATH|$CUDA_HOME|${{CUENV_ACTIVE-unset}}|${{NCCL_SOCKET_IFNAME-unset}}"
    """, lmod_env(tmp_path))
    lines = out.splitlines()
    before = lines[0].split("=", 1)[1]
    assert lines[1] == f"ptxas={prefix}/lib/python3.11/site-packages/nvidia/cuda_nvcc/bin/ptxas"
    assert lines[2] == f"12010 {prefix}/lib/python3.11/site-packages/nvidia/cuda_runtime/lib/libcudart.so.12"
    if fmt == "lmod":
        assert lines[3] == f"hostile={HOSTILE}"
    else:  # Lmod's tcl2lua does not round-trip non-ASCII text (the tclsh test covers it); the rest is exact
        assert lines[3].replace("\ufffdn\ufffd", "ünï") == f"hostile={HOSTILE}"
    assert lines[4] == f"home={prefix}/.cuenv/cuda active={venv_env}"
    assert lines[5] == f"after={before}|unset|unset"  # PATH and the site's CUDA_HOME are back exactly


@needs_lmod
@pytest.mark.network
@pytest.mark.parametrize("shell", ["bash", "zsh", "fish"])
@pytest.mark.parametrize("fmt", ["lmod", "tcl"])
def test_module_strips_other_cuda_like_use_and_unload_puts_it_back(fmt: str, shell: str, venv_env: str, tmp_path: Path) -> None:
    """Issue 17 §6: another CUDA on PATH/LD_LIBRARY_PATH (a toolkit folder, the site CUDA_HOME's bin) is
    taken off on load, and `nvcc` is the environment's shim, never the other release; unload restores."""
    if have(shell) is False or not Path(f"/usr/share/lmod/lmod/init/{shell}").is_file():
        pytest.skip(f"{shell} or its Lmod init is missing")
    mods = tmp_path / "modules"
    cuenv("export", venv_env, "--format", fmt, "-o", str(mods))
    other = tmp_path / "cuda-13.0"
    (other / "bin").mkdir(parents=True)
    (other / "bin" / "nvcc").write_text('#!/bin/sh\necho "Cuda compilation tools, release 13.0, V13.0.88"\n')
    (other / "bin" / "nvcc").chmod(0o755)
    env = {**lmod_env(tmp_path), "CUDA_HOME": str(other), "PATH": f"{other}/bin:/usr/local/cuda-11.0/bin:{BASE_PATH}",
           "LD_LIBRARY_PATH": f"/usr/local/cuda-11.0/lib64:{other}/lib64:/opt/mine/lib"}
    prefix = meta_of(venv_env)["layout"]["prefix"]
    show = "printf '%s|%s|%s\\n' (string join : $PATH) (string join : $LD_LIBRARY_PATH) $CUDA_HOME" if shell == "fish" else \
        'printf \'%s|%s|%s\\n\' "$PATH" "$LD_LIBRARY_PATH" "$CUDA_HOME"'
    which = "command -s nvcc" if shell == "fish" else "command -v nvcc"
    script = "\n".join([
        f"source /usr/share/lmod/lmod/init/{shell}", show, f"module use {shlex.quote(str(mods))}",
        f"module load cuenv/{venv_env}", show, which, f"module unload cuenv/{venv_env}", show,
    ])
    argv = {"bash": ["bash", "--norc", "--noprofile", "-c"], "zsh": ["zsh", "-f", "-c"], "fish": ["fish", "--no-config", "-c"]}[shell]
    done = subprocess.run([*argv, script], capture_output=True, text=True, env=env, timeout=120)
    lines = done.stdout.splitlines()
    assert len(lines) == 4, done.stderr
    path, ld, home = lines[1].split("|")
    assert not [e for e in path.split(":") if e.startswith((str(other), "/usr/local/cuda-"))], path
    assert ld.split(":")[-1] == "/opt/mine/lib" and "cuda-11.0" not in ld and str(other) not in ld
    assert home == f"{prefix}/.cuenv/cuda"
    assert lines[2] == f"{prefix}/.cuenv/shims/nvcc"
    assert lines[3] == lines[0]  # unload: PATH, LD_LIBRARY_PATH and CUDA_HOME exactly as before


def environment_modules() -> Path | None:
    """Environment Modules' modulecmd.tcl: installed, or named by CUENV_TEST_MODULECMD. It conflicts with
    Lmod as a Debian package; unpacked beside it, it runs as well: `apt-get download environment-modules &&
    dpkg -x environment-modules_*.deb DIR`, then CUENV_TEST_MODULECMD=DIR/usr/lib/x86_64-linux-gnu/modulecmd.tcl."""
    for where in (os.environ.get("CUENV_TEST_MODULECMD"), "/usr/share/modules/libexec/modulecmd.tcl",
                  "/usr/lib/x86_64-linux-gnu/modulecmd.tcl", "/usr/lib/modulecmd.tcl"):
        if where and Path(where).is_file():
            return Path(where)
    return None


@pytest.mark.skipif(environment_modules() is None or not have("tclsh"), reason="Environment Modules is not installed")
@pytest.mark.network
@pytest.mark.parametrize("shell", ["bash", "zsh", "fish"])
def test_environment_modules_strips_other_cuda_and_unload_puts_it_back(shell: str, venv_env: str, tmp_path: Path) -> None:
    """Issue 17 §6 with Environment Modules itself (modulecmd.tcl), not Lmod reading the Tcl file: another
    CUDA toolkit first on PATH and LD_LIBRARY_PATH is taken off on load, `nvcc` is the environment's
    shim, and unload gives back exactly the variables of before."""
    if not have(shell):
        pytest.skip(f"{shell} is missing")
    cmd = shlex.quote(str(environment_modules()))
    mods = tmp_path / "modules"
    cuenv("export", venv_env, "--format", "tcl", "-o", str(mods))
    other = tmp_path / "cuda-13.0"
    (other / "bin").mkdir(parents=True)
    (other / "bin" / "nvcc").write_text('#!/bin/sh\necho "Cuda compilation tools, release 13.0, V13.0.88"\n')
    (other / "bin" / "nvcc").chmod(0o755)
    env = {**lmod_env(tmp_path), "CUDA_HOME": str(other), "MODULEPATH": str(mods),
           "PATH": f"{other}/bin:/usr/local/cuda-11.0/bin:{BASE_PATH}",
           "LD_LIBRARY_PATH": f"/usr/local/cuda-11.0/lib64:{other}/lib64:/opt/mine/lib"}
    prefix = meta_of(venv_env)["layout"]["prefix"]
    if shell == "fish":
        module = f"function module; tclsh {cmd} fish $argv | source; end"
        show = "printf '%s|%s|%s\\n' (string join : $PATH) (string join : $LD_LIBRARY_PATH) $CUDA_HOME"
        which, argv = "command -s nvcc", ["fish", "--no-config", "-c"]
    else:
        module = f'module() {{ eval "$(tclsh {cmd} {shell} "$@")"; }}'
        show = 'printf \'%s|%s|%s\\n\' "$PATH" "$LD_LIBRARY_PATH" "$CUDA_HOME"'
        which, argv = "command -v nvcc", {"bash": ["bash", "--norc", "--noprofile", "-c"], "zsh": ["zsh", "-f", "-c"]}[shell]
    script = "\n".join([module, show, f"module load cuenv/{venv_env}", show, which, "echo active=$CUENV_ACTIVE",
                        f"module unload cuenv/{venv_env}", show])
    done = subprocess.run([*argv, script], capture_output=True, text=True, env=env, timeout=120)
    lines = done.stdout.splitlines()
    assert len(lines) == 5, (done.stdout, done.stderr)
    path, ld, home = lines[1].split("|")
    assert path.split(":")[0] == meta_of(venv_env)["layout"]["bin_dirs"][0]
    assert not [e for e in path.split(":") if e.startswith((str(other), "/usr/local/cuda-"))], path
    assert ld.split(":")[-1] == "/opt/mine/lib" and "cuda-11.0" not in ld and str(other) not in ld
    assert home == f"{prefix}/.cuenv/cuda"
    assert lines[2:4] == [f"{prefix}/.cuenv/shims/nvcc", f"active={venv_env}"]
    assert lines[4] == lines[0]  # unload: PATH, LD_LIBRARY_PATH and CUDA_HOME exactly as before


@needs_lmod
@pytest.mark.network
def test_doctor_knows_the_module_route_and_its_fix_is_not_the_load_already_done(venv_env: str, tmp_path: Path) -> None:
    """Issue 17 §6: loaded by a module, then a CUDA 13.0 toolkit put first on PATH: doctor's fix names the
    module (unload, load again), not `cuenv use`, and the compiler command recorded at create."""
    mods = tmp_path / "modules"
    cuenv("export", venv_env, "--format", "lmod", "-o", str(mods))
    other = tmp_path / "cuda-13.0"
    (other / "bin").mkdir(parents=True)
    (other / "bin" / "nvcc").write_text('#!/bin/sh\necho "Cuda compilation tools, release 13.0, V13.0.88"\n')
    (other / "bin" / "nvcc").chmod(0o755)
    runner = tmp_path / "bin"
    runner.mkdir()
    (runner / "cuenv").write_text(f'#!/bin/sh\nPYTHONPATH={REPO} exec {shlex.quote(sys.executable)} -m cuenv "$@"\n')
    (runner / "cuenv").chmod(0o755)
    env = {**lmod_env(tmp_path), "CUENV_HOME": os.environ["CUENV_HOME"], "CUENV_CONFIG": os.environ["CUENV_CONFIG"],
           "CUENV_DRIVER": "550.54.14", "CUENV_GPUS": "RTX 4090"}
    out = bash(f"module use {shlex.quote(str(mods))}\nmodule load cuenv/{venv_env}\n"
               f"export PATH={shlex.quote(str(other / 'bin'))}:{runner}:$PATH\ncuenv doctor --json || :", env)
    import json

    data = json.loads(out)
    fixes = {f["code"]: f["fix"] for c in data["checks"] for f in c["findings"]}
    assert data["environment"] == venv_env
    fix = fixes["nvcc-runtime-mismatch"]
    assert f"`module unload cuenv/{venv_env}`, then `module load cuenv/{venv_env}` again" in fix, fix
    assert "cuenv use" not in fix
    assert f"`cuenv create {meta_of(venv_env)['recipe']['name']} --with-nvcc --engine" in fix


@needs_lmod
@pytest.mark.network
def test_family_cuda_keeps_one_cuda_stack(venv_env: str, tmp_path: Path) -> None:
    mods = tmp_path / "modules"
    cuenv("export", venv_env, "--format", "lmod", "-o", str(mods))
    site = mods / "cuda"
    site.mkdir()
    (site / "12.4.lua").write_text('family("cuda")\nprepend_path("PATH", "/opt/site/cuda-12.4/bin")\nsetenv("CUDA_HOME", "/opt/site/cuda-12.4")\n')
    env = lmod_env(tmp_path)
    use = f"module use {shlex.quote(str(mods))}"
    # a site CUDA after cuenv's: the family swaps cuenv's out
    out = bash(f"{use}\nmodule load cuenv/{venv_env}\nmodule load cuda/12.4 2>/dev/null\nmodule -t list 2>&1\necho \"active=${{CUENV_ACTIVE-unset}}\"", env)
    assert "cuda/12.4" in out and f"cuenv/{venv_env}" not in out and "active=unset" in out
    # with automatic swapping off, Lmod refuses the second member of the family
    env_noswap = {**env, "LMOD_AUTO_SWAP": "no"}
    done = subprocess.run(["bash", "--norc", "-c", f"source {LMOD_INIT}\n{use}\nmodule load cuenv/{venv_env}\nmodule load cuda/12.4"],
                          capture_output=True, text=True, env=env_noswap)
    assert "family" in done.stderr and "cuda" in done.stderr
    # a site CUDA already loaded: cuenv's module conflicts with it
    done = subprocess.run(["bash", "--norc", "-c", f"source {LMOD_INIT}\n{use}\nmodule load cuda/12.4\nmodule load cuenv/{venv_env} && echo loaded"],
                          capture_output=True, text=True, env=env_noswap)
    assert "loaded" not in done.stdout


@needs_tclsh
@pytest.mark.network
def test_tcl_modulefile_with_a_module_command_shim(venv_env: str, tmp_path: Path) -> None:
    """Environment Modules conflicts with Lmod on Debian: tclsh with the module commands recorded."""
    mods = tmp_path / "modules"
    cuenv("export", venv_env, "--format", "tcl", "-o", str(mods))
    file = mods / "cuenv" / venv_env
    assert file.read_text().startswith("#%Module1.0\n")
    shim = """
        fconfigure stdout -translation binary
        proc record {args} { puts -nonewline [encoding convertto utf-8 "[join $args \\x1f]\\x1e"] }
        foreach cmd {module-whatis conflict family prepend-path setenv pushenv} { proc $cmd {args} "record $cmd {*}\\$args" }
        proc module-info {args} { return 1 }
        source [lindex $argv 0]
    """
    out = subprocess.run(["tclsh", "/dev/stdin", str(file)], input=shim.encode(), capture_output=True, check=True, env=UTF8).stdout.decode()
    calls = [row.split("\x1f") for row in out.split("\x1e")[:-1]]
    meta = meta_of(venv_env)
    prefix = meta["layout"]["prefix"]
    assert ["family", "cuda"] in calls and ["conflict", "cuda", "cudatoolkit"] in calls
    prepends = [c[2] for c in calls if c[0] == "prepend-path" and c[1] == "PATH"]
    assert list(reversed(prepends)) == [*meta["layout"]["bin_dirs"], f"{prefix}/.cuenv/shims"]
    assert ["pushenv", "NCCL_SOCKET_IFNAME", HOSTILE] in calls  # UTF-8, quotes, $, [ ], braces, backslashes: exact
    assert ["pushenv", "CUDA_HOME", f"{prefix}/.cuenv/cuda"] in calls
    # without pushenv (Environment Modules < 5.1), setenv
    out = subprocess.run(["tclsh", "/dev/stdin", str(file)], input=shim.replace(" pushenv}", "}").encode(),
                         capture_output=True, check=True, env=UTF8).stdout.decode()
    assert ["setenv", "NCCL_SOCKET_IFNAME", HOSTILE] in [row.split("\x1f") for row in out.split("\x1e")[:-1]]


@needs_lmod
@pytest.mark.network
def test_module_refuses_to_load_when_the_prefix_is_missing(venv_env: str, tmp_path: Path) -> None:
    mods = tmp_path / "modules"
    cuenv("export", venv_env, "--format", "lmod", "-o", str(mods))
    text = (mods / "cuenv" / f"{venv_env}.lua").read_text()
    (mods / "cuenv" / "gone.lua").write_text(text.replace(os.environ["CUENV_HOME"], str(tmp_path / "not-mounted")))
    done = subprocess.run(["bash", "--norc", "-c", f"source {LMOD_INIT}\nmodule use {mods}\nmodule load cuenv/gone && echo loaded"],
                          capture_output=True, text=True, env=lmod_env(tmp_path))
    assert "loaded" not in done.stdout and "is not at" in " ".join(done.stderr.split())
