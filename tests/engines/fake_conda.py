#!/usr/bin/env python3
"""A stand-in for mamba and micromamba: records its argv, replays a recorded --json answer.

Installed as ``<bin>/mamba`` and ``<bin>/micromamba`` by ``tests/engines/conftest.py`` (conda itself is
tested for real: test_engine_conda_real.py). Environment:
FAKE_CONDA_RECORDINGS (the recordings folder), FAKE_CONDA_LOG (JSON lines: argv and the CONDA_* variables it saw), FAKE_CONDA_SCENARIO
(success | notfound | unsatisfiable), FAKE_CONDA_CHANNEL (the local test channel
whose repodata fills the recordings' hash placeholders). With ``--file EXPLICIT`` it also writes
``conda-meta/*.json`` for each URL, as a real install would.
"""

import json
import os
import re
import sys
from pathlib import Path

RECORDINGS = Path(os.environ["FAKE_CONDA_RECORDINGS"])
tool = Path(sys.argv[0]).name
argv = sys.argv[1:]
with open(os.environ["FAKE_CONDA_LOG"], "a") as log:
    seen = {k: os.environ[k] for k in sorted(os.environ) if k.startswith("CONDA_")}
    log.write(json.dumps({"tool": tool, "argv": argv, "env": seen}) + "\n")

channel = Path(os.environ["FAKE_CONDA_CHANNEL"])
records = {}
for sub in ("linux-64", "noarch"):
    data = json.loads((channel / sub / "repodata.json").read_text())
    for key in ("packages", "packages.conda"):
        records.update(data.get(key, {}))
prefix = argv[argv.index("--prefix") + 1] if "--prefix" in argv else ""
scenario = os.environ.get("FAKE_CONDA_SCENARIO", "success")
if "--file" in argv and scenario == "success":
    scenario = "install"


def fill(text: str) -> str:
    text = text.replace("{CHANNEL}", channel.as_uri()).replace("{PREFIX}", prefix)
    text = re.sub(r"\{SHA256:([^}]+)\}", lambda m: records[m.group(1)]["sha256"], text)
    return re.sub(r"\{MD5:([^}]+)\}", lambda m: records[m.group(1)]["md5"], text)


recording = json.loads((RECORDINGS / f"{tool}-{scenario}.json").read_text())
if scenario == "install":
    explicit = Path(argv[argv.index("--file") + 1]).read_text().splitlines()
    assert "@EXPLICIT" in explicit, "not an explicit file"
    meta = Path(prefix) / "conda-meta"
    meta.mkdir(parents=True, exist_ok=True)
    wanted = []
    for line in explicit:
        if line.startswith(("#", "@")) or not line.strip():
            continue
        url, _, digest = line.partition("#")
        fn = url.rsplit("/", 1)[-1]
        rec = dict(records[fn], url=url, fn=fn, channel=url.rsplit("/", 2)[0])
        assert digest in (rec["sha256"], rec["md5"]), "cuenv checks local packages before the tool runs"
        wanted.append(rec)
    for rec in wanted:
        stem = rec["fn"].removesuffix(".conda").removesuffix(".tar.bz2")
        (meta / f"{stem}.json").write_text(json.dumps(rec))
sys.stdout.write(fill(recording["stdout"]))
sys.stderr.write(fill(recording["stderr"]))
sys.exit(recording["returncode"])
