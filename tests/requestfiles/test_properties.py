"""Property tests of the request-file parsers: any input ends in a result or a clean refusal, never an
internal error; what they hand on is always a re-parseable PEP 508 requirement, never an option."""

from __future__ import annotations

import string

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from packaging.requirements import Requirement

from cuenv.errors import UsageError
from cuenv.recipes import cudainfer, envyml, pipreqs
from cuenv.recipes.pipreqs import RequestFileError, Where

FAST = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])

names = st.from_regex(r"[A-Za-z][A-Za-z0-9]{0,6}([-_.][A-Za-z0-9]{1,4}){0,2}", fullmatch=True)
versions = st.from_regex(r"[0-9]{1,2}(\.[0-9]{1,3}){0,3}", fullmatch=True)
locals_ = st.sampled_from(["", "+cu118", "+cu121", "+cpu", "+cu124"])
ops = st.sampled_from(["==", ">=", "<=", "~=", "!=", "<", ">"])
markers = st.sampled_from(["", "; sys_platform == 'linux'", "; python_version >= '3.9'",
                           "; platform_machine == 'x86_64' and sys_platform != 'win32'"])
extras = st.lists(st.from_regex(r"[a-z][a-z0-9_]{0,6}", fullmatch=True), max_size=2, unique=True)
hashes = st.lists(st.from_regex(r"sha256:[0-9a-f]{64}", fullmatch=True), max_size=2)


@st.composite
def requirement_lines(draw):
    name, op, version = draw(names), draw(ops), draw(versions)
    if op == "~=" and "." not in version:
        version += ".0"  # PEP 440: ~= needs two release parts
    local = draw(locals_) if op == "==" else ""
    extra = draw(extras)
    spec = f"{name}{'[' + ','.join(extra) + ']' if extra else ''}{op}{version}{local}{draw(markers)}"
    hs = draw(hashes)
    return spec, tuple(hs), spec + "".join(f" --hash={h}" for h in hs)


@FAST
@given(st.text(alphabet=string.printable + "é€\x00", max_size=300))
def test_any_text_is_a_result_or_a_clean_refusal(text):
    try:
        doc = pipreqs.parse_text(text)
    except UsageError:
        return
    for req in doc.requirements + doc.constraints:
        assert "\n" not in req.text and not req.text.startswith("-")
        assert Requirement(req.text).name  # what is handed on always re-parses


@FAST
@given(st.lists(requirement_lines(), min_size=1, max_size=6), st.lists(st.sampled_from(["", "# c", "  "]), max_size=6),
       st.booleans())
def test_valid_lines_round_trip_with_their_line_numbers(lines, fillers, continued):
    body, expected = [], []
    for i, (spec, hs, line) in enumerate(lines):
        if i < len(fillers):
            body.append(fillers[i])
        if continued and hs:
            line = line.replace(" --hash", " \\\n    --hash", 1)
        expected.append((spec, hs, len(body) + 1))
        body.extend(line.split("\n"))
    doc = pipreqs.parse_text("\n".join(body) + "\n")
    assert len(doc.requirements) == len(expected)
    for req, (spec, hs, line) in zip(doc.requirements, expected):
        want = Requirement(spec)
        got = Requirement(req.text)
        assert (got.name, got.specifier, got.extras, str(got.marker)) == (want.name, want.specifier, want.extras,
                                                                          str(want.marker))
        assert req.hashes == hs and req.where.line == line


@FAST
@given(st.text(alphabet=string.printable, max_size=400))
def test_any_environment_text_is_a_result_or_a_clean_refusal(text):
    try:
        env = envyml.parse_text(text)
    except UsageError:
        return
    assert env.channels and all(isinstance(s.name, str) and s.name for s in env.specs)


conda_names = st.from_regex(r"[a-z][a-z0-9_]{0,8}(-[a-z0-9]{1,5}){0,2}", fullmatch=True)
conda_ops = st.sampled_from(["=", "==", ">=", " ", "<"])


@FAST
@given(st.lists(st.tuples(st.sampled_from(["", "pytorch::", "conda-forge::"]), conda_names, conda_ops, versions),
                min_size=1, max_size=8),
       st.lists(st.sampled_from(["conda-forge", "nvidia", "defaults", "nodefaults", "pytorch"]), min_size=1, max_size=4),
       st.lists(requirement_lines(), max_size=3))
def test_generated_environment_files_parse_to_what_they_say(specs, channels, pip_lines):
    deps = [f"  - '{ch}{n}{op}{v}'" for ch, n, op, v in specs]
    if pip_lines:
        deps.append("  - pip:")
        deps += [f"    - \"{spec}\"" for spec, _, _ in pip_lines]
    text = "name: gen\nchannels:\n" + "".join(f"  - {c}\n" for c in channels) + "dependencies:\n" + "\n".join(deps) + "\n"
    try:
        env = envyml.parse_text(text)
    except RequestFileError as err:
        # the only refusal possible here: nodefaults left no channel
        assert set(channels) <= {"defaults", "nodefaults"} and "leaves no channel" in str(err)
        return
    assert [s.name for s in env.specs] == [n.lower() for _, n, _, _ in specs]
    assert [s.where.line for s in env.specs] == [4 + len(channels) + i for i in range(len(specs))]
    if "nodefaults" in channels:
        assert not set(envyml.DEFAULTS) & set(env.channels)
    if pip_lines:
        assert [Requirement(r.text).name for r in env.pip.requirements] == [Requirement(s).name for s, _, _ in pip_lines]


