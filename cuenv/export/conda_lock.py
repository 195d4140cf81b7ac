"""`--format conda-lock`: a conda-lock unified lockfile (``conda-lock.yml``, its schema version 1).

Why conda-lock and not pixi.lock: conda-lock's format is documented and stable, records exactly
what cuenv's lock holds (URL, md5, sha256 per package and platform), and is read by
`conda-lock install`, `conda-lock render` and `micromamba create -f conda-lock.yml`. pixi.lock
(version 6) also wants each package's dependencies, size and timestamp and pixi's own environment
and feature model, which cuenv does not record; a half-filled pixi.lock would mislead pixi.

Conda environments only: conda-lock requires an md5 for every conda package (cuenv records one)
and installs pip packages only on top of a conda Python.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any, Mapping

from cuenv.export import ExportSource, Output
from cuenv.export._common import channels_of, packages_of


def export(source: ExportSource, options: Mapping[str, Any]) -> list[Output]:
    import yaml

    from cuenv.errors import UsageError

    solution = source.solution
    packages = packages_of(source, "conda", "conda-lock", "For a venv environment use --format requirements.")
    lacking = [p.name for p in packages if not p.md5]
    if lacking:
        raise UsageError(f"conda-lock needs an md5 for every conda package; these have none: {', '.join(lacking)}.",
                         hint="Use --format explicit (sha256) instead.")
    entries = [{
        "name": p.name, "version": p.version, "manager": "conda", "platform": solution.platform,
        "dependencies": {}, "url": p.url, "hash": {"md5": p.md5, **({"sha256": p.sha256} if p.sha256 else {})},
        "build": p.build, "category": "main", "optional": False,
    } for p in packages]
    # conda-lock's content_hash digests its inputs; ours are the locked artifacts themselves.
    digest = hashlib.sha256(json.dumps(entries, sort_keys=True).encode()).hexdigest()
    doc = {
        "version": 1,
        "metadata": {
            "content_hash": {solution.platform: digest},
            "channels": [{"url": c, "used_env_vars": []} for c in channels_of(packages)],
            "platforms": [solution.platform],
            "sources": [f"cuenv:{source.record.name}"],
        },
        "package": entries,
    }
    text = ("# conda-lock unified lockfile, exported by cuenv from environment "
            f"{source.record.name!r}.\n" + yaml.safe_dump(doc, sort_keys=False, default_flow_style=False, width=10_000))
    return [Output(path="conda-lock.yml", content=text,
                   note=f"Install with: conda-lock install -n {source.record.name} conda-lock.yml "
                        f"(or micromamba create -n {source.record.name} -f conda-lock.yml)")]
