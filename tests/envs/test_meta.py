"""cuenv.envs.meta.EnvMeta: meta.json as a type (issue 24 §1). Every shape cuenv ever wrote is read (the
fixtures follow each writer in the history: the first build_meta, tools and changes, adopt, each version of
unpack), written back in the current schema, and read again to the same value; damage is a CuenvError."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from cuenv.envs.meta import SCHEMA, EnvMeta, MetaDamaged, SmokeTest, Tool, migrate, stack_from_meta
from cuenv.envs.store import Store
from cuenv.errors import CuenvError

FIXTURES = Path(__file__).parent / "fixtures" / "meta"
OLD = sorted(FIXTURES.glob("v1-*.json"))


def _load(name: str) -> dict[str, Any]:
    return json.loads((FIXTURES / name).read_text())


@pytest.mark.parametrize("path", OLD, ids=lambda p: p.stem)
def test_every_old_shape_reads_and_round_trips(path: Path) -> None:
    meta = EnvMeta.from_json(json.loads(path.read_text()))
    written = meta.to_json()
    assert written["schema"] == SCHEMA
    assert EnvMeta.from_json(json.loads(json.dumps(written))) == meta
    assert EnvMeta.from_json(written).to_json() == written


def test_the_first_shape_keeps_every_fact() -> None:
    old = _load("v1-first.json")
    meta = EnvMeta.from_json(old)
    assert (meta.name, meta.engine, meta.platform, meta.python, meta.cuda, meta.cudnn) == \
        ("cuda-12.1", "venv", "linux-64", "3.11", "12.1", None)
    assert meta.recipe.name == "cuda-12.1" and meta.recipe.hash == old["recipe"]["hash"]
    assert meta.stack.sass == ("5.0", "6.0", "7.0", "8.0", "9.0") and meta.stack.label == "cuda-12.1"
    assert meta.layout.prefix == Path(old["layout"]["prefix"]) and meta.layout.cuda_home is None
    assert [f.code for f in meta.validation.findings] == ["no-driver"] and meta.validation.fingerprint == "a1b2c3"
    assert meta.tools is None and meta.changes == () and meta.adopted is None and meta.unpacked_from is None
    assert meta.runnable_smoke_test() == SmokeTest(python=old["smoke_test"]["python"])
    assert meta.proven_scripts() is None  # cuenv installed every package: all its activation scripts run
    written = meta.to_json()  # the keys readers of the file know are all still there, with the same values
    assert {k: written[k] for k in old if k != "schema"} == {k: v for k, v in old.items() if k != "schema"}


def test_tools_changes_and_the_framework() -> None:
    meta = EnvMeta.from_json(_load("v1-tools-changed.json"))
    assert meta.tools == {"nvcc": Tool("shim"), "ptxas": Tool("env", "/e/torch/bin/ptxas")}
    assert [(c.verb, c.asked) for c in meta.changes] == [("add", ("six",)), ("remove", ("six",))]
    assert meta.framework == "torch 2.3.1" and meta.compiler_hint.startswith("cuenv create torch-cu121")
    assert stack_from_meta(meta).label == "torch"  # findings name the environment
    assert meta.runnable_smoke_test().argv() == ["python", "-c", "import torch"]


def test_an_adopted_environment() -> None:
    meta = EnvMeta.from_json(_load("v1-adopted.json"))
    assert meta.recipe.name == "adopted" and meta.recipe.hash is None and meta.size_bytes is None
    assert meta.adopted is not None and meta.adopted.prefix == Path("/opt/conda/envs/work")
    assert meta.validation.fingerprint == ""  # judged on first use


def test_an_archive_unpacked_by_an_older_cuenv_keeps_its_smoke_test_until_trusted() -> None:
    """The first unpack kept the archive's smoke test at the top, where `cuenv test` ran it unasked."""
    old = _load("v1-unpacked-old.json")
    meta = EnvMeta.from_json(old)
    assert meta.runnable_smoke_test() is None and meta.smoke_test is None
    assert meta.archived_smoke_test() == SmokeTest(python=old["smoke_test"]["python"])
    assert meta.proven_scripts() == frozenset()  # recorded none: none run
    trusted = meta.trusted()
    assert trusted.runnable_smoke_test() == SmokeTest(python=old["smoke_test"]["python"])
    assert trusted.archived_smoke_test() is None and trusted.unpacked_from.smoke_test_trusted
    assert EnvMeta.from_json(trusted.to_json()) == trusted
    assert meta.unpacked_from.source_prefix == ""  # that cuenv could write null


def test_the_later_unpack_shapes() -> None:
    proven = EnvMeta.from_json(_load("v1-unpacked-proven.json"))
    assert proven.unpacked_from.proven_packages == (3, 5) and proven.runnable_smoke_test() is None
    held = EnvMeta.from_json(_load("v1-unpacked-held.json"))
    assert held.proven_scripts() == frozenset({"etc/conda/activate.d/cuda.sh"})
    assert held.unpacked_from.held_back_scripts == ("etc/conda/activate.d/x.sh",)
    assert held.archived_smoke_test() == SmokeTest(python="print('from the archive')")
    trusted = EnvMeta.from_json(_load("v1-unpacked-trusted.json"))
    assert trusted.runnable_smoke_test() == SmokeTest(python="print('from the archive')")
    assert trusted.archived_smoke_test() is None


