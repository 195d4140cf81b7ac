"""Hostile paths and values round-trip in bash, zsh and fish, and match the Python `apply` (STYLE.md §10)."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from cuenv.activation import fish as fish_render
from cuenv.activation import posix
from cuenv.activation.plan import apply, plan_for
from cuenv.activation.render import render
from cuenv.activation.target import ActivationTarget, CudaLayout

from .conftest import read_env0, run_shell, shell_or_skip

NASTY = [" ", "'", '"', "$HOME", "\\", "\n", "é", "日本", "*", "?", "[a]", "`id`", "$(id)", "!", "%", "~", "#", "\t", "=", "-"]
text = st.lists(st.one_of(st.sampled_from(NASTY), st.text("abcXYZ019._", min_size=1, max_size=3)), max_size=5).map("".join)
component = text.filter(lambda s: s not in ("", ".", "..") and "/" not in s)
trailing = st.one_of(text, text.map(lambda s: s + "\\"))  # a trailing backslash breaks naive fish quoting
entry = st.one_of(text.map(lambda s: "/" + s), st.sampled_from(["/usr/local/cuda-11.8/bin", "/usr/local/cuda/lib64",
                                                               "/opt/cuda/bin", "", "/usr/bin", "/my cuda/bin",
                                                               "/my cuda/lib64/x", "/my cudax/lib"]))
pathlist = st.lists(entry, max_size=5).map(":".join)
old_env = st.fixed_dictionaries({}, optional={
    "PATH": pathlist.map(lambda p: "/usr/bin:/bin" + (":" + p if p else "")),
    "LD_LIBRARY_PATH": pathlist, "CUDA_HOME": st.one_of(trailing, st.sampled_from(["/my cuda", "/my cuda/", "/usr"])), "VIRTUAL_ENV": text, "CONDA_PREFIX": text,
    "MY_FLAGS": trailing, "MY_PATH": text,
})


def _target(root: Path, name_dir: str, value: str, path_value: str) -> ActivationTarget:
    prefix = root / "en vs" / name_dir
    layout = CudaLayout(prefix=prefix, kind="venv", bin_dirs=(prefix / "bin", prefix / name_dir / "bin"),
                        lib_dirs=(prefix / "lib",))
    return ActivationTarget(name="hostile", layout=layout, env_vars={"MY_FLAGS": value, "MY_PATH": path_value})


@pytest.mark.parametrize(
    ("value", "posix_quoted", "fish_quoted"),
    [
        ("plain", "'plain'", "'plain'"),
        ("it's", "'it'\\''s'", "'it\\'s'"),
        ("back\\slash\\", "'back\\slash\\'", "'back\\\\slash\\\\'"),
        ("$HOME `x`", "'$HOME `x`'", "'$HOME `x`'"),
        ("", "''", "''"),
    ],
)
def test_quoting_table(value, posix_quoted, fish_quoted):
    assert posix.quote(value) == posix_quoted
    assert fish_render.quote(value) == fish_quoted


@pytest.mark.parametrize("shell_name", ["bash", "zsh", "fish"])
@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(name_dir=component, value=trailing, path_value=text, old=old_env)
def test_hostile_round_trip(shell_name, tmp_path, name_dir, value, path_value, old):
    shell_or_skip(shell_name)
    work = tmp_path / "w"
    work.mkdir(exist_ok=True)
    target = _target(tmp_path, name_dir, value, path_value)
    plan = plan_for(target, envs_dir=tmp_path / "en vs")
    script = work / f"activate.{shell_name}"
    script.write_text(render(plan, shell_name, prompt=True), encoding="utf-8")
    dumps = [work / f"d{i}" for i in range(3)]
    src = "source" if shell_name == "fish" else "."
    body = "\n".join([
        f"env -0 > '{dumps[0]}'",
        f"{src} '{script}'",
        f"env -0 > '{dumps[1]}'",
        "__cuenv_restore",
        f"env -0 > '{dumps[2]}'",
    ])
    env = {"HOME": str(tmp_path), "LANG": "C.UTF-8", "PATH": "/usr/bin:/bin", **old}
    out = run_shell(shell_name, body, env)
    assert out.returncode == 0, out.stderr
    before, during, after = map(read_env0, dumps)
    expected, _ = apply(before, plan)
    assert during == expected
    assert after == before
    assert during["MY_FLAGS"] == value

