"""A conda payload's records held to the packages themselves (issue 14 §2): the pure part.

tests/export/test_untrusted_archives.py runs the same proof through `cuenv unpack` on real archives."""

from __future__ import annotations

import pytest

from cuenv.engines import Package
from cuenv.export import payload
from cuenv.trust import Untrusted

PKG = Package(name="demo", version="1.0", kind="conda", url="https://conda.example.org/c/noarch/demo-1.0-0.conda",
              sha256="a" * 64, build="0")
OWN = {"site-packages/demo/__init__.py": "1" * 64, "python-scripts/demo": "2" * 64, "etc/demo.txt": "3" * 64}


def _record(*entries: tuple[str, str, str]) -> dict:
    return {"paths_data": {"paths": [{"_path": p, "path_type": t, "sha256": h} for p, t, h in entries]}}


def test_noarch_python_files_are_found_where_they_were_installed() -> None:
    assert payload._in_package("lib/python3.11/site-packages/demo/__init__.py", OWN) == "1" * 64
    assert payload._in_package("bin/demo", OWN) == "2" * 64
    assert payload._in_package("etc/demo.txt", OWN) == "3" * 64
    assert payload._in_package("lib/python3.11/site-packages/evil.pth", OWN) is None


def test_records_that_match_the_package_pass() -> None:
    record = _record(("lib/python3.12/site-packages/demo/__init__.py", "hardlink", "1" * 64),
                     ("etc/demo.txt", "copy", "3" * 64),
                     ("bin/demo-entry", "unix_python_entry_point", "x"),  # generated: checked on its own
                     ("lib/python3.12/site-packages/demo/__pycache__/x.pyc", "pyc_file", "y"))
    payload._held_to_package("conda-meta/demo-1.0-0.json", record, PKG, OWN)


@pytest.mark.parametrize("entry", [
    ("etc/demo.txt", "hardlink", "4" * 64),  # a file changed together with its record
    ("lib/python3.11/site-packages/evil.pth", "hardlink", "5" * 64),  # a file the package never had
    ("etc/demo.txt", "", "4" * 64),  # no path_type: a hard link
])
def test_a_record_the_package_does_not_back_is_refused(entry: tuple[str, str, str]) -> None:
    with pytest.raises(Untrusted, match=f"{entry[0]} is not the file of demo 1.0: the package itself lists another"):
        payload._held_to_package("conda-meta/demo-1.0-0.json", _record(entry), PKG, OWN)


def test_a_path_out_of_the_prefix_is_refused_before_it_is_compared() -> None:
    with pytest.raises(Untrusted, match="is not a plain path inside the environment"):
        payload._held_to_package("conda-meta/demo-1.0-0.json", _record(("../etc/passwd", "hardlink", "0")), PKG, OWN)


def test_pack_refuses_a_conda_environment_with_pip_packages(tmp_path) -> None:
    """Their files are in no conda package, so unpack could not prove them: refused before anything is written,
    with the lock-and-sync route in the hint."""
    import types

    from cuenv.activation.target import CudaLayout
    from cuenv.engines import Solution
    from cuenv.envs import folder
    from cuenv.envs.meta import EnvMeta, RecipeRef
    from cuenv.errors import UsageError
    from cuenv.export import pack
    from cuenv.knowledge.stack import Stack

    wheel = Package(name="x", version="1", kind="pypi", url="https://e.org/x-1-py3-none-any.whl", sha256="b" * 64)
    prefix = tmp_path / "mixed"
    (prefix / ".cuenv").mkdir(parents=True)
    folder.write_solution(prefix, Solution("rattler", "linux-64", "3.11", (PKG, wheel)).to_json())
    meta = EnvMeta(name="mixed", recipe=RecipeRef("r"), engine="rattler", stack=Stack(label="mixed", cuda="12.1"),
                   layout=CudaLayout(prefix=prefix, kind="conda"))
    record = types.SimpleNamespace(name="mixed", path=prefix, prefix=prefix, meta=meta)
    out = tmp_path / "out" / "mixed.tar"
    with pytest.raises(UsageError, match="mixed has pip packages on top of its conda packages") as err:
        pack.pack(record, out, cache_dir=tmp_path / "cache")
    assert "`cuenv lock mixed -o mixed.lock`" in (err.value.hint or "") and "`cuenv sync mixed.lock`" in (err.value.hint or "")
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize("fields", [
    {"url": "file:///dev/zero"},  # a device is never read (it would never end)
    {"url": "https://conda.example.org/c/linux-64/x.conda", "filename": "../../../../etc/passwd"},
    {"url": "https://conda.example.org/c/linux-64/x.conda"},  # not in the cache
])
def test_a_package_not_at_hand_is_none_and_nothing_is_read_outside_the_cache(tmp_path, fields: dict) -> None:

    from cuenv.export import pack

    assert pack._at_hand(PKG.replace(**fields), tmp_path) is None


def test_a_cached_archive_with_another_hash_is_not_at_hand(tmp_path) -> None:

    from cuenv.export import pack

    cached = tmp_path / "rattler" / "archives" / "x.conda"
    cached.parent.mkdir(parents=True)
    cached.write_bytes(b"not the locked package")
    assert pack._at_hand(PKG.replace(url="https://conda.example.org/c/linux-64/x.conda"), tmp_path) is None
