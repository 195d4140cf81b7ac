"""The foreign lockfile readers on small made-up files: every refusal, and properties over generated input.

Everything in a lockfile is untrusted: a reader either returns a fully validated ForeignLock or
refuses with one ForeignLockError naming the file, line and key. Nothing else may escape, whatever
the input (hypothesis).
"""

from __future__ import annotations

import copy
import hashlib
from typing import Any

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from cuenv.lock import foreign
from cuenv.lock.foreign import condalock, explicit, pixi, pylock, uvlock
from cuenv.lock.foreign.model import ForeignLockError, load_toml

SHA = "a" * 64
MD5 = "b" * 32
CH = "https://conda.anaconda.org/conda-forge"


def conda_lock_doc(packages: list[dict] | None = None, platforms: tuple[str, ...] = ("linux-64",)) -> dict:
    pkgs = packages if packages is not None else [
        {"name": "cuda-cudart", "version": "12.1.105", "manager": "conda", "platform": "linux-64",
         "dependencies": {"cuda-version": ">=12.1,<12.2.0a0"}, "url": f"{CH}/linux-64/cuda-cudart-12.1.105-h0_0.conda",
         "hash": {"md5": MD5, "sha256": SHA}, "category": "main", "optional": False},
        {"name": "cuda-version", "version": "12.1", "manager": "conda", "platform": "linux-64",
         "dependencies": {"__cuda": ">=12"}, "url": f"{CH}/noarch/cuda-version-12.1-h1d6eff3_3.conda",
         "hash": {"md5": MD5}, "category": "main", "optional": False},
    ]
    return {"version": 1, "metadata": {"content_hash": {}, "channels": [{"url": "conda-forge", "used_env_vars": []}],
                                       "platforms": list(platforms), "sources": ["environment.yml"]}, "package": pkgs}


def read_conda_lock(doc: Any, platform: str = "linux-64"):
    text = doc if isinstance(doc, str) else yaml.safe_dump(doc, sort_keys=False)
    return condalock.parse(text, file="conda-lock.yml", platform=platform)


def refusal(call, *args, **kwargs) -> ForeignLockError:
    with pytest.raises(ForeignLockError) as caught:
        call(*args, **kwargs)
    assert "\n" not in caught.value.message and caught.value.hint
    return caught.value


# -- conda-lock -------------------------------------------------------------------------------
def test_conda_lock_minimal() -> None:
    found = read_conda_lock(conda_lock_doc())
    derived = foreign.describe(found)
    assert [(p.name, p.version, p.build, p.subdir, p.channel) for p in found.packages] == [
        ("cuda-cudart", "12.1.105", "h0_0", "linux-64", CH), ("cuda-version", "12.1", "h1d6eff3_3", "noarch", CH)]
    assert found.depends["cuda-version"] == ("__cuda >=12",)
    assert (derived.stack.cuda, derived.conflicts) == ("12.1", ())  # __cuda >=12 agrees with 12.1


@pytest.mark.parametrize(("change", "says", "line"), [
    (lambda d: d.update(version=2), "conda-lock schema version 2 is not one cuenv reads", 1),
    (lambda d: d["package"][1].update(url="ftp://x.org/noarch/cuda-version-12.1-h1d6eff3_3.conda"), "is not http(s) or file", 30),
    (lambda d: d["package"][1].update(url=f"{CH}/noarch/../cuda-version-12.1-h1d6eff3_3.conda"), "climbs out of its folder", 30),
    (lambda d: d["package"][1].update(url="https://u:pw@x.org/noarch/cuda-version-12.1-h1d6eff3_3.conda"), "carries credentials", 30),
    (lambda d: d["package"][1].update(url="https://${TOKEN}@x.org/noarch/cuda-version-12.1-h1d6eff3_3.conda"), "holds a template", 30),
    (lambda d: d["package"][1]["hash"].update(md5="xyz"), "md5 'xyz' is not a md5 hex digest", 31),
    (lambda d: d["package"][1].update(hash={}), "has no sha256 or md5", 31),
    (lambda d: d["package"][1].update(version="12.2"), "the file cuda-version-12.1-h1d6eff3_3.conda is not cuda-version-12.2-h1d6eff3_3", 30),
    (lambda d: d["package"][1].update(name="Bad Name"), "must be a non-empty string without spaces", 24),
    (lambda d: d["package"][1].update(manager="npm"), "manager 'npm' is neither conda nor pip", 26),
    (lambda d: d["package"][1].update(url=f"{CH}/noarch/cuda-version-12.1-h1d6eff3_3.zip"), "is not a conda package archive", 30),
])
def test_conda_lock_refusals_name_the_line(change, says: str, line: int) -> None:
    doc = conda_lock_doc()
    change(doc)
    error = refusal(read_conda_lock, doc)
    assert says in error.message
    assert error.message.startswith(f"conda-lock.yml, line {line} ")


def test_yaml_aliases_are_refused() -> None:
    text = yaml.safe_dump(conda_lock_doc(), sort_keys=False).replace("  dependencies:\n    cuda-version", "  dependencies: &d\n    cuda-version", 1)
    text = text.replace("  dependencies:\n    __cuda: '>=12'", "  dependencies: *d", 1)
    error = refusal(read_conda_lock, text)
    assert error.message == "conda-lock.yml, line 16: YAML anchors and aliases (&name, *name) are not read in a lockfile."


def test_conda_lock_platform_choice() -> None:
    error = refusal(read_conda_lock, conda_lock_doc(), platform="win-64")
    assert "it has no packages for win-64 (it holds linux-64)" in error.message
    assert error.hint == "Choose one with --platform (linux-64), or lock for win-64: `conda-lock lock -p win-64`."


