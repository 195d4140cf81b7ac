"""environment.yml as conda reads it: channels, every match-spec form, `pip:`, `variables:`, and refusals by line."""

from __future__ import annotations

import pytest
import rattler

from cuenv.recipes.envyml import DEFAULTS, expand_channels, parse_spec, parse_text
from cuenv.recipes.pipreqs import RequestFileError, Where

W = Where("environment.yml", 1)


@pytest.mark.parametrize("text, name, version, build, channel", [
    ("pytorch::pytorch-cuda=11.8", "pytorch-cuda", "11.8.*", None, "pytorch"),
    ("conda-forge::cudatoolkit==11.3.*", "cudatoolkit", "11.3.*", None, "conda-forge"),
    ("nvidia/label/cuda-11.8.0::cuda-toolkit", "cuda-toolkit", None, None, "nvidia/label/cuda-11.8.0"),
    ("pytorch=1.11.0=py3.9_cuda11.3_cudnn8.2.0_0", "pytorch", "==1.11.0", "py3.9_cuda11.3_cudnn8.2.0_0", None),
    ("pytorch 2.1.* *cuda*", "pytorch", "2.1.*", "*cuda*", None),
    ("pytorch=*=*cuda*", "pytorch", "*", "*cuda*", None),
    ("python >= 3.8", "python", ">=3.8", None, None),
    ("cmake>=3.26.4,!=3.30.0", "cmake", ">=3.26.4,!=3.30.0", None, None),
    ('numpy[version=">=1.2"]', "numpy", ">=1.2", None, None),
    ("pip=20.3", "pip", "20.3.*", None, None),
    ("flask_cors", "flask_cors", None, None, None),
])
def test_match_spec_forms(text, name, version, build, channel):
    spec = parse_spec(text, W)
    assert (spec.name, spec.version, spec.build, spec.channel, spec.text) == (name, version, build, channel, text)


@pytest.mark.parametrize("listed, expected, anaconda", [
    (["conda-forge", "nodefaults"], ("conda-forge",), False),
    (["pytorch", "defaults"], ("pytorch", *DEFAULTS), True),
    (["defaults", "conda-forge", "nodefaults"], ("conda-forge",), False),
    (["conda-forge", "conda-forge"], ("conda-forge",), False),
])
def test_channels_as_conda_reads_them(listed, expected, anaconda):
    assert expand_channels(listed) == (expected, anaconda)


def test_a_file_without_channels_gets_defaults_and_a_word_about_them():
    env = parse_text("dependencies:\n  - numpy\n")
    assert env.channels == DEFAULTS
    assert "Anaconda's repository" in env.notes[0] and "nodefaults" in env.notes[0]


def test_a_spec_channel_is_searched_too():
    env = parse_text("channels: [conda-forge]\ndependencies:\n  - pytorch::pytorch-cuda=12.1\n  - nvidia::cuda-nvcc\n")
    assert env.channels == ("conda-forge", "pytorch", "nvidia")


def test_pip_section_variables_and_kinds(tmp_path):
    (tmp_path / "requirements.txt").write_text("einops==0.3.0\n")
    text = ("name: demo\nprefix: /opt/envs/demo\nchannels:\n  - conda-forge\ndependencies:\n  - python=3.11\n  - pip\n"
            "  - pip:\n    - --extra-index-url https://download.pytorch.org/whl/cu121\n    - torch==2.5.1+cu121\n"
            "    - -r requirements.txt\nvariables:\n  TORCH_CUDA_ARCH_LIST: '8.0;9.0'\n")
    env = parse_text(text, file=str(tmp_path / "environment.yml"), base=tmp_path)
    assert env.name == "demo" and env.kind == "pip"
    assert [(r.text, r.where.line) for r in env.pip.requirements] == [("torch==2.5.1+cu121", 10), ("einops==0.3.0", 1)]
    assert env.pip.options.index_urls == ("https://download.pytorch.org/whl/cu121", "https://pypi.org/simple")
    assert env.variables == (("TORCH_CUDA_ARCH_LIST", "8.0;9.0"),)
    assert any("`prefix:` is ignored" in n for n in env.notes)
    assert parse_text("channels: [c]\ndependencies: [numpy, {pip: [einops]}]\n").kind == "mixed"
    assert parse_text("channels: [c]\ndependencies: [numpy]\n").kind == "conda"


@pytest.mark.parametrize("text, line, construct", [
    ("channels: [c]\ndependencies:\n  - numpy\n  - 'numpy >=>= 1'\n", 4, "'numpy >=>= 1'"),
    ("channels: [c]\ndependencies:\n  - numpy\n  - {conda: [x]}\n", 4, "dependency (conda)"),
    ("channels: [c]\ndependencies:\n  - pip:\n    - ok\n    - [nested]\n", 5, "pip: entry"),
    ("channels: [c]\ndependencies:\n  - pip:\n    - torch --index-url https://x.example\n", 4, "--index-url"),
    ("channels: [c]\ndependencies: numpy\n", 2, "dependencies"),
    ("channels: conda-forge\ndependencies: [numpy]\n", 1, "channels"),
    ("channels: [nodefaults]\ndependencies: [numpy]\n", 1, "channels"),
    ("channels: ['conda forge']\ndependencies: [numpy]\n", 1, "channel 'conda forge'"),
    ("channels: [c]\ndependencies: [numpy]\nvariables: [A]\n", 3, "variables"),
    ("channels: [c]\ndependencies: [numpy]\nvariables:\n  A: [1]\n", 4, "variables.A"),
    ("channels: [c]\ndependencies:\n  - &a numpy\n  - *a\n", 3, "a YAML alias (*name)"),  # the anchored value
    ("channels: [c]\ndependencies:\n  - numpy\n  scipy: 1\n", 4, "YAML"),
    ("dependencies:\n  - numpy\n\tbad\n", 3, "YAML"),
    ("- numpy\n", 1, "the document"),
])
def test_refusals_name_the_line(text, line, construct):
    with pytest.raises(RequestFileError) as err:
        parse_text(text)
    assert str(err.value).startswith(f"environment.yml:{line}: {construct}: "), str(err.value)
    assert err.value.hint


def test_an_alias_bomb_is_refused_at_once():
    bomb = "a: &a [x, x]\nb: &b [*a, *a]\nc: &c [*b, *b]\nd: &d [*c, *c]\ndependencies: [*d, *d]\n"
    with pytest.raises(RequestFileError, match="YAML alias"):
        parse_text(bomb)


def test_the_spec_parser_agrees_with_rattler_on_every_real_spec():
    from pathlib import Path

    from cuenv.recipes.envyml import parse_file

    for path in sorted((Path(__file__).parent / "fixtures").rglob("*.y*ml")):
        if path.name == "SOURCES.yaml":
            continue
        for spec in parse_file(path).specs:
            assert rattler.MatchSpec(spec.text).name.normalized == spec.name
