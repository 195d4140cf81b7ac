"""How this cuenv was installed, and the command that adds a package to its own environment.

A hint to pip-install an extra of cuenv fails after `uv tool install` ("No matching
distribution") and on Debian's externally managed Python (issue 18): every hint about installing
names a command for the way cuenv was installed. Facts only; nothing here runs a command.

- uv tool: the environment holds ``uv-receipt.toml`` (its requirements and Python); adding a package
  is ``uv tool install`` again with every earlier requirement plus ``--with NEW``.
- pipx: the environment holds ``pipx_metadata.json``; ``pipx inject cuenv NEW``.
- a virtual environment: its own pip (``uv venv`` makes none: then ``uv pip install --python``).
- an externally managed Python (PEP 668, Debian's /usr/bin/python3): pip refuses; install cuenv
  into its own environment instead (README).
"""

from __future__ import annotations

import shlex
import sys
import sysconfig
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final, Sequence

KINDS: Final = ("uv-tool", "pipx", "venv", "externally-managed", "system")
# The one route we recommend where nothing can be added in place (README "Install").
REINSTALL: Final = "uv tool install PATH-TO-CUENV (or pipx install PATH-TO-CUENV)"


@dataclass(frozen=True)
class Installation:
    kind: str  # one of KINDS
    prefix: Path
    python: str  # the interpreter cuenv runs on
    receipt: dict[str, Any] | None = None  # uv tool's receipt [tool] table

    def add(self, *requirements: str) -> str:
        """The shell command that adds ``requirements`` to cuenv's own environment."""
        reqs = " ".join(shlex.quote(r) for r in requirements)
        if self.kind == "uv-tool":
            return _uv_tool_add(self.receipt or {}, requirements)
        if self.kind == "pipx":
            return f"pipx inject cuenv {reqs}"
        if self.kind == "venv":
            if (self.prefix / "bin" / "pip").exists():
                return f"{shlex.quote(self.python)} -m pip install {reqs}"
            return f"uv pip install --python {shlex.quote(self.python)} {reqs}"
        if self.kind == "externally-managed":
            return f"reinstall cuenv in its own environment: {REINSTALL}"
        return f"{shlex.quote(self.python)} -m pip install {reqs}"

    def hint_for(self, *requirements: str) -> str:
        """One hint sentence: what to run to get ``requirements`` into cuenv's environment."""
        command = self.add(*requirements)
        if command.startswith("reinstall"):
            return f"This Python is managed by the system; {command}."
        return f"Install it into cuenv's environment: `{command}`."


def _uv_tool_add(receipt: dict[str, Any], new: Sequence[str]) -> str:
    """``uv tool install`` with the receipt's requirements, its Python and ``new`` as ``--with``."""
    main, extras = None, []
    for req in receipt.get("requirements") or ():
        text = _requirement_text(req)
        if text is None:
            continue
        if main is None and isinstance(req, dict) and req.get("name") == "cuenv":
            main = text
        else:
            extras.append(text)
    parts = ["uv", "tool", "install"]
    if receipt.get("python"):
        parts += ["--python", str(receipt["python"])]
    for extra in [*extras, *new]:
        parts += ["--with", extra]
    parts.append(main or "cuenv")
    return " ".join(shlex.quote(p) for p in parts)


def _requirement_text(req: object) -> str | None:
    """One receipt requirement ({name, directory | url | editable | specifier | extras}) as uv reads it."""
    if isinstance(req, str):
        return req
    if not isinstance(req, dict) or "name" not in req:
        return None
    for key in ("directory", "path", "editable"):
        if req.get(key):
            return str(req[key])
    extras = f"[{','.join(req['extras'])}]" if req.get("extras") else ""
    if req.get("url"):
        return f"{req['name']}{extras} @ {req['url']}"
    return f"{req['name']}{extras}{req.get('specifier', '')}"


def detect(prefix: str | Path | None = None, base_prefix: str | Path | None = None,
           executable: str | None = None) -> Installation:
    """The Installation of the running cuenv (arguments are for tests)."""
    here = Path(prefix or sys.prefix)
    base = Path(base_prefix or sys.base_prefix)
    python = executable or sys.executable
    receipt_file = here / "uv-receipt.toml"
    if receipt_file.is_file():
        return Installation("uv-tool", here, python, _read_receipt(receipt_file))
    if (here / "pipx_metadata.json").is_file():
        return Installation("pipx", here, python)
    if here != base:
        return Installation("venv", here, python)
    stdlib = Path(sysconfig.get_path("stdlib", vars={"installed_base": str(base), "base": str(base)}))
    if (stdlib / "EXTERNALLY-MANAGED").is_file():
        return Installation("externally-managed", here, python)
    return Installation("system", here, python)


def _read_receipt(path: Path) -> dict[str, Any]:
    if sys.version_info >= (3, 11):
        import tomllib
    else:  # the same API on Python 3.10
        import tomli as tomllib
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    tool = data.get("tool")
    return tool if isinstance(tool, dict) else {}
