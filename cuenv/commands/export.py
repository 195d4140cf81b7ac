"""`cuenv export NAME --format FORMAT [-o DIR]`: turn an environment into files another tool reads."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from cuenv.result import Result

if TYPE_CHECKING:
    from cuenv.cli.main import Context
    from cuenv.result import JSONObject


def configure(parser: argparse.ArgumentParser, name: str) -> None:
    from cuenv.export import FORMATS

    parser.add_argument("name", metavar="NAME", help="environment to export")
    parser.add_argument("--format", "-F", dest="fmt", required=True, choices=list(FORMATS), metavar="FORMAT",
                        help="one of: " + ", ".join(FORMATS))
    parser.add_argument("-o", "--output", type=Path, metavar="DIR",
                        help="output directory (default: print a single-file format on stdout)")
    parser.add_argument("--base", metavar="IMAGE", help="base image for dockerfile/apptainer")
    parser.add_argument("--force", action="store_true", help="overwrite files in the output directory")


def run(ctx: Context) -> Result[Exported]:
    from cuenv.errors import UsageError
    from cuenv.export import format_module
    from cuenv.export.write import load_source, write_outputs

    a = ctx.args
    module = format_module(a.fmt)
    source = load_source(ctx.settings, a.name)
    from cuenv.envs.change import drift_warning

    drifted = drift_warning(ctx.settings, ctx.environ, a.name)
    if drifted:  # issue 26 §3: never an export without numpy and no word about it
        sys.stderr.write(f"warning: {drifted}\n")
    outputs = module.export(source, {"base": a.base})
    if a.output is None:
        if len(outputs) != 1 or not isinstance(outputs[0].content, str):
            import shlex

            raise UsageError(f"Format {a.fmt!r} writes several files.",
                             hint=f"Write them into a folder: `cuenv export {shlex.quote(a.name)} --format {a.fmt} -o {a.fmt}`.")
        # the file itself is the output: printed byte for byte
        return Result(Exported(a.fmt, [(outputs[0].path, outputs[0].content)]), _printed, exact=True)
    written = write_outputs(outputs, a.output, force=a.force)
    # a note names the folder it was written to, so that it runs as written (issue 30 §4)
    import shlex

    from cuenv.export import OUTPUT_DIR

    where = shlex.quote(str(Path(a.output).resolve()))
    notes = [o.note.replace(OUTPUT_DIR, where) for o in outputs if o.note]
    return Result(Exported(a.fmt, [(w, None) for w in written], notes), _written)


class Exported:
    """`cuenv export`: ``{"format", "files": [{"path", "content"}], "notes": [...]}``; ``content`` is the file's
    text when it was printed (no -o), null when it was written into the -o folder."""

    __slots__ = ("files", "fmt", "notes")

    def __init__(self, fmt: str, files: list[tuple[str, str | None]], notes: list[str] | None = None) -> None:
        self.fmt, self.files, self.notes = fmt, files, notes or []

    def to_json(self) -> JSONObject:
        return {"format": self.fmt, "files": [{"path": p, "content": c} for p, c in self.files], "notes": list(self.notes)}


def _printed(done: Exported) -> str:
    return done.files[0][1] or ""


def _written(done: Exported) -> str:
    return "\n".join(["Wrote " + p for p, _ in done.files] + done.notes)
