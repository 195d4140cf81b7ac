"""A recipe's Python range answered ahead for the releases 3.6-3.29 (cuenv.recipes.catalogue.Python.minors):
the same answer `packaging` gives, for ranges and releases of every kind."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st
from packaging.specifiers import SpecifierSet

from cuenv.recipes.catalogue import PYTHON_MINORS, Python, allowed_minors

clause = st.builds(lambda op, minor, micro: f"{op}3.{minor}" + (f".{micro}" if micro is not None else ""),
                   st.sampled_from([">=", ">", "<", "<=", "==", "!=", "~="]), st.integers(0, 32),
                   st.none() | st.integers(0, 12))
ranges = st.lists(clause, min_size=1, max_size=3).map(",".join)


@settings(max_examples=200, deadline=None)
@given(supported=ranges, minor=st.integers(0, 40))
def test_answered_ahead_as_packaging_answers(supported: str, minor: int) -> None:
    release = f"3.{minor}"
    truth = SpecifierSet(supported).contains(release, prereleases=True)
    minors = allowed_minors(supported)
    assert minors is not None
    ahead = Python("3.11", supported, tuple(minors))
    assert ahead.allows(release) == truth  # answered ahead within PYTHON_MINORS, by packaging outside
    assert Python("3.11", supported).allows(release) == truth  # a user recipe: asked every time


def test_no_range_allows_every_python_and_a_broken_one_is_not_answered_ahead() -> None:
    assert Python("3.11").allows("3.99")
    assert allowed_minors("not a range") is None
    assert set(allowed_minors(">=3.9,<3.13") or ()) == {"3.9", "3.10", "3.11", "3.12"}
    assert PYTHON_MINORS[0] == "3.6" and PYTHON_MINORS[-1] == "3.29"
