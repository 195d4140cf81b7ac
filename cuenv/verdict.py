"""The validation verdict of `cuenv use`, cached per machine fingerprint (issue 5 §4).

``NAME/.cuenv/verdict``: first line the fingerprint (cuenv.fingerprint), then the lines to print on
stderr at activation (``error: ...``, ``warning: ...``, ``hint: ...``). The shell hook reads it with
no Python when the fingerprint matches, and calls `cuenv shell-env SHELL verdict NAME` otherwise.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Callable, Final, Mapping, Sequence

from cuenv.stack import Finding
from cuenv.store import EnvRecord

VERDICT_FILE: Final = "verdict"
Verdict = Callable[[EnvRecord, Mapping[str, str]], "list[Finding]"]


def compute_verdict(record: EnvRecord, environ: Mapping[str, str]) -> list[Finding]:
    """Findings of the check engine for this environment on this machine ([] without the engine).

    The one injection point: `cuenv.check.check(stack, machine)` decides; wiring the environment's
    Stack (from its metadata) and the detected Machine belongs to the check engine's integration.
    """
    try:
        from cuenv.check import check, machine_for, stack_for_env  # type: ignore[attr-defined]
    except ImportError:
        return []
    return list(check(stack_for_env(record), machine_for(environ)))


def lines_for(findings: Sequence[Finding]) -> list[str]:
    out = []
    for f in findings:
        if f.severity not in ("error", "warning"):
            continue
        out.append(f"{f.severity}: {' '.join(f.message.splitlines())}")
        if f.fix:
            out.append(f"hint: {' '.join(f.fix.splitlines())}")
    return out


def has_error(lines: Sequence[str]) -> bool:
    return any(line.startswith("error:") for line in lines)


def write(meta_dir: Path, fingerprint: str, lines: Sequence[str]) -> None:
    text = "\n".join([fingerprint, *lines]) + "\n"
    tmp = meta_dir / f".{VERDICT_FILE}.tmp{os.getpid()}"
    try:
        tmp.write_text(text, encoding="utf-8")
        os.replace(tmp, meta_dir / VERDICT_FILE)
    except OSError:
        pass  # a read-only environment still activates; the verdict is recomputed next time


def read(meta_dir: Path, fingerprint: str) -> list[str] | None:
    """The cached lines, or None when there is no cache for this fingerprint."""
    try:
        first, *rest = (meta_dir / VERDICT_FILE).read_text(encoding="utf-8").split("\n")
    except (OSError, ValueError):
        return None
    return [r for r in rest if r] if first == fingerprint else None
