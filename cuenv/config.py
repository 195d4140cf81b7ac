"""Settings and where each value came from.

Precedence: command-line flag > environment variable > config file > default.
The config file is YAML; it is only parsed when it exists, so a plain start-up stays light.
"""

from __future__ import annotations

import os
import sys
from functools import cached_property
from pathlib import Path

from cuenv.engines.names import CHOICES as ENGINES
from cuenv.engines.names import FRAMEWORK_INDEXES
from cuenv.errors import UsageError

TYPE_CHECKING = False  # no `typing` at run time: the start-up path does without it (issue 29)
if TYPE_CHECKING:
    from typing import Any, Callable, Final, Mapping

    from cuenv.engines.mirrors import Mirrors

def _bool(text: object) -> bool:
    if isinstance(text, bool):
        return text
    low = str(text).strip().lower()
    if low in {"1", "true", "yes", "on"}:
        return True
    if low in {"0", "false", "no", "off", ""}:
        return False
    raise ValueError(f"{text!r} is not a boolean (use true or false)")


def _engine(text: object) -> str:
    if text not in ENGINES:
        raise ValueError(f"unknown engine {text!r} (choose one of: {', '.join(ENGINES)})")
    return str(text)


def _framework_index(text: object) -> str:
    if text not in FRAMEWORK_INDEXES:
        raise ValueError(f"unknown framework index {text!r} (choose one of: {', '.join(FRAMEWORK_INDEXES)})")
    return str(text)


def _mirror_pairs(value: object) -> tuple[tuple[str, str], ...]:
    from cuenv.engines.mirrors import parse_pairs

    return parse_pairs(value)  # checked here; the per-upstream merge happens in resolve()


def _path(text: object) -> Path:
    if not isinstance(text, (str, os.PathLike)) or not str(text) or "\0" in str(text):
        raise ValueError(f"{text!r} is not a path")
    return Path(os.path.expanduser(str(text))).absolute()


def _folder(text: object) -> Path:
    """A folder cuenv writes into: it may not exist yet, but it may not be a file (``home: /etc/passwd``)."""
    path = _path(text)
    try:
        if path.exists() and not path.is_dir():
            raise ValueError(f"{_short(str(path))!r} is not a folder")
    except OSError as exc:  # a name too long, a component that is a file
        raise ValueError(f"{_short(str(path))!r} is not a usable folder ({exc.strerror})") from None
    return path


def _short(text: str) -> str:
    return text if len(text) <= 60 else text[:57] + "..."


def _trusted(text: object) -> tuple[str, ...]:
    """Variable names (NAME or PREFIX_*) the user allows shared files to set, beyond cuenv's allowlist."""
    from cuenv.trust import envvars

    items = [t.strip() for t in text.replace(",", ":").split(":") if t.strip()] if isinstance(text, str) else text
    if not isinstance(items, (list, tuple)):
        raise ValueError(f"{text!r} is not a list of variable names")
    bad = next((i for i in items if not envvars.valid_extension(i)), None)
    if bad is not None:
        raise ValueError(f"{bad!r} is not a variable name or PREFIX_* (upper case letters, digits, '_')")
    return tuple(items)


def _paths(text: object) -> tuple[Path, ...]:
    if isinstance(text, str):
        items = [t for t in text.split(os.pathsep) if t]
    elif isinstance(text, (list, tuple)):
        items = list(text)
    else:
        raise ValueError(f"{text!r} is not a list of paths")
    return tuple(_path(t) for t in items)


class Option:
    """One setting: its name, variable, flag, parser and help. A plain class: ``dataclasses`` costs
    every command's start as much as a bare interpreter (issue 29)."""

    __slots__ = ("env", "flag", "help", "name", "parse")

    def __init__(self, name: str, env: str, flag: str | None, parse: Callable[[Any], Any], help: str) -> None:  # noqa: A002 - the field's name
        self.name, self.env, self.flag, self.parse, self.help = name, env, flag, parse, help


