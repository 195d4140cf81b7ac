"""An environment's verdict on this machine, cached per machine fingerprint (issue 5 §4).

`cuenv list`, `cuenv use`, `cuenv run` and the TUI all ask "does this environment still run
here?". The answer only changes with the driver, a reboot or an override variable, so it is
computed once per fingerprint (cuenv.machine.fingerprint) and kept twice:

- in ``meta.json`` under ``validation`` (the findings, for Python callers), and
- in ``NAME/.cuenv/verdict`` for the shell hook: first line the fingerprint, then the lines to
  print on stderr at activation (``error: ...``, ``warning: ...``, ``hint: ...``). The hook reads
  it with no Python when the fingerprint matches and calls `cuenv shell-env SHELL verdict NAME`
  otherwise.
"""

from __future__ import annotations

from pathlib import Path

from cuenv import atomic
from cuenv.envs.folder import VERDICT_FILE
from cuenv.envs.meta import Validation
from cuenv.envs.store import EnvRecord, write_meta
from cuenv.errors import CuenvError
from cuenv.knowledge.findings import Finding, no_gpu_here
from cuenv.machine.fingerprint import fingerprint
from cuenv.plain import Plain
from cuenv.trust import limits

TYPE_CHECKING = False  # no `typing` at run time: the start-up path does without it (issue 29)
if TYPE_CHECKING:
    from typing import Mapping, Sequence


def compute(record: EnvRecord, environ: Mapping[str, str], cache_dir: Path | None = None) -> list[Finding]:
    """Check the environment's recorded stack against this machine (detection has its own cache)."""
    from cuenv.envs.meta import stack_from_meta
    from cuenv.knowledge.compat import check
    from cuenv.machine.driver import detect

    return check(stack_from_meta(record.meta), detect(environ, cache_dir=cache_dir))


def findings_for(record: EnvRecord, environ: Mapping[str, str], cache_dir: Path | None = None, *,
                 fp: str | None = None) -> list[Finding]:
    """The cached findings when the machine is unchanged, else fresh ones (both caches rewritten).
    ``fp``: this machine's fingerprint, when the caller judges many environments at once."""
    fp = fp or fingerprint(environ)
    cached = record.meta.validation
    if cached.fingerprint == fp:
        return list(cached.findings)
    findings = compute(record, environ, cache_dir)
    save(record, fp, findings)
    return findings


def save(record: EnvRecord, fp: str, findings: Sequence[Finding]) -> None:
    """Store the verdict in meta.json and in the hook's cache; a read-only environment just skips it."""
    try:
        write_meta(record.path, record.meta.replace(validation=Validation(fp, tuple(findings))))
    except OSError:
        pass
    write(record.meta_dir, fp, lines_for(findings))


class Notice(Plain):
    """One thing `use` says on stderr about an environment: an error or a warning, and its fix."""

    __slots__ = ("severity", "message", "hint")

    def __init__(self, severity: str, message: str, hint: str | None = None) -> None:
        self.severity = severity  # error | warning
        self.message = message  # one line
        self.hint = hint  # one line


def notices(findings: Sequence[Finding]) -> list[Notice]:
    """What `use` says (it activates anyway; --strict refuses when any is an error).
    On a machine without a GPU, one notice instead of an error and its hint on every activation (issue 30
    §4); it stays an error, so `use --strict` still refuses what it cannot confirm."""
    if no_gpu_here(findings):
        return [Notice("error", "no NVIDIA driver here, so cuenv cannot judge this environment on this machine "
                       "(set CUENV_TARGET_DRIVER and CUENV_TARGET_GPUS to judge it for the GPU machine it is for).")]
    return [Notice(f.severity, " ".join(f.message.splitlines()), " ".join(f.fix.splitlines()) if f.fix else None)
            for f in findings if f.severity in ("error", "warning")]


def line_texts(said: Sequence[Notice]) -> list[str]:
    """Notices as the lines printed on stderr (and kept in the hook's cache, whose reader looks for ``error:``)."""
    out = []
    for n in said:
        out.append(f"{n.severity}: {n.message}")
        if n.hint:
            out.append(f"hint: {n.hint}")
    return out


def lines_for(findings: Sequence[Finding]) -> list[str]:
    """The hook cache's lines for ``findings``."""
    return line_texts(notices(findings))


def has_error(said: Sequence[Notice]) -> bool:
    return any(n.severity == "error" for n in said)


def write(meta_dir: Path, fp: str, lines: Sequence[str]) -> None:
    text = "\n".join([fp, *lines]) + "\n"
    try:
        atomic.write_text(meta_dir / VERDICT_FILE, text)
    except OSError:
        pass  # a read-only environment still activates; the verdict is recomputed next time


def read(meta_dir: Path, fp: str) -> list[str] | None:
    """The hook cache's lines, or None when there is no cache for this fingerprint."""
    try:
        text = limits.read_text(meta_dir / VERDICT_FILE, what="Verdict cache", limit=limits.ENV_STATE)
        first, *rest = text.split("\n")
    except (OSError, ValueError, CuenvError):
        return None
    return [r for r in rest if r] if first == fp else None


def worst(findings: Sequence[Finding]) -> str:
    sev = {f.severity for f in findings}
    return "error" if "error" in sev else "warning" if "warning" in sev else "ok"


def status(record: EnvRecord, environ: Mapping[str, str], cache_dir: Path | None = None, *,
           fp: str | None = None) -> tuple[str, str]:
    """(ok | warning | error | unknown | incomplete, the short reason: the first such finding's code).
    ``unknown``, "no GPU here": this machine has no driver to judge by (issue 30 §4)."""
    if not record.complete:
        if record.broken is not None:
            return "incomplete", "damaged metadata"  # built, then meta.json broke: `cuenv info NAME` says how
        return "incomplete", "interrupted or failed create"
    findings = findings_for(record, environ, cache_dir, fp=fp)
    if no_gpu_here(findings):
        return "unknown", "no GPU here"
    state = worst(findings)
    reason = next((f.code for f in findings if f.severity == state), "")
    return state, reason
