"""Files a Windows tool wrote: UTF-8 with a byte-order mark (Notepad) and UTF-16 with one (PowerShell 5's `>`,
e.g. `pip freeze > requirements.txt`). pip and uv read a requirements file in either, conda an environment
file; neither reads UTF-32 or UTF-16 without its mark, and conda reads an @EXPLICIT list as UTF-8 only. cuenv
reads what they read, and of the rest says what the file is and how to convert it (the hint is run)."""

from __future__ import annotations

import codecs
import subprocess
import zipfile
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from cuenv.recipes import envyml
from cuenv.recipes.pipreqs import RequestFileError, parse_file
from cuenv.trust import Untrusted, limits

REQUIREMENTS = "alpha==1.0\n# a comment\nbeta>=1.0\n"
ENCODINGS = {
    "utf-8-bom": codecs.BOM_UTF8 + REQUIREMENTS.encode("utf-8"),
    "utf-16le-bom": codecs.BOM_UTF16_LE + REQUIREMENTS.encode("utf-16-le"),
    "utf-16be-bom": codecs.BOM_UTF16_BE + REQUIREMENTS.encode("utf-16-be"),
    "utf-32le-bom": codecs.BOM_UTF32_LE + REQUIREMENTS.encode("utf-32-le"),
    "utf-16le-no-bom": REQUIREMENTS.encode("utf-16-le"),
}


def _wheel(folder: Path, name: str) -> None:
    dist = f"{name}-1.0.dist-info"
    with zipfile.ZipFile(folder / f"{name}-1.0-py3-none-any.whl", "w") as whl:
        whl.writestr(f"{dist}/METADATA", f"Metadata-Version: 2.1\nName: {name}\nVersion: 1.0\n")
        whl.writestr(f"{dist}/WHEEL", "Wheel-Version: 1.0\nGenerator: test\nRoot-Is-Purelib: true\nTag: py3-none-any\n")
        whl.writestr(f"{dist}/RECORD", "")


def _uv_reads(path: Path, links: Path) -> list[str] | None:
    """The packages uv's `pip compile` resolves from ``path`` (a local folder of wheels, no index), None if it refuses."""
    from uv import find_uv_bin

    done = subprocess.run([find_uv_bin(), "pip", "compile", str(path), "--no-index", "--find-links", str(links),
                           "--no-header", "--no-annotate", "--quiet", "--no-cache"],
                          capture_output=True, text=True, check=False, env={"PATH": "/usr/bin:/bin", "UV_NO_CONFIG": "1"})
    if done.returncode != 0:
        return None
    return sorted(line.split("==")[0] for line in done.stdout.splitlines() if line and not line.startswith("#"))


@pytest.mark.parametrize("encoding", sorted(ENCODINGS))
def test_a_requirements_file_is_read_in_the_encodings_uv_reads(encoding: str, tmp_path: Path) -> None:
    links = tmp_path / "links"
    links.mkdir()
    for name in ("alpha", "beta"):
        _wheel(links, name)
    path = tmp_path / "requirements.txt"
    path.write_bytes(ENCODINGS[encoding])
    uv = _uv_reads(path, links)
    try:
        ours: list[str] | None = sorted(r.text.split("=")[0].split(">")[0] for r in parse_file(path).requirements)
    except RequestFileError as exc:
        assert "Traceback" not in str(exc)
        ours = None
    assert ours == uv
    assert (uv is None) == (encoding in ("utf-32le-bom", "utf-16le-no-bom"))


def test_an_environment_file_in_utf16_is_read_as_conda_reads_it(tmp_path: Path) -> None:
    text = "name: x\ndependencies:\n  - pytorch-cuda=12.1\n  - pytorch=2.3\n"
    path = tmp_path / "environment.yml"
    path.write_bytes(codecs.BOM_UTF16_LE + text.encode("utf-16-le"))
    doc = envyml.parse_file(path)
    assert [s.name for s in doc.specs] == ["pytorch-cuda", "pytorch"]


def test_an_explicit_list_in_utf16_is_named_and_the_fix_converts_it(cli, tmp_path: Path) -> None:
    """conda reads an @EXPLICIT list as UTF-8 (conda.cli.common.specs_from_url opens it as text): refused, and
    the hint, run as written, makes the UTF-8 file that reads."""
    import shlex

    text = ("@EXPLICIT\nhttps://conda.anaconda.org/conda-forge/linux-64/zlib-1.3.1-hb9d3cd8_2.conda"
            "#c9f075ab2f33b3bbee9e62d4ad0a6cd8\n")
    path = tmp_path / "spec-file.txt"
    path.write_bytes(codecs.BOM_UTF16_LE + text.encode("utf-16-le"))
    code, _out, err = cli("check", str(path))
    assert code == 2 and "is UTF-16 text" in err and "Traceback" not in err
    hint = err.split("hint: ", 1)[1].strip()
    command = hint.split("`")[1]
    subprocess.run(command, shell=True, check=True, cwd=tmp_path)
    converted = Path(shlex.split(command)[-1])
    assert converted.read_text(encoding="utf-8") == text
    code, out, err = cli("check", str(converted))
    assert code == 0, err


@given(st.text(alphabet=st.characters(blacklist_characters="\0\ufeff", blacklist_categories=("Cs",))),
       st.sampled_from(["utf-8", "utf-8-sig", "utf-16"]))
def test_marked_text_reads_back_whatever_it_holds(text: str, codec: str) -> None:
    data = text.encode(codec)
    assert limits.decoded(data, marked=True) == text
    if codec == "utf-16":
        with pytest.raises(limits.TextProblem, match="UTF-16"):
            limits.decoded(data)
    else:
        assert limits.decoded(data).lstrip("\ufeff") == text


@given(st.binary(max_size=64))
def test_any_bytes_are_text_or_one_named_problem(data: bytes) -> None:
    for marked in (False, True):
        try:
            got = limits.decoded(data, marked=marked)
        except limits.TextProblem as exc:
            assert exc.args[0].startswith("is ")
            with pytest.raises(Untrusted):
                limits.decode(data, what="File", path="f", marked=marked)
        else:
            assert "\0" not in got
