"""Bounded reads and bounded parsers (issue 14 §5): every refusal is one line naming the file."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from cuenv.errors import NotFound
from cuenv.trust import Untrusted, limits

BOMB = """\
a: &a ["x","x","x","x","x","x","x","x","x"]
b: &b [*a,*a,*a,*a,*a,*a,*a,*a,*a]
c: &c [*b,*b,*b,*b,*b,*b,*b,*b,*b]
d: &d [*c,*c,*c,*c,*c,*c,*c,*c,*c]
e: &e [*d,*d,*d,*d,*d,*d,*d,*d,*d]
f: &f [*e,*e,*e,*e,*e,*e,*e,*e,*e]
g: &g [*f,*f,*f,*f,*f,*f,*f,*f,*f]
h: &h [*g,*g,*g,*g,*g,*g,*g,*g,*g]
"""


def test_dev_zero_is_refused_before_a_byte_is_read(monkeypatch: pytest.MonkeyPatch) -> None:
    reads: list[int] = []
    real = os.read
    monkeypatch.setattr(os, "read", lambda fd, n: reads.append(n) or real(fd, n))
    with pytest.raises(Untrusted, match=r"^Config file /dev/zero is a device, not a regular file"):
        limits.read_text("/dev/zero", what="Config file", limit=limits.CONFIG)
    assert reads == []


def test_a_fifo_without_a_writer_does_not_hang(tmp_path: Path) -> None:
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    with pytest.raises(Untrusted, match="is a FIFO \\(named pipe\\), not a regular file"):
        limits.read_text(fifo, what="File", limit=10)


def test_exact_limit_is_fine_one_more_byte_is_not(tmp_path: Path) -> None:
    f = tmp_path / "f"
    f.write_bytes(b"a" * 100)
    assert limits.read_bytes(f, what="File", limit=100) == b"a" * 100
    with pytest.raises(Untrusted, match="larger than 99 bytes"):
        limits.read_bytes(f, what="File", limit=99)


def test_missing_folder_binary_and_non_utf8(tmp_path: Path) -> None:
    with pytest.raises(NotFound, match="does not exist"):
        limits.read_text(tmp_path / "nope", what="Lockfile", limit=10)
    with pytest.raises(Untrusted, match="is a folder, not a regular file"):
        limits.read_text(tmp_path, what="Lockfile", limit=10)
    (tmp_path / "bin").write_bytes(b"\x7fELF\x02\x01\x01\0\0")
    with pytest.raises(Untrusted, match="is a binary file"):
        limits.read_text(tmp_path / "bin", what="Config file", limit=100)
    (tmp_path / "latin1").write_bytes(b"name: caf\xe9\nx: 1\n")
    with pytest.raises(Untrusted, match=r"is not UTF-8 text \(byte 10, line 1\)"):
        limits.read_text(tmp_path / "latin1", what="Recipe file", limit=100)


def test_unreadable(tmp_path: Path) -> None:
    if os.geteuid() == 0:
        pytest.skip("root reads every file")
    f = tmp_path / "f"
    f.write_text("x")
    f.chmod(0)
    with pytest.raises(Untrusted, match="Permission denied"):
        limits.read_text(f, what="File", limit=10)


class _Scan:
    """Counts the YAML events limits scans and fails if the document is ever built (yaml.load)."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        import yaml

        self.events = 0
        parse = yaml.parse

        def counted(*args, **kwargs):  # noqa: ANN002, ANN003 - yaml.parse's own arguments
            for event in parse(*args, **kwargs):
                self.events += 1
                yield event

        def never(*args: object, **kwargs: object) -> None:
            raise AssertionError("the document was built before the limits refused it")

        monkeypatch.setattr(yaml, "parse", counted)
        monkeypatch.setattr(yaml, "load", never)


def test_alias_bomb_is_refused_before_it_is_built(monkeypatch: pytest.MonkeyPatch) -> None:
    """The scan counts each alias as the nodes it stands for, reading each event of the text once: never 9**8 nodes."""
    import yaml

    in_text = sum(1 for _ in yaml.parse(BOMB))
    scan = _Scan(monkeypatch)
    with pytest.raises(Untrusted, match="expands to more than 500000 YAML nodes"):
        limits.load_yaml(BOMB, what="Recipe file", file="bomb.yaml")
    assert scan.events <= in_text, (scan.events, in_text)


