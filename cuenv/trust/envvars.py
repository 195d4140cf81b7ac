"""Which environment variables a shared file may set on activation (issue 14 §1). Pure.

A recipe's ``env:``, a lock's ``recipe.env`` and an archive's manifest are written by someone else,
and activation exports their variables into the user's shell and every program it starts. A
blocklist always misses one (``PROMPT_COMMAND``, ``BASH_ENV``, ``LD_PRELOAD``, ...), so the rule is
an allowlist: the families of variables a CUDA stack is tuned with (CUDA_*, NCCL_*, XLA_FLAGS, ...),
minus the names in those families that make a program load or run code from a path
(``CUDA_INJECTION64_PATH``, ``NCCL_NET_PLUGIN``, ``TRITON_PTXAS_PATH``, ``NUMBA_CUDA_DRIVER``,
``OMP_TOOL_LIBRARIES``, ``UCX_MODULE_DIR``, ``NCCL_CONF_FILE``, ...), or write to one (``NCCL_DEBUG_FILE``);
and in flag variables (``XLA_FLAGS``) the flags that name a path (``--xla_gpu_cuda_data_dir``).

The user may extend the allowlist in the config file (``trusted_env_vars: [NAME, PREFIX_*]``);
that extension can lift the "loads code" rule for a name, never the hard rules: shell hooks,
loader and interpreter variables, and what cuenv or the shell manage are refused whatever the
config says (a user who wants them sets them in their own shell rc).

Values: one line of printable text (tabs allowed), at most ``MAX_VALUE`` characters; at most
``MAX_COUNT`` variables and ``MAX_TOTAL`` characters in all, so an activated environment stays far
below the kernel's argument-and-environment limit (a 100 MB value made every `cuenv run` fail with
"Argument list too long").
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from typing import Any, Final

from cuenv.trust import Untrusted

NAME_RE: Final = re.compile(r"[A-Z_][A-Z0-9_]{0,127}")
MAX_VALUE: Final = 8192
MAX_COUNT: Final = 64
MAX_TOTAL: Final = 65536

# The families a CUDA stack is configured with. Each prefix names a library or framework's own variables.
ALLOWED_PREFIXES: Final = (
    "CUDA_", "NVIDIA_", "CUDNN_", "NCCL_", "CUBLAS_", "CUBLASLT_", "CUFFT_", "CURAND_", "CUSOLVER_", "CUSPARSE_",
    "CUTENSOR_", "NVTE_", "TF_", "XLA_", "JAX_", "TORCH_", "PYTORCH_", "CUPY_", "NUMBA_", "TRITON_", "OMP_",
    "MKL_", "OPENBLAS_", "KMP_", "TENSORRT_", "TRT_", "ONNXRUNTIME_", "ORT_", "HOROVOD_", "UCX_",
)
ALLOWED_NAMES: Final = frozenset({"XLA_FLAGS", "LIBTPU_INIT_ARGS"})

# Inside the allowed families: names that make a program load a library, run a binary or read code
# from a path. Matched as parts of the name. A user may allow one of these by name in the config.
_LOADS_CODE: Final = (
    ("INJECTION", "makes the CUDA driver or NVTX load a library into every CUDA program"),
    ("PRELOAD", "loads a library into programs"),
    ("PLUGIN", "loads a plugin library"),
    ("PLUGGABLE", "loads a plugin library"),
    ("LIBCUDA", "names the CUDA driver library to load"),
    ("LIBRARY_PATH", "changes where libraries are loaded from"),
    ("LIBRARIES", "names libraries to load"),
    ("COMMAND", "names a command to run"),
)
_LOADS_CODE_SUFFIXES: Final = (
    ("_PATH", "names a file or folder programs load code from"),
    ("_PATHS", "names folders programs load code from"),
    ("_DRIVER", "names a driver library to load"),
    ("_HOME", "names a tree programs load libraries and tools from"),
    ("_BIN", "names a program to run"),
    ("_EXE", "names a program to run"),
    ("_EXECUTABLE", "names a program to run"),
    ("_CMD", "names a command to run"),
    ("_ROOT", "names a tree programs load libraries and tools from"),
    ("_DIR", "names a folder programs load code from or write to"),
    ("_DIRS", "names folders programs load code from"),
    ("_LIB", "names a library to load"),
    ("_LIBS", "names libraries to load"),
    ("_FILE", "names a file programs read settings from or write to"),
)
# Variables holding a tool's command-line flags (XLA_FLAGS, TF_XLA_FLAGS, LIBTPU_INIT_ARGS): a flag that
# names a path makes the tool run programs from it (--xla_gpu_cuda_data_dir finds ptxas there) or write to it.
_FLAG_VARS: Final = re.compile(r"(?:.*_)?(?:FLAGS|ARGS)")
_PATH_FLAG: Final = re.compile(r"--?[A-Za-z0-9_]*(?:dir|path|file|to|prefix|root|home|bin|plugin|library)(?:=|\s|$)",
                               re.IGNORECASE)

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
    "A shared file (recipe, lock, archive) may set only the variables a CUDA stack is tuned with "
    "(CUDA_*, NCCL_*, XLA_FLAGS, ...); see docs/concepts/security.md. Remove it from the file, or set it "
    "yourself in your shell."
)


def _matches(name: str, pattern: str) -> bool:
    return name.startswith(pattern[:-1]) if pattern.endswith("*") else name == pattern


def never_reason(name: str) -> str | None:
    """Why ``name`` may never come from a shared file, or None."""
    for pattern, why in _NEVER:
        if _matches(name, pattern) or _matches(name.upper(), pattern.upper()):
            return why
    return None


def _loads_code(name: str) -> str | None:
    for part, why in _LOADS_CODE:
        if part in name:
            return why
    for suffix, why in _LOADS_CODE_SUFFIXES:
        if name.endswith(suffix):
            return why
    return None


def valid_extension(pattern: str) -> bool:
    """A config entry of ``trusted_env_vars``: NAME or PREFIX_* (a prefix of at least 2 characters)."""
    return isinstance(pattern, str) and bool(re.fullmatch(r"[A-Z_][A-Z0-9_]+\*?", pattern))


def name_problem(name: Any, *, extra: Iterable[str] = ()) -> str | None:
    """Why a shared file may not set variable ``name`` (a phrase), or None when it may."""
    if not isinstance(name, str) or not NAME_RE.fullmatch(name):
        return (f"{_show(name)} is not a variable name a shared file may set "
                "(upper case letters, digits and '_', at most 128)")
    never = never_reason(name)
    if never is not None:
        return f"{name} {never}"
    user = any(_matches(name, p) for p in extra if valid_extension(p))
    if user:
        return None
    if name not in ALLOWED_NAMES and not name.startswith(ALLOWED_PREFIXES):
        return f"{name} is not a variable of the CUDA stack (allowed: {', '.join(p + '*' for p in ALLOWED_PREFIXES[:5])}, ...)"
    loads = _loads_code(name)
    if loads is not None:
        return f"{name} {loads}"
    return None


def value_problem(name: str, value: Any) -> str | None:
    """Why ``value`` cannot be the value of ``name`` (a phrase), or None."""
    if not isinstance(value, str):
        return f"the value of {name} is not a string"
    if len(value) > MAX_VALUE:
        return f"the value of {name} is {len(value)} characters long (at most {MAX_VALUE})"
    bad = next((c for c in value if (ord(c) < 32 and c != "\t") or ord(c) == 127), None)
    if bad is not None:
        return f"the value of {name} contains the control character {bad!r}"
    if _FLAG_VARS.fullmatch(name):
        flag = _PATH_FLAG.search(value)
        if flag is not None:
            shown = flag.group(0).rstrip("= \t")
            return f"the value of {name} sets {shown}, which names a path the tool runs programs from or writes to"
    return None


def problems(env: Any, *, extra: Iterable[str] = ()) -> list[tuple[str, str]]:
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


def check(env: Any, *, source: str, extra: Iterable[str] = ()) -> dict[str, str]:
    """``env`` as a plain dict when every variable may be set; else ``Untrusted`` naming the first problem.

    ``source`` names where the variables come from ("lockfile team.lock", "recipe foo.yaml")."""
    found = problems(env, extra=extra)
    if found:
        _, why = found[0]
        more = f" ({len(found) - 1} more)" if len(found) > 1 else ""
        raise Untrusted(f"Refusing {source}: {why}{more}.", hint=HINT)
    return {str(k): str(v) for k, v in env.items()}


def _show(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 40 else text[:37] + "..."