def test_conda_lock_pip_sdist_and_optional_categories() -> None:
    doc = conda_lock_doc()
    doc["package"] += [
        {"name": "flash-attn", "version": "2.5.0", "manager": "pip", "platform": "linux-64", "dependencies": {},
         "url": "https://files.pythonhosted.org/packages/aa/flash_attn-2.5.0.tar.gz", "hash": {"sha256": SHA},
         "category": "main", "optional": False},
        {"name": "pytest", "version": "8.0.0", "manager": "conda", "platform": "linux-64", "dependencies": {},
         "url": f"{CH}/noarch/pytest-8.0.0-pyhd8ed1ab_0.conda", "hash": {"md5": MD5}, "category": "test", "optional": True},
    ]
    found = read_conda_lock(doc)
    assert [u.name for u in found.unusable] == ["flash-attn"] and "pytest" not in {p.name for p in found.packages}
    assert found.notes == ("left out the optional category 'test' (conda-lock installs it with --extras test)",)


def test_conda_lock_pip_vcs_checkout_is_described_not_refused() -> None:
    """held-out-9 (tardis-sn/stardis): conda-lock writes a pip package from git as its git URL, with the commit
    in the sha256 field. The lock is still read (what it needs is in its conda part); the package is named as
    one cuenv would not install, as an sdist is, never fetched."""
    commit = "cfce38d0d8945fea0f8ebcde8e22639ec8e71872"
    doc = conda_lock_doc()
    doc["package"].append({"name": "tardis", "version": "2023.10.20", "manager": "pip", "platform": "linux-64",
                           "dependencies": {"astropy": "*"}, "url": f"git+https://github.com/tardis-sn/tardis@{commit}",
                           "hash": {"sha256": commit}, "category": "main", "optional": False,
                           "source": {"type": "url", "url": f"git+https://github.com/tardis-sn/tardis@{commit}"}})
    found = read_conda_lock(doc)
    assert [(u.name, u.why) for u in found.unusable] == [
        ("tardis", "is locked as a VCS checkout: installing it would run its build code.")]
    assert "tardis" not in {p.name for p in found.packages}
    doc["package"][-1]["url"] = "ftp://example.org/tardis.whl"  # any other scheme is still refused
    assert "is not http(s) or file" in refusal(read_conda_lock, doc).message


# -- pixi ---------------------------------------------------------------------------------------
def pixi_doc(version: int = 6) -> dict:
    url = f"{CH}/linux-64/cuda-cudart-12.1.105-h0_0.conda"
    wheel = "https://files.pythonhosted.org/packages/aa/bb/nvidia_cuda_runtime_cu12-12.1.105-py3-none-manylinux1_x86_64.whl"
    env = {"channels": [{"url": CH + "/"}], "indexes": ["https://pypi.org/simple"],
           "packages": {"linux-64": [{"conda": url}, {"pypi": wheel}]}}
    if version >= 6:
        packages = [{"conda": url, "sha256": SHA, "md5": MD5, "depends": ["__cuda >=12"]},
                    {"pypi": wheel, "name": "nvidia-cuda-runtime-cu12", "version": "12.1.105", "sha256": SHA}]
    else:
        packages = [{"kind": "conda", "name": "cuda-cudart", "version": "12.1.105", "build": "h0_0",
                     "subdir": "linux-64", "url": url, "sha256": SHA, "md5": MD5},
                    {"kind": "pypi", "name": "nvidia-cuda-runtime-cu12", "version": "12.1.105", "url": wheel,
                     "sha256": SHA}]
    doc: dict = {"version": version, "environments": {"default": env}, "packages": packages}
    if version == 7:
        doc = {"version": 7, "platforms": [{"name": "cuda", "subdir": "linux-64", "virtual-packages": ["__cuda=12"]}],
               "environments": {"default": {**env, "packages": {"cuda": env["packages"]["linux-64"]}}},
               "packages": packages}
    return doc


def read_pixi(doc: Any, platform: str = "linux-64", environment: str | None = None):
    text = doc if isinstance(doc, str) else yaml.safe_dump(doc, sort_keys=False)
    return pixi.parse(text, file="pixi.lock", platform=platform, environment=environment)


def test_an_explicit_local_file_is_in_no_subdir() -> None:
    """held-out-16 (STPOTR): `file:///home/me/Downloads/cudatoolkit-...tar.bz2` was read as "built for Downloads";
    a folder is a subdir only where conda's rules name one (rattler's Platform)."""
    text = ("# platform: linux-64\n@EXPLICIT\n"
            "file:///home/me/Downloads/cudatoolkit-11.1.1-ha002fc5_10.tar.bz2\n"
            "https://conda.anaconda.org/conda-forge/linux-64/python-3.11.9-hb806964_0_cpython.conda\n"
            "https://conda.anaconda.org/conda-forge/noarch/tzdata-2024a-h0c530f3_0.conda\n")
    lock = explicit.parse(text, file="spec-file.txt", platform="linux-64")
    subdirs = {p.name: p.subdir for p in lock.packages}
    assert subdirs == {"cudatoolkit": None, "python": "linux-64", "tzdata": "noarch"}
    with pytest.raises(ForeignLockError, match="is built for osx-arm64, not linux-64"):
        explicit.parse(text + "https://conda.anaconda.org/conda-forge/osx-arm64/libcxx-14.0.6-h2692d47_0.conda\n",
                       file="spec-file.txt", platform="linux-64")


@pytest.mark.parametrize("version", [4, 5, 6, 7])
def test_pixi_versions_read_alike(version: int) -> None:
    found = read_pixi(pixi_doc(version))
    assert [(p.kind, p.name, p.version) for p in found.packages] == [
        ("conda", "cuda-cudart", "12.1.105"), ("pypi", "nvidia-cuda-runtime-cu12", "12.1.105")]
    assert found.packages[1].index_url == "https://pypi.org/simple"
    assert foreign.describe(found).stack.cuda == "12.1"


