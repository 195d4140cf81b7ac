"""Helpers for recipe tests: a valid recipe to break in one place at a time."""

from __future__ import annotations

from pathlib import Path

import pytest

VALID = """\
name: demo-cu121
summary: A demo stack
framework:
  name: torch
  version: "2.5.1"
  versions: ["2.4.1", "2.5.1"]
cuda: "12.1"
cudnn: "9.1"
python:
  default: "3.11"
  supported: ">=3.9,<3.14"
arch:
  sass: ["8.0", "9.0"]
  ptx: []
platforms: [linux-64]
env:
  NCCL_P2P_DISABLE: "1"
smoke_test:
  python: "import torch"
overrides:
  "2.4.1":
    cudnn: "8.9"
install:
  venv:
    index_urls: ["https://download.pytorch.org/whl/cu121"]
    requirements:
      - "torch=={version}+cu121"
"""


@pytest.fixture
def write_recipe(tmp_path: Path):
    """Write TEXT as DIR/NAME.yaml (default: the valid demo recipe) and return its path."""

    def write(text: str = VALID, name: str = "demo-cu121", folder: Path | None = None) -> Path:
        folder = folder or tmp_path
        folder.mkdir(parents=True, exist_ok=True)
        path = folder / f"{name}.yaml"
        path.write_text(text)
        return path

    return write
