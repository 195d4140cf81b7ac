"""`cuenv pack` and `cuenv lock` of an environment whose recorded solution holds a hostile file name
(built by a cuenv that read it from a lock before names were checked there, issue 31 §1): the
pack's fetch refuses the name instead of deleting the file it names as a stale cache entry, and the
lock refuses to write it into a new lockfile."""

from __future__ import annotations

import json
import os
from pathlib import Path

from exportkit import cuenv


def test_pack_and_lock_refuse_a_recorded_name_that_walks_out(venv_env: str, tmp_path: Path) -> None:
    canary = tmp_path / "canary"
    canary.write_text("precious")
    solution = Path(os.environ["CUENV_HOME"]) / "envs" / venv_env / ".cuenv" / "solution.json"
    data = json.loads(solution.read_text())
    pkg = data["packages"][0]
    assert pkg["url"].startswith("https://")  # fetched, so a cache entry by that name is checked first
    pkg["filename"] = "../" * 40 + str(canary).lstrip("/")
    solution.write_text(json.dumps(data))
    for args in (("pack", venv_env, "-o", str(tmp_path / "env.tar")), ("lock", venv_env, "-o", str(tmp_path / "x.lock"))):
        done = cuenv(*args, check=False)
        assert done.returncode == 2 and ("file name" in done.stderr or "filename" in done.stderr), done.stderr
        assert "Traceback" not in done.stderr
    assert canary.read_text() == "precious"
    assert not (tmp_path / "env.tar").exists() and not (tmp_path / "x.lock").exists()
