"""The PyPI route for frameworks: which CUDA build PyPI serves for a framework version (issue 19 §2).

torch on PyPI *is* one of PyTorch's CUDA builds (2.4.1 the cu121 build, 2.6.0 cu124, 2.9 cu128):
its wheel's metadata requires NVIDIA's CUDA wheels at exact versions. This module reads that
metadata (PEP 658: ``<wheel URL>.metadata``, listed by a PEP 691 JSON or PEP 503 HTML simple index,
through the configured mirror) and derives the build from the ``nvidia-cuda-runtime`` requirement,
never from a hand-written table. :func:`plan` then picks the index a recipe installs from:

=============  ==========================================================================
setting        route
=============  ==========================================================================
pypi-first     PyPI when its build is the recipe's CUDA, else the vendor index (default)
vendor-first   the vendor index; PyPI only if the vendor index cannot be reached
pypi           PyPI only; a version whose PyPI build is another CUDA is refused
vendor         the vendor index only (the recipes' behaviour before this route)
=============  ==========================================================================

Results are cached per (index, project, version) under the cache folder: a release's files never
change on PyPI.
"""

from __future__ import annotations

import json
import re
import sys
import urllib.error
import urllib.parse
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from html.parser import HTMLParser
from pathlib import Path
from typing import Any, Final

from cuenv.engines.mirrors import PYPI_SIMPLE, Mirrors
from cuenv.errors import CuenvError
from cuenv.knowledge.packages import canonical
from cuenv.trust import limits

TIMEOUT: Final = 30.0
CACHE_VERSION: Final = 2  # 2: cuda-toolkit[...] requirements (torch 2.11+) read; answers of 1 may say "no CUDA"
# NVIDIA's CUDA runtime wheel: -cu11/-cu12 suffixed, unsuffixed from CUDA 13 (version = CUDA version).
_RUNTIME: Final = re.compile(r"^nvidia-cuda-runtime(?:-cu(\d+))?$")
# The marker environment of the platform cuenv's venv recipes target: Linux on x86_64.
_LINUX_X86: Final = {"platform_system": "Linux", "sys_platform": "linux", "platform_machine": "x86_64",
                     "os_name": "posix", "implementation_name": "cpython", "platform_python_implementation": "CPython"}
_JSON_ACCEPT: Final = "application/vnd.pypi.simple.v1+json, text/html;q=0.1"


class RouteRefused(CuenvError):
    """The framework version cannot come from the indexes this setting and network allow."""


@dataclass(frozen=True)
class PypiBuild:
    """What one index says about one framework release."""

    project: str
    version: str
    cuda: str | None  # "12.1"; None when the wheel requires no CUDA runtime wheel, or it could not be read
    evidence: str  # the requirement and the wheel it was read from, or why nothing was found

    def to_json(self) -> dict[str, Any]:
        return {"project": self.project, "version": self.version, "cuda": self.cuda, "evidence": self.evidence}


# -- pure: metadata -> CUDA build -----------------------------------------------------------------
def cuda_of_metadata(text: str, *, python: str = "3.11") -> tuple[str | None, str | None]:
    """A wheel's METADATA -> (the CUDA major.minor its requirements pin on Linux x86_64, that requirement
    as written); (None, None) when they state none. The forms (``cuda-toolkit[...,cudart,...]==13.0.2`` of
    torch 2.11+, ``nvidia-cuda-runtime-cu12==12.1.105``, ...) are read by cuenv.knowledge.wheelcuda, the one
    reader recipes, ``create -r``, ``check`` and the lockfile readers share."""
    from cuenv.knowledge import wheelcuda

    found = wheelcuda.from_requirements(_headers(text, "requires-dist"), python=python)
    if found.cuda is None or not found.exact:
        return None, None
    return found.cuda, found.evidence


def _headers(text: str, key: str) -> list[str]:
    """Values of one header of an email-style METADATA file (the body after the blank line is not read)."""
    out = []
    for line in text.splitlines():
        if not line.strip():
            break
        name, sep, value = line.partition(":")
        if sep and name.strip().lower() == key:
            out.append(value.strip())
    return out


