"""`cuenv pack` and `cuenv lock` of an environment whose recorded solution holds a hostile file name
(built by a cuenv that read it from a lock before names were checked there, issue 31 §1): the
pack's fetch refuses the name instead of deleting the file it names as a stale cache entry, and the
lock refuses to write it into a new lockfile."""

from __future__ import annotations

import json
import os
from pathlib import Path

from tests.export.exportkit import cuenv


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


def test_unpack_refuses_an_archive_whose_lock_names_a_file_outside(venv_env: str, tmp_path: Path) -> None:
    import tarfile

    archive = tmp_path / "env.tar"
    cuenv("pack", venv_env, "-o", str(archive))
    canary = tmp_path / "canary"
    canary.write_text("precious")
    with tarfile.open(archive) as tar:
        members = [(m, tar.extractfile(m).read() if m.isfile() else None) for m in tar.getmembers()]  # type: ignore[union-attr]  # a regular member, checked just before
    manifest = json.loads(members[0][1] or b"{}")
    lock = json.loads(manifest["lock"])
    lock["packages"][0]["filename"] = "../" * 40 + str(canary).lstrip("/")
    manifest["lock"] = json.dumps(lock)
    hostile = tmp_path / "hostile.tar"
    with tarfile.open(hostile, "w") as out:
        import io

        for info, data in [(members[0][0], json.dumps(manifest).encode()), *members[1:]]:
            if data is not None:
                info.size = len(data)
            out.addfile(info, io.BytesIO(data) if data is not None else None)
    home = tmp_path / "other"
    done = cuenv("unpack", str(hostile), "-n", "moved", env={"CUENV_HOME": str(home)}, check=False)
    assert done.returncode == 2 and "filename" in done.stderr, done.stderr
    assert canary.read_text() == "precious"
    assert not (home / "envs" / "moved").exists()
