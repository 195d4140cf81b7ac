"""The documentation site builds with `mkdocs build --strict` (broken links, missing nav pages fail)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]


def test_site_builds_strict(tmp_path: Path) -> None:
    pytest.importorskip("mkdocs")
    pytest.importorskip("material")
    env = dict(os.environ, NO_MKDOCS_2_WARNING="1")
    done = subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "-q", "-f", str(REPO / "mkdocs.yml"),
                           "-d", str(tmp_path / "site")], capture_output=True, text=True, env=env, timeout=300)
    assert done.returncode == 0, done.stdout + done.stderr
    for page in ("index.html", "getting-started/index.html", "reference/cli/index.html", "comparison/index.html"):
        assert (tmp_path / "site" / page).is_file(), page


def test_every_page_is_in_the_nav() -> None:
    import yaml

    def pages(node) -> set[str]:
        if isinstance(node, str):
            return {node}
        if isinstance(node, list):
            return set().union(*(pages(n) for n in node))
        if isinstance(node, dict):
            return set().union(*(pages(v) for v in node.values()))
        return set()

    config = yaml.safe_load((REPO / "mkdocs.yml").read_text())
    in_nav = pages(config["nav"])
    on_disk = {p.relative_to(REPO / "docs").as_posix() for p in (REPO / "docs").rglob("*.md")}
    assert on_disk - in_nav == set(), "add these pages to the nav in mkdocs.yml"
    assert in_nav - on_disk == set(), "the nav names pages that do not exist"