@pytest.mark.parametrize("version", [2, 3])
def test_a_pixi_lock_before_format_4_is_a_pixi_lock_read_by_rattler(version: int) -> None:
    """pixi's locks before format 4 kept conda-lock's shape (``metadata:``, ``package:``) with ``version: 3``
    (held-out-14, jaxsim): cuenv took them for conda-lock files of an unknown version; py-rattler reads them."""
    entry = {"platform": "linux-64", "name": "cuda-cudart", "version": "12.1.105", "category": "main", "manager": "conda",
             "dependencies": [], "url": "https://conda.anaconda.org/nvidia/linux-64/cuda-cudart-12.1.105-0.tar.bz2",
             "hash": {"md5": MD5, "sha256": SHA}, "build": "0", "subdir": "linux-64"}
    text = yaml.safe_dump({"version": version, "metadata": {"content_hash": {"linux-64": SHA}, "channels": [
        {"url": "https://conda.anaconda.org/nvidia/", "used_env_vars": []}], "platforms": ["linux-64"], "sources": []},
        "package": [entry]}, sort_keys=False)
    assert foreign.detect("pixi.lock", text) == foreign.detect("anything.lock", text) == "pixi-lock"
    found = read_pixi(text)
    assert [(p.name, p.version) for p in found.packages] == [("cuda-cudart", "12.1.105")]
    assert foreign.describe(found).stack.cuda == "12.1"
    assert foreign.detect("conda-lock.yml", text.replace(f"version: {version}", "version: 1")) == "conda-lock"


def test_pixi_refusals() -> None:
    assert "Upgrade cuenv" in refusal(read_pixi, {**pixi_doc(), "version": 8}).hint
    old = refusal(read_pixi, {**pixi_doc(), "version": 3})  # rattler reads 1-3 as conda-lock's layout
    assert "not a pixi lockfile cuenv reads: missing field `metadata`" in old.message
    assert old.hint.startswith("Regenerate it with `pixi lock`")
    error = refusal(read_pixi, pixi_doc(), environment="cuda")
    assert "it has no environment 'cuda' (it has default)" in error.message
    assert error.hint == "Choose one with --environment default."
    error = refusal(read_pixi, pixi_doc(), platform="osx-arm64")
    assert "environment 'default' has no packages for osx-arm64 (it has linux-64)" in error.message
    doc = pixi_doc()
    doc["packages"] = doc["packages"][1:]
    assert "refers to a package that does not exist" in refusal(read_pixi, doc).message  # rattler's own words


def test_pixi_pypi_url_with_a_sha256_fragment_is_that_wheel_and_hash() -> None:
    """pixi writes a wheel URL from an index page with its ``#sha256=`` fragment (issue 25 §3)."""
    doc = pixi_doc(6)
    wheel = doc["packages"][1]
    wheel["pypi"] += "#sha256=" + "C" * 64
    del wheel["sha256"]
    doc["environments"]["default"]["packages"]["linux-64"][1]["pypi"] = wheel["pypi"]
    found = read_pixi(doc)
    runtime = found.packages[1]
    assert runtime.url.endswith("manylinux1_x86_64.whl") and runtime.sha256 == "c" * 64


def test_pixi_empty_default_names_the_other_environments() -> None:
    doc = pixi_doc(6)
    env = doc["environments"]["default"]
    doc["environments"] = {"default": {"channels": copy.deepcopy(env["channels"]), "packages": {}}, "cuda": env,
                           "cpu": copy.deepcopy(env)}
    error = refusal(read_pixi, doc)
    assert error.message == "pixi.lock (environments.default): environment 'default' locks no packages; " \
        "it locks environments cpu, cuda."
    assert error.hint == "Choose one with --environment cpu (or cuda)."
    found = read_pixi(doc, environment="cpu")
    assert found.environment == "cpu" and len(found.packages) == 2
    assert found.notes == ("read environment cpu; it also locks cuda (--environment picks one)",)


def test_pixi_names_what_else_it_locks() -> None:
    doc = pixi_doc(6)
    env = doc["environments"]["default"]
    env["packages"]["osx-arm64"] = [copy.deepcopy(env["packages"]["linux-64"][1])]
    doc["environments"]["cuda"] = copy.deepcopy(env)
    found = read_pixi(doc)
    assert found.notes == ("read for platform linux-64; it also locks osx-arm64 (--platform picks one)",
                           "read environment default; it also locks cuda (--environment picks one)")


def test_pixi_source_packages_are_described_not_built() -> None:
    doc = pixi_doc(7)
    doc["environments"]["default"]["packages"]["cuda"].append({"conda_source": "mypkg[abc123] @ ."})
    doc["packages"].append({"conda_source": "mypkg[abc123] @ .", "version": "0.1.0", "build": "h0_0",
                            "subdir": "linux-64"})
    found = read_pixi(doc, platform="cuda")
    assert [u.name for u in found.unusable] == ["mypkg"]
    with pytest.raises(ForeignLockError, match="mypkg is built from source by pixi"):
        foreign.require_installable(found)


