"""Which variables a shared file may set (issue 14 §1): the allowlist, its hard rules, its limits."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from cuenv.trust import Untrusted, envvars

# The variables of the issue and their friends: each runs code, loads code, or belongs to someone else.
HOSTILE = [
    "PROMPT_COMMAND", "BASH_ENV", "ENV", "LD_PRELOAD", "LD_LIBRARY_PATH", "LD_AUDIT", "PATH", "PYTHONPATH",
    "PYTHONSTARTUP", "PS1", "PS0", "ZDOTDIR", "SHELLOPTS", "BASH_FUNC_ls%%", "IFS", "DYLD_INSERT_LIBRARIES",
    "CUDA_INJECTION64_PATH", "NVTX_INJECTION64_PATH", "NCCL_NET_PLUGIN", "NCCL_TUNER_PLUGIN", "TRITON_PTXAS_PATH",
    "TRITON_LIBCUDA_PATH", "NUMBA_CUDA_DRIVER", "CUDA_HOME", "CUDA_PATH", "CUENV_ACTIVE", "CONDA_PREFIX",
    "VIRTUAL_ENV", "PYTHONHOME", "GLIBC_TUNABLES", "NODE_OPTIONS", "GIT_SSH_COMMAND", "PIP_INDEX_URL",
    "UV_INDEX_URL", "HTTPS_PROXY", "SSL_CERT_FILE", "TMPDIR", "HOME", "EDITOR", "MY_VAR", "lower_case", "",
    # inside the allowed families, still loading code from a path, or writing to any file
    "OMP_TOOL_LIBRARIES", "UCX_MODULE_DIR", "TRITON_CACHE_DIR", "TORCH_EXTENSIONS_DIR", "NCCL_CONF_FILE",
    "NCCL_DEBUG_FILE", "CUDNN_ROOT", "TENSORRT_ROOT", "NUMBA_CUDA_NVVM_LIB", "TORCH_NVCC_EXECUTABLE",
    "1ABC", "A-B", "A B", "A\nB", "X" * 200,
]
CUDA_STACK = ["CUDA_VISIBLE_DEVICES", "CUDA_MODULE_LOADING", "CUDA_DEVICE_ORDER", "NCCL_DEBUG", "NCCL_P2P_DISABLE",
              "XLA_FLAGS", "TF_CPP_MIN_LOG_LEVEL", "TF_FORCE_GPU_ALLOW_GROWTH", "PYTORCH_CUDA_ALLOC_CONF",
              "TORCH_CUDA_ARCH_LIST", "CUDNN_LOGLEVEL_DBG", "CUBLAS_WORKSPACE_CONFIG", "NVIDIA_VISIBLE_DEVICES",
              "JAX_PLATFORMS", "OMP_NUM_THREADS"]


@pytest.mark.parametrize("name", HOSTILE)
def test_hostile_names_are_refused(name: str) -> None:
    assert envvars.name_problem(name) is not None
    with pytest.raises(Untrusted, match="Refusing lockfile x.lock"):
        envvars.check({name: "1"}, source="lockfile x.lock")


@pytest.mark.parametrize("name", CUDA_STACK)
def test_cuda_stack_names_are_allowed(name: str) -> None:
    assert envvars.check({name: "1"}, source="recipe") == {name: "1"}


def test_the_reason_is_named() -> None:
    assert envvars.name_problem("PROMPT_COMMAND") == "PROMPT_COMMAND bash runs it as a command at every prompt"
    assert "load a library" in (envvars.name_problem("CUDA_INJECTION64_PATH") or "")
    assert "not a variable of the CUDA stack" in (envvars.name_problem("MY_VAR") or "")


def test_user_extension_adds_names_but_never_hard_ones() -> None:
    extra = ["MY_VAR", "MYAPP_*", "TRITON_PTXAS_PATH", "LD_*", "PROMPT_COMMAND", "PYTHONPATH"]
    assert envvars.name_problem("MY_VAR", extra=extra) is None
    assert envvars.name_problem("MYAPP_THREADS", extra=extra) is None
    assert envvars.name_problem("TRITON_PTXAS_PATH", extra=extra) is None  # a "loads code" name, lifted by name
    for hard in ("LD_PRELOAD", "PROMPT_COMMAND", "PYTHONPATH", "BASH_ENV", "CUDA_INJECTION64_PATH"):
        assert envvars.name_problem(hard, extra=extra + [hard]) is not None, hard


@pytest.mark.parametrize("pattern,ok", [("MY_VAR", True), ("MYAPP_*", True), ("*", False), ("A*", False),
                                        ("my_var", False), ("A B", False), ("", False)])
def test_extension_patterns(pattern: str, ok: bool) -> None:
    assert envvars.valid_extension(pattern) is ok


@pytest.mark.parametrize("value,why", [
    ("a\nb", "control character"), ("a\0b", "control character"), ("\x1b[2J", "control character"),
    ("x" * (envvars.MAX_VALUE + 1), "characters long"), (5, "not a string"), (None, "not a string"),
])
def test_bad_values(value: object, why: str) -> None:
    with pytest.raises(Untrusted, match=why):
        envvars.check({"CUDA_X": value}, source="lockfile")


def test_tabs_spaces_quotes_and_utf8_are_fine() -> None:
    value = "--xla_gpu_autotune_level=2\t'\"$HOME\\ é"
    assert envvars.check({"XLA_FLAGS": value}, source="s") == {"XLA_FLAGS": value}


@pytest.mark.parametrize("name,value", [
    ("XLA_FLAGS", "--xla_gpu_cuda_data_dir=/tmp/evil"),  # XLA runs ptxas from there
    ("XLA_FLAGS", "--xla_gpu_autotune_level=2 --xla_dump_to /home/me/.bashrc"),
    ("TF_XLA_FLAGS", "--xla_gpu_per_fusion_autotune_cache_dir=/tmp/x"),
    ("LIBTPU_INIT_ARGS", "--xla_jf_crash_file=/tmp/x"),
])
def test_flags_that_name_a_path_are_refused_even_for_allowed_names(name: str, value: str) -> None:
    with pytest.raises(Untrusted, match=f"the value of {name} sets --[a-z_]+, which names a path"):
        envvars.check({name: value}, source="lockfile", extra=[name])


def test_ordinary_flags_pass() -> None:
    flags = "--xla_force_host_platform_device_count=8 --xla_gpu_enable_latency_hiding_scheduler=true"
    assert envvars.check({"XLA_FLAGS": flags}, source="s") == {"XLA_FLAGS": flags}


def test_count_and_total_limits() -> None:
    many = {f"CUDA_V{i}": "1" for i in range(envvars.MAX_COUNT + 1)}
    with pytest.raises(Untrusted, match="more than the 64"):
        envvars.check(many, source="s")
    big = {f"CUDA_V{i}": "x" * envvars.MAX_VALUE for i in range(9)}
    with pytest.raises(Untrusted, match="characters \\(at most 65536\\)"):
        envvars.check(big, source="s")


def test_every_problem_is_listed_once() -> None:
    found = envvars.problems({"PROMPT_COMMAND": "x", "CUDA_OK": "1", "LD_PRELOAD": "y", "CUDA_BAD": "a\nb"})
    assert [n for n, _ in found] == ["PROMPT_COMMAND", "LD_PRELOAD", "CUDA_BAD"]
    with pytest.raises(Untrusted, match=r"\(2 more\)"):
        envvars.check({"PROMPT_COMMAND": "x", "LD_PRELOAD": "y", "CUDA_BAD": "a\nb"}, source="s")


def test_not_a_mapping() -> None:
    with pytest.raises(Untrusted, match="not a mapping"):
        envvars.check(["CUDA_X=1"], source="s")


@settings(max_examples=300, deadline=None)
@given(st.dictionaries(st.text(max_size=30), st.one_of(st.text(max_size=50), st.integers(), st.none()), max_size=8),
       st.lists(st.text(max_size=12), max_size=3))
def test_fuzz_clean_refusal_or_a_safe_dict(env: dict, extra: list[str]) -> None:
    try:
        out = envvars.check(env, source="fuzz", extra=extra)
    except Untrusted as exc:
        assert "\n" not in exc.message
        return
    for name, value in out.items():
        assert envvars.NAME_RE.fullmatch(name) and envvars.never_reason(name) is None
        assert not any(ord(c) < 32 and c != "\t" for c in value)
