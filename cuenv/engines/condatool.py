"""What the conda at hand can do: its version, its solvers and the options cuenv passes (issue 28).

cuenv never assumes a flag: ``conda create --help`` lists the options and the ``--solver`` choices
this conda accepts, ``conda info --json`` its version and configured solver. A conda with the
libmamba plugin solves with libmamba; one without it (older conda, trimmed installs, sites that pin
the classic solver) gets no ``--solver`` at all and solves with what it is configured to use.
The two probes cost about a second; their answer is cached under cuenv's cache folder, keyed by
what could change it (the executable, its prefix's packages, CONDA_SOLVER and the condarc files).
"""

from __future__ import annotations

import json
import logging
import re
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, Final, Mapping

from cuenv import atomic, runner
from cuenv.errors import ToolError

_LOGGER = logging.getLogger(__name__)
PROBE_TIMEOUT: Final = 60.0
CACHE_FILE: Final = "conda-tool.json"
CACHE_VERSION: Final = 1
# conda reads explicit-file hashes as sha256 from 24.9 on (conda#13941); older ones take md5 only
SHA256_EXPLICIT_SINCE: Final = (24, 9)
_SOLVER_CHOICES: Final = re.compile(r"--solver[ =]\{([A-Za-z0-9_,\- ]+)\}")
_LONG_OPTION: Final = re.compile(r"(?<![\w-])(--[a-z][a-z0-9-]*)")
# the options every solve and install passes; a conda without one of them cannot be driven
REQUIRED: Final = ("--dry-run", "--json", "--yes", "--prefix", "--override-channels", "--file")


@dataclass(frozen=True)
class CondaTool:
    """One conda executable, as it described itself."""

    exe: str
    version: str | None  # None: its `info --json` said none we could read
    solvers: tuple[str, ...]  # what --solver accepts; () when this conda has no --solver option
    configured_solver: str | None  # conda's own choice (condarc, CONDA_SOLVER); None: not said
    options: tuple[str, ...]  # the long options of `conda create`

    @property
    def solver(self) -> str:
        """The solver cuenv's solves use: libmamba when this conda has it, else its configured one."""
        if "libmamba" in self.solvers:
            return "libmamba"
        return self.configured_solver or "classic"

    def solver_args(self) -> list[str]:
        return ["--solver=libmamba"] if "libmamba" in self.solvers else []

    def solver_reason(self) -> str:
        if "libmamba" in self.solvers:
            return "libmamba (this conda has it)"
        return f"{self.solver} (conda's configured solver; this conda has no libmamba)"

    def platform_args(self, platform: str) -> list[str]:
        """``--platform X`` (conda >= 23.9 spells it so; ``--subdir`` before), or a refusal."""
        if not self.options:  # its help said nothing readable: the current spelling, and conda's own error if not
            return ["--platform", platform]
        for flag in ("--platform", "--subdir"):
            if flag in self.options:
                return [flag, platform]
        raise ToolError(f"This conda ({self.describe()}) cannot solve for another platform ({platform}).",
                        hint="Use --engine rattler, which solves for any platform, or update conda.")

    def check_options(self) -> None:
        """Refuse a conda that lacks an option cuenv passes (one whose help said nothing readable is tried)."""
        missing = [flag for flag in REQUIRED if self.options and flag not in self.options]
        if missing:
            raise ToolError(f"This conda ({self.describe()}) lacks options cuenv needs: {', '.join(missing)}.",
                            hint="Update conda, or use --engine rattler (no conda needed).")

    @property
    def sha256_explicit(self) -> bool:
        """Whether an explicit file may carry sha256 hashes (else md5)."""
        parsed = version_tuple(self.version)
        return parsed is None or parsed >= SHA256_EXPLICIT_SINCE

    def describe(self) -> str:
        return f"conda {self.version or '(version unknown)'} at {self.exe}"

    def to_json(self) -> dict[str, Any]:
        return {**asdict(self), "solver": self.solver}


# -- pure: reading what conda printed ----------------------------------------------------------
def parse_create_help(text: str) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """``conda create --help`` -> (the --solver choices, every long option), both sorted."""
    solvers: set[str] = set()
    for found in _SOLVER_CHOICES.findall(text):
        solvers.update(s.strip() for s in found.split(",") if s.strip())
    return tuple(sorted(solvers)), tuple(sorted(set(_LONG_OPTION.findall(text))))


