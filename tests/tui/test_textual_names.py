"""No cuenv widget, screen or app defines a name that one of its Textual base classes also defines.

A view's ``lock`` method once replaced Textual's ``Widget.lock`` (an RLock that Textual sets in
``__init__``): pressing Write in the lock dialog crashed the app with "'RLock' object is not
callable" (issue 18). A name Textual defines is Textual's: the methods it calls (``remove``,
``refresh``, ``lock``, ``render``...) and the attributes it sets (``self.lock = RLock()``).

Names are read from the source (methods, class attributes, ``self.NAME = ...`` in any method) on
both sides, so instance attributes count too. A cuenv name that overrides Textual on purpose (an
override point such as ``compose``, or a Textual attribute cuenv sets as documented) is listed in
ALLOWED with its reason.
"""

from __future__ import annotations

import ast
import importlib
import inspect
import pkgutil
import textwrap
from functools import cache

import pytest

pytest.importorskip("textual")

from textual.dom import DOMNode  # noqa: E402 - after importorskip

import cuenv.tui  # noqa: E402 - after importorskip

# name -> why a cuenv class may define it although a Textual base class does
ALLOWED: dict[str, str] = {
    "BINDINGS": "Textual's documented class attribute for key bindings",
    "CSS_PATH": "Textual's documented class attribute for the app's stylesheet",
    "TITLE": "Textual's documented class attribute for the app's title",
    "DEFAULT_CLASSES": "Textual's documented class attribute for a widget's classes",
    "AUTO_FOCUS": "Textual's documented class attribute: which widget a screen focuses first",
    "compose": "Textual's override point for a widget's children",
    "get_default_screen": "Textual's override point for the app's first screen",
    "check_action": "Textual's override point: whether an action is enabled, hidden or shown",
    "action_quit": "overridden on purpose: a running create is stopped before the app quits",
    "action_help": "overridden on purpose: cuenv's own help screen",
    "action_toggle_dark": "overridden on purpose: switch between Textual's light and dark themes",
    "theme": "App.theme is a reactive that Textual documents for setting the theme",
}


def _names_in(cls: type) -> set[str]:
    """What ``cls``'s own source defines: methods, class attributes and ``self.NAME = ...``."""
    try:
        source = textwrap.dedent(inspect.getsource(cls))
    except (OSError, TypeError):  # no source (a C type, a dynamically made class): its __dict__
        return set(vars(cls))
    tree = ast.parse(source)
    body = tree.body[0].body if tree.body and isinstance(tree.body[0], ast.ClassDef) else []
    found: set[str] = set()
    for node in body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            found.add(node.name)
        elif isinstance(node, ast.Assign):
            found.update(t.id for t in node.targets if isinstance(t, ast.Name))
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            found.add(node.target.id)
    for node in ast.walk(tree):
        targets = node.targets if isinstance(node, ast.Assign) else [node.target] if isinstance(node, (ast.AnnAssign, ast.AugAssign)) else []
        for target in targets:
            elts = target.elts if isinstance(target, ast.Tuple) else [target]
            for t in elts:
                if isinstance(t, ast.Attribute) and isinstance(t.value, ast.Name) and t.value.id == "self":
                    found.add(t.attr)
    return found


@cache
def _textual_names(cls: type) -> frozenset[str]:
    return frozenset(_names_in(cls) | set(vars(cls)))


def _cuenv_classes() -> list[type]:
    classes = []
    for info in pkgutil.walk_packages(cuenv.tui.__path__, "cuenv.tui."):
        module = importlib.import_module(info.name)
        for obj in vars(module).values():
            if inspect.isclass(obj) and obj.__module__ == module.__name__ and issubclass(obj, DOMNode):
                classes.append(obj)
    return classes


def clashes(cls: type) -> dict[str, list[str]]:
    """cuenv-defined name -> the Textual classes in ``cls``'s MRO that define it too."""
    textual = [b for b in cls.__mro__ if b.__module__.split(".")[0] == "textual"]
    ours = set()
    for base in cls.__mro__:
        if base.__module__.split(".")[0] == "cuenv":
            ours |= _names_in(base)
    found: dict[str, list[str]] = {}
    for name in sorted(ours):
        if name.startswith("__") or name in ALLOWED:
            continue
        owners = [f"{b.__module__}.{b.__qualname__}" for b in textual if name in _textual_names(b)]
        if owners:
            found[name] = owners
    return found


def test_the_audit_sees_every_view_and_modal():
    names = {c.__name__ for c in _cuenv_classes()}
    assert {"CuenvApp", "EnvironmentsView", "RecipesView", "MachineBar", "HelpScreen", "PathScreen"} <= names


def test_the_audit_finds_an_instance_attribute_of_textual():
    """Widget.lock is set in Widget.__init__, not in the class body: the audit must still see it."""
    from textual.widgets import Static

    class Shadowing(Static):
        def lock(self) -> None: ...

    Shadowing.__module__ = "cuenv.tui.example"
    assert "lock" in clashes(Shadowing)


@pytest.mark.parametrize("cls", _cuenv_classes(), ids=lambda c: c.__name__)
def test_no_name_shadows_textual(cls: type):
    found = clashes(cls)
    assert not found, (f"{cls.__name__} defines names that Textual defines too: "
                       + "; ".join(f"{n} ({', '.join(o)})" for n, o in found.items())
                       + ". Rename them, or add them to ALLOWED with the reason.")


def test_every_allowed_name_is_still_needed():
    """An allowlist entry that no class uses any more is removed (it would hide a future clash)."""
    used = set()
    for cls in _cuenv_classes():
        for base in cls.__mro__:
            if base.__module__.split(".")[0] == "cuenv":
                used |= _names_in(base)
    assert not sorted(set(ALLOWED) - used)
