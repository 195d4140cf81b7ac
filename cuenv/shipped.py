"""Data files shipped inside cuenv (the knowledge base, the built-in recipes), parsed once per change.

A parse result is kept in marshal form in cuenv's own ``__pycache__``, beside Python's bytecode and
under the same rules: stamped with the file's mtime and size, the caller's ``salt`` and the code that
checks the file (an updated checkout checks again), rewritten when any of them changes, never written
under PYTHONDONTWRITEBYTECODE or where the install is read-only.
Only files that ship with cuenv come here: anything a user brings is parsed and checked every time.
"""

from __future__ import annotations

import marshal
import os
import sys
import zlib
from functools import lru_cache
from pathlib import Path

TYPE_CHECKING = False  # no `typing` (nor hashlib) at run time: `check` reads the knowledge here (issue 29)
if TYPE_CHECKING:
    from collections.abc import Callable, Sequence
    from typing import Any, TypeVar

    T = TypeVar("T")


def cache_file(path: Path) -> Path:
    """Where ``path``'s parse is kept: the folder of this module's own bytecode (PYTHONPYCACHEPREFIX too).
    The name tells files of the same name apart (a checksum of the full path; the stamp holds the path)."""
    digest = f"{zlib.crc32(os.path.abspath(path).encode()):08x}"
    return Path(_folder(), f"{path.name}.{digest}.{sys.implementation.cache_tag}.marshal")


@lru_cache(maxsize=1)
def _folder() -> str:
    from importlib.util import cache_from_source

    return os.path.dirname(cache_from_source(__file__))


def load(path: Path, parse: Callable[[Path], T], *, salt: str = "", depends: Sequence[Path] = ()) -> T:
    """``parse(path)``, or its saved result while ``path`` and the files ``parse`` depends on (the code
    that checks it) are unchanged. ``parse`` must return plain data (dicts, lists, strings, numbers);
    an exception it raises is not kept, so it is raised again."""
    stamp = (str(path), *_stamp(path), salt, *(_stamp(p) for p in depends))
    saved = cache_file(path)
    try:
        with saved.open("rb") as fh:
            kept_stamp, data = marshal.loads(fh.read())  # marshal.load(fh) calls fh.read per object: 10x the work
        if kept_stamp == stamp:
            kept: T = data  # what parse returned for this very file
            return kept
    except (OSError, EOFError, ValueError, TypeError):  # none yet, or damaged: parse again
        pass
    data = parse(path)
    if not sys.dont_write_bytecode:
        _save(saved, (stamp, data))
    return data


def _stamp(path: Path) -> tuple[int, int]:
    st = path.stat()
    return st.st_mtime_ns, st.st_size


def _save(saved: Path, value: Any) -> None:
    from cuenv.atomic import write_bytes

    try:
        write_bytes(saved, marshal.dumps(value))  # a concurrent reader sees the old file or the new
    except (ValueError, OSError):  # a value marshal cannot hold (a YAML date), a read-only install:
        pass  # parsed every time, as without the cache


def parse_yaml(path: Path) -> Any:
    """A shipped YAML file, with the C loader when PyYAML has it (a safe loader either way)."""
    import yaml

    with path.open("rb") as fh:
        return yaml.load(fh, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))  # noqa: S506 - safe loaders