def strip_local(requirements: Sequence[str], project: str) -> tuple[str, ...] | None:
    """The recipe's vendor requirements as PyPI ones: ``torch==2.4.1+cu121`` -> ``torch==2.4.1``.
    None when no requirement pins ``project`` exactly (then there is no PyPI twin to compare)."""
    out, found = [], False
    pattern = re.compile(r"^\s*([A-Za-z0-9][A-Za-z0-9._-]*)\s*==\s*([0-9][0-9A-Za-z.!]*)(\+[0-9A-Za-z.]+)?\s*$")
    for req in requirements:
        m = pattern.match(req)
        if m and canonical(m.group(1)) == canonical(project):
            out.append(f"{m.group(1)}=={m.group(2)}")
            found = True
        else:
            out.append(req)
    return tuple(out) if found else None


def pinned_project(requirements: Sequence[str], projects: Iterable[str]) -> tuple[str, str] | None:
    """(project, public version) of the first requirement that pins one of ``projects`` exactly."""
    wanted = {canonical(p) for p in projects}
    for req in requirements:
        m = re.match(r"^\s*([A-Za-z0-9][A-Za-z0-9._-]*)\s*==\s*([0-9][0-9A-Za-z.!]*)(?:\+[0-9A-Za-z.]+)?\s*$", req)
        if m and canonical(m.group(1)) in wanted:
            return canonical(m.group(1)), m.group(2)
    return None


# -- pure: index pages -> candidate wheels -------------------------------------------------------
@dataclass(frozen=True)
class IndexFile:
    filename: str
    url: str  # absolute
    metadata: bool | None  # True/False when the index says whether a .metadata file exists; None: unsaid
    size: int = 0  # bytes, when the index says (PEP 691 JSON): lets the wheel's METADATA be range-read