OPTIONS: Final = (
    Option("home", "CUENV_HOME", "--home", _folder, "where environments and state live"),
    Option("cache_dir", "CUENV_CACHE_DIR", "--cache-dir", _folder, "package caches (uv, rattler)"),
    Option("engine", "CUENV_ENGINE", "--engine", _engine, "default engine for `cuenv create`"),
    Option("recipe_dirs", "CUENV_RECIPES", "--recipes", _paths, "extra recipe folders (user recipes win)"),
    Option("prompt", "CUENV_PROMPT", None, _bool, "show (NAME) in the prompt of an activated shell"),
    Option("auto_activate", "CUENV_AUTO_ACTIVATE", None, _bool, "activate on cd into a folder with a .cuenv file"),
    Option("mirrors", "CUENV_MIRRORS", "--mirror", _mirror_pairs,
           "UPSTREAM=MIRROR pairs: where PyPI, a vendor index or a conda channel is fetched from"),
    Option("mirrors_from_tools", "CUENV_MIRRORS_FROM_TOOLS", None, _bool,
           "also use the index and channel mirrors uv, pip and conda are configured with"),
    Option("framework_index", "CUENV_FRAMEWORK_INDEX", "--framework-index", _framework_index,
           "where framework wheels come from: pypi-first, vendor-first, pypi or vendor"),
    Option("trusted_env_vars", "CUENV_TRUSTED_ENV_VARS", None, _trusted,
           "extra variables (NAME or PREFIX_*) shared recipes and locks may set"),
)


# kind -> (XDG variable, the folder under $HOME without it): the XDG base directory spec, as platformdirs reads it on Linux
_XDG: Final = {"data": ("XDG_DATA_HOME", ".local/share"), "cache": ("XDG_CACHE_HOME", ".cache"),
               "config": ("XDG_CONFIG_HOME", ".config")}


def _user_dir(kind: str) -> Path:
    """platformdirs' folder for cuenv. On Linux with an absolute XDG variable or HOME, the XDG spec read
    here: importing platformdirs costs a bare interpreter's start again (issue 29); a test holds the two
    equal. Anything else (another system, a relative or unset HOME) asks platformdirs itself."""
    var, under_home = _XDG[kind]
    if sys.platform.startswith("linux"):
        base = os.environ.get(var, "")
        if base.startswith("/"):
            return Path(base, "cuenv")
        home = os.environ.get("HOME", "")
        if home.startswith("/"):
            return Path(home.rstrip("/") or "/", under_home, "cuenv")
    import platformdirs

    return Path(getattr(platformdirs, f"user_{kind}_dir")("cuenv"))


# Each default is computed only when no flag, variable or file sets the value.
_DEFAULTS: Final[dict[str, Callable[[], Any]]] = {
    "home": lambda: _user_dir("data"),
    "cache_dir": lambda: _user_dir("cache"),
    "engine": lambda: "auto",
    "recipe_dirs": lambda: (_user_dir("config") / "recipes",),
    "prompt": lambda: True,
    "auto_activate": lambda: False,
    "mirrors_from_tools": lambda: True,
    "framework_index": lambda: FRAMEWORK_INDEXES[0],
    "trusted_env_vars": lambda: (),
}


def default_config_file(environ: Mapping[str, str]) -> Path:
    if environ.get("CUENV_CONFIG"):
        return _path(environ["CUENV_CONFIG"])
    return _user_dir("config") / "config.yaml"


class Settings:
    """The resolved settings. A plain class (no ``dataclasses``: start-up, issue 29), compared by value
    except ``environ``. Mirrors are resolved on first use: reading uv's, pip's and conda's settings costs
    every command that downloads nothing (list, check, use) a TOML and an INI parser. A bad mirror
    setting is reported by the first command that needs the mirrors, and by `cuenv config`."""

    _FIELDS: Final = ("home", "cache_dir", "engine", "recipe_dirs", "prompt", "auto_activate", "mirrors_from_tools",
                      "framework_index", "config_file", "trusted_env_vars", "static_sources", "mirror_inputs")

    def __init__(self, *, home: Path, cache_dir: Path, engine: str, recipe_dirs: tuple[Path, ...], prompt: bool,
                 auto_activate: bool, mirrors_from_tools: bool, framework_index: str, config_file: Path,
                 trusted_env_vars: tuple[str, ...] = (), static_sources: Mapping[str, str] | None = None,
                 mirror_inputs: tuple[Any, Any] = (None, None), environ: Mapping[str, str] | None = None) -> None:
        self.home, self.cache_dir, self.engine, self.recipe_dirs = home, cache_dir, engine, recipe_dirs
        self.prompt, self.auto_activate, self.mirrors_from_tools = prompt, auto_activate, mirrors_from_tools
        self.framework_index, self.config_file, self.trusted_env_vars = framework_index, config_file, trusted_env_vars
        self.static_sources: Mapping[str, str] = {} if static_sources is None else static_sources
        self.mirror_inputs = mirror_inputs
        self.environ: Mapping[str, str] = {} if environ is None else environ

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Settings):
            return NotImplemented
        return all(getattr(self, k) == getattr(other, k) for k in self._FIELDS)

    __hash__ = None  # type: ignore[assignment]  # holds mappings, as the dataclass it replaces did

    def __repr__(self) -> str:
        return "Settings(" + ", ".join(f"{k}={getattr(self, k)!r}" for k in self._FIELDS) + ")"

    @cached_property
    def mirrors(self) -> Mirrors:
        flag, file_value = self.mirror_inputs
        return _resolve_mirrors(flag, self.environ, file_value, self.config_file, from_tools=self.mirrors_from_tools)

    @property
    def sources(self) -> Mapping[str, str]:
        """Where each value came from; asking for it resolves the mirrors."""
        mirrors = "; ".join(dict.fromkeys(r.source for r in self.mirrors.rules)) or "default"
        return {**self.static_sources, "mirrors": mirrors}

    @property
    def envs_dir(self) -> Path:
        return self.home / "envs"


