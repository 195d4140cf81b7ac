"""Which environment variables a shared file may set on activation (issue 14 §1, issue 31 §2). Pure.

A recipe's ``env:``, a lock's ``recipe.env`` and an archive's manifest are written by someone else,
and activation exports their variables into the user's shell and every program it starts. A
denylist always misses one: the families of the last round (CUDA_*, TORCH_*, TRITON_*, ...) let through
``TRITON_CACHE_MANAGER=module:Class`` (Triton imports and instantiates it), ``TORCH_TRACE``,
``TORCH_LOGS_OUT``, ``TF_DUMP_GRAPH_PREFIX``, ``HOROVOD_TIMELINE``, ``CUDA_COREDUMP_PIPE`` and
``OMP_TOOL_VERBOSE_INIT`` (each makes a program write where the file says). So the rule is a list of
**names**: ``ALLOWED`` below, each a documented knob that changes how a CUDA stack runs (devices, memory,
logging to the terminal, determinism, threads) and never where it reads code from or writes files to,
with its source. Every other name is refused, naming it.

Flag variables (``XLA_FLAGS``, ``TF_XLA_FLAGS``, ``LIBTPU_INIT_ARGS``) are allowed by value, also as a list:
every flag is ``--name`` or ``--name=VALUE`` where VALUE is a boolean or a number (a flag that names a
path needs text), or one of the few flags in ``FLAG_WORDS`` with a word of its own; and no flag name
says path, file, folder, dump or output at all (``--xla_dump_to=1`` writes a file named 1).

The user may extend the list in the config file (``trusted_env_vars: [NAME, PREFIX_*]``); that extension
never lifts the hard rules: shell hooks, loader and interpreter variables, and what cuenv or the shell
manage are refused whatever the config says (a user who wants them sets them in their own shell rc).

Values: one line of printable text (tabs allowed), at most ``MAX_VALUE`` characters; at most
``MAX_COUNT`` variables and ``MAX_TOTAL`` characters in all, so an activated environment stays far
below the kernel's argument-and-environment limit (a 100 MB value made every `cuenv run` fail with
"Argument list too long").
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from typing import Final

from cuenv.trust import Untrusted

NAME_RE: Final = re.compile(r"[A-Z_][A-Z0-9_]{0,127}")
MAX_VALUE: Final = 8192
MAX_COUNT: Final = 64
MAX_TOTAL: Final = 65536

# Where each name is documented (the key after the name in ALLOWED).
SOURCES: Final = {
    "cuda": "CUDA Programming Guide, appendix 'CUDA Environment Variables' "
            "(docs.nvidia.com/cuda/cuda-programming-guide/05-appendices/environment-variables.html)",
    "container": "NVIDIA Container Toolkit, 'Specialized Configurations' (docs.nvidia.com/datacenter/cloud-native/"
                 "container-toolkit/latest/docker-specialized.html)",
    "nccl": "NCCL User Guide, 'Environment Variables' (docs.nvidia.com/deeplearning/nccl/user-guide/docs/env.html)",
    "cublas": "cuBLAS documentation, 'Results reproducibility' and 'cuBLASLt logging' (docs.nvidia.com/cuda/cublas/)",
    "cudnn": "cuDNN documentation, 'API Logging' (docs.nvidia.com/deeplearning/cudnn/latest/reference/troubleshooting.html)",
    "torch": "PyTorch, 'CUDA Environment Variables' (docs.pytorch.org/docs/stable/cuda_environment_variables.html) "
             "and 'torch.distributed' (docs.pytorch.org/docs/stable/distributed.html)",
    "tf": "TensorFlow, 'Use a GPU' (tensorflow.org/guide/gpu) and TF's determinism notes (tf.config.experimental."
          "enable_op_determinism)",
    "jax": "JAX, 'GPU memory allocation' (docs.jax.dev/en/latest/gpu_memory_allocation.html) and 'Configuration "
           "options' (docs.jax.dev/en/latest/config_options.html)",
    "omp": "OpenMP 5.2 specification, chapter 21 'Environment Variables' (openmp.org/spec-html/5.2/openmpch21.html), "
           "and the MKL/OpenBLAS threading notes",
    "cupy": "CuPy, 'Environment variables' (docs.cupy.dev/en/stable/reference/environment.html)",
}

# name -> (what it changes, source). Inert: none of them names a file, a folder, a library, a module or
# a command; each changes devices, memory, the amount of terminal logging, determinism or threads.
ALLOWED: Final[dict[str, tuple[str, str]]] = {
    # CUDA driver and runtime
    "CUDA_VISIBLE_DEVICES": ("which GPUs a program sees, and their order", "cuda"),
    "CUDA_DEVICE_ORDER": ("how GPUs are numbered (FASTEST_FIRST or PCI_BUS_ID)", "cuda"),
    "CUDA_MODULE_LOADING": ("lazy or eager loading of kernels (LAZY, EAGER)", "cuda"),
    "CUDA_MODULE_DATA_LOADING": ("lazy or eager loading of module data", "cuda"),
    "CUDA_LAUNCH_BLOCKING": ("makes kernel launches synchronous (debugging)", "cuda"),
    "CUDA_CACHE_DISABLE": ("turns the JIT cache off", "cuda"),
    "CUDA_CACHE_MAXSIZE": ("the JIT cache's size in bytes", "cuda"),
    "CUDA_FORCE_PTX_JIT": ("JIT-compiles PTX instead of loading cubins", "cuda"),
    "CUDA_DISABLE_PTX_JIT": ("refuses to JIT-compile PTX", "cuda"),
    "CUDA_FORCE_JIT": ("JIT-compiles embedded PTX", "cuda"),
    "CUDA_DISABLE_JIT": ("refuses any JIT compilation", "cuda"),
    "CUDA_DEVICE_MAX_CONNECTIONS": ("the number of hardware work queues", "cuda"),
    "CUDA_DEVICE_MAX_COPY_CONNECTIONS": ("the number of copy queues", "cuda"),
    "CUDA_AUTO_BOOST": ("GPU boost clocks on or off", "cuda"),
    "CUDA_SCALE_LAUNCH_QUEUES": ("the size of the launch queues", "cuda"),
    "CUDA_MANAGED_FORCE_DEVICE_ALLOC": ("where managed memory is allocated", "cuda"),
    "CUDA_GRAPHS_USE_NODE_PRIORITY": ("whether graph node priorities are honoured", "cuda"),
    "CUDA_MPS_ACTIVE_THREAD_PERCENTAGE": ("the share of SMs a client of MPS gets", "cuda"),
    # NVIDIA Container Toolkit (read by the runtime when a container starts)
    "NVIDIA_VISIBLE_DEVICES": ("which GPUs a container gets", "container"),
    "NVIDIA_DRIVER_CAPABILITIES": ("which driver libraries a container gets", "container"),
    "NVIDIA_REQUIRE_CUDA": ("the CUDA a container's driver must support", "container"),
    # NCCL
    "NCCL_DEBUG": ("how much NCCL logs to the terminal", "nccl"),
    "NCCL_DEBUG_SUBSYS": ("which NCCL parts log", "nccl"),
    "NCCL_P2P_DISABLE": ("peer-to-peer transfers off", "nccl"),
    "NCCL_P2P_LEVEL": ("when peer-to-peer transfers are used", "nccl"),
    "NCCL_SHM_DISABLE": ("shared-memory transfers off", "nccl"),
    "NCCL_IB_DISABLE": ("InfiniBand off", "nccl"),
    "NCCL_NET_GDR_LEVEL": ("when GPUDirect RDMA is used", "nccl"),
    "NCCL_SOCKET_IFNAME": ("which network interfaces NCCL uses", "nccl"),
    "NCCL_IB_HCA": ("which InfiniBand adapters NCCL uses", "nccl"),
    "NCCL_ALGO": ("which collective algorithms NCCL may use", "nccl"),
    "NCCL_PROTO": ("which protocols NCCL may use", "nccl"),
    "NCCL_MIN_NCHANNELS": ("the fewest channels NCCL uses", "nccl"),
    "NCCL_MAX_NCHANNELS": ("the most channels NCCL uses", "nccl"),
    "NCCL_BUFFSIZE": ("NCCL's buffer size", "nccl"),
    "NCCL_NTHREADS": ("NCCL's threads per block", "nccl"),
    "NCCL_LAUNCH_MODE": ("how NCCL launches kernels", "nccl"),
    "NCCL_CUMEM_ENABLE": ("whether NCCL uses cuMem allocations", "nccl"),
    "NCCL_NVLS_ENABLE": ("NVLink SHARP on or off", "nccl"),
    # cuBLAS, cuDNN
    "CUBLAS_WORKSPACE_CONFIG": ("cuBLAS's workspace sizes (deterministic results)", "cublas"),
    "CUBLASLT_LOG_LEVEL": ("how much cuBLASLt logs to the terminal", "cublas"),
    "CUDNN_LOGLEVEL_DBG": ("how much cuDNN logs (to the terminal unless CUDNN_LOGDEST_DBG names a file)", "cudnn"),
    # PyTorch
    "PYTORCH_CUDA_ALLOC_CONF": ("options of the CUDA caching allocator", "torch"),
    "PYTORCH_ALLOC_CONF": ("options of the caching allocator", "torch"),
    "PYTORCH_NO_CUDA_MEMORY_CACHING": ("turns the CUDA caching allocator off", "torch"),
    "PYTORCH_NVML_BASED_CUDA_CHECK": ("checks CUDA through NVML", "torch"),
    "TORCH_CUDA_ARCH_LIST": ("the GPU architectures extensions are built for", "torch"),
    "TORCH_CUDNN_V8_API_LRU_CACHE_LIMIT": ("the cuDNN plan cache's size", "torch"),
    "TORCH_CUDNN_V8_API_DISABLED": ("turns the cuDNN v8 API off", "torch"),
    "TORCH_ALLOW_TF32_CUBLAS_OVERRIDE": ("forces TF32 in cuBLAS", "torch"),
    "TORCH_NCCL_ASYNC_ERROR_HANDLING": ("how NCCL errors end a process", "torch"),
    "TORCH_NCCL_BLOCKING_WAIT": ("blocking waits for NCCL", "torch"),
    "TORCH_NCCL_USE_COMM_NONBLOCKING": ("non-blocking NCCL communicators", "torch"),
    "TORCH_USE_CUDA_DSA": ("device-side assertions", "torch"),
    "TORCH_SHOW_CPP_STACKTRACES": ("C++ stack traces in errors", "torch"),
    "TORCH_DISTRIBUTED_DEBUG": ("how much torch.distributed checks and logs", "torch"),
    "TORCH_CPP_LOG_LEVEL": ("how much torch's C++ code logs to the terminal", "torch"),
    # TensorFlow
    "TF_CPP_MIN_LOG_LEVEL": ("how little TensorFlow logs", "tf"),
    "TF_CPP_MAX_VLOG_LEVEL": ("how much TensorFlow logs", "tf"),
    "TF_FORCE_GPU_ALLOW_GROWTH": ("GPU memory grows as needed", "tf"),
    "TF_GPU_ALLOCATOR": ("which GPU allocator TensorFlow uses (cuda_malloc_async)", "tf"),
    "TF_GPU_THREAD_MODE": ("how TensorFlow schedules GPU threads", "tf"),
    "TF_GPU_THREAD_COUNT": ("threads per GPU", "tf"),
    "TF_ENABLE_ONEDNN_OPTS": ("oneDNN optimisations on or off", "tf"),
    "TF_DETERMINISTIC_OPS": ("deterministic kernels", "tf"),
    "TF_CUDNN_DETERMINISTIC": ("deterministic cuDNN", "tf"),
    "TF_XLA_FLAGS": ("XLA's flags for TensorFlow (checked flag by flag)", "tf"),
    # JAX and XLA
    "JAX_PLATFORMS": ("which backends JAX uses (cuda, cpu)", "jax"),
    "JAX_PLATFORM_NAME": ("the default backend of JAX", "jax"),
    "JAX_ENABLE_X64": ("64-bit types in JAX", "jax"),
    "JAX_DEFAULT_MATMUL_PRECISION": ("the precision of matrix products", "jax"),
    "JAX_TRACEBACK_FILTERING": ("how JAX shortens tracebacks", "jax"),
    "XLA_PYTHON_CLIENT_PREALLOCATE": ("whether JAX takes GPU memory up front", "jax"),
    "XLA_PYTHON_CLIENT_MEM_FRACTION": ("how much GPU memory JAX takes", "jax"),
    "XLA_PYTHON_CLIENT_ALLOCATOR": ("which GPU allocator JAX uses", "jax"),
    "XLA_FLAGS": ("XLA's flags (checked flag by flag)", "jax"),
    "LIBTPU_INIT_ARGS": ("libtpu's flags (checked flag by flag)", "jax"),
    # Threads
    "OMP_NUM_THREADS": ("OpenMP threads", "omp"),
    "OMP_PROC_BIND": ("how OpenMP threads are bound to cores", "omp"),
    "OMP_PLACES": ("where OpenMP threads run", "omp"),
    "OMP_DYNAMIC": ("whether OpenMP adjusts its threads", "omp"),
    "MKL_NUM_THREADS": ("MKL threads", "omp"),
    "OPENBLAS_NUM_THREADS": ("OpenBLAS threads", "omp"),
    # CuPy
    "CUPY_ACCELERATORS": ("which CuPy accelerators are used (cub, cutensor)", "cupy"),
    "CUPY_TF32": ("TF32 in CuPy", "cupy"),
    "CUPY_GPU_MEMORY_LIMIT": ("how much GPU memory CuPy may take", "cupy"),
}

# Variables holding a tool's command-line flags: allowed by their flags, each checked.
FLAG_VARS: Final = frozenset({"XLA_FLAGS", "TF_XLA_FLAGS", "LIBTPU_INIT_ARGS"})
# The flags that take a word rather than a boolean or a number, and the words they take.
FLAG_WORDS: Final = {
    "xla_gpu_enable_command_buffer": re.compile(r"[A-Z_,]{0,200}"),
    "xla_gpu_shape_checks": re.compile(r"IGNORE|RUNTIME|COMPILE_TIME"),
    "xla_gpu_disable_async_collectives": re.compile(r"[A-Z_,]{0,200}"),
    "xla_gpu_enable_while_loop_double_buffering": re.compile(r"true|false"),
}
_FLAG: Final = re.compile(r"--?([A-Za-z0-9_]{1,128})(?:=(\S{0,256}))?")
_PLAIN_VALUE: Final = re.compile(r"true|false|True|False|[0-9]{1,19}|-?[0-9]{1,19}(?:\.[0-9]{1,19})?(?:[eE]-?[0-9]{1,3})?")
# A flag whose name says it reads or writes a file or folder, whatever its value.
_PATH_WORDS: Final = re.compile(r"(?:^|_)(?:dir|dirs|directory|path|paths|file|filename|files|to|from|prefix|root|home|"
                                r"bin|plugin|plugins|library|libraries|lib|dump|out|output|log|logs|cache|crash|"
                                r"trace|profile|save|load|module|modules|script|tmp|temp)(?:_|$)", re.IGNORECASE)

# Never, whatever the config says. (name or prefix*, why)
_NEVER: Final = (
    ("PROMPT_COMMAND", "bash runs it as a command at every prompt"),
    ("PS0", "bash runs command substitutions in it at every prompt"),
    ("PS1", "the shell expands it at every prompt"),
    ("PS2", "the shell expands it at every prompt"),
    ("PS4", "the shell expands it when tracing"),
    ("PROMPT", "zsh expands it at every prompt"),
    ("RPROMPT", "zsh expands it at every prompt"),
    ("BASH_ENV", "bash runs that file at the start of every script"),
    ("ENV", "sh runs that file at the start of every shell"),
    ("ZDOTDIR", "zsh reads its startup files from there"),
    ("SHELLOPTS", "changes the options of every bash"),
    ("BASHOPTS", "changes the options of every bash"),
    ("IFS", "changes how the shell splits words"),
    ("CDPATH", "changes where `cd` goes"),
    ("GLOBIGNORE", "changes what globs match"),
    ("FPATH", "zsh loads functions from there"),
    ("fish_function_path", "fish loads functions from there"),
    ("PATH", "is managed by cuenv's activation"),
    ("MANPATH", "is managed by the system"),
    ("HOME", "is the user's own"),
    ("SHELL", "is the user's own"),
    ("PWD", "is managed by the shell"),
    ("OLDPWD", "is managed by the shell"),
    ("SHLVL", "is managed by the shell"),
    ("CUDA_HOME", "is managed by cuenv's activation"),
    ("CUDA_PATH", "is managed by cuenv's activation"),
    ("CUDA_INJECTION32_PATH", "makes the CUDA driver load a library into every CUDA program"),
    ("CUDA_INJECTION64_PATH", "makes the CUDA driver load a library into every CUDA program"),
    ("NVTX_INJECTION32_PATH", "makes NVTX load a library into programs"),
    ("NVTX_INJECTION64_PATH", "makes NVTX load a library into programs"),
    ("VIRTUAL_ENV", "is managed by cuenv's activation"),
    ("PYTHONHOME", "is managed by cuenv's activation"),
    ("GLIBC_TUNABLES", "changes the C library of every program"),
    ("GCONV_PATH", "makes the C library load modules"),
    ("LOCPATH", "changes where the C library reads locales"),
    ("NLSPATH", "changes where programs read message catalogues"),
    ("HOSTALIASES", "changes name resolution"),
    ("NODE_OPTIONS", "runs code in every node process"),
    ("JAVA_TOOL_OPTIONS", "loads agents into every JVM"),
    ("_JAVA_OPTIONS", "changes every JVM"),
    ("PERL5OPT", "runs code in every perl"),
    ("PERL5LIB", "changes where perl loads code"),
    ("RUBYOPT", "runs code in every ruby"),
    ("RUBYLIB", "changes where ruby loads code"),
    ("EDITOR", "names a program other tools run"),
    ("VISUAL", "names a program other tools run"),
    ("PAGER", "names a program other tools run"),
    ("BROWSER", "names a program other tools run"),
    ("LESSOPEN", "makes less run a command"),
    ("LESSCLOSE", "makes less run a command"),
    ("SUDO_ASKPASS", "names a program sudo runs"),
    ("SSH_ASKPASS", "names a program ssh runs"),
    ("TMPDIR", "changes where every program writes temporary files"),
    ("LD_*", "changes how the dynamic loader finds and loads libraries"),
    ("DYLD_*", "changes how the dynamic loader finds and loads libraries"),
    ("PYTHON*", "changes how Python starts and where it loads code"),
    ("BASH_*", "changes bash itself"),
    ("BASH_FUNC_*", "defines shell functions in every bash"),
    ("ZSH_*", "changes zsh itself"),
    ("HIST*", "changes the shell's history"),
    ("MALLOC_*", "changes the C library of every program"),
    ("CUENV_*", "is cuenv's own"),
    ("CONDA_*", "is managed by conda and cuenv"),
    ("PIP_*", "changes what pip installs and from where"),
    ("UV_*", "changes what uv installs and from where"),
    ("GIT_*", "changes git, and can make it run programs"),
    ("SSH_*", "changes ssh"),
    ("XDG_*", "changes where every program reads its configuration"),
    ("LC_*", "changes the locale of every program"),
    ("LANG", "changes the locale of every program"),
    ("LANGUAGE", "changes the locale of every program"),
    ("TERM", "is the terminal's own"),
    ("http_proxy", "sends network traffic through a proxy"),
    ("https_proxy", "sends network traffic through a proxy"),
    ("HTTP_PROXY", "sends network traffic through a proxy"),
    ("HTTPS_PROXY", "sends network traffic through a proxy"),
    ("ALL_PROXY", "sends network traffic through a proxy"),
    ("no_proxy", "changes which hosts skip the proxy"),
    ("NO_PROXY", "changes which hosts skip the proxy"),
    ("SSL_CERT_FILE", "changes which certificates programs trust"),
    ("SSL_CERT_DIR", "changes which certificates programs trust"),
    ("REQUESTS_CA_BUNDLE", "changes which certificates programs trust"),
    ("CURL_CA_BUNDLE", "changes which certificates programs trust"),
)
HINT: Final = (
    "A shared file (recipe, lock, archive) may set only the CUDA and framework settings listed in "
    "docs/concepts/security.md (CUDA_VISIBLE_DEVICES, NCCL_DEBUG, XLA_FLAGS, ...). Remove it from the file, "
    "set it yourself in your shell, or list it under trusted_env_vars in your config file."
)


def _matches(name: str, pattern: str) -> bool:
    return name.startswith(pattern[:-1]) if pattern.endswith("*") else name == pattern


def never_reason(name: str) -> str | None:
    """Why ``name`` may never come from a shared file, or None."""
    for pattern, why in _NEVER:
        if _matches(name, pattern) or _matches(name.upper(), pattern.upper()):
            return why
    return None


def valid_extension(pattern: str) -> bool:
    """A config entry of ``trusted_env_vars``: NAME or PREFIX_* (a prefix of at least 2 characters)."""
    return isinstance(pattern, str) and bool(re.fullmatch(r"[A-Z_][A-Z0-9_]+\*?", pattern))


def name_problem(name: object, *, extra: Iterable[str] = ()) -> str | None:
    """Why a shared file may not set variable ``name`` (a phrase), or None when it may."""
    if not isinstance(name, str) or not NAME_RE.fullmatch(name):
        return (f"{_show(name)} is not a variable name a shared file may set "
                "(upper case letters, digits and '_', at most 128)")
    never = never_reason(name)
    if never is not None:
        return f"{name} {never}"
    if name in ALLOWED or any(_matches(name, p) for p in extra if valid_extension(p)):
        return None
    return f"{name} is not on the list of CUDA and framework settings a shared file may set"


def flag_problem(value: str) -> str | None:
    """Why a flag variable's value may not be set (a phrase naming the flag), or None."""
    for token in value.split():
        match = _FLAG.fullmatch(token)
        if match is None:
            return f"holds {_show(token)}, not a --flag or --flag=value"
        flag, arg = match.group(1), match.group(2)
        if _PATH_WORDS.search(flag):
            return f"sets --{flag}, which names a path the tool reads from or writes to"
        words = FLAG_WORDS.get(flag)
        if arg is None or _PLAIN_VALUE.fullmatch(arg) or (words is not None and words.fullmatch(arg)):
            continue
        return f"sets --{flag} to {_show(arg)}: a shared file may give flags only booleans and numbers"
    return None


