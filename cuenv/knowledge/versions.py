"""Version values of the CUDA world: driver versions, CUDA releases, compute capabilities.

All three are dotted integers compared numerically ("535.104.05" < "535.129.03",
"12.10" > "12.9", cc "8.6" < "9.0"). Pure functions, no I/O.
"""

from __future__ import annotations

import re
from functools import lru_cache, wraps

from cuenv.errors import UsageError
from cuenv.plain import Plain

TYPE_CHECKING = False  # no `typing` at run time: every check starts by parsing versions (issue 29)
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any, ParamSpec, TypeVar

    T = TypeVar("T")
    P = ParamSpec("P")

# At most 9 digits a part: int() of a 5,000-digit string raises ValueError (issue 14).
_DOTTED = r"^\s*\d{1,9}(?:\.\d{1,9})*\s*$"
# How many dotted parts each kind may have: NVIDIA driver versions have 2 or 3 ("550.54", "535.104.05"),
# CUDA releases up to 3 ("12.1.105"), compute capabilities 2 ("8.6"; "8.6.7" is no GPU). Others: 4.
_MAX_PARTS = {"driver version": 3, "CUDA version": 3, "compute capability": 2}
_SM = r"(?:sm_|compute_)?(\d{1,3})([0-9])[afp]?"  # "sm_86", "compute_90a", "86"; compiled on first use


class Dotted(Plain):
    """A dotted version compared as a tuple of integers; trailing zeros do not matter."""

    __slots__ = ("parts",)

    def __init__(self, parts: tuple[int, ...]) -> None:
        self.parts = parts

    @classmethod
    def parse(cls, text: str, *, what: str = "version") -> Dotted:
        value = parse_dotted(text, what=what)
        return cls(value)

    @property
    def key(self) -> tuple[int, ...]:
        parts = list(self.parts)
        while len(parts) > 1 and parts[-1] == 0:
            parts.pop()
        return tuple(parts)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Dotted) and self.key == other.key

    def __hash__(self) -> int:
        return hash(self.key)

    def __lt__(self, other: Dotted) -> bool:
        return self.key < other.key

    def __le__(self, other: Dotted) -> bool:
        return self.key <= other.key

    def __gt__(self, other: Dotted) -> bool:
        return self.key > other.key

    def __ge__(self, other: Dotted) -> bool:
        return self.key >= other.key

    def __str__(self) -> str:
        return ".".join(str(p) for p in self.parts)

    @property
    def major(self) -> int:
        return self.parts[0]

    @property
    def minor(self) -> int:
        return self.parts[1] if len(self.parts) > 1 else 0


def memo(fn: Callable[P, T]) -> Callable[P, T]:
    """Cache a pure function of a text (a compatibility check parses the same few versions thousands of
    times); anything else, such as a number or a list from a damaged file, goes straight to its error.
    Further arguments must be hashable (an os name, a keyword)."""
    cached = lru_cache(maxsize=4096)(fn)

    @wraps(fn)
    def call(*args: P.args, **kwargs: P.kwargs) -> T:
        if args and isinstance(args[0], str):
            return cached(*args, **kwargs)  # type: ignore[arg-type]  # the other arguments are hashable by contract
        return fn(*args, **kwargs)

    return call


@memo
def parse_dotted(text: str, *, what: str = "version") -> tuple[int, ...]:
    """Parse "12.1" or "535.104.05" into integers, or raise a UsageError naming ``what``."""
    if not isinstance(text, str) or not re.match(_DOTTED, text) or text.count(".") >= _MAX_PARTS.get(what, 4):
        shown = text if not isinstance(text, str) or len(text) <= 40 else text[:37] + "..."
        raise UsageError(
            f"{shown!r} is not a valid {what}.",
            hint=f"Write the {what} as dotted numbers, for example " + _EXAMPLES.get(what, "12.1") + ".",
        )
    return tuple(int(p) for p in text.strip().split("."))


_EXAMPLES = {
    "driver version": "535.104.05",
    "CUDA version": "12.1",
    "compute capability": "8.6",
    "gcc version": "12",
    "Python version": "3.11",
}


@memo
def driver(text: str) -> Dotted:
    return Dotted.parse(text, what="driver version")


@memo
def cuda(text: str) -> Dotted:
    """A CUDA release written "12", "12.1" or "12.1.105"; kept as given, compared numerically."""
    return Dotted.parse(text, what="CUDA version")


@memo
def cc(text: str) -> Dotted:
    """A compute capability written "8.6" (also accepts "sm_86", "compute_86" and "86")."""
    raw = text.strip().lower() if isinstance(text, str) else text
    if isinstance(raw, str):
        m = re.fullmatch(_SM, raw)
        if m and "." not in raw:
            return Dotted((int(m.group(1)), int(m.group(2))))
    return Dotted.parse(text, what="compute capability")


def cuda_from_int(value: int) -> str:
    """Decode the driver API's 1000*major + 10*minor encoding: 12080 -> "12.8"."""
    return f"{value // 1000}.{(value % 1000) // 10}"


def major_minor(text: str) -> str:
    """ "12.1.105" -> "12.1"."""
    v = cuda(text)
    return f"{v.major}.{v.minor}"


def admitted_patch(spec: Any, release: str) -> int | None:
    """The first patch of release ``release`` (X.Y) that a PEP 440 specifier (packaging's SpecifierSet) admits,
    None for none: ``==3.12.8`` admits 3.12 from 3.12.8 on, which its X.Y.0 alone would not."""
    return next((patch for patch in range(64) if spec.contains(f"{release}.{patch}", prereleases=True)), None)


def lower_bound(specifier: str, operators: tuple[str, ...] = ("==", "===", ">=", "~=")) -> str | None:
    """The highest version a PEP 440 specifier pins or starts at, among its clauses of ``operators`` (read by
    packaging; a ``==13.0.96.*`` wildcard gives 13.0.96): ``>=9.1.0.70,<10`` -> 9.1.0.70; None where it has none
    or does not parse."""
    from packaging.specifiers import InvalidSpecifier, SpecifierSet
    from packaging.version import InvalidVersion, Version

    try:
        found = [Version(s.version.removesuffix(".*")) for s in SpecifierSet(specifier) if s.operator in operators]
    except (InvalidSpecifier, InvalidVersion):
        return None
    return str(max(found)) if found else None
