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

``conda-lock render --kind explicit`` writes a lock's PyPI packages as comments after the conda ones
(``# pip torch @ https://...whl#sha256=...``): ``conda-lock install`` installs them, ``conda create --file``
skips them. They are read as the environment's pip layer, and a note says which tool installs them.
"""

from __future__ import annotations

import re
from typing import Final

from cuenv.engines.base import Package
from cuenv.lock.foreign.model import ForeignLock, Unusable, Where, conda_package, index_for, python_of, url, wheel_package

KIND: Final = "explicit"
HINT: Final = "Write it again with `conda list --explicit --sha256` (or `cuenv export` with --format explicit)."
_PLATFORM: Final = re.compile(r"^#\s*platform:\s*(\S+)\s*$")
_PIP: Final = re.compile(r"^#\s*pip\s+(\S+)\s*@\s*(\S+)\s*$")  # conda-lock's render of a PyPI package


def parse(source: str, *, file: str, platform: str, environment: str | None = None) -> ForeignLock:
    where = Where(file)
    if environment is not None:
        raise where.fail(f"an @EXPLICIT list has one environment, so --environment {environment} does not apply.",
                         "Leave out --environment.")
    declared: str | None = None
    started = False
    packages: dict[str, Package] = {}
    hashless: list[str] = []
    unusable: list[Unusable] = []
    wheels = 0  # `# pip` lines
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
        pip = _PIP.match(line)
        if pip:
            wheels += 1
            at = where.at("pip", number)
            link, filename = url(pip.group(2).split("#", 1)[0], at, hint=HINT)
            if not filename.endswith(".whl"):
                unusable.append(Unusable(pip.group(1), "is locked as a source distribution: installing it would run its "
                                         "build code.", at, "Lock a wheel for it, or install it later inside the environment."))
                continue
            fragment = re.search(r"#sha256=([0-9a-fA-F]{64})$", pip.group(2))
            if fragment is None:  # older conda-lock wrote `#md5=None`: read, but nothing verifies its download
                pkg = _unverified_wheel(link, filename)
                unusable.append(Unusable(pkg.name, "has no sha256 in the list, so its download cannot be verified.", at,
                                         "Render the list again from a conda-lock file whose pip packages carry hashes."))
            else:
                pkg = wheel_package(name=pip.group(1), version=None, location=link, sha256=fragment.group(1),
                                    index=index_for(link, ()), where=at, hint=HINT)
            packages[f"pypi:{pkg.name}"] = pkg
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
    notes: tuple[str, ...] = (f"{len(hashless)} of its {len(chosen)} packages have no #hash (plain `conda list --explicit`); an "
             "install verifies each against the sha256 in its channel's repodata, as conda trusts its channels",
             ) if hashless else ()
    if wheels:
        notes += (f"its {wheels} `# pip` lines are the lock's PyPI packages, read as its pip layer: "
                  "`conda-lock install` installs them after the conda packages, `conda create --file` skips them "
                  "as comments",)
    return ForeignLock(kind=KIND, file=file, platform=platform, platforms=(declared or platform,), packages=chosen,
                       python=python_of(chosen), channels=tuple(dict.fromkeys(p.channel for p in chosen if p.channel)),
                       notes=notes, unusable=tuple(unusable))


def _unverified_wheel(link: str, filename: str) -> Package:
    """A wheel of a ``# pip`` line without a sha256, by its file name (for reading only: it is also unusable)."""
    from packaging.utils import parse_wheel_filename

    name, version, _, _ = parse_wheel_filename(filename)
    return Package(name=str(name), version=str(version), kind="pypi", url=link, sha256=None, filename=filename)
