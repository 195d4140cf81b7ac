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
    # issue 31: in the old families, each makes a program import code or write where the file says
    "TRITON_CACHE_MANAGER", "TORCH_TRACE", "TORCH_LOGS_OUT", "TF_DUMP_GRAPH_PREFIX", "HOROVOD_TIMELINE",
    "CUDA_COREDUMP_PIPE", "CUDA_COREDUMP_FILE", "OMP_TOOL_VERBOSE_INIT", "CUDA_CACHE_PATH", "CUDNN_LOGDEST_DBG",
    "CUBLAS_LOGDEST_DBG", "NCCL_TOPO_FILE", "JAX_COMPILATION_CACHE_DIR", "CUPY_CACHE_DIR", "CUDA_MPS_PIPE_DIRECTORY",
    "TORCHINDUCTOR_CACHE_DIR", "NUMBA_CACHE_DIR", "CUDA_A",
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
    value = "--xla_gpu_autotune_level=2" if name in envvars.FLAG_VARS else "1"
    assert envvars.check({name: value}, source="recipe") == {name: value}


def test_every_allowed_name_has_a_reason_and_a_source() -> None:
    for name, (what, source) in envvars.ALLOWED.items():
        assert envvars.NAME_RE.fullmatch(name) and envvars.never_reason(name) is None, name
        assert what and source in envvars.SOURCES, name
        # no allowed name says it names a path, a file, a library or a command
        assert not any(w in name.split("_") for w in ("PATH", "DIR", "FILE", "LIB", "CMD", "PIPE", "OUT", "PREFIX",
                                                        "MANAGER", "TRACE", "TIMELINE", "HOME", "ROOT")), name


@settings(max_examples=400, deadline=None)
@given(st.from_regex(r"[A-Z][A-Z0-9_]{0,30}", fullmatch=True))
def test_a_name_off_the_list_is_refused_by_name(name: str) -> None:
    """The class: any name not on the list (or the user's config) is refused, and the message names it."""
    why = envvars.name_problem(name)
    if name in envvars.ALLOWED:
        assert why is None
    else:
        assert why is not None and why.startswith(name)


def test_the_reason_is_named() -> None:
    assert envvars.name_problem("PROMPT_COMMAND") == "PROMPT_COMMAND bash runs it as a command at every prompt"
    assert "load a library" in (envvars.name_problem("CUDA_INJECTION64_PATH") or "")
    assert envvars.name_problem("TRITON_CACHE_MANAGER") == (
        "TRITON_CACHE_MANAGER is not on the list of CUDA and framework settings a shared file may set")
    with pytest.raises(Untrusted, match="Refusing lockfile x.lock: TORCH_TRACE is not on the list") as got:
        envvars.check({"CUDA_MODULE_LOADING": "LAZY", "TORCH_TRACE": "/home/me/.bashrc"}, source="lockfile x.lock")
    assert "docs/concepts/security.md" in (got.value.hint or "")


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
        envvars.check({"CUDA_MODULE_LOADING": value}, source="lockfile")


def test_tabs_spaces_quotes_and_utf8_are_fine() -> None:
    value = "eth0\t'\"$HOME\\ é"
    assert envvars.check({"NCCL_SOCKET_IFNAME": value}, source="s") == {"NCCL_SOCKET_IFNAME": value}


@pytest.mark.parametrize("name,value", [
    ("XLA_FLAGS", "--xla_gpu_cuda_data_dir=/tmp/evil"),  # XLA runs ptxas from there
    ("XLA_FLAGS", "--xla_gpu_autotune_level=2 --xla_dump_to /home/me/.bashrc"),
    ("TF_XLA_FLAGS", "--xla_gpu_per_fusion_autotune_cache_dir=/tmp/x"),
    ("LIBTPU_INIT_ARGS", "--xla_jf_crash_file=/tmp/x"),
    # issue 31: the flags the old pattern missed
    ("XLA_FLAGS", "--xla_dump_hlo_module_re=.* --xla_gpu_dump_autotune_results_to=x"),
    ("XLA_FLAGS", "--xla_gpu_load_autotune_results_from=/tmp/x"),
    ("XLA_FLAGS", "--xla_gpu_dump_llvmir_filename=/tmp/x"),
    ("XLA_FLAGS", "--xla_dump_to=1"),
])
def test_flags_that_name_a_path_are_refused_even_for_allowed_names(name: str, value: str) -> None:
    with pytest.raises(Untrusted, match=f"the value of {name} sets --[a-z_]+, which names a path"):
        envvars.check({name: value}, source="lockfile", extra=[name])


