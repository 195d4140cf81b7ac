"""Activation as data (issue 5 §2, §5; STYLE.md §2).

``plan_for(target)`` computes once per environment what `cuenv use` changes; ``apply(old, plan)``
gives the new environment and what it replaced; ``restore(new, saved)`` gives ``old`` back exactly.
The shell renderers (cuenv.activation) implement the same semantics in shell code, so a shell and
``cuenv run`` see the same variables. Nothing here reads ``os.environ`` or the disk.

Semantics of one PATH-like variable (PATH, LD_LIBRARY_PATH):
  1. split the old value on ``:``; drop empty entries (an empty entry means "the current
     directory", a classic library-hijack hole) and entries matched by a strip rule;
  2. prepend the environment's directories;
  3. an empty result unsets the variable.
Then variables in ``unset`` are removed and variables in ``set`` are set, in that order.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Callable, Final, Iterable, Mapping, Sequence

from cuenv.activation.target import ActivationTarget
from cuenv.errors import UsageError
from cuenv.plain import Plain

PATH_VARS: Final = ("PATH", "LD_LIBRARY_PATH")
HOME_VARS: Final = ("CUDA_HOME", "CUDA_PATH")  # their bin/lib dirs belong to the CUDA being replaced
HOME_SUBDIRS: Final = ("bin", "lib64", "lib")
SYSTEM_TREES: Final = ("/usr/local/cuda",)
SYSTEM_PREFIXES: Final = ("/usr/local/cuda-", "/opt/cuda")  # /usr/local/cuda-12.1, /opt/cuda, /opt/cuda-11.8
# Directories that hold far more than one CUDA: never stripped, whatever CUDA_HOME says
# (Debian's nvidia-cuda-toolkit sets CUDA_HOME=/usr; stripping /usr/bin would break the shell).
NEVER_STRIP: Final = frozenset(
    {
        "/", "/bin", "/sbin", "/lib", "/lib64", "/opt", "/usr", "/usr/bin", "/usr/sbin", "/usr/lib", "/usr/lib64",
        "/usr/local", "/usr/local/bin", "/usr/local/lib", "/usr/local/lib64",
        "/usr/lib/x86_64-linux-gnu", "/usr/lib/aarch64-linux-gnu", "/usr/lib/powerpc64le-linux-gnu",
    }
)
VENV_ONLY: Final = ("CONDA_PREFIX", "PYTHONHOME")  # unset when a venv is activated
CONDA_ONLY: Final = ("VIRTUAL_ENV", "PYTHONHOME")  # unset when a conda prefix is activated
NAME_RE: Final = re.compile(r"[A-Z_][A-Z0-9_]*")
TARGET_RE: Final = re.compile(r"[A-Za-z0-9][A-Za-z0-9._:-]{0,80}")  # env names and system:X.Y
# Names a recipe may not set: cuenv computes them, or a shell owns them.
RESERVED: Final = frozenset({*PATH_VARS, "CUENV_ACTIVE", "PWD", "OLDPWD", "SHLVL", "IFS", "PS1", "PS2", "PS4", "PROMPT", "HOME", "_"})


class StripRule(Plain):
    """One class of PATH entries that belongs to another CUDA.

    kind ``tree``: the directory ``value`` or anything under it; ``prefix``: any entry starting
    with ``value``; ``home``: the bin/lib64/lib trees of the directory named by variable ``value``
    at use time (one trailing ``/`` ignored), unless it is relative, holds a newline, or is in NEVER_STRIP.
    """

    __slots__ = ("kind", "value")

    def __init__(self, kind: str, value: str) -> None:
        self.kind, self.value = kind, value


class PathEdit(Plain):
    """Entries to put in front of one PATH-like variable."""

    __slots__ = ("var", "prepend")

    def __init__(self, var: str, prepend: tuple[str, ...]) -> None:
        self.var, self.prepend = var, prepend


class Plan(Plain):
    """What activating one target changes (plain classes: every create renders one, issue 29)."""

    __slots__ = ("name", "paths", "set", "unset", "strip")

    def __init__(self, name: str, paths: tuple[PathEdit, ...], set: tuple[tuple[str, str], ...],
                 unset: tuple[str, ...], strip: tuple[StripRule, ...]) -> None:
        self.name, self.paths, self.set, self.unset, self.strip = name, paths, set, unset, strip

    @property
    def touched(self) -> tuple[str, ...]:
        """Every variable `use` may change, in a stable order: what deactivate restores."""
        names = [e.var for e in self.paths] + [n for n, _ in self.set] + list(self.unset)
        return tuple(dict.fromkeys(names))


def _norm(path: Path | str) -> str:
    text = str(path)
    return text.rstrip("/") or "/"


def _check_dir(path: str, what: str) -> str:
    if not path.startswith("/"):
        raise UsageError(f"The {what} {path!r} is not an absolute path.", hint="Recreate the environment.")
    if ":" in path or "\0" in path:
        raise UsageError(
            f"The {what} {path!r} contains ':' and cannot go on PATH or LD_LIBRARY_PATH.",
            hint="Use a CUENV_HOME whose path has no ':' in it.",
        )
    return path


def _check_var(name: str) -> str:
    from cuenv.trust.envvars import never_reason

    never = never_reason(name) if NAME_RE.fullmatch(name) else None
    if never is not None:  # the last guard: an environment made before issue 14 may still record one
        raise UsageError(f"The environment sets {name}, which {never}; cuenv never activates it.",
                         hint="Recreate the environment from a recipe or lock without it (see docs/concepts/security.md).")
    if not NAME_RE.fullmatch(name) or name in RESERVED:
        raise UsageError(
            f"The recipe sets variable {name!r}, which cuenv cannot activate.",
            hint="Variable names are upper case letters, digits and '_'; PATH, LD_LIBRARY_PATH, "
            "CUENV_ACTIVE and shell variables (PS1, PWD, ...) are managed by cuenv or the shell.",
        )
    return name


def _covered(path: str) -> bool:
    return path.startswith(SYSTEM_PREFIXES) or any(_under(path, t) for t in SYSTEM_TREES)


def _redundant(rule: StripRule, rules: Sequence[StripRule]) -> bool:
    """A tree inside another tree of the list (an environment's dirs inside CUENV_HOME/envs)."""
    return rule.kind == "tree" and any(r.kind == "tree" and r.value != rule.value and _under(rule.value, r.value) for r in rules)


def _tree_rules(paths: Iterable[str]) -> list[StripRule]:
    return [StripRule("tree", p) for p in paths if p not in NEVER_STRIP and not _covered(p)]


def plan_for(target: ActivationTarget, *, envs_dir: Path, other_roots: Sequence[Path] = ()) -> Plan:
    """The activation plan of one environment (or system toolkit).

    ``envs_dir`` is CUENV_HOME/envs (any other environment there is stripped); ``other_roots``
    are other toolkit roots found on this machine, stripped as well.
    """
    if not TARGET_RE.fullmatch(target.name):
        raise UsageError(f"{target.name!r} is not a valid environment name.")
    layout = target.layout
    # the shims of the CUDA tools the environment lacks come right after its own tools, before any
    # folder it cannot strip (/usr/local/bin): `nvcc` is never another release's (issue 17)
    shims = (target.shims_dir,) if target.shims_dir is not None else ()
    bins = tuple(dict.fromkeys(_check_dir(_norm(p), "directory") for p in (*layout.bin_dirs, *shims)))
    libs = tuple(dict.fromkeys(_check_dir(_norm(p), "directory") for p in layout.lib_dirs))
    prefix = _norm(layout.prefix)
    values: dict[str, str] = {}
    unset: list[str] = []
    if layout.cuda_home is not None:
        values["CUDA_HOME"] = values["CUDA_PATH"] = _norm(layout.cuda_home)
    else:
        unset += ["CUDA_HOME", "CUDA_PATH"]  # they would name another CUDA
    if layout.kind == "conda":
        values["CONDA_PREFIX"] = prefix
        unset += CONDA_ONLY
    elif layout.kind == "venv":
        values["VIRTUAL_ENV"] = prefix
        unset += VENV_ONLY
    # a system toolkit leaves the Python environment alone: a venv may use the system CUDA
    values["CUENV_ACTIVE"] = target.name
    for name, value in target.env_vars.items():
        if "\0" in str(value):
            raise UsageError(f"The recipe's value of {name} contains a NUL byte.")
        values[_check_var(name)] = str(value)
    strip = [StripRule("tree", p) for p in SYSTEM_TREES]
    strip += [StripRule("prefix", p) for p in SYSTEM_PREFIXES]
    strip += _tree_rules([_norm(envs_dir), *(_norm(r) for r in other_roots)])
    if layout.kind == "system":
        strip += _tree_rules([prefix])
    strip += _tree_rules([*bins, *libs])  # no duplicates of our own dirs further down the list
    strip = [r for r in strip if not _redundant(r, strip)]
    strip += [StripRule("home", v) for v in HOME_VARS]
    return Plan(
        name=target.name,
        paths=(PathEdit("PATH", bins), PathEdit("LD_LIBRARY_PATH", libs)),
        set=tuple(values.items()),
        unset=tuple(n for n in dict.fromkeys(unset) if n not in values),
        strip=tuple(dict.fromkeys(strip)),
    )


def home_root(value: str | None) -> str | None:
    """The normalized value of a ``home`` rule's variable, or None when the rule does not apply."""
    if not value:
        return None
    root = value[:-1] if value.endswith("/") else value
    if not root.startswith("/") or "\n" in root or root in NEVER_STRIP:
        return None
    return root


def _under(entry: str, tree: str) -> bool:
    return entry == tree or entry.startswith(tree + "/")


def dropper(plan: Plan, old: Mapping[str, str]) -> Callable[[str], bool]:
    """A predicate: does this PATH entry belong to another CUDA (given the old environment)?"""
    trees = [r.value for r in plan.strip if r.kind == "tree"]
    prefixes = tuple(r.value for r in plan.strip if r.kind == "prefix")
    for rule in plan.strip:
        if rule.kind == "home":
            root = home_root(old.get(rule.value))
            if root is not None:
                trees += [f"{root}/{sub}" for sub in HOME_SUBDIRS]

    def drop(entry: str) -> bool:
        return entry.startswith(prefixes) or any(_under(entry, t) for t in trees)

    return drop


def apply(old: Mapping[str, str], plan: Plan) -> tuple[dict[str, str], dict[str, str | None]]:
    """(new environment, saved old values of every touched variable; None = was unset)."""
    saved = {name: old.get(name) for name in plan.touched}
    drop = dropper(plan, old)
    new = dict(old)
    for edit in plan.paths:
        raw = old.get(edit.var, "")
        kept = [e for e in raw.split(":") if e and not drop(e)] if raw else []
        entries = [*edit.prepend, *kept]
        if entries:
            new[edit.var] = ":".join(entries)
        else:
            new.pop(edit.var, None)
    for name in plan.unset:
        new.pop(name, None)
    new.update(plan.set)
    return new, saved


def restore(env: Mapping[str, str], saved: Mapping[str, str | None]) -> dict[str, str]:
    """Undo ``apply``: every saved variable gets its old value back, or is unset again."""
    out = dict(env)
    for name, value in saved.items():
        if value is None:
            out.pop(name, None)
        else:
            out[name] = value
    return out


def activated_env(old_env: Mapping[str, str], target: ActivationTarget, home: Path) -> dict[str, str]:
    """The environment a command sees inside ``target`` (for `cuenv run` and exports)."""
    new, _ = apply(old_env, plan_for(target, envs_dir=Path(home) / "envs"))
    return new
