"""Requirement strings, conda specs and index URLs from shared files (issue 14 §1)."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from cuenv.trust import Untrusted, requirements

GOOD = ["torch", "torch==2.3.1", "torch==2.3.1+cu121", "nvidia-cuda-runtime-cu12==12.1.105", "numpy>=1.26,<2",
        "jax[cuda12]==0.4.30", "triton; platform_system == 'Linux'", "  torch  ",
        "pkg @ https://example.org/pkg-1.0-py3-none-any.whl", "pkg @ git+https://github.com/o/r@v1"]
# Each one was copied verbatim into uv's requirements file before (issue 14).
HOSTILE = [
    ("-e /tmp/evil", "option"), ("--index-url https://evil.example/simple", "option"),
    ("--extra-index-url=https://evil.example", "option"), ("-r /etc/passwd", "option"), ("-c x.txt", "option"),
    ("torch\n--index-url https://evil.example/simple", "control character"), ("torch\r\n-e .", "control character"),
    ("torch\0", "control character"), ("/tmp/project", "local path"), ("./project", "local path"),
    ("~/project", "local path"), ("file:///tmp/x.whl", "local path"), ("pkg @ file:///tmp/x.whl", "local file"),
    ("pkg @ http://example.org/pkg.whl", "http: URL"), ("pkg @ git+ssh://git@host/r", "git\\+ssh: URL"),
    ("torch==", "not a valid requirement"), ("", "empty"), ("   ", "empty"), ("x" * 1001, "characters long"),
]


@pytest.mark.parametrize("text", GOOD)
def test_good_requirements_pass(text: str) -> None:
    assert requirements.check_requirement(text, source="recipe r.yaml") == text.strip()


@pytest.mark.parametrize("text,why", HOSTILE)
def test_hostile_requirements_are_refused(text: str, why: str) -> None:
    with pytest.raises(Untrusted, match=why) as info:
        requirements.check_requirement(text, source="recipe r.yaml")
    assert info.value.message.startswith("recipe r.yaml: requirement ")
    assert "\n" not in info.value.message


@pytest.mark.parametrize("text", ["/tmp/project", "./project", "pkg @ file:///tmp/x.whl"])
def test_local_paths_only_from_the_command_line(text: str) -> None:
    assert requirements.requirement_problem(text, allow_local=True) is None


@pytest.mark.parametrize("url,ok", [
    ("https://download.pytorch.org/whl/cu121", True), ("http://download.pytorch.org/whl/cu121", False),
    ("HTTP://x.example/simple", False), ("file:///srv/index", False), ("https://", False), ("ftp://x", False),
    ("https://x.example/simple\n--index-url", False), ("https://x .example", False), (None, False),
    # http:// on the loopback has no network path to tamper with (a local devpi, a test index), as pip says
    ("http://127.0.0.1:3141/root/pypi/+simple/", True), ("http://localhost/simple", True), ("http://[::1]:8080/", True),
    ("http://localhost.evil.example/simple", False), ("http://127.0.0.1.evil.example/", False),
    ("http://127.0.0.1:80@evil.example/", False),
])
def test_index_urls(url: object, ok: bool) -> None:
    assert (requirements.index_url_problem(url) is None) is ok
    if not ok:
        with pytest.raises(Untrusted, match="index URL"):
            requirements.check_index_url(url, source="recipe")


@pytest.mark.parametrize("spec,ok", [
    ("pytorch=2.3.1", True), ("cuda-version>=12,<13", True), ("conda-forge::numpy", True),
    ("pytorch[build=*cuda*]", True), ("numpy 1.26.*", True), ("--override-channels", False),
    ("-c", False), ("a\nb", False), ("", False), (3, False),
])
def test_conda_specs(spec: object, ok: bool) -> None:
    assert (requirements.conda_spec_problem(spec) is None) is ok


@pytest.mark.parametrize("channel,ok", [("conda-forge", True), ("https://conda.anaconda.org/nvidia", True),
                                         ("file:///srv/channel", True), ("/srv/channel", True),
                                         ("http://x.example/c", False), ("--offline", False), ("a b", False),
                                         ("http://localhost:8000/c", True), ("http://localhost.evil.example/c", False)])
def test_channels(channel: str, ok: bool) -> None:
    assert (requirements.channel_problem(channel) is None) is ok


@settings(max_examples=400, deadline=None)
@given(st.one_of(st.text(max_size=80), st.from_regex(r"-[-a-z]+ ?[^\n]{0,20}", fullmatch=True),
                 st.builds(lambda a, b: a + "\n" + b, st.text(max_size=10), st.text(max_size=20))))
def test_fuzz_never_an_option_or_a_second_line(text: str) -> None:
    why = requirements.requirement_problem(text)
    if why is None:
        stripped = text.strip()
        assert not stripped.startswith("-") and "\n" not in text and "\r" not in text
        from packaging.requirements import Requirement

        Requirement(stripped)  # what uv will read: exactly one requirement


@pytest.mark.parametrize(("field", "value", "message"), [
    ("requirements", ("torch\n--index-url https://evil.example",), "holds a line break"),
    ("constraints", ("-e /tmp/evil",), "is a pip/uv option"),
    ("constraints", ("numpy @ file:///tmp/evil.whl",), "is a local file"),
    ("index_urls", ("http://evil.example/simple",), "uses http://"),
    ("find_links", ("http://evil.example/links.html",), "find-links page 'http://evil.example/links.html' uses http://"),
    ("find_links", ("/tmp/wheels",), "is not an https:// URL"),
])
def test_the_engines_last_guard_covers_every_string_uv_reads(field: str, value: tuple[str, ...], message: str) -> None:
    """What venv's solve and the conda engines' pip layer check before uv sees a file or an argument."""

    from cuenv.engines import Request

    good = Request(engine="venv", python="3.11", requirements=("numpy",), index_urls=("https://pypi.org/simple",),
                   find_links=("https://download.pytorch.org/whl/torch_stable.html",), constraints=("numpy<3",))
    requirements.check_pip_request(good)
    with pytest.raises(Untrusted, match=message):
        requirements.check_pip_request(good.replace(**{field: value}), source="the pip layer")
