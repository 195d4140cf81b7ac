"""Every export format is a module that ``cuenv.export.format_module`` may hand out as a ``Format``."""

from __future__ import annotations

import inspect

import pytest

from cuenv.errors import UsageError
from cuenv.export import FORMATS, format_module


@pytest.mark.parametrize("name", sorted(FORMATS))
def test_each_format_module_holds_an_export_of_source_and_options(name: str) -> None:
    module = format_module(name)
    inspect.signature(module.export).bind("source", {"base": None})  # raises TypeError when the shape differs


def test_an_unknown_format_names_the_known_ones() -> None:
    with pytest.raises(UsageError) as err:
        format_module("zip")
    assert "dockerfile" in (err.value.hint or "")
