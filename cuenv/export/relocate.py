"""An environment's recorded paths moved to another prefix (issue 7: images, pack/unpack).

Pure: a path under the old prefix gets the new prefix, anything else is kept. A venv is moved by
re-installing it from its lock; a conda prefix from an archive gets its packages' prefix
placeholders replaced here (``replace_prefix``, as conda does at install time), never by a script
from the archive (issue 14). What cuenv itself records (meta.json's layout, conda activate.d
scripts) is rewritten here too.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import TYPE_CHECKING, Iterable

from cuenv.activation.target import CudaLayout

if TYPE_CHECKING:
    from cuenv.envs.meta import EnvMeta
    from cuenv.export.payload import PrefixRecord


def moved(path: str | Path, old: str | Path, new: str | Path) -> str:
    """``path`` with its ``old`` prefix replaced by ``new`` (unchanged when not under ``old``)."""
    text, root = str(path), str(old).rstrip("/") or "/"
    if text == root:
        return str(new)
    if text.startswith(root + "/"):
        return str(new).rstrip("/") + text[len(root):]
    return text


def moved_layout(layout: CudaLayout, new: str | Path) -> CudaLayout:
    old = layout.prefix

    def each(paths: tuple[Path, ...]) -> tuple[Path, ...]:
        return tuple(Path(moved(p, old, new)) for p in paths)

    return CudaLayout(
        prefix=Path(new),
        kind=layout.kind,
        bin_dirs=each(layout.bin_dirs),
        lib_dirs=each(layout.lib_dirs),
        include_dirs=each(layout.include_dirs),
        cuda_home=Path(moved(layout.cuda_home, old, new)) if layout.cuda_home else None,
    )


def moved_meta(meta: EnvMeta, *, name: str, new: str | Path) -> EnvMeta:
    """The meta of the same environment registered as ``name`` at prefix ``new``."""
    old = meta.layout.prefix
    # which CUDA tools it has and what stands in for the others is the new place's fact: recomputed there
    return meta.replace(name=name, layout=moved_layout(meta.layout, new), tools=None,
                        activate_scripts=tuple(moved(p, old, new) for p in meta.activate_scripts))


# -- file contents: a conda payload's recorded prefix placeholders (issue 14 §2) ---------------------
def replace_prefix(data: bytes, *, mode: str, placeholder: str, new: str) -> bytes:
    """``data`` with ``placeholder`` replaced by ``new``, as conda does at install time.

    Text files: every occurrence. Binary files: C strings keep their length, so each string holding
    the placeholder is padded with NULs; a ``new`` longer than the placeholder cannot fit."""
    old_b, new_b = placeholder.encode(), new.encode()
    if mode == "text":
        return data.replace(old_b, new_b)
    if len(new_b) > len(old_b):
        raise ValueError(f"the new prefix {new} is longer than the {len(old_b)} characters the package reserved")

    def padded(match: re.Match[bytes]) -> bytes:
        whole = match.group()
        count = whole.count(old_b)
        return whole.replace(old_b, new_b) + b"\0" * ((len(old_b) - len(new_b)) * count)

    return re.sub(re.escape(old_b) + rb"([^\0]*?)\0", padded, data)


def relocate_files(prefix: Path, records: Iterable[PrefixRecord]) -> None:
    """Rewrite each record's file (``path``, ``placeholder``, ``mode``) in place for ``prefix``."""
    for record in records:
        path = Path(prefix) / record.path
        data = path.read_bytes()
        new = replace_prefix(data, mode=record.mode, placeholder=record.placeholder, new=str(prefix))
        if new != data:
            with open(path, "r+b") as fh:  # in place: the file's mode and links stay as extracted
                fh.write(new)
                fh.truncate()