class _Links(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.links: list[tuple[dict[str, str | None], str]] = []
        self._attrs: dict[str, str | None] | None = None
        self._text: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "a":
            self._attrs, self._text = dict(attrs), []

    def handle_data(self, data: str) -> None:
        if self._attrs is not None:
            self._text.append(data)

    def handle_endtag(self, tag: str) -> None:
        if tag == "a" and self._attrs is not None:
            self.links.append((self._attrs, "".join(self._text).strip()))
            self._attrs = None


def parse_index(body: str, content_type: str, page_url: str) -> list[IndexFile]:
    """A project page of a simple index (PEP 691 JSON or PEP 503 HTML) -> its files."""
    files = []
    if "json" in content_type:
        data = json.loads(body)
        for f in data.get("files", ()):
            meta = f.get("core-metadata", f.get("dist-info-metadata"))
            files.append(IndexFile(f["filename"], urllib.parse.urljoin(page_url, f["url"]),
                                   None if meta is None else bool(meta), int(f.get("size") or 0)))
        return files
    parser = _Links()
    parser.feed(body)
    for attrs, text in parser.links:
        href = attrs.get("href")
        if not href:
            continue
        url = urllib.parse.urljoin(page_url, href)
        name = text or urllib.parse.unquote(urllib.parse.urlsplit(url).path.rsplit("/", 1)[-1])
        meta = attrs.get("data-core-metadata", attrs.get("data-dist-info-metadata"))
        files.append(IndexFile(name, url, None if meta is None else meta != "false"))
    return files


def linux_wheels(files: Iterable[IndexFile], project: str, version: str, *, python: str) -> list[IndexFile]:
    """The release's Linux x86_64 wheels, this Python's tag first."""
    prefix = canonical(project).replace("-", "_") + "-" + version + "-"
    tag = "cp" + python.replace(".", "")
    found = [f for f in files if f.filename.lower().startswith(prefix.lower()) and f.filename.endswith(".whl")
             and "x86_64" in f.filename and "linux" in f.filename]
    return sorted(found, key=lambda f: (f"-{tag}-" not in f.filename, f.metadata is False, f.filename))


# -- I/O: ask an index (through its mirror) ---------------------------------------------------------
Fetch = Callable[[str, str], tuple[str, str]]  # (url, accept) -> (body, content type)


def http_get(url: str, accept: str) -> tuple[str, str]:
    import urllib.request  # on use: http.client and email are a tenth of a warm create's start (issue 29)

    req = urllib.request.Request(url, headers={"Accept": accept, "User-Agent": "cuenv"})
    from cuenv import netopen

    with netopen.urlopen(req, timeout=TIMEOUT) as resp:
        return resp.read().decode("utf-8", errors="replace"), resp.headers.get("Content-Type", "")


def pypi_build(project: str, version: str, *, mirrors: Mirrors | None = None, index: str = PYPI_SIMPLE,
               cache_dir: Path | None = None, fetch: Fetch = http_get, python: str | None = None,
               read_wheel: Callable[[IndexFile], str] | None = None) -> PypiBuild:
    """Which CUDA build ``index`` (PyPI) serves as ``project==version``, read from its wheel's metadata.

    ``python`` is the environment's ("3.11"; default: this interpreter's): its wheel is asked first, then
    any other of the release (one release is one build). Where the index serves no PEP 658 ``.metadata``,
    the wheel's own METADATA is range-read (``read_wheel``). Network failures give ``cuda=None`` with the
    reason, never an exception."""
    key = f"{index.rstrip('/')}|{canonical(project)}|{version}"
    cached = _cache_read(cache_dir, key)
    if cached is not None:
        return cached
    python = python or f"{sys.version_info.major}.{sys.version_info.minor}"
    read_wheel = read_wheel or (lambda wheel: _range_read_metadata(wheel, cache_dir))
    page = (mirrors or Mirrors()).to_mirror(index.rstrip("/")) + f"/{canonical(project)}/"
    try:
        body, ctype = fetch(page, _JSON_ACCEPT)
        files = parse_index(body, ctype, page)
    except (urllib.error.URLError, OSError, ValueError) as exc:
        return PypiBuild(project, version, None, f"{page} could not be read ({_reason(exc)})")
    wheels = linux_wheels(files, project, version, python=python)
    if not wheels:
        result = PypiBuild(project, version, None, f"{page} lists no Linux x86_64 wheel of {project} {version}")
        _cache_write(cache_dir, key, result)
        return result
    why = "no wheel's metadata could be read"
    text = None
    for wheel in wheels[:4]:  # PEP 658 first: the target Python's wheel, then the release's others
        if wheel.metadata is False:
            continue
        try:
            text, _ = fetch(wheel.url.split("#", 1)[0] + ".metadata", "*/*")
            break
        except (urllib.error.URLError, OSError, ValueError) as exc:
            why = f"{wheel.filename}.metadata could not be read ({_reason(exc)})"
    if text is None:  # no .metadata anywhere: the wheel's own METADATA, range-read (its tail only)
        wheel = wheels[0]
        try:
            text = read_wheel(wheel)
        except Exception as exc:  # noqa: BLE001 - any failure of the fallback is reported, not raised
            return PypiBuild(project, version, None, f"{why}; reading {wheel.filename} itself failed ({exc})")
    cuda, req = cuda_of_metadata(text, python=python)
    evidence = (f"{req} in {wheel.filename}" if req else
                f"{wheel.filename} states no CUDA build (no cuda-toolkit[cudart], nvidia-cuda-runtime or"
                " nvidia-*-cuXX pin)")
    result = PypiBuild(project, version, cuda, evidence)
    _cache_write(cache_dir, key, result)
    return result


def _range_read_metadata(wheel: IndexFile, cache_dir: Path | None) -> str:
    """METADATA out of the wheel itself with HTTP range requests (its central directory and one member)."""
    from cuenv.knowledge.pypi import Client, File

    if not wheel.size:
        raise OSError("the index gives no size, so the wheel cannot be read in ranges")
    client = Client(cache_dir=cache_dir / "wheel-ranges" if cache_dir else None)
    url = wheel.url.split("#", 1)[0]
    message = client.metadata(File(wheel.filename, url, wheel.size, None, False, "", False))
    return "\n".join(f"{k}: {' '.join(str(v).split())}" for k, v in message.items()) + "\n"


def _reason(exc: BaseException) -> str:
    if isinstance(exc, urllib.error.HTTPError):
        return f"HTTP {exc.code}"
    return str(getattr(exc, "reason", None) or exc)


def _cache_file(cache_dir: Path | None) -> Path | None:
    return cache_dir / "pypi-route.json" if cache_dir else None


def _cache_read(cache_dir: Path | None, key: str) -> PypiBuild | None:
    path = _cache_file(cache_dir)
    try:
        data = json.loads(limits.read_small(path, limit=limits.LOCK)) if path else {}
        entry = data.get("builds", {}).get(key) if data.get("version") == CACHE_VERSION else None
        return PypiBuild(**entry) if entry else None
    except (OSError, ValueError, TypeError, AttributeError):
        return None


def _cache_write(cache_dir: Path | None, key: str, build: PypiBuild) -> None:
    path = _cache_file(cache_dir)
    if path is None:
        return
    try:
        data = json.loads(limits.read_small(path, limit=limits.LOCK))
        if data.get("version") != CACHE_VERSION:
            raise ValueError
    except (OSError, ValueError, AttributeError):
        data = {"version": CACHE_VERSION, "builds": {}}
    data["builds"][key] = build.to_json()
    import os
    import tempfile

    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".pypi-route.")
        with os.fdopen(fd, "w", encoding="utf-8") as out:
            json.dump(data, out, indent=1, sort_keys=True)
        os.replace(tmp, path)
    except OSError:
        pass  # a cache that cannot be written is only slower next time


