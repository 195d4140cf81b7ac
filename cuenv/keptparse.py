"""The YAML parse of a file a user brings (a cuenv lockfile), kept in cuenv's cache by the sha256 of its text.

Parsing is a pure function of the text, so what is kept is what parsing would give, and another text is
another key: a changed file is parsed anew. Only the parse is kept, never a verdict: every check of the
parsed data runs on every read. What it saves is PyYAML's import and its two passes over the text (the
shape limits, then the load) on the next read of the same file, the common case of `create --from-lock`
and `sync` in CI and across a team (issue 29). Entries are written atomically; a damaged one is parsed
anew; the oldest go beyond :data:`KEEP` entries.
"""

from __future__ import annotations

import hashlib
import marshal
import os
import sys
from pathlib import Path

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any, Final

FOLDER: Final = "parsed"  # under cuenv's cache folder
KEEP: Final = 64  # entries; a team's locks and a CI's, with room
_SALT: Final = f"yaml-1:{sys.implementation.cache_tag}".encode()  # the form of what is kept


def load(text: str, parse: Callable[[str], Any], *, cache_dir: Path | None) -> Any:
    """``parse(text)``, or what it returned for the same text before. ``parse`` returns plain data (what
    marshal holds: a YAML date is parsed every time); an exception it raises is not kept."""
    if cache_dir is None:
        return parse(text)
    entry = cache_dir / FOLDER / f"{hashlib.sha256(_SALT + text.encode('utf-8', 'surrogatepass')).hexdigest()}.marshal"
    try:
        with entry.open("rb") as fh:
            return marshal.loads(fh.read())
    except (OSError, EOFError, ValueError, TypeError):  # none yet, or damaged: parse again
        pass
    data = parse(text)
    _keep(entry, data)
    return data


def _keep(entry: Path, data: Any) -> None:
    from cuenv.atomic import write_bytes

    try:
        blob = marshal.dumps(data)
    except ValueError:  # a value marshal cannot hold
        return
    try:
        entry.parent.mkdir(parents=True, exist_ok=True)
        write_bytes(entry, blob)
        _prune(entry.parent)
    except OSError:  # a read-only or full cache: parsed every time, as without it
        pass


def _prune(folder: Path) -> None:
    with os.scandir(folder) as found:
        entries = [(e.stat().st_mtime_ns, e.path) for e in found if e.name.endswith(".marshal")]
    for _, path in sorted(entries)[:-KEEP]:
        try:
            os.unlink(path)
        except OSError:
            pass
