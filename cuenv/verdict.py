"""An environment's verdict on this machine, cached per machine fingerprint.

`cuenv list`, `cuenv use` and the TUI all ask "does this environment still run here?". The answer
only changes with the driver, a reboot or an override variable, so it is computed once per
fingerprint and kept in the environment's metadata (``validation``) and, for the shell hook, in
``.cuenv/verdict``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Mapping

from cuenv.fingerprint import fingerprint
from cuenv.stack import Finding
from cuenv.store import EnvRecord

VERDICT_FILE = "verdict"


def findings_from_json(rows: Any) -> list[Finding]:
    return [Finding(**row) for row in rows or ()]


def compute(record: EnvRecord, environ: Mapping[str, str], cache_dir: Path | None = None) -> list[Finding]:
    """Check the environment's recorded stack against this machine (detection is cached too)."""
    from cuenv.check import check
    from cuenv.create import stack_from_meta
    from cuenv.driver import detect

    return check(stack_from_meta(record.meta), detect(environ, cache_dir=cache_dir))


def findings_for(record: EnvRecord, environ: Mapping[str, str], cache_dir: Path | None = None) -> list[Finding]:
    """The cached findings when the machine is unchanged, else fresh ones (and the cache updated)."""
    fp = fingerprint(environ)
    cached = record.meta.get("validation") or {}
    if cached.get("fingerprint") == fp:
        return findings_from_json(cached.get("findings"))
    findings = compute(record, environ, cache_dir)
    write_cache(record, fp, findings)
    return findings


def write_cache(record: EnvRecord, fp: str, findings: list[Finding]) -> None:
    """Store the verdict in meta.json and in the hook's plain-text cache; a read-only env just skips it."""
    import json

    from cuenv.store import META_FILE

    meta = dict(record.meta)
    meta["validation"] = {"fingerprint": fp, "findings": [f.to_json() for f in findings]}
    try:
        (record.meta_dir / META_FILE).write_text(json.dumps(meta, indent=2, sort_keys=True) + "\n", encoding="utf-8")
        (record.meta_dir / VERDICT_FILE).write_text(render_hook_cache(fp, findings), encoding="utf-8")
    except OSError:
        pass


def render_hook_cache(fp: str, findings: list[Finding]) -> str:
    """Line 1: fingerprint; line 2: worst severity; then the lines the hook prints on stderr."""
    lines = [fp, worst(findings)]
    for f in findings:
        if f.severity in ("error", "warning"):
            lines.append(f"{f.severity}: {f.message}")
            if f.fix:
                lines.append(f"hint: {f.fix}")
    return "\n".join(lines) + "\n"


def worst(findings: list[Finding]) -> str:
    sev = {f.severity for f in findings}
    return "error" if "error" in sev else "warning" if "warning" in sev else "ok"


def status(record: EnvRecord, environ: Mapping[str, str], cache_dir: Path | None = None) -> tuple[str, str]:
    """(ok | warning | error | incomplete, the short reason: the first finding's code)."""
    if not record.complete:
        return "incomplete", "interrupted or failed create"
    findings = findings_for(record, environ, cache_dir)
    state = worst(findings)
    reason = next((f.code for f in findings if f.severity == state), "")
    return state, reason
