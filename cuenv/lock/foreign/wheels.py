"""Which of a package's wheels, and which of a universal lock's packages, a target installs. Pure.

pylock.toml and uv.lock list every wheel of a release and packages for every platform; an
installer picks per target. cuenv does it like pip: the package markers are evaluated for the
target (Python X.Y and a conda-style platform), and among the wheels whose tags the target
supports, the most specific wins (the order of ``packaging.tags``).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Final

_ARCH: Final = {"linux-64": "x86_64", "linux-aarch64": "aarch64", "linux-ppc64le": "ppc64le"}
_MANYLINUX_LEGACY: Final = {17: "manylinux2014", 12: "manylinux2010", 5: "manylinux1"}
_MAC: Final = {"osx-64": ("x86_64", (15, 0)), "osx-arm64": ("arm64", (15, 0))}


@dataclass(frozen=True)
class Target:
    """The interpreter and platform a lock is read for."""

    python: str  # "3.11"
    platform: str  # linux-64 | linux-aarch64 | win-64 | osx-64 | osx-arm64

    def markers(self) -> dict[str, str]:
        """PEP 508 marker values for CPython ``python`` on ``platform``."""
        os_, machine = {
            "win-64": ("win32", "AMD64"), "osx-64": ("darwin", "x86_64"), "osx-arm64": ("darwin", "arm64"),
        }.get(self.platform, ("linux", _ARCH.get(self.platform, "x86_64")))
        system = {"win32": "Windows", "darwin": "Darwin"}.get(os_, "Linux")
        return {
            "implementation_name": "cpython", "implementation_version": f"{self.python}.0",
            "os_name": "nt" if os_ == "win32" else "posix", "platform_machine": machine,
            "platform_python_implementation": "CPython", "platform_release": "", "platform_system": system,
            "platform_version": "", "python_full_version": f"{self.python}.0", "python_version": self.python,
            "sys_platform": os_,
        }

    def tags(self) -> list[str]:
        """Supported wheel tags, most specific first (what pip would accept on that target)."""
        from packaging import tags

        major, minor = (int(x) for x in self.python.split(".")[:2])
        platforms = list(_platform_tags(self.platform))
        found = list(tags.cpython_tags((major, minor), platforms=platforms))
        found += list(tags.compatible_tags((major, minor), "cp" + f"{major}{minor}", platforms=platforms))
        return [str(t) for t in found]


def _platform_tags(platform: str) -> Iterable[str]:
    if platform == "win-64":
        yield "win_amd64"
        return
    if platform in _MAC:
        from packaging import tags

        arch, version = _MAC[platform]
        yield from tags.mac_platforms(version, arch)
        return
    arch = _ARCH.get(platform, "x86_64")
    for minor in range(40, 4, -1):  # manylinux_2_40 ... manylinux_2_5, newest first as pip orders them
        yield f"manylinux_2_{minor}_{arch}"
        if minor in _MANYLINUX_LEGACY:
            yield f"{_MANYLINUX_LEGACY[minor]}_{arch}"
    yield f"linux_{arch}"


def marker_holds(marker: str | None, target: Target, *, extras: Sequence[str] = (),
                 groups: Sequence[str] = ()) -> bool:
    """Whether a PEP 508 / PEP 751 marker holds on ``target``; an unreadable marker raises ValueError."""
    if marker is None or marker == "":
        return True
    if not isinstance(marker, str):
        raise ValueError(f"a marker is text, not {type(marker).__name__}")
    from packaging.markers import InvalidMarker, Marker

    try:
        parsed = Marker(marker)
    except InvalidMarker as exc:
        raise ValueError(str(exc).splitlines()[0]) from None
    env: dict = dict(target.markers())
    try:
        return parsed.evaluate({**env, "extras": frozenset(extras), "dependency_groups": frozenset(groups)},
                               context="lock_file")
    except TypeError:  # packaging without lock-file markers (< 25)
        return parsed.evaluate({**env, "extra": ""})


def best_wheel(filenames: Sequence[str], target: Target) -> int | None:
    """Index of the wheel ``target`` installs among ``filenames``; None when none fits."""
    from packaging.utils import InvalidWheelFilename, parse_wheel_filename

    rank = {tag: i for i, tag in enumerate(target.tags())}
    best: tuple[int, int] | None = None
    for i, filename in enumerate(filenames):
        try:
            _, _, _, wheel_tags = parse_wheel_filename(filename)
        except InvalidWheelFilename:
            continue
        score = min((rank[str(t)] for t in wheel_tags if str(t) in rank), default=None)
        if score is not None and (best is None or score < best[0]):
            best = (score, i)
    return None if best is None else best[1]
