"""The sha256 of conda packages an @EXPLICIT list names without a hash, from their channels' repodata
(issue 25 §4). Not pure: it reads each channel's repodata (py-rattler's Gateway, cached under cuenv's
cache folder), once per install, before anything is downloaded.

conda installs such a list by trusting the channel; cuenv trusts it the same way, but pins what it
serves: every package is then downloaded and verified against that sha256 like a hashed line, and a
package the repodata does not list (a removed build, a typo, another channel) is refused.
"""

from __future__ import annotations

import asyncio
from dataclasses import replace
from pathlib import Path
from typing import Any

from cuenv.engines.base import Package
from cuenv.lock.foreign.model import ForeignLock, Where

HINT = "Write the list again with `conda list --explicit --sha256` to lock each package's hash yourself."


def with_channel_hashes(found: ForeignLock, *, cache_dir: Path) -> ForeignLock:
    """``found`` with every conda package that has no sha256 and no md5 given the sha256 its channel's
    repodata lists for that exact file; ForeignLockError naming the first the repodata does not list."""
    missing = [p for p in found.packages if p.kind == "conda" and not (p.sha256 or p.md5)]
    if not missing:
        return found
    import rattler

    gateway = rattler.Gateway(cache_dir=cache_dir / "rattler" / "repodata")
    by_source: dict[tuple[str, str], list[Package]] = {}
    for pkg in missing:
        by_source.setdefault((pkg.channel or "", pkg.subdir or found.platform), []).append(pkg)
    hashes: dict[str, str] = {}
    for (channel, subdir), pkgs in by_source.items():
        specs = [rattler.MatchSpec(f"{p.name} =={p.version} {p.build}") for p in pkgs]
        subdirs: list[Any] = [subdir]  # a name; rattler's stubs spell subdirs as a Literal
        try:
            groups: Any = asyncio.run(gateway.query([rattler.Channel(channel)], subdirs, specs, recursive=False))
        except Exception as exc:  # network and channel errors: rattler raises one class per cause
            first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
            raise Where(found.file).fail(f"the repodata of {channel}/{subdir} could not be read ({first}), so the "
                                         f"packages listed without a hash cannot be verified.", HINT) from None
        for group in groups:
            for record in group:
                if record.sha256:
                    hashes[record.url] = record.sha256.hex()
    for pkg in missing:
        if pkg.url not in hashes:
            raise Where(found.file).fail(f"{pkg.filename} has no #hash, and {pkg.channel}/{pkg.subdir}'s repodata "
                                         "does not list it, so its download cannot be verified.", HINT)
    packages = tuple(p.replace(sha256=hashes[p.url]) if p in missing else p for p in found.packages)
    return replace(found, packages=packages)


__all__ = ["with_channel_hashes"]
