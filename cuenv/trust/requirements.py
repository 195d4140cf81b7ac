"""Requirement strings, conda specs and index URLs from shared files (issue 14 §1). Pure.

What a recipe, lock or request file lists goes into uv's requirements file or conda's command
line. uv reads a requirements file as pip does: a line may be an option (``-e PATH`` builds and
runs that project's setup.py, ``--index-url`` swaps the index, ``-r FILE`` reads another file),
and one string with an embedded newline becomes two lines. So a shared requirement must parse as
one PEP 508 requirement (``packaging.requirements.Requirement``), with no control characters and
no leading ``-``; a direct reference (``name @ URL``) must be ``https://``; a local path or
``file:`` URL only when the user typed it on the command line (``allow_local=True``).

Index URLs are ``https://`` (``http://`` lets anyone on the path swap the packages; lint and
create refuse it alike). Conda specs and channels become argv items, never shell text: they must
not start with ``-`` (an option to conda) and hold no control characters.
"""

from __future__ import annotations

import re
import urllib.parse
from typing import Final, Iterable, Protocol

from cuenv.trust import Untrusted

MAX_REQUIREMENT: Final = 1000
# uv and pip replace ${NAME} in a requirements file with the variable's value (and conda does in channels):
# from a shared file, that would send the user's secrets to whatever host the string names (issue 31).
_EXPANDS: Final = "holds ${...}, which uv, pip and conda fill in from your environment variables; cuenv expands nothing from a shared file"
_CONTROL: Final = re.compile(r"[\x00-\x1f\x7f-\x9f\u2028\u2029]")  # C0, DEL, C1 and Unicode line breaks
_DIRECT: Final = re.compile(r"@\s*(\S+)")  # name @ URL
# PEP 508's rule for a project name: a requirement that is nothing else needs no parser (`cuenv add six`: issue 26).
_BARE_NAME: Final = re.compile(r"[A-Z0-9](?:[A-Z0-9._-]*[A-Z0-9])?", re.IGNORECASE)
HINT: Final = ("Write one package per entry as pip does (PEP 508), e.g. numpy, numpy==1.26.4 or numpy>=1.24,<2; options and local "
               "paths are refused in shared files.")


def requirement_problem(text: object, *, allow_local: bool = False, parse: bool = True) -> str | None:
    """Why ``text`` is not an acceptable requirement (a phrase), or None.

    ``parse=False`` skips the PEP 508 parse (importing packaging.requirements costs ~15 ms; loading a
    recipe for `cuenv check` does not pay it) but keeps every rule that stops an option, a second
    line, a local path or a non-https direct reference."""
    if not isinstance(text, str) or not text.strip():
        return "is not a requirement (an empty or non-string entry)"
    if len(text) > MAX_REQUIREMENT:
        return f"is {len(text)} characters long (at most {MAX_REQUIREMENT})"
    if _CONTROL.search(text):
        return "holds a line break or another control character"
    stripped = text.strip()
    if stripped.startswith("-"):
        return "is a pip/uv option, not a requirement"
    if "${" in stripped:
        return _EXPANDS
    if bare_name(stripped) is not None:
        return None
    if not parse:
        if looks_local(stripped):
            return None if allow_local else "is a local path, which only the command line may name"
        direct = _DIRECT.search(stripped)
        if direct is not None:
            return _url_problem(direct.group(1), allow_local)
        return None
    from packaging.requirements import InvalidRequirement, Requirement

    try:
        req = Requirement(stripped)
    except InvalidRequirement as exc:
        if looks_local(stripped):
            return None if allow_local else "is a local path, which only the command line may name"
        return f"is not a valid requirement ({str(exc).splitlines()[0]})"
    return _url_problem(req.url, allow_local) if req.url is not None else None


def bare_name(text: str) -> str | None:
    """``text`` when it is a project name and nothing else (PEP 508's name rule, as packaging parses it), else None."""
    return text if _BARE_NAME.fullmatch(text) else None


def _url_problem(url: str, allow_local: bool) -> str | None:
    scheme = urllib.parse.urlsplit(url).scheme.lower()
    if scheme == "file":
        return None if allow_local else "is a local file, which only the command line may name"
    if scheme != "https" and not scheme.endswith("+https"):
        return f"installs from a {scheme or 'relative'}: URL (only https:// is accepted)"
    return None


def looks_local(text: str) -> bool:
    """A local path or file: URL where a requirement is expected (``./x.whl``, ``/src/pkg``, ``file:///...``)."""
    return text.startswith((".", "/", "~")) or text.lower().startswith("file:")


