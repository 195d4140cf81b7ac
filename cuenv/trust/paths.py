"""Names and paths from shared files, and the one way to touch a path made from them (issue 31 §1).

A lock's package ``filename``, a foreign lock's file names and an archive's member names are written
by someone else, and cuenv joins them to its own folders (the package cache, a temporary folder) to
find, write or delete a file. ``../../.bashrc`` or ``/home/me/notes`` joined that way names a file
outside (a lock whose ``filename`` walked out made ``cuenv sync`` delete it as a "stale cache
entry"). Two defences, each in one place:

- ``file_name_problem``: at the reader, a file name is one path component of a small alphabet
  (letters, digits, ``._+-!%~``; not starting with ``.`` or ``-``; at most 255 bytes);
- ``inside`` (and ``unlink``, ``replace``, ``open_new`` built on it): every delete, write or link of a
  path made from such a name resolves the folders on the way and refuses anything that is not
  directly or deeply inside the folder it is meant for. The last component is never followed, so a
  link named like a cache entry is removed itself, never its target.

``download_url_problem`` holds the rules a download URL from a shared file obeys (no credentials,
no ``${...}``, which uv expands from the environment, no ``..``, no query or fragment, plain http
only on this machine's loopback), for cuenv's own lockfile and the foreign formats alike.
"""

from __future__ import annotations

import os
import re
import urllib.parse
from pathlib import Path
from typing import IO, Final

from cuenv.trust import Untrusted

MAX_NAME_BYTES: Final = 255
FILE_NAME: Final = re.compile(r"[A-Za-z0-9_][A-Za-z0-9._+!%~-]*")
HINT: Final = "A shared file may name files only as one plain file name (no folders, no `..`); regenerate it with `cuenv lock`."


class Outside(Untrusted):
    """A path from shared input that would land outside the folder it is meant for."""


def file_name_problem(name: object) -> str | None:
    """Why ``name`` is not one plain file name a shared file may give (a phrase), or None."""
    if not isinstance(name, str) or not name:
        return "is not a file name"
    if len(name.encode("utf-8", "surrogatepass")) > MAX_NAME_BYTES:
        return f"is longer than {MAX_NAME_BYTES} bytes"
    if "/" in name or "\\" in name:
        return "names a folder too (a file name is one path component)"
    if name in (".", ".."):
        return "names a folder, not a file"
    if FILE_NAME.fullmatch(name) is None:
        return "is not a plain file name (letters, digits and ._+-!%~, not starting with . or -)"
    return None


def check_file_name(name: object, *, source: str) -> str:
    why = file_name_problem(name)
    if why is not None:
        raise Untrusted(f"{source}: file name {quoted(name)} {why}.", hint=HINT)
    return str(name)


def inside(root: Path, relative: str | os.PathLike[str]) -> Path:
    """``root / relative`` when it lies inside ``root`` once every folder on the way is resolved; else
    ``Outside``. The last component is not resolved (deleting a link removes the link)."""
    rel = os.fspath(relative)
    if not rel or os.path.isabs(rel) or "\0" in rel:
        raise Outside(f"Refusing the path {quoted(rel)}: it is not a name inside {root}.", hint=HINT)
    if ".." in Path(rel).parts:
        raise Outside(f"Refusing the path {quoted(rel)}: it climbs out of {root} with `..`.", hint=HINT)
    base = os.path.realpath(root)
    parent, last = os.path.split(os.path.normpath(os.path.join(base, rel)))
    if last in ("", "."):
        raise Outside(f"Refusing the path {quoted(rel)}: it names {root} itself, not a file in it.", hint=HINT)
    real_parent = os.path.realpath(parent)
    if real_parent != base and not real_parent.startswith(base.rstrip(os.sep) + os.sep):
        raise Outside(f"Refusing the path {quoted(rel)}: it lands outside {root}.", hint=HINT)
    return Path(real_parent) / last


def unlink(root: Path, relative: str | os.PathLike[str]) -> None:
    """Delete the file ``root / relative`` (a missing one is fine), only inside ``root``."""
    target = inside(root, relative)
    try:
        target.unlink()
    except FileNotFoundError:
        pass


def replace(source: Path, root: Path, relative: str | os.PathLike[str]) -> Path:
    """Rename ``source`` over ``root / relative``, only inside ``root``; returns the target."""
    target = inside(root, relative)
    os.replace(source, target)
    return target


def open_new(root: Path, relative: str | os.PathLike[str]) -> IO[bytes]:
    """Open ``root / relative`` for writing (truncated), only inside ``root`` and never through a link."""
    target = inside(root, relative)
    fd = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW | getattr(os, "O_CLOEXEC", 0), 0o644)
    return os.fdopen(fd, "wb")


# -- URLs --------------------------------------------------------------------------------------
_LOOPBACK: Final = re.compile(r"(?:localhost|127\.[0-9]{1,3}\.[0-9]{1,3}\.[0-9]{1,3}|::1)", re.IGNORECASE)


def download_url_problem(url: object, *, schemes: tuple[str, ...] = ("https", "http", "file")) -> str | None:
    """Why ``url`` cannot be a download or source URL from a shared file (a phrase), or None."""
    if not isinstance(url, str) or not url:
        return "is not a URL"
    if any(ord(c) < 33 or ord(c) == 127 for c in url):
        return "holds a space or a control character"
    if "$" in url or "{" in url or "}" in url:
        return "holds a template (${VAR}), which uv would fill from your environment; cuenv expands nothing from a shared file"
    try:
        parsed = urllib.parse.urlsplit(url)
        host = parsed.hostname
        parsed.port  # noqa: B018 - raises ValueError on a port that is not a number
    except ValueError:
        return "is not a URL"
    scheme = parsed.scheme.lower()
    if scheme not in schemes:
        return f"is not {' or '.join(s + '://' for s in schemes)}"
    if parsed.username is not None or parsed.password is not None or "@" in parsed.netloc:
        return "carries credentials; cuenv sends none from a shared file (give them to the index another way)"
    if scheme != "file" and not host:
        return "names no host"
    if scheme == "http" and not _LOOPBACK.fullmatch(host or ""):
        return "uses http://, which lets anyone on the network path swap the packages (use https://)"
    segments = [urllib.parse.unquote(s) for s in parsed.path.split("/")]
    if any(s in ("..", ".") for s in segments) or any("/" in s or "\\" in s for s in segments):
        return "climbs out of its folder (..)"
    if parsed.query or parsed.fragment or url.endswith(("?", "#")):
        return "has a query or a fragment"
    return None


def quoted(value: object) -> str:
    """A value from a shared file for a one-line message: credentials redacted, controls escaped, at most 80 characters."""
    from cuenv.trust.shown import shown

    text = repr(value) if not isinstance(value, str) else "'" + shown(value) + "'"
    return text if len(text) <= 80 else text[:77] + "..."
