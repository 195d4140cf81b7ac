"""`--format environment-yml`: a conda environment file (`conda env create -f environment.yml`).

Conda environments: every package pinned as ``name=version=build``, the channels they came from.
Venv environments: the Python version and pip pins (``name==version``) under ``pip:``. Exact but
not hash-checked: for hashes use --format explicit (conda) or --format requirements (pip).
"""

from __future__ import annotations

from typing import Any, Mapping

from cuenv.engines.mirrors import PYPI_SIMPLE
from cuenv.export import ExportSource, Output
from cuenv.export._common import channels_of


def export(source: ExportSource, options: Mapping[str, Any]) -> list[Output]:
    import yaml

    solution = source.solution
    conda = [p for p in solution.packages if p.kind == "conda"]
    pypi = [p for p in solution.packages if p.kind == "pypi"]
    deps: list[Any] = [f"{p.name}={p.version}={p.build}" if p.build else f"{p.name}={p.version}" for p in conda]
    channels = channels_of(conda)
    if pypi:
        indexes = list(dict.fromkeys(p.index_url for p in pypi if p.index_url))
        if indexes == [PYPI_SIMPLE]:
            indexes = []  # pip's default
        pins = [f"--index-url {indexes[0]}"] if len(indexes) == 1 else []
        pins += [f"--extra-index-url {i}" for i in indexes[1:]] if len(indexes) > 1 else []
        deps = deps or [f"python={solution.python}", "pip"]
        channels = channels or ["conda-forge"]
        deps.append({"pip": pins + [f"{p.name}=={p.version}" for p in pypi]})
    doc = {"name": source.record.name, "channels": channels, "dependencies": deps}
    text = (f"# {source.record.name} for {solution.platform}, exported by cuenv (versions pinned; no hashes).\n"
            + yaml.safe_dump(doc, sort_keys=False, default_flow_style=False, width=10_000))
    return [Output(path="environment.yml", content=text)]
