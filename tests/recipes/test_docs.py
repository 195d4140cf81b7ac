"""docs/recipes.md carries the catalogue table; this test fails when it drifts from recipes/."""

from __future__ import annotations

from pathlib import Path

from cuenv.commands.recipes import _cc_range
from cuenv.recipes.catalogue import Catalogue, builtin_dir

DOC = Path(__file__).resolve().parents[2] / "docs" / "recipes.md"
BEGIN, END = "<!-- catalogue:begin (generated from recipes/; tests/recipes/test_docs.py) -->", "<!-- catalogue:end -->"


def catalogue_table() -> str:
    lines = ["| Recipe | Framework versions (default **bold**) | CUDA | cuDNN | Compute capability | Platforms | Engines |",
             "|---|---|---|---|---|---|---|"]
    for r in Catalogue(builtin_dir()).all():
        s = r.stack()
        fw = "-"
        if r.framework:
            fw = r.framework.name + " " + ", ".join(f"**{v}**" if v == r.default_version else v for v in r.versions)
        engines = []
        for name in ("conda", "venv"):
            section = getattr(r, name)
            if section is not None:
                engines.append(name if section.versions is None else f"{name} ({', '.join(section.versions)})")
        lines.append(f"| `{r.name}` | {fw} | {r.cuda} | {s.cudnn or '-'} | {_cc_range(s)} | "
                     f"{', '.join(r.platforms)} | {'; '.join(engines)} |")
    return "\n".join(lines)


def test_docs_catalogue_table_is_current():
    text = DOC.read_text()
    start, stop = text.index(BEGIN) + len(BEGIN), text.index(END)
    assert text[start:stop].strip() == catalogue_table(), "regenerate: python -c 'from tests.recipes.test_docs import catalogue_table; print(catalogue_table())'"
