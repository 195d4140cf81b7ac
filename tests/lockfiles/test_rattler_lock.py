"""Lock -> recreate -> compare with the rattler engine on the local channel (real conda packages)."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest
import yaml

from cuenv.engines import Solution, get_engine

REPO = Path(__file__).resolve().parents[2]
FAKE = "f" * 64  # a well-formed sha256 that no archive has


def _installed(envs: Path, name: str) -> set[tuple]:
    return {(p.name, p.version, p.build, p.url, p.sha256) for p in get_engine("rattler", os.environ).installed(envs / name)}


def _create(cli, *argv: str) -> None:
    code, out, err = cli("create", *argv)
    assert code == 0, err


def test_lock_recreate_and_relock(cli, recipes, work, envs, cuenv_exe) -> None:
    _create(cli, "local-cu121", "--engine", "rattler")
    code, out, err = cli("lock", "local-cu121")
    assert code == 0, err
    assert out.startswith("Locked environment 'local-cu121' (rattler; 3 packages for linux-64) into cuenv.lock")
    first = (work / "cuenv.lock").read_text()
    assert cli("lock", "local-cu121", "-o", "again.lock")[0] == 0
    assert (work / "again.lock").read_text() == first  # relocking: byte-identical

    code, out, err = cli("create", "--from-lock", "cuenv.lock", "-n", "teammate")
    assert code == 0, err
    assert "no solve" in err and "solve: " not in err
    assert _installed(envs, "teammate") == _installed(envs, "local-cu121") != set()
    assert cli("lock", "teammate", "-o", "teammate.lock")[0] == 0
    assert (work / "teammate.lock").read_text() == first  # the copy locks to the same bytes

    meta = json.loads((envs / "teammate" / ".cuenv" / "meta.json").read_text())
    from cuenv.lock.model import content_hash, parse

    assert meta["lock_hash"] == content_hash(parse(first))
    assert meta["env_vars"] == {"CUDA_DEVICE_ORDER": "yes"} and meta["recipe"]["name"] == "local-cu121"
    assert meta["smoke_test"] == {"python": "print('ok')"}  # the same recipe is in this catalogue
    solution = Solution.from_json(json.loads((envs / "teammate" / ".cuenv" / "solution.json").read_text()))
    assert solution == parse(first).solution_for("linux-64")
    # The copy runs: its activation works as for any environment.
    done = subprocess.run([*cuenv_exe, "run", "teammate", "--", "sh", "-c", 'echo "$CUDA_DEVICE_ORDER"; ls "$CUDA_HOME/lib"'],
                          capture_output=True, text=True, env=dict(os.environ, PYTHONPATH=str(REPO)))
    assert done.returncode == 0 and done.stdout.split()[0] == "yes" and "libcudart.so.12" in done.stdout, done.stderr


def test_edited_sha256_is_refused_before_anything_is_linked(cli, recipes, work, envs, tmp_path) -> None:
    _create(cli, "local-cu121", "--engine", "rattler")
    assert cli("lock", "local-cu121")[0] == 0
    data = yaml.safe_load((work / "cuenv.lock").read_text())
    cudart = next(p for p in data["packages"]["linux-64"] if p["name"] == "cuda-cudart")
    text = (work / "cuenv.lock").read_text().replace(cudart["sha256"], FAKE)
    (work / "edited.lock").write_text(text)
    pkgs = Path(os.environ["CUENV_CACHE_DIR"]) / "rattler" / "pkgs"
    before = sorted(p.name for p in pkgs.iterdir()) if pkgs.is_dir() else []
    code, out, err = cli("create", "--from-lock", "edited.lock", "-n", "tampered")
    assert code == 1
    error = [ln for ln in err.splitlines() if ln.startswith("error:")]
    assert error == [f"error: Hash mismatch for {cudart['filename']}: expected sha256:{FAKE}, got sha256:{cudart['sha256']}. "
                     "Nothing was installed."]
    assert not (envs / "tampered").exists()
    assert (sorted(p.name for p in pkgs.iterdir()) if pkgs.is_dir() else []) == before


def test_failed_contract_is_refused_before_any_download(cli, recipes, work, envs, monkeypatch) -> None:
    _create(cli, "local-cu121", "--engine", "rattler")
    assert cli("lock", "local-cu121")[0] == 0
    # Every URL now points at a closed port: any download attempt would fail with DownloadFailed.
    text = (work / "cuenv.lock").read_text()
    channel = yaml.safe_load(text)["sources"]["channels"][0]
    (work / "far.lock").write_text(text.replace(channel, "http://127.0.0.1:9/channel"))
    monkeypatch.setenv("CUENV_DRIVER", "470.82.01")
    code, out, err = cli("create", "--from-lock", "far.lock", "-n", "old-driver")
    assert code == 1
    assert err.splitlines() == [
        "error: local-cu121 will not run on this machine: local-cu121 needs a driver >= 525.60.13 (CUDA 12.x); "
        "this machine has 470.82.01, which supports CUDA 11.4.",
        "hint: Install an NVIDIA driver >= 530.30.02 (full CUDA 12.1 support; >= 525.60.13 runs it under minor-version "
        "compatibility). Use --force to install it anyway.",
    ]
    assert not (envs / "old-driver").exists()
    # sync refuses the same way; --force gets past the contract and then fails on the download.
    assert cli("sync", "far.lock", "-n", "old-driver")[0] == 1
    code, out, err = cli("create", "--from-lock", "far.lock", "-n", "old-driver", "--force")
    assert code == 1 and "error: Could not download http://127.0.0.1:9/channel/" in err
    assert not (envs / "old-driver").exists()


def test_check_reports_added_removed_changed(cli, recipes, work, envs, lock_channel) -> None:
    _create(cli, "local-cu121", "--engine", "rattler")
    assert cli("lock", "local-cu121")[0] == 0
    assert cli("lock", "--check", "local-cu121", "cuenv.lock")[:2] == (0, "'local-cu121' matches cuenv.lock (3 packages).\n")

    # Really change the prefix with the engine: install other package sets into it.
    engine = get_engine("rattler", os.environ)
    other = get_engine("rattler", os.environ).solve(
        __import__("cuenv.engines", fromlist=["Request"]).Request(
            engine="rattler", python="3.11", conda_channels=(str(lock_channel),),
            conda_specs=("cuda-version 11.8.*", "cuenv-hello")),
        target=__import__("cuenv.engines", fromlist=["Target"]).Target(cuda="12.4", glibc="2.36"),
        cache_dir=Path(os.environ["CUENV_CACHE_DIR"]))
    engine.install(envs / "local-cu121", other, cache_dir=Path(os.environ["CUENV_CACHE_DIR"]))
    code, out, err = cli("lock", "--check", "local-cu121", "cuenv.lock")
    assert code == 1
    assert out.splitlines() == [
        "'local-cu121' drifted from cuenv.lock:",
        "  + cuenv-hello 1.0-h0_0 (not in the lock)",
        "  - cuda-cudart 12.1.105-h0_0 (locked, not installed)",
        "  ~ cuda-version 12.1-h0_0 -> 11.8-h0_0",
        "Fix it: `cuenv sync cuenv.lock -n local-cu121 -y` puts the lock's packages back (removing what it lacks), or "
        "`cuenv uninstall -n local-cu121 cuenv-hello` and then `cuenv lock local-cu121 -o cuenv.lock --force` record "
        "the environment as it is, less what no lock can pin.",
        # installed from a file:// channel outside any solve: the lock cannot pin where it came from (issue 26)
        "Not lockable (a local path or editable install): cuenv-hello; the lock names them in a comment.",
    ]
    code, out, err = cli("--json", "lock", "--check", "local-cu121", "cuenv.lock")
    data = json.loads(out)
    assert code == 1 and data["matches"] is False and [p["name"] for p in data["added"]] == ["cuenv-hello"]

    # sync puts it back exactly; a second sync has nothing to do.
    code, out, err = cli("sync", "cuenv.lock", "-n", "local-cu121", "-y")  # it removes cuenv-hello: -y off a terminal
    assert code == 0 and out.startswith("Synced 'local-cu121' from cuenv.lock (3 packages, no solve)."), err
    assert cli("lock", "--check", "local-cu121", "cuenv.lock")[0] == 0
    assert not (envs / "local-cu121" / "etc" / "cuenv-hello.txt").exists()
    assert cli("sync", "cuenv.lock", "-n", "local-cu121")[1] == "'local-cu121' already matches cuenv.lock.\n"
    meta = json.loads((envs / "local-cu121" / ".cuenv" / "meta.json").read_text())
    assert meta["lock_hash"] and (envs / "local-cu121" / ".cuenv" / "complete").exists()


def test_sync_creates_a_missing_environment(cli, recipes, work, envs) -> None:
    _create(cli, "local-hello", "--engine", "rattler")
    assert cli("lock", "local-hello", "-o", "hello.lock")[0] == 0
    code, out, err = cli("sync", "hello.lock", "-n", "fresh")
    assert code == 0 and out.startswith("Created 'fresh' from hello.lock"), err
    assert (envs / "fresh" / "etc" / "cuenv-hello.txt").read_text() == f"prefix={envs / 'fresh'}\n"


def test_several_platforms_and_the_one_for_this_machine(cli, recipes, work, envs) -> None:
    code, out, err = cli("lock", "local-cu121", "--engine", "rattler", "--platform", "linux-aarch64", "--platform", "linux-64")
    assert code == 0, err
    data = yaml.safe_load((work / "cuenv.lock").read_text())
    assert data["platforms"] == ["linux-64", "linux-aarch64"] and list(data["packages"]) == ["linux-64", "linux-aarch64"]
    assert {p["subdir"] for p in data["packages"]["linux-aarch64"]} == {"linux-aarch64", "noarch"}
    assert cli("create", "--from-lock", "cuenv.lock", "-n", "picked")[0] == 0
    assert {p.subdir for p in get_engine("rattler", os.environ).installed(envs / "picked")} == {"linux-64", "noarch"}
    # A lock for aarch64 only is refused here, before anything.
    aarch = dict(data, platforms=["linux-aarch64"], packages={"linux-aarch64": data["packages"]["linux-aarch64"]})
    (work / "arm.lock").write_text(yaml.safe_dump(aarch, sort_keys=False))
    code, out, err = cli("create", "--from-lock", "arm.lock", "-n", "arm")
    assert code == 2 and err.startswith("error: arm.lock: This machine is linux-64, which the lock is not made for")
    assert not (envs / "arm").exists()
    # A platform the recipe does not list is refused.
    code, out, err = cli("lock", "local-cu121", "--engine", "rattler", "--platform", "win-64")
    assert code == 2 and "does not exist for win-64" in err


def test_lock_a_recipe_for_another_machine(cli, recipes, work, envs) -> None:
    """A GPU-less login node locks for an H100 node: solved for that driver, nothing installed."""
    code, out, err = cli("lock", "local-cu121", "--engine", "rattler", "--target-driver", "550.54.14",
                         "--target-gpu", "H100", "-o", "cluster.lock")
    assert code == 0, err
    data = yaml.safe_load((work / "cluster.lock").read_text())
    assert data["made_on"]["solved_for"] == {"driver": "550.54.14", "gpus": ["NVIDIA H100 (9.0)"]}
    assert data["contract"]["min_driver"] == {"linux": {"full": "530.30.02", "floor": "525.60.13"}}
    assert not envs.exists() or not any(envs.iterdir())
    # A target whose driver is too old is refused, as `cuenv create --target-driver` is.
    code, out, err = cli("lock", "local-cu121", "--engine", "rattler", "--target-driver", "470.82.01", "-o", "old.lock")
    assert code == 1 and "will not run on the target machine" in err and not (work / "old.lock").exists()


def test_conda_family_installs_a_rattler_lock(cli, recipes, work, envs, lock_channel, tmp_path) -> None:
    """micromamba (a recorded stand-in) installs the lock from an explicit file with every sha256."""
    from tests.engines.conftest import FakeConda  # the stand-ins the engine tests use

    _create(cli, "local-cu121", "--engine", "rattler")
    assert cli("lock", "local-cu121")[0] == 0
    fake = FakeConda(tmp_path / "fake", lock_channel)
    environ = dict(os.environ, **fake.environ)
    code, out, err = cli("create", "--from-lock", "cuenv.lock", "-n", "mm", "--engine", "micromamba", environ=environ)
    assert code == 0, err
    call = fake.calls()[-1]
    assert call["tool"] == "micromamba" and call["argv"][:2] == ["create", "--json"]
    assert cli("lock", "--check", "mm", "cuenv.lock", environ=environ)[0] == 0


@pytest.mark.parametrize("content, message", [
    ("version: 1\nrecipe: [\n", "error: bad.lock: The lock is not valid YAML"),
    ("version: 7\n", "error: bad.lock: Unknown lockfile schema version 7; this cuenv reads version 1."),
    ("version: 1\n", "error: bad.lock: Missing key recipe."),
])
def test_bad_files_on_the_command_line(cli, work, envs, content, message) -> None:
    (work / "bad.lock").write_text(content)
    for argv in (("create", "--from-lock", "bad.lock", "-n", "x"), ("sync", "bad.lock", "-n", "x")):
        code, out, err = cli(*argv)
        assert code == 2 and err.splitlines()[0].startswith(message) and len(err.splitlines()) <= 2
        assert not (envs / "x").exists()
    code, out, err = cli("create", "--from-lock", "missing.lock")
    assert code == 2 and err.startswith("error: Lockfile missing.lock does not exist.")