def test_a_few_aliases_are_fine() -> None:
    assert limits.load_yaml("a: &x [1, 2]\nb: *x\n", what="F", file="f") == {"a": [1, 2], "b": [1, 2]}


@pytest.mark.parametrize("text", ["[" * 100_000 + "]" * 100_000, "{" * 100_000, "- " * 100_000 + "x",
                                  "a: " + "[" * 65 + "]" * 65])
def test_deep_yaml_is_refused_before_it_is_built(text: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """The scan stops at the first level too many: about 65 events, not 100,000 levels."""
    scan = _Scan(monkeypatch)
    with pytest.raises(Untrusted, match="nested more than 64 levels"):
        limits.load_yaml(text, what="Lockfile", file="deep.lock")
    assert scan.events <= limits.MAX_DEPTH + 8, scan.events


def test_alias_depth_counts() -> None:
    deep = "a: &a " + "[" * 40 + "]" * 40 + "\nb: " + "[" * 30 + "*a" + "]" * 30 + "\n"
    with pytest.raises(Untrusted, match="nested more than 64"):
        limits.load_yaml(deep, what="F", file="f")


def test_yaml_errors_and_huge_integers_are_one_line() -> None:
    with pytest.raises(Untrusted, match=r"^Lockfile x.lock line \d+ is not valid YAML"):
        limits.load_yaml("a: [", what="Lockfile", file="x.lock")
    with pytest.raises(Untrusted, match="holds a value cuenv cannot read: Exceeds the limit"):
        limits.load_yaml("version: " + "1" * 5000, what="Lockfile", file="x.lock")


@pytest.mark.parametrize("text,why", [("[" * 100_000 + "]" * 100_000, "nested more than 64"),
                                      ("[" * 70 + "]" * 70, "nested more than 64"), ("not json", "not valid JSON"),
                                      ("1" * 5000, "not valid JSON"), (b"\xff\xfe", "not UTF-8|not valid JSON")])
def test_json(text: str | bytes, why: str) -> None:
    with pytest.raises(Untrusted, match=why) as info:
        limits.load_json(text, what="Archive manifest", file="a.tar")
    assert "\n" not in info.value.message


def test_json_fine() -> None:
    assert limits.load_json('{"a": [1, {"b": null}]}', what="F", file="f") == {"a": [1, {"b": None}]}


def test_short_text() -> None:
    assert limits.short_text("12.1", what="--cuda") == "12.1"
    with pytest.raises(Untrusted, match="5001 characters long"):
        limits.short_text("1" * 5001, what="--cuda")
    with pytest.raises(Untrusted, match="control character"):
        limits.short_text("a\nb", what="-n")


yaml_text = st.recursive(
    st.one_of(st.text(max_size=8), st.integers(), st.none(), st.booleans()),
    lambda inner: st.one_of(st.lists(inner, max_size=4), st.dictionaries(st.text(max_size=5), inner, max_size=4)),
    max_leaves=20,
)


@settings(max_examples=200, deadline=None)
@given(st.one_of(st.text(max_size=200), st.text(alphabet="[]{}&*ab:- \n,'\"!", max_size=300)))
def test_fuzz_yaml_clean_error_or_data(text: str) -> None:
    try:
        limits.load_yaml(text, what="File", file="f.yaml")
    except Untrusted as exc:
        assert "\n" not in exc.message


@settings(max_examples=100, deadline=None)
@given(yaml_text)
def test_fuzz_yaml_roundtrip(data: object) -> None:
    import yaml

    assert limits.load_yaml(yaml.safe_dump(data), what="File", file="f.yaml") == data


@settings(max_examples=200, deadline=None)
@given(st.one_of(st.text(max_size=200), st.text(alphabet='[]{}"1e-.,: ', max_size=300)))
def test_fuzz_json_clean_error_or_data(text: str) -> None:
    try:
        limits.load_json(text, what="File", file="f.json")
    except Untrusted as exc:
        assert "\n" not in exc.message