def test_migrate_reads_the_version_and_leaves_the_input_alone() -> None:
    old = _load("v1-unpacked-old.json")
    before = json.dumps(old, sort_keys=True)
    out = migrate(old)
    assert out["schema"] == SCHEMA and out["smoke_test"] is None and out["unpacked_from"]["smoke_test"]
    assert json.dumps(old, sort_keys=True) == before
    no_schema = {k: v for k, v in _load("v1-first.json").items() if k != "schema"}
    assert EnvMeta.from_json(no_schema) == EnvMeta.from_json(_load("v1-first.json"))  # hand-written: schema 1


def test_a_newer_schema_says_to_upgrade_cuenv() -> None:
    with pytest.raises(CuenvError) as exc:
        EnvMeta.from_json(dict(_load("v1-first.json"), schema=SCHEMA + 1))
    assert "newer cuenv" in exc.value.message and "pip install --upgrade cuenv" in exc.value.hint


@pytest.mark.parametrize(("change", "detail"), [
    ({"stack": None}, "no stack recorded"),
    ({"stack": {"sass": []}}, "no stack recorded"),
    ({"layout": None}, "no layout recorded"),
    ({"engine": 3}, "engine is not a string"),
    ({"size_bytes": True}, "size_bytes is not a whole number"),
    ({"env_vars": {"A": 1}}, "env_vars is not an object of strings"),
    ({"stack": {"cuda": "12.1", "sass": "8.0"}}, "stack.sass is not a list of strings"),
    ({"tools": {"nvcc": {"source": "magic"}}}, "tools.nvcc.source is not one of env, system, shim"),
    ({"changes": [{"verb": "add"}, 7]}, "changes[1] is not an object"),
    ({"schema": "2"}, "schema '2' is not a version"),
])
def test_damage_is_named_with_a_fix(change: dict[str, Any], detail: str) -> None:
    with pytest.raises(MetaDamaged) as exc:
        EnvMeta.from_json(dict(_load("v1-first.json"), **change))
    assert exc.value.message == f"The metadata of environment 'cuda-12.1' is damaged ({detail})."
    assert exc.value.hint == "`cuenv remove cuda-12.1` forgets it; create or adopt it again then."


def test_immutable_and_replace_checks_the_fields() -> None:
    meta = EnvMeta.from_json(_load("v1-first.json"))
    with pytest.raises(AttributeError):
        meta.name = "x"  # type: ignore[misc]  # the point: assigning to a field fails
    assert meta.replace(size_bytes=1).size_bytes == 1 and meta.size_bytes == 3055616
    with pytest.raises(TypeError, match="no field 'sizes'"):
        meta.replace(sizes=1)


def test_the_store_names_the_damage(tmp_path: Path) -> None:
    store = Store(tmp_path / "envs")
    good = _load("v1-first.json")
    for name, data in (("ok", good), ("bad", dict(good, stack=[]))):
        (store.path(name) / ".cuenv").mkdir(parents=True)
        (store.path(name) / ".cuenv" / "meta.json").write_text(json.dumps(dict(data, name=name)))
        store.mark_complete(name)
    listed = {r.name: r for r in store.list()}
    assert listed["ok"].complete and listed["ok"].meta.name == "ok"
    assert not listed["bad"].complete and listed["bad"].known is None  # one damaged environment hides no other
    with pytest.raises(MetaDamaged, match=r"environment 'bad' is damaged \(stack is not an object\)"):
        store.get("bad")
    assert store.get("bad", allow_incomplete=True).known is None


# -- any JSON: a value or a CuenvError, never a traceback ----------------------------------------------------
JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4),
    max_leaves=12,
)


def _paths(node: Any, path: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    out = [path]
    if isinstance(node, dict):
        for k, v in node.items():
            out += _paths(v, (*path, k))
    elif isinstance(node, list):
        for i, v in enumerate(node):
            out += _paths(v, (*path, i))
    return out


def _read(data: Any) -> None:
    try:
        meta = EnvMeta.from_json(data)
    except CuenvError as exc:
        assert exc.message and exc.hint
        return
    assert EnvMeta.from_json(json.loads(json.dumps(meta.to_json()))) == meta


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(JSON_VALUES)
def test_any_json_is_a_meta_or_a_cuenv_error(data: Any) -> None:
    _read(data)


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.sampled_from(OLD), st.data())
def test_any_value_anywhere_in_a_real_meta(path: Path, data: st.DataObject) -> None:
    doc = json.loads(path.read_text())
    where = data.draw(st.sampled_from(_paths(doc)))
    value = data.draw(JSON_VALUES)
    if not where:
        doc = value
    else:
        parent = doc
        for part in where[:-1]:
            parent = parent[part]
        if data.draw(st.booleans()) and isinstance(parent, dict):
            parent.pop(where[-1])
        else:
            parent[where[-1]] = value
    _read(doc)