evidence = st.builds(
    lambda major, minor, strength, line: cudainfer.Evidence(
        Where("f", line), f"pin{line}", "says", strength, f"{major}.{minor}" if strength in ("exact", "min") else None,
        major),
    st.integers(11, 13), st.integers(0, 9), st.sampled_from(["exact", "min", "major", "cpu"]), st.integers(1, 50))


@FAST
@given(st.lists(evidence, max_size=6))
def test_decide_picks_the_newest_exact_pin_or_a_floor_above_it_or_refuses(items):
    gpu = [e for e in items if e.strength != "cpu"]
    majors = {e.major for e in gpu}
    exact = [e for e in gpu if e.strength == "exact"]
    try:
        inference = cudainfer.decide(items, file="f")
    except RequestFileError as err:
        assert len(majors) > 1 or (gpu and not exact and not any(e.strength == "min" for e in gpu))
        assert str(err).startswith("f:")
        return
    # several majors only side by side: at most one below 13 (CUDA 13 wheels live under nvidia/cu13/); the newest decides
    assert len(majors) <= 1 or len({m for m in majors if m < 13}) <= 1
    if len(majors) > 1:
        assert inference.cuda is not None and int(inference.cuda.split(".")[0]) == max(majors)
    elif exact:  # the newest exact pin, or a floor above it (it installs newer; the driver runs both)
        assert inference.cuda == max((e.cuda for e in gpu if e.strength in ("exact", "min")),
                                     key=lambda c: tuple(map(int, c.split("."))))
    elif not gpu:
        assert inference.cuda is None


lines = st.one_of(
    requirement_lines().map(lambda r: r[2]),
    st.sampled_from(["-r other.txt", "-c other.txt", "--extra-index-url https://download.pytorch.org/whl/cu121",
                     "-f https://storage.googleapis.com/jax-releases/jax_cuda_releases.html", "--pre", "-e .",
                     "git+https://github.com/openai/CLIP.git", "torch==2.4.0+cu118", "jax[cuda12]==0.4.30",
                     "--hash=sha256:00", "${X}", "  # comment", "\\", "-r /etc/passwd", "cupy-cuda11x"]),
    st.text(alphabet=string.printable, max_size=40),
)


# Each example is a `cuenv check` that asks PyPI through uv (about a second of network each, most of it for
# names that do not exist); the parsers under it get 150 examples each above, offline.
@pytest.mark.network
@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(st.lists(lines, max_size=8), st.lists(lines, max_size=4))
def test_check_on_any_requirements_file_ends_cleanly(cli, tmp_path, body, other):
    (tmp_path / "other.txt").write_text("\n".join(other) + "\n")
    (tmp_path / "requirements.txt").write_text("\n".join(body) + "\n")
    code, out, err = cli("check", str(tmp_path / "requirements.txt"), "--driver", "550.54.14", "--cc", "8.0")
    assert code in (0, 1, 2), err
    assert "Traceback" not in err and "internal error" not in err
    if code == 2:
        assert err.startswith("error: ") and len(err.splitlines()) <= 2


@FAST
@given(st.text(max_size=40) | st.lists(st.tuples(st.sampled_from(["<", "<=", ">", ">=", "==", "!=", ""]),
                                                 st.sampled_from(["10.0", "10.1", "11", "11.8", "12.4.1", "12.*", "13.0"])),
                                       min_size=1, max_size=3).map(lambda ps: ",".join(o + v for o, v in ps)))
def test_a_conda_range_admits_known_releases_in_order_and_never_raises(spec):
    from rattler import Version, VersionSpec

    from cuenv.knowledge import matrix

    admitted = cudainfer.conda_range(spec)
    releases = matrix.cuda_releases()
    assert list(admitted) == [r for r in releases if r in admitted]  # known releases, oldest first
    try:
        wanted = VersionSpec(spec)
    except Exception:  # noqa: BLE001 - rattler's parse errors
        assert admitted == ()
        return
    for row in matrix.driver_rows():  # differential: each admitted release is one rattler matches
        mm = ".".join(row.cuda.split(".")[:2])
        assert (mm in admitted) >= (wanted.matches(Version(mm)) or wanted.matches(Version(row.cuda)))


@FAST
@given(st.text(max_size=30), st.integers(10, 13), st.integers(0, 9), st.integers(0, 200))
def test_an_nvidia_floor_is_its_highest_lower_bound(noise, major, minor, patch):
    cudainfer.spec_floor(noise)  # never raises on any text
    assert cudainfer.spec_floor(f">={major}.{minor}.{patch},<{major + 1}") == f"{major}.{minor}"
    assert cudainfer.spec_floor(f"~={major}.{minor}.{patch}, >={major}.0") == f"{major}.{minor}"
