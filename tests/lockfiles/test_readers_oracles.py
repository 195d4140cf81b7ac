"""What cuenv reads from a lockfile equals what the ecosystem's own reader reads from it (issue 25 §1, §5).

The oracles: py-rattler's ``LockFile`` for pixi.lock, ``packaging.pylock`` for pylock.toml, and uv
itself (``uv export``, as requirements.txt, a second format) for uv.lock; over the real fixtures of
tests/lockfiles/foreign/fixtures (SOURCES.yaml says where each came from), every environment and
platform of each. And `check FILE --json` has one shape whatever the file.
"""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest
import yaml

from cuenv.lock import foreign
from cuenv.lock.foreign.wheels import Target

FIXTURES = Path(__file__).resolve().parent / "foreign" / "fixtures"
SOURCES = yaml.safe_load((FIXTURES / "SOURCES.yaml").read_text())
PIXI = sorted(n for n, e in SOURCES.items() if e["expect"]["kind"] == "pixi-lock")


def _read(name: str, **options: str):
    path = FIXTURES / name
    source = path.read_text(encoding="utf-8")
    return foreign.parse(source, kind=foreign.detect(path.name, source), file=str(path), **options)


def _every_environment_and_platform(name: str) -> list[tuple[str, str, object]]:
    from rattler import LockFile

    lock = LockFile.from_path(FIXTURES / name)
    return [(env_name, p.name, env.packages(p) or []) for env_name, env in lock.environments() for p in env.platforms()]


@pytest.mark.parametrize("name", PIXI)
def test_pixi_lock_reads_as_rattler_does(name: str) -> None:
    """Every environment and platform: the packages cuenv installs plus those it refuses to build are
    exactly rattler's, by name, version and (for what it installs) URL and sha256."""
    from rattler.lock import CondaLockedBinaryPackage

    seen = 0
    for env_name, platform, packages in _every_environment_and_platform(name):
        found = _read(name, platform=platform, environment=env_name, python="3.12")
        assert found.environment == env_name
        want = {p.name: (str(p.repo_data_record().url) if isinstance(p, CondaLockedBinaryPackage) else p.location)
                for p in packages}
        got = {p.name: p.url for p in found.packages}
        assert set(got) | {u.name for u in found.unusable} == set(want), (env_name, platform)
        for pkg in found.packages:
            assert want[pkg.name].split("#")[0] == pkg.url
        seen += 1
    assert seen >= 1


def test_pylock_reads_as_packaging_does() -> None:
    from packaging.pylock import PackageWheel, Pylock

    from cuenv.lock.foreign.model import load_toml

    name = "maia3.pylock.toml"
    for python, platform in (("3.12", "linux-64"), ("3.11", "linux-aarch64"), ("3.13", "win-64")):
        target = Target(python=python, platform=platform)  # the target's tags and markers: what packaging lacks
        tags = target.supported()
        lock = Pylock.from_dict(load_toml((FIXTURES / name).read_text(), name, hint=""))
        want = {str(p.name): a for p, a in lock.select(environment=target.markers(), tags=tags)}  # type: ignore[arg-type]  # a dict of every marker key, not packaging's TypedDict
        found = _read(name, platform=platform, python=python)
        assert {p.name for p in found.packages} == {n for n, a in want.items() if isinstance(a, PackageWheel)}
        assert {u.name for u in found.unusable} == {n for n, a in want.items() if not isinstance(a, PackageWheel)}
        for pkg in found.packages:
            assert pkg.filename == want[pkg.name].filename


def test_uv_lock_reads_as_uv_export_does(tmp_path: Path) -> None:
    """The oracle is uv's requirements.txt export (another format than the one cuenv reads), its
    markers evaluated for the target by packaging."""
    from packaging.requirements import Requirement
    from uv import find_uv_bin

    name = "vocalizr.uv.lock"
    shutil.copy(FIXTURES / name, tmp_path / "uv.lock")
    (tmp_path / "pyproject.toml").write_text('[project]\nname = "vocalizr"\nversion = "0.1.0"\n'
                                             'requires-python = "==3.12.*"\n')
    out = subprocess.run([find_uv_bin(), "export", "--frozen", "--offline", "--no-hashes", "--no-header",
                          "--no-emit-project", "--no-annotate", "--cache-dir", str(tmp_path / "cache")],
                         cwd=tmp_path, capture_output=True, text=True, check=True).stdout
    env = Target(python="3.12", platform="linux-64").markers()
    want = {}
    for line in out.splitlines():
        if line.strip() and not line.startswith(("#", "-")):
            req = Requirement(line.split(" \\")[0])
            if req.marker is None or req.marker.evaluate(env):  # type: ignore[arg-type]  # a dict of every marker key, not packaging's TypedDict
                want[req.name] = str(next(iter(req.specifier)).version)
    found = _read(name, platform="linux-64", python="3.12")
    got = {p.name: p.version for p in found.packages} | {u.name: "?" for u in found.unusable}
    assert set(got) == set(want)
    assert all(got[n] in ("?", want[n]) for n in got)


