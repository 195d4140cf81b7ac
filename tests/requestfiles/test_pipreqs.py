"""pip requirements files as pip reads them: every option form, includes, and each refusal's line."""

from __future__ import annotations

from pathlib import Path

import pytest

from cuenv.recipes.pipreqs import (
    PipOptions,
    RequestFileError,
    Where,
    parse_file,
    parse_requirement,
    parse_text,
)

SHA = "sha256:" + "0123456789abcdef" * 4


def reqs(text: str, base: Path | None = None) -> list[str]:
    return [r.text for r in parse_text(text, base=base).requirements]


def test_comments_continuations_and_blank_lines():
    text = "# top\n\ntorch==2.1.0+cu121 \\\n    --hash=" + SHA + "  # pinned\nnumpy>=1.24 # trailing\n"
    doc = parse_text(text)
    assert [(r.text, r.hashes, r.where.line) for r in doc.requirements] == [
        ("torch==2.1.0+cu121", (SHA,), 3), ("numpy>=1.24", (), 5)]


@pytest.mark.parametrize("line, expected", [
    ("-i https://a.example/simple", PipOptions(index_url="https://a.example/simple")),
    ("--index-url=https://a.example/simple/", PipOptions(index_url="https://a.example/simple")),
    ("-ihttps://a.example/simple", PipOptions(index_url="https://a.example/simple")),
    ("--extra-index-url https://b.example", PipOptions(extra_index_urls=("https://b.example",))),
    ("-f https://c.example/links.html", PipOptions(find_links=("https://c.example/links.html",))),
    ("--find-links=https://c.example/", PipOptions(find_links=("https://c.example/",))),
    ("--pre", PipOptions(pre=True)),
    ("--no-index", PipOptions(no_index=True)),
    ("--prefer-binary", PipOptions(prefer_binary=True)),
    ("--require-hashes", PipOptions(require_hashes=True)),
    ("--no-binary :all:", PipOptions(no_binary=(":all:",))),
    ("--only-binary=Pillow,torch_scatter", PipOptions(only_binary=("pillow", "torch-scatter"))),
    ("--pre --extra-index-url https://b.example", PipOptions(pre=True, extra_index_urls=("https://b.example",))),
])
def test_file_wide_options(line, expected):
    assert parse_text(line + "\ntorch\n").options == expected


def test_index_priority_extra_indexes_then_the_index():
    text = "--extra-index-url https://x.example\n-i https://mirror.example/simple\n--extra-index-url https://y.example\n"
    assert parse_text(text).options.index_urls == ("https://x.example", "https://y.example",
                                                    "https://mirror.example/simple")
    assert parse_text("--no-index\n-f https://w.example/\n").options.index_urls == ()


def test_ignored_options_leave_a_note():
    doc = parse_text("--trusted-host example.org\ntorch\n")
    assert doc.notes == ("requirements.txt:1: --trusted-host example.org is ignored (cuenv's installer decides that itself).",)


@pytest.mark.parametrize("line, text, url", [
    ("peft @ git+https://github.com/huggingface/peft.git@v0.3.0", "peft@ git+https://github.com/huggingface/peft.git@v0.3.0", True),
    ("git+https://github.com/openai/CLIP.git@main#egg=clip", "clip@ git+https://github.com/openai/CLIP.git@main#egg=clip", True),
    ("git+https://github.com/huggingface/peft.git", "peft@ git+https://github.com/huggingface/peft.git", True),
    ("https://download.pytorch.org/whl/cu121/torch-2.1.0%2Bcu121-cp311-cp311-linux_x86_64.whl",
     "torch@ https://download.pytorch.org/whl/cu121/torch-2.1.0%2Bcu121-cp311-cp311-linux_x86_64.whl", True),
    ("https://files.example/pkgs/fairscale-0.4.13.tar.gz ; python_version >= '3.9'",
     'fairscale@ https://files.example/pkgs/fairscale-0.4.13.tar.gz ; python_version >= "3.9"', True),
    ("jax[cuda12_pip]==0.4.20; python_version >= '3.9'", 'jax[cuda12_pip]==0.4.20; python_version >= "3.9"', False),
])
def test_requirement_forms(line, text, url):
    (req,) = parse_text(line).requirements
    assert req.text.replace(" @ ", "@ ") == text
    assert bool(req.url) == url


def test_editable_vcs_installs_as_a_regular_package():
    doc = parse_text("-e git+https://github.com/CompVis/taming-transformers.git@master#egg=taming-transformers\n")
    assert [r.name for r in doc.requirements] == ["taming-transformers"]
    assert doc.requirements[0].vcs and "not in editable mode" in doc.notes[0]