def check_requirement(text: object, *, source: str, allow_local: bool = False, parse: bool = True) -> str:
    """``text`` stripped when it is one safe requirement; else ``Untrusted`` naming ``source``.
    ``parse`` as for :func:`requirement_problem`."""
    why = requirement_problem(text, allow_local=allow_local, parse=parse)
    if why is not None:
        raise Untrusted(f"{source}: requirement {_show(text)} {why}.", hint=HINT)
    return str(text).strip()


# http:// on this machine's loopback: no network path to tamper with (pip's "secure origins" say the same).
LOOPBACK_HTTP: Final = r"http://(?:localhost|127\.[0-9]{1,3}\.[0-9]{1,3}\.[0-9]{1,3}|\[::1\])(?::[0-9]{1,5})?(?:/|$)"


def loopback_http(url: str) -> bool:
    """An http:// URL of this machine (a local devpi, a test server): no network path to swap packages on."""
    return re.match(LOOPBACK_HTTP, url, re.IGNORECASE) is not None


def index_url_problem(url: object) -> str | None:
    """Why ``url`` cannot be a package index, or None. Only ``https://`` URLs with a host (or
    ``http://`` on the loopback: a local devpi or test index)."""
    if not isinstance(url, str) or _CONTROL.search(url) or " " in url:
        return "is not a URL"
    if "${" in url:
        return _EXPANDS
    parts = urllib.parse.urlsplit(url)
    if parts.scheme.lower() == "http" and loopback_http(url):
        return None
    if parts.scheme.lower() == "http":
        return "uses http://, which lets anyone on the network path swap the packages (use https://)"
    if parts.scheme.lower() != "https" or not parts.hostname:
        return "is not an https:// URL"
    return None


def check_index_url(url: object, *, source: str) -> str:
    why = index_url_problem(url)
    if why is not None:
        raise Untrusted(f"{source}: index URL {_show(url)} {why}.", hint="Use the index's https:// address.")
    return str(url)


def conda_spec_problem(text: object) -> str | None:
    """Why ``text`` cannot be a conda match spec given to conda or rattler, or None."""
    if not isinstance(text, str) or not text.strip():
        return "is not a package spec"
    if len(text) > MAX_REQUIREMENT:
        return f"is {len(text)} characters long (at most {MAX_REQUIREMENT})"
    if _CONTROL.search(text):
        return "holds a line break or another control character"
    if text.strip().startswith("-"):
        return "is a command-line option, not a package spec"
    if "${" in text:
        return _EXPANDS
    return None


def channel_problem(text: object) -> str | None:
    """Why ``text`` cannot be a conda channel (a name or a URL), or None."""
    if not isinstance(text, str) or not text.strip() or _CONTROL.search(text) or " " in text:
        return "is not a channel name or URL"
    if text.startswith("-"):
        return "is a command-line option, not a channel"
    if "${" in text:
        return _EXPANDS
    if text.lower().startswith("http://") and not loopback_http(text):
        return "uses http://, which lets anyone on the network path swap the packages (use https://)"
    return None


def _show(value: object) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def check_conda_request(channels: Iterable[object], specs: Iterable[object], *, source: str) -> None:
    """Every channel and spec of a conda request, before conda or rattler sees them (argv items, never options)."""
    for channel in channels:
        why = channel_problem(channel)
        if why is not None:
            raise Untrusted(f"{source}: channel {_show(channel)} {why}.", hint="Name the channel, or give its https:// URL.")
    for spec in specs:
        why = conda_spec_problem(spec)
        if why is not None:
            raise Untrusted(f"{source}: spec {_show(spec)} {why}.", hint="Write it as conda does, e.g. numpy, numpy=1.26 or numpy>=1.24,<2.")


class PipRequest(Protocol):
    """What ``check_pip_request`` reads of a ``cuenv.engines.Request``."""

    @property
    def requirements(self) -> tuple[str, ...]: ...
    @property
    def constraints(self) -> tuple[str, ...]: ...
    @property
    def index_urls(self) -> tuple[str, ...]: ...
    @property
    def find_links(self) -> tuple[str, ...]: ...


def check_pip_request(request: PipRequest, *, source: str = "the request", parse: bool = True) -> None:
    """Every string of a pip request (a ``cuenv.engines.Request``) that cuenv writes into uv's files or
    argv: requirements and constraints one PEP 508 requirement each, indexes and find-links pages
    ``https://``. The engine's last guard, whatever recipe, lock or request file the request came from.
    ``parse=False`` keeps every rule but the PEP 508 parse (:func:`requirement_problem`)."""
    for req in (*request.requirements, *request.constraints):
        check_requirement(req, source=source, parse=parse)
    for url in request.index_urls:
        check_index_url(url, source=source)
    for url in request.find_links:
        why = index_url_problem(url)
        if why is not None:
            raise Untrusted(f"{source}: find-links page {_show(url)} {why}.", hint="Use the page's https:// address.")
