"""The kernels an environment really carries, judged for a machine (issue 20): one call for
`cuenv check NAME`, `cuenv doctor NAME` and the TUI's detail view."""

from __future__ import annotations

from pathlib import Path

from cuenv.binaries.assess import Assessment, assess
from cuenv.binaries.scan import scan
from cuenv.envs.meta import stack_from_meta
from cuenv.envs.store import EnvRecord
from cuenv.machine.model import Machine


def assess_environment(record: EnvRecord, machine: Machine, *, cache_dir: Path | None) -> Assessment:
    """Scan the prefix (cached per file in ``cache_dir``) and hold it against the recorded recipe's arch list."""
    return assess(scan(record.path, cache_dir=cache_dir), machine, declared=stack_from_meta(record.meta))
