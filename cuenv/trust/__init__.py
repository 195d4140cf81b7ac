"""The trust boundary (issue 14): what cuenv accepts from files that other people wrote.

Shared files (lockfiles, archives, recipes from any folder, request files, ``.cuenv`` pins, config)
pass these checks before anything is downloaded, written or activated:

- ``limits``: bounded reads, YAML and JSON with depth and size limits, one-line errors;
- ``envvars``: which environment variables a shared file may set on activation;
- ``requirements``: requirement strings, conda specs and index URLs, never tool options;
- ``consent``: direnv-style approval of ``.cuenv`` files, keyed by path and content.
- ``paths``: file names and URLs from shared files; the one guarded delete/write/rename inside a folder;
- ``shown``: the one redaction of credentials and escape of control characters for what is printed.

Each module is small and pure apart from ``limits`` (reads files) and ``consent`` (its store).
docs/concepts/security.md states the model for users.
"""

from __future__ import annotations

from cuenv.errors import UsageError


class Untrusted(UsageError):
    """A shared input refused at the boundary: one line naming the file, the value and the fix (exit 2)."""