@settings(max_examples=300, deadline=None)
@given(st.from_regex(r"[a-z][a-z0-9_]{0,20}", fullmatch=True),
       st.one_of(st.just("/tmp/x"), st.just("out.txt"), st.just("~/.bashrc"), st.just("mod:Class"),
                 st.text(alphabet="abcdefxyz./_~:", min_size=1, max_size=12)))
def test_a_flag_with_a_text_value_is_refused(flag: str, arg: str) -> None:
    """The class: whatever the flag's name, a value that is not a boolean or a number cannot pass
    (unless the flag is one of the few listed with its words, and then only those words)."""
    why = envvars.flag_problem(f"--{flag}={arg}")
    if flag in envvars.FLAG_WORDS and envvars.FLAG_WORDS[flag].fullmatch(arg):
        return
    if arg in ("true", "false"):
        return
    assert why is not None and f"--{flag}" in why


def test_ordinary_flags_pass() -> None:
    flags = "--xla_force_host_platform_device_count=8 --xla_gpu_enable_latency_hiding_scheduler=true"
    assert envvars.check({"XLA_FLAGS": flags}, source="s") == {"XLA_FLAGS": flags}


def test_count_and_total_limits() -> None:
    names = sorted(envvars.ALLOWED)
    many = {f"MYLAB_V{i}": "1" for i in range(envvars.MAX_COUNT + 1)}
    with pytest.raises(Untrusted, match="more than the 64"):
        envvars.check(many, source="s", extra=["MYLAB_*"])
    big = {names[i]: "x" * envvars.MAX_VALUE for i in range(9)}
    with pytest.raises(Untrusted, match="characters \\(at most 65536\\)"):
        envvars.check(big, source="s")


def test_every_problem_is_listed_once() -> None:
    found = envvars.problems({"PROMPT_COMMAND": "x", "NCCL_DEBUG": "1", "LD_PRELOAD": "y", "NCCL_ALGO": "a\nb"})
    assert [n for n, _ in found] == ["PROMPT_COMMAND", "LD_PRELOAD", "NCCL_ALGO"]
    with pytest.raises(Untrusted, match=r"\(2 more\)"):
        envvars.check({"PROMPT_COMMAND": "x", "LD_PRELOAD": "y", "NCCL_ALGO": "a\nb"}, source="s")


def test_not_a_mapping() -> None:
    with pytest.raises(Untrusted, match="not a mapping"):
        envvars.check(["CUDA_MODULE_LOADING=1"], source="s")


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


@pytest.mark.parametrize("env", [{"TRITON_CACHE_MANAGER": "evil:Manager"}, {"HOROVOD_TIMELINE": "/home/me/.bashrc"},
                                 {"XLA_FLAGS": "--xla_gpu_dump_llvmir_filename=/tmp/x"}])
def test_an_archive_manifest_is_held_to_the_same_list(tmp_path, env: dict[str, str]) -> None:
    from cuenv.export import pack

    manifest = {"meta": {"env_vars": env, "layout": {}}}
    with pytest.raises(Untrusted, match=f"Refusing archive {tmp_path / 'a.tar'}: .*{next(iter(env))}"):
        pack._check_meta(tmp_path / "a.tar", manifest, ())


def test_a_recipe_is_held_to_the_same_list_and_the_built_ins_pass() -> None:
    from cuenv.recipes import catalogue

    text = (catalogue.builtin_dir() / "cuda-12.1.yaml").read_text() + "env:\n  TORCH_LOGS_OUT: /home/me/.bashrc\n"
    with pytest.raises(catalogue.RecipeError, match="env.TORCH_LOGS_OUT: a recipe cannot set it: TORCH_LOGS_OUT is not on"):
        catalogue.parse(text, file="r.yaml", stem="cuda-12.1")
    for recipe in catalogue.Catalogue(catalogue.builtin_dir()).all():  # every built-in loads under the list
        assert envvars.problems(dict(recipe.env)) == []
