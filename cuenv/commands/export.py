"""`cuenv export NAME --format FORMAT [-o DIR]`: turn an environment into files another tool reads."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from cuenv.result import Result, text_result

if TYPE_CHECKING:
    from cuenv.cli.main import Context
    from cuenv.result import Text


def configure(parser: argparse.ArgumentParser, name: str) -> None:
    from cuenv.export import FORMATS

    parser.add_argument("name", metavar="NAME", help="environment to export")
    parser.add_argument("--format", "-F", dest="fmt", required=True, choices=list(FORMATS), metavar="FORMAT",
                        help="one of: " + ", ".join(FORMATS))
    parser.add_argument("-o", "--output", type=Path, metavar="DIR",
                        help="output directory (default: print a single-file format on stdout)")
    parser.add_argument("--base", metavar="IMAGE", help="base image for dockerfile/apptainer")
    parser.add_argument("--force", action="store_true", help="overwrite files in the output directory")


def run(ctx: Context) -> Result[Text]:
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
            raise UsageError(f"Format {a.fmt!r} writes several files.", hint="Give an output directory with -o DIR.")
        if ctx.json:
            return text_result(data={"format": a.fmt, "files": [{"path": outputs[0].path, "content": outputs[0].content}]})
        sys.stdout.write(outputs[0].content)
        return text_result()
    written = write_outputs(outputs, a.output, force=a.force)
    # a note names the folder it was written to, so that it runs as written (issue 30 §4)
    import shlex

    from cuenv.export import OUTPUT_DIR

    where = shlex.quote(str(Path(a.output).resolve()))
    notes = [o.note.replace(OUTPUT_DIR, where) for o in outputs if o.note]
    return text_result(data={"format": a.fmt, "files": written}, text="\n".join(["Wrote " + w for w in written] + notes))
