"""Planned command; see cuenv.commands._planned."""
from cuenv.commands._planned import configure, run  # noqa: F401
