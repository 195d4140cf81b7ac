"""The tables in docs/concepts/compatibility.md are generated from the knowledge base; a diff fails.

Regenerate with: CUENV_REGEN_DOCS=1 python -m pytest tests/kb/test_docs.py
"""

from __future__ import annotations

import os
import re
from pathlib import Path

from cuenv.binaries import assess
from cuenv.knowledge import compat as check
from cuenv.knowledge import matrix

DOCS = Path(__file__).resolve().parents[2] / "docs"
PAGE = DOCS / "concepts" / "compatibility.md"


def driver_table() -> str:
    rows = ["| CUDA | Linux (GA) | Windows (GA) | status |", "|---|---|---|---|"]
    for mm in matrix.cuda_releases():
        r = next(x for x in matrix.driver_rows() if matrix.mm_str(x.cuda) == mm and x.kind != "rc")
        linux = (f"R{r.linux} (any {r.linux}.x or later)" if r.kind == "branch" else r.linux) if r.linux else "not published"
        rows.append(f"| {mm} | {linux} | {r.windows or 'not published'} | {r.status} |")
    return "\n".join(rows)


def nvcc_table() -> str:
    rows = ["| CUDA | SASS targets (compute capability) | status |", "|---|---|---|"]
    for row in matrix.kb()["nvcc_targets"]["releases"]:
        rows.append(f"| {row['cuda']} | {' '.join(row['targets'])} | {row['status']} |")
    return "\n".join(rows)


def torch_table() -> str:
    rows = ["| torch | variant | SASS | PTX | cuDNN | PyPI default |", "|---|---|---|---|---|---|"]
    for rel in matrix.torch_releases():
        for variant in matrix.torch_variants(rel):
            b = matrix.torch_build(rel, variant)
            if b is not None and b.sass:
                rows.append(f"| {rel} | {variant} | {' '.join(b.sass)} | {' '.join(b.ptx) or '–'} | {b.cudnn or '–'} "
                            f"| {'yes' if b.pypi_default else ''} |")
    return "\n".join(rows)


def hostcc_table() -> str:
    rows = ["| CUDA | newest gcc | newest clang | MSVC (`_MSC_VER`) | source |", "|---|---|---|---|---|"]
    for row in matrix.kb()["host_compilers"]:
        source = "host_config.h in NVIDIA's wheel" if "VENDOR" in row["sources"] else "nixpkgs (release notes)"
        rows.append(f"| {row['cuda']} | {row['gcc_max']} | {row['clang_max']} | {row.get('msvc', '–')} | {source} |")
    return "\n".join(rows)


TABLES = {"driver": driver_table, "nvcc": nvcc_table, "torch": torch_table, "hostcc": hostcc_table}


def _render(text: str) -> str:
    for name, make in TABLES.items():
        text = re.sub(rf"(<!-- table:{name} -->\n).*?(\n<!-- /table -->)", lambda m: m.group(1) + make() + m.group(2),  # noqa: B023 - called at once, inside this iteration
                      text, flags=re.S)
    return text


def test_compatibility_tables_are_current() -> None:
    text = PAGE.read_text()
    want = _render(text)
    if os.environ.get("CUENV_REGEN_DOCS") == "1":
        PAGE.write_text(want)
    for name in TABLES:
        assert f"<!-- table:{name} -->" in text
    assert text == want, "docs tables are stale: regenerate with CUENV_REGEN_DOCS=1"


def test_findings_reference_documents_every_code() -> None:
    text = (DOCS / "reference" / "findings.md").read_text()
    documented = set(re.findall(r"^## `([a-z-]+)`", text, flags=re.M))
    from cuenv.recipes import projectfile

    codes = (*check.CODES, *assess.CODES, *projectfile.CODES)  # the table check's, the kernel scan's, a project file's
    assert documented == set(codes)
    for code in codes:
        section = text.split(f"## `{code}`", 1)[1].split("\n## ", 1)[0]
        for part in ("**Cause.**", "**Confirm.**", "**Fix.**"):
            assert part in section, (code, part)
