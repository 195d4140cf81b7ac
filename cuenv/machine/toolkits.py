"""CUDA toolkits already on the system, and which environment engines are available.

Toolkits are found in CUDA_HOME / CUDA_PATH, through the ``nvcc`` on PATH, and in the usual
folders (``/usr/local/cuda``, ``/usr/local/cuda-*``, ``/opt/cuda*``, read under ``root`` so tests
can build a tree). The version is read from files first (version.json, version.txt,
``cuda_runtime_api.h``'s CUDART_VERSION); ``nvcc --version`` runs only when no file says it.
"""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

from cuenv.envs.folder import META_DIR, is_shim
from cuenv.errors import ToolError
from cuenv.plain import Plain
from cuenv.trust import limits

TYPE_CHECKING = False  # no `typing` at run time: `cuenv info` starts here (issue 29)
if TYPE_CHECKING:
    from typing import Final, Mapping, TypedDict

    class _Found(TypedDict):
        """A toolkit while ``discover`` gathers where it was seen."""

        path: str
        version: str | None
        nvcc: str | None
        sources: list[str]

NVCC_TIMEOUT: Final = 20.0
ENV_VARS: Final = ("CUDA_HOME", "CUDA_PATH")


class SystemToolkit(Plain):
    __slots__ = ("path", "version", "nvcc", "source")

    def __init__(self, path: str, version: str | None, nvcc: str | None, source: str) -> None:
        self.path = path  # the toolkit root (or nvcc's folder when the root is unknown)
        self.version = version  # "13.0"
        self.nvcc = nvcc  # path of its nvcc, if it has one
        self.source = source  # where it was found: "CUDA_HOME", "PATH", "/usr/local/cuda-*", ... joined by ", "


def version_from_files(root: Path) -> str | None:
    """ "major.minor" of the toolkit at ``root`` without running anything, or None."""
    try:
        data = json.loads(limits.read_small(root / "version.json"))
        m = re.match(r"(\d+)\.(\d+)", str(data.get("cuda", {}).get("version", "")))
        if m:
            return f"{m.group(1)}.{m.group(2)}"
    except (OSError, ValueError, AttributeError):
        pass
    try:  # CUDA <= 11.0: "CUDA Version 10.2.89"
        m = re.search(r"(\d+)\.(\d+)", limits.read_small(root / "version.txt"))
        if m:
            return f"{m.group(1)}.{m.group(2)}"
    except (OSError, ValueError):
        pass
    headers = [root / "include" / "cuda_runtime_api.h", *sorted(root.glob("targets/*/include/cuda_runtime_api.h"))]
    for header in headers:
        try:
            text = limits.read_small(header, limit=limits.REQUEST_FILE, errors="replace")
        except OSError:
            continue
        m = re.search(r"#define\s+CUDART_VERSION\s+(\d+)", text)
        if m:
            value = int(m.group(1))
            return f"{value // 1000}.{(value % 1000) // 10}"
    return None


def parse_nvcc_version(text: str) -> str | None:
    """ "Cuda compilation tools, release 13.0, V13.0.88" -> "13.0"."""
    m = re.search(r"release\s+(\d+\.\d+)", text)
    return m.group(1) if m else None


# (path, mtime, size) -> release: one `nvcc --version` per binary and process. `create` asked the
# same system nvcc twice (its note and its summary), about 60 ms each (issue 29).
_ASKED: dict[tuple[str, int, int], str | None] = {}


def _nvcc_version(nvcc: Path, environ: Mapping[str, str]) -> str | None:
    from cuenv import runner

    try:
        st = nvcc.stat()
    except OSError:
        return None
    key = (str(nvcc), st.st_mtime_ns, st.st_size)
    if key not in _ASKED:
        try:
            out = runner.run([nvcc, "--version"], timeout=NVCC_TIMEOUT, env=environ)
        except ToolError:
            _ASKED[key] = None
        else:
            _ASKED[key] = parse_nvcc_version(out.stdout)
    return _ASKED[key]


