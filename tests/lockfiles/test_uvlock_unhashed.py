"""A uv.lock whose wheels include some without a hash: the index served none, as PyTorch's did for some of
its wheels (pytorch/pytorch#164347, #173099). uv exports such a lock as PEP 751 only after downloading those
wheels to hash them, so cuenv reads it through uv's requirements export without hashes: enough to check,
never to install; the refusal names the export that adds the hashes, and it runs as written.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest
import yaml

from cuenv.lock import foreign
from cuenv.lock.foreign import uvlock

CORPUS = Path(__file__).resolve().parents[1] / "corpus"
FIXTURES = Path(__file__).resolve().parent / "foreign" / "fixtures"
_HASH = re.compile(r', hash = "sha256:[0-9a-f]{64}"')


def _real_locks() -> list[Path]:
    """Every real uv.lock of the corpus that locks linux-64 (a lock for macOS only is refused for it, read neither way)."""
    entries = yaml.safe_load((CORPUS / "MANIFEST.yaml").read_text(encoding="utf-8"))["files"]
    return [CORPUS / "files" / e["file"] for e in entries if e["kind"] == "uv-lock" and e["expect"] != "refused"] \
        + [FIXTURES / "vocalizr.uv.lock"]


def _read(folder: Path, text: str, *, python: str | None = None) -> tuple[foreign.ForeignLock, str]:
    """The lock read as `cuenv check` reads it for linux-64: the first Python it installs every package for."""
    folder.mkdir()
    (folder / "uv.lock").write_text(text, encoding="utf-8")
    tries = [(python, None)] if python else foreign.pythons(text, "uv-lock", "3.11")
    for chosen, _why in tries:
        try:
            return uvlock.parse(text, file=str(folder / "uv.lock"), platform="linux-64", python=chosen), chosen
        except foreign.NoWheelForTarget:
            continue
    raise AssertionError(f"no Python reads {folder}")


@pytest.mark.parametrize("lock", _real_locks(), ids=lambda p: p.parent.name)
def test_a_real_lock_read_without_hashes_holds_what_it_holds_with_them(tmp_path: Path, lock: Path) -> None:
    """Differential, over every real uv.lock the corpus holds: stripped of every hash, the lock reads as the
    same packages at the same versions (uv's two exports agree), and nothing of it is installable."""
    text = lock.read_text(encoding="utf-8")
    hashed, python = _read(tmp_path / "hashed", text)
    bare, _ = _read(tmp_path / "bare", _HASH.sub("", text), python=python)
    want = {p.name: p.version for p in hashed.packages}
    got = {p.name: p.version for p in bare.packages}
    # what the PEP 751 export holds as a source (an sdist, a VCS checkout) is a pin of the other export too
    assert {n: v for n, v in got.items() if n in want} == want
    assert set(got) - set(want) <= {u.name for u in hashed.unusable}
    assert [u.name for u in bare.unusable][:1] and not any(p.sha256 for p in bare.packages)
    assert any("without hashes" in n for n in bare.notes)


def test_check_reads_a_torch_lock_without_hashes_and_create_refuses_it(cli, tmp_path: Path) -> None:
    """held-out-4's osuossu8/uv-torch-base lock with the hashes of its download.pytorch.org torch wheels gone:
    `check` says what it needs (torch 2.5.1+cu121: CUDA 12.1), `create` stops before any download."""
    source = (CORPUS / "files" / "osuossu8__uv-torch-base" / "uv.lock").read_text(encoding="utf-8")
    bare = re.sub(r'(download\.pytorch\.org/whl/cu121/torch-[^"]+")' + _HASH.pattern, r"\1", source)
    assert bare != source and "torch-2.5.1%2Bcu121-cp310-cp310-linux_x86_64.whl\", hash" not in bare
    (tmp_path / "uv.lock").write_text(bare, encoding="utf-8")
    code, out, err = cli("check", str(tmp_path / "uv.lock"), "--driver", "535.104.05", "--cc", "8.6")
    assert code == 0 and out.startswith(f"{tmp_path / 'uv.lock'}: runs"), err
    assert "Contract: CUDA 12.1, cuDNN 9.1" in out and "torch 2.5.1 (cu121)" in out
    assert "torch has wheels the lock holds no hash for" in out and "--no-hashes" in out
    code, out, err = cli("create", "--from-lock", str(tmp_path / "uv.lock"), "-n", "t", "--dry-run")
    assert code == 2 and "torch has wheels the lock holds no hash for" in err
    assert "`uv export --format pylock.toml -o pylock.toml`" in err


@pytest.mark.network
def test_the_hint_writes_a_pylock_with_the_hashes_that_installs(cli, tmp_path: Path, monkeypatch) -> None:
    """The refusal's export, run as written in the project's folder where PyPI is reachable, hashes the
    wheels the lock names without one; the pylock.toml it writes reads with nothing left out."""
    from uv import find_uv_bin

    project = tmp_path / "proj"
    project.mkdir()
    (project / "pyproject.toml").write_text(
        '[project]\nname = "proj"\nversion = "0.1"\nrequires-python = ">=3.10"\ndependencies = ["six==1.17.0"]\n')
    env = {**os.environ, "UV_CACHE_DIR": str(tmp_path / "uv-cache")}
    subprocess.run([find_uv_bin(), "lock", "-q"], cwd=project, check=True, env=env)
    lock = project / "uv.lock"
    lock.write_text(_HASH.sub("", lock.read_text(encoding="utf-8")), encoding="utf-8")  # as an index without hashes
    code, _out, err = cli("create", "--from-lock", str(lock), "-n", "p", "--dry-run")
    assert code == 2 and "six has wheels the lock holds no hash for" in err, err
    command = err.split("hint: ", 1)[1].split("`")[1]
    assert command == "uv export --format pylock.toml -o pylock.toml"
    subprocess.run([find_uv_bin(), *command.split()[1:]], cwd=project, check=True, env=env, capture_output=True)
    code, out, err = cli("check", str(project / "pylock.toml"), "--json")
    assert code == 0, err
    code, out, err = cli("create", "--from-lock", str(project / "pylock.toml"), "-n", "p", "--dry-run")
    assert code == 0, err
    shutil.rmtree(tmp_path / "uv-cache", ignore_errors=True)