# -- pylock.toml --------------------------------------------------------------------------------
PYLOCK = """\
lock-version = "1.0"
created-by = "uv"
requires-python = ">=3.9"

[[packages]]
name = "nvidia-cuda-runtime-cu12"
version = "12.1.105"
index = "https://pypi.org/simple"
wheels = [
    {{ url = "https://files.pythonhosted.org/packages/aa/nvidia_cuda_runtime_cu12-12.1.105-py3-none-win_amd64.whl", hashes = {{ sha256 = "{sha}" }} }},
    {{ url = "https://files.pythonhosted.org/packages/bb/nvidia_cuda_runtime_cu12-12.1.105-py3-none-manylinux1_x86_64.whl", hashes = {{ sha256 = "{sha}" }} }},
]

[[packages]]
name = "colorama"
version = "0.4.6"
marker = "sys_platform == 'win32'"
wheels = [{{ url = "https://files.pythonhosted.org/packages/cc/colorama-0.4.6-py2.py3-none-any.whl", hashes = {{ sha256 = "{sha}" }} }}]
{extra}"""


def read_pylock(text: str, platform: str = "linux-64", python: str = "3.11"):
    return pylock.parse(text, file="pylock.toml", platform=platform, python=python)


def test_pylock_picks_wheels_and_markers_for_the_target() -> None:
    linux = read_pylock(PYLOCK.format(sha=SHA, extra=""))
    assert [p.filename for p in linux.packages] == ["nvidia_cuda_runtime_cu12-12.1.105-py3-none-manylinux1_x86_64.whl"]
    windows = read_pylock(PYLOCK.format(sha=SHA, extra=""), platform="win-64")
    assert [p.name for p in windows.packages] == ["colorama", "nvidia-cuda-runtime-cu12"]
    assert windows.packages[1].filename.endswith("win_amd64.whl")


def test_pylock_refusals() -> None:
    error = refusal(read_pylock, PYLOCK.format(sha=SHA, extra="").replace('"1.0"', '"2.0"'))
    assert error.message == "pylock.toml (lock-version): pylock version 2.0 is not supported (cuenv reads 1.x, PEP 751)."
    error = refusal(read_pylock, PYLOCK.format(sha=SHA, extra=""), python="3.8")
    assert "it needs Python >=3.9, not 3.8" in error.message and error.hint == "Choose a Python it allows (>=3.9) with --python."
    error = refusal(read_pylock, PYLOCK.format(sha="nothex", extra=""))
    assert error.message.startswith("pylock.toml, line 5 (packages[0].hash): sha256 'nothex' is not a sha256")
    error = refusal(read_pylock, PYLOCK.format(sha=SHA, extra="").replace(
        'manylinux1_x86_64.whl", hashes', 'manylinux1_x86_64.whl", size = -3, hashes'))
    assert "(packages[0].size): size -3 is not a byte count" in error.message
    error = refusal(read_pylock, PYLOCK.format(sha=SHA, extra="").replace("[[packages]]", "[[packages]", 1))
    assert error.message.startswith("pylock.toml, line 5: broken TOML")


def test_pylock_requires_python_of_one_patch_release() -> None:
    """held-out-9 (kyutai-labs/moshi): requires-python ==3.12.8 admits Python 3.12 (its 3.12.8), which
    3.12.0 alone does not; the lock is read for 3.12 with python_full_version 3.12.8 in its markers."""
    from cuenv.lock import foreign

    text = PYLOCK.format(sha=SHA, extra="").replace('requires-python = ">=3.9"', 'requires-python = "==3.12.8"')
    text = text.replace("marker = \"sys_platform == 'win32'\"", "marker = \"python_full_version >= '3.12.8'\"")
    assert [p for p, _ in foreign.pythons(text, "pylock", "3.11")] == ["3.12"]
    found = pylock.parse(text, file="pylock.toml", platform="linux-64", python="3.12")
    assert {p.name for p in found.packages} == {"nvidia-cuda-runtime-cu12", "colorama"}
    error = refusal(read_pylock, text, python="3.11")
    assert "it needs Python ==3.12.8, not 3.11" in error.message and "--python" in error.hint


def test_pylock_with_wheels_only_for_another_platform_says_so() -> None:
    """held-out-11 (cdisc-rules-engine): a pylock.toml written on Windows holds win_amd64 wheels and each
    package's sdist; read for linux-64 it takes the sdists (cuenv would not build them), and a note names
    the target the wheels are for, with the command that reads the lock for it."""
    text = ('lock-version = "1.0"\ncreated-by = "uv"\nrequires-python = ">=3.12"\n\n[[packages]]\nname = "numpy"\n'
            'version = "2.3.1"\nindex = "https://pypi.org/simple"\n'
            f'sdist = {{ url = "https://files.pythonhosted.org/numpy-2.3.1.tar.gz", hashes = {{ sha256 = "{SHA}" }} }}\n'
            f'wheels = [{{ url = "https://files.pythonhosted.org/numpy-2.3.1-cp312-cp312-win_amd64.whl", hashes = {{ sha256 = "{SHA}" }} }}]\n')
    found = pylock.parse(text, file="pylock.toml", platform="linux-64", python="3.12")
    assert [u.name for u in found.unusable] == ["numpy"]
    assert found.notes[-1] == ("packages with wheels only for other targets (1; Python 3.12 on win-64 first) would be built "
                               "from their sdists on linux-64; `cuenv check pylock.toml --platform win-64 --python 3.12` "
                               "reads it for the target its wheels are for")
    windows = pylock.parse(text, file="pylock.toml", platform="win-64", python="3.12")  # the note's command, in effect
    assert [p.name for p in windows.packages] == ["numpy"] and not windows.unusable


