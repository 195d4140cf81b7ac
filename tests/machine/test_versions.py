"""Property tests for cuenv.knowledge.versions: parsing round-trips and comparison is numeric and total."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from cuenv.errors import UsageError
from cuenv.knowledge import versions

parts = st.lists(st.integers(min_value=0, max_value=10_000), min_size=1, max_size=3)  # a driver version has at most 3


def _text(p: list[int]) -> str:
    return ".".join(str(x) for x in p)


@given(parts)
def test_parse_round_trips(p):
    assert versions.parse_dotted(_text(p)) == tuple(p)
    assert str(versions.driver(_text(p))) == _text(p)


@given(parts, parts)
def test_order_is_numeric_tuple_order_ignoring_trailing_zeros(a, b):
    def key(x: list[int]) -> tuple[int, ...]:
        y = list(x)
        while len(y) > 1 and y[-1] == 0:
            y.pop()
        return tuple(y)

    va, vb = versions.driver(_text(a)), versions.driver(_text(b))
    assert (va < vb) == (key(a) < key(b))
    assert (va == vb) == (key(a) == key(b))
    assert (va == vb) == (hash(va) == hash(vb)) or va != vb


@given(parts, parts, parts)
def test_order_is_transitive(a, b, c):
    va, vb, vc = (versions.cuda(_text(x)) for x in (a, b, c))
    if va <= vb and vb <= vc:
        assert va <= vc


@given(st.integers(min_value=1, max_value=99), st.integers(min_value=0, max_value=9))
def test_cc_spellings_agree(major, minor):
    dotted = versions.cc(f"{major}.{minor}")
    assert versions.cc(f"sm_{major}{minor}") == dotted
    assert versions.cc(f"compute_{major}{minor}") == dotted
    assert versions.cc(f"{major}{minor}") == dotted


@given(st.integers(min_value=1, max_value=99), st.integers(min_value=0, max_value=99))
def test_cuda_from_int_inverts_the_driver_api_encoding(major, minor):
    value = major * 1000 + minor * 10
    assert versions.cuda_from_int(value) == f"{major}.{minor}"


@given(st.text().filter(lambda s: not s.strip().replace(".", "").isdigit()))
def test_garbage_is_a_usage_error(s):
    with pytest.raises(UsageError):
        versions.driver(s)


def test_known_orderings():
    assert versions.driver("535.104.05") > versions.driver("535.54.03")
    assert versions.cuda("12.10") > versions.cuda("12.9")
    assert versions.cc("8.6") < versions.cc("9.0")
    assert versions.cuda("12.0") == versions.cuda("12")


@pytest.mark.parametrize(("parse", "text"), [
    (versions.driver, "550.1.2.3.4"), (versions.driver, "550.54.14.1"), (versions.cc, "8.6.7"),
    (versions.cuda, "12.1.105.1"), (versions.driver, "1" * 5000), (versions.cuda, "12." + "1" * 5000),
    (versions.cc, "sm_" + "8" * 5000), (versions.cc, "8." + "6" * 5000),
])
def test_too_many_parts_or_digits_are_usage_errors(parse, text):
    # five-part drivers, three-part compute capabilities and 5,000-digit numbers (issue 14)
    with pytest.raises(UsageError, match="is not a valid") as info:
        parse(text)
    assert len(info.value.message) < 120