def test_check_json_has_one_shape_for_every_kind_of_file(cli) -> None:
    requestfiles = Path(__file__).resolve().parent.parent / "requestfiles" / "fixtures"
    files = [FIXTURES / "gausstwin-v6.pixi.lock", FIXTURES / "maia3.pylock.toml", FIXTURES / "vocalizr.uv.lock",
             FIXTURES / "yi.conda-lock.yml", requestfiles / "pytorch__serve/requirements/torch_cu121_linux.txt",
             requestfiles / "facebookresearch__dinov2/conda.yaml"]
    shapes = {}
    for path in files:
        code, out, err = cli("check", str(path), "--driver", "550.54.14", "--gpu", "A100", "--json")
        assert code in (0, 1), err
        data = json.loads(out)
        shapes[path.name] = set(data)
        assert data["cuda"] and data["framework"] == "torch" and isinstance(data["locked"], bool)
        assert data["locked"] == (path.parent == FIXTURES) and data["kind"]
    assert len({frozenset(s) for s in shapes.values()}) == 1, shapes


BAD_NAMES = ("pixi.lock", "pylock.toml", "uv.lock", "pyproject.toml", "pixi.toml")


def _bad_inputs() -> list[tuple[str, str, bytes]]:
    """(what, file name, content): each format truncated mid-entry, binary, and hostile YAML/TOML."""
    real = {"pixi.lock": (FIXTURES / "gausstwin-v6.pixi.lock").read_bytes(),
            "pylock.toml": (FIXTURES / "maia3.pylock.toml").read_bytes(),
            "uv.lock": (FIXTURES / "vocalizr.uv.lock").read_bytes(),
            "pyproject.toml": b'[project]\nname = "x"\nversion = "1"\n\n[tool.uv.sources]\ntorch = { index = "cu" }\n',
            "pixi.toml": b'[workspace]\nchannels = ["conda-forge"]\nplatforms = ["linux-64"]\n'}
    out = []
    for name, data in real.items():
        out.append(("truncated", name, data[: len(data) * 2 // 3]))
        out.append(("binary", name, bytes(range(256)) * 8))
        out.append(("not utf-8", name, data[:200] + b"\xff\xfe" + data[200:400]))
    out.append(("alias bomb", "pixi.lock", b'version: 6\na: &a ["x","x","x"]\nb: &b [*a,*a,*a]\nc: [*b,*b,*b]\n'))
    out.append(("deep nesting", "pylock.toml", b'lock-version = "1.0"\nx = ' + b"[" * 5000 + b"]" * 5000 + b"\n"))
    return out


@pytest.mark.parametrize(("what", "name", "data"), _bad_inputs(), ids=lambda v: v if isinstance(v, str) else "")
def test_bad_input_is_one_clean_error_and_writes_nothing(cli, tmp_path: Path, what: str, name: str, data: bytes) -> None:
    (tmp_path / name).write_bytes(data)
    if name == "pyproject.toml" and what == "truncated":
        shutil.copy(FIXTURES / "vocalizr.uv.lock", tmp_path / "uv.lock")  # the lock is fine; the manifest is cut
    before = sorted(p.name for p in tmp_path.iterdir())
    for argv in (("check", str(tmp_path / name)), ("create", "--from-lock", str(tmp_path / name), "-n", "x", "--dry-run")):
        code, out, err = cli(*argv)
        assert "Traceback" not in err and "Traceback" not in out, (what, name, argv)
        if code == 2:  # refused: one error and its hint
            lines = err.splitlines()
            assert lines[0].startswith("error: ") and lines[-1].startswith("hint: ") and len(lines) == 2, err
        else:  # a truncated file may still be a complete smaller one
            assert what == "truncated" and code in (0, 1), (what, name, err)
    assert sorted(p.name for p in tmp_path.iterdir()) == before


def test_a_huge_lockfile_is_refused_before_it_is_read(cli, tmp_path: Path) -> None:
    from cuenv.trust.limits import LOCK

    path = tmp_path / "pixi.lock"
    with path.open("wb") as fh:
        fh.write(b"version: 6\nenvironments: {}\npackages:\n")
        fh.truncate(LOCK + 4096)  # sparse: no 32 MiB written
    code, out, err = cli("check", str(path))
    assert code == 2 and len(err.splitlines()) == 2 and "Traceback" not in err
