"""The YAML parse of a file a user brings (a cuenv lockfile), kept in cuenv's cache by the sha256 of its text.

Parsing is a pure function of the text and of the code that parses it, so the key is the text, the
reader (its ``kind``), and the stamps (mtime, size) of that code: cuenv's own reader and limits as the
caller names them, and PyYAML's. A changed file, an upgraded cuenv or PyYAML is another key. Only the
parse is kept, never a verdict: every check of the parsed data runs on every read. What it saves is
PyYAML's import and its two passes over the text (the shape limits, then the load) on the next read of
the same file, the common case of `create --from-lock` and `sync` in CI and across a team (issue 29).

The cache folder is trusted as uv's is (whoever can write it decides what is installed), so ``parsed/``
is made private (0700) and an entry is used only when the user owns it and no one else can write it.
Entries are written atomically; a damaged one is parsed anew; the least recently read go beyond
:data:`KEEP` entries.
"""

from __future__ import annotations

import hashlib
import marshal
import os
import stat
import sys
from pathlib import Path

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Sequence
    from typing import Any, Final

FOLDER: Final = "parsed"  # under cuenv's cache folder
KEEP: Final = 64  # entries; a team's locks and a CI's, with room


def load(text: str, parse: Callable[[str], Any], *, cache_dir: Path | None, kind: str,
         code: Sequence[str | Path] = ()) -> Any:
    """``parse(text)``, or what it returned for the same text, ``kind`` and ``code`` (the files of the
    reader, whose stamps are part of the key) before. ``parse`` returns plain data (what marshal holds: a
    YAML date is parsed every time); an exception it raises is not kept."""
    if cache_dir is None:
        return parse(text)
    key = "\0".join([kind, sys.implementation.cache_tag, *map(_stamp, [*code, _pyyaml()]), text])
    entry = cache_dir / FOLDER / f"{hashlib.sha256(key.encode('utf-8', 'surrogatepass')).hexdigest()}.marshal"
    try:  # O_NONBLOCK: a FIFO planted here must not hang the read; only a regular file is read
        with os.fdopen(os.open(entry, os.O_RDONLY | os.O_NONBLOCK | os.O_NOFOLLOW | os.O_CLOEXEC), "rb") as fh:
            st = os.fstat(fh.fileno())
            # a regular file of the user's own, writable by no one else
            if stat.S_ISREG(st.st_mode) and st.st_uid == os.getuid() and not st.st_mode & 0o022:
                data = marshal.loads(fh.read())
                os.utime(entry)  # read lately: pruned last
                return data
    except (OSError, EOFError, ValueError, TypeError):  # none yet, or damaged: parse again
        pass
    data = parse(text)
    _keep(entry, data)
    return data


def _stamp(path: str | Path | None) -> str:
    try:
        st = os.stat(path) if path is not None else None
    except OSError:
        st = None
    return f"{path}:{st.st_mtime_ns}:{st.st_size}" if st is not None else f"{path}:-"


def _pyyaml() -> Path | None:
    """PyYAML's package file, found without importing it."""
    from importlib.util import find_spec

    spec = find_spec("yaml")
    return Path(spec.origin) if spec is not None and spec.origin else None


def _keep(entry: Path, data: Any) -> None:
    from cuenv.atomic import write_bytes

    try:
        blob = marshal.dumps(data)
    except ValueError:  # a value marshal cannot hold
        return
    try:
        entry.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        write_bytes(entry, blob, mode=0o600)
        _prune(entry.parent, keep=entry)
    except OSError:  # a read-only or full cache: parsed every time, as without it
        pass


def _prune(folder: Path, *, keep: Path) -> None:
    """The entries beyond :data:`KEEP`, least recently read first; ``keep`` (just written) stays."""
    with os.scandir(folder) as found:
        entries = [(e.stat().st_mtime_ns, e.path) for e in found if e.name.endswith(".marshal") and e.path != str(keep)]
    for _, path in sorted(entries)[: max(0, len(entries) + 1 - KEEP)]:
        try:
            os.unlink(path)
        except OSError:  # another cuenv pruned it first
            pass