def _is_toolkit(path: Path) -> bool:
    """A CUDA root says so in a file; a bare bin/nvcc is not enough (/usr/local/bin/nvcc)."""
    return (path / "include" / "cuda_runtime_api.h").exists() or (path / "version.json").exists() \
        or (path / "version.txt").exists() or any(path.glob("targets/*/include/cuda_runtime_api.h"))


def _is_cuenv_env(path: Path) -> bool:
    """An active cuenv environment's CUDA_HOME (its prefix, or the prefix's .cuenv/cuda tree) is not a
    system toolkit."""
    return (path / META_DIR).is_dir() or META_DIR in path.parts


def _candidates(environ: Mapping[str, str], root: Path) -> list[tuple[Path, str]]:
    """CUDA_HOME/CUDA_PATH, then ``cuda*`` folders under the usual parents, or under the parents
    listed in CUENV_TOOLKIT_ROOTS (':'-separated; for unusual installs and for tests)."""
    found: list[tuple[Path, str]] = []
    for var in ENV_VARS:
        if environ.get(var):
            found.append((Path(environ[var]), var))
    parents = [Path(p) for p in environ.get("CUENV_TOOLKIT_ROOTS", "").split(":") if p]
    if parents:
        found += [(p, "CUENV_TOOLKIT_ROOTS") for parent in parents for p in sorted(parent.glob("cuda*"))]
        return found
    for folder, pattern in ((root / "usr/local", "cuda"), (root / "usr/local", "cuda-*"), (root / "opt", "cuda*")):
        found += [(p, str(Path("/") / p.relative_to(root))) for p in sorted(folder.glob(pattern))]
    return found


def discover(environ: Mapping[str, str], root: Path = Path("/")) -> list[SystemToolkit]:
    """Every distinct toolkit (by real path), in the order found; the nvcc on PATH included."""
    by_real: dict[Path, _Found] = {}
    for path, source in _candidates(environ, root):
        if not path.is_dir() or not _is_toolkit(path) or _is_cuenv_env(path):
            continue
        real = path.resolve()
        entry = by_real.setdefault(real, {"path": str(real), "version": version_from_files(real),
                                          "nvcc": None, "sources": []})
        entry["sources"].append(source)
        nvcc = real / "bin" / "nvcc"
        if nvcc.exists():
            entry["nvcc"] = str(nvcc)
    on_path = _real_nvcc_on_path(environ.get("PATH", ""))
    if on_path:
        _add_path_nvcc(Path(on_path), environ, by_real)
    return [SystemToolkit(e["path"], e["version"], e["nvcc"], ", ".join(e["sources"])) for e in by_real.values()]


def _real_nvcc_on_path(path: str) -> str | None:
    """The first nvcc on ``path`` that is not a cuenv shim (an environment's stand-in is no toolkit)."""
    for folder in path.split(":"):
        found = shutil.which("nvcc", path=folder) if folder else None
        if found and not is_shim(Path(found)):
            return found
    return None


def _add_path_nvcc(nvcc: Path, environ: Mapping[str, str], by_real: dict[Path, _Found]) -> None:
    real = nvcc.resolve()
    home = real.parent.parent
    if real.parent.name == "bin" and _is_toolkit(home):
        entry = by_real.setdefault(home, {"path": str(home), "version": version_from_files(home),
                                          "nvcc": str(real), "sources": []})
        entry["sources"].append("PATH")
        return
    # A wrapper script (or a layout without headers): ask nvcc itself, then match by version.
    version = _nvcc_version(nvcc, environ)
    for entry in by_real.values():
        if version and entry["version"] == version and entry["nvcc"]:
            entry["sources"].append(f"PATH ({nvcc})")
            return
    by_real[real] = {"path": str(real.parent), "version": version, "nvcc": str(nvcc), "sources": ["PATH"]}
