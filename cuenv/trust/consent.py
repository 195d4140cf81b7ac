"""Approval of ``.cuenv`` project pins, the way direnv approves ``.envrc`` files (issue 14 §4).

A ``.cuenv`` file arrives with every clone of a repository; with auto-activation on, `cd` into the
tree would switch the shell to whatever it names. So a pin acts only after the user approved that
file's exact content at that exact path: ``cuenv allow`` records the pair, any edit (or a copy at
another path) needs a new approval, and ``cuenv deny`` blocks the path, silently, until it is
allowed again.

Store (owned by this module)::

    CUENV_HOME/trust/allowed/<sha256(path NUL content)>   holds the path (so `deny` can find it)
    CUENV_HOME/trust/denied/<sha256(path)>                holds the path
    CUENV_HOME/trust/checked                              touched whenever cuenv reads a pin for the hook

The shell hooks no longer use that stamp (issue 31 §7): they keep the pin's content (read with the
shell's own ``read``, at most 64 KiB + 1) and ask Python again when the file or its content changed,
never by modification time.

The path is the file's folder with every symlink resolved, then the file's own name (issue 31 §7): a
shell's logical $PWD (/home/me/proj, a link) and the physical one (/data/proj) name one pin, so
`cuenv allow` in either is honoured by the hook in the other. The file itself is not resolved: a
``.cuenv`` that is a link to an approved file in another tree is another pin and needs its own approval.
A path with a control character (a newline in a folder name) is never a pin (``path_problem``).
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Final, Literal

from cuenv.trust import Untrusted

ALLOWED: Final = "allowed"
DENIED: Final = "denied"
UNKNOWN: Final = "unknown"
Status = Literal["allowed", "denied", "unknown"]


def trust_dir(home: Path) -> Path:
    return Path(home) / "trust"


CHECKED: Final = "checked"


def touch_checked(home: Path) -> None:
    """Mark "a pin was read now"; a read-only home only costs the hook a Python start per new folder."""
    stamp = trust_dir(home) / CHECKED
    try:
        stamp.parent.mkdir(parents=True, exist_ok=True)
        stamp.touch()
    except OSError:
        pass


def _abs(path: Path) -> str:
    full = os.path.abspath(os.fspath(path))
    folder, name = os.path.split(full)
    return os.path.join(os.path.realpath(folder), name)


def path_problem(path: Path | str) -> str | None:
    """Why a pin at ``path`` is refused (its path holds a line break or another control character), or None."""
    text = os.fspath(path)
    if any(ord(c) < 32 or ord(c) == 127 for c in text + _abs(Path(text))):  # as given, and through its links
        return "its path holds a line break or another control character"
    return None


def logical_cwd(environ: Mapping[str, str]) -> Path:
    """The shell's own working folder ($PWD, which keeps the symlinks the user went through) when it
    names this process's folder; else the physical one. A pin is looked for from there, as the hook does."""
    pwd = environ.get("PWD")
    here = os.getcwd()
    if pwd and os.path.isabs(pwd):
        try:
            if os.path.samefile(pwd, here):
                return Path(pwd)
        except OSError:
            pass
    return Path(here)


def _recorded(path: Path) -> str:
    """The path as the store writes it (UTF-8; an undecodable byte becomes U+FFFD)."""
    return _abs(path).encode("utf-8", "surrogateescape").decode("utf-8", "replace")


def content_key(path: Path, content: bytes) -> str:
    return hashlib.sha256(_abs(path).encode("utf-8", "surrogateescape") + b"\0" + content).hexdigest()


def path_key(path: Path) -> str:
    return hashlib.sha256(_abs(path).encode("utf-8", "surrogateescape")).hexdigest()


def status(home: Path, path: Path, content: bytes) -> Status:
    """Whether the pin at ``path`` with ``content`` was approved, denied, or never decided on."""
    root = trust_dir(home)
    if (root / DENIED / path_key(path)).is_file():
        return DENIED
    if (root / ALLOWED / content_key(path, content)).is_file():
        return ALLOWED
    return UNKNOWN


def allow(home: Path, path: Path, content: bytes) -> None:
    """Approve this content at this path (and lift a deny of the path)."""
    root = trust_dir(home)
    _write(root / ALLOWED, content_key(path, content), _recorded(path))
    _remove(root / DENIED / path_key(path))


def deny(home: Path, path: Path) -> int:
    """Block the path, whatever its content, until allowed again; returns how many approvals were dropped."""
    root = trust_dir(home)
    dropped = 0
    target = _recorded(path)
    try:
        entries = list(os.scandir(root / ALLOWED))
    except FileNotFoundError:
        entries = []
    for entry in entries:
        try:
            with open(entry.path, encoding="utf-8", errors="replace") as fh:
                recorded = fh.read(65536)
        except OSError:
            continue
        if recorded == target:
            _remove(Path(entry.path))
            dropped += 1
    _write(root / DENIED, path_key(path), target)
    return dropped


def _write(folder: Path, name: str, text: str) -> None:
    from cuenv import atomic

    try:
        atomic.write_text(folder / name, text)
    except OSError as exc:
        raise Untrusted(f"Cannot record the decision in {folder}: {exc.strerror or exc}.",
                        hint="Check that CUENV_HOME is writable (`cuenv config` shows where it is).") from None


def _remove(path: Path) -> None:
    try:
        path.unlink()
    except FileNotFoundError:
        pass
    except OSError as exc:
        raise Untrusted(f"Cannot remove {path}: {exc.strerror or exc}.",
                        hint="Check that CUENV_HOME is writable (`cuenv config` shows where it is).") from None
