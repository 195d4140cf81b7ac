"""Unit tests of the pure activation core: whole structures, and apply/restore round trips."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from cuenv.activation.plan import (
    PathEdit,
    Plan,
    StripRule,
    activated_env,
    apply,
    plan_for,
    restore,
)
from cuenv.activation.target import ActivationTarget, CudaLayout
from cuenv.errors import UsageError

ENVS = Path("/h/envs")
P = "/h/envs/t"
SYSTEM_RULES = (
    StripRule("tree", "/usr/local/cuda"),
    StripRule("prefix", "/usr/local/cuda-"),
    StripRule("prefix", "/opt/cuda"),
    StripRule("tree", "/h/envs"),
)
HOME_RULES = (StripRule("home", "CUDA_HOME"), StripRule("home", "CUDA_PATH"))


def venv_target(**env_vars: str) -> ActivationTarget:
    layout = CudaLayout(
        prefix=Path(P), kind="venv",
        bin_dirs=(Path(P, "bin"), Path(P, "nv/cuda_nvcc/bin/")),
        lib_dirs=(Path(P, "nv/cuda_runtime/lib"), Path(P, "nv/cudnn/lib")),
    )
    return ActivationTarget(name="t", layout=layout, env_vars=env_vars)


def test_plan_venv_whole_structure():
    plan = plan_for(venv_target(CUDA_MODULE_LOADING="LAZY"), envs_dir=ENVS, other_roots=[Path("/srv/cuda-11.8")])
    assert plan == Plan(
        name="t",
        paths=(
            PathEdit("PATH", (f"{P}/bin", f"{P}/nv/cuda_nvcc/bin")),
            PathEdit("LD_LIBRARY_PATH", (f"{P}/nv/cuda_runtime/lib", f"{P}/nv/cudnn/lib")),
        ),
        set=(("VIRTUAL_ENV", P), ("CUENV_ACTIVE", "t"), ("CUDA_MODULE_LOADING", "LAZY")),
        unset=("CUDA_HOME", "CUDA_PATH", "CONDA_PREFIX", "PYTHONHOME"),
        # the environment's own dirs are inside /h/envs: no rule of their own
        strip=SYSTEM_RULES + (StripRule("tree", "/srv/cuda-11.8"),) + HOME_RULES,
    )
    assert plan.touched == ("PATH", "LD_LIBRARY_PATH", "VIRTUAL_ENV", "CUENV_ACTIVE", "CUDA_MODULE_LOADING",
                            "CUDA_HOME", "CUDA_PATH", "CONDA_PREFIX", "PYTHONHOME")


def test_plan_conda_and_system():
    conda = ActivationTarget("c", CudaLayout(Path("/h/envs/c"), "conda", (Path("/h/envs/c/bin"),),
                                             (Path("/h/envs/c/lib"),), cuda_home=Path("/h/envs/c")))
    plan = plan_for(conda, envs_dir=ENVS)
    assert plan.set == (("CUDA_HOME", "/h/envs/c"), ("CUDA_PATH", "/h/envs/c"), ("CONDA_PREFIX", "/h/envs/c"),
                        ("CUENV_ACTIVE", "c"))
    assert plan.unset == ("VIRTUAL_ENV", "PYTHONHOME")
    system = ActivationTarget("system:12.1", CudaLayout(Path("/usr/local/cuda-12.1"), "system",
                                                       (Path("/usr/local/cuda-12.1/bin"),),
                                                       (Path("/usr/local/cuda-12.1/lib64"),),
                                                       cuda_home=Path("/usr/local/cuda-12.1")))
    plan = plan_for(system, envs_dir=ENVS)
    # a system toolkit leaves the Python environment (venv or conda) alone
    assert plan.set == (("CUDA_HOME", "/usr/local/cuda-12.1"), ("CUDA_PATH", "/usr/local/cuda-12.1"),
                        ("CUENV_ACTIVE", "system:12.1"))
    assert plan.unset == ()
    assert plan.strip == SYSTEM_RULES + HOME_RULES  # its own dirs are covered by /usr/local/cuda-
    elsewhere = ActivationTarget("system:12.4", CudaLayout(Path("/srv/cuda"), "system", (Path("/srv/cuda/bin"),),
                                                           (Path("/srv/cuda/lib64"),), cuda_home=Path("/srv/cuda")))
    assert plan_for(elsewhere, envs_dir=ENVS).strip == SYSTEM_RULES + (StripRule("tree", "/srv/cuda"),) + HOME_RULES


def test_apply_strips_other_cudas_and_restores_exactly():
    old = {
        "PATH": "/usr/local/cuda-11.8/bin:/opt/cuda/bin::/home/u/.local/bin:/h/envs/other/bin:/mycuda/bin/:/usr/bin",
        "LD_LIBRARY_PATH": "/usr/local/cuda/lib64:/mycuda/lib64:/mycuda/lib64/stubs:/mycudax/lib:/usr/lib/x86_64-linux-gnu",
        "CUDA_HOME": "/mycuda/",
        "VIRTUAL_ENV": "/home/u/venv",
        "CUDA_MODULE_LOADING": "",
        "KEEP": "me",
    }
    new, saved = apply(old, plan_for(venv_target(CUDA_MODULE_LOADING="LAZY"), envs_dir=ENVS))
    assert new == {
        "PATH": f"{P}/bin:{P}/nv/cuda_nvcc/bin:/home/u/.local/bin:/usr/bin",
        "LD_LIBRARY_PATH": f"{P}/nv/cuda_runtime/lib:{P}/nv/cudnn/lib:/mycudax/lib:/usr/lib/x86_64-linux-gnu",
        "VIRTUAL_ENV": P,
        "CUENV_ACTIVE": "t",
        "CUDA_MODULE_LOADING": "LAZY",
        "KEEP": "me",
    }
    assert saved == {"PATH": old["PATH"], "LD_LIBRARY_PATH": old["LD_LIBRARY_PATH"], "VIRTUAL_ENV": "/home/u/venv",
                     "CUENV_ACTIVE": None, "CUDA_MODULE_LOADING": "", "CUDA_HOME": "/mycuda/", "CUDA_PATH": None,
                     "CONDA_PREFIX": None, "PYTHONHOME": None}
    assert restore(new, saved) == old


@pytest.mark.parametrize("cuda_home", ["/usr", "/usr/", "/", "relative/cuda", "/opt"])
def test_system_dirs_are_never_stripped_whatever_cuda_home_says(cuda_home):
    old = {"PATH": "/usr/bin:/bin:/opt/bin", "CUDA_HOME": cuda_home}
    new, _ = apply(old, plan_for(venv_target(), envs_dir=ENVS))
    assert new["PATH"] == f"{P}/bin:{P}/nv/cuda_nvcc/bin:/usr/bin:/bin:/opt/bin"


def test_empty_result_unsets_and_empty_value_stays_empty_after_restore():
    target = ActivationTarget("e", CudaLayout(Path("/h/envs/e"), "venv", (Path("/h/envs/e/bin"),), ()))
    old = {"LD_LIBRARY_PATH": "/usr/local/cuda/lib64", "PATH": "", "PYTHONHOME": ""}
    new, saved = apply(old, plan_for(target, envs_dir=ENVS))
    assert "LD_LIBRARY_PATH" not in new and new["PATH"] == "/h/envs/e/bin" and "PYTHONHOME" not in new
    assert restore(new, saved) == old


@pytest.mark.parametrize(
    ("env_vars", "prefix", "message"),
    [
        ({"PATH": "/x"}, P, "never activates it"),
        ({"lower": "x"}, P, "cannot activate"),
        ({"PS1": "x"}, P, "never activates it"),
        ({"PROMPT_COMMAND": "touch /tmp/pwned"}, P, "bash runs it as a command at every prompt"),
        ({"LD_PRELOAD": "/tmp/evil.so"}, P, "never activates it"),
        ({"BASH_ENV": "/tmp/x"}, P, "never activates it"),
        ({}, "/h/en:vs/t", "contains ':'"),
        ({}, "rel/t", "not an absolute path"),
    ],
)
def test_bad_targets_are_usage_errors(env_vars, prefix, message):
    target = ActivationTarget("t", CudaLayout(Path(prefix), "venv", (Path(prefix, "bin"),)), env_vars)
    with pytest.raises(UsageError, match=message):
        plan_for(target, envs_dir=ENVS)


def test_activated_env_matches_apply():
    old = {"PATH": "/usr/bin", "CUDA_HOME": "/usr/local/cuda-11.8"}
    assert activated_env(old, venv_target(), Path("/h")) == apply(old, plan_for(venv_target(), envs_dir=ENVS))[0]


entry = st.text(st.characters(blacklist_characters=":\0", blacklist_categories=("Cs",)), max_size=12)
paths = st.lists(st.one_of(entry, st.sampled_from(["/usr/local/cuda/bin", "/h/envs/x/lib", "/opt/cuda-9/lib", "", f"{P}/bin"])),
                 max_size=6).map(":".join)
values = st.text(st.characters(blacklist_characters="\0", blacklist_categories=("Cs",)), max_size=12)
envs = st.fixed_dictionaries(
    {},
    optional={"PATH": paths, "LD_LIBRARY_PATH": paths, "CUDA_HOME": values, "CUDA_PATH": values,
              "VIRTUAL_ENV": values, "CONDA_PREFIX": values, "CUENV_ACTIVE": values, "OTHER": values},
)


@settings(max_examples=300, deadline=None)
@given(old=envs, value=values)
def test_apply_then_restore_is_identity(old, value):
    plan = plan_for(venv_target(OTHER=value), envs_dir=ENVS)
    new, saved = apply(old, plan)
    assert restore(new, saved) == old
    assert new["OTHER"] == value and new["CUENV_ACTIVE"] == "t"
    assert new["PATH"].split(":")[:2] == [f"{P}/bin", f"{P}/nv/cuda_nvcc/bin"]
    assert all(e and not e.startswith(("/usr/local/cuda", "/opt/cuda", "/h/envs/x")) for e in new["PATH"].split(":")[2:])


def test_shims_come_right_after_the_environments_own_tools():
    """Issue 17: a shim of a CUDA tool the environment lacks wins over /usr/local/bin, which is never stripped."""
    layout = CudaLayout(Path("/h/envs/e"), "venv", (Path("/h/envs/e/bin"), Path("/h/envs/e/nv/bin")), (Path("/h/envs/e/lib"),))
    target = ActivationTarget("e", layout, shims_dir=Path("/h/envs/e/.cuenv/shims"))
    plan = plan_for(target, envs_dir=Path("/h/envs"))
    new, _ = apply({"PATH": "/usr/local/cuda-13.0/bin:/usr/local/bin:/usr/bin"}, plan)
    assert new["PATH"] == "/h/envs/e/bin:/h/envs/e/nv/bin:/h/envs/e/.cuenv/shims:/usr/local/bin:/usr/bin"
    assert plan_for(ActivationTarget("e", layout), envs_dir=Path("/h/envs")).paths[0].prepend == (
        "/h/envs/e/bin", "/h/envs/e/nv/bin")