def test_pylock_sdists_and_paths() -> None:
    extra = ('\n[[packages]]\nname = "chess"\nversion = "1.11.2"\n'
             f'sdist = {{ url = "https://files.pythonhosted.org/chess-1.11.2.tar.gz", hashes = {{ sha256 = "{SHA}" }} }}\n'
             '\n[[packages]]\nname = "local"\nversion = "1.0"\n'
             f'wheels = [{{ path = "dist/local-1.0-py3-none-any.whl", hashes = {{ sha256 = "{SHA}" }} }}]\n')
    found = pylock.parse(PYLOCK.format(sha=SHA, extra=extra), file="/proj/pylock.toml", platform="linux-64", python="3.11")
    assert [(u.name, u.where.line) for u in found.unusable] == [("chess", 20)]
    assert "local" in {p.name for p in found.packages}
    assert next(p for p in found.packages if p.name == "local").url == "file:///proj/dist/local-1.0-py3-none-any.whl"


# -- uv.lock --------------------------------------------------------------------------------------
UVLOCK = """\
version = 1
revision = 3
requires-python = ">=3.10"

[[package]]
name = "app"
version = "0.1.0"
source = {{ editable = "." }}
dependencies = [
    {{ name = "nvidia-cuda-runtime-cu12", marker = "sys_platform == 'linux'" }},
    {{ name = "pkg-from-git" }},
]

[package.dev-dependencies]
dev = [{{ name = "colorama" }}]

[[package]]
name = "colorama"
version = "0.4.6"
source = {{ registry = "https://pypi.org/simple" }}
wheels = [{{ url = "https://files.pythonhosted.org/packages/cc/colorama-0.4.6-py2.py3-none-any.whl", hash = "sha256:{sha}" }}]

[[package]]
name = "nvidia-cuda-runtime-cu12"
version = "12.1.105"
source = {{ registry = "https://pypi.org/simple" }}
wheels = [{{ url = "https://files.pythonhosted.org/packages/bb/nvidia_cuda_runtime_cu12-12.1.105-py3-none-manylinux1_x86_64.whl", hash = "sha256:{sha}" }}]

[[package]]
name = "pkg-from-git"
version = "1.0"
source = {{ git = "https://github.com/x/y?rev=main#{commit}" }}
"""


def test_uv_lock_graph() -> None:
    found = uvlock.parse(UVLOCK.format(sha=SHA, commit="c" * 40), file="uv.lock", platform="linux-64", python="3.11")
    assert [p.name for p in found.packages] == ["colorama", "nvidia-cuda-runtime-cu12"]
    assert [(u.name, u.where.line) for u in found.unusable] == [("pkg-from-git", 29)]
    mac = uvlock.parse(UVLOCK.format(sha=SHA, commit="c" * 40), file="uv.lock", platform="osx-arm64", python="3.11")
    assert [p.name for p in mac.packages] == ["colorama"]
    error = refusal(uvlock.parse, UVLOCK.format(sha=SHA, commit="c" * 40).replace('{ editable = "." }', '{ registry = "x" }'),
                    file="uv.lock", platform="linux-64", python="3.11")
    assert "no workspace package" in error.message


# A workspace: a member named before the root in the lock (uv lists packages by name), no pyproject.toml beside
MEMBER = """
[[package]]
name = "aaa-member"
version = "0.1.0"
source = {{ editable = "envs/aaa" }}
dependencies = [{{ name = "colorama" }}]
"""


def test_a_workspace_lock_alone_is_read_for_its_root() -> None:
    """`uv sync` installs the workspace root (the package at "."), not the member uv lists first
    (prime-rl's uv.lock: 94 members, 'aime24' first, torch only in the root's dependencies)."""
    head, first, rest = UVLOCK.format(sha=SHA, commit="c" * 40).partition("[[package]]")
    text = head + MEMBER.format().lstrip() + "\n" + first + rest
    found = uvlock.parse(text, file="uv.lock", platform="linux-64", python="3.11")
    assert [p.name for p in found.packages] == ["colorama", "nvidia-cuda-runtime-cu12"]
    virtual = text.replace('{ editable = "." }', '{ editable = "apps/app" }')
    error = refusal(uvlock.parse, virtual, file="uv.lock", platform="linux-64", python="3.11")
    assert "workspace root is not a package, and it holds 2 members (aaa-member, app)" in error.message
    assert "`uv export --package aaa-member --format pylock.toml -o pylock.toml`" in error.hint


def test_a_wheel_built_with_a_newer_cuda_raises_what_the_set_needs() -> None:
    """vllm 0.26.0+cu129 over torch 2.11.0+cu128's runtime 12.8: the set needs 12.9; a build for another
    major or an older release is reported, not hidden."""
    from cuenv.engines import Package
    from cuenv.lock.foreign.stack import derive

    def wheels(*pins: str) -> list[Package]:
        return [Package(name=n, version=v, kind="pypi", url=f"https://x.org/{n}.whl", sha256=SHA)
                for n, v in (pin.split("==") for pin in pins)]

    base = ("torch==2.11.0+cu128", "nvidia-cuda-runtime-cu12==12.8.90")
    derived = derive(wheels(*base, "vllm==0.26.0+cu129"), platform="linux-64", label="x")
    assert derived.stack.cuda == "12.9" and derived.evidence[0] == "CUDA 12.9 from vllm 0.26.0+cu129"
    assert "newer than nvidia-cuda-runtime-cu12 12.8.90" in " ".join(derived.evidence)
    older = derive(wheels(*base, "xformers==0.0.28+cu121", "torchvision==0.26.0+cu128"), platform="linux-64", label="x")
    assert older.stack.cuda == "12.8" and older.conflicts == ("xformers 0.0.28+cu121 says CUDA 12.1",)
    other = derive(wheels(*base, "natten==0.21.0+cu130"), platform="linux-64", label="x")
    assert other.stack.cuda == "12.8" and other.conflicts == ("natten 0.21.0+cu130 says CUDA 13.0",)
    alone = derive(wheels("vllm==0.26.0+cu129", "six==1.17.0"), platform="linux-64", label="x")
    assert alone.stack.cuda == "12.9"


