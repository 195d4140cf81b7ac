"""The published JSON Schema: shipped recipes pass it, and it agrees with the Python validator."""

from __future__ import annotations

import json
from pathlib import Path

import jsonschema
import pytest
import yaml

from cuenv.recipes.catalogue import builtin_dir
from cuenv.recipes.lint import SCHEMA_PATH, lint_file

from .conftest import VALID

REPO = Path(__file__).resolve().parents[2]
SCHEMA = json.loads(SCHEMA_PATH.read_text())
VALIDATOR = jsonschema.Draft202012Validator(SCHEMA)


def test_schema_is_valid_and_published_copy_is_identical():
    jsonschema.Draft202012Validator.check_schema(SCHEMA)
    assert (REPO / "docs" / "reference" / "recipe.schema.json").read_text() == SCHEMA_PATH.read_text()


@pytest.mark.parametrize("path", sorted(builtin_dir().glob("*.yaml")), ids=lambda p: p.stem)
def test_shipped_recipe_passes_schema(path: Path):
    assert path.read_text().startswith("# yaml-language-server: $schema=../cuenv/recipes/recipe.schema.json\n")
    errors = [e.message for e in VALIDATOR.iter_errors(yaml.safe_load(path.read_text()))]
    assert errors == []


# Each is broken in a way a schema can state; both validators must refuse it.
BROKEN = {
    "float-cuda": ('cuda: "12.1"', "cuda: 12.1"),
    "cuda-12.x": ('cuda: "12.1"', 'cuda: "12.x"'),
    "cc-8.x": ('sass: ["8.0", "9.0"]', 'sass: ["8.x"]'),
    "cudnn-int": ('cudnn: "9.1"', "cudnn: 9"),
    "unknown-top-key": ("summary:", "sumary:"),
    "unknown-nested-key": ("    requirements:", "    requirement:"),
    "missing-install": ("install:\n  venv:", "installs:\n  venv:"),
    "bad-platform": ("platforms: [linux-64]", "platforms: [linux-x86]"),
    "bad-name": ("name: demo-cu121", "name: demo cu121"),
    "smoke-two": ('  python: "import torch"', '  python: "import torch"\n  command: [python, -V]'),
    "smoke-none": ('smoke_test:\n  python: "import torch"', "smoke_test: {}"),
    "env-bad-name": ("  NCCL_P2P_DISABLE:", "  1NCCL:"),
    "env-non-string": ('NCCL_P2P_DISABLE: "1"', "NCCL_P2P_DISABLE: 1"),
    "index-not-url": ('index_urls: ["https://download.pytorch.org/whl/cu121"]', 'index_urls: ["download.pytorch.org"]'),
    "empty-requirements": ('requirements:\n      - "torch=={version}+cu121"', "requirements: []"),
    "override-unknown": ('    cudnn: "8.9"', '    cuda: "12.4"'),
    "python-range-type": ('supported: ">=3.9,<3.14"', "supported: [3.9]"),
    "framework-no-version": ('  version: "2.5.1"\n', ""),
    "dup-sass": ('sass: ["8.0", "9.0"]', 'sass: ["8.0", "8.0"]'),
}


@pytest.mark.parametrize("case", sorted(BROKEN))
def test_schema_and_linter_agree_on_broken_recipes(case: str, write_recipe):
    old, new = BROKEN[case]
    assert old in VALID
    text = VALID.replace(old, new)
    schema_errors = list(VALIDATOR.iter_errors(yaml.safe_load(text)))
    lint_problems = lint_file(write_recipe(text))
    assert schema_errors, f"schema accepts {case}"
    assert lint_problems, f"linter accepts {case}"


def test_schema_and_linter_agree_on_valid_recipe(write_recipe):
    assert list(VALIDATOR.iter_errors(yaml.safe_load(VALID))) == []
    assert lint_file(write_recipe()) == []
