"""An @EXPLICIT list without hashes (plain `conda list --explicit`, its normal form; issue 25 §4): `check`
reads it as conda does, and an install pins each package to the sha256 its channel's repodata lists before
anything is downloaded. Real installs from the suite's local channel."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

from cuenv.engines import get_engine

FILES = ("linux-64/cuda-cudart-12.1.105-h0_0.conda", "noarch/cuda-version-12.1-h0_0.tar.bz2",
         "linux-64/python-3.11.9-h0_cuenv.tar.bz2")


def _records(channel: Path) -> list[dict]:
    out = []
    for item in FILES:
        subdir, filename = item.split("/")
        data = json.loads((channel / subdir / "repodata.json").read_text())
        record = {**data.get("packages", {}), **data.get("packages.conda", {})}[filename]
        out.append({**record, "url": (channel / subdir / filename).as_uri()})
    return out


def _explicit(urls: list[str]) -> str:
    return "# platform: linux-64\n@EXPLICIT\n" + "".join(f"{u}\n" for u in urls)


def test_check_reads_a_list_without_hashes(cli, work: Path, lock_channel: Path) -> None:
    (work / "env.txt").write_text(_explicit([r["url"] for r in _records(lock_channel)]))
    code, out, err = cli("check", "env.txt", "--driver", "535.104.05", "--cc", "8.6", "--json")
    assert code == 0, err
    data = json.loads(out)
    assert data["cuda"] == "12.1"
    assert any("3 of its 3 packages have no #hash" in n for n in data.get("notes", [])), data


def test_create_verifies_each_package_against_its_channels_sha256(cli, work: Path, envs: Path, lock_channel: Path) -> None:
    records = _records(lock_channel)
    (work / "env.txt").write_text(_explicit([r["url"] for r in records]))
    code, out, err = cli("create", "--from-lock", "env.txt", "-n", "plain", "--engine", "rattler")
    assert code == 0, err
    got = {(p.name, p.version, p.build) for p in get_engine("rattler", os.environ).installed(envs / "plain")}
    assert got == {(r["name"], r["version"], r["build"]) for r in records}
    assert (envs / "plain" / "lib" / "libcudart.so.12").exists()


def test_an_archive_that_does_not_match_its_channels_sha256_is_not_installed(cli, work: Path, envs: Path,
                                                                           lock_channel: Path) -> None:
    bad = work / "bad"
    shutil.copytree(lock_channel, bad)
    repodata = bad / "linux-64" / "repodata.json"
    data = json.loads(repodata.read_text())
    data["packages.conda"]["cuda-cudart-12.1.105-h0_0.conda"]["sha256"] = "0" * 64  # the channel says otherwise
    repodata.write_text(json.dumps(data))
    urls = [(bad / item).as_uri() for item in FILES]
    (work / "env.txt").write_text(_explicit(urls))
    code, out, err = cli("create", "--from-lock", "env.txt", "-n", "bad", "--engine", "rattler")
    assert code != 0 and "Hash mismatch for cuda-cudart-12.1.105-h0_0.conda" in err and not (envs / "bad").exists()


def test_a_package_its_channel_does_not_list_is_refused_before_any_download(cli, work: Path, envs: Path,
                                                                            lock_channel: Path) -> None:
    records = _records(lock_channel)
    stray = work / "stray" / "linux-64"
    stray.mkdir(parents=True)
    src = Path(records[0]["url"].removeprefix("file://"))
    shutil.copy(src, stray / src.name)  # the same archive, served by a channel with no repodata listing it
    (work / "stray" / "noarch").mkdir()
    for sub in ("linux-64", "noarch"):
        (work / "stray" / sub / "repodata.json").write_text(json.dumps({"info": {"subdir": sub}, "packages": {},
                                                                        "packages.conda": {}}))
    urls = [(stray / src.name).as_uri(), *(r["url"] for r in records[1:])]
    (work / "env.txt").write_text(_explicit(urls))
    code, out, err = cli("create", "--from-lock", "env.txt", "-n", "stray", "--engine", "rattler")
    assert code == 2
    assert "cuda-cudart-12.1.105-h0_0.conda has no #hash" in err and "repodata does not list it" in err
    assert "conda list --explicit --sha256" in err and not (envs / "stray").exists()