def test_nvidia_libraries_of_another_major_are_what_the_set_needs_or_a_conflict() -> None:
    """held-out-14 (towbintools): xgboost 3.4.1's nvidia-nccl-cu13 beside torch's cu12 wheels. CUDA 13's wheels
    install apart (nvidia/cu13/), so the set holds both and the driver must serve CUDA 13; a cu11 library beside
    cu12 ones writes the same folders: a conflict, named."""
    from cuenv.engines import Package
    from cuenv.lock.foreign.stack import derive

    def wheels(*pins: str) -> list[Package]:
        return [Package(name=n, version=v, kind="pypi", url=f"https://x.org/{n}.whl", sha256=SHA)
                for n, v in (pin.split("==") for pin in pins)]

    base = ("torch==2.7.1", "nvidia-cuda-runtime-cu12==12.6.77")
    apart = derive(wheels(*base, "nvidia-nccl-cu13==2.31.2", "xgboost==3.4.1"), platform="linux-64", label="x")
    assert apart.stack.cuda == "13.0" and apart.evidence[0] == "CUDA 13.0 from nvidia-nccl-cu13 2.31.2"
    assert any("the driver must serve CUDA 13" in e for e in apart.evidence) and apart.conflicts == ()
    shared = derive(wheels(*base, "nvidia-cublas-cu11==11.11.3.6"), platform="linux-64", label="x")
    assert shared.stack.cuda == "12.6" and shared.conflicts == (
        "nvidia-cublas-cu11 11.11.3.6 is built for CUDA 11, whose wheels share folders with CUDA 12.6's",)


# -- properties -----------------------------------------------------------------------------------
_SCALARS = st.one_of(st.none(), st.booleans(), st.integers(-5, 10**15), st.text(max_size=20),
                     st.sampled_from(["..", "ftp://a/b", "https://x.org/a/../b", SHA, MD5, "linux-64", "${X}"]))
_JUNK = st.recursive(_SCALARS, lambda inner: st.one_of(st.lists(inner, max_size=3),
                                                       st.dictionaries(st.text(max_size=8), inner, max_size=3)),
                     max_leaves=8)


def _paths(data: Any, prefix: tuple = ()) -> list[tuple]:
    found = [prefix]
    if isinstance(data, dict):
        for k, v in data.items():
            found += _paths(v, prefix + (k,))
    elif isinstance(data, list):
        for i, v in enumerate(data):
            found += _paths(v, prefix + (i,))
    return found


def _mutated(doc: dict, data: st.DataObject) -> dict:
    doc = copy.deepcopy(doc)
    path = data.draw(st.sampled_from([p for p in _paths(doc) if p]))
    parent = doc
    for step in path[:-1]:
        parent = parent[step]
    if data.draw(st.booleans()) and isinstance(parent, dict):
        del parent[path[-1]]
    else:
        parent[path[-1]] = data.draw(_JUNK)
    return doc


PROPERTY = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
READERS = {
    "conda-lock": lambda doc: read_conda_lock(doc),
    "pixi-6": lambda doc: read_pixi(doc),
    "pixi-7": lambda doc: read_pixi(doc, platform="cuda"),
    "pylock": lambda doc: pylock.parse("", file="pylock.toml", platform="linux-64", python="3.11", data=doc),
}
DOCS = {
    "conda-lock": conda_lock_doc(), "pixi-6": pixi_doc(6), "pixi-7": pixi_doc(7),
    "pylock": load_toml(PYLOCK.format(sha=SHA, extra=""), "pylock.toml", hint=""),
}


def _toml(value: Any, top: bool = True) -> str:
    """TOML for a generated document, all inline (uv reads text, not a parsed document); None is left out."""
    import json

    if isinstance(value, dict):
        items = [f"{json.dumps(str(k))} = {_toml(v, False)}" for k, v in value.items() if v is not None]
        return "\n".join(items) + "\n" if top else "{" + ", ".join(items) + "}"
    if isinstance(value, list):
        return "[" + ", ".join(_toml(v, False) for v in value if v is not None) + "]"
    if isinstance(value, bool):
        return "true" if value else "false"
    return json.dumps(value) if isinstance(value, (int, str)) else json.dumps(str(value))


@pytest.mark.parametrize("reader", sorted(READERS))
@PROPERTY
@given(data=st.data())
def test_a_damaged_lockfile_is_read_or_refused(reader: str, data: st.DataObject) -> None:
    doc = _mutated(DOCS[reader], data)
    try:
        found = READERS[reader](doc)
    except ForeignLockError as exc:
        assert exc.message and exc.hint and "\n" not in exc.message
        return
    for pkg in found.packages:  # what was accepted is safe to download
        assert pkg.url.split(":", 1)[0] in ("http", "https", "file") and ".." not in pkg.url.split("/")
        assert pkg.sha256 or pkg.md5
    foreign.describe(found)


@pytest.mark.parametrize("hashes", [True, False], ids=["hashed", "some-wheels-unhashed"])
@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.too_slow])  # uv runs for each
@given(data=st.data())
def test_a_damaged_uv_lock_is_read_or_refused(hashes: bool, data: st.DataObject) -> None:
    """uv reads the text (uv export), so the damaged document is written out as TOML first. A lock read without
    hashes (its wheels' hashes gone) is for reading only: it can never be installed."""
    text = UVLOCK.format(sha=SHA, commit="c" * 40)
    doc = _mutated(load_toml(text if hashes else text.replace(f', hash = "sha256:{SHA}"', "", 1), "uv.lock", hint=""), data)
    try:
        found = uvlock.parse(_toml(doc), file="uv.lock", platform="linux-64", python="3.11")
    except ForeignLockError as exc:
        assert exc.message and exc.hint and "\n" not in exc.message
        return
    if any(not pkg.sha256 for pkg in found.packages):  # read through uv's pins without hashes
        with pytest.raises(ForeignLockError, match="no hash"):
            foreign.require_installable(found)
        return
    for pkg in found.packages:
        assert pkg.url.split(":", 1)[0] in ("http", "https", "file") and pkg.sha256


