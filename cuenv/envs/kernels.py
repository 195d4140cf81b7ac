"""The kernels an environment really carries, judged for a machine (issue 20): one call for
`cuenv check NAME`, `cuenv check --all`, `cuenv doctor NAME` and the TUI's detail view."""

from __future__ import annotations

from pathlib import Path

from cuenv.binaries.assess import Assessment, assess
from cuenv.binaries.scan import scan
from cuenv.envs.meta import stack_from_meta
from cuenv.envs.store import EnvRecord
from cuenv.knowledge.findings import SEVERITIES, Finding
from cuenv.machine.model import Machine

# Table findings that the files answer better: once kernels were read, their findings stand instead.
SUPERSEDED = frozenset({"arch-unknown"})


def assess_environment(record: EnvRecord, machine: Machine, *, cache_dir: Path | None) -> Assessment:
    """Scan the prefix (cached per file in ``cache_dir``) and hold it against the recorded recipe's arch list."""
    return assess(scan(record.prefix, cache_dir=cache_dir), machine, declared=stack_from_meta(record.meta))


def judge(record: EnvRecord, machine: Machine, *, cache_dir: Path | None, gcc: str | None = None) -> tuple[list[Finding], Assessment]:
    """An environment's findings for ``machine``: its recorded stack against the knowledge base, and
    the kernels its files carry against the GPUs (which answer the arch question where they exist)."""
    from cuenv.knowledge.compat import check

    findings = check(stack_from_meta(record.meta), machine, gcc=gcc)
    kernels = assess_environment(record, machine, cache_dir=cache_dir)
    if any(lib.modules for lib in kernels.libraries):
        findings = [f for f in findings if f.code not in SUPERSEDED]
    return sorted([*findings, *kernels.findings], key=lambda f: SEVERITIES.index(f.severity)), kernels
