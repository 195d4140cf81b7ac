"""What a command hands back to the CLI edge: a typed value, its text renderer, an exit code (issue 24 §3).

A command builds one typed value (a small record per command, with ``to_json()``: its one documented
JSON shape, docs/reference/json.md) and names the function that renders it as text; the edge
(cuenv.cli.main) calls exactly one of the two. The TUI consumes the same values, never the JSON.

Plain classes rather than dataclasses: every command's start-up imports this module, and importing
``dataclasses`` (which imports ``inspect``) costs more than a bare interpreter's start (issue 29).
"""

from __future__ import annotations

TYPE_CHECKING = False  # no `typing` at run time: the start-up path does without it (issue 29)
if TYPE_CHECKING:
    from collections.abc import Callable, Mapping, Sequence
    from typing import Generic, Protocol, TypeAlias, TypeVar

    # What json.dumps writes: a command's --json document is built of these only (read-only views, so that a
    # typed dict[str, str] or list[dict[str, int]] is one too).
    JSON: TypeAlias = None | bool | int | float | str | "Sequence[JSON]" | "Mapping[str, JSON]"
    JSONObject: TypeAlias = "dict[str, JSON]"

    class Shaped(Protocol):
        """A command's typed result: its --json document, one shape per command."""

        def to_json(self) -> JSON: ...

    T = TypeVar("T", bound=Shaped)

    class _Typed(Generic[T]):
        __slots__ = ()
else:  # at run time `Result[X]` names Result itself
    T = None

    class _Typed:
        __slots__ = ()

        def __class_getitem__(cls, item: object) -> type:
            return cls


class Result(_Typed[T]):
    __slots__ = ("exact", "exit_code", "render", "report", "value", "warnings")

    def __init__(self, value: T, render: Callable[[T], str], *, exit_code: int = 0, warnings: list[str] | None = None,
                 report: bool = False, exact: bool = False) -> None:
        self.value = value
        self.render = render
        self.exit_code = exit_code
        self.warnings: list[str] = [] if warnings is None else warnings  # printed to stderr as "warning: ..."; not with -q
        # True when the text only reports what was done ("Created ...", "Removed ..."): -q leaves it out.
        # Output the user asked for (a list, a lockfile on stdout) is printed with -q too.
        self.report = report
        # True when the text is a file's content (a lockfile on stdout): printed byte for byte, not escaped.
        self.exact = exact

    @property
    def data(self) -> JSON:
        """The --json document (rendered on each call)."""
        return self.value.to_json()

    @property
    def text(self) -> str:
        """The text people read (rendered on each call)."""
        return self.render(self.value)

    def __repr__(self) -> str:
        return f"Result(exit_code={self.exit_code!r}, value={self.value!r}, warnings={self.warnings!r})"


class Text:
    """A result that is shell code only (`shell-init`, the hook's `shell-env`): printed exactly; its --json is null."""

    __slots__ = ("text",)

    def __init__(self, text: str) -> None:
        self.text = text

    def to_json(self) -> JSON:
        return None

    def __repr__(self) -> str:
        return f"Text({self.text!r})"


def text_of(value: Text) -> str:
    return value.text


def text_result(text: str = "") -> Result[Text]:
    """A Result that is shell code only."""
    return Result(Text(text), text_of)
