"""What the lockfile-family export formats share: which packages an environment holds, and refusals."""

from __future__ import annotations

from typing import TYPE_CHECKING, Iterable

from cuenv.errors import UsageError

if TYPE_CHECKING:
    from cuenv.engines.base import Package
    from cuenv.export import ExportSource


def packages_of(source: ExportSource, kind: str, fmt: str, hint: str) -> tuple[Package, ...]:
    """The environment's locked packages of ``kind`` (conda | pypi); refuses an environment of the other kind."""
    found = tuple(p for p in source.solution.packages if p.kind == kind)
    others = [p.name for p in source.solution.packages if p.kind != kind]
    if others or not found and source.solution.packages:
        engine = source.solution.engine
        raise UsageError(f"Format {fmt!r} holds {kind} packages only; {source.record.name!r} is a {engine} environment.",
                         hint=hint)
    return found


def channels_of(packages: Iterable[Package]) -> list[str]:
    """Channel URLs in first-use order of the sorted package list: deterministic."""
    return list(dict.fromkeys(p.channel.rstrip("/") for p in packages if p.channel))
