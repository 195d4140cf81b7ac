"""`--format explicit`: conda's @EXPLICIT list, one URL per package with its sha256 after `#`.

`conda create -n NAME --file explicit.txt` (conda >= 24.9; mamba/micromamba >= 2.1 read sha256 too)
installs exactly these archives with no solve and checks every download against the hash.
"""

from __future__ import annotations

from typing import Any, Mapping

from cuenv.export import ExportSource, Output
from cuenv.export._common import packages_of


def export(source: ExportSource, options: Mapping[str, Any]) -> list[Output]:
    from cuenv.engines.conda import explicit_file

    packages_of(source, "conda", "explicit", "For a venv environment use --format requirements.")
    return [Output(path="explicit.txt", content=explicit_file(source.solution, mirrors=source.mirrors),
                   note=f"Install with: conda create -n {source.record.name} --file explicit.txt")]