def test_includes_are_relative_to_the_including_file(tmp_path):
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "common.txt").write_text("numpy==1.26.4\n-c ../pins.txt\n")
    (tmp_path / "pins.txt").write_text("scipy<1.14\n")
    (tmp_path / "requirements.txt").write_text("--extra-index-url https://download.pytorch.org/whl/cu121\n"
                                               "-r sub/common.txt\ntorch==2.5.1+cu121\n")
    doc = parse_file(tmp_path / "requirements.txt")
    assert [r.text for r in doc.requirements] == ["numpy==1.26.4", "torch==2.5.1+cu121"]
    assert [r.text for r in doc.constraints] == ["scipy<1.14"]
    assert doc.constraints[0].where == Where(str(tmp_path / "sub" / "../pins.txt"), 1)
    assert [Path(f).name for f in doc.files] == ["requirements.txt", "common.txt", "pins.txt"]


def test_an_include_cycle_is_named(tmp_path):
    (tmp_path / "a.txt").write_text("-r b.txt\n")
    (tmp_path / "b.txt").write_text("numpy\n-r a.txt\n")
    with pytest.raises(RequestFileError, match=r"b.txt:2: -r: the includes form a cycle \(a.txt -> b.txt -> a.txt\)"):
        parse_file(tmp_path / "a.txt")


def test_includes_nest_at_most_ten_deep(tmp_path):
    for i in range(12):
        (tmp_path / f"r{i}.txt").write_text(f"-r r{i + 1}.txt\n")
    (tmp_path / "r12.txt").write_text("numpy\n")
    with pytest.raises(RequestFileError, match="nest deeper than 10"):
        parse_file(tmp_path / "r0.txt")


def test_a_missing_include_names_the_line(tmp_path):
    (tmp_path / "r.txt").write_text("numpy\n-r nothere.txt\n")
    with pytest.raises(RequestFileError, match=r"r.txt:2: -r nothere.txt: the included file .* does not exist"):
        parse_file(tmp_path / "r.txt")


@pytest.mark.parametrize("text, construct, hint", [
    ("-r https://example.org/r.txt", "-r https://example.org/r.txt", "relative path"),
    ("-r /etc/passwd", "-r /etc/passwd", "relative path"),
    ("--index-url ftp://mirror", "-i/--index-url ftp://mirror", "https://"),
    ("-f ./wheels", "-f ./wheels", "index"),
    ("torch --index-url https://x.example", "--index-url", "own line"),
    ("--hash=sha256:00", "--hash", "after the pin it checks"),
    ("torch --hash=md4:zz", "--hash=md4:zz", "sha256"),
    ("--bogus", "--bogus", "Supported"),
    ("-i", "-i", "-i and its value"),
    ("numpy==${NUMPY_VERSION}", "${NUMPY_VERSION}", "value itself"),
    ("torch[", "'torch['", "as pip does"),
    ("https://example.org/download", "https://example.org/download", "name and ' @ '"),
    ("--pre=yes", "--pre=yes", "alone"),
])
def test_refusals_name_the_line_the_construct_and_a_way(text, construct, hint):
    with pytest.raises(RequestFileError) as err:
        parse_text("numpy\n" + text + "\n", base=Path("."))
    assert str(err.value).startswith(f"requirements.txt:2: {construct}: ")
    assert hint in err.value.hint


@pytest.mark.parametrize("line", ["-e .", "./local/pkg", "submodules/simple-knn", "/abs/dist/pkg-1.0-py3-none-any.whl",
                                  "file:///tmp/pkg", "pkg @ file:///tmp/pkg", "torch --global-option=--cuda",
                                  "foo --config-settings=x=y"])
def test_uninstallable_lines_are_kept_with_their_reason(line):
    doc = parse_text("numpy\n" + line + "\n")
    assert [r.name for r in doc.requirements] == ["numpy"]
    (u,) = doc.unsupported
    assert u.where.line == 2 and str(u).startswith("requirements.txt:2: ")
    assert "wheel" in u.hint or "folder" in u.hint


def test_parse_requirement_keeps_the_local_version():
    req = parse_requirement("torch==2.4.0+cu118; sys_platform == 'linux'", Where("f", 1))
    assert (req.name, req.exact_version(), req.marker) == ("torch", "2.4.0+cu118", 'sys_platform == "linux"')


def test_a_loopback_find_links_page_is_fine():
    assert parse_text("-f http://127.0.0.1:8000/links.html\ntorch\n").options.find_links == ("http://127.0.0.1:8000/links.html",)


@pytest.mark.parametrize("line", ["-f http://evil.example/links.html", "--find-links=HTTP://evil.example/",
                                  "-f http://localhost.evil.example/"])
def test_an_http_find_links_page_is_refused(line):
    with pytest.raises(RequestFileError, match="uses http://, which lets anyone on the network path swap the packages"):
        parse_text(line + "\ntorch\n")