# -- the decision ---------------------------------------------------------------------------------
@dataclass(frozen=True)
class Source:
    name: str  # "pypi" | "vendor"
    index_urls: tuple[str, ...]
    requirements: tuple[str, ...]


@dataclass(frozen=True)
class Route:
    """Where to solve first, and where to go if that index cannot be reached."""

    first: Source
    then: Source | None
    reason: str  # one line for the user: why this order
    build: PypiBuild | None = None
    cuda: str = ""  # the recipe's CUDA build


def plan(*, cuda: str, project: str, version: str, vendor_indexes: tuple[str, ...], requirements: tuple[str, ...],
         setting: str, build: PypiBuild | None) -> Route:
    """Pure: the route for one framework release. ``build`` is what PyPI serves (None when the
    setting never consults PyPI)."""
    vendor = Source("vendor", vendor_indexes, requirements)
    pypi_reqs = strip_local(requirements, project)
    if setting == "vendor" or pypi_reqs is None:
        return Route(vendor, None, f"{project} {version} from {', '.join(vendor_indexes)}", build, cuda)
    pypi = Source("pypi", (PYPI_SIMPLE,), pypi_reqs)
    same = build is not None and build.cuda == cuda
    said = _said(build, project, version)
    if setting == "pypi":
        if not same:
            raise RouteRefused(f"{project} {version} for CUDA {cuda} is not on PyPI: {said}.",
                               hint="Allow the vendor index: `--framework-index pypi-first`.")
        return Route(pypi, None, f"{said}, so PyPI", build, cuda)
    if setting == "vendor-first":
        return Route(vendor, pypi if same else None, f"the vendor index first; {said}", build, cuda)
    if same:
        return Route(pypi, vendor, f"{said}, so PyPI first", build, cuda)
    return Route(vendor, None, f"{said}, so {', '.join(vendor_indexes)}", build, cuda)


def _said(build: PypiBuild | None, project: str, version: str) -> str:
    if build is None:
        return f"PyPI was not asked about {project} {version}"
    if build.cuda is None:
        return f"PyPI's {project} {version} is no known CUDA build ({build.evidence})"
    return f"PyPI's {project} {version} is the CUDA {build.cuda} build ({build.evidence})"


def refusal(*, project: str, version: str, cuda: str, vendor_indexes: tuple[str, ...], reason: str,
            builds: Sequence[PypiBuild], recipe: str) -> RouteRefused:
    """The vendor index could not be reached: say which versions PyPI serves for this CUDA instead."""
    same = [b.version for b in builds if b.cuda == cuda]
    where = ", ".join(vendor_indexes)
    if same:
        hint = (f"PyPI serves the CUDA {cuda} build of {project} {', '.join(same)}: "
                f"`cuenv create {recipe}@{same[-1]}`; or set a mirror for {where} (`cuenv config show` lists mirrors).")
    else:
        hint = f"PyPI serves no CUDA {cuda} build of {project}; set a mirror for {where} (see docs/guides/mirrors.md)."
    return RouteRefused(f"{project} {version} for CUDA {cuda} needs the vendor index {where}, which failed: {reason}.",
                        hint=hint)
