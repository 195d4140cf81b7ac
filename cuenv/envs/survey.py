"""Every environment at once, judged for one machine (issue 30 §2): `cuenv check --all` and the TUI.

Each environment, built or adopted, gets the judgement `cuenv check NAME` gives it
(cuenv.envs.kernels.judge): its recorded stack against the knowledge base and the kernels its files
carry against the machine's GPUs. One whose records cannot be read is "unknown", with why; it never
stops the others.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from cuenv.envs.store import Store
from cuenv.errors import CuenvError
from cuenv.knowledge.findings import Finding
from cuenv.machine.model import Machine

RUNS, WARNS, FAILS, UNKNOWN = "runs", "runs, with warnings", "does not run", "unknown"


@dataclass(frozen=True)
class EnvVerdict:
    name: str
    prefix: Path
    adopted: bool
    cuda: str | None
    framework: str | None
    verdict: str  # RUNS | WARNS | FAILS | UNKNOWN
    findings: tuple[Finding, ...]

    @property
    def cause(self) -> Finding | None:
        """The finding that decides the verdict: the first error, else the first warning."""
        return next((f for f in self.findings if f.severity == "error"), None) \
            or next((f for f in self.findings if f.severity == "warning"), None)

    def to_json(self) -> dict[str, Any]:
        cause = self.cause
        return {"name": self.name, "path": str(self.prefix), "adopted": self.adopted, "cuda": self.cuda,
                "framework": self.framework, "verdict": self.verdict,
                "cause": cause.code if cause else None, "message": cause.message if cause else None,
                "fix": cause.fix if cause else None, "findings": [f.to_json() for f in self.findings]}


def survey(store: Store, machine: Machine, *, cache_dir: Path | None) -> list[EnvVerdict]:
    from cuenv.envs.kernels import judge

    out = []
    for record in store.list():
        meta = record.known
        framework = meta.framework if meta is not None else None
        cuda = meta.cuda if meta is not None else None
        try:
            if not record.complete:
                raise record.damage or CuenvError("its creation was interrupted or its metadata is unreadable")
            findings, _ = judge(record, machine, cache_dir=cache_dir)
        except CuenvError as exc:
            bad = Finding(code="env-unreadable", severity="info", message=f"{record.name}: {exc.message}",
                          fix=f"`cuenv info {record.name}` shows what is known; `cuenv remove {record.name}` forgets it.")
            out.append(EnvVerdict(record.name, record.prefix, record.adopted, cuda, framework, UNKNOWN, (bad,)))
            continue
        errors = any(f.severity == "error" for f in findings)
        warns = any(f.severity == "warning" for f in findings)
        verdict = FAILS if errors else (WARNS if warns else RUNS)
        out.append(EnvVerdict(record.name, record.prefix, record.adopted, cuda, framework, verdict, tuple(findings)))
    return out
