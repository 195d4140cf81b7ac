"""An environment's history of changes (meta.json ``changes``, issue 26): what it leaves asked for, and its bound.

Every `cuenv add/upgrade/uninstall` appends a :class:`~cuenv.envs.meta.Change`. Kept whole, the history
grows without end, and meta.json, read by nearly every command, has a size limit
(cuenv.trust.limits.ENV_STATE): an environment changed often enough would one day stop reading. So
:func:`appended` keeps the newest changes as they were (at most :data:`KEPT` of them, :data:`KEPT_BYTES`
of JSON) and folds the older ones into one removal and one addition: what they left asked for, which is
all that any reader takes from them (`cuenv lock NAME --platform ...`, cuenv.envs.lockmake).
"""

from __future__ import annotations

import json
import re

from cuenv.envs.meta import Change
from cuenv.knowledge.packages import canonical

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Final, Sequence

KEPT: Final = 100
KEPT_BYTES: Final = 128 * 1024  # an eighth of meta.json's limit
_NAME: Final = re.compile(r"\s*([A-Za-z0-9][A-Za-z0-9._-]*)")


def asked_name(text: str) -> str:
    """The package a change asked for: a PEP 508 requirement's project or a conda spec's package
    (``conda-forge::numpy=1.26`` names numpy), canonical; the text itself where it names none."""
    found = _NAME.match(text.rsplit("::", 1)[-1])
    return canonical(found.group(1)) if found else text


def net_asked(changes: Sequence[Change]) -> tuple[frozenset[str], dict[str, str]]:
    """What ``changes``, in order, leave asked for: the packages removed (and not added since), and the
    requirements added (and not removed since) by package, the last one asked for each."""
    gone: set[str] = set()
    added: dict[str, str] = {}
    for change in changes:
        for text in change.asked if change.verb in ("add", "remove") else ():
            name = asked_name(text)
            if change.verb == "add":
                added[name] = text
                gone.discard(name)
            else:
                added.pop(name, None)
                gone.add(name)
    return frozenset(gone), added


def appended(changes: Sequence[Change], new: Change) -> tuple[Change, ...]:
    """``changes`` with ``new`` last, the oldest folded (:func:`net_asked`) where more than :data:`KEPT`
    changes or :data:`KEPT_BYTES` of them would be kept; ``new`` is always kept as it is."""
    out = (*changes, new)
    kept, size = 0, 0
    for change in reversed(out):
        size += len(json.dumps(change.to_json()))
        if kept and (kept == KEPT or size > KEPT_BYTES):
            break
        kept += 1
    if kept == len(out):
        return out
    older = out[:-kept]
    gone, added = net_asked(older)
    at = older[-1].at
    folded = ([Change("remove", tuple(sorted(gone)), at)] if gone else []) + \
        ([Change("add", tuple(added.values()), at)] if added else [])
    return (*folded, *out[-kept:])