def value_problem(name: str, value: object) -> str | None:
    """Why ``value`` cannot be the value of ``name`` (a phrase), or None."""
    if not isinstance(value, str):
        return f"the value of {name} is not a string"
    if len(value) > MAX_VALUE:
        return f"the value of {name} is {len(value)} characters long (at most {MAX_VALUE})"
    bad = next((c for c in value if (ord(c) < 32 and c != "\t") or ord(c) == 127), None)
    if bad is not None:
        return f"the value of {name} contains the control character {bad!r}"
    if name in FLAG_VARS:
        why = flag_problem(value)
        if why is not None:
            return f"the value of {name} {why}"
    return None


def problems(env: object, *, extra: Iterable[str] = ()) -> list[tuple[str, str]]:
    """Every problem of a shared ``env`` mapping: (name, phrase). Empty when it may be activated."""
    if not isinstance(env, Mapping):
        return [("", "the variables are not a mapping of NAME: value")]
    extra = tuple(extra)
    out: list[tuple[str, str]] = []
    if len(env) > MAX_COUNT:
        out.append(("", f"{len(env)} variables is more than the {MAX_COUNT} a shared file may set"))
    total = 0
    for name, value in env.items():
        why = name_problem(name, extra=extra) or value_problem(str(name), value)
        if why is not None:
            out.append((str(name), why))
        elif isinstance(value, str):
            total += len(name) + len(value)
    if total > MAX_TOTAL:
        out.append(("", f"the variables hold {total} characters (at most {MAX_TOTAL})"))
    return out


def check(env: object, *, source: str, extra: Iterable[str] = ()) -> dict[str, str]:
    """``env`` as a plain dict when every variable may be set; else ``Untrusted`` naming the first problem.

    ``source`` names where the variables come from ("lockfile team.lock", "recipe foo.yaml")."""
    found = problems(env, extra=extra)
    if found:
        _, why = found[0]
        more = f" ({len(found) - 1} more)" if len(found) > 1 else ""
        raise Untrusted(f"Refusing {source}: {why}{more}.", hint=HINT)
    assert isinstance(env, Mapping)  # problems() names anything else
    return {str(k): str(v) for k, v in env.items()}


def _show(value: object) -> str:
    text = repr(value)
    return text if len(text) <= 40 else text[:37] + "..."
