"""What differs between a lock's packages and a prefix's (issue 6): pure, and light enough for the paths that
only ask whether an environment drifted (`cuenv add` asks before every change: issue 26's benchmark)."""

from __future__ import annotations

from cuenv.plain import Plain

TYPE_CHECKING = False  # no `typing` at run time: `cuenv add` does without it
if TYPE_CHECKING:
    from typing import Any, Iterable, Sequence

    from cuenv.engines.base import Package


class Drift(Plain):
    __slots__ = ("added", "changed", "removed")

    def __init__(self, added: tuple[Package, ...] = (), removed: tuple[Package, ...] = (),
                 changed: tuple[tuple[Package, Package], ...] = ()) -> None:
        self.added = added  # installed, not locked
        self.removed = removed  # locked, not installed
        self.changed = changed  # (locked, installed)

    def __bool__(self) -> bool:
        return bool(self.added or self.removed or self.changed)

    def lines(self) -> list[str]:
        out = [f"+ {p.name} {_ident(p)} (not in the lock)" for p in self.added]
        out += [f"- {p.name} {_ident(p)} (locked, not installed)" for p in self.removed]
        out += [f"~ {a.name} {_ident(a)} -> {_ident(b)}" for a, b in self.changed]
        return out

    def to_json(self) -> dict[str, Any]:
        return {
            "added": [p.to_json() for p in self.added],
            "removed": [p.to_json() for p in self.removed],
            "changed": [{"locked": a.to_json(), "installed": b.to_json()} for a, b in self.changed],
        }


def drift(locked: Iterable[Package], installed: Iterable[Package]) -> Drift:
    """What differs between a lock's packages and a prefix's: by name; a package changed when its
    version, build, URL or (where both know it) sha256 differ."""
    want = {(p.kind, p.name): p for p in locked}
    have = {(p.kind, p.name): p for p in installed}
    changed = []
    for key in sorted(want.keys() & have.keys()):
        a, b = want[key], have[key]
        same = (a.version, a.build or "", a.url) == (b.version, b.build or "", b.url)
        if not same or (a.sha256 and b.sha256 and a.sha256 != b.sha256):
            changed.append((a, b))
    return Drift(
        added=tuple(have[k] for k in sorted(have.keys() - want.keys())),
        removed=tuple(want[k] for k in sorted(want.keys() - have.keys())),
        changed=tuple(changed),
    )


def relock_command(name: str, lock_path: str, platforms: Sequence[str]) -> str:
    """The `cuenv lock` that writes environment ``name`` as it is into ``lock_path`` again, for every platform
    that lock holds (the other platforms solved again): run as written, it clears the drift and drops none."""
    import shlex

    flags = "".join(f" --platform {p}" for p in platforms) if len(platforms) > 1 else ""
    return f"cuenv lock {shlex.quote(name)} -o {shlex.quote(lock_path)} --force{flags}"


def _ident(pkg: Package) -> str:
    return pkg.version + (f"-{pkg.build}" if pkg.build else "")