@PROPERTY
@given(source=st.text(max_size=300))
def test_any_text_is_read_or_refused(source: str) -> None:
    detected = foreign.detect("lockfile", source) or "pixi-lock"
    for kind in {detected, "conda-lock", "pylock", "uv-lock", "explicit"}:
        try:
            foreign.parse(source, kind=kind, file="f", platform="linux-64", python="3.11")
        except ForeignLockError:
            pass


_NAMES = st.from_regex(r"[a-z][a-z0-9_]{0,10}", fullmatch=True)
_VERSIONS = st.from_regex(r"[0-9]{1,3}(\.[0-9]{1,3}){0,3}", fullmatch=True)
_BUILDS = st.from_regex(r"[a-z0-9]{1,8}_[0-9]{1,3}", fullmatch=True)


@PROPERTY
@given(st.dictionaries(_NAMES, st.tuples(_VERSIONS, _BUILDS, st.binary(min_size=1, max_size=8)), min_size=1, max_size=6))
def test_conda_lock_round_trip(records: dict[str, tuple[str, str, bytes]]) -> None:
    packages = [{"name": n, "version": v, "manager": "conda", "platform": "linux-64", "dependencies": {},
                 "url": f"{CH}/linux-64/{n}-{v}-{b}.tar.bz2", "category": "main", "optional": False,
                 "hash": {"md5": hashlib.md5(salt).hexdigest(), "sha256": hashlib.sha256(salt).hexdigest()}}
                for n, (v, b, salt) in records.items()]
    found = read_conda_lock(conda_lock_doc(packages))
    assert {(p.name, p.version, p.build, p.url, p.md5, p.sha256) for p in found.packages} == {
        (e["name"], e["version"], e["url"].rsplit("-", 1)[1].removesuffix(".tar.bz2"), e["url"], e["hash"]["md5"],
         e["hash"]["sha256"]) for e in packages}


_STACK_NAMES = st.sampled_from(["pytorch", "libtorch", "cuda-cudart", "cudatoolkit", "cuda-version", "pytorch-cuda",
                                "cudnn", "cuda-nvcc", "python", "numpy"])
_WHEEL_NAMES = st.sampled_from(["torch", "nvidia-cuda-runtime-cu12", "nvidia-cuda-runtime", "nvidia-cudnn-cu12",
                                "jax-cuda12-plugin", "paddlepaddle-gpu", "numpy"])
_ANY_VERSION = st.one_of(_VERSIONS, st.from_regex(r"[0-9]{1,2}\.[0-9]{1,2}\.[0-9]\+(cu[0-9]{3}|cpu|rocm6\.1)", fullmatch=True),
                         st.from_regex(r"[a-z0-9.]{1,8}", fullmatch=True))
_ANY_BUILD = st.one_of(_BUILDS, st.from_regex(r"(py3\.[0-9]{1,2}_cuda[0-9]{1,2}\.[0-9](_cudnn[0-9](\.[0-9])?)?|cuda[0-9]{2,3}|cpu)_[a-z0-9_]{0,10}",
                                              fullmatch=True))


@PROPERTY
@given(conda=st.lists(st.tuples(_STACK_NAMES, _ANY_VERSION, _ANY_BUILD), max_size=6),
       wheels=st.lists(st.tuples(_WHEEL_NAMES, _ANY_VERSION), max_size=5),
       depends=st.lists(st.from_regex(r"__cuda( ?(>=|==|=|>)? ?[0-9]{1,2}(\.[0-9])?)?", fullmatch=True), max_size=3),
       platform=st.sampled_from(["linux-64", "win-64", "osx-arm64", "linux-aarch64"]))
def test_any_package_set_gives_a_stack(conda, wheels, depends, platform) -> None:
    from cuenv.engines import Package
    from cuenv.lock.foreign.stack import derive

    pkgs = [Package(name=n, version=v, kind="conda", url=f"{CH}/x/{n}-{v}-{b}.conda", sha256=SHA, build=b)
            for n, v, b in conda]
    pkgs += [Package(name=n, version=v, kind="pypi", url=f"https://x.org/{n}.whl", sha256=SHA) for n, v in wheels]
    derived = derive(pkgs, platform=platform, label="x", depends={"pkg": tuple(depends)})
    stack = derived.stack
    assert stack.cuda is None or all(part.isdigit() for part in stack.cuda.split("."))
    assert derived.evidence and (stack.cuda is None) == derived.evidence[0].startswith("no CUDA")


# -- conda's @EXPLICIT list (what `cuenv export --format explicit` and `conda list --explicit` write) ------------

def explicit_text(lines: list[str], platform: str | None = "linux-64") -> str:
    head = ["# This file may be used to create an environment using:"] + ([f"# platform: {platform}"] if platform else [])
    return "\n".join(head + ["@EXPLICIT", *lines]) + "\n"


