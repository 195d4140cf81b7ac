"""Value classes for the start-up paths (issue 29): the equality, hash and repr a frozen dataclass has,
over the fields ``__slots__`` names, without importing ``dataclasses`` (it imports ``inspect``: as much
CPU as a bare interpreter start) or generating code for each class at import. Each class writes its own
typed ``__init__``; its fields are read-only by convention."""

from __future__ import annotations

TYPE_CHECKING = False  # no `typing` at run time (issue 29)
if TYPE_CHECKING:
    from typing import Any, TypeVar

    _P = TypeVar("_P", bound="Plain")


class Plain:
    __slots__ = ()

    def _values(self) -> tuple[object, ...]:
        fields: tuple[str, ...] = self.__slots__
        return tuple(getattr(self, k) for k in fields)

    def __eq__(self, other: object) -> bool:
        if other.__class__ is not self.__class__:
            return NotImplemented
        return self._values() == other._values()

    def __hash__(self) -> int:
        return hash(self._values())

    def __repr__(self) -> str:
        fields: tuple[str, ...] = self.__slots__
        return f"{type(self).__name__}(" + ", ".join(f"{k}={getattr(self, k)!r}" for k in fields) + ")"

    def fields(self) -> dict[str, Any]:
        """Each field by name, in ``__slots__`` order: ``dataclasses.asdict`` of a record whose fields are
        values (a field that is itself a record stays one)."""
        fields: tuple[str, ...] = self.__slots__
        return {k: getattr(self, k) for k in fields}

    def replace(self: _P, **changes: object) -> _P:
        """A copy with ``changes`` (what ``dataclasses.replace`` does); an unknown field is a TypeError."""
        fields: tuple[str, ...] = self.__slots__
        unknown = set(changes) - set(fields)
        if unknown:
            raise TypeError(f"{type(self).__name__} has no field {sorted(unknown)[0]!r}")
        values: dict[str, object] = {k: getattr(self, k) for k in fields}
        values.update(changes)
        return type(self)(**values)
