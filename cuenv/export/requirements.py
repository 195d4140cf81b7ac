"""`--format requirements`: pip requirements pinning each exact wheel by URL, with `--hash` lines.

`pip install --require-hashes -r requirements.txt` (or `uv pip sync --require-hashes`) installs
exactly these files and refuses any whose sha256 differs.
"""

from __future__ import annotations

from typing import Any, Mapping

from cuenv.export import ExportSource, Output
from cuenv.export._common import packages_of


def export(source: ExportSource, options: Mapping[str, Any]) -> list[Output]:
    from cuenv.engines.venv import requirements_lines

    packages = packages_of(source, "pypi", "requirements", "For a conda environment use --format explicit or conda-lock.")
    header = (f"# {source.record.name}: exact wheels for {source.solution.platform}, Python {source.solution.python}.\n"
              "# Install with: pip install --require-hashes -r requirements.txt\n" + source.credentials_note())
    return [Output(path="requirements.txt", content=header + requirements_lines(packages, mirrors=source.mirrors))]
