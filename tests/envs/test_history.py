"""An environment's change history (cuenv.envs.history): what it leaves asked for, and a bound that
never changes that (issue 26: meta.json, read by nearly every command, has a size limit)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml
from hypothesis import given
from hypothesis import strategies as st

from cuenv.envs import history
from cuenv.envs.meta import Change
from tests.envs.envkit import windows_too


def test_the_last_word_on_each_package_wins() -> None:
    changes = [Change("add", ("six",)), Change("add", ("NumPy>=2",)), Change("remove", ("six",)),
               Change("remove", ("torch",)), Change("add", ("torch==2.5.1",)), Change("upgrade", ("numpy",))]
    assert history.net_asked(changes) == (frozenset({"six"}), {"numpy": ("numpy",), "torch": ("torch==2.5.1",)})
    assert history.net_asked([Change("add", ("six",)), Change("remove", ("Six",))]) == (frozenset({"six"}), {})
    assert history.net_asked([Change("add", ("numpy<2",)), Change("add", ("numpy>=2",))])[1] == {"numpy": ("numpy>=2",)}
    # a bare name never loosens a version asked before; one change's specs of a package hold together
    assert history.net_asked([Change("add", ("numpy<2",)), Change("add", ("numpy",))])[1] == {"numpy": ("numpy<2",)}
    assert history.net_asked([Change("add", ("numpy>=1.26", "numpy<2"))])[1] == {"numpy": ("numpy>=1.26", "numpy<2")}


@pytest.mark.parametrize(("requested", "change", "after"), [
    (("torch==2.5.1", "numpy<2"), Change("add", ("numpy>=2",)), ("torch==2.5.1", "numpy>=2")),
    (("torch==2.5.1", "numpy<2"), Change("add", ("numpy", "six")), ("torch==2.5.1", "numpy<2", "six")),
    (("Zope.Interface>=5", "numpy<2"), Change("remove", ("zope-interface",)), ("numpy<2",)),
    (("cuda-version=12.1", "conda-forge::pytorch=2.5"), Change("remove", ("pytorch",)), ("cuda-version=12.1",)),
    (("numpy<2", "six"), Change("upgrade", ("numpy",)), ("six", "numpy")),  # it moved past <2: that is no longer asked
    (("numpy<2",), Change("upgrade", ("numpy<2.3", "idna")), ("numpy<2.3",)),  # idna was never asked for
])
def test_what_an_environment_asks_after_a_change(requested: tuple[str, ...], change: Change, after: tuple[str, ...]) -> None:
    assert history.asked_now(requested, change) == after


@pytest.mark.parametrize(("text", "name"), [
    ("numpy", "numpy"), ("NumPy >=2", "numpy"), ("zope.interface[x]", "zope-interface"), ("numpy=1.26", "numpy"),
    ("conda-forge::cuda-nvrtc>=12.4", "cuda-nvrtc"), ("pytorch::pytorch=2.5[build=*cuda*]", "pytorch"),
    ("nvidia/label/cuda-12.1.0::cuda-toolkit", "cuda-toolkit"), ("numpy 1.26 py311_0", "numpy"),
    ("pkg @ https://h.example/x::y.whl", "pkg"), ("pkg @ http://[::1]:8000/pkg-1.0-py3-none-any.whl", "pkg")])
def test_a_change_names_the_package_it_asked_for(text: str, name: str) -> None:
    assert history.asked_name(text) == name


def test_a_short_history_is_kept_as_it_is() -> None:
    old = tuple(Change("add", (f"p{i}",), f"t{i}", (f"+ p{i} 1.0",)) for i in range(history.KEPT - 1))
    assert history.appended(old, Change("remove", ("p0",))) == (*old, Change("remove", ("p0",)))


def test_the_oldest_changes_fold_into_what_they_left_asked() -> None:
    every = [Change("add" if i % 3 else "remove", (f"p{i % 7}",), f"t{i}", ("+ x 1",)) for i in range(3 * history.KEPT)]
    changes: tuple[Change, ...] = ()
    for change in every:
        changes = history.appended(changes, change)
    assert len(changes) == history.KEPT + 2 and changes[2:] == tuple(every[-history.KEPT:])
    folded = [c for c in changes if not c.lines]
    assert [c.verb for c in folded] == ["remove", "add"] and changes[:2] == tuple(folded)


def test_a_history_of_large_changes_is_bounded_in_bytes_and_keeps_the_newest() -> None:
    big = tuple(f"+ package-{i} 1.0.0" for i in range(2000))  # an add of thousands of packages
    changes: tuple[Change, ...] = ()
    for i in range(20):
        changes = history.appended(changes, Change("add", (f"p{i}",), f"t{i}", big))
    assert len(json.dumps([c.to_json() for c in changes])) <= history.KEPT_BYTES + len(json.dumps(changes[-1].to_json()))
    assert changes[-1].asked == ("p19",) and history.net_asked(changes)[1] == {f"p{i}": (f"p{i}",) for i in range(20)}
    huge = Change("add", ("q",), "t", tuple("+ x" for _ in range(100_000)))
    assert history.appended(changes, huge)[-1] == Change("add", ("q",), "t", ("(100000 packages changed)",))


_change = st.builds(Change, st.sampled_from(["add", "remove", "upgrade"]),
                    st.lists(st.sampled_from(["six", "Six", "numpy>=2", "numpy<3", "numpy", "torch==2.5.1", "c::torch=2"]),
                             min_size=1, max_size=3).map(tuple))


@given(st.lists(_change, max_size=40), st.integers(1, 6))
def test_folding_never_changes_what_the_history_leaves_asked(changes: list[Change], kept: int) -> None:
    bounded: tuple[Change, ...] = ()
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(history, "KEPT", kept)
        for change in changes:
            bounded = history.appended(bounded, change)
    assert history.net_asked(bounded) == history.net_asked(changes)
    assert len(bounded) <= kept + 2 and bounded[-kept:] == tuple(changes[-kept:])


@pytest.mark.network
def test_a_package_added_then_removed_stays_out_of_another_platforms_lock(cli, work: Path, envs: Path, tmp_path: Path,
                                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    """`cuenv lock NAME --platform` solves the other platforms from the recipe and what the changes left
    asked for: six, added and removed again, is in neither list; packaging, added, is in both; the
    history, held to two changes here, folded the first ones without losing that."""
    monkeypatch.setenv("CUENV_RECIPES", str(windows_too(tmp_path / "recipes")))
    monkeypatch.setattr(history, "KEPT", 2)
    assert cli("create", "cu121-win", "--engine", "venv", "-n", "two")[0] == 0
    for verb, package in [("add", "six"), ("add", "packaging"), ("uninstall", "six"), ("add", "idna")]:
        code, out, err = cli(verb, "-n", "two", package)
        assert code == 0, err
    changes = json.loads((envs / "two" / ".cuenv" / "meta.json").read_text())["changes"]
    assert [(c["verb"], c["asked"]) for c in changes] == [("add", ["six", "packaging"]), ("remove", ["six"]), ("add", ["idna"])]
    assert not changes[0]["changes"]  # folded: what it left asked for, no package lines
    code, out, err = cli("lock", "two", "--platform", "win-64", "--platform", "linux-64")
    assert code == 0, err
    data = yaml.safe_load((work / "cuenv.lock").read_text())
    names = {p: {q["name"] for q in data["packages"][p]} for p in data["platforms"]}
    assert {"packaging", "idna"} <= names["win-64"] and {"packaging", "idna"} <= names["linux-64"], names
    assert "six" not in names["win-64"] | names["linux-64"]
    # the hint an add prints, `cuenv lock two`, re-locks into that file: its platforms are kept, not dropped to this one
    code, out, err = cli("add", "-n", "two", "six")
    assert code == 0 and "`cuenv lock two`" in out, err
    code, out, err = cli("lock", "two")  # the file's content changes: asked first (no terminal here: refused)
    assert code == 2 and "keeps the platforms cuenv.lock holds (linux-64, win-64)" in err, err
    hint = err.split("`")[1]
    assert hint == "cuenv lock two -o cuenv.lock --force" and cli(*hint.split()[1:])[0] == 0
    data = yaml.safe_load((work / "cuenv.lock").read_text())
    assert {q["name"] for q in data["packages"]["win-64"]} >= {"six", "packaging", "idna"}, data["platforms"]
    code, out, err = cli("lock", "two", "-o", "linux.lock", "--platform", "linux-64")  # asked: only that one
    assert code == 0 and "keeps the platforms" not in err and yaml.safe_load((work / "linux.lock").read_text())["platforms"] == ["linux-64"]


@given(st.text(max_size=300), st.lists(st.text(max_size=80), max_size=5), st.sampled_from(["add", "remove", "upgrade"]))
def test_any_text_is_read_as_a_name_and_any_change_folds(text: str, asked: list[str], verb: str) -> None:
    """meta.json may come from an archive someone else made: whatever its texts, the readers answer (no error)
    and folding stays idempotent."""
    name = history.asked_name(text)
    assert isinstance(name, str) and history.asked_name(name) == name
    after = history.asked_now((text,), Change(verb, tuple(asked)))
    assert history.asked_now(after, Change("upgrade", ())) == after
    assert history.net_asked([Change(verb, tuple(asked))])[0] <= {history.asked_name(t) for t in asked}


def test_a_huge_text_is_read_in_linear_time() -> None:
    assert history.asked_name("a" * 200_000 + ";") == "a" * 200_000
    assert history.asked_name(":" * 200_000) == ":" * 200_000
