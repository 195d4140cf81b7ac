"""cuenv.runner.log: records go through logging only where it is loaded, and never touch a logging module that
another thread is importing at that moment (create finds the system toolkits in a thread while the main thread
may import logging: that raised "partially initialized module 'logging'" once, under Debian's Python)."""

from __future__ import annotations

import importlib.machinery
import logging
import sys
import types

import pytest

from cuenv import runner


def test_a_logging_module_being_imported_is_left_alone(monkeypatch: pytest.MonkeyPatch) -> None:
    half = types.ModuleType("logging")  # as the import system holds it mid-import: no getLogger yet
    half.__spec__ = importlib.machinery.ModuleSpec("logging", None)
    half.__spec__._initializing = True  # what importlib sets while a module runs
    monkeypatch.setitem(sys.modules, "logging", half)
    runner.log("cuenv.runner", "info", "$ %s", "uv pip sync")  # raised AttributeError before


def test_a_loaded_logging_gets_the_record(caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.INFO, logger="cuenv.runner"):
        runner.log("cuenv.runner", "info", "$ %s", "uv pip sync")
    assert [r.getMessage() for r in caplog.records] == ["$ uv pip sync"]


def test_without_logging_nothing_happens(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delitem(sys.modules, "logging")
    runner.log("cuenv.runner", "debug", "exit %d", 0)
    assert "logging" not in sys.modules