def load_file(path: Path) -> dict[str, Any]:
    """Read the config file; a missing file is empty, a broken one is a clear error.

    Bounded (1 MiB; ``CUENV_CONFIG=/dev/zero`` hung before), strict UTF-8, YAML within depth limits."""
    from cuenv.errors import NotFound
    from cuenv.trust import limits

    hint = "Fix the file, or point CUENV_CONFIG at another one."
    try:
        text = limits.read_text(path, what="Config file", limit=limits.CONFIG, hint=hint)
    except NotFound:
        return {}
    data = limits.load_yaml(text, what="Config file", file=str(path), hint=hint)
    if data is None:
        return {}
    if not isinstance(data, dict):
        raise UsageError(f"Config file {path} must be a mapping of settings.", hint=_known_keys())
    unknown = sorted(set(data) - {o.name for o in OPTIONS})
    if unknown:
        raise UsageError(f"Config file {path}: unknown setting {unknown[0]!r}.", hint=_known_keys())
    return data


def _known_keys() -> str:
    return "Known settings: " + ", ".join(o.name for o in OPTIONS) + "."


def resolve(flags: Mapping[str, Any], environ: Mapping[str, str], config_file: Path | None = None) -> Settings:
    """Settings from flags, then the environment, then the config file, then defaults."""
    path = config_file or default_config_file(environ)
    from_file = load_file(path)
    values: dict[str, Any] = {}
    sources: dict[str, str] = {}
    for opt in OPTIONS:
        if opt.name == "mirrors":
            continue  # merged per upstream below, from every layer at once
        candidates = (
            (flags.get(opt.name), f"flag {opt.flag}"),
            (environ.get(opt.env) or None, f"environment {opt.env}"),
            (from_file.get(opt.name), f"config file {path}"),
        )
        for raw, source in candidates:
            if raw is None or raw == () or raw == []:
                continue
            try:
                values[opt.name] = opt.parse(raw)
            except ValueError as exc:
                raise UsageError(f"Bad value for {opt.name} from {source}: {exc}.") from None
            sources[opt.name] = source
            break
        else:
            values[opt.name] = _DEFAULTS[opt.name]()
            sources[opt.name] = "default"
    sources["config_file"] = "environment CUENV_CONFIG" if environ.get("CUENV_CONFIG") else "default"
    return Settings(config_file=path, static_sources=sources, mirror_inputs=(flags.get("mirrors"), from_file.get("mirrors")),
                    environ=dict(environ), **values)


def _resolve_mirrors(flag: object, environ: Mapping[str, str], file_value: object, path: Path, *, from_tools: bool) -> Mirrors:
    """Mirrors from --mirror, CUENV_MIRRORS, the file's ``mirrors:`` and (unless turned off) the
    settings of uv, pip and conda: per upstream, the first of those that names it wins."""
    from cuenv.engines import mirrors

    return mirrors.resolve(flag=flag or None, env_value=environ.get("CUENV_MIRRORS") or None, file_value=file_value,
                           config_file=path, environ=environ, from_tools=from_tools)