def test_explicit_list_is_detected_and_read() -> None:
    md5, sha = hashlib.md5(b"a").hexdigest(), hashlib.sha256(b"b").hexdigest()
    text = explicit_text([f"{CH}/linux-64/python-3.11.9-h0_0.conda#{md5}", "# a comment",
                          f"{CH}/noarch/tzdata-2024a-h0_0.conda#{sha}"])
    assert foreign.detect("explicit.txt", text) == "explicit" and foreign.detect("spec-file.txt", text) == "explicit"
    found = foreign.parse(text, kind="explicit", file="explicit.txt", platform="linux-64", python="3.11")
    assert [(p.name, p.version, p.build, p.md5, p.sha256, p.subdir) for p in found.packages] == [
        ("python", "3.11.9", "h0_0", md5, None, "linux-64"), ("tzdata", "2024a", "h0_0", None, sha, "noarch")]
    assert found.python == "3.11" and found.channels == (CH,) and found.platforms == ("linux-64",)


def test_conda_locks_pip_lines_in_an_explicit_list_are_its_pip_layer() -> None:
    """`conda-lock render --kind explicit` writes PyPI packages as `# pip NAME @ URL#sha256=...` comments, which
    `conda-lock install` installs (held-out-14, towbintools: torch 2.7.1 and CUDA 13's nvidia-nccl-cu13 there).
    Read as the pip layer, with a note; one written without a hash (older conda-lock: `#md5=None`) is read, and
    an install stops at it."""
    sha = hashlib.sha256(b"w").hexdigest()
    wheel = "https://files.pythonhosted.org/packages/aa/nvidia_cuda_runtime_cu12-12.6.77-py3-none-manylinux2014_x86_64.whl"
    old = "https://files.pythonhosted.org/packages/bb/tomli-2.0.1-py3-none-any.whl"
    text = explicit_text([f"{CH}/linux-64/python-3.11.9-h0_0.conda#{sha}", f"# pip nvidia-cuda-runtime-cu12 @ {wheel}#sha256={sha}",
                          f"# pip tomli @ {old}#md5=None", "# a comment"])
    found = foreign.parse(text, kind="explicit", file="conda-linux-64.lock", platform="linux-64", python="3.11")
    assert [(p.kind, p.name, p.version, p.sha256) for p in found.packages] == [
        ("pypi", "nvidia-cuda-runtime-cu12", "12.6.77", sha), ("conda", "python", "3.11.9", sha), ("pypi", "tomli", "2.0.1", None)]
    assert foreign.describe(found).stack.cuda == "12.6" and any("`conda-lock install` installs them" in n for n in found.notes)
    with pytest.raises(foreign.ForeignLockError, match="tomli has no sha256 in the list"):
        foreign.require_installable(found)


@pytest.mark.parametrize("lines, platform, says, line", [
    ([f"{CH}/linux-64/python-3.11.9-h0_0.conda#abc"], "linux-64", "neither a sha256", 4),
    ([f"{CH}/linux-64/python-3.11.9.whl#{'0' * 64}"], "linux-64", "not a conda package archive", 4),
    ([f"{CH}/linux-aarch64/python-3.11.9-h0_0.conda#{'0' * 64}"], None, "built for linux-aarch64, not linux-64", 3),
    (["", f"{CH}/linux-64/python-3.11.9-h0_0.conda#{'0' * 64}", f"{CH}/linux-64/python-3.12.0-h0_0.conda#{'0' * 64}"],
     "linux-64", "python is listed twice", 6),
    ([f"ftp://example.org/linux-64/python-3.11.9-h0_0.conda#{'0' * 64}"], "linux-64", "is not http(s) or file", 4),
])
def test_explicit_list_refusals_name_the_line(lines: list[str], platform: str | None, says: str, line: int) -> None:
    with pytest.raises(ForeignLockError) as err:
        explicit.parse(explicit_text(lines, platform), file="explicit.txt", platform="linux-64")
    assert says in err.value.message and err.value.line == line and err.value.hint


def test_explicit_list_without_hashes_is_read_as_conda_reads_it() -> None:
    """Plain `conda list --explicit` writes no hashes; the install takes them from the channels' repodata."""
    found = explicit.parse(explicit_text([f"{CH}/linux-64/python-3.11.9-h0_0.conda"], "linux-64"), file="explicit.txt",
                           platform="linux-64")
    assert [(p.name, p.sha256, p.md5) for p in found.packages] == [("python", None, None)]
    assert found.notes and "1 of its 1 packages have no #hash" in found.notes[0]


def test_explicit_list_of_another_platform_says_which() -> None:
    text = explicit_text([f"{CH}/osx-arm64/python-3.11.9-h0_0.conda#{'0' * 64}"], "osx-arm64")
    with pytest.raises(ForeignLockError) as err:
        explicit.parse(text, file="explicit.txt", platform="linux-64")
    assert "lists packages for osx-arm64, not linux-64" in err.value.message and "--platform osx-arm64" in err.value.hint
    assert explicit.parse(text, file="explicit.txt", platform="osx-arm64").packages[0].subdir == "osx-arm64"
    with pytest.raises(ForeignLockError, match="only comments come before"):
        explicit.parse("name: x\n@EXPLICIT\n", file="explicit.txt", platform="linux-64")


@PROPERTY
@given(st.dictionaries(_NAMES, st.tuples(_VERSIONS, _BUILDS, st.binary(min_size=1, max_size=8)), min_size=1, max_size=6),
       st.booleans())
def test_explicit_list_round_trip(records: dict[str, tuple[str, str, bytes]], use_md5: bool) -> None:
    digest = (lambda b: hashlib.md5(b).hexdigest()) if use_md5 else (lambda b: hashlib.sha256(b).hexdigest())
    lines = [f"{CH}/linux-64/{n}-{v}-{b}.conda#{digest(salt)}" for n, (v, b, salt) in records.items()]
    found = explicit.parse(explicit_text(lines), file="explicit.txt", platform="linux-64")
    assert {(p.name, p.version, p.build, p.md5 or p.sha256) for p in found.packages} == {
        (n, v, b, digest(salt)) for n, (v, b, salt) in records.items()}
