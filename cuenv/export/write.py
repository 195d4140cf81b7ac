"""Where exports meet the disk: an environment read as an export source, and outputs written safely."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Sequence

from cuenv.envs import folder
from cuenv.errors import UsageError

if TYPE_CHECKING:
    from cuenv.config import Settings
    from cuenv.export import ExportSource, Output


def load_source(settings: Settings, name: str) -> ExportSource:
    """Environment ``name`` with the exact solution it was installed from."""
    from cuenv.engines import Solution
    from cuenv.envs.store import Store
    from cuenv.export import ExportSource

    record = Store.from_settings(settings).get(name)
    solution = Solution.from_json(folder.own_solution(record.path, name))
    # An export is a file someone else reads: the mirrors' credentials stay out of it (issue 31).
    mirrors, stripped = settings.mirrors.without_credentials()
    return ExportSource(record=record, solution=solution, home=settings.home, mirrors=mirrors,
                        without_credentials=stripped)


def write_outputs(outputs: Sequence[Output], out_dir: Path, *, force: bool) -> list[str]:
    """Write every output under ``out_dir``; refuse to overwrite unless forced, before writing any."""
    targets = [(out_dir / o.path, o) for o in outputs]
    clash = [str(p) for p, _ in targets if p.exists()]
    if clash and not force:
        raise UsageError(f"{clash[0]} already exists.", hint="Choose another folder with -o, or add --force to overwrite.")
    written = []
    for path, o in targets:
        path.parent.mkdir(parents=True, exist_ok=True)
        data = o.content.encode() if isinstance(o.content, str) else o.content
        path.write_bytes(data)
        path.chmod(o.mode)
        written.append(str(path))
    return written


def export_environment(settings: Settings, *, name: str, fmt: str, out_dir: Path, base: str | None = None,
                       force: bool = False) -> list[str]:
    """`cuenv export NAME --format FMT -o DIR`: the files written."""
    from cuenv.export import format_module

    outputs = format_module(fmt).export(load_source(settings, name), {"base": base})
    return write_outputs(outputs, out_dir, force=force)
