"""Export formats: one module per format, each turning an environment into files (issues 6 and 7).

A format module defines
``export(source: ExportSource, options: Mapping[str, Any]) -> list[Output]``; it writes nothing
itself. The command writes the outputs under ``-o DIR`` (or prints a single text output).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from importlib import import_module
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final, Mapping, Protocol, cast

from cuenv.errors import UsageError

if TYPE_CHECKING:
    from cuenv.engines import Solution
    from cuenv.engines.mirrors import Mirrors
    from cuenv.envs.store import EnvRecord

# format name -> module under cuenv.export
FORMATS: Final = {
    "dockerfile": "dockerfile",
    "apptainer": "apptainer",
    "lmod": "lmod",
    "tcl": "tcl",
    "explicit": "explicit",
    "environment-yml": "environment_yml",
    "requirements": "requirements",
    "conda-lock": "conda_lock",
}


@dataclass(frozen=True)
class ExportSource:
    """What every format starts from: the environment record and the exact solution it was built from."""

    record: EnvRecord
    solution: Solution
    home: Path  # CUENV_HOME, for activation paths
    mirrors: Mirrors | None = None  # install lists fetch through them (issue 19)
    without_credentials: tuple[str, ...] = ()  # mirrors whose user and token an export leaves out (issue 31)

    def credentials_note(self) -> str:
        """Comment lines for an install list whose mirror needs credentials cuenv does not write."""
        if not self.without_credentials:
            return ""
        return (f"# {', '.join(self.without_credentials)} needs credentials, which cuenv never writes into a file.\n"
                "# Pass them at build time: a netrc build secret (docker build --secret id=netrc,src=$HOME/.netrc,\n"
                "# then RUN --mount=type=secret,id=netrc,target=/root/.netrc), or PIP_INDEX_URL / a .condarc token\n"
                "# set only in the build's environment.\n")


# Where a note names the folder written to; `cuenv export -o DIR` puts the real folder in its place, so
# the note runs as written (issue 30 §4).
OUTPUT_DIR: Final = "OUTPUT_DIR"


@dataclass(frozen=True)
class Output:
    path: str  # relative to the output directory
    content: str | bytes
    mode: int = 0o644
    note: str = field(default="")  # may name OUTPUT_DIR


class Format(Protocol):
    """A format module, as the commands call it."""

    def export(self, source: ExportSource, options: Mapping[str, Any], /) -> list[Output]: ...


def format_module(name: str) -> Format:
    if name not in FORMATS:
        raise UsageError(f"Unknown export format {name!r}.", hint="Formats: " + ", ".join(FORMATS) + ".")
    return cast(Format, import_module(f"cuenv.export.{FORMATS[name]}"))  # tests/export/test_formats.py