def parse_info(text: str) -> tuple[str | None, str | None]:
    """``conda info --json`` -> (conda_version, the configured solver's name); None where not said."""
    try:
        data = json.loads(text)
    except ValueError:
        return None, None
    if not isinstance(data, dict):
        return None, None
    version = data.get("conda_version")
    solver = data.get("solver")
    name = solver.get("name") if isinstance(solver, dict) else solver
    return (version if isinstance(version, str) and version else None,
            name if isinstance(name, str) and name else None)


def version_tuple(version: str | None) -> tuple[int, int] | None:
    match = re.match(r"(\d+)\.(\d+)", version or "")
    return (int(match.group(1)), int(match.group(2))) if match else None


# -- probing, with a cache ---------------------------------------------------------------------
def _stamp(path: Path) -> str:
    try:
        st = path.stat()
    except OSError:
        return "-"
    return f"{st.st_mtime_ns}:{st.st_size}"


def cache_key(exe: Path, environ: Mapping[str, str]) -> str:
    """What could change the answer: the executable, its prefix's packages, the solver settings."""
    real = exe.resolve()
    root = real.parent.parent
    home = Path(environ.get("HOME", "~")).expanduser()
    watched = [real, root / "conda-meta", root / ".condarc", home / ".condarc", home / ".config" / "conda" / "condarc",
               Path("/etc/conda/.condarc"), *sorted(root.glob("lib/python3*/site-packages"))]
    if environ.get("CONDARC"):
        watched.append(Path(environ["CONDARC"]))
    settings = {k: v for k, v in environ.items() if k in ("CONDA_SOLVER", "CONDARC", "CONDA_ROOT_PREFIX")}
    return json.dumps([str(exe), *(f"{p}={_stamp(p)}" for p in watched), sorted(settings.items())])


_MEMO: dict[str, CondaTool] = {}


def probe(exe: Path, environ: Mapping[str, str], *, cache_dir: Path | None = None) -> CondaTool:
    """Ask ``exe`` what it can do (or read the cached answer)."""
    key = cache_key(exe, environ)
    if key in _MEMO:
        return _MEMO[key]
    cache = Path(cache_dir) / CACHE_FILE if cache_dir is not None else None
    tool = _read_cache(cache, key) if cache is not None else None
    if tool is None:
        helped = runner.run([exe, "create", "--help"], timeout=PROBE_TIMEOUT, env=environ, check=False)
        solvers, options = parse_create_help(helped.stdout)
        info = runner.run([exe, "info", "--json"], timeout=PROBE_TIMEOUT, env=environ, check=False)
        version, configured = parse_info(info.stdout)
        tool = CondaTool(exe=str(exe), version=version, solvers=solvers, configured_solver=configured, options=options)
        if cache is not None and helped.returncode == 0 and info.returncode == 0:  # a failed probe is asked again
            _write_cache(cache, key, tool)
    _LOGGER.info("%s: solver %s", tool.describe(), tool.solver_reason())  # shown with -v
    _MEMO[key] = tool
    return tool


def _read_cache(path: Path, key: str) -> CondaTool | None:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        entry = data["tools"][key]
        return CondaTool(exe=str(entry["exe"]), version=entry["version"], solvers=tuple(entry["solvers"]),
                         configured_solver=entry["configured_solver"], options=tuple(entry["options"]))
    except (OSError, ValueError, KeyError, TypeError):
        return None  # absent, stale or damaged: probe again


def _write_cache(path: Path, key: str, tool: CondaTool) -> None:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        tools = data["tools"] if data.get("version") == CACHE_VERSION and isinstance(data.get("tools"), dict) else {}
    except (OSError, ValueError, AttributeError):
        tools = {}
    tools = {k: v for k, v in tools.items() if isinstance(v, dict) and v.get("exe") != tool.exe}  # one entry per executable
    tools[key] = asdict(tool)
    try:
        atomic.write_text(path, json.dumps({"version": CACHE_VERSION, "tools": tools}))
    except OSError as exc:  # a read-only cache must not stop a solve
        _LOGGER.debug("could not write %s: %s", path, exc)


def forget() -> None:
    """Drop the in-process answers (tests that swap a conda under the same path)."""
    _MEMO.clear()


