"""cuenv.engines.mirrors: the map from upstreams to mirrors, its parsers and what users' tools say."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from cuenv.engines import mirrors as m
from cuenv.errors import UsageError

TUNA = "https://mirrors.example.edu.cn/anaconda/cloud"
PYPI_MIRROR = "https://mirrors.example.edu.cn/pypi/web/simple"


def rules(*pairs: tuple[str, str], source: str = "test") -> m.Mirrors:
    return m.merge([(source, [(m.upstream_url(k), v) for k, v in pairs])])


# -- parsing -----------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("key", "url"),
    [
        ("pypi", "https://pypi.org/simple"),
        ("pytorch", "https://download.pytorch.org/whl"),
        ("paddle", "https://www.paddlepaddle.org.cn/packages"),
        ("conda", "https://conda.anaconda.org"),
        ("conda-forge", "https://conda.anaconda.org/conda-forge"),
        ("nvidia", "https://conda.anaconda.org/nvidia"),
        ("https://download.pytorch.org/whl/cu121/", "https://download.pytorch.org/whl/cu121"),
    ],
)
def test_upstream_names(key: str, url: str) -> None:
    assert m.upstream_url(key) == url


@pytest.mark.parametrize("bad", ["ftp://x/y", "not a name", "", "https://"])
def test_bad_upstreams_are_refused(bad: str) -> None:
    with pytest.raises(ValueError):
        m.upstream_url(bad)


def test_pairs_from_a_mapping_a_string_and_a_list() -> None:
    want = (("https://pypi.org/simple", PYPI_MIRROR), ("https://conda.anaconda.org", TUNA))
    assert m.parse_pairs({"pypi": PYPI_MIRROR + "/", "conda": TUNA}) == want
    assert m.parse_pairs(f"pypi={PYPI_MIRROR}, conda={TUNA}") == want
    assert m.parse_pairs(f"pypi={PYPI_MIRROR}\nconda={TUNA}") == want
    assert m.parse_pairs([f"pypi={PYPI_MIRROR}", f"conda={TUNA}"]) == want


@pytest.mark.parametrize("bad", ["pypi", "pypi=", "pypi=mirror.example", 42, ["pypi"], {"pypi": 3}])
def test_bad_pairs_are_refused(bad: object) -> None:
    with pytest.raises(ValueError):
        m.parse_pairs(bad)


def test_resolve_names_the_source_of_a_bad_value(tmp_path: Path) -> None:
    with pytest.raises(UsageError, match="Bad mirror from environment CUENV_MIRRORS: 'pypi' is not UPSTREAM=MIRROR"):
        m.resolve(env_value="pypi", environ={})


def test_stronger_layers_win_per_upstream(tmp_path: Path) -> None:
    found = m.resolve(flag=["pypi=https://flag.example/simple"], env_value=f"conda={TUNA}",
                      file_value={"pypi": "https://file.example/simple", "conda-forge": "https://file.example/cf"},
                      config_file=tmp_path / "c.yaml", environ={"HOME": str(tmp_path)})
    assert [(r.upstream, r.mirror, r.source) for r in found.rules] == [
        ("https://conda.anaconda.org", TUNA, "environment CUENV_MIRRORS"),
        ("https://conda.anaconda.org/conda-forge", "https://file.example/cf", f"config file {tmp_path / 'c.yaml'}"),
        ("https://pypi.org/simple", "https://flag.example/simple", "flag --mirror"),
    ]


# -- rewriting -----------------------------------------------------------------------------------------
def test_longest_prefix_wins_both_ways() -> None:
    mirrors = rules(("conda", TUNA), ("conda-forge", "https://cf.example/conda-forge"))
    url = "https://conda.anaconda.org/conda-forge/linux-64/python-3.11.9-h0_0.conda"
    assert mirrors.to_mirror(url) == "https://cf.example/conda-forge/linux-64/python-3.11.9-h0_0.conda"
    assert mirrors.to_mirror("https://conda.anaconda.org/nvidia/noarch/repodata.json") == f"{TUNA}/nvidia/noarch/repodata.json"
    assert mirrors.to_upstream(f"{TUNA}/nvidia/noarch/x.conda") == "https://conda.anaconda.org/nvidia/noarch/x.conda"
    assert mirrors.to_mirror("https://conda.anaconda.org.evil/x") == "https://conda.anaconda.org.evil/x"  # not a path prefix
    assert mirrors.to_mirror("https://pypi.org/simple/torch/") == "https://pypi.org/simple/torch/"


@given(st.lists(st.from_regex(r"[a-z0-9._-]{1,12}", fullmatch=True), max_size=5),
       st.sampled_from(["conda", "conda-forge", "pytorch", "pypi"]))
def test_rewriting_there_and_back_is_the_identity(parts: list[str], key: str) -> None:
    mirrors = rules((key, "http://127.0.0.1:8000/mirror/" + key))
    url = "/".join([m.upstream_url(key), *parts])
    assert mirrors.to_upstream(mirrors.to_mirror(url)) == url


def test_pypi_files_map_back_to_pypi() -> None:
    mirrors = rules(("pypi", "http://127.0.0.1:9/simple"))
    tail = "eb/d5/c68b1d2cdfcc59e72e8a5949a37ddb22ae6cade80cd4a57a84d4c8b55472/nvidia_cuda_runtime_cu12-12.1.105-py3-none-manylinux1_x86_64.whl"
    assert mirrors.pypi_file(f"http://127.0.0.1:9/packages/{tail}#sha256=00", index="http://127.0.0.1:9/simple",
                             project="nvidia-cuda-runtime-cu12") == f"https://files.pythonhosted.org/packages/{tail}"
    # a mirror that keeps no PyPI path: the lock names the project on the canonical index
    assert mirrors.pypi_file("http://127.0.0.1:9/files/x-1-py3-none-any.whl", index="http://127.0.0.1:9/simple",
                             project="X_y") == "https://pypi.org/simple/x-y/"
    # a vendor index mirrored by prefix
    torch = rules(("pytorch", "https://mirror.example/pytorch-wheels"))
    assert torch.pypi_file("https://mirror.example/pytorch-wheels/cu121/torch-2.4.1%2Bcu121-cp311-cp311-linux_x86_64.whl",
                           index="https://mirror.example/pytorch-wheels/cu121", project="torch") == \
        "https://download.pytorch.org/whl/cu121/torch-2.4.1%2Bcu121-cp311-cp311-linux_x86_64.whl"


# -- what users already told their tools ------------------------------------------------------------------
def test_uv_pip_and_conda_settings_are_found_with_their_source(tmp_path: Path) -> None:
    home = tmp_path / "home"
    (home / ".config" / "pip").mkdir(parents=True)
    (home / ".config" / "pip" / "pip.conf").write_text(
        "[global]\nindex-url = https://pip.example/simple\nextra-index-url = https://extra.example/simple\n")
    (home / ".condarc").write_text(f"channel_alias: {TUNA}\ncustom_channels:\n  pytorch: https://pt.example/cloud\n")
    environ = {"HOME": str(home), "XDG_CONFIG_DIRS": str(tmp_path / "none"), "UV_DEFAULT_INDEX": "https://uv.example/simple"}
    found = m.resolve(environ=environ)
    assert [(r.upstream, r.mirror, r.source) for r in found.rules] == [
        ("https://conda.anaconda.org", TUNA, f"conda: {home / '.condarc'} channel_alias"),
        ("https://conda.anaconda.org/pytorch", "https://pt.example/cloud/pytorch", f"conda: {home / '.condarc'} custom_channels"),
        ("https://pypi.org/simple", "https://uv.example/simple", "uv: environment UV_DEFAULT_INDEX"),
    ]
    del environ["UV_DEFAULT_INDEX"]
    assert m.resolve(environ=environ).rule_for("https://pypi.org/simple/torch/").source == \
        f"pip: {home / '.config' / 'pip' / 'pip.conf'}"
    assert m.resolve(environ=dict(environ, PIP_CONFIG_FILE=os.devnull)).rule_for("https://pypi.org/simple") is None
    assert not m.resolve(environ=environ, from_tools=False)


def test_uv_toml_default_index(tmp_path: Path) -> None:
    (tmp_path / "uv").mkdir()
    (tmp_path / "uv" / "uv.toml").write_text('[[index]]\nname = "corp"\nurl = "https://corp.example/simple"\ndefault = true\n')
    environ = {"HOME": str(tmp_path), "XDG_CONFIG_HOME": str(tmp_path), "PIP_CONFIG_FILE": os.devnull}
    rule = m.resolve(environ=environ).rule_for("https://pypi.org/simple")
    assert rule is not None and (rule.mirror, rule.source) == ("https://corp.example/simple", f"uv: {tmp_path / 'uv' / 'uv.toml'}")


def test_broken_tool_files_are_ignored(tmp_path: Path) -> None:
    (tmp_path / ".condarc").write_text("channel_alias: [unclosed\n")
    (tmp_path / ".pip").mkdir()
    (tmp_path / ".pip" / "pip.conf").write_text("index-url without a section\n")
    assert not m.resolve(environ={"HOME": str(tmp_path), "PIP_CONFIG_FILE": os.devnull, "XDG_CONFIG_HOME": str(tmp_path)})


def test_a_condarc_past_the_yaml_limits_is_ignored_like_a_broken_one(tmp_path: Path) -> None:
    # nine levels of ten aliases each: a billion strings once expanded (cuenv.trust.limits refuses it)
    bomb = ["a0: &a0 [x, x, x, x, x, x, x, x, x, x]"]
    bomb += [f"a{i}: &a{i} [{', '.join([f'*a{i - 1}'] * 10)}]" for i in range(1, 9)]
    (tmp_path / ".condarc").write_text("\n".join(bomb) + "\nchannel_alias: https://mirror.example/conda\n")
    assert not m.resolve(environ={"HOME": str(tmp_path), "PIP_CONFIG_FILE": os.devnull, "XDG_CONFIG_HOME": str(tmp_path)})


def test_channel_urls() -> None:
    assert m.channel_url("conda-forge") == "https://conda.anaconda.org/conda-forge"
    assert m.channel_url("nvidia/label/cuda-11.8.0") == "https://conda.anaconda.org/nvidia/label/cuda-11.8.0"
    assert m.upstream_url("nvidia/label/cuda-11.8.0") == "https://conda.anaconda.org/nvidia/label/cuda-11.8.0"
    assert m.channel_url("https://repo.example/ch/") == "https://repo.example/ch"


def test_uv_index_env_drops_index_variables() -> None:
    env = {"UV_DEFAULT_INDEX": "a", "UV_INDEX_URL": "b", "UV_INDEX": "c", "PIP_INDEX_URL": "d", "HOME": "/h"}
    assert m.uv_index_env(env) == {"HOME": "/h"}


def test_an_empty_uv_variable_reaches_uv_as_unset() -> None:
    """`UV_OFFLINE=` in the shell: uv itself refuses an empty boolean; cuenv passes it on as unset."""
    import subprocess

    from uv import find_uv_bin

    env = {"UV_OFFLINE": "", "UV_NO_PROGRESS": "1", "EMPTY": "", "HOME": "/h"}
    kept = m.uv_index_env(env)
    assert kept == {"UV_NO_PROGRESS": "1", "EMPTY": "", "HOME": "/h"}
    def compile_nothing(env: dict[str, str]) -> subprocess.CompletedProcess[str]:
        return subprocess.run([find_uv_bin(), "pip", "compile", "--no-header", "/dev/null"], capture_output=True, text=True,
                              env={**env, "PATH": "/usr/bin", "UV_NO_CONFIG": "1", "UV_NO_CACHE": "1"}, check=False)

    assert compile_nothing({"UV_OFFLINE": ""}).returncode != 0  # what passing it on would do
    assert compile_nothing({k: v for k, v in kept.items() if k.startswith("UV_")}).returncode == 0
