"""A target that is not this interpreter, in the terms ``packaging`` selects with. Pure.

pylock.toml (and uv.lock, exported to it) list every wheel of a release and packages for every
platform; ``packaging.pylock`` picks for a marker environment and a list of wheel tags. cuenv reads
a lock for a Python X.Y on a conda-style platform (``linux-64``), which this module turns into both:
what ``packaging`` lacks is only that mapping.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any, Final

_ARCH: Final = {"linux-64": "x86_64", "linux-aarch64": "aarch64", "linux-ppc64le": "ppc64le"}
_MANYLINUX_LEGACY: Final = {17: "manylinux2014", 12: "manylinux2010", 5: "manylinux1"}
_MAC: Final = {"osx-64": ("x86_64", (15, 0)), "osx-arm64": ("arm64", (15, 0))}


@dataclass(frozen=True)
class Target:
    """The interpreter and platform a lock is read for."""

    python: str  # "3.11"
    platform: str  # linux-64 | linux-aarch64 | win-64 | osx-64 | osx-arm64
    patch: int = 0  # python_full_version's last part: the first the lock's requires-python admits

    def markers(self) -> dict[str, str]:
        """PEP 508 marker values for CPython ``python`` on ``platform``."""
        os_, machine = {
            "win-64": ("win32", "AMD64"), "osx-64": ("darwin", "x86_64"), "osx-arm64": ("darwin", "arm64"),
        }.get(self.platform, ("linux", _ARCH.get(self.platform, "x86_64")))
        system = {"win32": "Windows", "darwin": "Darwin"}.get(os_, "Linux")
        return {
            "implementation_name": "cpython", "implementation_version": f"{self.python}.{self.patch}",
            "os_name": "nt" if os_ == "win32" else "posix", "platform_machine": machine,
            "platform_python_implementation": "CPython", "platform_release": "", "platform_system": system,
            "platform_version": "", "python_full_version": f"{self.python}.{self.patch}", "python_version": self.python,
            "sys_platform": os_,
        }

    def only_here(self) -> str:
        """A PEP 508 marker true on this platform only (``sys_platform == "win32" and platform_machine == "AMD64"``)."""
        m = self.markers()
        return f'sys_platform == "{m["sys_platform"]}" and platform_machine == "{m["platform_machine"]}"'

    def supported(self) -> list[Any]:
        """Supported wheel tags (``packaging.tags.Tag``), most specific first: what pip would accept on
        that target, and what ``packaging.pylock`` selects wheels with."""
        from packaging import tags

        major, minor = (int(x) for x in self.python.split(".")[:2])
        platforms = list(_platform_tags(self.platform))
        found = list(tags.cpython_tags((major, minor), platforms=platforms))
        found += list(tags.compatible_tags((major, minor), "cp" + f"{major}{minor}", platforms=platforms))
        return found


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
