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
# a conda spec's channel (``conda-forge::``, ``nvidia/label/cuda-12.1.0::``), then the package's name
_CHANNEL_AND_NAME: Final = r"\s*(?:[^\s:@=<>!~;\[\]]+::)?([A-Za-z0-9][A-Za-z0-9._-]*)"
_NAME: Final = re.compile(_CHANNEL_AND_NAME)
_BARE: Final = re.compile(_CHANNEL_AND_NAME + r"\s*")  # the name and nothing else


def asked_name(text: str) -> str:
    """The package a change asked for: a PEP 508 requirement's project or a conda spec's package
    (``conda-forge::numpy=1.26`` names numpy), canonical; the text itself where it names none."""
    found = _NAME.match(text)
    return canonical(found.group(1)) if found else text


def asked_now(requested: Sequence[str], change: Change) -> tuple[str, ...]:
    """Requirements (an environment's meta.json ``requested``) after ``change``: a removal takes out every
    requirement of the package; an add replaces them with the ones it gives, except that bare names
    (``numpy``) of a package asked for already change nothing (they never loosen a version asked before).
    An upgrade moves past what was asked (as pixi's): a package asked for is then asked as the upgrade
    asked it (``numpy<2`` upgraded as ``numpy`` is ``numpy``); one never asked for stays unasked."""
    out = list(requested)
    if change.verb not in ("add", "remove", "upgrade"):
        return tuple(out)
    words: dict[str, list[str]] = {}
    for text in change.asked:
        words.setdefault(asked_name(text), []).append(text)
    for name, texts in words.items():
        had = any(asked_name(r) == name for r in out)
        if (change.verb == "add" and had and all(_BARE.fullmatch(t) for t in texts)) or \
                (change.verb == "upgrade" and not had):
            continue
        out = [r for r in out if asked_name(r) != name] + ([] if change.verb == "remove" else texts)
    return tuple(dict.fromkeys(out))


def net_asked(changes: Sequence[Change]) -> tuple[frozenset[str], dict[str, tuple[str, ...]]]:
    """What ``changes``, in order, leave asked for (:func:`asked_now`, from nothing): the packages removed
    and not added since, and the requirements added and not removed since, by package."""
    asked: tuple[str, ...] = ()
    gone: set[str] = set()
    for change in changes:
        asked = asked_now(asked, change)
        names = {asked_name(t) for t in change.asked}
        gone = gone | names if change.verb == "remove" else gone - names if change.verb == "add" else gone
    added: dict[str, tuple[str, ...]] = {}
    for text in asked:
        added[asked_name(text)] = (*added.get(asked_name(text), ()), text)
    return frozenset(gone), added


def appended(changes: Sequence[Change], new: Change) -> tuple[Change, ...]:
    """``changes`` with ``new`` last, the oldest folded (:func:`net_asked`) where more than :data:`KEPT`
    changes or :data:`KEPT_BYTES` of them would be kept; ``new`` is always kept, its package lines only
    where they fit in :data:`KEPT_BYTES`."""
    if len(json.dumps(new.to_json())) > KEPT_BYTES:  # one change of thousands of packages: their count only
        new = Change(new.verb, new.asked, new.at, (f"({len(new.lines)} packages changed)",))
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
        ([Change("add", tuple(t for texts in added.values() for t in texts), at)] if added else [])
    return (*folded, *out[-kept:])
