"""Real lockfiles from public repositories (tests/lockfiles/foreign/fixtures/SOURCES.yaml): what cuenv reads.

Each fixture is held to its recorded expectations: the kind detected from the content, the
packages of the chosen environment and platform, the CUDA stack derived from them, and the
packages that could only be built from source.
"""

from __future__ import annotations

import hashlib
import urllib.parse
from pathlib import Path

import pytest
import yaml

from cuenv.lock import foreign

FIXTURES = Path(__file__).resolve().parent / "foreign" / "fixtures"
SOURCES = yaml.safe_load((FIXTURES / "SOURCES.yaml").read_text())


def _read(name: str, **overrides: str):
    entry = SOURCES[name]
    path = FIXTURES / name
    source = path.read_text(encoding="utf-8")
    kind = foreign.detect(path.name, source)
    options = {"platform": entry["platform"], "python": entry.get("python", "3.12"), **overrides}
    if "environment" in entry:
        options.setdefault("environment", entry["environment"])
    return foreign.parse(source, kind=kind, file=str(path), **options)


def test_every_fixture_is_recorded() -> None:
    on_disk = {p.name for p in FIXTURES.iterdir() if p.name != "SOURCES.yaml"}
    assert on_disk == set(SOURCES)
    assert len(SOURCES) >= 6
    for entry in SOURCES.values():
        assert set(entry) >= {"repository", "path", "commit", "blob", "note", "platform", "expect"}
        assert len(entry["commit"]) == 40


@pytest.mark.parametrize("name", sorted(SOURCES))
def test_fixture_reads_as_recorded(name: str) -> None:
    found = _read(name)
    derived = foreign.describe(found)
    got = {
        "kind": found.kind, "packages": len(found.packages), "conda": sum(p.kind == "conda" for p in found.packages),
        "pypi": sum(p.kind == "pypi" for p in found.packages), "python": found.python, "cuda": derived.stack.cuda,
        "cudnn": derived.stack.cudnn, "framework": derived.stack.framework,
        "framework_version": derived.stack.framework_version, "unusable": [u.name for u in found.unusable],
        "conflicts": list(derived.conflicts),
    }
    assert got == SOURCES[name]["expect"]
    # every artifact is pinned by URL and a verifiable hash, and named like its file
    for pkg in found.packages:
        assert pkg.url.startswith(("https://", "http://", "file://")) and pkg.filename
        assert urllib.parse.unquote(pkg.url).endswith(pkg.filename)  # torch-2.6.0%2Bcu124-...whl is torch-2.6.0+cu124
        assert pkg.sha256 or pkg.md5
        if pkg.kind == "conda":
            assert pkg.filename.startswith(f"{pkg.name}-{pkg.version}-{pkg.build}.")


def test_detection_reads_the_content_not_the_name() -> None:
    for name, entry in SOURCES.items():
        source = (FIXTURES / name).read_text(encoding="utf-8")
        assert foreign.detect("lockfile", source) == entry["expect"]["kind"]
    assert foreign.detect("pixi.lock", "") == "pixi-lock"  # an empty file: the name decides, so the refusal fits
    assert foreign.detect("env.conda-lock.yml", "") == "conda-lock"
    assert foreign.detect("pylock.dev.toml", "") == "pylock"
    assert foreign.detect("cuenv.lock", "version: 1\nrecipe: {}\ncontract: {}\n") is None


def test_pytorch_channel_build_gives_the_contract() -> None:
    derived = foreign.describe(_read("bertchen.conda-lock.yml"))
    assert derived.evidence == (
        "CUDA 11.8 from cuda-cudart 11.8.89",
        "cuDNN 8.7 from pytorch 2.1.0 build py3.10_cuda11.8_cudnn8.7.0_0",
        "torch 2.1.0 (cu118) from pytorch 2.1.0 build py3.10_cuda11.8_cudnn8.7.0_0",
    )
    assert derived.stack.sass == ()  # conda builds' arch lists are not in the knowledge base: unknown, not guessed


def test_other_platforms_of_the_same_file() -> None:
    mac = foreign.describe(_read("bertchen.conda-lock.yml", platform="osx-arm64"))
    assert (mac.stack.cuda, mac.stack.framework, mac.stack.variant, mac.stack.os) == (None, "torch", "cpu", ("osx",))
    win = foreign.describe(_read("bertchen.conda-lock.yml", platform="win-64"))
    assert (win.stack.cuda, win.stack.cudnn, win.stack.os) == ("11.8", "8", ("windows",))  # build py3.10_cuda11.8_cudnn8_0


def test_pypi_default_torch_wheel_carries_the_knowledge_base_arch_list() -> None:
    stack = foreign.describe(_read("llama-index-v5.pixi.lock")).stack
    assert (stack.cuda, stack.variant) == ("12.1", "cu121")
    assert stack.sass and "8.0" in stack.sass  # torch 2.4 cu121's TORCH_CUDA_ARCH_LIST, from cuenv's knowledge base


def test_pixi_v7_named_platforms() -> None:
    found = _read("multi-machine-v7.pixi.lock")
    assert (found.platform, found.virtual_packages[0]) == ("linux-64", "__cuda=12")
    assert set(found.platforms) == {"linux-64", "p1", "p2", "p3", "win-64"}  # the names --platform takes
    assert "solved for __cuda=12 (pixi platform)" in foreign.describe(found).evidence
    plain = _read("multi-machine-v7.pixi.lock", platform="linux-64")  # the platform named like the subdir
    assert plain.virtual_packages == ("__unix=0=0", "__linux=4.18", "__glibc=2.28", "__archspec=0=x86_64")


def test_unusable_packages_name_their_line() -> None:
    found = _read("yi.conda-lock.yml")
    (flash,) = found.unusable
    lines = (FIXTURES / "yi.conda-lock.yml").read_text().splitlines()
    assert lines[flash.where.line - 1] == "- name: flash-attn"
    with pytest.raises(foreign.ForeignLockError) as caught:
        foreign.require_installable(found)
    assert f"yi.conda-lock.yml, line {flash.where.line} (package[186]): flash-attn is locked as a source" in caught.value.message


def test_uv_lock_follows_the_graph_for_the_target() -> None:
    linux = _read("vocalizr.uv.lock")
    mac = _read("vocalizr.uv.lock", platform="osx-arm64")
    names = {p.name for p in linux.packages}
    assert "nvidia-cuda-runtime" in names and "nvidia-cuda-runtime" not in {p.name for p in mac.packages}
    assert foreign.describe(mac).stack.cuda is None
    assert all(p.index_url == "https://pypi.org/simple" for p in linux.packages)


def test_fixture_files_are_unmodified_copies() -> None:
    # The git object id of each copy equals the blob recorded from its repository at that commit.
    for name, entry in SOURCES.items():
        data = (FIXTURES / name).read_bytes()
        blob = hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()
        assert blob == entry["blob"], name
