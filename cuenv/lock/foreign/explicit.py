"""conda's @EXPLICIT list -> ForeignLock: what ``conda list --explicit --sha256``, ``conda-lock render
--kind explicit`` and ``cuenv export --format explicit`` write, and ``conda create --file`` reads::

    # platform: linux-64
    @EXPLICIT
    https://conda.anaconda.org/conda-forge/linux-64/python-3.11.9-hb806964_0_cpython.conda#<sha256 or md5>

Lines before ``@EXPLICIT`` are comments (``# platform:`` names the one platform the list is for); after
it, one package URL per line, its hash after ``#``: a sha256 (64 hex) or an md5 (32 hex), as conda
reads it. A URL without a hash (what plain ``conda list --explicit`` writes) is read as conda reads it;
before an install, each such package's sha256 is taken from its channel's repodata
(:mod:`cuenv.lock.foreign.repodata`), and one the repodata does not list is refused.
"""

from __future__ import annotations

import re
from typing import Final

from cuenv.engines.base import Package
from cuenv.lock.foreign.model import ForeignLock, Where, conda_package, python_of

KIND: Final = "explicit"
HINT: Final = "Write it again with `conda list --explicit --sha256` (or `cuenv export` with --format explicit)."
_PLATFORM: Final = re.compile(r"^#\s*platform:\s*(\S+)\s*$")


def parse(source: str, *, file: str, platform: str, environment: str | None = None) -> ForeignLock:
    where = Where(file)
    if environment is not None:
        raise where.fail(f"an @EXPLICIT list has one environment, so --environment {environment} does not apply.",
                         "Leave out --environment.")
    declared: str | None = None
    started = False
    packages: dict[str, Package] = {}
    hashless: list[str] = []
    for number, raw in enumerate(source.splitlines(), 1):
        line = raw.strip()
        if not line:
            continue
        if not started:
            found = _PLATFORM.match(line)
            if found:
                declared = found.group(1)
            elif line == "@EXPLICIT":
                started = True
            elif not line.startswith("#"):
                raise where.at("@EXPLICIT", number).fail("only comments come before the @EXPLICIT line.", HINT)
            continue
        if line.startswith("#"):
            continue
        at = where.at("url", number)
        link, _, digest = line.partition("#")
        if not digest:
            hashless.append(link)
        elif len(digest) not in (32, 64):
            raise at.fail(f"#{digest} is neither a sha256 (64 hex digits) nor an md5 (32).", HINT)
        pkg = conda_package(name=None, version=None, build=None, location=link,
                            sha256=digest if len(digest) == 64 else None, md5=digest if len(digest) == 32 else None,
                            subdir=None, where=at, hint=HINT, unverified=not digest)
        if pkg.subdir not in (None, "noarch", declared or platform):
            raise at.fail(f"{pkg.filename} is built for {pkg.subdir}, not {declared or platform}.",
                          f"Choose its platform with --platform {pkg.subdir}, or list one platform's packages only.")
        if pkg.name in packages and packages[pkg.name] != pkg:
            raise at.fail(f"{pkg.name} is listed twice, differently.", HINT)
        packages[pkg.name] = pkg
    if not started:
        raise where.fail("it has no @EXPLICIT line, so it is not conda's explicit package list.", HINT)
    if declared is not None and declared != platform:
        raise where.at("# platform", None).fail(f"it lists packages for {declared}, not {platform}.",
                                                 f"Choose it with --platform {declared}.")
    chosen = tuple(sorted(packages.values(), key=lambda p: p.key))
    notes = (f"{len(hashless)} of its {len(chosen)} packages have no #hash (plain `conda list --explicit`); an "
             "install verifies each against the sha256 in its channel's repodata, as conda trusts its channels",
             ) if hashless else ()
    return ForeignLock(kind=KIND, file=file, platform=platform, platforms=(declared or platform,), packages=chosen,
                       python=python_of(chosen), channels=tuple(dict.fromkeys(p.channel for p in chosen if p.channel)),
                       notes=notes)
