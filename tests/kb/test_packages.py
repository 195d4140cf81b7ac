"""Package names have one home (issue 24 §4): cuenv.knowledge.packages holds every list of package names
cuenv matches against and the one name normaliser, held to packaging's own."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st
from packaging.utils import canonicalize_name

from cuenv.knowledge import packages
from cuenv.knowledge.packages import canonical, distribution, family

PACKAGE = Path(packages.__file__).resolve().parents[1]
HOME = Path(packages.__file__).resolve()

# Package names, not framework words: "torch" or "cuda" alone also name a family or a JSON key.
NAMES = ({*packages.framework_packages(), *packages.JAX_CUDA_WHEELS, *packages.CUDA_TOOLKIT, *packages.CONDA_CUDA_PINS,
          *packages.CONDA_GPU_CAPABLE, *packages.HOST_CONFIG_WHEELS, *packages.TRACKED_RELEASES,
          *packages.CONDA_TORCH_FAMILY, *packages.PYPI_TORCH_FAMILY, *packages.TORCH_DEPENDENTS,
          *(n for names in packages.CUDA_PARTS.values() for n in names)} - {*packages.FRAMEWORKS, "cuda", "cudnn"})
# A second normaliser spelled out: PEP 503's regex, the half of it that only swaps "_", or packaging's own call.
NORMALISERS = re.compile(r"\[-_\.\]\+|\[-_\.\]|replace\(\"_\", \"-\"\)|replace\('_', '-'\)|canonicalize_name")


def _sources() -> list[Path]:
    return [p for p in sorted(PACKAGE.rglob("*.py")) if p.resolve() != HOME]


@pytest.mark.parametrize("path", _sources(), ids=lambda p: str(p.relative_to(PACKAGE)))
def test_no_other_module_lists_package_names(path: Path) -> None:
    lists = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, (ast.Tuple, ast.List, ast.Set)):
            found = [e.value for e in node.elts if isinstance(e, ast.Constant) and e.value in NAMES]
            if len(found) >= 2:
                lists.append(f"{path.name}:{node.lineno} {found}")
    assert lists == []


@pytest.mark.parametrize("path", _sources(), ids=lambda p: str(p.relative_to(PACKAGE)))
def test_no_other_module_normalises_names(path: Path) -> None:
    text = path.read_text(encoding="utf-8")
    assert [f"{path.name}:{text[:m.start()].count(chr(10)) + 1}" for m in NORMALISERS.finditer(text)] == []


def test_the_scan_sees_a_list_and_a_normaliser() -> None:
    """The two scans above are not blind: each catches what it looks for."""
    tree = ast.parse('X = ("paddlepaddle", "paddlepaddle-gpu")')
    tup = next(n for n in ast.walk(tree) if isinstance(n, ast.Tuple))
    assert sum(isinstance(e, ast.Constant) and e.value in NAMES for e in tup.elts) == 2
    assert NORMALISERS.search('re.sub(r"[-_.]+", "-", name).lower()')
    assert NORMALISERS.search('name.lower().replace("_", "-")')


@given(st.from_regex(r"[A-Za-z0-9]([A-Za-z0-9._-]{0,20}[A-Za-z0-9])?", fullmatch=True))
def test_canonical_is_packagings(name: str) -> None:
    assert canonical(name) == canonicalize_name(name)


def _spellings(name: str) -> st.SearchStrategy[str]:
    """``name`` as people write it: any case, any run of ``-_.`` for each separator."""
    parts = name.split("-")
    return st.tuples(*(st.sampled_from([p, p.upper(), p.capitalize()]) for p in parts),
                     st.lists(st.sampled_from(["-", "_", ".", "__", "-."]), min_size=len(parts), max_size=len(parts)),
                     ).map(lambda t: "".join(a + b for a, b in zip(t[:-1], t[-1])).rstrip("-_."))


@given(st.sampled_from(sorted({*packages.framework_packages(), *packages.JAX_CUDA_WHEELS, *packages.CUDA_TOOLKIT}))
       .flatmap(lambda n: st.tuples(st.just(n), _spellings(n))))
def test_a_name_is_known_however_it_is_spelled(pair: tuple[str, str]) -> None:
    name, written = pair
    assert family(written) == family(name) is not None
    if name not in packages.JAX_CUDA_WHEELS:
        assert distribution(written) == name


def test_every_pypi_name_is_its_own_canonical_form() -> None:
    """family() answers a lower-cased hit without packaging: right only while every key is canonical. (conda's
    names are compared as they are: ``nvcc_linux-64`` is not PEP 503's.)"""
    every = {*packages.FRAMEWORKS, *packages.framework_packages(), *packages.JAX_CUDA_WHEELS, *packages.CUDA_TOOLKIT,
             *(n for names in packages.CUDA_WHEELS.values() for n in names), *packages.TRACKED_RELEASES,
             *packages.HOST_CONFIG_WHEELS}
    assert sorted(n for n in every if canonical(n) != n) == []


def test_families_as_the_vendors_name_them() -> None:
    assert {n: family(n) for n in ("pytorch", "torch", "paddlepaddle", "paddlepaddle-gpu", "tf", "tensorflow-cpu",
                                   "jaxlib", "jax-cuda13-pjrt", "cudatoolkit", "numpy", "torchvision")} == {
        "pytorch": "torch", "torch": "torch", "paddlepaddle": "paddle", "paddlepaddle-gpu": "paddle", "tf": "tensorflow",
        "tensorflow-cpu": "tensorflow", "jaxlib": "jax", "jax-cuda13-pjrt": "jax", "cudatoolkit": "cuda",
        "numpy": None, "torchvision": None}
    # a spec pins a distribution: a family's word or a plugin is no spec of its own
    assert [distribution(n) for n in ("paddle", "tf", "jax-cuda12-plugin", "Tensorflow_CPU")] == [None, None, None,
                                                                                              "tensorflow-cpu"]
    assert packages.kernel_packages("jax")[-1] == "jax-cuda13-pjrt" and packages.kernel_packages("torch") == ("torch", "pytorch")
    assert packages.cuda_package_names("cudnn") == ("nvidia-cudnn-cu11", "nvidia-cudnn-cu12", "nvidia-cudnn-cu13", "cudnn")
